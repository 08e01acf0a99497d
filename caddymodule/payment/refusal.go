package payment

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// errNotMine is a payer's "this request does not carry what I read": the
// next payer is asked.
var errNotMine = errors.New("not this payer's request")

// refusalKind is why a request is not served; each maps to one answer.
type refusalKind int

const (
	refusedKey             refusalKind = iota // 401: malformed, unknown or revoked API key
	refusedPaymentRequired                    // 402: nothing pays (free tier used up, no credits)
	refusedPayment                            // 402: a payment or sign-in that was not accepted
	refusedRateLimited                        // 429
	refusedRecovering                         // 503: Redis lost its data, settlementd rebuilds it
	refusedMeterDown                          // 503: the metering store failed
	refusedUnavailable                        // 503: a part of the payment path failed; Message says what
)

// Refusal is a payer's typed "no". Payers return it as an error; one
// function (write) turns it into the status and body the caller gets, so
// every way to pay refuses alike.
type Refusal struct {
	kind refusalKind
	// Message: refusedKey and refusedUnavailable.
	Message string
	// RetryAfter (seconds) for refusedUnavailable; 0 sends none.
	RetryAfter int
	decision   *meter.Decision   // refusedPaymentRequired, refusedRateLimited, refusedRecovering
	payment    *paycheck.Refusal // refusedPayment
	settled    *settled          // refusedPayment: the facilitator's failed settlement, echoed
	batch      *batchState       // refusedPayment of a batch-settlement payment: the corrective state
	cause      error             // refusedMeterDown
}

func (e *Refusal) Error() string {
	switch {
	case e.payment != nil:
		return e.payment.Reason + ": " + e.payment.Msg
	case e.cause != nil:
		return "metering unavailable: " + e.cause.Error()
	case e.decision != nil:
		return "refused: " + e.decision.Outcome.String()
	}
	return e.Message
}

func keyRefused(msg string) *Refusal { return &Refusal{kind: refusedKey, Message: msg} }

func paymentRefused(ref *paycheck.Refusal, s *settled) *Refusal {
	return &Refusal{kind: refusedPayment, payment: ref, settled: s}
}

func unavailable(retryAfter int, msg string) *Refusal {
	return &Refusal{kind: refusedUnavailable, RetryAfter: retryAfter, Message: msg}
}

func meterDown(err error) *Refusal { return &Refusal{kind: refusedMeterDown, cause: err} }

// decided maps a metering decision that serves nothing to its refusal;
// nil when the decision serves the request.
func decided(d meter.Decision) *Refusal {
	switch d.Outcome {
	case meter.Paid, meter.Free, meter.Bundle:
		return nil
	case meter.PaymentRequired:
		return &Refusal{kind: refusedPaymentRequired, decision: &d}
	case meter.RateLimited:
		return &Refusal{kind: refusedRateLimited, decision: &d}
	case meter.Recovering:
		return &Refusal{kind: refusedRecovering, decision: &d}
	case meter.Unauthorized:
		if d.Reason == "revoked_key" {
			return keyRefused(web.MsgRevokedKey)
		}
		return keyRefused(web.MsgUnknownKey)
	}
	return meterDown(errors.New("unexpected metering outcome " + d.Outcome.String()))
}

// write answers a refused request: the one place a refusal becomes a
// status and a body. id is the JSON-RPC id of a whole-request error.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, id json.RawMessage, req meter.Request, e *Refusal) {
	switch e.kind {
	case refusedKey:
		web.RPCError(w, http.StatusUnauthorized, jsonrpc.ErrorResponse(id, jsonrpc.Unauthorized(e.Message)))
	case refusedPaymentRequired:
		h.WritePaymentRequired(w, r, e.decision)
	case refusedPayment:
		h.writePaymentRefused(w, r, e.payment, e.settled, req.Calls, e.batch)
	case refusedRateLimited:
		secs := meter.RetrySeconds(e.decision.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		web.RPCError(w, http.StatusTooManyRequests, jsonrpc.ErrorResponse(id, jsonrpc.RateLimited(secs)))
	case refusedRecovering:
		web.Recovering(w, id, e.decision)
	case refusedMeterDown:
		// Nothing was served (and a booking the failed call may have made
		// is undone by voidLater).
		metrics.MeterDecisions.WithLabelValues("unavailable").Inc()
		h.logger.Warn("metering unavailable; refusing the request", zap.Uint64("chain_id", req.ChainID), zap.Error(e.cause))
		w.Header().Set("Retry-After", "1")
		web.RPCError(w, http.StatusServiceUnavailable, jsonrpc.ErrorResponse(id, jsonrpc.InternalError("metering unavailable, retry shortly")))
	case refusedUnavailable:
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
		web.RPCError(w, http.StatusServiceUnavailable, jsonrpc.ErrorResponse(id, jsonrpc.InternalError(e.Message)))
	}
}
