// Package deposits is the deposit listener: it reads RevenueVault
// Deposited(bytes32 indexed account, address indexed from, uint256 amount)
// logs from the chain-137 RPC and credits the account once the log has
// Confirmations blocks (25 by default) on top of it.
//
// One Run is one pass; the scheduler runs it every few seconds on the leader.
// A pass:
//
//  1. reads every Deposited log from the block after the checkpoint
//     (confirmed_through) to the head, and stores each as 'seen' with the
//     hash of the block it was seen in;
//  2. for every seen log at least Confirmations deep, re-reads the canonical
//     block hash at its height: equal → credit (account_ledger kind
//     'deposit', ref "<tx hash>:<log index>", in the same Postgres
//     transaction as the row's state change and the new checkpoint);
//     different → 'orphaned', never credited. A log whose account is not a
//     valid key_… id is 'unattributed' for an operator, never credited;
//  3. mirrors credited rows into Redis with balances.Credit (idempotent per
//     deposit id) and sets redis_applied, so a crash between the Postgres
//     commit and the Redis write is repaired by the next pass.
//
// The checkpoint only advances to a block whose hash was the same before and
// after the logs were read, so a reorg during the read cannot make the
// listener skip a log; the pass simply retries. The checkpoint keeps that
// hash, and every pass first checks it is still canonical: a reorg deeper
// than the window stops the listener with ErrDeepReorg for an operator.
package deposits

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/crashhook"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Defaults.
const (
	DefaultConfirmations   = 25
	DefaultBlockRange      = 2_000
	DefaultMaxBlocksPerRun = 50_000
)

// Config of the listener. Zero values take the defaults.
type Config struct {
	Pool   *pgxpool.Pool  // required
	Redis  redis.Scripter // required: balances are mirrored here
	Prefix string         // Redis key prefix of the shared/balances layout (default balances.DefaultPrefix)
	Shards int            // metering shards of the layout (0 or 1: one)
	Client chain.Backend  // required: the chain-137 RPC (chain.Dial(ctx, url, 137))
	// ChainID is the chain the rows are recorded under (default 137). The
	// client is expected to serve it (chain.Dial checks).
	ChainID uint64
	Vault   common.Address // required: RevenueVault
	// Confirmations a log needs before it is credited: the block holding it
	// plus Confirmations-1 on top (default 25).
	Confirmations uint64
	// StartBlock is where the first pass starts when there is no checkpoint:
	// the vault's deployment block.
	StartBlock uint64
	// BlockRange bounds one eth_getLogs request (default 2,000 blocks; lower
	// it for providers with tighter limits).
	BlockRange uint64
	// MaxBlocksPerRun bounds one pass, so catching up from far behind is
	// spread over runs (default 50,000).
	MaxBlocksPerRun uint64
	Fence           chain.Fencer // nil: no leader fencing
	Log             *zap.Logger
}

// Listener is the "deposits" job.
type Listener struct {
	cfg      Config
	vaultABI *revenuevault.RevenueVault
	topic    common.Hash
	log      *zap.Logger
	m        metrics

	// beforeMirror, when set (tests), runs before each Redis credit; an
	// error stops the mirroring there, as a crash would.
	beforeMirror func(depositID string) error
}

