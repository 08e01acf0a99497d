package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestChargedCodesAreNotRetried: the codes of the gateway's charged
// answers are none of those viem's default retry repeats, and Recharged
// re-codes every retried code an upstream's charged error may carry,
// keeping its code and data for the caller.
func TestChargedCodesAreNotRetried(t *testing.T) {
	for _, c := range []int{CodeAnswerTooLarge, CodeSubscriptionCap, CodeChargedUpstreamError, CodeExecutionReverted} {
		if RetriedCodes[c] {
			t.Fatalf("code %d is retried by default clients", c)
		}
	}
	if e := AnswerTooLarge("eth_getLogs", 300, 200); e.Code != CodeAnswerTooLarge ||
		string(e.Data) != `{"charged":true,"response_bytes":300,"max_response_bytes":200}` {
		t.Fatalf("AnswerTooLarge: %d %s", e.Code, e.Data)
	}
	cases := []struct {
		in      *Error
		code    int
		data    string
		relayed bool
	}{
		{&Error{Code: -32005, Message: "query returned more than 10000 results", Raw: json.RawMessage(`{}`)}, CodeAnswerTooLarge, `{"charged":true,"upstream_code":-32005}`, false},
		{&Error{Code: -32603, Message: "execution timeout", Data: json.RawMessage(`{"x":1}`)}, CodeChargedUpstreamError, `{"charged":true,"upstream_code":-32603,"upstream_data":{"x":1}}`, false},
		{&Error{Code: -32007, Message: "m"}, CodeChargedUpstreamError, `{"charged":true,"upstream_code":-32007}`, false},
		{&Error{Code: 429, Message: "m"}, CodeChargedUpstreamError, `{"charged":true,"upstream_code":429}`, false},
		{&Error{Code: -1, Message: "m", Data: json.RawMessage(`not json`)}, CodeChargedUpstreamError, `{"charged":true,"upstream_code":-1}`, false},
		{&Error{Code: 3, Message: "execution reverted", Data: json.RawMessage(`"0x08c379a0"`), Raw: json.RawMessage(`{"code":3}`)}, 3, `"0x08c379a0"`, true},
	}
	for _, c := range cases {
		got := Recharged(c.in)
		if got.Code != c.code || string(got.Data) != c.data || got.Message != c.in.Message || (len(got.Raw) > 0) != c.relayed {
			t.Fatalf("Recharged(%d): %d %q %s raw=%s", c.in.Code, got.Code, got.Message, got.Data, got.Raw)
		}
		if RetriedCodes[got.Code] {
			t.Fatalf("Recharged(%d) is still a retried code", c.in.Code)
		}
		if !json.Valid(got.appendJSON(nil)) {
			t.Fatalf("Recharged(%d) encodes to invalid JSON", c.in.Code)
		}
	}
	if Recharged(nil) != nil {
		t.Fatal("Recharged(nil)")
	}
	for _, s := range []int{403, 408, 413, 429, 500, 502, 503, 504} {
		if !RetriedStatus(s) {
			t.Fatalf("status %d should be retried", s)
		}
	}
	if RetriedStatus(200) || RetriedStatus(402) || RetriedStatus(401) || RetriedStatus(400) {
		t.Fatal("200/400/401/402 are not retried")
	}
}
