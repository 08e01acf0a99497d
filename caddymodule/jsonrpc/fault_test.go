package jsonrpc

import "testing"

func TestUpstreamFault(t *testing.T) {
	tests := []struct {
		code int
		msg  string
		want bool
	}{
		// Caller's fault: answered to the caller, never counted against the upstream.
		{-32700, "parse error", false},
		{-32600, "invalid request", false},
		{-32601, "the method eth_foo does not exist/is not available", false},
		{-32602, "invalid argument 0: hex string has length 3", false},
		{3, "execution reverted", false},
		{-32001, "resource not found", false},
		{-32003, "transaction rejected", false},
		{-32004, "method not supported", false},
		{-32006, "JSON-RPC version not supported", false},
		{-32000, "nonce too low", false},
		{-32000, "insufficient funds for gas * price + value", false},
		{-32000, "execution reverted", false},
		{-32000, "already known", false},
		{-32000, "missing trie node 1a2b (path ) state 0x... is not available", false},
		{-32000, "execution aborted (timeout = 5s)", false},
		{-32000, "", false},
		{-32005, "query returned more than 10000 results", false},
		{-32005, "eth_getLogs block range is too large, max 2000", false},
		{-32005, "Log response size exceeded.", false},
		{-32099, "something", false},
		{1, "anything", false},
		// Upstream's fault.
		{-32603, "internal error", true},
		{-32603, "", true},
		{-32002, "resource unavailable", true},
		{-32005, "limit exceeded", true},
		{-32005, "daily request count exceeded, request rate limited", true},
		{-32000, "header not found", true},
		{-32000, "Header Not Found", true},
		{-32000, "leveldb: closed", true},
		{-32000, "node is syncing", true},
		{-32000, "Server is busy, please retry", true},
		{-32011, "no backend is currently healthy to serve traffic", true},
		{-32012, "backend is over capacity", true},
		{-32014, "too many RPC calls in batch request", true},
		{-32016, "over rate limit", true},
		{429, "too many requests", true},
		{401, "unknown api key", true},
		{402, "payment required", true},
		{403, "forbidden", true},
		{503, "service unavailable", true},
	}
	for _, tc := range tests {
		if got := UpstreamFault(&Error{Code: tc.code, Message: tc.msg}); got != tc.want {
			t.Errorf("UpstreamFault(%d %q) = %v, want %v", tc.code, tc.msg, got, tc.want)
		}
	}
	if UpstreamFault(nil) {
		t.Error("nil error is nobody's fault")
	}
}
