package payment

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// TestRefusalRendersAgree: every kind of refusal renders the same answer at
// every door. The JSON-RPC error a socket or MCP caller gets (JSONRPC, built
// from the typed value) is exactly the one read back from the HTTP answer
// POST sends (web.RefusalError of HTTP's status, headers and body: the
// contract of docs/errors.md), and HTTP's Retry-After is the error's
// retry_after.
func TestRefusalRendersAgree(t *testing.T) {
	v1, _ := json.Marshal(map[string]any{"x402Version": 1, "error": "Free tier exhausted", "accepts": []any{map[string]string{"payTo": "0x1"}},
		"onboarding": map[string]any{"rpc_url": "http://gw/rpc"}})
	offer := &Offer{Error: "Free tier exhausted", V1: append(v1, '\n'), V2: []byte(`{"x402Version":2}`), Onboarding: json.RawMessage(`{"rpc_url":"http://gw/rpc"}`)}
	cases := map[string]*Refusal{
		"unknown key":           keyRefused(web.MsgUnknownKey),
		"payment required":      {kind: refusedPaymentRequired, decision: &meter.Decision{Outcome: meter.PaymentRequired}, offer: offer},
		"payment refused":       {kind: refusedPayment, payment: paycheck.Refuse("invalid_payload", "bad"), offer: offer},
		"rate limited":          {kind: refusedRateLimited, decision: &meter.Decision{Outcome: meter.RateLimited, RetryAfter: 2500 * time.Millisecond}},
		"recovering":            {kind: refusedRecovering, decision: &meter.Decision{Outcome: meter.Recovering, RetryAfter: 30 * time.Second}},
		"meter down":            meterDown(errors.New("dial tcp: refused")),
		"unavailable":           unavailable(5, "the facilitator is unavailable"),
		"unavailable, no retry": unavailable(0, "x402 payments are not configured"),
		"busy":                  Busy(),
	}
	for name, ref := range cases {
		for _, id := range []json.RawMessage{nil, json.RawMessage(`7`)} {
			status, hdrs, body := ref.HTTP(id)
			if status != ref.Status() || status < 400 {
				t.Fatalf("%s: HTTP status %d, Status() %d", name, status, ref.Status())
			}
			hdr := http.Header{}
			for _, kv := range hdrs {
				hdr.Set(kv[0], kv[1])
			}
			want, _ := json.Marshal(web.RefusalError(status, hdr, body))
			got, _ := json.Marshal(ref.JSONRPC())
			if string(got) != string(want) {
				t.Fatalf("%s: the socket/MCP error\n%s\nis not the one read from POST's answer\n%s\n(body %s)", name, got, want, body)
			}
			var d struct {
				RetryAfter int `json:"retry_after"`
				HTTPStatus int `json:"http_status"`
			}
			if err := json.Unmarshal(ref.JSONRPC().Data, &d); err != nil || d.HTTPStatus != status {
				t.Fatalf("%s: data %s", name, ref.JSONRPC().Data)
			}
			if ra := hdr.Get("Retry-After"); (ra == "" && d.RetryAfter != 0) || (ra != "" && ra != strconv.Itoa(d.RetryAfter)) {
				t.Fatalf("%s: Retry-After %q, retry_after %d", name, ra, d.RetryAfter)
			}
			if (ref.Offer() != nil) != (status == http.StatusPaymentRequired) {
				t.Fatalf("%s: offer %v with status %d", name, ref.Offer() != nil, status)
			}
		}
	}
}
