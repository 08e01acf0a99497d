package payment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// MeterTimeout bounds the metering round trips. They run detached from the
// client's context: a client hanging up mid-script must not leave a debit
// whose outcome the gateway never learned (and so never refunds).
const MeterTimeout = 2 * time.Second

// wholeID is the id a whole-request error carries: the caller's for a
// single request, null for a batch.
func wholeID(msg *jsonrpc.Message) json.RawMessage {
	if !msg.Batch && len(msg.Items) == 1 {
		return msg.Items[0].ResponseID()
	}
	return nil
}

// A payer is one way to pay for a request. It answers errNotMine when the
// request carries nothing it reads (the next payer is asked), a *Refusal
// when it refuses, or the decision that serves the request with its calls
// booked. Adding a way to pay is adding a payer.
type payer struct {
	name string
	pay  func(h *Handler, ctx context.Context, c *Caller, hdr http.Header, req meter.Request) (meter.Decision, error)
}

// payers in this order: an API key (credits, or a bundle key's
// bundle), a Sign-In-With-X message (the wallet's bundle), an x402
// batch-settlement voucher (drawn from its channel's deposit), an x402
// exact payment (settled, then a new bundle), the caller's free allowance
// (which takes every request that reaches it).
var payers = []payer{
	{"api_key", (*Handler).payWithKey},
	{"siwx", (*Handler).payWithSIWX},
	{"x402-batch", (*Handler).payWithBatch},
	{"x402", (*Handler).payWithX402},
	{"free", (*Handler).payFree},
}

// Authorize books the request's calls (its valid items, counting units
// calls at the flat price: each call its method's weight) before anything
// is forwarded, asking the payers in order. It writes nothing: a refusal
// (401, 402, 429 or 503) comes back typed and complete (a 402's offer
// built for c), for the door to render in its protocol. c is who asks (its
// credentials as the door read them); ctx's deadline does not bound the
// metering calls (MeterTimeout does). hdr takes the headers a payer hands
// the caller (the request id, an x402 settlement, a bundle key), also with
// a refusal; nil when the door has none to send.
func (h *Handler) Authorize(ctx context.Context, c *Caller, hdr http.Header, chainID uint64, msg *jsonrpc.Message, calls []jsonrpc.Item, units int) (meter.Decision, *Refusal) {
	req := meter.Request{ChainID: chainID, IP: c.IP, Calls: units, Method: jsonrpc.RequestLabel(calls)}
	if hdr == nil {
		hdr = http.Header{}
	}
	for _, p := range payers {
		d, err := p.pay(h, ctx, c, hdr, req)
		if errors.Is(err, errNotMine) {
			continue
		}
		// The request id lets the caller and the operator match a booking
		// to this answer, also when the answer is a 503.
		if d.ID != "" {
			hdr.Set("X-Tollgate-Request-Id", d.ID)
		}
		var ref *Refusal
		if errors.As(err, &ref) {
			if ref.decision != nil {
				metrics.MeterDecisions.WithLabelValues(ref.decision.Outcome.String()).Inc()
			} else if ref.kind == refusedKey {
				metrics.MeterDecisions.WithLabelValues(meter.Unauthorized.String()).Inc()
			}
			if ref.settled != nil {
				// The facilitator's failed settlement is handed to the
				// caller with the refusal, as a settlement is with an
				// answer: a door without HTTP headers (MCP's _meta) reads
				// it here, not from the 402 only POST renders.
				setSettlement(hdr, ref.settled)
			}
			return d, h.resolve(c, req, ref)
		}
		if err != nil { // a payer returns only refusals; guard the contract
			return d, h.resolve(c, req, meterDown(err))
		}
		metrics.MeterDecisions.WithLabelValues(d.Outcome.String()).Inc()
		return d, nil
	}
	return meter.Decision{}, h.resolve(c, req, unavailable(1, "no way to pay applies"))
}

