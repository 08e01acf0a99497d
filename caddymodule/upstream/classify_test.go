package upstream

import (
	"testing"
	"time"
)

func TestDefaultClassifier(t *testing.T) {
	cases := []struct {
		code int
		msg  string
		want Verdict
	}{
		// The caller's: relayed as is, never counted against the upstream.
		{-32700, "parse error", VerdictOK},
		{-32600, "invalid request", VerdictOK},
		{-32601, "the method eth_foo does not exist/is not available", VerdictOK},
		{-32602, "invalid argument 0: hex string has length 3", VerdictOK},
		{3, "execution reverted: Ownable: caller is not the owner", VerdictOK},
		{-32001, "resource not found", VerdictOK},
		{-32003, "transaction rejected", VerdictOK},
		{-32004, "method not supported", VerdictOK},
		{-32006, "JSON-RPC version not supported", VerdictOK},
		{-32000, "nonce too low: next nonce 5, tx nonce 4", VerdictOK},
		{-32000, "insufficient funds for gas * price + value", VerdictOK},
		{-32000, "execution reverted", VerdictOK},
		{-32000, "already known", VerdictOK},
		{-32000, "typed transaction too short", VerdictOK},
		{-32000, "rlp: expected input list for types.LegacyTx", VerdictOK},
		{-32000, "transaction type not supported", VerdictOK},
		{-32000, "invalid sender", VerdictOK},
		{-32000, "intrinsic gas too low", VerdictOK},
		{-32000, "max fee per gas less than block base fee", VerdictOK},
		{-32000, "execution aborted (timeout = 5s)", VerdictOK},
		{-32000, "filter not found", VerdictOK},
		{-32000, "", VerdictOK},
		{-32000, "some message no one has seen", VerdictOK},
		{-32099, "something", VerdictOK},
		{-32603, "execution reverted", VerdictOK},
		{-32603, "request timed out", VerdictOK},
		{1, "anything", VerdictOK},
		// Ambiguous or not this node's to serve: tried elsewhere, never counted.
		{-32000, "header not found", VerdictSkip},
		{-32000, "Header Not Found", VerdictSkip},
		{-32000, "header for hash not found", VerdictSkip},
		{-32000, "unknown block", VerdictSkip},
		{-32000, "missing trie node 0xabc (path )", VerdictSkip},
		{-32000, "required historical state unavailable (reexec=128)", VerdictSkip},
		// The node's own condition, in words: asked elsewhere once, never
		// counted (a message is not evidence).
		{-32050, "server busy", VerdictSkip},
		{-32000, "leveldb: closed", VerdictSkip},
		{-32000, "node is syncing", VerdictSkip},
		{-32000, "Server is busy, please retry", VerdictSkip},
		// The upstream's own condition.
		{-32603, "internal error", VerdictFault},
		{-32603, "", VerdictFault},
		{-32002, "resource unavailable", VerdictFault},
		{-32011, "no backend is currently healthy to serve traffic", VerdictFault},
		{-32012, "backend is over capacity", VerdictFault},
		{-32014, "too many RPC calls in batch request", VerdictFault},
		{401, "unknown api key", VerdictFault},
		{402, "payment required", VerdictFault},
		{503, "service unavailable", VerdictFault},
		// A claimed rate limit, by code only, whatever the words (the
		// gateway's own call decides whether it is believed, limit.go);
		// -32005 is also "query too large".
		{-32005, "daily request count exceeded, request rate limited", VerdictRateLimited},
		{-32005, "limit exceeded", VerdictRateLimited},
		{-32005, "query returned more than 10000 results", VerdictRateLimited},
		{-32005, "eth_getLogs block range is too large, max 2000", VerdictRateLimited},
		{429, "Too Many Requests", VerdictRateLimited},
		{-32016, "over rate limit", VerdictFault}, // by its code
		// Words decide nothing: rate-limit, quota or capacity text under any
		// other code is the caller's answer (upstreams echo the caller's
		// input: "the method quota_x does not exist").
		{-32090, "rate limit reached, retry in 1s", VerdictOK},
		{-32601, "the method quota_x does not exist/is not available", VerdictOK},
		{-32000, "quota exceeded", VerdictOK},
		{-32000, "too many requests", VerdictOK},
		{-32000, "capacity exceeded", VerdictOK},
		{-32000, "rate limit", VerdictOK},
		{-32602, "invalid argument 0: daily request count exceeded", VerdictOK},
		{3, "execution reverted: rate limit", VerdictOK},
		{1, "Too Many Requests: quota", VerdictOK},
	}
	for _, c := range cases {
		if got := DefaultClassifier(RPCError{Code: c.code, Message: c.msg}); got != c.want {
			t.Errorf("%d %q: %v, want %v", c.code, c.msg, got, c.want)
		}
	}
}

