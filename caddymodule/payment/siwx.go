package payment

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// authorizeSIWX serves a request from the signer's bundle. ok is false with
// the refusal written, unless fallThrough: the request also carries a
// payment, which is then tried instead.
func (h *Handler) authorizeSIWX(w http.ResponseWriter, r *http.Request, req meter.Request, id json.RawMessage, value string, fallThrough bool) (d meter.Decision, ok, handled bool) {
	wallet, nonce, ref := paycheck.VerifySIWX(value, h.pay.BaseURL(r), h.meter.Now())
	if ref != nil {
		metrics.SIWXOutcomes.WithLabelValues("invalid").Inc()
		if fallThrough {
			return d, false, false
		}
		h.writePaymentRefused(w, r, ref, nil)
		return d, false, true
	}
	d, err := h.meterSIWX(r, req, wallet, nonce)
	if err != nil {
		h.meterDown(w, id, req, err)
		return d, false, true
	}
	switch d.Outcome {
	case meter.Bundle:
		metrics.SIWXOutcomes.WithLabelValues("served").Inc()
		return d, true, true
	case meter.RateLimited:
		metrics.SIWXOutcomes.WithLabelValues("rate_limited").Inc()
		h.writeRateLimited(w, id, &d)
		return d, false, true
	case meter.Recovering:
		// The wallet's bundle is not rebuilt yet; a payment sent along
		// would be refused by the same state (PaymentGate).
		metrics.SIWXOutcomes.WithLabelValues(meter.ReasonRecovering).Inc()
		web.Recovering(w, id, &d)
		return d, false, true
	}
	metrics.SIWXOutcomes.WithLabelValues(d.Reason).Inc()
	if fallThrough {
		return d, false, false
	}
	msg := fmt.Sprintf("the wallet %s has %d bundle calls left; the request has %d", wallet, d.BundleLeft, req.Calls)
	if d.Reason == meter.ReasonNonceUsed {
		msg = "this Sign-In-With-X message was already used; sign the fresh challenge of this 402"
	}
	h.writePaymentRefused(w, r, paycheck.Refuse(d.Reason, "%s", msg), nil)
	return d, false, true
}
