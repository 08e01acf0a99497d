package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
)

// ServeHTTP routes the handler's own paths (the route table, routes.go) and
// passes everything else on, so the handler can sit in front of other
// routes in one site block.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if rt := routeFor(r.URL.Path); rt != nil {
		if !h.bodyDeadline(w, r, rt.Auth == web.AuthKeyOrFree) {
			return nil
		}
		return rt.serve(h, w, r, next)
	}
	// The balancer's paths (ready.go) are the operator's, not the callers'
	// API: outside the route table, so service.json and openapi.yaml do not
	// list them.
	switch r.URL.Path {
	case livePath:
		return web.OnlyGET(w, r, h.serveLive)
	case readyPath:
		return web.OnlyGET(w, r, h.serveReady)
	}
	return next.ServeHTTP(w, r)
}

// corsAllowedHeaders are the request headers a browser may send to /rpc:
// the x402 payment and sign-in headers, and Access-Control-Expose-Headers,
// which the x402 fetch wrappers wrongly send as a request header (research
// x402.md §5.3) — a preflight refusing it would break every browser payment.
const corsAllowedHeaders = "Content-Type, X-API-Key, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Access-Control-Expose-Headers"

// The CORS values every /rpc answer carries, built once (web.Const).
var corsAnyOrigin, corsExposed = []string{"*"}, []string{payment.ExposedHeaders}

func (h *Handler) rpcEntry(w http.ResponseWriter, r *http.Request, chainID uint64) error {
	// CORS: /rpc takes no cookies (credentials are headers the caller sets),
	// so any origin may call it and read the payment headers.
	hdr := w.Header()
	web.Const(hdr, "Access-Control-Allow-Origin", corsAnyOrigin)
	web.Const(hdr, "Access-Control-Expose-Headers", corsExposed)
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		hdr.Set("Access-Control-Allow-Headers", corsAllowedHeaders)
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	// The same paths upgrade to a JSON-RPC WebSocket (socket.go).
	if r.Method == http.MethodGet && wsrpc.IsUpgrade(r) {
		return h.serveSocket(w, r, chainID)
	}
	// A GET is the x402 batch-settlement client's cooperative refund (its
	// probe, then its refund payload) when the gateway offers the scheme.
	if r.Method == http.MethodGet && h.payers != nil && h.payers.ServeBatchRefund(w, r) {
		return nil
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		web.RPCError(w, http.StatusMethodNotAllowed, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest("JSON-RPC requests must use POST")))
		return nil
	}
	return h.meteredEntry(w, r, true, func(w http.ResponseWriter, r *http.Request) error {
		return h.serveRPC(w, r, h.chains[chainID])
	})
}
