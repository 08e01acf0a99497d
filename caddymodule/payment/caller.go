package payment

import (
	"net/http"
	"net/netip"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// Caller is who asks, as the payers read it: the caller's address and the
// credentials its door took from its request, once. No payer reads an HTTP
// request: POST takes these from its headers, a socket from its handshake,
// MCP from the tool call's request and _meta.
type Caller struct {
	IP netip.Addr
	// Key is the X-API-Key value (trimmed); Keyed says the header was sent,
	// even empty (a key that is sent is the payer, whatever else is).
	Key   string
	Keyed bool
	// SIWX is the SIGN-IN-WITH-X value; "" for none.
	SIWX string
	// PaymentName is the header an x402 payment came in (PAYMENT-SIGNATURE
	// wins over X-PAYMENT) and Payment its value; "" for none.
	PaymentName, Payment string
	// Host and TLS are where the request came in, and Path the resource
	// it named (/rpc, /rpc/137): a 402's resource and a sign-in's domain
	// when public_url is not set.
	Host string
	TLS  bool
	Path string
	// signIn holds SIWX's sign-in for a door that keeps one Caller for a
	// connection's life (HoldSignIn: the WebSocket); nil for a door that
	// reads a Caller per request. No header, query parameter or tool
	// argument sets it.
	signIn *signIn
}

// CallerOf is who asks in r: its address (web.ClientIP), key, sign-in and
// payment headers, host and path.
func CallerOf(r *http.Request) Caller {
	c := originOf(r)
	c.IP = web.ClientIP(r)
	c.Key, c.Keyed = web.APIKey(r)
	c.SIWX = first(r.Header, fieldSIWX)
	c.PaymentName, c.Payment = paymentHeader(r)
	return c
}

// originOf is only where r came in: what a 402 of an HTTP door names.
func originOf(r *http.Request) Caller {
	return Caller{Host: r.Host, TLS: r.TLS != nil, Path: r.URL.Path}
}

// base is the gateway's external base URL for c (web.BaseURL's rule).
func (s *Settings) base(c *Caller) string { return web.Origin(c.Host, c.TLS, s.PublicURL) }
