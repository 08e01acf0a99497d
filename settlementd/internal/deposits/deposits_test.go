package deposits

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// env is a chain-137 simulated chain served over HTTP, whose blocks the test
// seals one by one (so confirmation counts are exact), with the Tollgate
// contracts deployed, plus a fresh Postgres and a Redis prefix.
type env struct {
	t      *testing.T
	ctx    context.Context
	chain  *simchain.Chain
	client *ethclient.Client // what the listener uses: JSON-RPC over HTTP
	poly   *deploy.Polygon
	dev    *ecdsa.PrivateKey
	pool   *pgxpool.Pool
	rdb    *redis.Client
	prefix string
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, dev: devnet.DevKey("developer-1")}
	_, e.pool = settletest.DB(t)
	e.rdb = testenv.Redis(t)
	e.prefix = testenv.KeyPrefix(t)

	deployer := devnet.DevKey("deployer")
	eth := new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18))
	alloc := types.GenesisAlloc{}
	for _, k := range []*ecdsa.PrivateKey{deployer, e.dev} {
		alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: eth}
	}
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if e.chain, err = simchain.New(simchain.Config{ChainID: 137, Alloc: alloc, HTTPPort: port}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.chain.Close() })
	addr := func(name string) common.Address { return crypto.PubkeyToAddress(devnet.DevKey(name).PublicKey) }
	if e.poly, err = deploy.DeployPolygon(ctx, e.chain.Client(), bind.NewKeyedTransactor(deployer, e.chain.ChainID()), deploy.PolygonParams{
		Treasury: addr("treasury"), Governor: addr("governor"), ClaimCreator: addr("claim-signer"), MinDeposit: big.NewInt(1),
	}, deploy.WithCommit(func() { e.chain.Commit() })); err != nil {
		t.Fatal(err)
	}
	usdt := testusdt.NewTestUSDT()
	usdtC := usdt.Instance(e.chain.Client(), e.poly.USDT)
	devAddr := crypto.PubkeyToAddress(e.dev.PublicKey)
	e.send(deployer, usdtC, usdt.PackMint(devAddr, (1_000*money.Scale).Big()))
	e.send(e.dev, usdtC, usdt.PackApprove(e.poly.Vault, (1_000*money.Scale).Big()))
	if e.client, err = ethclient.DialContext(ctx, e.chain.HTTPURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.client.Close)
	return e
}

// send transacts, seals a block and checks the receipt.
func (e *env) send(key *ecdsa.PrivateKey, c *bind.BoundContract, data []byte) *types.Receipt {
	e.t.Helper()
	opts := bind.NewKeyedTransactor(key, e.chain.ChainID())
	opts.Context = e.ctx
	tx, err := bind.Transact(c, opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	e.chain.Commit()
	r, err := e.chain.Client().TransactionReceipt(e.ctx, tx.Hash())
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("receipt %v status %v", err, r)
	}
	return r
}

// deposit makes developer-1 deposit amount for the raw account in a new block.
func (e *env) deposit(account [32]byte, amount money.Units) *types.Receipt {
	e.t.Helper()
	vault := revenuevault.NewRevenueVault()
	return e.send(e.dev, vault.Instance(e.chain.Client(), e.poly.Vault), vault.PackDeposit(amount.Big(), account))
}

func (e *env) commit(n int) {
	for range n {
		e.chain.Commit()
	}
}

