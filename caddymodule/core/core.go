// Package core serves one JSON-RPC call or batch without HTTP:
// Core.Serve(ctx, Request) Outcome. A door (POST /rpc, a WebSocket message,
// an MCP tool call) translates its protocol into a Request — the parsed
// message, the chain, who asks — and renders the Outcome — the answers,
// who paid, what was charged, who served, or a typed refusal — in its own
// protocol. Behind the core: the local answers of the method table, the
// payers (caddymodule/payment), the relay (caddymodule/relay: the edge
// cache, pins, the pool's pick, hedge and retry, trust and verification)
// and the books (payment.Handler.Settle). Nothing here sees an HTTP request
// or response writer; TestImportPicture keeps net/http out.
package core

import (
	"context"
	"slices"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/relay"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Core is what serves a JSON-RPC request behind the doors.
type Core struct {
	// Payers decide who pays and close the books; nil when metering is
	// off (every call free and unlimited).
	Payers *payment.Handler
	// Relay forwards the paid calls.
	Relay *relay.Relay
	// Timeout bounds a request from when it is paid for.
	Timeout time.Duration
	// Conc holds each caller's in-flight slots (the in-process doors'; the
	// POST door takes its slot before it reads the body).
	Conc *Concurrency
}

// Chain is one chain as the core serves it.
type Chain struct {
	ID      uint64
	Methods *evm.Table     // the method table with the chain's overrides
	Pool    *upstream.Pool // its best head bounds eth_getLogs' spans
	Relay   *relay.Chain
	Metrics Metrics
}

// Door is the protocol a request came in by.
type Door uint8

const (
	// POST is POST /rpc: it holds the caller's in-flight slot and counts
	// the request itself (from before its body was read).
	POST Door = iota
	// Socket is a message over a WebSocket.
	Socket
	// MCP is an MCP tool call.
	MCP
)

// Request is one parsed JSON-RPC call or batch and who asks.
type Request struct {
	Chain   *Chain
	Message *jsonrpc.Message
	// Caller is who asks: address and credentials (an API key, an x402
	// payment, a Sign-In-With-X message, or none: the free tier).
	Caller payment.Caller
	Door   Door
	// Reply takes the headers the payers hand the caller (canonical names:
	// a request id, what is left, an x402 settlement, a bundle key), with
	// an answer or a refusal; nil for a door that sends none (a socket).
	Reply map[string][]string
}

// Outcome is what serving a Request came to: the answers, or a refusal.
type Outcome struct {
	Resps []jsonrpc.Response // Resps[i] answers Message.Items[i]
	Body  []byte             // the encoded answer (nil: nothing to answer)
	// Status is the answer's as jsonrpc.EncodeAnswer gives it (200, or 204
	// for notifications only); Unavailable marks a request none of whose
	// calls could be served and which no upstream answered: a gateway
	// failure, which the doors render as such (503).
	Status      int
	Unavailable bool
	// Refused is set when nothing was served; the door renders it.
	Refused *payment.Refusal
	// Payer is who paid ("" when nothing was booked: local answers only,
	// metering off, a refusal) and Charged the units it kept paying for
	// (booked minus refunded).
	Payer   events.Payer
	Charged int
	// ServedBy is who served most of it (the X-Tollgate-Upstream header).
	ServedBy events.ServedBy
	// Label is the rpc_requests_total outcome.
	Label string
}

// Serve serves req. The in-process doors' requests take the caller's
// in-flight slot and are counted here; POST's are by its door.
func (c *Core) Serve(ctx context.Context, req Request) Outcome {
	if req.Door == POST {
		return c.serve(ctx, &req)
	}
	if c.Payers != nil {
		release, ok := c.Conc.Acquire(req.Caller.IP)
		if !ok {
			metrics.MeterDecisions.WithLabelValues("concurrency_limited").Inc()
			return Outcome{Refused: payment.Busy()}
		}
		defer release()
	}
	start := time.Now()
	o := c.serve(ctx, &req)
	req.Chain.Metrics.Request(o.Label, time.Since(start))
	return o
}

// serve answers the chain's facts locally, books the rest with the
// payers, answers what the edge cache holds, forwards the rest as one
// smaller batch, settles, and puts every answer back at the caller's
// position with the caller's id. It writes nothing: the door renders the
// outcome.
func (c *Core) serve(ctx context.Context, req *Request) Outcome {
	cs, msg := req.Chain, req.Message
	chainID := cs.Metrics.label
	calls, index := msg.Calls()
	resps := make([]jsonrpc.Response, len(msg.Items))
	// Facts of the chain (eth_chainId, net_version, eth_accounts) are
	// answered here, free: they reach neither the meter nor an upstream.
	calls, index = answerLocally(cs, calls, index, resps)
	var dec *meter.Decision
	booked := 0
	if c.Payers != nil && len(calls) > 0 {
		booked = cs.units(calls, nil)
		d, ref := c.Payers.Authorize(ctx, &req.Caller, req.Reply, cs.ID, msg, calls, booked)
		if ref != nil {
			return Outcome{Refused: ref, Label: "refused"}
		}
		dec = &d
	}
	// The request deadline starts once it is paid for: a request carrying
	// an x402 payment has waited for its settlement on chain by now.
	asked := ctx
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if dec != nil {
		ctx = relay.WithRequestID(ctx, dec.ID)
	}
	out := c.Relay.Forward(ctx, cs.Relay, calls)
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
	o := Outcome{Resps: resps, ServedBy: out.ServedBy}
	switch {
	case failed == 0:
		o.Label = "ok"
	case failed == len(calls):
		o.Label = "unavailable"
	default:
		o.Label = "partial"
	}
	o.Body, o.Status = jsonrpc.EncodeAnswer(msg, resps)
	// A request none of whose calls could be served, and which no upstream
	// answered, is a gateway failure, not a successful answer carrying
	// errors. An upstream's own error is relayed as it is.
	o.Unavailable = failed > 0 && failed == len(calls) && !out.Relayed
	if dec != nil {
		// The refund is in the units the calls were booked in; each
		// server earns the units of the calls it served.
		refund := cs.units(calls, out.Failed)
		c.Payers.Settle(asked, req.Reply, dec, cs.servedShares(calls, out.By), refund)
		o.Payer, o.Charged = dec.Payer(), booked-refund
	}
	return o
}

// servedShares is what each server earns of a request: the units of the
// calls it served (failed calls earn nobody).
func (cs *Chain) servedShares(calls []jsonrpc.Item, by []events.ServedBy) []meter.Served {
	var out []meter.Served
	for k := range calls {
		if by[k] == (events.ServedBy{}) {
			continue
		}
		u := cs.Methods.Lookup(calls[k].Method).Units()
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
func (cs *Chain) units(calls []jsonrpc.Item, only []bool) int {
	n := 0
	for k := range calls {
		if only == nil || only[k] {
			n += cs.Methods.Lookup(calls[k].Method).Units()
		}
	}
	return n
}