// WholeID is the id a whole-request error carries: the caller's for a
// single request, null for a batch.
func WholeID(msg *jsonrpc.Message) json.RawMessage { return wholeID(msg) }

// payWithKey: a request carrying X-API-Key is the key's, whatever else it
// carries; the metering script checks the key and books the calls in one
// round trip.
func (h *Handler) payWithKey(ctx context.Context, c *Caller, _ http.Header, req meter.Request) (meter.Decision, error) {
	key, keyed := c.Key, c.Keyed
	if !keyed {
		return meter.Decision{}, errNotMine
	}
	if !meter.WellFormedKey(key) {
		return meter.Decision{}, keyRefused(web.MsgMalformedKey)
	}
	req.KeyHash = meter.HashKey(key)
	return h.authorizeScript(ctx, req)
}

// payFree: the caller's free allowance (the script also reports a key's
// missing credits and the rate limits).
func (h *Handler) payFree(ctx context.Context, _ *Caller, _ http.Header, req meter.Request) (meter.Decision, error) {
	return h.authorizeScript(ctx, req)
}

// authorizeScript runs the metering script for a key or the free tier.
func (h *Handler) authorizeScript(ctx context.Context, req meter.Request) (meter.Decision, error) {
	d, err := metered(ctx, func(ctx context.Context) (meter.Decision, error) { return h.meter.Authorize(ctx, req) })
	if err != nil {
		// The script may have run before the connection died (Redis killed
		// between booking and replying): undo whatever it booked.
		if meter.MaybeBooked(err) {
			h.voidLater(d)
		}
		return d, meterDown(err)
	}
	if ref := decided(d); ref != nil {
		return d, ref
	}
	return d, nil
}

// metered runs one metering script under the metering deadline, detached
// from the caller's cancellation (a script that started books whether or
// not the caller waits: a cancel would only lose its reply), and observes
// its latency.
func metered(ctx context.Context, run func(context.Context) (meter.Decision, error)) (meter.Decision, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MeterTimeout)
	defer cancel()
	start := time.Now()
	d, err := run(ctx)
	metrics.MeterLatency.Observe(time.Since(start).Seconds())
	return d, err
}

// voidSlots bounds the goroutines settling metering calls whose outcome
// the gateway never learned; they are rare (the requests in flight when
// Redis dies, or a reply that timed out), so the bound is only a guard.
var voidSlots = make(chan struct{}, 1024)

// voidLater settles a metering call that failed after its script may have
// run (meter.MaybeBooked): the request was answered 503, so once Redis
// answers again whatever the script booked for it is refunded
// (meter.VoidIfBooked, idempotent). It retries for up to voidPatience.
// Every payer that books in one script uses it: a key's credits, the free
// tier, a Sign-In-With-X draw, an x402 bundle reuse and the draw of a
// new grant. Only the calls are given back. A Sign-In-With-X nonce or an
// x402 authorization's nonce the lost script marked used stays used: the
// void lands seconds to minutes after the 503, so releasing it would make
// the same retry a 402 now and a 200 later; a message that may have been
// seen on the way stays single-use; and the client's only cost is a new
// signature, which the 402 its retry gets asks for (a fresh challenge, or
// an authorization that is never settled, so no money moved).
func (h *Handler) voidLater(d meter.Decision) {
	select {
	case voidSlots <- struct{}{}:
	default:
		h.logger.Error("too many unsettled metering calls: this request may stay charged; refund it by its request id",
			zap.String("request_id", d.ID))
		return
	}
	m, log := h.meter, h.logger
	go func() {
		defer func() { <-voidSlots }()
		// A reply that timed out may belong to a script still queued in a
		// slow Redis: give it time to run before looking for its debit.
		time.Sleep(voidFirstLook)
		wait := 100 * time.Millisecond
		looked := false
		for deadline := time.Now().Add(voidPatience); ; {
			// A look reads the stream from the decision to its newest
			// entry, which after a long stall is more than one page: it is
			// not on the hot path, so it gets longer than a decision.
			ctx, cancel := context.WithTimeout(context.Background(), voidLookTimeout)
			found, err := m.VoidIfBooked(ctx, &d)
			cancel()
			if err == nil && !found && !looked {
				// A Redis busy past the timeout (a long script, a fork)
				// runs the queued script and this look in the same turn of
				// its event loop, in either order: a second look, sent
				// after the first one was answered, comes after the script.
				looked = true
				time.Sleep(voidFirstLook)
				continue
			}
			if err == nil {
				if found {
					metrics.MeterRefunds.WithLabelValues("unsettled", "ok").Inc()
					log.Warn("a request answered 503 had been booked as Redis failed; its charge was given back", zap.String("request_id", d.ID))
				}
				return
			}
			if time.Now().After(deadline) {
				metrics.MeterRefunds.WithLabelValues("unsettled", "error").Inc()
				log.Error("could not check whether a request answered 503 was booked: it may stay charged; refund it by its request id",
					zap.String("request_id", d.ID), zap.Error(err))
				return
			}
			time.Sleep(wait) // paces retries while Redis is down
			wait = min(2*wait, 5*time.Second)
		}
	}()
}