func (e *env) head() uint64 {
	e.t.Helper()
	n, err := e.client.BlockNumber(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// listener is a fresh listener, as after a restart: all its state is in Postgres.
func (e *env) listener(confirmations uint64) *Listener {
	e.t.Helper()
	l, err := New(Config{Pool: e.pool, Redis: e.rdb, Prefix: e.prefix, Client: e.client, ChainID: 137,
		Vault: e.poly.Vault, Confirmations: confirmations})
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func (e *env) run(l *Listener) {
	e.t.Helper()
	if err := l.Run(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// state is a deposit row's state ("" when absent).
func (e *env) state(r *types.Receipt) (state string, redisApplied bool) {
	e.t.Helper()
	err := e.pool.QueryRow(e.ctx, `SELECT state, redis_applied FROM chain_deposits WHERE tx_hash = $1`,
		r.TxHash.Hex()).Scan(&state, &redisApplied)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		e.t.Fatal(err)
	}
	return state, redisApplied
}

// balances returns an account's ledger rows, Postgres balance and Redis balance.
func (e *env) balances(account string) (rows int64, pg, rd money.Units) {
	e.t.Helper()
	rows = settletest.Count(e.t, e.pool, `SELECT count(*) FROM account_ledger WHERE account = $1 AND kind = 'deposit'`, account)
	pg = money.Units(settletest.Count(e.t, e.pool, `SELECT COALESCE(sum(units), 0)::bigint FROM account_ledger WHERE account = $1`, account))
	rd, err := balances.Balance(e.ctx, e.rdb, e.prefix, account)
	if err != nil {
		e.t.Fatal(err)
	}
	return rows, pg, rd
}

func (e *env) expect(account string, wantRows int64, want money.Units) {
	e.t.Helper()
	rows, pg, rd := e.balances(account)
	if rows != wantRows || pg != want || rd != want {
		e.t.Fatalf("account %s: %d ledger rows, Postgres %d, Redis %d; want %d rows, %d in both", account, rows, pg, rd, wantRows, want)
	}
}

func raw(t *testing.T, account string) [32]byte {
	t.Helper()
	b, err := accounts.ToBytes32(account)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A deposit is credited at its 25th confirmation, not before, and exactly
// once across restarts: one before confirmation (seen, not credited) and one
// after crediting.
func TestCreditAfter25ConfirmationsAcrossRestarts(t *testing.T) {
	e := setup(t)
	acct := accounts.NewID()
	r := e.deposit(raw(t, acct), 5*money.Scale)
	d := r.BlockNumber.Uint64()

	e.run(e.listener(0)) // 0 → the default, 25
	if st, _ := e.state(r); st != "seen" {
		t.Fatalf("after 1 confirmation: state %q, want seen", st)
	}
	e.expect(acct, 0, 0)

	e.commit(23) // 24 confirmations
	if got := e.head() - d + 1; got != 24 {
		t.Fatalf("confirmations %d", got)
	}
	e.run(e.listener(25))
	if st, _ := e.state(r); st != "seen" {
		t.Fatalf("at 24 confirmations: state %q, want seen", st)
	}
	e.expect(acct, 0, 0)

	// Restart between seeing and confirming: the new listener has only Postgres.
	l := e.listener(25)
	e.commit(1) // the 25th confirmation
	e.run(l)
	if st, applied := e.state(r); st != "credited" || !applied {
		t.Fatalf("at 25 confirmations: state %q redis_applied %v", st, applied)
	}
	e.expect(acct, 1, 5*money.Scale)

	// Restart after crediting, with more blocks and passes: nothing more.
	for range 3 {
		e.commit(2)
		e.run(e.listener(25))
	}
	e.expect(acct, 1, 5*money.Scale)
	var cp int64
	if err := e.pool.QueryRow(e.ctx, `SELECT confirmed_through FROM deposit_checkpoints`).Scan(&cp); err != nil || cp != int64(e.head())-24 {
		t.Fatalf("checkpoint %d (%v), head %d", cp, err, e.head())
	}
}

// The same logic with a small confirmation count, several deposits (two
// accounts, one of them twice) and one deposit naming no valid account,
// which is parked as unattributed and never credited.
func TestSmallConfirmationCountAndUnattributed(t *testing.T) {
	e := setup(t)
	a, b := accounts.NewID(), accounts.NewID()
	var junk [32]byte
	copy(junk[:], "not-a-tollgate-account")
	r1 := e.deposit(raw(t, a), 1*money.Scale)
	r2 := e.deposit(raw(t, b), 2*money.Scale+7)
	bad := e.deposit(junk, 3*money.Scale)
	r3 := e.deposit(raw(t, a), 30)
	l := e.listener(3)
	e.run(l)
	// r1 has 4 confirmations, r2 3, bad 2, r3 1.
	for _, c := range []struct {
		r    *types.Receipt
		want string
	}{{r1, "credited"}, {r2, "credited"}, {bad, "seen"}, {r3, "seen"}} {
		if st, _ := e.state(c.r); st != c.want {
			t.Fatalf("block %d: state %q, want %q", c.r.BlockNumber, st, c.want)
		}
	}
	e.expect(a, 1, money.Scale)
	e.expect(b, 1, 2*money.Scale+7)
	e.commit(2)
	e.run(l)
	if st, _ := e.state(bad); st != "unattributed" {
		t.Fatalf("junk account: state %q", st)
	}
	e.expect(a, 2, money.Scale+30)
	var reason string
	var acct *string
	if err := e.pool.QueryRow(e.ctx, `SELECT reason, account FROM chain_deposits WHERE tx_hash = $1`, bad.TxHash.Hex()).Scan(&reason, &acct); err != nil || acct != nil || reason == "" {
		t.Fatalf("unattributed row: reason %q account %v err %v", reason, acct, err)
	}
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM account_ledger`); n != 3 {
		t.Fatalf("%d ledger rows, want 3", n)
	}
}

// A crash after the Postgres commit but before (or during) the Redis write
// is repaired by the next pass, and Redis is never credited twice.
func TestRedisMirrorRepairedAfterCrash(t *testing.T) {
	e := setup(t)
	a, b := accounts.NewID(), accounts.NewID()
	ra := e.deposit(raw(t, a), 4*money.Scale)
	rb := e.deposit(raw(t, b), 6*money.Scale)
	l := e.listener(1)
	crash := errors.New("crash before Redis")
	l.beforeMirror = func(string) error { return crash }
	if err := l.Run(e.ctx); !errors.Is(err, crash) {
		t.Fatalf("run: %v", err)
	}
	for _, r := range []*types.Receipt{ra, rb} {
		if st, applied := e.state(r); st != "credited" || applied {
			t.Fatalf("after crash: %q applied=%v", st, applied)
		}
	}
	if _, _, rd := e.balances(a); rd != 0 {
		t.Fatalf("Redis credited before the mirror step: %d", rd)
	}
	// b's credit reached Redis just before the crash, the flag did not.
	if _, _, err := balances.Credit(e.ctx, e.rdb, e.prefix, b, 6*money.Scale, DepositID(rb.TxHash, rb.Logs[len(rb.Logs)-1].Index)); err != nil {
		t.Fatal(err)
	}
	e.run(e.listener(1)) // restart
	e.expect(a, 1, 4*money.Scale)
	e.expect(b, 1, 6*money.Scale)
	for _, r := range []*types.Receipt{ra, rb} {
		if _, applied := e.state(r); !applied {
			t.Fatal("not marked mirrored")
		}
	}
}

// A reorg inside the confirmation window replaces the block holding a
// deposit with one where the depositor's nonce went to another deposit: the
// first is never credited (orphaned), the replacement is.
func TestReorgedDepositIsNotCredited(t *testing.T) {
	e := setup(t)
	a, b := accounts.NewID(), accounts.NewID()
	parent, err := e.client.HeaderByNumber(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ra := e.deposit(raw(t, a), 7*money.Scale)
	l := e.listener(5)
	e.commit(2)
	e.run(l)
	if st, _ := e.state(ra); st != "seen" {
		t.Fatalf("state %q", st)
	}

	// Reorg: a branch from the deposit's parent, where the same nonce
	// carries a deposit for b (higher fees, so it replaces the original
	// when the pool re-injects that one).
	orig, _, err := e.chain.Client().TransactionByHash(e.ctx, ra.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.chain.Backend().Fork(parent.Hash()); err != nil {
		t.Fatal(err)
	}
	vault := revenuevault.NewRevenueVault()
	opts := bind.NewKeyedTransactor(e.dev, e.chain.ChainID())
	opts.Context = e.ctx
	opts.Nonce = new(big.Int).SetUint64(orig.Nonce())
	opts.GasTipCap = new(big.Int).Mul(orig.GasTipCap(), big.NewInt(3))
	opts.GasFeeCap = new(big.Int).Mul(orig.GasFeeCap(), big.NewInt(3))
	opts.GasLimit = orig.Gas()
	var rep *types.Transaction
	// The pool moves to the new branch asynchronously; until it has, the
	// nonce looks used. Poll.
	settletest.Eventually(t, 10*time.Second, "the pool to accept the replacement", func() (bool, error) {
		rep, err = bind.Transact(vault.Instance(e.chain.Client(), e.poly.Vault), opts, vault.PackDeposit((8*money.Scale).Big(), raw(t, b)))
		return err == nil, err
	})
	e.chain.Commit()
	rb, err := e.chain.Client().TransactionReceipt(e.ctx, rep.Hash())
	if err != nil || rb.BlockNumber.Uint64() != ra.BlockNumber.Uint64() {
		t.Fatalf("replacement receipt %v %v", rb, err)
	}
	if _, err := e.client.TransactionReceipt(e.ctx, ra.TxHash); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the orphaned deposit is still on the canonical chain: %v", err)
	}
	e.run(l) // sees b's deposit; a's row still "seen" at its old block hash
	e.commit(4)
	e.run(l)
	if st, _ := e.state(ra); st != "orphaned" {
		t.Fatalf("orphaned deposit: state %q", st)
	}
	if st, _ := e.state(rb); st != "credited" {
		t.Fatalf("replacement deposit: state %q", st)
	}
	e.expect(a, 0, 0)
	e.expect(b, 1, 8*money.Scale)
	e.commit(10)
	e.run(e.listener(5))
	e.expect(a, 0, 0)
	e.expect(b, 1, 8*money.Scale)
}

// A reorg that only moves the deposit to another block (the transaction is
// re-included on the new branch) credits it once, from the new block.
func TestReorgMovingDepositCreditsOnce(t *testing.T) {
	e := setup(t)
	a := accounts.NewID()
	parent, err := e.client.HeaderByNumber(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ra := e.deposit(raw(t, a), 9*money.Scale)
	l := e.listener(4)
	e.run(l)
	if err := e.chain.Backend().Fork(parent.Hash()); err != nil {
		t.Fatal(err)
	}
	// The new branch: empty blocks until the pool has re-injected the
	// deposit and a block includes it again.
	var moved *types.Receipt
	settletest.Eventually(t, 10*time.Second, "the deposit to be re-included", func() (bool, error) {
		e.chain.Commit()
		r, err := e.client.TransactionReceipt(e.ctx, ra.TxHash)
		if err != nil {
			return false, err
		}
		moved = r
		return true, nil
	})
	if moved.BlockHash == ra.BlockHash {
		t.Fatal("deposit still in its original block")
	}
	for i := 0; i < 8; i++ {
		e.commit(1)
		e.run(l)
	}
	var block int64
	var hash, st string
	if err := e.pool.QueryRow(e.ctx, `SELECT state, block_number, block_hash FROM chain_deposits WHERE tx_hash = $1`,
		ra.TxHash.Hex()).Scan(&st, &block, &hash); err != nil {
		t.Fatal(err)
	}
	if st != "credited" || uint64(block) != moved.BlockNumber.Uint64() || common.HexToHash(hash) != moved.BlockHash {
		t.Fatalf("row %s at %d/%s, want credited at %d/%s", st, block, hash, moved.BlockNumber, moved.BlockHash.Hex())
	}
	e.expect(a, 1, 9*money.Scale)
}

// A reorg deeper than the confirmation window (or a different chain behind
// the URL) is not silently absorbed: the listener refuses to go on, and the
// credit already given is not repeated.
func TestReorgDeeperThanWindowStopsTheListener(t *testing.T) {
	e := setup(t)
	a := accounts.NewID()
	parent, err := e.client.HeaderByNumber(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.deposit(raw(t, a), 2*money.Scale)
	e.commit(3)
	e.run(e.listener(2))
	e.expect(a, 1, 2*money.Scale)
	if err := e.chain.Backend().Fork(parent.Hash()); err != nil {
		t.Fatal(err)
	}
	e.commit(8) // the new branch outgrows the old one
	err = e.listener(2).Run(e.ctx)
	if !errors.Is(err, ErrDeepReorg) {
		t.Fatalf("run after a deep reorg: %v", err)
	}
	e.expect(a, 1, 2*money.Scale)
}
