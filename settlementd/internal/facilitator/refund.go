package facilitator

import (
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// Reasons of a refused cooperative refund (the scheme's codes).
const (
	ReasonBatchRefundPayload   = "invalid_batch_settlement_evm_refund_payload"
	ReasonBatchRefundNoBalance = "invalid_batch_settlement_evm_refund_no_balance"
	ReasonBatchRefundAmount    = "invalid_batch_settlement_evm_refund_amount_invalid"
	ReasonBatchMissingChannel  = "invalid_batch_settlement_evm_missing_channel"
	ReasonBatchRefundTxFailed  = "invalid_batch_settlement_evm_refund_transaction_failed"
)

// batchRefund makes a cooperative refund (coinbase/x402 batch-settlement,
// "Refund"): the gateway has closed the channel, so the latest voucher it
// drew is final. One transaction, multicall(claimWithSignature(that
// voucher) when the chain has not claimed it yet, refundWithSignature(the
// unclaimed rest, or the amount asked for, at the channel's refund nonce),
// settle(receiver, token)): the receiver gets exactly what the vouchers
// charged and the payer the rest of the deposit. Claim and refund are
// signed by the receiver authorizer key. Tracked, the transaction is
// recorded under the channel and its refund nonce before it is sent, so a
// retried request finds it instead of refunding twice (the contract's
// nonce would refuse a second one anyway).
func (f *Facilitator) batchRefund(w http.ResponseWriter, r *http.Request, b *batchBody) {
	resp := map[string]any{"success": false, "transaction": "", "network": b.PaymentRequirements.Network}
	fail := func(status int, reason, msg string) {
		resp["errorReason"], resp["errorMessage"] = reason, msg
		httpx.JSON(w, status, resp)
	}
	// Only the gateway refunds, and only a channel it has closed: the
	// refund signature is the receiver authorizer's, so whoever could ask
	// for one could return any payer's escrow while the gateway still draws
	// vouchers on it.
	if !f.fromGateway(r) {
		fail(http.StatusUnauthorized, ReasonUnauthorized, "refunds are made for the operator's gateway only: ask the gateway (a GET on its JSON-RPC path with the refund payload)")
		return
	}
	j := f.claims
	if j == nil {
		fail(http.StatusOK, ReasonBatchRefundPayload, "this facilitator has no receiver authorizer key (TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY): it cannot sign refunds")
		return
	}
	cfg, id, err := f.parseChannel(b)
	var inv *x402.Invalid
	if errors.As(err, &inv) {
		fail(http.StatusOK, inv.Reason, inv.Msg)
		return
	}
	resp["payer"] = cfg.Payer.Hex()
	if cfg.ReceiverAuthorizer != j.authz {
		fail(http.StatusOK, ReasonBatchConfig, "the channel's receiverAuthorizer is not this facilitator's key "+j.authz.Hex())
		return
	}
	var asked *big.Int
	if p := b.PaymentPayload.Payload.Amount; p != nil && *p != "" { // absent or empty: all that is left
		a := *p
		v, ok := x402.ParseUint256(a)
		if !ok || v.Sign() <= 0 || v.BitLen() > 128 {
			fail(http.StatusOK, ReasonBatchRefundAmount, "refund amount "+a+" is not a positive amount")
			return
		}
		asked = v
	}
	ctx := r.Context()
	key := strings.ToLower(id.Hex())
	st, ok, err := j.m.Channel(ctx, key)
	if err != nil {
		fail(http.StatusServiceUnavailable, ReasonBatchRPCReadFaild, "the channel state is unavailable; retry")
		return
	}
	if !ok {
		fail(http.StatusOK, ReasonBatchMissingChannel, "no deposit of channel "+key+" is known")
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(f.cfg.ReceiptTimeout + time.Minute))
	unlock := f.lock("batch-refund/" + key)
	defer unlock()
	closed, err := j.m.ChannelClosed(ctx, key)
	if err != nil {
		fail(http.StatusServiceUnavailable, ReasonBatchRPCReadFaild, "the channel state is unavailable; retry")
		return
	}
	if !closed {
		fail(http.StatusOK, ReasonChannelOpen, "channel "+key+" is not closed by the gateway: a refund follows the gateway's close")
		return
	}
	bs := batchsettlement.NewBatchSettlement()
	inst := bs.Instance(f.cfg.Backend, batchsettle.SettlementAddress)
	ch, err1 := bind.Call(inst, &bind.CallOpts{Context: ctx}, bs.PackChannels(id), bs.UnpackChannels)
	nonce, err2 := bind.Call(inst, &bind.CallOpts{Context: ctx}, bs.PackRefundNonce(id), bs.UnpackRefundNonce)
	if err1 != nil || err2 != nil {
		fail(http.StatusServiceUnavailable, ReasonBatchRPCReadFaild, "the channel could not be read on chain; retry")
		return
	}
	// What the receiver is owed: what the vouchers charged (the gateway
	// closed the channel, so it is final; a voided draw is not in it), or
	// more if the chain has it. The latest voucher's signature covers it:
	// its maxClaimableAmount is never below the charged total.
	claimTo := new(big.Int).Set(ch.TotalClaimed)
	signed, charged := big.NewInt(int64(st.Signed)), big.NewInt(int64(st.Charged))
	claim := st.Charged > 0 && st.Signature != "" && st.Signed >= st.Charged && charged.Cmp(ch.TotalClaimed) > 0
	if claim {
		claimTo = charged
	}
	unclaimed := new(big.Int).Sub(ch.Balance, claimTo)
	amount := unclaimed
	if asked != nil && asked.Cmp(unclaimed) < 0 {
		amount = asked
	}
	if amount.Sign() <= 0 {
		fail(http.StatusOK, ReasonBatchRefundNoBalance, "nothing to refund: the channel's balance "+ch.Balance.String()+" is all claimed")
		return
	}
	dom := batchsettle.DefaultDomain(f.cfg.ChainID)
	var calls [][]byte
	if claim {
		digest := dom.ClaimBatchDigest([]batchsettle.ClaimEntry{{ChannelID: id, MaxClaimable: signed, TotalClaimed: charged}})
		sig, err := batchsettle.Sign(digest, j.key)
		if err != nil {
			fail(http.StatusServiceUnavailable, ReasonBatchRefundPayload, "signing the claim failed")
			return
		}
		calls = append(calls, bs.PackClaimWithSignature([]batchsettlement.BatchSettlementVoucherClaim{{
			Voucher:   batchsettlement.BatchSettlementVoucher{Channel: onchainConfig(cfg), MaxClaimableAmount: signed},
			Signature: common.FromHex(st.Signature), TotalClaimed: charged}}, sig))
	}
	rsig, err := batchsettle.Sign(dom.RefundDigest(id, nonce, amount), j.key)
	if err != nil {
		fail(http.StatusServiceUnavailable, ReasonBatchRefundPayload, "signing the refund failed")
		return
	}
	calls = append(calls, bs.PackRefundWithSignature(onchainConfig(cfg), amount, nonce, rsig), bs.PackSettle(cfg.Receiver, cfg.Token))
	if err := f.checkGas(ctx, batchsettle.SettlementAddress, bs.PackMulticall(calls)); err != nil {
		errors.As(err, &inv)
		fail(http.StatusOK, inv.Reason, inv.Msg)
		return
	}
	rcpt, hash, err := j.send(ctx, "x402-batch-refund:"+key+":"+nonce.String(), chain.KindBatchRefund, bs.PackMulticall(calls),
		cfg.Payer, money.Units(amount.Int64()))
	if hash != (common.Hash{}) {
		resp["transaction"] = hash.Hex()
	}
	if err != nil {
		if reason, ok := revertReason(err, bs.UnpackError); ok {
			fail(http.StatusOK, ReasonBatchRefundTxFailed, "refund reverts: "+reason)
			return
		}
		f.cfg.Log.Warn("x402 batch refund failed", zap.String("tx", hash.Hex()), zap.Error(f.scrub(err)))
		fail(http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable or the refund has no receipt yet; retry with the same refund")
		return
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		fail(http.StatusOK, ReasonBatchRefundTxFailed, "refund reverted in block "+rcpt.BlockNumber.String())
		return
	}
	post, err1 := bind.Call(inst, &bind.CallOpts{Context: ctx, BlockNumber: rcpt.BlockNumber}, bs.PackChannels(id), bs.UnpackChannels)
	pnonce, err2 := bind.Call(inst, &bind.CallOpts{Context: ctx, BlockNumber: rcpt.BlockNumber}, bs.PackRefundNonce(id), bs.UnpackRefundNonce)
	if err1 != nil || err2 != nil {
		fail(http.StatusServiceUnavailable, ReasonBatchRPCReadFaild, "the refund landed in "+hash.Hex()+" but the channel could not be read")
		return
	}
	_ = j.m.MarkClaimed(ctx, key, money.Units(post.TotalClaimed.Int64()))
	refunded := new(big.Int).Sub(ch.Balance, post.Balance)
	resp["success"], resp["amount"], resp["asset"] = true, refunded.String(), cfg.Token.Hex()
	resp["extra"] = map[string]any{"channelState": map[string]any{"channelId": key, "balance": post.Balance.String(),
		"totalClaimed": post.TotalClaimed.String(), "withdrawRequestedAt": 0, "refundNonce": pnonce.String(),
		"chargedCumulativeAmount": claimTo.String()}}
	f.cfg.Log.Info("x402 batch-settlement cooperative refund", zap.String("tx", hash.Hex()), zap.String("channel", key),
		zap.String("payer", cfg.Payer.Hex()), zap.String("refunded", refunded.String()), zap.String("claimed", post.TotalClaimed.String()))
	httpx.JSON(w, http.StatusOK, resp)
}
