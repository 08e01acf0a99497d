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

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// ClaimJob claims the batch-settlement vouchers the gateways drew and sweeps
// them to the receiver: for each (receiver, token) one transaction,
// multicall(claimWithSignature(every channel's latest voucher, the receiver
// authorizer's ClaimBatch signature), settle(receiver, token)). It runs on
// settlementd's schedule; a channel whose on-chain totalClaimed already
// covers its latest voucher is skipped, so a run after a lost answer claims
// nothing twice (the contract also treats a repeated claim as a no-op).
// With Track the transaction is recorded in PostgreSQL (chain_txs) under
// the ClaimBatch digest before it is sent.
type ClaimJob struct {
	f     *Facilitator
	m     *meter.Meter
	key   *ecdsa.PrivateKey
	authz common.Address
}

// ClaimJob builds the job; key is the receiver authorizer's (the address the
// gateway's 402 names as receiverAuthorizer).
func (f *Facilitator) ClaimJob(m *meter.Meter, key *ecdsa.PrivateKey) *ClaimJob {
	j := &ClaimJob{f: f, m: m, key: key, authz: crypto.PubkeyToAddress(key.PublicKey)}
	f.claims = j // cooperative refunds claim and sign with the same key
	return j
}

// Name implements jobs.Job.
func (j *ClaimJob) Name() string { return "x402-batch-claims" }

type claimRow struct {
	id     string
	cfg    batchsettle.Config
	signed money.Units
	sig    []byte
}

// Run implements jobs.Job.
func (j *ClaimJob) Run(ctx context.Context) error {
	ids, err := j.m.Channels(ctx)
	if err != nil {
		return err
	}
	bs := batchsettlement.NewBatchSettlement()
	inst := bs.Instance(j.f.cfg.Backend, batchsettle.SettlementAddress)
	groups := map[[2]common.Address][]claimRow{}
	for _, id := range ids {
		st, ok, err := j.m.Channel(ctx, id)
		if err != nil || !ok || st.Signed <= st.Claimed || st.Signature == "" {
			continue
		}
		var cfg batchsettle.Config
		if json.Unmarshal([]byte(st.Config), &cfg) != nil || cfg.ReceiverAuthorizer != j.authz {
			continue
		}
		ch, err := bind.Call(inst, &bind.CallOpts{Context: ctx}, bs.PackChannels(common.HexToHash(id)), bs.UnpackChannels)
		if err != nil {
			return fmt.Errorf("%w: read channel %s: %v", errRPC, id, j.f.scrub(err))
		}
		onchain := money.Units(ch.TotalClaimed.Int64())
		if onchain >= st.Signed {
			_ = j.m.MarkClaimed(ctx, id, onchain)
			continue
		}
		sig := common.FromHex(st.Signature)
		k := [2]common.Address{cfg.Receiver, cfg.Token}
		groups[k] = append(groups[k], claimRow{id: id, cfg: cfg, signed: st.Signed, sig: sig})
	}
	var errs []error
	for k, rows := range groups {
		if err := j.claim(ctx, k[0], k[1], rows); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// claim sends one claim-and-settle transaction for rows and marks them claimed.
func (j *ClaimJob) claim(ctx context.Context, receiver, token common.Address, rows []claimRow) error {
	bs := batchsettlement.NewBatchSettlement()
	dom := batchsettle.DefaultDomain(j.f.cfg.ChainID)
	var vc []batchsettlement.BatchSettlementVoucherClaim
	var entries []batchsettle.ClaimEntry
	var total money.Units
	for _, r := range rows {
		amt := big.NewInt(int64(r.signed))
		vc = append(vc, batchsettlement.BatchSettlementVoucherClaim{
			Voucher:   batchsettlement.BatchSettlementVoucher{Channel: onchainConfig(r.cfg), MaxClaimableAmount: amt},
			Signature: r.sig, TotalClaimed: amt})
		entries = append(entries, batchsettle.ClaimEntry{ChannelID: common.HexToHash(r.id), MaxClaimable: amt, TotalClaimed: amt})
		total += r.signed
	}
	digest := dom.ClaimBatchDigest(entries)
	sig, err := batchsettle.Sign(digest, j.key)
	if err != nil {
		return err
	}
	data := bs.PackMulticall([][]byte{bs.PackClaimWithSignature(vc, sig), bs.PackSettle(receiver, token)})
	rcpt, hash, err := j.send(ctx, "x402-batch-claim:"+strings.ToLower(digest.Hex()), chain.KindBatchClaim, data, receiver, total)
	if err != nil {
		return fmt.Errorf("x402 batch claim %s: %w", hash.Hex(), err)
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("x402 batch claim %s reverted", hash.Hex())
	}
	for _, r := range rows {
		if err := j.m.MarkClaimed(ctx, r.id, r.signed); err != nil {
			return err
		}
	}
	j.f.cfg.Log.Info("x402 batch-settlement vouchers claimed and settled", zap.String("tx", hash.Hex()),
		zap.String("receiver", receiver.Hex()), zap.Int("channels", len(rows)))
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
