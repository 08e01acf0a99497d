package payment

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// TestCallerOf reads who asks as the payers did from the request: the
// caller's address, X-API-Key (sent but empty still names the key payer),
// PAYMENT-SIGNATURE winning over X-PAYMENT, the sign-in, and where the
// request came in (a 402's resource and a sign-in's domain).
func TestCallerOf(t *testing.T) {
	r := httptest.NewRequest("POST", "https://gw.example/rpc/137?key=tg_notread", nil)
	r.RemoteAddr = "[::ffff:203.0.113.9]:4711"
	r.TLS = &tls.ConnectionState{}
	r.Header.Set("X-API-Key", " ")
	r.Header.Set(headerPaymentV1, "v1")
	r.Header.Set(headerPaymentV2, "v2")
	r.Header.Set(headerSIWX, "siwx")
	c := CallerOf(r)
	if c.IP.String() != "203.0.113.9" || !c.Keyed || c.Key != "" || c.PaymentName != headerPaymentV2 || c.Payment != "v2" ||
		c.SIWX != "siwx" || c.Path != "/rpc/137" {
		t.Fatalf("caller %+v", c)
	}
	s := &Settings{}
	if got := s.base(&c); got != "https://gw.example" {
		t.Fatalf("base %q", got)
	}
	s.PublicURL = "https://public.example"
	if got := s.base(&c); got != "https://public.example" {
		t.Fatalf("base with public_url %q", got)
	}
	r.Header.Del(headerPaymentV2)
	r.Header.Del("X-API-Key")
	if c := CallerOf(r); c.Keyed || c.PaymentName != headerPaymentV1 || c.Payment != "v1" {
		t.Fatalf("caller %+v", c)
	}
}

// TestCallerOfAllocatesNothing: the POST door reads who asks for every
// request, even one answered locally (eth_chainId) that no payer sees, so
// reading the credential headers allocates nothing (Header.Get would
// canonicalize each all-caps name anew: 4 allocations, about 0.4 µs).
func TestCallerOfAllocatesNothing(t *testing.T) {
	r := httptest.NewRequest("POST", "http://gw.example/rpc/137", nil)
	r.RemoteAddr = "203.0.113.9:4711"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-API-Key", "tg_0123456789012345678901234567890123456789012")
	r.Header.Set(headerSIWX, "siwx")
	r.Header.Set(headerPaymentV1, "v1")
	var c Caller
	if n := testing.AllocsPerRun(100, func() { c = CallerOf(r) }); n != 0 {
		t.Fatalf("CallerOf allocates %.0f times per request", n)
	}
	if !c.Keyed || c.SIWX != "siwx" || c.PaymentName != headerPaymentV1 || c.Payment != "v1" {
		t.Fatalf("caller %+v", c)
	}
}

// TestOnlyAHoldingDoorSignsIn: a Caller read from a request never holds a
// sign-in, whatever the request carries (the SIGN-IN-WITH-X header, query
// parameters, headers named like a session): the no-nonce draw is reached
// only through HoldSignIn, which the socket's handshake calls; each hold is
// a fresh random session, and a Caller without a sign-in holds nothing.
func TestOnlyAHoldingDoorSignsIn(t *testing.T) {
	r := httptest.NewRequest("POST", "https://gw.example/rpc?siwx=x&session=ws:00&sign-in-with-x=x", nil)
	r.Header.Set(headerSIWX, "siwx")
	r.Header.Set("X-Tollgate-Session", "ws:00")
	c := CallerOf(r)
	if c.signIn != nil {
		t.Fatal("CallerOf holds a sign-in")
	}
	a, b := c, c
	a.HoldSignIn()
	b.HoldSignIn()
	if a.signIn == nil || b.signIn == nil || len(a.signIn.session) != len("ws:")+32 || a.signIn.session == b.signIn.session {
		t.Fatalf("sessions %+v %+v: want two distinct random ones", a.signIn, b.signIn)
	}
	if a.signIn.wallet.Load() != nil {
		t.Fatal("a sign-in is signed in before any draw was served")
	}
	var none Caller
	none.HoldSignIn()
	if none.signIn != nil {
		t.Fatal("a caller without SIGN-IN-WITH-X holds a sign-in")
	}
}
