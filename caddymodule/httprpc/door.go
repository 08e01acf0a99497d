// Package httprpc is JSON-RPC's POST door, POST /rpc and /rpc/{chain}: it
// reads and parses an HTTP request's body, hands the message and who asks
// (payment.CallerOf) to the core as a core.Request, and writes the
// core.Outcome back as HTTP. The WebSocket door (caddymodule/wsrpc) and the
// MCP door (caddymodule/mcp) do the same for their frames and tool results.
package httprpc

import (
	"errors"
	"net/http"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// Door is the POST door of one gateway configuration.
type Door struct {
	Core        *core.Core
	MaxBody     int64 // the largest body it reads
	MaxBatch    int   // the largest batch it parses
	BodyTimeout time.Duration
}

// Serve is the POST door: it reads and parses an HTTP request's body,
// serves the message (core.Core.Serve) and turns the outcome into the HTTP
// answer: a refusal as its status, headers and body (payment.Refusal.HTTP),
// else the answer with the payer's headers. The caller's in-flight slot is
// held around it by the route's entry, from before the body is read.
func (h *Door) Serve(w http.ResponseWriter, r *http.Request, cs *core.Chain) error {
	start := time.Now()
	outcome := "rejected"
	defer func() { cs.Metrics.Request(outcome, time.Since(start)) }()

	body, err := web.ReadLimited(r.Body, h.MaxBody)
	if err != nil {
		if errors.Is(err, web.ErrBodyTimeout) {
			web.BodyTimeout(w, true, h.BodyTimeout)
			return nil
		}
		if errors.Is(err, web.ErrTooLarge) {
			rej := jsonrpc.BodyTooLarge(h.MaxBody)
			web.Raw(w, rej.Status, rej.Body())
			return nil
		}
		// The client went away or the body broke off mid-read.
		web.RPCError(w, http.StatusBadRequest, jsonrpc.ErrorResponse(nil, jsonrpc.ParseError()))
		return nil
	}
	msg, rej := jsonrpc.Parse(body, jsonrpc.Options{MaxBatch: h.MaxBatch})
	if rej != nil {
		web.Raw(w, rej.Status, rej.Body())
		return nil
	}
	o := h.Core.Serve(r.Context(), core.Request{Chain: cs, Message: msg, Caller: payment.CallerOf(r), Door: core.POST, Reply: w.Header()})
	outcome = o.Label
	if o.Refused != nil {
		payment.WriteHTTP(w, payment.WholeID(msg), o.Refused)
		return nil
	}
	if o.ServedBy.Upstream != "" {
		w.Header().Set("X-Tollgate-Upstream", o.ServedBy.Upstream)
	}
	web.Raw(w, Status(o), o.Body)
	return nil
}

// Status is the HTTP status of an answered outcome, as every door reports
// it: the answer's, or 503 when no call could be served and no upstream
// answered.
func Status(o core.Outcome) int {
	if o.Unavailable && o.Status == http.StatusOK {
		return http.StatusServiceUnavailable
	}
	return o.Status
}

// AllowedHeaders are the request headers a browser may send to /rpc:
// the x402 payment and sign-in headers, and Access-Control-Expose-Headers,
// which the x402 fetch wrappers wrongly send as a request header — a
// preflight refusing it would break every browser payment.
const AllowedHeaders = "Content-Type, X-API-Key, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Access-Control-Expose-Headers"

// The CORS values every /rpc answer carries, built once (web.Const).
var corsAnyOrigin, corsExposed = []string{"*"}, []string{payment.ExposedHeaders}

// CORS sets the CORS headers of an /rpc answer and answers a preflight
// (done: nothing more to write). /rpc takes no cookies (credentials are
// headers the caller sets), so any origin may call it and read the payment
// headers.
func CORS(w http.ResponseWriter, r *http.Request) (done bool) {
	hdr := w.Header()
	web.Const(hdr, "Access-Control-Allow-Origin", corsAnyOrigin)
	web.Const(hdr, "Access-Control-Expose-Headers", corsExposed)
	if r.Method != http.MethodOptions {
		return false
	}
	hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	hdr.Set("Access-Control-Allow-Headers", AllowedHeaders)
	hdr.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// NotPost answers a request that is neither POST nor one of the GETs the
// route serves (405, Allow: POST, OPTIONS).
func NotPost(w http.ResponseWriter) {
	w.Header().Set("Allow", "POST, OPTIONS")
	web.RPCError(w, http.StatusMethodNotAllowed, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest("JSON-RPC requests must use POST")))
}
