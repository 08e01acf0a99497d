package claims

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// ClaimedTopic is the topic of ClaimsContract's Claimed event.
var ClaimedTopic = crypto.Keccak256Hash([]byte("Claimed(bytes32,string,address,uint256,uint256)"))

// LogReader is the chain surface the watcher needs (*ethclient.Client).
type LogReader interface {
	BlockNumber(ctx context.Context) (uint64, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
}

// Watcher mirrors Claimed events into claim_events, marks the signatures
// they honour claimed (which moves last_claim), and checkpoints the scanned
// block range. Idempotent on (tx hash, log index); leader-only.
type Watcher struct {
	Pool          *pgxpool.Pool
	Client        LogReader
	ChainID       uint64
	Contract      common.Address
	StartBlock    uint64 // first block scanned when there is no checkpoint
	Confirmations uint64 // blocks a log must be under the head
	MaxRange      uint64 // blocks per eth_getLogs (default 2000)
	Log           *zap.Logger
}

// Name implements jobs.Job.
func (w *Watcher) Name() string { return "claim-watcher" }

// Run scans from the checkpoint to head − confirmations.
func (w *Watcher) Run(ctx context.Context) error {
	if w.MaxRange == 0 {
		w.MaxRange = 2000
	}
	head, err := w.Client.BlockNumber(ctx)
	if err != nil {
		return err
	}
	if head < w.Confirmations {
		return nil
	}
	safe := head - w.Confirmations
	next := w.StartBlock
	err = w.Pool.QueryRow(ctx, `SELECT next_block FROM claim_watch WHERE chain_id = $1`, int64(w.ChainID)).Scan(&next)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	cc := claimscontract.NewClaimsContract()
	for next <= safe {
		to := min(safe, next+w.MaxRange-1)
		logs, err := w.Client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(next), ToBlock: new(big.Int).SetUint64(to),
			Addresses: []common.Address{w.Contract}, Topics: [][]common.Hash{{ClaimedTopic}}})
		if err != nil {
			return err
		}
		times := map[uint64]time.Time{}
		tx, err := w.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed {
				continue
			}
			ev, err := cc.UnpackClaimedEvent(l)
			if err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			at, ok := times[l.BlockNumber]
			if !ok {
				h, err := w.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(l.BlockNumber))
				if err != nil {
					_ = tx.Rollback(ctx)
					return err
				}
				at = time.Unix(int64(h.Time), 0).UTC()
				times[l.BlockNumber] = at
			}
			paid, err1 := money.FromBig(ev.Paid)
			cum, err2 := money.FromBig(ev.Cumulative)
			if err := errors.Join(err1, err2); err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO claim_events (tx_hash, log_index, chain_id, block_number, block_time, node_id, wallet, paid_units, cumulative_units)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`, l.TxHash.Hex(), int(l.Index), int64(w.ChainID), int64(l.BlockNumber),
				at, ev.NodeId, ev.Wallet.Hex(), int64(paid), int64(cum))
			if err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			// Signatures this claim honoured (or made moot): those it reached
			// that were still valid at the block; older ones stay expired.
			if _, err := tx.Exec(ctx, `UPDATE claim_signatures SET state = 'claimed', resolved_at = $3
				WHERE node_id = $1 AND state IN ('pending', 'expired') AND cumulative_units <= $2 AND deadline >= $3`,
				ev.NodeId, int64(cum), at); err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			if tag.RowsAffected() == 1 && w.Log != nil {
				w.Log.Info("claim observed on chain", zap.String("node", ev.NodeId), zap.String("tx", l.TxHash.Hex()),
					zap.Int64("paid", int64(paid)), zap.Int64("cumulative", int64(cum)))
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO claim_watch (chain_id, next_block) VALUES ($1, $2)
			ON CONFLICT (chain_id) DO UPDATE SET next_block = EXCLUDED.next_block, updated_at = now()`, int64(w.ChainID), int64(to+1)); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		next = to + 1
	}
	return nil
}
