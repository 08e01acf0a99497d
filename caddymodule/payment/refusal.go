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
	refusedBusy                               // 429: the caller's in-flight requests are at their cap (Busy)
)

// Refusal is a payer's typed "no". Payers return it as an error; Authorize
// completes it (a 402's offer is built for the request it refuses) and
// hands it to the door, which renders it in its own protocol from the same
// value: POST /rpc as HTTP (HTTP: status, headers, body), a WebSocket
// message and an MCP tool call as one JSON-RPC error (JSONRPC), an MCP
// 402 as x402's tool-result binding (Offer). No payer writes an answer.
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
	offer      *Offer            // a 402's challenge, built by resolve
}

// Offer is a 402's x402 challenge as the doors render it.
type Offer struct {
	// Error is the challenge's reason (the v1 body's and the v2 object's
	// error).
	Error string
	// V1 is the encoded x402 v1 PaymentRequired object with onboarding (the
	// HTTP body, as web.JSON writes it).
	V1 []byte
	// V2 is the encoded x402 v2 PaymentRequired object (PAYMENT-REQUIRED,
	// base64; MCP's PaymentRequired tool result).
	V2 []byte
	// Onboarding is the encoded onboarding object of V1.
	Onboarding json.RawMessage
	// settlement is the facilitator's failed settlement echoed on the 402
	// (PAYMENT-RESPONSE or X-PAYMENT-RESPONSE), when it refused to settle.
	settlement *settled
}

func (e *Refusal) Error() string {
	switch {
	case e.payment != nil:
		return e.payment.Reason + ": " + e.payment.Msg
	case e.cause != nil:
		return "metering unavailable: " + e.cause.Error()
	case e.decision != nil:
		return "refused: " + e.decision.Outcome.String()
	case e.kind == refusedBusy:
		return "too many requests in flight"
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

// Busy is the refusal of a request whose caller has its in-flight requests
// at the cap (429, retry in 1 s; its JSON-RPC error carries a null id
// even for a single call: it is refused before its body is read).
func Busy() *Refusal { return &Refusal{kind: refusedBusy} }

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

// resolve completes e for the caller c it refuses (calls: the calls it
// booked): a 402's offer names r's resource and prices its calls; a
// metering failure is counted and logged once, here.
func (h *Handler) resolve(c *Caller, req meter.Request, e *Refusal) *Refusal {
	switch e.kind {
	case refusedPaymentRequired:
		o := h.paymentRequiredOffer(c, e.decision)
		e.offer = &o
	case refusedPayment:
		o := h.offer402(c, e.payment.Reason+": "+e.payment.Msg, e.payment.Reason, h.meter.ConfigLimits(), req.Calls, e.batch)
		o.settlement = e.settled
		e.offer = &o
	case refusedMeterDown:
		// Nothing was served (and a booking the failed call may have made
		// is undone by voidLater).
		metrics.MeterDecisions.WithLabelValues("unavailable").Inc()
		h.logger.Warn("metering unavailable; refusing the request", zap.Uint64("chain_id", req.ChainID), zap.Error(e.cause))
	}
	return e
}

// Status is the refusal's HTTP status (401, 402, 429 or 503): the POST
// answer's, and data.http_status of the JSON-RPC error.
func (e *Refusal) Status() int {
	switch e.kind {
	case refusedKey:
		return http.StatusUnauthorized
	case refusedPaymentRequired, refusedPayment:
		return http.StatusPaymentRequired
	case refusedRateLimited, refusedBusy:
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// Retry is the seconds after which a retry may succeed (Retry-After); 0
// for none.
func (e *Refusal) Retry() int {
	switch e.kind {
	case refusedRateLimited, refusedRecovering:
		return meter.RetrySeconds(e.decision.RetryAfter)
	case refusedMeterDown, refusedBusy:
		return 1
	case refusedUnavailable:
		return max(e.RetryAfter, 0)
	}
	return 0
}

// Offer is a 402's challenge; nil for every other refusal.
func (e *Refusal) Offer() *Offer { return e.offer }

// RPCError is the JSON-RPC error a refused POST's body carries; nil for a
// 402, whose body is the x402 challenge.
func (e *Refusal) RPCError() *jsonrpc.Error {
	switch e.kind {
	case refusedKey:
		return jsonrpc.Unauthorized(e.Message)
	case refusedRateLimited, refusedBusy:
		return jsonrpc.RateLimited(e.Retry())
	case refusedRecovering:
		return web.RecoveringError(e.Retry())
	case refusedMeterDown:
		return jsonrpc.InternalError("metering unavailable, retry shortly")
	case refusedUnavailable:
		return jsonrpc.InternalError(e.Message)
	}
	return nil
}

// JSONRPC is the JSON-RPC error a caller without an HTTP status of its own
// (a WebSocket message, an MCP tool call) gets: web.RefusalOf, the one
// contract of docs/errors.md.
func (e *Refusal) JSONRPC() *jsonrpc.Error {
	var x *web.X402Refusal
	if e.offer != nil {
		x = &web.X402Refusal{Error: e.offer.Error, Body: e.offer.V1}
	}
	return web.RefusalOf(e.Status(), e.Retry(), e.RPCError(), x)
}

// HTTP is the refusal as POST /rpc answers it: status, the headers to set
// and the body. id is the JSON-RPC id of a whole-request error (the
// caller's for a single call, null for a batch).
func (e *Refusal) HTTP(id json.RawMessage) (status int, hdr [][2]string, body []byte) {
	status = e.Status()
	if o := e.offer; o != nil {
		if o.settlement != nil {
			name, value := o.settlement.header()
			hdr = append(hdr, [2]string{name, value})
		}
		hdr = append(hdr, [2]string{headerRequired, base64Std(o.V2)},
			[2]string{"Content-Type", "application/json"}, [2]string{"Cache-Control", "no-store"})
		return status, hdr, o.V1
	}
	if s := e.Retry(); s > 0 {
		hdr = append(hdr, [2]string{"Retry-After", strconv.Itoa(s)})
	}
	if e.kind == refusedBusy {
		id = nil
	}
	body, _ = json.Marshal(jsonrpc.ErrorResponse(id, e.RPCError()))
	return status, append(hdr, [2]string{"Content-Type", "application/json"}), body
}

// WriteHTTP writes the refusal as HTTP does (HTTP): the GET doors of this
// room (the batch-settlement refund) and of the REST routes.
func WriteHTTP(w http.ResponseWriter, id json.RawMessage, e *Refusal) {
	status, hdr, body := e.HTTP(id)
	for _, kv := range hdr {
		w.Header().Set(kv[0], kv[1])
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// write answers a refused request of this room's own HTTP door.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, id json.RawMessage, req meter.Request, e *Refusal) {
	c := originOf(r)
	WriteHTTP(w, id, h.resolve(&c, req, e))
}
