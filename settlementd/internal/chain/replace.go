package chain

// Stuck transactions. A recorded transaction that is not mined
// within TxPolicy.StuckAfter of its first broadcast is replaced by a copy at
// the same nonce with higher EIP-1559 fees; one the node dropped is sent
// again; a nonce of ours that nothing will ever fill is filled with a
// 0-value self-transfer. Every version is committed (chain_tx_attempts)
// before it is broadcast, and receipts are looked up for every version, so
// whichever the chain mined is recorded once, in any order of mining,
// replacing and crashing. See docs/decisions.md.

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
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/crashhook"
)

// KindNonceFill is a 0-value self-transfer that fills a nonce gap.
const KindNonceFill = "nonce_fill"

// Fee policy defaults.
const (
	DefaultStuckAfter  = 3 * time.Minute
	DefaultBumpPercent = 20
	// MinBumpPercent is geth's (and Bor's, Hardhat's) txpool replacement
	// rule: a replacement must raise both the tip and the fee cap by at
	// least 10 %, or the pool refuses it as underpriced.
	MinBumpPercent = 10
	// DefaultMaxFeeGwei is the default fee cap ceiling (Polygon's worst
	// spikes stayed below it; a 200k-gas transaction at the ceiling costs
	// 0.2 POL).
	DefaultMaxFeeGwei = 1000
)

// TxPolicy is how the Sender prices transactions and unsticks them. Zero
// values take the defaults.
type TxPolicy struct {
	// StuckAfter: a version not mined this long after its first broadcast
	// is replaced (TOLLGATE_TX_STUCK_AFTER, default 3 min).
	StuckAfter time.Duration
	// BumpPercent raises both the tip and the fee cap of a replacement
	// (TOLLGATE_TX_FEE_BUMP_PERCENT, default 20, at least 10).
	BumpPercent int64
	// MaxFeePerGas is the ceiling of every fee cap we sign, in wei
	// (TOLLGATE_TX_MAX_FEE_GWEI, default 1000 gwei). A transaction that
	// needs more stays as it is and raises an alert.
	MaxFeePerGas *big.Int
}

func (p TxPolicy) withDefaults() (TxPolicy, error) {
	if p.StuckAfter < 0 {
		return p, errors.New("chain: StuckAfter must not be negative")
	}
	if p.StuckAfter == 0 {
		p.StuckAfter = DefaultStuckAfter
	}
	if p.BumpPercent == 0 {
		p.BumpPercent = DefaultBumpPercent
	}
	if p.BumpPercent < MinBumpPercent || p.BumpPercent > 1000 {
		return p, fmt.Errorf("chain: the fee bump must be between %d and 1000 percent (nodes refuse replacements under %d %%)",
			MinBumpPercent, MinBumpPercent)
	}
	if p.MaxFeePerGas == nil {
		p.MaxFeePerGas = new(big.Int).Mul(big.NewInt(DefaultMaxFeeGwei), big.NewInt(1e9))
	}
	if p.MaxFeePerGas.Sign() <= 0 {
		return p, errors.New("chain: the fee ceiling must be positive")
	}
	return p, nil
}

// ParseGwei reads a decimal amount of gwei ("1000", "0.05") as wei. More
// than 9 decimals (below one wei) is an error.
func ParseGwei(s string) (*big.Int, error) {
	s = strings.TrimSpace(s)
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || strings.ContainsAny(s, "eE/") {
		return nil, fmt.Errorf("%q is not a decimal amount of gwei", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(1e9))
	if !r.IsInt() {
		return nil, fmt.Errorf("%q gwei is not a whole number of wei", s)
	}
	return new(big.Int).Set(r.Num()), nil
}

// Metrics of the stuck-transaction machinery (RegisterMetrics adds them).
var (
	metricReplaced = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_chain_tx_replacements_total",
		Help: "Transactions replaced with higher fees after TOLLGATE_TX_STUCK_AFTER, by key role."}, []string{"role"})
	metricResent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_chain_tx_resent_total",
		Help: "Recorded transactions sent again because the node no longer knew them (dropped), by key role."}, []string{"role"})
	metricCeiling = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_chain_tx_fee_ceiling_reached_total",
		Help: "Stuck transactions that could not be replaced because of TOLLGATE_TX_MAX_FEE_GWEI (alert on any increase)."}, []string{"role"})
	metricGaps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settlementd_chain_tx_nonce_gaps_filled_total",
		Help: "Nonce gaps of our keys filled with a 0-value self-transfer, by key role."}, []string{"role"})
)

