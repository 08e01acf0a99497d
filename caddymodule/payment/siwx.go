package payment

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// payWithSIWX serves a request from the signer's bundle. When the request
// also carries a payment, a sign-in that cannot serve it is not a refusal:
// the payment is tried instead.
func (h *Handler) payWithSIWX(ctx context.Context, c *Caller, _ http.Header, req meter.Request) (meter.Decision, error) {
	value := c.SIWX
	if value == "" {
		return meter.Decision{}, errNotMine
	}
	payName := c.PaymentName
	fallThrough := payName != ""
	wallet, nonce, ref := paycheck.VerifySIWX(value, h.pay.base(c), h.meter.Now())
	if ref != nil {
		metrics.SIWXOutcomes.WithLabelValues("invalid").Inc()
		if fallThrough {
			return meter.Decision{}, errNotMine
		}
		return meter.Decision{}, paymentRefused(ref, nil)
	}
	d, err := h.meterSIWX(ctx, req, wallet, nonce)
	if err != nil {
		// The draw may have run before its reply was lost (Redis stalled
		// or died mid-reply): as for a key, its calls are given back. The
		// message's nonce stays spent (voidLater says why).
		if meter.MaybeBooked(err) {
			h.voidLater(d)
		}
		return d, meterDown(err)
	}
	switch d.Outcome {
	case meter.Bundle:
		metrics.SIWXOutcomes.WithLabelValues("served").Inc()
		return d, nil
	case meter.RateLimited:
		metrics.SIWXOutcomes.WithLabelValues("rate_limited").Inc()
		return d, decided(d)
	case meter.Recovering:
		// The wallet's bundle is not rebuilt yet; a payment sent along
		// would be refused by the same state (PaymentGate).
		metrics.SIWXOutcomes.WithLabelValues(meter.ReasonRecovering).Inc()
		return d, decided(d)
	}
	metrics.SIWXOutcomes.WithLabelValues(d.Reason).Inc()
	if fallThrough {
		return meter.Decision{}, errNotMine
	}
	msg := fmt.Sprintf("the wallet %s has %d bundle calls left; the request has %d", wallet, d.BundleLeft, req.Calls)
	if d.Reason == meter.ReasonNonceUsed {
		msg = "this Sign-In-With-X message was already used; sign the fresh challenge of this 402"
	}
	return d, paymentRefused(paycheck.Refuse(d.Reason, "%s", msg), nil)
}
