// Package settle is the settlement job (every 5 minutes on the leader). It
// forwards revenue from the treasury and raises the nodes' on-chain claimable
// allocations:
//
//  1. plan: every CLOSED epoch not yet in a batch and past the hold joins a
//     new settlement batch (one at a time: while a batch is unforwarded,
//     later epochs wait and join the next one). The batch fixes, in base
//     units, the node operators' credited shares (node_earnings kind
//     epoch_share, net of shares withheld for evidence), the platform share
//     and the pool share of its epochs. The hold keeps recent epochs — node
//     shares and all — in escrow, so that evidence of a lie within the
//     lookback still finds them unsettled and withholds the liar's share
//     (package epochs); a settled epoch is final;
//  2. forward: from the treasury key, USDT transfer of the node share to
//     ClaimsContract, the platform share to the platform wallet, the pool
//     share to the pool wallet. The batch is 'forwarded' when all three are
//     mined;
//  3. allocate: for every node whose cumulative credited earnings in
//     forwarded batches exceed its on-chain allocation, from the relayer key
//     (CLAIM_CREATOR_ROLE): setNodeWallet when the node's wallet (nodes
//     table) is not yet bound on chain, then createClaim(nodeId, cumulative,
//     deadline). Funds always reach the contract before allocations rise,
//     so the contract stays solvent.
//
// Every transaction goes through chain.Sender: recorded (signed bytes, nonce,
// hash) before it is broadcast, keyed by a purpose ("settle:<batch>:claims",
// "wallet:<node>:<wallet>", "alloc:<node>:<cumulative>"), so a crash or a
// rerun never builds a second transaction for the same thing, and a restart
// finishes what was started (rebroadcasting the same bytes if needed).
package settle

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Defaults.
const (
	DefaultClaimDeadline  = time.Hour
	DefaultReceiptTimeout = 2 * time.Minute
)

// Config of the settlement job. Zero values take the defaults.
type Config struct {
	Pool   *pgxpool.Pool // required
	Client chain.Backend // required: the chain-137 RPC
	// ChainID transactions are signed for (default 137).
	ChainID uint64
	USDT    common.Address // required: the USDT token (6 decimals)
	Claims  common.Address // required: ClaimsContract
	// PlatformWallet and PoolWallet receive the platform (30%) and pool
	// (20%) shares. Required.
	PlatformWallet common.Address
	PoolWallet     common.Address
	// Treasury sends the transfers (it receives the RevenueVault deposits).
	// Relayer holds CLAIM_CREATOR_ROLE and sends setNodeWallet/createClaim.
	// Required; build them with chain.ParseSigner from the environment.
	Treasury *chain.Signer
	Relayer  *chain.Signer
	// ClaimDeadline is how long a createClaim transaction stays valid (its
	// deadline argument; default 1 h). A stuck one that expires reverts and
	// is retried with a new deadline.
	ClaimDeadline time.Duration
	// ReceiptTimeout bounds how long one run waits for its transactions
	// (default 2 min); the next run continues with whatever is still pending.
	ReceiptTimeout time.Duration
	PollInterval   time.Duration  // receipt polling (default 1 s)
	Confirmations  uint64         // receipt depth for "mined" (default 1)
	MaxAttempts    int            // reverted attempts per purpose before giving up (default 3)
	TxPolicy       chain.TxPolicy // fee ceiling and stuck-transaction replacement (chain defaults)
	Fence          chain.Fencer   // nil: no leader fencing
	Log            *zap.Logger
	Now            func() time.Time
	// Hold keeps closed epochs out of batches while evidence may still
	// withhold from them: an epoch joins a batch only once every epoch up
	// to its end + Hold has closed (those closes applied all evidence dated
	// up to then) and no stored evidence not yet applied (booked into the
	// open epoch or later) reaches back to it (its ts − Hold, or its
	// suspect_since). Set it to at least the closer's evidence lookback
	// (the configuration defaults it to the lookback). 0: no hold, every
	// CLOSED epoch joins the next batch.
	Hold time.Duration
}

// Job is the "settlement" job.
type Job struct {
	cfg     Config
	sender  *chain.Sender
	log     *zap.Logger
	usdt    *testusdt.TestUSDT // ERC-20 ABI (transfer, balanceOf)
	claims  *claimscontract.ClaimsContract
	usdtC   *bind.BoundContract
	claimsC *bind.BoundContract

	running sync.Mutex // one pass at a time: the schedule and an admin trigger
}

