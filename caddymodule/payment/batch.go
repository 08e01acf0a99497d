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
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// batchWithdrawDelay is the channels' withdraw delay (seconds): how long a
// payer's timed withdrawal waits, so settlementd's claims, on its schedule,
// always come first.
const batchWithdrawDelay = 86_400

// batchMinDeposit is the deposit the offer suggests (extra.minDeposit): one
// bundle's worth, 0.1 USDC, a thousand calls.
const batchMinDeposit = money.BundlePrice

// acceptBatch is the batch-settlement entry of the 402's accepts (coinbase/x402
// specs/schemes/batch-settlement, "402 Response"). withdrawDelay is a
// number there, so extra is not a map of strings.
type acceptBatch struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra"`
}

// batchState is a channel's state for a corrective 402: the client adopts
// chargedCumulativeAmount after checking the voucher signature is its own.
type batchState struct {
	id string
	st meter.ChannelState
}

func (h *Handler) batchOffer() (paycheck.BatchOffer, bool) {
	if h.pay.ReceiverAuthorizer == (common.Address{}) {
		return paycheck.BatchOffer{}, false
	}
	return paycheck.BatchOffer{Asset: h.pay.asset, PayTo: h.pay.payTo,
		ReceiverAuthorizer: h.pay.ReceiverAuthorizer, WithdrawDelay: batchWithdrawDelay}, true
}

// batchPrice is what a request of calls costs on a channel: the flat
// per-call price of a bundle call.
func batchPrice(calls int) money.Units { return x402.BatchCallPrice * money.Units(max(calls, 1)) }

// batchAccept is the batch-settlement offer for a request of calls (the
// voucher's increment), with the channel state of a corrective 402.
func (h *Handler) batchAccept(calls int, bs *batchState) (acceptBatch, bool) {
	if _, ok := h.batchOffer(); !ok {
		return acceptBatch{}, false
	}
	extra := map[string]any{
		"receiverAuthorizer": h.pay.ReceiverAuthorizer.Hex(),
		"withdrawDelay":      batchWithdrawDelay,
		"name":               paycheck.TokenName,
		"version":            paycheck.TokenVersion,
		"minDeposit":         batchMinDeposit.String(),
	}
	if bs != nil && bs.st.Wallet != "" {
		extra["channelState"] = map[string]any{
			"channelId": bs.id, "balance": bs.st.Balance.String(), "totalClaimed": bs.st.Claimed.String(),
			"withdrawRequestedAt": 0, "refundNonce": "0", "chargedCumulativeAmount": bs.st.Charged.String(),
		}
		if bs.st.Signature != "" {
			extra["voucherState"] = map[string]any{"signedMaxClaimable": bs.st.Signed.String(), "signature": bs.st.Signature}
		}
	}
	return acceptBatch{Scheme: batchsettle.Scheme, Network: paycheck.NetworkV2, Amount: batchPrice(calls).String(),
		Asset: h.pay.Asset, PayTo: h.pay.PayTo, MaxTimeoutSeconds: x402MaxTimeout, Extra: extra}, true
}

