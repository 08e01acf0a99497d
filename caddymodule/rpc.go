package caddymodule

import (
	"errors"
	"net/http"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// serveRPC is the POST door: it reads and parses an HTTP request's body,
// serves the message (core.Core.Serve) and turns the outcome into the HTTP
// answer: a refusal as its status, headers and body (payment.Refusal.HTTP),
// else the answer with the payer's headers.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, cs *chainState) error {
	start := time.Now()
	outcome := "rejected"
	defer func() { cs.core.Metrics.Request(outcome, time.Since(start)) }()

	body, err := web.ReadLimited(r.Body, h.MaxBodyBytes)
	if err != nil {
		if errors.Is(err, web.ErrBodyTimeout) {
			web.BodyTimeout(w, true, time.Duration(h.BodyTimeout))
			return nil
		}
		if errors.Is(err, web.ErrTooLarge) {
			rej := jsonrpc.BodyTooLarge(h.MaxBodyBytes)
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
	o := h.core.Serve(r.Context(), core.Request{Chain: cs.core, Message: msg, Caller: payment.CallerOf(r), Door: core.POST, Reply: w.Header()})
	outcome = o.Label
	if o.Refused != nil {
		payment.WriteHTTP(w, payment.WholeID(msg), o.Refused)
		return nil
	}
	if o.ServedBy.Upstream != "" {
		w.Header().Set("X-Tollgate-Upstream", o.ServedBy.Upstream)
	}
	web.Raw(w, status(o), o.Body)
	return nil
}

// status is the HTTP status of an answered outcome: the answer's, or 503
// when no call could be served and no upstream answered.
func status(o core.Outcome) int {
	if o.Unavailable && o.Status == http.StatusOK {
		return http.StatusServiceUnavailable
	}
	return o.Status
}
