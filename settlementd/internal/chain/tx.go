package chain

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
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/crashhook"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Transaction kinds recorded in chain_txs.
const (
	KindTransfer      = "usdt_transfer"
	KindSetNodeWallet = "set_node_wallet"
	KindCreateClaim   = "create_claim"
	KindPause         = "pause"
	KindUnpause       = "unpause"
	KindX402Settle    = "x402_transfer_with_authorization"
	KindBatchDeposit  = "x402_batch_settlement_deposit"
	KindBatchClaim    = "x402_batch_settlement_claim_settle"
	KindBatchRefund   = "x402_batch_settlement_refund"
)

// Transaction states (see migration 0011).
const (
	StateSigned   = "signed"
	StateMined    = "mined"
	StateFailed   = "failed"
	StateConflict = "conflict"
)

var (
	// ErrConflict: the purpose's transaction can never be mined because its
	// nonce was used by a transaction we did not record. An operator must look
	// (it may have been a manual replacement that did the same thing) and
	// resolve the row; until then the purpose is blocked, never retried.
	ErrConflict = errors.New("chain: nonce consumed by an unrecorded transaction; operator action needed")
	// ErrGaveUp: the purpose's transactions reverted MaxAttempts times.
	ErrGaveUp = errors.New("chain: transaction reverted too many times; operator action needed")
)

// Intent is one thing to do on chain. Purpose is its idempotency key: while
// a transaction for it is signed, mined or in conflict, Submit returns that
// one instead of building another.
type Intent struct {
	Purpose   string
	Kind      string
	To        common.Address // the contract called
	Data      []byte
	Recipient common.Address // who receives tokens (records only; zero: none)
	NodeID    string         // records only
	Amount    money.Units    // tokens moved or allocation set (records only; 0: none)
	// Unpack decodes the contract's custom errors (a binding's UnpackError),
	// so a call that would revert is reported by name. Optional.
	Unpack revert.Unpacker
}

// Tx is a recorded transaction.
type Tx struct {
	ID          int64
	Purpose     string
	Kind        string
	Role        string
	From, To    common.Address
	NodeID      string
	Amount      money.Units
	Nonce       uint64
	Hash        common.Hash
	Raw         []byte
	State       string
	BlockNumber uint64
}

// Done reports whether the transaction's outcome is final.
func (t *Tx) Done() bool { return t.State != StateSigned }

// SenderConfig configures a Sender. Zero values take the defaults.
type SenderConfig struct {
	Pool    *pgxpool.Pool // required
	Client  Backend       // required
	ChainID uint64        // required: transactions are signed for it
	Fence   Fencer        // nil: no leader fencing
	// Confirmations a receipt needs before the transaction counts as mined
	// (default 1: included in a block).
	Confirmations uint64
	// PollInterval paces receipt polling in Await (default 1s).
	PollInterval time.Duration
	// MaxAttempts bounds how often one purpose is retried after reverting (default 3).
	MaxAttempts int
	// Policy prices transactions and unsticks them (replace.go).
	Policy TxPolicy
	// Signers are the keys whose stuck transactions this Sender may
	// replace and whose nonce gaps it fills. A pending transaction of
	// another key is only tracked and rebroadcast (its own Sender, e.g. the
	// solvency job's for the governor, replaces it).
	Signers []*Signer
	Log     *zap.Logger
}

// Hooks let crash tests stop a Sender at the dangerous moments. Returning an
// error aborts Submit there, as a crash would (the row stays committed).
type Hooks struct {
	AfterCommit    func(*Tx) error // row committed, not yet broadcast
	AfterBroadcast func(*Tx) error // broadcast, outcome not yet recorded
	AfterReplace   func(*Tx) error // a replacement committed, not yet broadcast
}

// Sender signs, records and broadcasts transactions so that a crash at any
// point never leads to a second transaction for the same intent:
//
//  1. the signed transaction (nonce, raw bytes, hash) is committed to
//     chain_txs BEFORE it is broadcast;
//  2. after a restart, Resolve finds the row by hash: mined → recorded;
//     not mined and its nonce still free → the SAME bytes are rebroadcast;
//     nonce used by something else → conflict, for an operator;
//  3. a new transaction for a purpose is only built when every previous one
//     reverted on chain (failed), which proves it did nothing.
//
// Nonces are allocated under a per-sender advisory lock from max(our highest
// recorded nonce + 1, the node's pending nonce); UNIQUE(chain, from, nonce)
// is the backstop. The keys must be used by settlementd only.
type Sender struct {
	cfg     SenderConfig
	policy  TxPolicy
	signers map[common.Address]*Signer
	chainID *big.Int
	log     *zap.Logger
	hooks   Hooks
}

