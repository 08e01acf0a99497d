package facilitator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// Reasons of the batch-settlement scheme's settle answers (coinbase/x402
// specs/schemes/batch-settlement, "Error Codes").
const (
	ReasonBatchPayloadType  = "invalid_batch_settlement_evm_payload_type"
	ReasonBatchDeposit      = "invalid_batch_settlement_evm_deposit_payload"
	ReasonBatchChannelID    = "invalid_batch_settlement_evm_channel_id_mismatch"
	ReasonBatchConfig       = "invalid_batch_settlement_evm_receiver_mismatch"
	ReasonBatchSimulation   = "invalid_batch_settlement_evm_deposit_simulation_failed"
	ReasonBatchTxFailed     = "invalid_batch_settlement_evm_deposit_transaction_failed"
	ReasonBatchRPCReadFaild = "invalid_batch_settlement_evm_rpc_read_failed"
)

// batchBody is a settle request of the batch-settlement scheme as the
// gateway (or any x402 server) sends it: {x402Version, paymentPayload,
// paymentRequirements}, the payload a deposit.
type batchBody struct {
	PaymentPayload struct {
		Accepted *struct {
			Scheme string `json:"scheme"`
		} `json:"accepted"`
		// The gateway reads the same payload through the same type.
		Payload batchsettle.Payload `json:"payload"`
	} `json:"paymentPayload"`
	PaymentRequirements struct {
		Scheme  string `json:"scheme"`
		Network string `json:"network"`
		Asset   string `json:"asset"`
		PayTo   string `json:"payTo"`
		Extra   struct {
			ReceiverAuthorizer string `json:"receiverAuthorizer"`
			WithdrawDelay      uint64 `json:"withdrawDelay"`
		} `json:"extra"`
	} `json:"paymentRequirements"`
}

// isBatch tells a batch-settlement request from an exact one.
func isBatch(body []byte) bool {
	var b struct {
		PaymentRequirements struct {
			Scheme string `json:"scheme"`
		} `json:"paymentRequirements"`
	}
	return json.Unmarshal(body, &b) == nil && b.PaymentRequirements.Scheme == batchsettle.Scheme
}

// batchDeposit is a deposit checked against its requirement, ready to send.
type batchDeposit struct {
	cfg    batchsettle.Config
	id     common.Hash
	amount *big.Int
	nonce  common.Hash // the ERC-3009 nonce, keccak256(channelId, salt)
	data   []byte      // BatchSettlement.deposit calldata
}

// parseChannel checks a payload's channel config against the operator's
// offer (not the request's requirement: a stranger writes that) and that it
// hashes to the voucher's channel id.
func (f *Facilitator) parseChannel(b *batchBody) (batchsettle.Config, common.Hash, error) {
	pl := b.PaymentPayload.Payload
	if pl.ChannelConfig == nil || pl.Voucher == nil {
		return batchsettle.Config{}, common.Hash{}, x402.Bad(ReasonBatchDeposit, "the payload needs channelConfig and voucher")
	}
	// The gateway read the same payload with the same reader.
	cfg, ok := pl.ChannelConfig.Config()
	if !ok {
		return cfg, common.Hash{}, x402.Bad(ReasonBatchDeposit, "channelConfig needs five addresses and a 32-byte salt")
	}
	if err := f.cfg.Offer.CheckChannel(b.PaymentRequirements.Network, cfg.Token, cfg.Receiver, cfg.ReceiverAuthorizer, cfg.WithdrawDelay); err != nil {
		var inv *x402.Invalid
		if errors.As(err, &inv) && inv.Reason != x402.ReasonNetwork {
			return cfg, common.Hash{}, x402.Bad(ReasonBatchConfig, "%s", inv.Msg)
		}
		return cfg, common.Hash{}, err
	}
	id := batchsettle.DefaultDomain(f.cfg.ChainID).ChannelID(cfg)
	if !strings.EqualFold(pl.Voucher.ChannelID, id.Hex()) {
		return cfg, common.Hash{}, x402.Bad(ReasonBatchChannelID, "voucher.channelId %q; the config hashes to %s", pl.Voucher.ChannelID, id.Hex())
	}
	return cfg, id, nil
}

