package paycheck

import (
	"encoding/json"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// Reasons of the x402 batch-settlement scheme (coinbase/x402
// specs/schemes/batch-settlement, "Error Codes"), so the official client's
// corrective handling recognises them.
const (
	ReasonBatchPayloadType       = "invalid_batch_settlement_evm_payload_type"
	ReasonBatchVoucherPayload    = "invalid_batch_settlement_evm_voucher_payload"
	ReasonBatchDepositPayload    = "invalid_batch_settlement_evm_deposit_payload"
	ReasonBatchChannelIDMismatch = "invalid_batch_settlement_evm_channel_id_mismatch"
	ReasonBatchReceiverMismatch  = "invalid_batch_settlement_evm_receiver_mismatch"
	ReasonBatchAuthorizer        = "invalid_batch_settlement_evm_receiver_authorizer_mismatch"
	ReasonBatchTokenMismatch     = "invalid_batch_settlement_evm_token_mismatch"
	ReasonBatchWithdrawDelay     = "invalid_batch_settlement_evm_withdraw_delay_mismatch"
	ReasonBatchVoucherSignature  = "invalid_batch_settlement_evm_voucher_signature"
	ReasonBatchReceiveAuth       = "invalid_batch_settlement_evm_receive_authorization_signature"
	ReasonBatchValidBefore       = "invalid_batch_settlement_evm_payload_authorization_valid_before"
	ReasonBatchValidAfter        = "invalid_batch_settlement_evm_payload_authorization_valid_after"
	ReasonBatchRefundAmount      = "invalid_batch_settlement_evm_refund_amount_invalid"
	ReasonBatchRefundNoBalance   = "invalid_batch_settlement_evm_refund_no_balance"
)

// maxVoucherAmount bounds every amount a voucher or deposit may name: the
// metering script does its arithmetic in Lua numbers, exact below 2^53
// (9e15 USDC units, nine billion USDC).
const maxVoucherAmount = 1 << 53

// BatchOffer is the gateway's batch-settlement requirement: the channel
// parameters a client's ChannelConfig must carry.
type BatchOffer struct {
	Asset, PayTo, ReceiverAuthorizer common.Address
	WithdrawDelay                    uint64
}

// BatchDeposit is the ERC-3009 deposit a deposit payload carries.
type BatchDeposit struct {
	Amount                  *big.Int
	ValidAfter, ValidBefore *big.Int
	Salt                    *big.Int
	Signature               []byte      // ReceiveWithAuthorization by the payer, to the deposit collector
	CollectorData           []byte      // what deposit() passes to the collector
	Nonce                   common.Hash // the ERC-3009 nonce, keccak256(channelId, salt)
}

// BatchPayment is a batch-settlement payment header that passed the
// offline checks: the channel's config matches the offer and hashes to the
// channel id it names, and the voucher is signed by the channel's payer
// authorizer.
type BatchPayment struct {
	Raw          json.RawMessage // the PaymentPayload as sent, for the facilitator
	Type         string          // "deposit" or "voucher"
	Config       batchsettle.Config
	ChannelID    common.Hash
	MaxClaimable int64 // the voucher's cumulative ceiling, in USDC units
	Signature    []byte
	Deposit      *BatchDeposit // deposit payloads only
	RefundAmount int64         // refund payloads: the amount asked for; 0 is all that is left
}

// Wallet is the payer in the form bundles and events key wallets by.
func (p *BatchPayment) Wallet() string { return strings.ToLower(p.Config.Payer.Hex()) }

type batchWire struct {
	X402Version int `json:"x402Version"`
	Accepted    *struct {
		Scheme  string `json:"scheme"`
		Network string `json:"network"`
	} `json:"accepted"`
	Payload batchsettle.Payload `json:"payload"`
}

// IsBatchPayment tells whether a payment header is for the batch-settlement
// scheme (its accepted requirement names it); the exact payer takes the rest.
func IsBatchPayment(value string) bool {
	b, err := DecodeBase64JSON(value, maxPaymentHeader)
	if err != nil {
		return false
	}
	var w batchWire
	return json.Unmarshal(b, &w) == nil && w.Accepted != nil && w.Accepted.Scheme == batchsettle.Scheme
}

// DecodeBatchPayment parses a batch-settlement payment header and checks it
// offline against the offer at now: no Redis, no chain. Whether the channel
// holds the deposit and the voucher's cumulative amount is the next one is
// the metering script's to decide.
func DecodeBatchPayment(o BatchOffer, name, value string, now time.Time) (*BatchPayment, *Refusal) {
	b, err := DecodeBase64JSON(value, maxPaymentHeader)
	if err != nil {
		return nil, Refuse(ReasonInvalidHeader, "%s: %v", name, err)
	}
	var w batchWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, Refuse(ReasonInvalidHeader, "%s does not hold an x402 batch-settlement PaymentPayload: %v", name, err)
	}
	if w.X402Version != 2 {
		return nil, Refuse(x402.ReasonVersion, "batch-settlement payments are x402 version 2 (PAYMENT-SIGNATURE); got %d", w.X402Version)
	}
	if w.Accepted == nil || w.Accepted.Scheme != batchsettle.Scheme {
		return nil, Refuse(x402.ReasonScheme, "the payment does not accept the %s scheme", batchsettle.Scheme)
	}
	if w.Accepted.Network != NetworkV2 {
		return nil, Refuse(x402.ReasonNetwork, "batch-settlement is offered on %s, the payment names %q", NetworkV2, w.Accepted.Network)
	}
	pl := w.Payload
	switch pl.Type {
	case "deposit", "voucher", "refund":
	default:
		return nil, Refuse(ReasonBatchPayloadType, "payload type %q; /rpc takes deposit, voucher and refund", pl.Type)
	}
	cc, v := pl.ChannelConfig, pl.Voucher
	if cc == nil || v == nil {
		return nil, Refuse(ReasonBatchVoucherPayload, "the payload needs channelConfig and voucher")
	}
	// The facilitator reads the same payload with the same reader.
	cfg, good := cc.Config()
	if !good {
		return nil, Refuse(ReasonBatchVoucherPayload, "channelConfig needs 0x addresses for payer, payerAuthorizer, receiver, receiverAuthorizer, token and a 32-byte salt")
	}
	switch {
	case cfg.Receiver != o.PayTo:
		return nil, Refuse(ReasonBatchReceiverMismatch, "the channel's receiver is %s; payments go to %s", cfg.Receiver.Hex(), o.PayTo.Hex())
	case cfg.ReceiverAuthorizer != o.ReceiverAuthorizer:
		return nil, Refuse(ReasonBatchAuthorizer, "the channel's receiverAuthorizer is %s; this gateway's is %s", cfg.ReceiverAuthorizer.Hex(), o.ReceiverAuthorizer.Hex())
	case cfg.Token != o.Asset:
		return nil, Refuse(ReasonBatchTokenMismatch, "the channel's token is %s; payments are in %s", cfg.Token.Hex(), o.Asset.Hex())
	case cfg.WithdrawDelay != o.WithdrawDelay:
		return nil, Refuse(ReasonBatchWithdrawDelay, "the channel's withdrawDelay is %d s; this gateway's is %d s", cfg.WithdrawDelay, o.WithdrawDelay)
	case cfg.PayerAuthorizer == (common.Address{}):
		// A zero payer authorizer means an ERC-1271 wallet signs, which takes
		// a chain call per voucher: not on the hot path.
		return nil, Refuse(ReasonBatchVoucherSignature, "the channel needs a payerAuthorizer key (vouchers are checked without a chain call; ERC-1271 payers are not supported)")
	}
	dom := batchsettle.DefaultDomain(ChainID)
	id := dom.ChannelID(cfg)
	if got, good := batchsettle.ParseHash(v.ChannelID); !good || got != id {
		return nil, Refuse(ReasonBatchChannelIDMismatch, "voucher.channelId %q; the channelConfig hashes to %s", v.ChannelID, id.Hex())
	}
	// A refund's voucher is zero-charge: its amount is the charged total,
	// which is 0 on a channel no call has drawn from.
	minClaim := 1
	if pl.Type == "refund" {
		minClaim = 0
	}
	maxClaim, good := x402.ParseUint256(v.MaxClaimableAmount)
	if !good || maxClaim.Sign() < minClaim || maxClaim.Cmp(big.NewInt(maxVoucherAmount)) >= 0 {
		return nil, Refuse(ReasonBatchVoucherPayload, "voucher.maxClaimableAmount %q is not a positive amount below 2^53", v.MaxClaimableAmount)
	}
	sig, err := hexutil.Decode(v.Signature)
	if err != nil {
		return nil, Refuse(ReasonBatchVoucherSignature, "voucher.signature is not hex")
	}
	signer, err := batchsettle.Recover(dom.VoucherDigest(id, maxClaim), sig)
	if err != nil || signer != cfg.PayerAuthorizer {
		return nil, Refuse(ReasonBatchVoucherSignature, "the voucher is not signed by the channel's payerAuthorizer %s", cfg.PayerAuthorizer.Hex())
	}
	p := &BatchPayment{Raw: b, Type: pl.Type, Config: cfg, ChannelID: id, MaxClaimable: maxClaim.Int64(), Signature: sig}
	switch pl.Type {
	case "voucher":
		return p, nil
	case "refund":
		if pl.Amount != nil {
			a, good := x402.ParseUint256(*pl.Amount)
			if !good || a.Sign() <= 0 || a.Cmp(big.NewInt(maxVoucherAmount)) >= 0 {
				return nil, Refuse(ReasonBatchRefundAmount, "refund amount %q is not a positive amount below 2^53", *pl.Amount)
			}
			p.RefundAmount = a.Int64()
		}
		return p, nil
	}
	d, ref := checkDeposit(&w, cfg, id, now)
	if ref != nil {
		return nil, ref
	}
	p.Deposit = d
	return p, nil
}