// NewSender checks cfg and returns a Sender.
func NewSender(cfg SenderConfig) (*Sender, error) {
	if cfg.Pool == nil || cfg.Client == nil || cfg.ChainID == 0 {
		return nil, errors.New("chain: Sender needs Pool, Client and ChainID")
	}
	if cfg.Confirmations == 0 {
		cfg.Confirmations = 1
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	policy, err := cfg.Policy.withDefaults()
	if err != nil {
		return nil, err
	}
	signers := map[common.Address]*Signer{}
	for _, k := range cfg.Signers {
		if k != nil {
			signers[k.Address()] = k
		}
	}
	return &Sender{cfg: cfg, policy: policy, signers: signers, chainID: new(big.Int).SetUint64(cfg.ChainID),
		log: cfg.Log.Named("chaintx")}, nil
}

// SetHooks installs crash-test hooks.
func (s *Sender) SetHooks(h Hooks) { s.hooks = h }

// nonceLockNS is the advisory-lock namespace for per-sender nonce allocation
// ("TxNc"); the second key is hashtext(chain:address).
const nonceLockNS int32 = 0x54784e63

const txColumns = `id, purpose, kind, role, from_addr, to_addr, COALESCE(node_id, ''), COALESCE(amount_units, 0),
	nonce, tx_hash, raw_tx, state, COALESCE(block_number, 0)`

func scanTx(row pgx.Row) (*Tx, error) {
	var (
		t                      Tx
		from, to, hash         string
		amount, nonce, blockNo int64
	)
	if err := row.Scan(&t.ID, &t.Purpose, &t.Kind, &t.Role, &from, &to, &t.NodeID, &amount, &nonce, &hash, &t.Raw, &t.State, &blockNo); err != nil {
		return nil, err
	}
	t.From, t.To, t.Hash = common.HexToAddress(from), common.HexToAddress(to), common.HexToHash(hash)
	t.Amount, t.Nonce, t.BlockNumber = money.Units(amount), uint64(nonce), uint64(blockNo)
	return &t, nil
}

// live returns the purpose's signed, mined or conflicting transaction, or nil.
func (s *Sender) live(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, purpose string) (*Tx, error) {
	t, err := scanTx(q.QueryRow(ctx, `SELECT `+txColumns+` FROM chain_txs
		WHERE chain_id = $1 AND purpose = $2 AND state <> 'failed'`, int64(s.cfg.ChainID), purpose))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return t, err
}

// Last returns the purpose's most recent transaction (any state), or nil.
func (s *Sender) Last(ctx context.Context, purpose string) (*Tx, error) {
	t, err := scanTx(s.cfg.Pool.QueryRow(ctx, `SELECT `+txColumns+` FROM chain_txs
		WHERE chain_id = $1 AND purpose = $2 ORDER BY id DESC LIMIT 1`, int64(s.cfg.ChainID), purpose))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return t, err
}

// Submit makes sure a transaction for in.Purpose exists: it returns the live
// one if there is one (in any state but failed; ErrConflict for a conflict),
// else builds, records and broadcasts a new one from signer. A broadcast
// error is returned after the row is committed; Resolve retries it.
func (s *Sender) Submit(ctx context.Context, signer *Signer, in Intent) (*Tx, error) {
	if in.Purpose == "" || in.Kind == "" {
		return nil, errors.New("chain: intent without purpose or kind")
	}
	if t, err := s.live(ctx, s.cfg.Pool, in.Purpose); err != nil || t != nil {
		if t != nil && t.State == StateConflict {
			return t, fmt.Errorf("%s: %w", in.Purpose, ErrConflict)
		}
		return t, err
	}
	var failed int
	if err := s.cfg.Pool.QueryRow(ctx, `SELECT count(*) FROM chain_txs WHERE chain_id = $1 AND purpose = $2 AND state = 'failed'`,
		int64(s.cfg.ChainID), in.Purpose).Scan(&failed); err != nil {
		return nil, err
	}
	if failed >= s.cfg.MaxAttempts {
		return nil, fmt.Errorf("%s: %d attempts reverted: %w", in.Purpose, failed, ErrGaveUp)
	}

	from := signer.Address()
	// Estimation executes the call, so a call that would revert (missing
	// role, insufficient balance) fails here, before anything is recorded.
	gas, err := s.cfg.Client.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &in.To, Data: in.Data})
	if err != nil {
		if reason, derr := revert.Decode(err, in.Unpack); derr == nil {
			return nil, fmt.Errorf("chain: %s would revert: %T%+v: %w", in.Purpose, reason, reason, err)
		}
		return nil, fmt.Errorf("chain: %s: estimating gas: %w", in.Purpose, err)
	}
	gas += gas / 4 // headroom: state may change between estimate and inclusion
	tip, feeCap, err := s.fees(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain: %s: %w", in.Purpose, err)
	}

	var t *Tx
	existing := false
	err = pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		if err := Fence(ctx, s.cfg.Fence, tx); err != nil {
			return err
		}
		addr := strings.ToLower(from.Hex())
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, nonceLockNS,
			fmt.Sprintf("%d:%s", s.cfg.ChainID, addr)); err != nil {
			return err
		}
		// Re-check under the lock: another run may have recorded it meanwhile.
		if t, err = s.live(ctx, tx, in.Purpose); err != nil || t != nil {
			existing = t != nil
			return err
		}
		var dbNext int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(nonce) + 1, 0) FROM chain_txs WHERE chain_id = $1 AND from_addr = $2`,
			int64(s.cfg.ChainID), addr).Scan(&dbNext); err != nil {
			return err
		}
		nonce, err := s.cfg.Client.PendingNonceAt(ctx, from)
		if err != nil {
			return fmt.Errorf("chain: pending nonce of %s: %w", signer, err)
		}
		nonce = max(nonce, uint64(dbNext))
		signed, err := signer.sign(types.NewTx(&types.DynamicFeeTx{
			ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &in.To, Data: in.Data,
		}), s.chainID)
		if err != nil {
			return fmt.Errorf("chain: signing with the %s key failed", signer.Role())
		}
		raw, err := signed.MarshalBinary()
		if err != nil {
			return err
		}
		t, err = s.insert(ctx, tx, signer, in, nonce, gas, signed, raw, tip, feeCap)
		return err
	})
	if err != nil {
		return nil, err
	}
	if existing {
		if t.State == StateConflict {
			return t, fmt.Errorf("%s: %w", in.Purpose, ErrConflict)
		}
		return t, nil
	}
	s.log.Info("transaction recorded", zap.String("purpose", t.Purpose), zap.String("role", t.Role),
		zap.String("from", t.From.Hex()), zap.Uint64("nonce", t.Nonce), zap.String("tx", t.Hash.Hex()),
		zap.Int64("amount_units", int64(t.Amount)))
	if s.hooks.AfterCommit != nil {
		if err := s.hooks.AfterCommit(t); err != nil {
			return t, err
		}
	}
	crashhook.Point("chaintx-before-broadcast")
	if err := s.broadcast(ctx, t); err != nil {
		return t, err
	}
	if s.hooks.AfterBroadcast != nil {
		if err := s.hooks.AfterBroadcast(t); err != nil {
			return t, err
		}
	}
	crashhook.Point("chaintx-after-broadcast")
	return t, nil
}

// insert records a signed transaction and its first version.
func (s *Sender) insert(ctx context.Context, tx pgx.Tx, signer *Signer, in Intent, nonce, gas uint64, signed *types.Transaction,
	raw []byte, tip, feeCap *big.Int) (*Tx, error) {
	var recipient, node, amount any
	if in.Recipient != (common.Address{}) {
		recipient = strings.ToLower(in.Recipient.Hex())
	}
	if in.NodeID != "" {
		node = in.NodeID
	}
	if in.Amount != 0 {
		amount = int64(in.Amount)
	}
	hash := strings.ToLower(signed.Hash().Hex())
	t, err := scanTx(tx.QueryRow(ctx, `INSERT INTO chain_txs (chain_id, purpose, kind, role, from_addr, to_addr, recipient,
			node_id, amount_units, nonce, gas_limit, calldata, raw_tx, tx_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		RETURNING `+txColumns,
		int64(s.cfg.ChainID), in.Purpose, in.Kind, signer.Role(), strings.ToLower(signer.Address().Hex()), strings.ToLower(in.To.Hex()),
		recipient, node, amount, int64(nonce), int64(gas), in.Data, raw, hash))
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chain_tx_attempts (chain_tx_id, tx_hash, raw_tx, tip_wei, fee_cap_wei) VALUES ($1, $2, $3, $4, $5)`,
		t.ID, hash, raw, tip.String(), feeCap.String()); err != nil {
		return nil, err
	}
	return t, nil
}