// payWithBatch serves a request paid with an x402 batch-settlement payment.
// A voucher is checked offline (paycheck: channel config, id, EIP-712
// signature) and drawn in one metering script (cumulative amount exactly
// the charged total plus this request's price, within the deposit the
// gateway knows): no chain call, one Redis round trip. A deposit — the
// channel's first request or a top-up — goes through the facilitator,
// which submits it on chain; once it is recorded the same script draws the
// deposit's voucher.
func (h *Handler) payWithBatch(ctx context.Context, c *Caller, hdr http.Header, req meter.Request) (meter.Decision, error) {
	name, value := c.PaymentName, c.Payment
	if name == "" || !paycheck.IsBatchPayment(value) {
		return meter.Decision{}, errNotMine
	}
	offer, ok := h.batchOffer()
	if !ok {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(paycheck.Refuse(x402.ReasonScheme, "this gateway does not offer batch-settlement; pay with exact"), nil)
	}
	p, ref := paycheck.DecodeBatchPayment(offer, name, value, h.meter.Now())
	if ref != nil {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(ref, nil)
	}
	if p.Type == "refund" {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(paycheck.Refuse(paycheck.ReasonBatchPayloadType, "a refund pays for no call: send it as a GET on this path (the scheme's refund request); nothing was charged"), nil)
	}
	id := strings.ToLower(p.ChannelID.Hex())
	price := batchPrice(req.Calls)
	var depositTx string
	if p.Type == "deposit" {
		var ref *Refusal
		if depositTx, ref = h.batchDeposit(ctx, p, id, req.Calls); ref != nil {
			return meter.Decision{}, ref
		}
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MeterTimeout)
	d, st, err := h.meter.AuthorizeVoucher(vctx, req, meter.Voucher{ChannelID: id, Wallet: p.Wallet(),
		Cumulative: money.Units(p.MaxClaimable), Signature: hexutil.Encode(p.Signature)})
	cancel()
	if err != nil {
		// The script may have run before its reply was lost (Redis stalled
		// or died mid-reply): the request is answered 503, so once Redis
		// answers again the draw, if it was booked, is voided — the
		// channel's charged total goes back down and no claim includes it.
		if meter.MaybeBooked(err) {
			h.voidVoucherLater(d, id)
		}
		return d, meterDown(err)
	}
	switch d.Outcome {
	case meter.Bundle:
	case meter.PaymentRequired:
		metrics.X402Payments.WithLabelValues("voucher_refused").Inc()
		return d, &Refusal{kind: refusedPayment, payment: batchRefusal(d.Reason, p, st, price), batch: &batchState{id: id, st: st}}
	default:
		return d, decided(d)
	}
	metrics.X402Payments.WithLabelValues("voucher").Inc()
	// A voucher moved no money: transaction and amount are empty; a deposit
	// names its transaction and amount (the scheme's payment response).
	amount := ""
	if p.Deposit != nil {
		amount = p.Deposit.Amount.String()
	}
	resp := map[string]any{
		"success": true, "transaction": depositTx, "network": paycheck.NetworkV2, "payer": p.Config.Payer.Hex(), "amount": amount,
		"extra": map[string]any{
			"chargedAmount": price.String(),
			"channelState": map[string]any{"channelId": id, "balance": st.Balance.String(), "totalClaimed": st.Claimed.String(),
				"withdrawRequestedAt": 0, "refundNonce": "0", "chargedCumulativeAmount": st.Charged.String()},
		},
	}
	b, _ := json.Marshal(resp)
	hdr.Set(headerResponseV2, base64.StdEncoding.EncodeToString(b))
	return d, nil
}

// batchRefusal says why a voucher was not drawn, in the scheme's codes.
func batchRefusal(reason string, p *paycheck.BatchPayment, st meter.ChannelState, price money.Units) *paycheck.Refusal {
	switch reason {
	case meter.ReasonCumulativeMismatch:
		return paycheck.Refuse(reason, "the voucher's maxClaimableAmount is %d; this request needs exactly %d (charged so far %d + price %d): a voucher is used once, sign the next one",
			p.MaxClaimable, st.Charged+price, st.Charged, price)
	case meter.ReasonOverDeposit:
		return paycheck.Refuse(reason, "the voucher's maxClaimableAmount %d is over the channel's deposit of %d units: deposit more (a deposit payload)", p.MaxClaimable, st.Balance)
	case meter.ReasonChannelRefunded:
		return paycheck.Refuse(reason, "channel %s was closed by a cooperative refund: no voucher is drawn from it; a deposit payload opens it again", strings.ToLower(p.ChannelID.Hex()))
	case meter.ReasonChannelUnknown:
		return paycheck.Refuse(reason, "this gateway knows no deposit in channel %s: the first payment of a channel is a deposit payload", strings.ToLower(p.ChannelID.Hex()))
	}
	return paycheck.Refuse(reason, "the voucher was not accepted")
}