// checkDeposit checks a deposit's ERC-3009 ReceiveWithAuthorization offline:
// signed by the payer, to the deposit collector, for the amount, with the
// nonce that binds it to this channel, valid long enough to be settled.
func checkDeposit(w *batchWire, cfg batchsettle.Config, id common.Hash, now time.Time) (*BatchDeposit, *Refusal) {
	dep := w.Payload.Deposit
	if dep == nil || dep.Authorization.ERC3009 == nil {
		return nil, Refuse(ReasonBatchDepositPayload, "a deposit needs deposit.amount and deposit.authorization.erc3009Authorization (this gateway takes the eip3009 method)")
	}
	a := dep.Authorization.ERC3009
	amount, ok1 := x402.ParseUint256(dep.Amount)
	after, ok2 := x402.ParseUint256(a.ValidAfter)
	before, ok3 := x402.ParseUint256(a.ValidBefore)
	saltHash, ok4 := batchsettle.ParseHash(a.Salt)
	sig, err := hexutil.Decode(a.Signature)
	if !ok1 || !ok2 || !ok3 || !ok4 || err != nil || amount.Sign() <= 0 || amount.Cmp(big.NewInt(maxVoucherAmount)) >= 0 {
		return nil, Refuse(ReasonBatchDepositPayload, "deposit.amount, validAfter, validBefore, salt and signature must be well-formed, the amount positive and below 2^53")
	}
	if before.Cmp(big.NewInt(now.Unix()+SettleMarginSecs)) < 0 {
		return nil, Refuse(ReasonBatchValidBefore, "the deposit authorization expires at %s, too soon to settle (now %d)", before, now.Unix())
	}
	if after.Cmp(big.NewInt(now.Unix())) > 0 {
		return nil, Refuse(ReasonBatchValidAfter, "the deposit authorization is valid only after %s (now %d)", after, now.Unix())
	}
	salt := new(big.Int).SetBytes(saltHash[:])
	nonce := batchsettle.DepositNonce(id, salt)
	digest := receiveDigest(cfg.Token, cfg.Payer, batchsettle.ERC3009CollectorAddress, amount, after, before, nonce)
	if signer, err := batchsettle.Recover(digest, sig); err != nil || signer != cfg.Payer {
		return nil, Refuse(ReasonBatchReceiveAuth, "the deposit's ReceiveWithAuthorization is not signed by the payer %s for this channel", cfg.Payer.Hex())
	}
	data, err := batchsettle.CollectorData(after, before, salt, sig)
	if err != nil {
		return nil, Refuse(ReasonBatchDepositPayload, "%v", err)
	}
	return &BatchDeposit{Amount: amount, ValidAfter: after, ValidBefore: before, Salt: salt, Signature: sig,
		CollectorData: data, Nonce: nonce}, nil
}

var (
	receiveTypeHash = crypto.Keccak256([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	domainTypeHash  = crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
)

// receiveDigest is the token's EIP-712 digest of an ERC-3009
// ReceiveWithAuthorization (Base USDC's domain: TokenName, TokenVersion).
func receiveDigest(token, from, to common.Address, value, after, before *big.Int, nonce common.Hash) common.Hash {
	w := func(b []byte) []byte { return common.LeftPadBytes(b, 32) }
	s := crypto.Keccak256(receiveTypeHash, w(from[:]), w(to[:]), w(value.Bytes()), w(after.Bytes()), w(before.Bytes()), nonce[:])
	d := crypto.Keccak256(domainTypeHash, crypto.Keccak256([]byte(TokenName)), crypto.Keccak256([]byte(TokenVersion)),
		w(big.NewInt(ChainID).Bytes()), w(token[:]))
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, d, s)
}
