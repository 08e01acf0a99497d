package payment

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// ServeBatchRefund answers a GET on a JSON-RPC path, which is how the
// batch-settlement client asks for a cooperative refund (coinbase/x402
// batch-settlement, "Refund"; @x402/evm refundChannel): a GET without a
// payment is its probe, answered with the 402 and its PAYMENT-REQUIRED; a
// GET with a refund payload closes the channel (no voucher is drawn from it
// after), has the facilitator claim what the vouchers charged and return
// the rest of the deposit to the payer in one transaction, and answers 200
// with the facilitator's settle response in PAYMENT-RESPONSE. It returns
// false when the gateway offers no batch-settlement (the caller answers
// 405 as before).
func (h *Handler) ServeBatchRefund(w http.ResponseWriter, r *http.Request) bool {
	offer, ok := h.batchOffer()
	if !ok {
		return false
	}
	name, value := paymentHeader(r)
	if name == "" {
		h.write402(w, r, "JSON-RPC requests use POST; a GET is answered with the payment requirements (the x402 batch-settlement refund probe)",
			"payment_required", h.meter.ConfigLimits(), 1, nil)
		return true
	}
	refuse := func(ref *paycheck.Refusal, bs *batchState) {
		metrics.X402Payments.WithLabelValues("refund_refused").Inc()
		h.writePaymentRefused(w, r, ref, nil, 1, bs)
	}
	if !paycheck.IsBatchPayment(value) {
		refuse(paycheck.Refuse(x402.ReasonScheme, "a GET on /rpc takes only a batch-settlement refund payload; JSON-RPC requests use POST"), nil)
		return true
	}
	p, ref := paycheck.DecodeBatchPayment(offer, name, value, h.meter.Now())
	if ref != nil {
		refuse(ref, nil)
		return true
	}
	if p.Type != "refund" {
		refuse(paycheck.Refuse(paycheck.ReasonBatchPayloadType, "a GET on /rpc takes a refund payload; %s payloads pay POST requests", p.Type), nil)
		return true
	}
	id := strings.ToLower(p.ChannelID.Hex())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), MeterTimeout)
	st, reason, err := h.meter.CloseChannel(ctx, id, p.Wallet(), money.Units(p.MaxClaimable))
	cancel()
	if err != nil {
		h.write(w, r, nil, meter.Request{Calls: 1}, meterDown(err))
		return true
	}
	switch reason {
	case meter.ReasonRecovering:
		// Redis lost its data and the channel may not be rebuilt yet.
		h.write(w, r, nil, meter.Request{Calls: 1}, decided(meter.Decision{Outcome: meter.Recovering, RetryAfter: meter.RecoveryRetryAfter}))
		return true
	case meter.ReasonChannelUnknown:
		refuse(paycheck.Refuse(reason, "this gateway knows no deposit in channel %s: nothing to refund", id), nil)
		return true
	case meter.ReasonCumulativeMismatch:
		// The corrective 402: the client adopts the charged total and signs
		// its refund voucher again.
		refuse(paycheck.Refuse(reason, "the refund voucher's maxClaimableAmount is %d; the channel's charged total is %d", p.MaxClaimable, st.Charged),
			&batchState{id: id, st: st})
		return true
	}
	sr, body, rf, sent := h.batchRefund(r, p)
	// Reopen when nothing can have moved: the facilitator was never asked,
	// or it refused. When it was asked and did not answer, the refund may
	// have landed: the channel stays closed (a retried refund or a new
	// deposit settles it), so no voucher draws on a deposit that is gone.
	reopen, bal, claimed := !sent || rf == nil, money.Units(-1), money.Units(0)
	if rf == nil && sr.Success {
		b, err1 := strconv.ParseInt(sr.Extra.ChannelState.Balance, 10, 64)
		c, err2 := strconv.ParseInt(sr.Extra.ChannelState.TotalClaimed, 10, 64)
		if err1 == nil && err2 == nil {
			bal, claimed = money.Units(b), money.Units(c)
			reopen = bal > claimed // a partial refund leaves a deposit to draw from
		} else {
			reopen = false // it refunded; the state is read again at the next deposit
		}
	}
	ctx, cancel = context.WithTimeout(context.WithoutCancel(r.Context()), MeterTimeout)
	if err := h.meter.RefundDone(ctx, id, bal, claimed, reopen); err != nil {
		h.logger.Error("x402 refund outcome could not be recorded; the channel stays closed", zap.String("channel", id), zap.Error(err))
	}
	cancel()
	if rf != nil {
		h.write(w, r, nil, meter.Request{Calls: 1}, rf)
		return true
	}
	w.Header().Set(headerResponseV2, base64.StdEncoding.EncodeToString(body))
	if !sr.Success {
		// The scheme's client reads a failed refund from PAYMENT-RESPONSE on the 402.
		refuse(paycheck.Refuse(orDefault(sr.ErrorReason, x402.ReasonUnexpectedSett), "%s", orDefault(sr.ErrorMessage, "the refund failed")), nil)
		return true
	}
	metrics.X402Payments.WithLabelValues("refund").Inc()
	web.JSON(w, http.StatusOK, map[string]any{"refunded": true, "channel_id": id, "transaction": sr.Transaction,
		"amount_units": sr.Amount, "charged_units": st.Charged.String(),
		"note": "the channel is closed: vouchers on it are refused until a new deposit"})
	return true
}

// refundAnswer is the part of the facilitator's settle answer the gateway reads.
type refundAnswer struct {
	Success      bool   `json:"success"`
	ErrorReason  string `json:"errorReason"`
	ErrorMessage string `json:"errorMessage"`
	Transaction  string `json:"transaction"`
	Amount       string `json:"amount"`
	Extra        struct {
		ChannelState struct {
			Balance      string `json:"balance"`
			TotalClaimed string `json:"totalClaimed"`
		} `json:"channelState"`
	} `json:"extra"`
}

// batchRefund sends the refund payload to the facilitator's /settle; it
// returns its answer and the answer's bytes (for PAYMENT-RESPONSE), or a
// 503 refusal when the facilitator could not answer; sent tells whether
// the request may have reached it.
func (h *Handler) batchRefund(r *http.Request, p *paycheck.BatchPayment) (sr refundAnswer, body []byte, rf *Refusal, sent bool) {
	// A refund moves escrow: only settlementd, which holds the receiver
	// authorizer's key, makes it, and only for this gateway (its secret).
	// An external facilitator_url is never asked.
	if h.pay.Settlementd == "" {
		return sr, nil, unavailable(0, "cooperative refunds need settlementd (settlementd_url); nothing was refunded"), false
	}
	url := h.pay.Settlementd + "/x402"
	acc, _ := h.batchAccept(1, nil)
	reqBody, err := json.Marshal(map[string]any{"x402Version": 2, "paymentPayload": p.Raw, "paymentRequirements": acc})
	if err != nil {
		return sr, nil, unavailable(1, "internal error building the refund request"), false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), facilitatorSettle)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/settle", bytes.NewReader(reqBody))
	if err != nil {
		return sr, nil, h.facilitatorDown("refund", err), false
	}
	hreq.Header.Set("Content-Type", "application/json")
	h.pay.authenticate(hreq)
	resp, err := facilitatorClient.Do(hreq)
	if err != nil {
		return sr, nil, h.facilitatorDown("refund", err), true
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 500 || json.Unmarshal(b, &sr) != nil {
		return sr, nil, h.facilitatorDown("refund", fmt.Errorf("HTTP %d", resp.StatusCode)), true
	}
	return sr, b, nil, true
}