// New checks cfg and returns the job.
func New(cfg Config) (*Job, error) {
	var errs []error
	if cfg.Pool == nil || cfg.Client == nil {
		errs = append(errs, errors.New("Pool and Client are required"))
	}
	for name, a := range map[string]common.Address{"USDT": cfg.USDT, "Claims": cfg.Claims,
		"PlatformWallet": cfg.PlatformWallet, "PoolWallet": cfg.PoolWallet} {
		if a == (common.Address{}) {
			errs = append(errs, fmt.Errorf("%s address is required", name))
		}
	}
	if cfg.Treasury == nil || cfg.Relayer == nil {
		errs = append(errs, errors.New("the treasury and relayer keys are required"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("settle: %w", errors.Join(errs...))
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = 137
	}
	if cfg.ClaimDeadline <= 0 {
		cfg.ClaimDeadline = DefaultClaimDeadline
	}
	if cfg.ReceiptTimeout <= 0 {
		cfg.ReceiptTimeout = DefaultReceiptTimeout
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	sender, err := chain.NewSender(chain.SenderConfig{Pool: cfg.Pool, Client: cfg.Client, ChainID: cfg.ChainID, Fence: cfg.Fence,
		Confirmations: cfg.Confirmations, PollInterval: cfg.PollInterval, MaxAttempts: cfg.MaxAttempts, Log: cfg.Log,
		Policy: cfg.TxPolicy, Signers: []*chain.Signer{cfg.Treasury, cfg.Relayer}})
	if err != nil {
		return nil, err
	}
	j := &Job{cfg: cfg, sender: sender, log: cfg.Log.Named("settle"),
		usdt: testusdt.NewTestUSDT(), claims: claimscontract.NewClaimsContract()}
	j.usdtC = j.usdt.Instance(cfg.Client, cfg.USDT)
	j.claimsC = j.claims.Instance(cfg.Client, cfg.Claims)
	return j, nil
}

// Name implements jobs.Job.
func (j *Job) Name() string { return "settlement" }

// Sender is the job's transaction sender (crash tests install hooks on it).
func (j *Job) Sender() *chain.Sender { return j.sender }

// Run is one settlement pass. Safe to repeat and to cut short anywhere.
func (j *Job) Run(ctx context.Context) error {
	j.running.Lock()
	defer j.running.Unlock()
	// First finish whatever an earlier run (or a crashed process) started.
	if err := j.sender.ResolvePending(ctx); err != nil {
		return fmt.Errorf("settle: resolving pending transactions: %w", err)
	}
	if err := j.plan(ctx); err != nil {
		return err
	}
	forwarded, err := j.forward(ctx)
	if err != nil {
		return err
	}
	if !forwarded {
		return nil // transfers still pending: allocations wait for them
	}
	return j.allocate(ctx)
}

// planSQL lists the epochs the next batch takes, in order: CLOSED, in no
// batch, and past the hold ($1 ms; see Config.Hold). The frontier is the
// start of the open epoch (the end of the newest closed one when there is
// none): everything before it is closed, with its evidence applied.
// Taking every epoch up to one cut keeps a batch's epochs consecutive.
const planSQL = `
WITH o AS (SELECT id, starts_at FROM epochs WHERE state = 'open'),
cut AS (
	SELECT CASE WHEN $1::bigint <= 0 THEN 'infinity'::timestamptz ELSE LEAST(
		COALESCE((SELECT starts_at FROM o), (SELECT max(ends_at) FROM epochs)) - $1::bigint * interval '1 millisecond',
		(SELECT min(LEAST(ev.ts - $1::bigint * interval '1 millisecond', COALESCE(ev.suspect_since, ev.ts)))
			FROM node_evidence ev WHERE ev.booked_epoch >= (SELECT id FROM o))) END AS at)
SELECT COALESCE(array_agg(e.id ORDER BY e.id), '{}') FROM epochs e, cut
WHERE e.state = 'CLOSED' AND e.ends_at <= cut.at AND NOT EXISTS (SELECT 1 FROM settled_epochs s WHERE s.epoch_id = e.id)`

// plan puts the closed, unsettled epochs past the hold into a new batch,
// unless a batch is still being forwarded.
func (j *Job) plan(ctx context.Context) error {
	return pgx.BeginFunc(ctx, j.cfg.Pool, func(tx pgx.Tx) error {
		if err := chain.Fence(ctx, j.cfg.Fence, tx); err != nil {
			return err
		}
		// Shared Booking lock: an epoch close (exclusive), which may
		// withhold shares of unsettled epochs, is either committed before
		// this plan reads them or sees them in settled_epochs (final).
		if err := pglock.XactShared(ctx, tx, pglock.Booking); err != nil {
			return err
		}
		var open bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM settlement_batches WHERE chain_id = $1 AND state = 'open')`,
			int64(j.cfg.ChainID)).Scan(&open); err != nil {
			return err
		}
		if open {
			return nil
		}
		var ids []int64
		if err := tx.QueryRow(ctx, planSQL, j.cfg.Hold.Milliseconds()).Scan(&ids); err != nil {
			return fmt.Errorf("settle: listing closed epochs: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		var (
			n                       int
			first, last             *int64
			claims, platform, poolU int64
		)
		// The node shares are the epochs' net epoch_share earnings: a share
		// withheld after its epoch closed is a credit and its reversal.
		err := tx.QueryRow(ctx, `
			SELECT count(*), min(id), max(id),
				COALESCE((SELECT sum(ne.amount_units) FROM node_earnings ne
					WHERE ne.kind = 'epoch_share' AND ne.epoch_id = ANY($1)), 0)::bigint,
				COALESCE(sum(platform_units + platform_operators_units), 0)::bigint, COALESCE(sum(pool_units), 0)::bigint
			FROM epochs WHERE id = ANY($1)`, ids).Scan(&n, &first, &last, &claims, &platform, &poolU)
		if err != nil {
			return fmt.Errorf("settle: summing closed epochs: %w", err)
		}
		state := "open"
		if claims == 0 && platform == 0 && poolU == 0 {
			state = "forwarded" // nothing to move (epochs without revenue)
		}
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO settlement_batches (chain_id, first_epoch, last_epoch, epochs, claims_units,
				platform_units, pool_units, state, forwarded_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $8 = 'forwarded' THEN now() END) RETURNING id`,
			int64(j.cfg.ChainID), *first, *last, n, claims, platform, poolU, state).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO settled_epochs (epoch_id, batch_id)
			SELECT unnest($2::bigint[]), $1`, id, ids); err != nil {
			return err
		}
		j.log.Info("settlement batch planned", zap.Int64("batch", id), zap.Int64("first_epoch", *first), zap.Int64("last_epoch", *last),
			zap.Int("epochs", n), zap.Int64("claims_units", claims), zap.Int64("platform_units", platform), zap.Int64("pool_units", poolU))
		return nil
	})
}

type batch struct {
	id                     int64
	claims, platform, pool money.Units
}

type leg struct {
	name   string
	to     common.Address
	amount money.Units
}

// forward sends the open batches' transfers, oldest first. It reports
// whether every batch is forwarded.
func (j *Job) forward(ctx context.Context) (bool, error) {
	rows, err := j.cfg.Pool.Query(ctx, `SELECT id, claims_units, platform_units, pool_units FROM settlement_batches
		WHERE chain_id = $1 AND state = 'open' ORDER BY id`, int64(j.cfg.ChainID))
	if err != nil {
		return false, err
	}
	var open []batch
	for rows.Next() {
		var b batch
		var c, p, q int64
		if err := rows.Scan(&b.id, &c, &p, &q); err != nil {
			rows.Close()
			return false, err
		}
		b.claims, b.platform, b.pool = money.Units(c), money.Units(p), money.Units(q)
		open = append(open, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, b := range open {
		done, err := j.forwardBatch(ctx, b)
		if err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

func (j *Job) forwardBatch(ctx context.Context, b batch) (bool, error) {
	var legs []leg
	for _, l := range []leg{{"claims", j.cfg.Claims, b.claims}, {"platform", j.cfg.PlatformWallet, b.platform}, {"pool", j.cfg.PoolWallet, b.pool}} {
		if l.amount > 0 {
			legs = append(legs, l)
		}
	}
	purpose := func(l leg) string { return fmt.Sprintf("settle:%d:%s", b.id, l.name) }

	// The treasury must hold what is still to be sent; otherwise nothing is
	// sent (a transfer that would revert costs gas and proves nothing).
	var need money.Units
	for _, l := range legs {
		last, err := j.sender.Last(ctx, purpose(l))
		if err != nil {
			return false, err
		}
		if last == nil || last.State == chain.StateFailed {
			need += l.amount
		}
	}
	if need > 0 {
		bal, err := j.balance(ctx, j.cfg.Treasury.Address())
		if err != nil {
			return false, err
		}
		if bal < need {
			return false, fmt.Errorf("settle: batch %d: the treasury %s holds %s USDT, %s USDT still to send",
				b.id, j.cfg.Treasury.Address().Hex(), bal.Decimal(), need.Decimal())
		}
	}

	txs := make([]*chain.Tx, 0, len(legs))
	for _, l := range legs {
		t, err := j.sender.Submit(ctx, j.cfg.Treasury, chain.Intent{
			Purpose: purpose(l), Kind: chain.KindTransfer, To: j.cfg.USDT, Data: j.usdt.PackTransfer(l.to, l.amount.Big()),
			Recipient: l.to, Amount: l.amount, Unpack: j.usdt.UnpackError,
		})
		if err != nil {
			return false, fmt.Errorf("settle: batch %d %s transfer: %w", b.id, l.name, err)
		}
		txs = append(txs, t)
	}
	all, err := j.sender.Await(ctx, txs, j.cfg.ReceiptTimeout)
	if err != nil {
		return false, err
	}
	if !all {
		j.log.Info("settlement transfers not mined yet; continuing next run", zap.Int64("batch", b.id))
		return false, nil
	}
	for _, t := range txs {
		if t.State != chain.StateMined {
			// Reverted: the next run builds a new attempt (up to MaxAttempts).
			return false, fmt.Errorf("settle: batch %d: %s ended %s (tx %s)", b.id, t.Purpose, t.State, t.Hash.Hex())
		}
	}
	if _, err := j.cfg.Pool.Exec(ctx, `UPDATE settlement_batches SET state = 'forwarded', forwarded_at = now()
		WHERE id = $1 AND state = 'open'`, b.id); err != nil {
		return false, err
	}
	j.log.Info("settlement batch forwarded", zap.Int64("batch", b.id), zap.Int64("claims_units", int64(b.claims)),
		zap.Int64("platform_units", int64(b.platform)), zap.Int64("pool_units", int64(b.pool)))
	return true, nil
}

func (j *Job) balance(ctx context.Context, who common.Address) (money.Units, error) {
	b, err := bind.Call(j.usdtC, &bind.CallOpts{Context: ctx}, j.usdt.PackBalanceOf(who), j.usdt.UnpackBalanceOf)
	if err != nil {
		return 0, fmt.Errorf("settle: USDT balanceOf %s: %w", who.Hex(), err)
	}
	return money.FromBig(b)
}

// allocationsSQL: per node, the cumulative credited earnings of forwarded
// batches (the target allocation), what is allocated on chain by our mined
// createClaims, the node's registered wallet and the wallet we last bound.
const allocationsSQL = `
WITH targets AS (
	SELECT ne.node_id, sum(ne.amount_units)::bigint AS target
	FROM node_earnings ne
	JOIN settled_epochs se ON se.epoch_id = ne.epoch_id
	JOIN settlement_batches b ON b.id = se.batch_id AND b.state = 'forwarded' AND b.chain_id = $1
	WHERE ne.kind = 'epoch_share'
	GROUP BY ne.node_id)
SELECT t.node_id, t.target, COALESCE(a.allocated_units, 0), COALESCE(n.wallet, ''),
	COALESCE((SELECT c.recipient FROM chain_txs c WHERE c.chain_id = $1 AND c.kind = 'set_node_wallet'
		AND c.node_id = t.node_id AND c.state = 'mined' ORDER BY c.id DESC LIMIT 1), '')
FROM targets t
LEFT JOIN node_allocations a ON a.node_id = t.node_id
LEFT JOIN nodes n ON n.node_id = t.node_id
ORDER BY t.node_id`

// allocate binds wallets and raises allocations to the forwarded earnings.
func (j *Job) allocate(ctx context.Context) error {
	rows, err := j.cfg.Pool.Query(ctx, allocationsSQL, int64(j.cfg.ChainID))
	if err != nil {
		return fmt.Errorf("settle: reading node targets: %w", err)
	}
	type node struct {
		id                  string
		target, allocated   int64
		wallet, boundWallet string
	}
	var nodes []node
	for rows.Next() {
		var n node
		if err := rows.Scan(&n.id, &n.target, &n.allocated, &n.wallet, &n.boundWallet); err != nil {
			rows.Close()
			return err
		}
		nodes = append(nodes, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	deadline := new(big.Int).SetInt64(j.cfg.Now().Add(j.cfg.ClaimDeadline).Unix())
	var txs []*chain.Tx
	var errs []error
	for _, n := range nodes {
		if n.wallet != "" {
			if w, err := ethparse.Address(n.wallet); err != nil {
				j.log.Warn("node wallet is not an address; not bound", zap.String("node", n.id))
			} else if !strings.EqualFold(w.Hex(), n.boundWallet) && !j.boundOnChain(ctx, n.id, w) {
				t, err := j.sender.Submit(ctx, j.cfg.Relayer, chain.Intent{
					Purpose: fmt.Sprintf("wallet:%s:%s", n.id, strings.ToLower(w.Hex())), Kind: chain.KindSetNodeWallet,
					To: j.cfg.Claims, Data: j.claims.PackSetNodeWallet(n.id, w), Recipient: w, NodeID: n.id, Unpack: j.claims.UnpackError,
				})
				if err != nil {
					errs = append(errs, fmt.Errorf("settle: setNodeWallet %s: %w", n.id, err))
					continue
				}
				txs = append(txs, t)
			}
		}
		if n.target <= n.allocated {
			continue
		}
		onchain, err := bind.Call(j.claimsC, &bind.CallOpts{Context: ctx}, j.claims.PackAllocation(n.id), j.claims.UnpackAllocation)
		if err != nil {
			errs = append(errs, fmt.Errorf("settle: allocation(%s): %w", n.id, err))
			continue
		}
		if onchain.Cmp(big.NewInt(n.target)) >= 0 {
			// Already there (raising it again would revert on a decrease).
			if onchain.Cmp(big.NewInt(n.target)) > 0 {
				j.log.Warn("on-chain allocation above our books", zap.String("node", n.id), zap.String("onchain", onchain.String()),
					zap.Int64("target", n.target))
			}
			continue
		}
		t, err := j.sender.Submit(ctx, j.cfg.Relayer, chain.Intent{
			Purpose: fmt.Sprintf("alloc:%s:%d", n.id, n.target), Kind: chain.KindCreateClaim, To: j.cfg.Claims,
			Data: j.claims.PackCreateClaim(n.id, big.NewInt(n.target), deadline), NodeID: n.id, Amount: money.Units(n.target),
			Unpack: j.claims.UnpackError,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("settle: createClaim %s: %w", n.id, err))
			continue
		}
		txs = append(txs, t)
	}
	if len(txs) > 0 {
		all, err := j.sender.Await(ctx, txs, j.cfg.ReceiptTimeout)
		if err != nil {
			errs = append(errs, err)
		} else if !all {
			j.log.Info("allocation transactions not mined yet; continuing next run", zap.Int("transactions", len(txs)))
		}
		for _, t := range txs {
			switch t.State {
			case chain.StateMined:
				j.log.Info("node allocation transaction mined", zap.String("purpose", t.Purpose), zap.String("tx", t.Hash.Hex()))
			case chain.StateFailed, chain.StateConflict:
				errs = append(errs, fmt.Errorf("settle: %s ended %s (tx %s)", t.Purpose, t.State, t.Hash.Hex()))
			}
		}
	}
	return errors.Join(errs...)
}

// boundOnChain reports whether the contract already maps node to wallet
// (bound outside our records, e.g. before a database restore), which makes
// a setNodeWallet pointless. A failed read answers false: binding again is
// harmless.
func (j *Job) boundOnChain(ctx context.Context, node string, wallet common.Address) bool {
	w, err := bind.Call(j.claimsC, &bind.CallOpts{Context: ctx}, j.claims.PackNodeWallet(node), j.claims.UnpackNodeWallet)
	return err == nil && w == wallet
}