// New checks cfg and returns the listener.
func New(cfg Config) (*Listener, error) {
	if cfg.Pool == nil || cfg.Redis == nil || cfg.Client == nil {
		return nil, errors.New("deposits: Pool, Redis and Client are required")
	}
	if cfg.Vault == (common.Address{}) {
		return nil, errors.New("deposits: the RevenueVault address is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = balances.DefaultPrefix
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = 137
	}
	if cfg.Confirmations == 0 {
		cfg.Confirmations = DefaultConfirmations
	}
	if cfg.BlockRange == 0 {
		cfg.BlockRange = DefaultBlockRange
	}
	if cfg.MaxBlocksPerRun == 0 {
		cfg.MaxBlocksPerRun = DefaultMaxBlocksPerRun
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	v := revenuevault.NewRevenueVault()
	return &Listener{cfg: cfg, vaultABI: v, topic: v.GetABI().Events[revenuevault.RevenueVaultDepositedEventName].ID,
		log: cfg.Log.Named("deposits"), m: newMetrics()}, nil
}

// Name implements jobs.Job.
func (l *Listener) Name() string { return "deposits" }

// Run is one pass. Credits that reached Postgres are mirrored to Redis even
// when the scan fails.
func (l *Listener) Run(ctx context.Context) error {
	scanErr := l.pass(ctx)
	mirrorErr := l.mirror(ctx)
	return errors.Join(scanErr, mirrorErr)
}

func (l *Listener) vault() string { return strings.ToLower(l.cfg.Vault.Hex()) }

// DepositID is the id a Deposited log is credited under: the account_ledger
// ref and the member of the account's Redis deposit set.
func DepositID(tx common.Hash, logIndex uint) string {
	return fmt.Sprintf("%s:%d", strings.ToLower(tx.Hex()), logIndex)
}

// seenLog is a parsed Deposited log.
type seenLog struct {
	tx         common.Hash
	index      uint
	block      uint64
	blockHash  common.Hash
	accountRaw [32]byte
	account    *string
	from       common.Address
	amountRaw  *big.Int
	units      *int64
	reason     *string
}

func (l *Listener) pass(ctx context.Context) error {
	head, err := l.cfg.Client.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("deposits: head block: %w", err)
	}
	l.m.head.Set(float64(head))
	from := l.cfg.StartBlock
	var cpFound bool
	var confirmed int64
	var cpHash *string
	err = l.cfg.Pool.QueryRow(ctx, `SELECT confirmed_through, confirmed_hash FROM deposit_checkpoints
		WHERE chain_id = $1 AND vault = $2`, int64(l.cfg.ChainID), l.vault()).Scan(&confirmed, &cpHash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("deposits: reading the checkpoint: %w", err)
	default:
		cpFound = true
		from = uint64(confirmed + 1)
	}
	if cpHash != nil {
		if err := l.checkAnchor(ctx, head, confirmed, *cpHash); err != nil {
			return err
		}
	}
	if from > head {
		return nil
	}
	to := min(head, from+l.cfg.MaxBlocksPerRun-1)
	// safe: the highest block with Confirmations blocks (itself included);
	// logs at or below it are decided in this pass.
	safe := int64(head) + 1 - int64(l.cfg.Confirmations)
	safe = min(safe, int64(to))
	var safeHash common.Hash
	if safe >= int64(from) {
		h, err := l.cfg.Client.HeaderByNumber(ctx, big.NewInt(safe))
		if err != nil {
			return fmt.Errorf("deposits: header %d: %w", safe, err)
		}
		safeHash = h.Hash()
	}
	logs, err := l.fetch(ctx, from, to)
	if err != nil {
		return err
	}
	if safe >= int64(from) {
		h, err := l.cfg.Client.HeaderByNumber(ctx, big.NewInt(safe))
		if err != nil {
			return fmt.Errorf("deposits: header %d: %w", safe, err)
		}
		if h.Hash() != safeHash {
			// The chain reorganised under the read; what we read may mix
			// branches. Nothing is decided; the next pass reads again.
			l.log.Info("reorg during the log read; retrying next pass", zap.Int64("block", safe))
			return nil
		}
	}
	if err := l.storeSeen(ctx, logs); err != nil {
		return err
	}
	crashhook.Point("deposits-after-seen")

	newConfirmed := int64(from) - 1
	if cpFound {
		newConfirmed = confirmed
	}
	if safe >= int64(from) {
		if err := l.decide(ctx, safe, safeHash, int64(to)); err != nil {
			return err
		}
		newConfirmed = safe
	} else if err := l.checkpoint(ctx, l.cfg.Pool, newConfirmed, nil, int64(to)); err != nil {
		return err
	}
	l.m.confirmed.Set(float64(newConfirmed))
	return nil
}

// fetch reads the vault's Deposited logs in [from, to], BlockRange blocks per request.
func (l *Listener) fetch(ctx context.Context, from, to uint64) ([]seenLog, error) {
	var out []seenLog
	for start := from; start <= to; start += l.cfg.BlockRange {
		end := min(to, start+l.cfg.BlockRange-1)
		logs, err := l.cfg.Client.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(start), ToBlock: new(big.Int).SetUint64(end),
			Addresses: []common.Address{l.cfg.Vault}, Topics: [][]common.Hash{{l.topic}},
		})
		if err != nil {
			return nil, fmt.Errorf("deposits: eth_getLogs %d-%d: %w", start, end, err)
		}
		for i := range logs {
			lg := &logs[i]
			if lg.Removed || lg.Address != l.cfg.Vault {
				continue
			}
			out = append(out, l.parse(lg))
		}
		if end == to {
			break
		}
	}
	return out, nil
}