func TestClassifyReply(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		want    Verdict
		jsonRPC bool
	}{
		{"result", 200, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, VerdictOK, true},
		{"null result", 200, `{"jsonrpc":"2.0","id":1,"result":null}`, VerdictOK, true},
		{"caller error", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}}`, VerdictOK, true},
		{"fault error", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, VerdictFault, true},
		{"limited error", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}}`, VerdictRateLimited, true},
		{"batch ok", 200, ` [{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"error":{"code":3,"message":"reverted"}}]`, VerdictOK, true},
		// A batch reply is judged as a reply: its items are judged one by
		// one where they are billed, never the worst for all.
		{"batch items not folded", 200, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}]`, VerdictOK, true},
		{"batch with a quota item", 200, `[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"the method quota_x does not exist"}}]`, VerdictOK, true},
		{"html", 200, `<html>maintenance</html>`, VerdictFault, false},
		{"truncated", 200, `{"jsonrpc":"2.0","id":1,"result":"0x`, VerdictFault, false},
		{"json but not rpc", 200, `{"message":"Internal server error"}`, VerdictFault, false},
		{"empty", 200, ``, VerdictFault, false},
		{"502 bare", 502, `<html>bad gateway</html>`, VerdictFault, false},
		// A 5xx is the platform's fault whatever its body: never served.
		{"502 with rpc reply", 502, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, VerdictFault, true},
		{"500 with rpc error", 500, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"nonce too low"}}`, VerdictFault, true},
		{"503 rate limited", 503, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limit"}}`, VerdictFault, true},
		{"200 rate limit in words", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"too many requests, quota exceeded"}}`, VerdictOK, true},
		{"504", 504, `gateway timeout`, VerdictSkip, false},
		{"429", 429, ``, VerdictRateLimited, false},
		{"401", 401, `{"error":"bad key"}`, VerdictFault, false},
		{"redirect", 302, ``, VerdictFault, false},
		{"400 with rpc error", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request"}}`, VerdictOK, true},
		{"413 text", 413, `too large`, VerdictFault, false},
	}
	for _, c := range cases {
		j := classifyReply(c.status, []byte(c.body), DefaultClassifier)
		if j.verdict != c.want || j.jsonRPC != c.jsonRPC || j.platform != (c.status >= 500 && c.status != 504) {
			t.Errorf("%s: %v jsonRPC=%v (%s), want %v jsonRPC=%v", c.name, j.verdict, j.jsonRPC, j.reason, c.want, c.jsonRPC)
		}
	}
}

func TestLatencyRing(t *testing.T) {
	s := newStats(4)
	if _, ok := s.latency(); ok {
		t.Fatal("latency before samples")
	}
	for i := 1; i <= 10; i++ {
		s.success(time.Duration(i) * time.Millisecond)
	}
	v := s.view()
	// The ring keeps the last 4 samples: 7, 8, 9, 10 ms.
	if v.samples != 4 || v.p50 != 8*time.Millisecond || v.p99 != 10*time.Millisecond || v.successes != 10 {
		t.Fatalf("%+v", v)
	}
	if d, ok := s.latency(); !ok || d < 5*time.Millisecond || d > 10*time.Millisecond {
		t.Fatalf("ewma %v", d)
	}
	s.failure("boom", time.Now())
	s.rateLimited("HTTP 429", time.Now())
	if v := s.view(); v.failures != 1 || v.limited != 1 || v.lastErr != "HTTP 429" {
		t.Fatalf("%+v", v)
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i))
	}
	if percentile(xs, 50) != 50 || percentile(xs, 99) != 99 || percentile(xs[:1], 99) != 1 || percentile(nil, 50) != 0 {
		t.Fatal("percentile")
	}
}