// RegisterMetrics adds the transaction metrics to reg; registering them
// again with the same registry is a no-op.
func RegisterMetrics(reg prometheus.Registerer) {
	for _, c := range []prometheus.Collector{metricReplaced, metricResent, metricCeiling, metricGaps} {
		var dup prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &dup) {
			panic(err)
		}
	}
}

// bump returns x raised by pct percent, rounded up, and by at least 1 wei.
func bump(x *big.Int, pct int64) *big.Int {
	inc := new(big.Int).Mul(x, big.NewInt(pct))
	inc.Add(inc, big.NewInt(99)).Div(inc, big.NewInt(100))
	if inc.Sign() == 0 {
		inc.SetInt64(1)
	}
	return inc.Add(inc, x)
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

// attempt is one signed version of a chain_txs row.
// Ages are measured by PostgreSQL's clock, which also stamped the times, so
// the stuck timer does not depend on the replicas' clocks.
type attempt struct {
	hash common.Hash
	raw  []byte
	age  time.Duration  // since the version was recorded
	sent *time.Duration // since the first broadcast a node accepted; nil: none yet
}

// attempts lists the versions of t, newest first.
func (s *Sender) attempts(ctx context.Context, t *Tx) ([]attempt, error) {
	rows, err := s.cfg.Pool.Query(ctx, `SELECT tx_hash, raw_tx, EXTRACT(EPOCH FROM now() - created_at)::float8,
		EXTRACT(EPOCH FROM now() - sent_at)::float8 FROM chain_tx_attempts WHERE chain_tx_id = $1 ORDER BY id DESC`, t.ID)
	if err != nil {
		return nil, fmt.Errorf("chain: versions of %s: %w", t.Purpose, err)
	}
	defer rows.Close()
	var out []attempt
	for rows.Next() {
		var a attempt
		var h string
		var age float64
		var sent *float64
		if err := rows.Scan(&h, &a.raw, &age, &sent); err != nil {
			return nil, err
		}
		a.hash, a.age = common.HexToHash(h), time.Duration(age*float64(time.Second))
		if sent != nil {
			d := time.Duration(*sent * float64(time.Second))
			a.sent = &d
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 { // cannot happen after 0044; keep working on the row itself
		out = append(out, attempt{hash: t.Hash, raw: t.Raw})
	}
	return out, nil
}

// unstick acts on t, which is not mined and whose nonce is still free. Its
// newest version is sent if no node has accepted it yet (a crash before the
// broadcast, a network error); replaced (when this Sender holds the key) if
// it was accepted StuckAfter ago, or has been refused that long (e.g. an
// underpriced replacement); otherwise sent again, the same bytes, when the
// node dropped it or rebroadcast is set.
func (s *Sender) unstick(ctx context.Context, t *Tx, rebroadcast bool) error {
	vs, err := s.attempts(ctx, t)
	if err != nil {
		return err
	}
	cur := vs[0]
	if cur.hash != t.Hash { // another run replaced it meanwhile
		t.Hash, t.Raw = cur.hash, cur.raw
	}
	signer := s.signers[t.From]
	if cur.sent == nil {
		sendErr := s.broadcast(ctx, t)
		if sendErr == nil || signer == nil || cur.age < s.policy.StuckAfter {
			return sendErr
		}
		if replaced, err := s.replace(ctx, t, signer); err != nil || replaced {
			return err
		}
		return sendErr
	}
	if signer != nil && *cur.sent >= s.policy.StuckAfter {
		replaced, err := s.replace(ctx, t, signer)
		if err != nil || replaced {
			return err
		}
	}
	if !rebroadcast {
		_, _, err := s.cfg.Client.TransactionByHash(ctx, t.Hash)
		if err == nil || !errors.Is(err, ethereum.NotFound) {
			return nil // the node holds it (or could not say): wait
		}
		metricResent.WithLabelValues(t.Role).Inc()
		s.log.Warn("recorded transaction unknown to the node (dropped); sending it again", zap.String("purpose", t.Purpose),
			zap.String("tx", t.Hash.Hex()), zap.Uint64("nonce", t.Nonce), zap.String("from", t.From.Hex()))
	} else {
		s.log.Info("rebroadcasting recorded transaction", zap.String("purpose", t.Purpose), zap.String("tx", t.Hash.Hex()),
			zap.Uint64("nonce", t.Nonce))
	}
	return s.broadcast(ctx, t)
}

// replace signs a copy of t's newest version at the same nonce with fees
// raised by BumpPercent (at least the current market's, at most the
// ceiling), commits it, then broadcasts it. It reports false, with an alert
// the first time, when the ceiling leaves no valid replacement.
func (s *Sender) replace(ctx context.Context, t *Tx, signer *Signer) (bool, error) {
	var old types.Transaction
	if err := old.UnmarshalBinary(t.Raw); err != nil {
		return false, fmt.Errorf("chain: recorded transaction %d is corrupt: %w", t.ID, err)
	}
	freshTip, freshCap, err := s.fees(ctx)
	if err != nil {
		return false, fmt.Errorf("chain: %s: %w", t.Purpose, err)
	}
	tip := bigMax(bump(old.GasTipCap(), s.policy.BumpPercent), freshTip)
	feeCap := bigMin(bigMax(bump(old.GasFeeCap(), s.policy.BumpPercent), freshCap), s.policy.MaxFeePerGas)
	tip = bigMin(tip, feeCap)
	if tip.Cmp(bump(old.GasTipCap(), MinBumpPercent)) < 0 || feeCap.Cmp(bump(old.GasFeeCap(), MinBumpPercent)) < 0 {
		return false, s.ceilingReached(ctx, t, &old)
	}
	signed, err := signer.sign(types.NewTx(&types.DynamicFeeTx{
		ChainID: s.chainID, Nonce: old.Nonce(), GasTipCap: tip, GasFeeCap: feeCap, Gas: old.Gas(), To: old.To(),
		Value: old.Value(), Data: old.Data(),
	}), s.chainID)
	if err != nil {
		return false, fmt.Errorf("chain: signing with the %s key failed", signer.Role())
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return false, err
	}
	newHash := strings.ToLower(signed.Hash().Hex())
	updated := false
	err = pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		if err := Fence(ctx, s.cfg.Fence, tx); err != nil {
			return err
		}
		// Only the newest version is ever replaced, and only while the row
		// is unresolved: a concurrent replacement or a recorded receipt wins.
		tag, err := tx.Exec(ctx, `UPDATE chain_txs SET tx_hash = $3, raw_tx = $4, replacements = replacements + 1
			WHERE id = $1 AND tx_hash = $2 AND state = 'signed'`, t.ID, strings.ToLower(t.Hash.Hex()), newHash, raw)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		updated = true
		_, err = tx.Exec(ctx, `INSERT INTO chain_tx_attempts (chain_tx_id, tx_hash, raw_tx, tip_wei, fee_cap_wei)
			VALUES ($1, $2, $3, $4, $5)`, t.ID, newHash, raw, tip.String(), feeCap.String())
		return err
	})
	if err != nil || !updated {
		return false, err
	}
	oldHash := t.Hash
	t.Hash, t.Raw = signed.Hash(), raw
	metricReplaced.WithLabelValues(t.Role).Inc()
	s.log.Warn("transaction not mined in time; replaced with higher fees", zap.String("purpose", t.Purpose),
		zap.String("from", t.From.Hex()), zap.Uint64("nonce", t.Nonce), zap.String("replaced", oldHash.Hex()),
		zap.String("tx", t.Hash.Hex()), zap.String("tip_wei", tip.String()), zap.String("fee_cap_wei", feeCap.String()))
	if s.hooks.AfterReplace != nil {
		if err := s.hooks.AfterReplace(t); err != nil {
			return true, err
		}
	}
	crashhook.Point("chaintx-before-replace-broadcast")
	if err := s.broadcast(ctx, t); err != nil {
		return true, err
	}
	crashhook.Point("chaintx-after-replace-broadcast")
	return true, nil
}

// ceilingReached raises the fee-ceiling alert once per transaction: an
// error log line and the settlementd_chain_tx_fee_ceiling_reached_total
// counter. The transaction keeps its last version.
func (s *Sender) ceilingReached(ctx context.Context, t *Tx, old *types.Transaction) error {
	tag, err := s.cfg.Pool.Exec(ctx, `UPDATE chain_txs SET fee_ceiling_at = now() WHERE id = $1 AND fee_ceiling_at IS NULL`, t.ID)
	if err != nil {
		return fmt.Errorf("chain: recording the fee ceiling of %s: %w", t.Purpose, err)
	}
	if tag.RowsAffected() > 0 {
		metricCeiling.WithLabelValues(t.Role).Inc()
		s.log.Error("ALERT: stuck transaction at the fee ceiling; raise TOLLGATE_TX_MAX_FEE_GWEI or wait for fees to fall",
			zap.String("purpose", t.Purpose), zap.String("from", t.From.Hex()), zap.Uint64("nonce", t.Nonce),
			zap.String("tx", t.Hash.Hex()), zap.String("fee_cap_wei", old.GasFeeCap().String()),
			zap.String("ceiling_wei", s.policy.MaxFeePerGas.String()))
	}
	return nil
}

// fillGaps finds, for every key this Sender holds, the nonces between the
// account's mined nonce and our highest unmined transaction that no
// transaction of ours uses (a transaction of someone else's that the pool
// dropped, a restored database): everything of ours above such a gap can
// never be mined. Each gap gets a 0-value self-transfer, recorded and sent
// like any intent.
func (s *Sender) fillGaps(ctx context.Context) error {
	var errs []error
	for _, signer := range s.signers {
		addr := strings.ToLower(signer.Address().Hex())
		var top *int64
		if err := s.cfg.Pool.QueryRow(ctx, `SELECT max(nonce) FROM chain_txs WHERE chain_id = $1 AND from_addr = $2 AND state = 'signed'`,
			int64(s.cfg.ChainID), addr).Scan(&top); err != nil {
			errs = append(errs, err)
			continue
		}
		if top == nil {
			continue
		}
		latest, err := s.cfg.Client.NonceAt(ctx, signer.Address(), nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("chain: nonce of %s: %w", signer, err))
			continue
		}
		if latest >= uint64(*top) {
			continue
		}
		used := map[uint64]bool{}
		rows, err := s.cfg.Pool.Query(ctx, `SELECT nonce FROM chain_txs WHERE chain_id = $1 AND from_addr = $2 AND nonce >= $3 AND nonce < $4`,
			int64(s.cfg.ChainID), addr, int64(latest), *top)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for rows.Next() {
			var n int64
			if err := rows.Scan(&n); err != nil {
				errs = append(errs, err)
			}
			used[uint64(n)] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			errs = append(errs, err)
			continue
		}
		for n := latest; n < uint64(*top); n++ {
			if used[n] {
				continue
			}
			if err := s.fill(ctx, signer, n); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// fill records and sends a self-transfer at nonce n unless a transaction of
// ours already uses it (checked under the nonce lock Submit takes).
func (s *Sender) fill(ctx context.Context, signer *Signer, n uint64) error {
	from := signer.Address()
	addr := strings.ToLower(from.Hex())
	tip, feeCap, err := s.fees(ctx)
	if err != nil {
		return fmt.Errorf("chain: nonce gap %d of %s: %w", n, signer, err)
	}
	signed, err := signer.sign(types.NewTx(&types.DynamicFeeTx{
		ChainID: s.chainID, Nonce: n, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &from,
	}), s.chainID)
	if err != nil {
		return fmt.Errorf("chain: signing with the %s key failed", signer.Role())
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return err
	}
	var t *Tx
	err = pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		if err := Fence(ctx, s.cfg.Fence, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, nonceLockNS,
			fmt.Sprintf("%d:%s", s.cfg.ChainID, addr)); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM chain_txs WHERE chain_id = $1 AND from_addr = $2 AND nonce = $3)`,
			int64(s.cfg.ChainID), addr, int64(n)).Scan(&used); err != nil || used {
			return err
		}
		t, err = s.insert(ctx, tx, signer, Intent{Purpose: fmt.Sprintf("nonce-fill:%s:%d", addr, n), Kind: KindNonceFill, To: from, Data: []byte{}},
			n, 21_000, signed, raw, tip, feeCap)
		return err
	})
	if err != nil || t == nil {
		return err
	}
	metricGaps.WithLabelValues(signer.Role()).Inc()
	s.log.Warn("nonce gap filled with a self-transfer", zap.String("from", from.Hex()), zap.Uint64("nonce", n),
		zap.String("tx", t.Hash.Hex()))
	return s.broadcast(ctx, t)
}
