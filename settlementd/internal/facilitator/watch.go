package facilitator

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The settlement contract's events that take escrow out of a channel.
var (
	withdrawInitiatedTopic = crypto.Keccak256Hash([]byte("WithdrawInitiated(bytes32,uint128,uint40)"))
	withdrawnTopic         = crypto.Keccak256Hash([]byte("Withdrawn(bytes32,uint128)"))
	refundedTopic          = crypto.Keccak256Hash([]byte("Refunded(bytes32,address,uint128,uint256)"))
)

// watchMaxBlocks bounds one log query (and so one run's work): a watcher
// that fell behind catches up over several runs.
const watchMaxBlocks = 2_000

// WatchJob makes the channels follow the chain: a payer's
// withdrawal request (initiateWithdraw), a refund or a finished withdrawal
// lowers the channel's balance in Redis at once (meter.FollowChain), so no
// voucher above what will remain is drawn; a withdrawal request also has
// the claim job claim what the channel charged right away, long before the
// withdraw delay ends. Its first run (a new leader) reads every known
// channel's state on chain; later runs follow the contract's
// WithdrawInitiated, Withdrawn and Refunded logs from the last block seen,
// at most watchMaxBlocks a run. Channels with a pending withdrawal are read
// again every run, so a top-up deposit cannot raise their balance above
// what the withdrawal leaves.
type WatchJob struct {
	claims *ClaimJob

	mu      sync.Mutex
	next    uint64              // first block not yet followed; 0: not started
	pending map[string]struct{} // channels with a pending withdrawal

	seen *prometheus.CounterVec
}

// WatchJob builds the watcher on the claim job (its meter, contract and
// claims).
func (j *ClaimJob) WatchJob() *WatchJob {
	return &WatchJob{claims: j, pending: map[string]struct{}{},
		seen: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_x402_channel_events_total",
			Help: "batch-settlement channel events followed into Redis, by event"}, []string{"event"})}
}

// Collectors are the job's metrics.
func (w *WatchJob) Collectors() []prometheus.Collector { return []prometheus.Collector{w.seen} }

// Name implements jobs.Job.
func (w *WatchJob) Name() string { return "x402-channel-watch" }

// Run implements jobs.Job.
func (w *WatchJob) Run(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.claims.f
	head, err := f.cfg.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: head: %v", errRPC, f.scrub(err))
	}
	top := head.Number.Uint64()
	ids := map[string]struct{}{}
	if w.next == 0 {
		// A new leader: every channel this Redis knows, read on chain.
		all, err := w.claims.m.Channels(ctx)
		if err != nil {
			return err
		}
		for _, id := range all {
			ids[id] = struct{}{}
		}
		w.next = top + 1
	} else if w.next <= top {
		to := min(top, w.next+watchMaxBlocks-1)
		logs, err := f.cfg.Backend.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(w.next), ToBlock: new(big.Int).SetUint64(to),
			Addresses: []common.Address{batchsettle.SettlementAddress},
			Topics:    [][]common.Hash{{withdrawInitiatedTopic, withdrawnTopic, refundedTopic}},
		})
		if err != nil {
			return fmt.Errorf("%w: settlement logs: %v", errRPC, f.scrub(err))
		}
		for _, l := range logs {
			if len(l.Topics) < 2 {
				continue
			}
			ids[strings.ToLower(l.Topics[1].Hex())] = struct{}{}
			switch l.Topics[0] {
			case withdrawInitiatedTopic:
				w.seen.WithLabelValues("withdraw_initiated").Inc()
			case withdrawnTopic:
				w.seen.WithLabelValues("withdrawn").Inc()
			default:
				w.seen.WithLabelValues("refunded").Inc()
			}
		}
		w.next = to + 1
	}
	for id := range w.pending {
		ids[id] = struct{}{}
	}
	var errs []error
	var claim []string
	for id := range ids {
		withdrawing, err := w.follow(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if withdrawing {
			claim = append(claim, id)
		}
	}
	if len(claim) > 0 {
		// What the channels charged is claimed now: the payer's withdrawal
		// can take only what is unclaimed when it finishes.
		errs = append(errs, w.claims.ClaimChannels(ctx, claim))
	}
	return errors.Join(errs...)
}

// follow reads channel id on chain and lowers its Redis state to it;
// withdrawing tells whether a withdrawal is pending.
func (w *WatchJob) follow(ctx context.Context, id string) (withdrawing bool, err error) {
	f := w.claims.f
	bs := batchsettlement.NewBatchSettlement()
	inst := bs.Instance(f.cfg.Backend, batchsettle.SettlementAddress)
	opts := &bind.CallOpts{Context: ctx}
	ch, err1 := bind.Call(inst, opts, bs.PackChannels(common.HexToHash(id)), bs.UnpackChannels)
	pw, err2 := bind.Call(inst, opts, bs.PackPendingWithdrawals(common.HexToHash(id)), bs.UnpackPendingWithdrawals)
	if err1 != nil || err2 != nil {
		return false, fmt.Errorf("%w: read channel %s: %v", errRPC, id, f.scrub(errors.Join(err1, err2)))
	}
	remain := new(big.Int).Set(ch.Balance)
	withdrawing = pw.InitiatedAt.Sign() > 0
	if withdrawing {
		remain.Sub(remain, pw.Amount)
		if remain.Sign() < 0 {
			remain.SetInt64(0)
		}
		w.pending[id] = struct{}{}
	} else {
		delete(w.pending, id)
	}
	st, known, err := w.claims.m.FollowChain(ctx, id, money.Units(remain.Int64()), money.Units(ch.TotalClaimed.Int64()))
	if err != nil || !known {
		if !known {
			delete(w.pending, id)
		}
		return false, err
	}
	if withdrawing {
		f.cfg.Log.Warn("x402 channel: the payer asked to withdraw; vouchers are held to what will remain and the charged total is claimed now",
			zap.String("channel", id), zap.String("withdraw", pw.Amount.String()), zap.String("remaining", remain.String()),
			zap.String("charged", st.Charged.String()))
	}
	return withdrawing, nil
}
