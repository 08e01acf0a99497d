package facilitator

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// ClaimJob claims what the batch-settlement vouchers charged and sweeps it
// to the receiver: for each (receiver, token) one transaction,
// multicall(claimWithSignature(every channel's charged total under its
// latest voucher, the receiver authorizer's ClaimBatch signature),
// settle(receiver, token)). It runs on settlementd's schedule; a channel
// whose on-chain totalClaimed already covers its charged total is skipped,
// so a run after a lost answer claims nothing twice (the contract also
// treats a repeated claim as a no-op).
//
// One channel never blocks another: each channel's claim is simulated on
// its own first (eth_call from the relayer), and one that would revert (a
// payer's refund or withdrawal left less than was charged, a voucher the
// contract refuses) is left out of the batch, counted in
// settlementd_x402_claims_skipped_total and logged; the others are claimed.
// With Track the transaction is recorded in PostgreSQL (chain_txs) under
// the ClaimBatch digest before it is sent.
type ClaimJob struct {
	// grace holds back the claim of a channel drawn from in the last grace
	// (unless the payer is withdrawing): a draw whose Redis reply was lost
	// is voided by the gateway within seconds (meter.VoidVoucherIfBooked),
	// and a claim that reached the chain first could not be taken back.
	grace   time.Duration
	f       *Facilitator
	m       *meter.Meter
	key     *ecdsa.PrivateKey
	authz   common.Address
	skipped *prometheus.CounterVec
}

// claimGrace is ClaimJob.grace: a voided draw is found a second after its
// 503 (the gateway's voidFirstLook), retried every few seconds while Redis
// is slow.
const claimGrace = 10 * time.Second

// newClaimsSkipped counts channels left out of a claim because their claim
// would revert (the alert: what they charged is not being collected).
func newClaimsSkipped() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_x402_claims_skipped_total",
		Help: "batch-settlement channels left out of a claim run because their claim would revert, by reason"}, []string{"reason"})
}

// ClaimJob builds the job; key is the receiver authorizer's (the address the
// gateway's 402 names as receiverAuthorizer). It also opens the
// facilitator's batch-settlement offer with that authorizer.
func (f *Facilitator) ClaimJob(m *meter.Meter, key *ecdsa.PrivateKey) *ClaimJob {
	j := &ClaimJob{f: f, m: m, key: key, authz: crypto.PubkeyToAddress(key.PublicKey), skipped: newClaimsSkipped(), grace: claimGrace}
	f.claims = j // cooperative refunds claim and sign with the same key
	f.cfg.Offer.ReceiverAuthorizer = j.authz
	return j
}

// Collectors are the job's metrics, for settlementd's registry.
func (j *ClaimJob) Collectors() []prometheus.Collector { return []prometheus.Collector{j.skipped} }

// Name implements jobs.Job.
func (j *ClaimJob) Name() string { return "x402-batch-claims" }

type claimRow struct {
	id      string
	cfg     batchsettle.Config
	charged money.Units // what the vouchers charged: the claim's totalClaimed
	signed  money.Units // the latest voucher's maxClaimableAmount (≥ charged)
	sig     []byte
}

// Run implements jobs.Job.
func (j *ClaimJob) Run(ctx context.Context) error {
	ids, err := j.m.Channels(ctx)
	if err != nil {
		return err
	}
	return j.claimChannels(ctx, ids, false)
}

// ClaimChannels claims what ids charged now, fresh draws included (the
// channel watcher calls it for a channel whose payer asked to withdraw, so
// the claim lands before the withdraw delay ends).
func (j *ClaimJob) ClaimChannels(ctx context.Context, ids []string) error {
	return j.claimChannels(ctx, ids, true)
}