// fees picks EIP-1559 fees: the node's suggested tip, and a cap of twice
// the current base fee plus the tip, so the transaction stays includable
// through a few blocks of rising base fee; neither above the policy's
// ceiling.
func (s *Sender) fees(ctx context.Context) (tip, feeCap *big.Int, err error) {
	tip, err = s.cfg.Client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("suggesting a gas tip: %w", err)
	}
	head, err := s.cfg.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the head block: %w", err)
	}
	feeCap = new(big.Int).Set(tip)
	if head.BaseFee != nil {
		feeCap.Add(feeCap, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	}
	feeCap = bigMin(feeCap, s.policy.MaxFeePerGas)
	return bigMin(tip, feeCap), feeCap, nil
}

// broadcast sends the recorded bytes. "Already known" and "nonce too low"
// (it may be mined already) are not failures: Resolve finds out.
func (s *Sender) broadcast(ctx context.Context, t *Tx) error {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(t.Raw); err != nil {
		return fmt.Errorf("chain: recorded transaction %d is corrupt: %w", t.ID, err)
	}
	sendErr := s.cfg.Client.SendTransaction(ctx, &tx)
	var lastErr any
	if sendErr != nil && !benignSendError(sendErr) {
		lastErr = truncate(sendErr.Error(), 500)
	}
	if _, err := s.cfg.Pool.Exec(ctx, `WITH v AS (UPDATE chain_tx_attempts SET sent_at = COALESCE(sent_at, now())
			WHERE tx_hash = $3 AND $2::text IS NULL)
		UPDATE chain_txs SET broadcasts = broadcasts + 1, sent_at = COALESCE(sent_at, now()),
		last_error = $2 WHERE id = $1`, t.ID, lastErr, strings.ToLower(t.Hash.Hex())); err != nil && sendErr == nil {
		s.log.Warn("recording a broadcast", zap.Int64("id", t.ID), zap.Error(err))
	}
	if lastErr != nil {
		return fmt.Errorf("chain: broadcasting %s (%s): %w", t.Purpose, t.Hash.Hex(), sendErr)
	}
	return nil
}

