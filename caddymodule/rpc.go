package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/relay"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// rpcMetrics are a chain's per-request metric children, looked up once:
// WithLabelValues formats and hashes its labels on every call.
type rpcMetrics struct {
	label     string // the chain_id label
	requests  map[string]prometheus.Counter
	duration  prometheus.Observer
	cacheHits prometheus.Counter
	cacheMiss prometheus.Counter
}

func newRPCMetrics(chainID uint64) rpcMetrics {
	l := metrics.Chain(chainID)
	m := rpcMetrics{label: l, requests: map[string]prometheus.Counter{}, duration: metrics.RPCDuration.WithLabelValues(l),
		cacheHits: metrics.CacheLookups.WithLabelValues(l, "hit"), cacheMiss: metrics.CacheLookups.WithLabelValues(l, "miss")}
	for _, o := range []string{"rejected", "refused", "ok", "unavailable", "partial"} {
		m.requests[o] = metrics.RPCRequests.WithLabelValues(l, o)
	}
	return m
}

// request counts one request with its outcome.
func (m *rpcMetrics) request(outcome string, took time.Duration) {
	if c, ok := m.requests[outcome]; ok {
		c.Inc()
	} else {
		metrics.RPCRequests.WithLabelValues(m.label, outcome).Inc()
	}
	m.duration.Observe(took.Seconds())
}

// serveRPC is the POST door: it reads and parses an HTTP request's body,
// serves the message (serveMessage) and turns the outcome into the HTTP
// answer: a refusal as its status, headers and body (payment.Refusal.HTTP),
// else the answer with the payer's headers.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, cs *chainState) error {
	start := time.Now()
	outcome := "rejected"
	defer func() { cs.metrics.request(outcome, time.Since(start)) }()

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
	o := h.serveMessage(r.Context(), r, w.Header(), cs, msg)
	outcome = o.label
	if o.refused != nil {
		payment.WriteHTTP(w, payment.WholeID(msg), o.refused)
		return nil
	}
	if o.upstream != "" {
		w.Header().Set("X-Tollgate-Upstream", o.upstream)
	}
	web.Raw(w, o.status, o.body)
	return nil
}

// rpcOutcome is what serving one JSON-RPC message came to: the answers
// (one per item of the message, and encoded) or a typed refusal.
type rpcOutcome struct {
	resps    []jsonrpc.Response // resps[i] answers msg.Items[i]
	body     []byte             // the encoded answer (nil: nothing to answer)
	status   int                // 200, 204, or 503 when no call could be served
	refused  *payment.Refusal   // set: nothing was served; the door renders it
	upstream string             // who served most of it (X-Tollgate-Upstream)
	label    string             // the rpc_requests_total outcome
}

// serveInProcess is serveMessage for the doors that are not HTTP requests
// of their own (a WebSocket message, an MCP tool call): the caller's
// in-flight slot (meteredEntry's) and the request metrics around it. r
// carries who asks (address, credentials); its body is not read.
func (h *Handler) serveInProcess(r *http.Request, hdr http.Header, cs *chainState, msg *jsonrpc.Message) rpcOutcome {
	if h.meter != nil {
		release, ok := h.conc.acquire(web.ClientIP(r))
		if !ok {
			metrics.MeterDecisions.WithLabelValues("concurrency_limited").Inc()
			return rpcOutcome{refused: payment.Busy()}
		}
		defer release()
	}
	start := time.Now()
	o := h.serveMessage(r.Context(), r, hdr, cs, msg)
	cs.metrics.request(o.label, time.Since(start))
	return o
}

// serveMessage serves one parsed JSON-RPC request or batch for a chain:
// answer the chain's facts locally, book the rest with the payers (r is
// who asks; hdr takes what the payers hand the caller), answer what the
// edge cache holds, forward the rest as one smaller batch, settle, and put
// every answer back at the caller's position with the caller's id. It
// writes nothing: the door renders the outcome.
func (h *Handler) serveMessage(ctx context.Context, r *http.Request, hdr http.Header, cs *chainState, msg *jsonrpc.Message) rpcOutcome {
	chainID := cs.metrics.label
	calls, index := msg.Calls()
	resps := make([]jsonrpc.Response, len(msg.Items))
	// Facts of the chain (eth_chainId, net_version, eth_accounts) are
	// answered here, free: they reach neither the meter nor an upstream.
	calls, index = answerLocally(cs, calls, index, resps)
	var dec *meter.Decision
	if h.meter != nil && len(calls) > 0 {
		d, ref := h.payers.Authorize(r, hdr, cs.chain.ID, msg, calls, cs.units(calls, nil))
		if ref != nil {
			return rpcOutcome{refused: ref, label: "refused"}
		}
		dec = &d
	}
	// The request deadline starts once it is paid for: a request carrying
	// an x402 payment has waited for its settlement on chain by now.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(h.RequestTimeout))
	defer cancel()
	if dec != nil {
		ctx = relay.WithRequestID(ctx, dec.ID)
	}
	out := h.relay.Forward(ctx, cs.relay, calls)
	failed := 0 // calls
	for k, rep := range out.Replies {
		source := out.Source[k]
		if out.Failed[k] {
			failed++
			source = "failed"
		} else if rep.Error != nil && dec != nil {
			// Served, so charged: an error whose code a default client
			// retries (-32005, -32603, ...) would be paid for again on
			// each retry; it is re-coded (docs/errors.md).
			rep.Error = jsonrpc.Recharged(rep.Error)
		}
		resps[index[k]] = rep
		metrics.RPCCalls.WithLabelValues(chainID, jsonrpc.MetricLabel(calls[k].Method), source).Inc()
	}
	o := rpcOutcome{resps: resps, upstream: out.ServedBy.Upstream}
	switch {
	case failed == 0:
		o.label = "ok"
	case failed == len(calls):
		o.label = "unavailable"
	default:
		o.label = "partial"
	}
	o.body, o.status = jsonrpc.EncodeAnswer(msg, resps)
	// A request none of whose calls could be served, and which no upstream
	// answered, is a gateway failure (503), not a successful answer
	// carrying errors. An upstream's own error is relayed as it is.
	if failed > 0 && failed == len(calls) && o.status == http.StatusOK && !out.Relayed {
		o.status = http.StatusServiceUnavailable
	}
	if dec != nil {
		// The refund is in the units the calls were booked in; each
		// server earns the units of the calls it served.
		h.payers.Settle(r, hdr, dec, cs.servedShares(calls, out.By), cs.units(calls, out.Failed))
	}
	return o
}

// servedShares is what each server earns of a request: the units of the
// calls it served (failed calls earn nobody).
func (cs *chainState) servedShares(calls []jsonrpc.Item, by []events.ServedBy) []meter.Served {
	var out []meter.Served
	for k := range calls {
		if by[k] == (events.ServedBy{}) {
			continue
		}
		u := cs.methods.Lookup(calls[k].Method).Units()
		if i := slices.IndexFunc(out, func(s meter.Served) bool { return s.By == by[k] }); i >= 0 {
			out[i].Units += u
		} else {
			out = append(out, meter.Served{By: by[k], Units: u})
		}
	}
	return out
}

// units is what calls count as at the flat price (each its method's
// weight): the whole request, or with only set the calls k where only[k].
func (cs *chainState) units(calls []jsonrpc.Item, only []bool) int {
	n := 0
	for k := range calls {
		if only == nil || only[k] {
			n += cs.methods.Lookup(calls[k].Method).Units()
		}
	}
	return n
}