// voidPatience is how long voidLater keeps trying to reach Redis;
// voidFirstLook is when it first looks.
const voidPatience, voidFirstLook = 10 * time.Minute, time.Second

// voidLookTimeout bounds one look of voidLater (every page of it).
const voidLookTimeout = 30 * time.Second

// payerValues are the X-Tollgate-Payer values, built once (web.Const).
var payerValues = map[events.Payer][]string{
	events.PayerCredits: {string(events.PayerCredits)},
	events.PayerBundle:  {string(events.PayerBundle)},
	events.PayerFree:    {string(events.PayerFree)},
}

// Settle closes a served request's books (meter.FinishServed: the refund
// of the calls the upstream failed — failed is in the units the calls were
// booked in — synchronously so the answer and the balance agree, and the
// revenue of the rest, queued, one event per server in served) and tells
// the caller what is left in hdr (nil: a door with no headers to send).
func (h *Handler) Settle(rctx context.Context, hdr http.Header, d *meter.Decision, served []meter.Served, failed int) {
	// Only a refund talks to Redis; a request served whole costs no timer.
	ctx := context.Background()
	if failed > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(rctx), MeterTimeout)
		defer cancel()
	}
	f, err := h.meter.FinishServed(ctx, d, failed, served, time.Now())
	switch {
	case err != nil:
		// The debit and its failure are both on record (the Debit event,
		// this log line); settlementd's reconciliation can repay it.
		metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "error").Add(float64(failed))
		h.logger.Error("refund failed", zap.String("request_id", d.ID), zap.String("account", d.Account),
			zap.Int("calls", failed), zap.Error(err))
	case f.Refunded:
		metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "ok").Add(float64(failed))
	}
	for _, ev := range f.Revenues {
		if !h.writer.Enqueue(ev) {
			h.logger.Warn("revenue event dropped", zap.String("request_id", d.ID), zap.String("revenue_id", ev.ID))
		}
	}
	if hdr == nil {
		return
	}
	if v, ok := payerValues[d.Payer()]; ok {
		web.Const(hdr, "X-Tollgate-Payer", v)
	} else {
		hdr.Set("X-Tollgate-Payer", string(d.Payer()))
	}
	switch d.Outcome {
	case meter.Paid:
		hdr.Set("X-Tollgate-Credits-Remaining", f.Balance.Decimal())
	case meter.Bundle:
		hdr.Set(headerBundleLeft, strconv.FormatInt(f.BundleLeft, 10))
	default:
		hdr.Set("X-Tollgate-Free-Remaining", strconv.FormatInt(d.FreeLeft, 10))
	}
}