func benignSendError(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "already known") || strings.Contains(m, "known transaction") ||
		strings.Contains(m, "nonce too low") || strings.Contains(m, "already imported")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Pending returns every transaction still in state signed, in nonce order per sender.
func (s *Sender) Pending(ctx context.Context) ([]*Tx, error) {
	rows, err := s.cfg.Pool.Query(ctx, `SELECT `+txColumns+` FROM chain_txs WHERE chain_id = $1 AND state = 'signed'
		ORDER BY from_addr, nonce`, int64(s.cfg.ChainID))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Tx
	for rows.Next() {
		t, err := scanTx(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ResolvePending settles every signed transaction once: records the
// receipts that exist, rebroadcasts the same bytes for the rest whose nonce
// is still free, flags conflicts. Run it at the start of every job run: it
// is what makes a crash after recording (before or after the broadcast)
// harmless.
func (s *Sender) ResolvePending(ctx context.Context) error {
	// Gaps first: everything of ours above a gap waits for it.
	var errs []error
	if err := s.fillGaps(ctx); err != nil {
		errs = append(errs, fmt.Errorf("chain: filling nonce gaps: %w", err))
	}
	txs, err := s.Pending(ctx)
	if err != nil {
		return fmt.Errorf("chain: listing pending transactions: %w", err)
	}
	for _, t := range txs {
		if err := s.Resolve(ctx, t, true); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Resolve updates t from the chain: a receipt of any of its versions is
// recorded; while its nonce is free it is unstuck (replaced when stuck,
// sent again when dropped) and, with rebroadcast, sent again regardless.
func (s *Sender) Resolve(ctx context.Context, t *Tx, rebroadcast bool) error {
	if t.Done() {
		return nil
	}
	// The nonce is read before the receipts: if the account's nonce had
	// passed ours at that point and no version has a receipt afterwards,
	// the nonce went to another transaction. While it has not passed, no
	// version can be mined, so the receipts need not be asked for.
	latest, err := s.cfg.Client.NonceAt(ctx, t.From, nil)
	if err != nil {
		return fmt.Errorf("chain: nonce of %s: %w", t.From.Hex(), err)
	}
	if latest <= t.Nonce {
		return s.unstick(ctx, t, rebroadcast)
	}
	vs, err := s.attempts(ctx, t)
	if err != nil {
		return err
	}
	found, err := s.checkReceipts(ctx, t, vs)
	if err != nil || found {
		return err
	}
	// A receipt can lag the nonce on load-balanced RPC; look once more.
	if found, err := s.checkReceipts(ctx, t, vs); err != nil || found {
		return err
	}
	s.log.Error("nonce consumed by an unrecorded transaction", zap.String("purpose", t.Purpose),
		zap.String("tx", t.Hash.Hex()), zap.Int("versions", len(vs)), zap.Uint64("nonce", t.Nonce), zap.String("from", t.From.Hex()))
	return s.mark(ctx, t, StateConflict, nil, nil)
}

// checkReceipts reports whether a version of t has a receipt, and records
// the outcome (with that version's hash) once the receipt is Confirmations
// deep. At most one version can have one: they share a nonce.
func (s *Sender) checkReceipts(ctx context.Context, t *Tx, vs []attempt) (bool, error) {
	for i := range vs {
		r, err := s.cfg.Client.TransactionReceipt(ctx, vs[i].hash)
		if errors.Is(err, ethereum.NotFound) || (err == nil && r == nil) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("chain: receipt of %s: %w", vs[i].hash.Hex(), err)
		}
		if s.cfg.Confirmations > 1 {
			head, err := s.cfg.Client.BlockNumber(ctx)
			if err != nil {
				return false, err
			}
			if head+1 < r.BlockNumber.Uint64()+s.cfg.Confirmations {
				return true, nil // included, not yet deep enough
			}
		}
		state := StateMined
		if r.Status != types.ReceiptStatusSuccessful {
			state = StateFailed
			s.log.Warn("transaction reverted", zap.String("purpose", t.Purpose), zap.String("tx", vs[i].hash.Hex()))
		}
		return true, s.mark(ctx, t, state, r, &vs[i])
	}
	return false, nil
}

// mark records t's outcome; v is the version the chain included (nil for
// a conflict), which becomes the row's tx_hash and raw_tx.
func (s *Sender) mark(ctx context.Context, t *Tx, state string, r *types.Receipt, v *attempt) error {
	var blockNo, gasUsed, blockHash any
	if r != nil {
		blockNo, gasUsed, blockHash = r.BlockNumber.Int64(), int64(r.GasUsed), strings.ToLower(r.BlockHash.Hex())
		t.BlockNumber = r.BlockNumber.Uint64()
	}
	hash, raw := t.Hash, t.Raw
	if v != nil {
		hash, raw = v.hash, v.raw
	}
	if _, err := s.cfg.Pool.Exec(ctx, `UPDATE chain_txs SET state = $2, block_number = $3, block_hash = $4, gas_used = $5,
		tx_hash = $6, raw_tx = $7, resolved_at = now() WHERE id = $1 AND state = 'signed'`,
		t.ID, state, blockNo, blockHash, gasUsed, strings.ToLower(hash.Hex()), raw); err != nil {
		return fmt.Errorf("chain: recording the outcome of %s: %w", hash.Hex(), err)
	}
	t.State, t.Hash, t.Raw = state, hash, raw
	return nil
}

// Await polls until every transaction in txs is done or timeout passes; it
// reports whether all are done. A timeout is not an error: the transactions
// stay recorded and the next run's ResolvePending continues with them.
func (s *Sender) Await(ctx context.Context, txs []*Tx, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		all := true
		for _, x := range txs {
			if x == nil || x.Done() {
				continue
			}
			if err := s.Resolve(ctx, x, false); err != nil {
				return false, err
			}
			all = all && x.Done()
		}
		if all {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
		}
	}
}