// parseDeposit checks a deposit request offline: the channel config matches
// the requirement and hashes to the voucher's channel id, and the ERC-3009
// authorization is well-formed. Its signatures are the chain's to check:
// the deposit is simulated before it is sent.
func (f *Facilitator) parseDeposit(b *batchBody) (*batchDeposit, error) {
	pl := b.PaymentPayload.Payload
	if pl.Type != "deposit" {
		return nil, x402.Bad(ReasonBatchPayloadType, "this facilitator settles batch-settlement deposits and refunds; claims are settlementd's own job (got %q)", pl.Type)
	}
	cfg, id, err := f.parseChannel(b)
	if err != nil {
		return nil, err
	}
	dep := pl.Deposit
	if dep == nil || dep.Authorization.ERC3009 == nil {
		return nil, x402.Bad(ReasonBatchDeposit, "a deposit needs deposit.amount and an erc3009Authorization")
	}
	a := dep.Authorization.ERC3009
	amount, ok1 := x402.ParseUint256(dep.Amount)
	after, ok2 := x402.ParseUint256(a.ValidAfter)
	before, ok3 := x402.ParseUint256(a.ValidBefore)
	saltAuth, err1 := hexutil.Decode(a.Salt)
	sig, err2 := hexutil.Decode(a.Signature)
	if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || len(saltAuth) != 32 || amount.Sign() <= 0 || amount.BitLen() > 128 {
		return nil, x402.Bad(ReasonBatchDeposit, "deposit amount, validAfter, validBefore, salt and signature must be well-formed")
	}
	if amount.Cmp(big.NewInt(int64(x402.BatchMinDeposit))) < 0 {
		return nil, x402.Bad(ReasonBatchDeposit, "deposit of %s units; the offer's minimum deposit is %d", amount, x402.BatchMinDeposit)
	}
	if before.Cmp(big.NewInt(f.cfg.Now().Unix()+6)) < 0 {
		return nil, x402.Bad(ReasonValidBefore, "the deposit authorization expires at %s", before)
	}
	s := new(big.Int).SetBytes(saltAuth)
	data, err := batchsettle.CollectorData(after, before, s, sig)
	if err != nil {
		return nil, x402.Bad(ReasonBatchDeposit, "%v", err)
	}
	bs := batchsettlement.NewBatchSettlement()
	call := bs.PackDeposit(onchainConfig(cfg), amount, batchsettle.ERC3009CollectorAddress, data)
	return &batchDeposit{cfg: cfg, id: id, amount: amount, nonce: batchsettle.DepositNonce(id, s), data: call}, nil
}

func onchainConfig(c batchsettle.Config) batchsettlement.BatchSettlementChannelConfig {
	return batchsettlement.BatchSettlementChannelConfig{Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver,
		ReceiverAuthorizer: c.ReceiverAuthorizer, Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt}
}

// batchSettle settles a batch-settlement deposit: the deposit is simulated
// and sent from the relayer (through chain.Sender when tracked: recorded in
// PostgreSQL under its authorization before it is sent, so a retry finds
// the same transaction), its receipt awaited, and the channel's on-chain
// state read after it is the answer's channelState.
func (f *Facilitator) batchSettle(w http.ResponseWriter, r *http.Request, body []byte) {
	var b batchBody
	if err := json.Unmarshal(body, &b); err != nil {
		httpx.Error(w, http.StatusBadRequest, "invalid_json", "the body is not a batch-settlement facilitator request: "+err.Error())
		return
	}
	if b.PaymentPayload.Payload.Type == "refund" {
		f.batchRefund(w, r, &b)
		return
	}
	resp := map[string]any{"success": false, "transaction": "", "network": b.PaymentRequirements.Network}
	d, err := f.parseDeposit(&b)
	var inv *x402.Invalid
	if errors.As(err, &inv) {
		resp["errorReason"], resp["errorMessage"] = inv.Reason, inv.Msg
		httpx.JSON(w, http.StatusOK, resp)
		return
	}
	resp["payer"] = d.cfg.Payer.Hex()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(f.cfg.ReceiptTimeout + time.Minute))
	// Per payer, as exact settles (payerLock): deposits of one balance in
	// flight at once would all pass the gas estimate and all but one revert.
	unlock := f.lock(payerLock(d.cfg.Payer))
	defer unlock()
	hash, rcpt, err := f.sendDeposit(r.Context(), d)
	if hash != (common.Hash{}) {
		resp["transaction"] = hash.Hex()
	}
	switch {
	case errors.As(err, &inv):
		resp["errorReason"], resp["errorMessage"] = inv.Reason, inv.Msg
		httpx.JSON(w, http.StatusOK, resp)
		return
	case err != nil:
		f.cfg.Log.Warn("x402 batch deposit failed", zap.String("tx", hash.Hex()), zap.Error(f.scrub(err)))
		httpx.Error(w, http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable or the deposit has no receipt yet; retry with the same payment")
		return
	case rcpt.Status != types.ReceiptStatusSuccessful:
		resp["errorReason"], resp["errorMessage"] = ReasonBatchTxFailed, "deposit reverted in block "+rcpt.BlockNumber.String()
		httpx.JSON(w, http.StatusOK, resp)
		return
	}
	bs := batchsettlement.NewBatchSettlement()
	ch, err := bind.Call(bs.Instance(f.cfg.Backend, batchsettle.SettlementAddress), &bind.CallOpts{Context: r.Context(), BlockNumber: rcpt.BlockNumber},
		bs.PackChannels(d.id), bs.UnpackChannels)
	if err != nil {
		resp["errorReason"], resp["errorMessage"] = ReasonBatchRPCReadFaild, "the deposit landed but the channel could not be read"
		httpx.JSON(w, http.StatusServiceUnavailable, resp)
		return
	}
	resp["success"], resp["amount"], resp["asset"] = true, d.amount.String(), d.cfg.Token.Hex()
	resp["extra"] = map[string]any{"channelState": map[string]any{"channelId": strings.ToLower(d.id.Hex()),
		"balance": ch.Balance.String(), "totalClaimed": ch.TotalClaimed.String(), "withdrawRequestedAt": 0, "refundNonce": "0"}}
	f.cfg.Log.Info("x402 batch-settlement deposit", zap.String("tx", hash.Hex()), zap.String("channel", d.id.Hex()),
		zap.String("payer", d.cfg.Payer.Hex()), zap.String("amount", d.amount.String()))
	httpx.JSON(w, http.StatusOK, resp)
}