// batchDeposit has the facilitator make the payment's deposit on chain
// (BatchSettlement.deposit through the ERC-3009 collector) and records the
// channel state it reads after it. A refusal is a 402 (the payment's fault)
// or a 503 (the facilitator's).
func (h *Handler) batchDeposit(rctx context.Context, p *paycheck.BatchPayment, id string, calls int) (string, *Refusal) {
	url := h.pay.facilitatorURL()
	if url == "" {
		metrics.X402Payments.WithLabelValues("facilitator_unavailable").Inc()
		return "", unavailable(0, "x402 payments are not configured on this gateway (x402_facilitator_url or settlementd_url); nothing was charged")
	}
	acc, _ := h.batchAccept(calls, nil)
	body, err := json.Marshal(map[string]any{"x402Version": 2, "paymentPayload": p.Raw, "paymentRequirements": acc})
	if err != nil {
		return "", unavailable(1, "internal error building the deposit request")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), facilitatorSettle)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/settle", bytes.NewReader(body))
	if err != nil {
		return "", h.facilitatorDown("deposit", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	h.pay.authenticate(hreq)
	resp, err := facilitatorClient.Do(hreq)
	if err != nil {
		return "", h.facilitatorDown("deposit", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var sr struct {
		Success      bool   `json:"success"`
		ErrorReason  string `json:"errorReason"`
		ErrorMessage string `json:"errorMessage"`
		Transaction  string `json:"transaction"`
		Extra        struct {
			ChannelState struct {
				ChannelID    string `json:"channelId"`
				Balance      string `json:"balance"`
				TotalClaimed string `json:"totalClaimed"`
			} `json:"channelState"`
		} `json:"extra"`
	}
	if resp.StatusCode >= 500 || json.Unmarshal(b, &sr) != nil {
		return "", h.facilitatorDown("deposit", fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	if !sr.Success {
		metrics.X402Payments.WithLabelValues("settle_failed").Inc()
		return "", paymentRefused(paycheck.Refuse(orDefault(sr.ErrorReason, x402.ReasonUnexpectedSett), "%s", orDefault(sr.ErrorMessage, "the deposit failed")), nil)
	}
	cs := sr.Extra.ChannelState
	bal, err1 := strconv.ParseInt(cs.Balance, 10, 64)
	claimed, err2 := strconv.ParseInt(cs.TotalClaimed, 10, 64)
	if err1 != nil || err2 != nil || !strings.EqualFold(cs.ChannelID, id) || sr.Transaction == "" {
		h.logger.Error("x402 deposit settled but the facilitator's channel state is unreadable", zap.String("tx", sr.Transaction), zap.String("channel", id))
		return "", unavailable(1, "the deposit settled in transaction "+sr.Transaction+" but its channel state could not be read; retry with the next voucher")
	}
	cfg, _ := json.Marshal(p.Config)
	for attempt := 1; ; attempt++ {
		gctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), MeterTimeout)
		_, err = h.meter.RecordDeposit(gctx, meter.ChannelDeposit{ChannelID: id, Wallet: p.Wallet(), Config: string(cfg),
			TxHash: strings.ToLower(sr.Transaction), Balance: money.Units(bal), Claimed: money.Units(claimed)})
		cancel()
		if err == nil || attempt == grantAttempts {
			break
		}
	}
	if err != nil {
		h.logger.Error("x402 deposit settled but could not be recorded; a voucher on the channel will be refused until it is",
			zap.String("tx", sr.Transaction), zap.String("channel", id), zap.Error(err))
		return "", meterDown(err)
	}
	metrics.X402Payments.WithLabelValues("deposit").Inc()
	return strings.ToLower(sr.Transaction), nil
}

// voidVoucherLater voids a voucher draw whose outcome the gateway never
// learned (meter.MaybeBooked), as voidLater does for credits: once Redis
// answers, meter.VoidVoucherIfBooked (idempotent) lowers the channel's
// charged total by the draw, if it was booked. It retries for up to
// voidPatience.
func (h *Handler) voidVoucherLater(d meter.Decision, channelID string) {
	select {
	case voidSlots <- struct{}{}:
	default:
		h.logger.Error("too many unsettled metering calls: this voucher draw may stay charged", zap.String("request_id", d.ID),
			zap.String("channel", channelID))
		return
	}
	m, log := h.meter, h.logger
	go func() {
		defer func() { <-voidSlots }()
		time.Sleep(voidFirstLook) // a reply that timed out may belong to a script still queued
		wait := 100 * time.Millisecond
		for deadline := time.Now().Add(voidPatience); ; {
			ctx, cancel := context.WithTimeout(context.Background(), MeterTimeout)
			found, err := m.VoidVoucherIfBooked(ctx, &d, channelID)
			cancel()
			if err == nil {
				if found {
					metrics.MeterRefunds.WithLabelValues("unsettled", "ok").Inc()
					log.Warn("a voucher draw answered 503 had been booked as Redis failed; the channel's charge was given back",
						zap.String("request_id", d.ID), zap.String("channel", channelID))
				}
				return
			}
			if time.Now().After(deadline) {
				metrics.MeterRefunds.WithLabelValues("unsettled", "error").Inc()
				log.Error("could not check whether a voucher draw answered 503 was booked: it may stay charged",
					zap.String("request_id", d.ID), zap.String("channel", channelID), zap.Error(err))
				return
			}
			time.Sleep(wait)
			wait = min(2*wait, 5*time.Second)
		}
	}()
}