func (j *ClaimJob) claimChannels(ctx context.Context, ids []string, urgent bool) error {
	bs := batchsettlement.NewBatchSettlement()
	inst := bs.Instance(j.f.cfg.Backend, batchsettle.SettlementAddress)
	groups := map[[2]common.Address][]claimRow{}
	var errs []error
	for _, id := range ids {
		st, ok, err := j.m.Channel(ctx, id)
		if err != nil || !ok || st.Charged <= st.Claimed || st.Signature == "" || st.Signed < st.Charged {
			continue
		}
		var cfg batchsettle.Config
		if json.Unmarshal([]byte(st.Config), &cfg) != nil || cfg.ReceiverAuthorizer != j.authz {
			continue
		}
		if !urgent && j.grace > 0 {
			if last, err := j.m.ChannelLastDraw(ctx, id); err != nil || time.Since(last) < j.grace {
				continue // the next run claims it
			}
		}
		ch, err := bind.Call(inst, &bind.CallOpts{Context: ctx}, bs.PackChannels(common.HexToHash(id)), bs.UnpackChannels)
		if err != nil {
			// One channel's read failing does not stop the others.
			errs = append(errs, fmt.Errorf("%w: read channel %s: %v", errRPC, id, j.f.scrub(err)))
			continue
		}
		onchain := money.Units(ch.TotalClaimed.Int64())
		if onchain >= st.Charged {
			_ = j.m.MarkClaimed(ctx, id, onchain)
			continue
		}
		row := claimRow{id: id, cfg: cfg, charged: st.Charged, signed: st.Signed, sig: common.FromHex(st.Signature)}
		if reason, ok := j.simulate(ctx, row); !ok {
			j.skipped.WithLabelValues(reason).Inc()
			j.f.cfg.Log.Error("x402 batch claim of a channel would revert: left out of the claim (the others are claimed)",
				zap.String("channel", id), zap.String("charged", st.Charged.String()), zap.String("onchain_balance", ch.Balance.String()),
				zap.String("onchain_claimed", ch.TotalClaimed.String()), zap.String("reason", reason))
			continue
		}
		k := [2]common.Address{cfg.Receiver, cfg.Token}
		groups[k] = append(groups[k], row)
	}
	for k, rows := range groups {
		if err := j.claim(ctx, k[0], k[1], rows); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// claimData is the multicall of a claim of rows: claimWithSignature with
// the receiver authorizer's ClaimBatch signature, then settle.
func (j *ClaimJob) claimData(receiver, token common.Address, rows []claimRow) ([]byte, common.Hash, money.Units, error) {
	bs := batchsettlement.NewBatchSettlement()
	dom := batchsettle.DefaultDomain(j.f.cfg.ChainID)
	var vc []batchsettlement.BatchSettlementVoucherClaim
	var entries []batchsettle.ClaimEntry
	var total money.Units
	for _, r := range rows {
		maxAmt, amt := big.NewInt(int64(r.signed)), big.NewInt(int64(r.charged))
		vc = append(vc, batchsettlement.BatchSettlementVoucherClaim{
			Voucher:   batchsettlement.BatchSettlementVoucher{Channel: onchainConfig(r.cfg), MaxClaimableAmount: maxAmt},
			Signature: r.sig, TotalClaimed: amt})
		entries = append(entries, batchsettle.ClaimEntry{ChannelID: common.HexToHash(r.id), MaxClaimable: maxAmt, TotalClaimed: amt})
		total += r.charged
	}
	digest := dom.ClaimBatchDigest(entries)
	sig, err := batchsettle.Sign(digest, j.key)
	if err != nil {
		return nil, digest, 0, err
	}
	return bs.PackMulticall([][]byte{bs.PackClaimWithSignature(vc, sig), bs.PackSettle(receiver, token)}), digest, total, nil
}

// simulate runs one channel's claim alone as an eth_call from the relayer;
// false with the revert's name when it would revert. An RPC failure counts
// as a revert for this run (the channel is tried again at the next).
func (j *ClaimJob) simulate(ctx context.Context, r claimRow) (string, bool) {
	data, _, _, err := j.claimData(r.cfg.Receiver, r.cfg.Token, []claimRow{r})
	if err != nil {
		return "sign", false
	}
	to := batchsettle.SettlementAddress
	if _, err := j.f.cfg.Backend.CallContract(ctx, ethereum.CallMsg{From: j.f.relayer, To: &to, Data: data}, nil); err != nil {
		bs := batchsettlement.NewBatchSettlement()
		if v, derr := revert.Decode(err, bs.UnpackError); derr == nil {
			name := fmt.Sprintf("%T", v)
			return strings.TrimPrefix(name[strings.LastIndex(name, ".")+1:], "BatchSettlement"), false
		}
		return "rpc", false
	}
	return "", true
}

// claim sends one claim-and-settle transaction for rows and marks them claimed.
func (j *ClaimJob) claim(ctx context.Context, receiver, token common.Address, rows []claimRow) error {
	data, digest, total, err := j.claimData(receiver, token, rows)
	if err != nil {
		return err
	}
	if err := j.f.checkGas(ctx, batchsettle.SettlementAddress, data); err != nil {
		if len(rows) == 1 {
			return fmt.Errorf("x402 batch claim of channel %s: %w", rows[0].id, err)
		}
		// Over the gas cap: claim in two halves.
		h := len(rows) / 2
		return errors.Join(j.claim(ctx, receiver, token, rows[:h]), j.claim(ctx, receiver, token, rows[h:]))
	}
	rcpt, hash, err := j.send(ctx, "x402-batch-claim:"+strings.ToLower(digest.Hex()), chain.KindBatchClaim, data, receiver, total)
	if err != nil {
		return fmt.Errorf("x402 batch claim %s: %w", hash.Hex(), err)
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("x402 batch claim %s reverted", hash.Hex())
	}
	for _, r := range rows {
		if err := j.m.MarkClaimed(ctx, r.id, r.charged); err != nil {
			return err
		}
	}
	j.f.cfg.Log.Info("x402 batch-settlement vouchers claimed and settled", zap.String("tx", hash.Hex()),
		zap.String("receiver", receiver.Hex()), zap.Int("channels", len(rows)), zap.String("units", total.String()))
	return nil
}

// send sends a transaction to the BatchSettlement contract (through
// chain.Sender when tracked: recorded under purpose before it is sent, so a
// retry finds the same transaction) and waits for its receipt.
func (j *ClaimJob) send(ctx context.Context, purpose, kind string, data []byte, recipient common.Address, total money.Units) (*types.Receipt, common.Hash, error) {
	f := j.f
	bs := batchsettlement.NewBatchSettlement()
	rctx, cancel := context.WithTimeout(ctx, f.cfg.ReceiptTimeout)
	defer cancel()
	if f.sender == nil {
		f.sendMu.Lock()
		opts := bind.NewKeyedTransactor(f.cfg.Relayer, new(big.Int).SetUint64(f.cfg.ChainID))
		opts.Context = ctx
		tx, err := bind.Transact(bs.Instance(f.cfg.Backend, batchsettle.SettlementAddress), opts, data)
		f.sendMu.Unlock()
		if err != nil {
			return nil, common.Hash{}, err
		}
		r, err := deploy.WaitReceipt(rctx, f.cfg.Backend, tx.Hash(), 100*time.Millisecond)
		return r, tx.Hash(), err
	}
	t, err := f.sender.Submit(ctx, f.signer, chain.Intent{
		Purpose: purpose, Kind: kind,
		To: batchsettle.SettlementAddress, Data: data, Recipient: recipient, Amount: total, Unpack: bs.UnpackError,
	})
	if t == nil {
		return nil, common.Hash{}, err
	}
	done, err := f.sender.Await(rctx, []*chain.Tx{t}, f.cfg.ReceiptTimeout)
	if err != nil {
		return nil, t.Hash, err
	}
	if !done || t.State == chain.StateConflict {
		return nil, t.Hash, fmt.Errorf("transaction %s", t.State)
	}
	r, err := f.cfg.Backend.TransactionReceipt(rctx, t.Hash)
	return r, t.Hash, err
}
