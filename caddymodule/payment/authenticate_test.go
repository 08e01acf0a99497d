package payment

import (
	"net/http"
	"testing"
)

// The gateway's secret goes to settlementd and nowhere else: not to an
// external facilitator_url, not to a host that merely starts with
// settlementd's address.
func TestSecretOnlyToSettlementd(t *testing.T) {
	const secret = "gateway-secret-0123456789abcdef-0123"
	s := &Settings{Settlementd: "http://127.0.0.1:8081", Facilitator: "https://x402.org/facilitator", SettlementdSecret: secret}
	for url, want := range map[string]string{
		"http://127.0.0.1:8081/x402/settle":         secret,
		"http://127.0.0.1:8081":                     secret,
		"https://x402.org/facilitator/settle":       "",
		"http://127.0.0.1:8081@evil.example/settle": "",
		"http://127.0.0.1:80811/x402/settle":        "",
	} {
		req, err := http.NewRequest(http.MethodPost, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.authenticate(req)
		if got := req.Header.Get(GatewayHeader); got != want {
			t.Errorf("%s: header %q, want %q", url, got, want)
		}
	}
	// No secret configured: no header at all.
	s.SettlementdSecret = ""
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8081/x402/settle", nil)
	if s.authenticate(req); req.Header.Get(GatewayHeader) != "" {
		t.Fatal("a header without a secret")
	}
	// Refunds go to settlementd, never to the external facilitator.
	if s.facilitatorURL() != "https://x402.org/facilitator" {
		t.Fatalf("facilitator %q", s.facilitatorURL())
	}
}
