package payment

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
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

// Authorize books the request's calls (its valid items) before anything is
// forwarded, deciding who pays in DESIGN §4's order: an API key (credits,
// or a bundle key's bundle), a Sign-In-With-X message (the wallet's
// bundle), an x402 payment (settled, then a new bundle), the IP's free
// allowance. When it returns false the answer (401, 402, 429 or 503) has
// been written.
func (h *Handler) Authorize(w http.ResponseWriter, r *http.Request, chainID uint64, msg *jsonrpc.Message, calls []jsonrpc.Item) (meter.Decision, bool) {
	id := wholeID(msg)
	req := meter.Request{ChainID: chainID, IP: web.ClientIP(r), Calls: len(calls), Method: jsonrpc.RequestLabel(calls)}
	key, keyed := web.APIKey(r)
	if keyed {
		if !meter.WellFormedKey(key) {
			metrics.MeterDecisions.WithLabelValues(meter.Unauthorized.String()).Inc()
			web.RPCError(w, http.StatusUnauthorized, jsonrpc.ErrorResponse(id,
				jsonrpc.Unauthorized("X-API-Key is not a Tollgate API key (tg_ followed by 43 letters and digits)")))
			return meter.Decision{}, false
		}
		req.KeyHash = meter.HashKey(key)
	} else {
		payName, payValue := paymentHeader(r)
		if siwx := r.Header.Get(headerSIWX); siwx != "" {
			if d, ok, handled := h.authorizeSIWX(w, r, req, id, siwx, payName != ""); handled {
				if ok {
					metrics.MeterDecisions.WithLabelValues(d.Outcome.String()).Inc()
					w.Header().Set("X-Tollgate-Request-Id", d.ID)
				}
				return d, ok
			}
		}
		if payName != "" {
			d, ok := h.authorizePayment(w, r, req, id, payName, payValue)
			if ok {
				metrics.MeterDecisions.WithLabelValues(d.Outcome.String()).Inc()
				w.Header().Set("X-Tollgate-Request-Id", d.ID)
			}
			return d, ok
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), MeterTimeout)
	defer cancel()
	start := time.Now()
	d, err := h.meter.Authorize(ctx, req)
	metrics.MeterLatency.Observe(time.Since(start).Seconds())
	if err != nil {
		// The script may have run before the connection died (Redis killed
		// between booking and replying): the request id lets the caller and
		// the operator match such a debit to this 503.
		if d.ID != "" {
			w.Header().Set("X-Tollgate-Request-Id", d.ID)
		}
		h.meterDown(w, id, req, err)
		if meter.MaybeBooked(err) {
			h.voidLater(d)
		}
		return d, false
	}
	metrics.MeterDecisions.WithLabelValues(d.Outcome.String()).Inc()
	w.Header().Set("X-Tollgate-Request-Id", d.ID)
	switch d.Outcome {
	case meter.Paid, meter.Free, meter.Bundle:
		return d, true
	case meter.PaymentRequired:
		h.WritePaymentRequired(w, r, &d)
	case meter.RateLimited:
		h.writeRateLimited(w, id, &d)
	case meter.Unauthorized:
		msg := "unknown API key"
		if d.Reason == "revoked_key" {
			msg = "this API key has been revoked"
		}
		web.RPCError(w, http.StatusUnauthorized, jsonrpc.ErrorResponse(id, jsonrpc.Unauthorized(msg)))
	case meter.Recovering:
		web.Recovering(w, id, &d)
	}
	return d, false
}

// meterSIWX runs the SIWX draw with the metering deadline and latency metric.
func (h *Handler) meterSIWX(r *http.Request, req meter.Request, wallet, nonce string) (meter.Decision, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), MeterTimeout)
	defer cancel()
	start := time.Now()
	d, err := h.meter.AuthorizeSIWX(ctx, req, wallet, nonce, paycheck.SIWXNonceTTL)
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
		for deadline := time.Now().Add(voidPatience); ; {
			ctx, cancel := context.WithTimeout(context.Background(), MeterTimeout)
			found, err := m.VoidIfBooked(ctx, &d)
			cancel()
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

// meterDown answers 503 when metering failed: nothing was served (and a
// booking the failed call may have made is undone by voidLater).
func (h *Handler) meterDown(w http.ResponseWriter, id json.RawMessage, req meter.Request, err error) {
	metrics.MeterDecisions.WithLabelValues("unavailable").Inc()
	h.logger.Warn("metering unavailable; refusing the request", zap.Uint64("chain_id", req.ChainID), zap.Error(err))
	w.Header().Set("Retry-After", "1")
	web.RPCError(w, http.StatusServiceUnavailable, jsonrpc.ErrorResponse(id, jsonrpc.InternalError("metering unavailable, retry shortly")))
}

func (h *Handler) writeRateLimited(w http.ResponseWriter, id json.RawMessage, d *meter.Decision) {
	secs := meter.RetrySeconds(d.RetryAfter)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	web.RPCError(w, http.StatusTooManyRequests, jsonrpc.ErrorResponse(id, jsonrpc.RateLimited(secs)))
}

// Settle finishes a served request's books: a refund for the calls the
// upstream failed (synchronously, so the answer and the balance agree), and
// the revenue event for the rest (asynchronously).
func (h *Handler) Settle(r *http.Request, w http.ResponseWriter, d *meter.Decision, servedBy, nodeID string, failed int) {
	balance := d.Balance
	refunded := false
	if failed > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), MeterTimeout)
		err := h.meter.Refund(ctx, d, failed)
		cancel()
		if err != nil {
			// The debit and its failure are both on record (the Debit event,
			// this log line); settlementd's reconciliation can repay it.
			metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "error").Add(float64(failed))
			h.logger.Error("refund failed", zap.String("request_id", d.ID), zap.String("account", d.Account),
				zap.Int("calls", failed), zap.Error(err))
		} else {
			metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "ok").Add(float64(failed))
			refunded = true
			if d.Outcome == meter.Paid {
				balance += money.PricePerCall * money.Units(failed)
			}
		}
	}
	served := servedBy
	if served == "" {
		served = "cache" // the forwarded part failed; only cached calls were served
	}
	if ev, ok := d.Revenue(failed, served, nodeID, time.Now()); ok && !h.writer.Enqueue(ev) {
		h.logger.Warn("revenue event dropped", zap.String("request_id", d.ID))
	}
	w.Header().Set("X-Tollgate-Payer", string(d.Payer()))
	switch d.Outcome {
	case meter.Paid:
		w.Header().Set("X-Tollgate-Credits-Remaining", balance.Decimal())
	case meter.Bundle:
		left := d.BundleLeft
		if failed > 0 && refunded {
			left += int64(failed)
		}
		w.Header().Set(headerBundleLeft, strconv.FormatInt(left, 10))
	default:
		w.Header().Set("X-Tollgate-Free-Remaining", strconv.FormatInt(d.FreeLeft, 10))
	}
}