// parse decodes a log. A log that cannot be credited (bad account, amount
// out of range) still becomes a row, with the reason.
func (l *Listener) parse(lg *types.Log) seenLog {
	s := seenLog{tx: lg.TxHash, index: lg.Index, block: lg.BlockNumber, blockHash: lg.BlockHash, amountRaw: new(big.Int)}
	reason := func(r string) { // the first problem is the one reported
		if s.reason == nil {
			s.reason = &r
		}
	}
	ev, err := l.vaultABI.UnpackDepositedEvent(lg)
	if err != nil {
		reason("undecodable Deposited log: " + err.Error())
		if len(lg.Topics) > 1 {
			s.accountRaw = lg.Topics[1]
		}
		return s
	}
	s.accountRaw, s.from, s.amountRaw = ev.Account, ev.From, ev.Amount
	if acct, err := accounts.FromBytes32(ev.Account); err != nil {
		reason(err.Error())
	} else {
		s.account = &acct
	}
	switch u, err := money.FromBig(ev.Amount); {
	case err != nil:
		reason("amount out of range")
	case u == 0:
		reason("zero amount")
	default:
		v := int64(u)
		s.units = &v
	}
	return s
}

// storeSeen upserts the logs as 'seen'. A log already decided stays as it
// is, except an orphaned one seen again on the canonical chain, which is
// live again. A seen log that moved to another block takes the new block.
func (l *Listener) storeSeen(ctx context.Context, logs []seenLog) error {
	if len(logs) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, l.cfg.Pool, func(tx pgx.Tx) error {
		if err := chain.Fence(ctx, l.cfg.Fence, tx); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, s := range logs {
			b.Queue(`INSERT INTO chain_deposits (chain_id, tx_hash, log_index, vault, block_number, block_hash, account_raw,
					account, from_addr, amount_raw, amount_units, state, reason)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::numeric, $11, 'seen', $12)
				ON CONFLICT (chain_id, tx_hash, log_index) DO UPDATE
				SET block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, state = 'seen', decided_at = NULL
				WHERE chain_deposits.state IN ('seen', 'orphaned')
				  AND (chain_deposits.block_hash <> EXCLUDED.block_hash OR chain_deposits.state = 'orphaned')`,
				int64(l.cfg.ChainID), strings.ToLower(s.tx.Hex()), int64(s.index), l.vault(), int64(s.block),
				strings.ToLower(s.blockHash.Hex()), s.accountRaw[:], s.account, strings.ToLower(s.from.Hex()),
				s.amountRaw.String(), s.units, s.reason)
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

type pending struct {
	tx        string
	index     int64
	block     int64
	blockHash string
	account   *string
	units     *int64
}

// decide settles every seen log at or below safe, in one transaction with
// the checkpoint: a log is credited exactly when its block is still the
// canonical block at its height.
func (l *Listener) decide(ctx context.Context, safe int64, safeHash common.Hash, scannedTo int64) error {
	rows, err := l.cfg.Pool.Query(ctx, `SELECT tx_hash, log_index, block_number, block_hash, account, amount_units
		FROM chain_deposits WHERE chain_id = $1 AND vault = $2 AND state = 'seen' AND block_number <= $3
		ORDER BY block_number, log_index`, int64(l.cfg.ChainID), l.vault(), safe)
	if err != nil {
		return fmt.Errorf("deposits: reading unconfirmed logs: %w", err)
	}
	var due []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.tx, &p.index, &p.block, &p.blockHash, &p.account, &p.units); err != nil {
			rows.Close()
			return err
		}
		due = append(due, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The canonical header at each height, read now: the re-check that
	// keeps an orphaned log from being credited.
	headers := map[int64]*types.Header{}
	for _, p := range due {
		if headers[p.block] != nil {
			continue
		}
		h, err := l.cfg.Client.HeaderByNumber(ctx, big.NewInt(p.block))
		if err != nil {
			return fmt.Errorf("deposits: header %d: %w", p.block, err)
		}
		headers[p.block] = h
	}

	var credited, orphaned, parked int
	err = pgx.BeginFunc(ctx, l.cfg.Pool, func(tx pgx.Tx) error {
		credited, orphaned, parked = 0, 0, 0
		if err := chain.Fence(ctx, l.cfg.Fence, tx); err != nil {
			return err
		}
		for _, p := range due {
			h := headers[p.block]
			when := time.Unix(int64(h.Time), 0).UTC()
			key := []any{int64(l.cfg.ChainID), p.tx, p.index}
			switch {
			case strings.ToLower(h.Hash().Hex()) != p.blockHash:
				orphaned++
				l.log.Warn("deposit log orphaned by a reorg; not credited", zap.String("tx", p.tx), zap.Int64("log_index", p.index),
					zap.Int64("block", p.block), zap.String("seen_in", p.blockHash), zap.String("canonical", h.Hash().Hex()))
				if _, err := tx.Exec(ctx, `UPDATE chain_deposits SET state = 'orphaned', decided_at = now()
					WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3 AND state = 'seen'`, key...); err != nil {
					return err
				}
			case p.account == nil || p.units == nil:
				parked++
				l.log.Warn("deposit with an unusable account or amount parked as unattributed", zap.String("tx", p.tx),
					zap.Int64("log_index", p.index))
				if _, err := tx.Exec(ctx, `UPDATE chain_deposits SET state = 'unattributed', block_time = $4, decided_at = now()
					WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3 AND state = 'seen'`, append(key, when)...); err != nil {
					return err
				}
			default:
				credited++
				ref := p.tx + ":" + fmt.Sprint(p.index)
				if _, err := tx.Exec(ctx, `INSERT INTO account_ledger_entries (account, kind, ref, units, ts)
					VALUES ($1, 'deposit', $2, $3, $4) ON CONFLICT (kind, ref) DO NOTHING`, *p.account, ref, *p.units, when); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE chain_deposits SET state = 'credited', block_time = $4, decided_at = now()
					WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3 AND state = 'seen'`, append(key, when)...); err != nil {
					return err
				}
				l.log.Info("deposit credited", zap.String("account", *p.account), zap.Int64("units", *p.units),
					zap.String("deposit", ref), zap.Int64("block", p.block))
			}
		}
		hash := strings.ToLower(safeHash.Hex())
		if err := l.checkpoint(ctx, tx, safe, &hash, scannedTo); err != nil {
			return err
		}
		crashhook.Point("deposits-before-commit")
		return nil
	})
	if err != nil {
		return fmt.Errorf("deposits: deciding logs up to block %d: %w", safe, err)
	}
	l.m.decided.WithLabelValues("credited").Add(float64(credited))
	l.m.decided.WithLabelValues("orphaned").Add(float64(orphaned))
	l.m.decided.WithLabelValues("unattributed").Add(float64(parked))
	return nil
}

// ErrDeepReorg is returned when the block the checkpoint was confirmed at
// is no longer on the chain: a reorg deeper than the confirmation window
// (credits already given may be on an abandoned branch), or the RPC now
// serves a different chain (e.g. a restarted dev chain with a kept
// database). The listener stops deciding until an operator looks.
var ErrDeepReorg = errors.New("deposits: the checkpoint block is no longer canonical (reorg deeper than the confirmation window, or a different chain); operator action needed")

// checkAnchor verifies that the checkpoint block is still canonical.
func (l *Listener) checkAnchor(ctx context.Context, head uint64, confirmed int64, hash string) error {
	if confirmed < 0 {
		return nil
	}
	if head < uint64(confirmed) {
		return fmt.Errorf("%w: head %d is below the checkpoint %d", ErrDeepReorg, head, confirmed)
	}
	h, err := l.cfg.Client.HeaderByNumber(ctx, big.NewInt(confirmed))
	if err != nil {
		return fmt.Errorf("deposits: header %d: %w", confirmed, err)
	}
	if got := strings.ToLower(h.Hash().Hex()); got != hash {
		return fmt.Errorf("%w: block %d is %s, the checkpoint recorded %s", ErrDeepReorg, confirmed, got, hash)
	}
	return nil
}

type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// checkpoint records progress. hash is the hash of block confirmed (nil:
// confirmed did not move, keep the stored hash).
func (l *Listener) checkpoint(ctx context.Context, q execer, confirmed int64, hash *string, scanned int64) error {
	_, err := q.Exec(ctx, `INSERT INTO deposit_checkpoints (chain_id, vault, confirmed_through, confirmed_hash, scanned_through)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (chain_id, vault) DO UPDATE SET
			confirmed_through = EXCLUDED.confirmed_through,
			confirmed_hash = COALESCE(EXCLUDED.confirmed_hash, deposit_checkpoints.confirmed_hash),
			scanned_through = EXCLUDED.scanned_through, updated_at = now()
		WHERE EXCLUDED.confirmed_through >= deposit_checkpoints.confirmed_through`,
		int64(l.cfg.ChainID), l.vault(), confirmed, hash, scanned)
	if err != nil {
		return fmt.Errorf("deposits: writing the checkpoint: %w", err)
	}
	return nil
}

// mirror credits Redis for every credited deposit not yet applied there.
// balances.Credit is idempotent per deposit id, so a credit that reached
// Redis before a crash (flag not yet set) is not counted twice.
func (l *Listener) mirror(ctx context.Context) error {
	rows, err := l.cfg.Pool.Query(ctx, `SELECT tx_hash, log_index, account, amount_units FROM chain_deposits
		WHERE chain_id = $1 AND state = 'credited' AND NOT redis_applied ORDER BY block_number, log_index`, int64(l.cfg.ChainID))
	if err != nil {
		return fmt.Errorf("deposits: reading unmirrored credits: %w", err)
	}
	type credit struct {
		tx      string
		index   int64
		account string
		units   int64
	}
	var todo []credit
	for rows.Next() {
		var c credit
		if err := rows.Scan(&c.tx, &c.index, &c.account, &c.units); err != nil {
			rows.Close()
			return err
		}
		todo = append(todo, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range todo {
		id := c.tx + ":" + fmt.Sprint(c.index)
		if l.beforeMirror != nil {
			if err := l.beforeMirror(id); err != nil {
				return err
			}
		}
		applied, bal, err := balances.CreditAt(ctx, l.cfg.Redis, balances.Layout{Prefix: l.cfg.Prefix, Shards: l.cfg.Shards}, c.account, money.Units(c.units), id)
		if err != nil {
			return fmt.Errorf("deposits: mirroring %s to Redis: %w", id, err)
		}
		crashhook.Point("deposits-after-redis")
		if _, err := l.cfg.Pool.Exec(ctx, `UPDATE chain_deposits SET redis_applied = true
			WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3`, int64(l.cfg.ChainID), c.tx, c.index); err != nil {
			return fmt.Errorf("deposits: marking %s mirrored: %w", id, err)
		}
		l.log.Info("deposit mirrored to Redis", zap.String("deposit", id), zap.String("account", c.account),
			zap.Bool("applied", applied), zap.Int64("balance_units", int64(bal)))
	}
	return nil
}

type metrics struct {
	decided   *prometheus.CounterVec
	confirmed prometheus.Gauge
	head      prometheus.Gauge
}

func newMetrics() metrics {
	return metrics{
		decided: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_deposits_decided_total",
			Help: "Deposited logs decided by this replica, by outcome (credited, orphaned, unattributed)."}, []string{"outcome"}),
		confirmed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_deposits_confirmed_block",
			Help: "Block through which every Deposited log has been decided."}),
		head: prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_deposits_head_block", Help: "Chain head seen by the last pass."}),
	}
}

// Register adds the listener's metrics to reg.
func (l *Listener) Register(reg prometheus.Registerer) {
	reg.MustRegister(l.m.decided, l.m.confirmed, l.m.head)
}