// sendDeposit sends the deposit and waits for its receipt.
func (f *Facilitator) sendDeposit(ctx context.Context, d *batchDeposit) (common.Hash, *types.Receipt, error) {
	bs := batchsettlement.NewBatchSettlement()
	if err := f.checkGas(ctx, batchsettle.SettlementAddress, d.data); err != nil {
		return common.Hash{}, nil, err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.ReceiptTimeout)
	defer cancel()
	if f.sender == nil {
		f.sendMu.Lock()
		opts := bind.NewKeyedTransactor(f.cfg.Relayer, new(big.Int).SetUint64(f.cfg.ChainID))
		opts.Context = ctx
		tx, err := bind.Transact(bs.Instance(f.cfg.Backend, batchsettle.SettlementAddress), opts, d.data)
		f.sendMu.Unlock()
		if err != nil {
			if reason, ok := revertReason(err, bs.UnpackError); ok {
				return common.Hash{}, nil, x402.Bad(ReasonBatchSimulation, "deposit reverts: %s", reason)
			}
			return common.Hash{}, nil, x402.Bad(ReasonBatchSimulation, "deposit reverts: %v", f.scrub(err))
		}
		rcpt, err := deploy.WaitReceipt(rctx, f.cfg.Backend, tx.Hash(), 100*time.Millisecond)
		return tx.Hash(), rcpt, err
	}
	var amount money.Units
	if d.amount.IsInt64() {
		amount = money.Units(d.amount.Int64())
	}
	t, err := f.sender.Submit(ctx, f.signer, chain.Intent{
		Purpose: fmt.Sprintf("x402-batch-deposit:%s:%s", strings.ToLower(d.cfg.Payer.Hex()), d.nonce.Hex()),
		Kind:    chain.KindBatchDeposit, To: batchsettle.SettlementAddress, Data: d.data, Recipient: batchsettle.SettlementAddress,
		Amount: amount, Unpack: bs.UnpackError,
	})
	if t == nil {
		if reason, ok := revertReason(err, bs.UnpackError); ok {
			return common.Hash{}, nil, x402.Bad(ReasonBatchSimulation, "deposit reverts: %s", reason)
		}
		return common.Hash{}, nil, fmt.Errorf("%w: send deposit: %v", errRPC, err)
	}
	if err != nil && errors.Is(err, chain.ErrConflict) {
		return t.Hash, nil, fmt.Errorf("%w: %v", errRPC, err)
	}
	done, err := f.sender.Await(rctx, []*chain.Tx{t}, f.cfg.ReceiptTimeout)
	if err != nil {
		return t.Hash, nil, err
	}
	if !done || t.State == chain.StateConflict {
		return t.Hash, nil, fmt.Errorf("transaction %s %s", t.Hash.Hex(), t.State)
	}
	rcpt, err := f.cfg.Backend.TransactionReceipt(rctx, t.Hash)
	return t.Hash, rcpt, err
}
