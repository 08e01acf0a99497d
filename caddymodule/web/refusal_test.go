package web

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestRefusalErrorKeepsTheHTTPDataFields: a socket or MCP caller gets the
// HTTP error's code, message and data fields, plus http_status; a data
// field named like one of the gateway's own (http_status) cannot replace it.
func TestRefusalErrorKeepsTheHTTPDataFields(t *testing.T) {
	cases := []struct {
		status int
		hdr    http.Header
		body   string
		code   int
		data   string
	}{
		{429, http.Header{"Retry-After": {"3"}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Rate limit exceeded","data":{"retry_after":3}}}`,
			-32005, `{"http_status":429,"retry_after":3}`},
		{503, http.Header{"Retry-After": {"5"}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"m","data":{"reason":"metering_recovering","retry_after":5,"http_status":200}}}`,
			-32603, `{"http_status":503,"reason":"metering_recovering","retry_after":5}`},
		{429, http.Header{"Retry-After": {"2"}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"m"}}`,
			-32005, `{"http_status":429,"retry_after":2}`},
		{400, nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m","data":"text"}}`,
			-32600, `{"detail":"text","http_status":400}`},
		{402, nil, `{"x402Version":2,"error":"payment required","accepts":[]}`,
			402, `{"http_status":402,"payment_required":{"x402Version":2,"error":"payment required","accepts":[]}}`},
		{502, nil, `not json`, -32603, `{"http_status":502}`},
	}
	for _, c := range cases {
		e := RefusalError(c.status, c.hdr, []byte(c.body))
		if e.Code != c.code || string(e.Data) != c.data || !json.Valid(e.Data) {
			t.Fatalf("%d %s: got %d %s, want %d %s", c.status, c.body, e.Code, e.Data, c.code, c.data)
		}
	}
}
