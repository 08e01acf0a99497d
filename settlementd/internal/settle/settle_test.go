package settle

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/epochs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const (
	nodeA = "NODE-EU-AAAAAAAA" // wallet operator-1
	nodeB = "NODE-US-BBBBBBBB" // wallet operator-2
	nodeC = "NODE-AP-CCCCCCCC" // no nodes row: allocated, no wallet bound
)

// env is the dev chain 137 over HTTP (mined as transactions arrive) with a
// funded treasury, and a fresh Postgres.
type env struct {
	t       *testing.T
	ctx     context.Context
	d       *devnet.Devnet
	m       *devnet.Manifest
	client  *ethclient.Client
	pool    *pgxpool.Pool
	usdt    *testusdt.TestUSDT
	usdtC   *bind.BoundContract
	claims  *claimscontract.ClaimsContract
	claimsC *bind.BoundContract
	usdtA   common.Address
	claimsA common.Address
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx}
	var err error
	if e.d, err = devnet.Start(ctx, devnet.Config{BlockInterval: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.d.Close() })
	e.m = e.d.Manifest
	if e.client, err = ethclient.DialContext(ctx, e.m.Polygon.RPCURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.client.Close)
	_, e.pool = settletest.DB(t)
	e.usdt, e.claims = testusdt.NewTestUSDT(), claimscontract.NewClaimsContract()
	e.usdtA, e.claimsA = common.HexToAddress(e.m.Polygon.USDT), common.HexToAddress(e.m.Polygon.ClaimsContract)
	e.usdtC, e.claimsC = e.usdt.Instance(e.client, e.usdtA), e.claims.Instance(e.client, e.claimsA)
	// The treasury holds what developers deposited.
	e.transact("deployer", e.usdtC, e.usdt.PackMint(e.addr("treasury"), (1_000*money.Scale).Big()))
	for _, n := range []struct{ id, wallet string }{{nodeA, "operator-1"}, {nodeB, "operator-2"}} {
		if _, err := e.pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status)
			VALUES ($1, $2, 'eu', 'https://node.example', '{137}', 'online')`, n.id, e.addr(n.wallet).Hex()); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) addr(name string) common.Address {
	e.t.Helper()
	a, err := e.m.Account(name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.Addr()
}

func (e *env) signer(name string) *chain.Signer {
	e.t.Helper()
	a, err := e.m.Account(name)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := chain.ParseSigner(name, a.PrivateKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) transact(from string, c *bind.BoundContract, data []byte) {
	e.t.Helper()
	a, _ := e.m.Account(from)
	k, _ := a.Key()
	opts := bind.NewKeyedTransactor(k, big.NewInt(137))
	opts.Context = e.ctx
	tx, err := bind.Transact(c, opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := deploy.WaitReceipt(e.ctx, e.client, tx.Hash(), 20*time.Millisecond)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("%v %v", r, err)
	}
}

func (e *env) job() *Job {
	e.t.Helper()
	j, err := New(Config{Pool: e.pool, Client: e.client, ChainID: 137, USDT: e.usdtA, Claims: e.claimsA,
		PlatformWallet: e.addr("platform"), PoolWallet: e.addr("pool"),
		Treasury: e.signer("treasury"), Relayer: e.signer("relayer"),
		ReceiptTimeout: 30 * time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// closeEpoch records a CLOSED epoch the way the epoch closer does.
func (e *env) closeEpoch(id int64, total money.Units, weights ...epochs.Weight) epochs.Split {
	e.t.Helper()
	s := epochs.Compute(total, 0, weights)
	start := time.Unix(id*60, 0).UTC()
	if _, err := e.pool.Exec(e.ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, carry_in_units, events, calls, total_units,
			node_units, operators_units, platform_units, pool_units, distributed_units, carry_out_units, platform_operators_units, closed_at)
		VALUES ($1, 'CLOSED', $2, $3, 0, 1, 1, $4, $5, $6, $7, $8, $9, $10, $11, now())`, id, start, start.Add(time.Minute),
		int64(s.Total), int64(s.NodeUnits), int64(s.Operators), int64(s.Platform), int64(s.Pool), int64(s.Distributed), int64(s.CarryOut),
		int64(s.PlatformOperators)); err != nil {
		e.t.Fatal(err)
	}
	for _, sh := range s.Shares {
		if _, err := e.pool.Exec(e.ctx, `INSERT INTO node_earnings (node_id, kind, ref, amount_units, epoch_id)
			VALUES ($1, 'epoch_share', $2, $3, $4)`, sh.NodeID, strconv.FormatInt(id, 10), int64(sh.Units), id); err != nil {
			e.t.Fatal(err)
		}
	}
	return s
}

func (e *env) balance(a common.Address) money.Units {
	e.t.Helper()
	b, err := bind.Call(e.usdtC, &bind.CallOpts{Context: e.ctx}, e.usdt.PackBalanceOf(a), e.usdt.UnpackBalanceOf)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := money.FromBig(b)
	return u
}

func (e *env) allocation(node string) money.Units {
	e.t.Helper()
	b, err := bind.Call(e.claimsC, &bind.CallOpts{Context: e.ctx}, e.claims.PackAllocation(node), e.claims.UnpackAllocation)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := money.FromBig(b)
	return u
}

func (e *env) nodeWallet(node string) common.Address {
	e.t.Helper()
	w, err := bind.Call(e.claimsC, &bind.CallOpts{Context: e.ctx}, e.claims.PackNodeWallet(node), e.claims.UnpackNodeWallet)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// snapshot is every balance and allocation the job moves.
type snapshot struct {
	treasury, claims, platform, pool money.Units
	alloc                            map[string]money.Units
	outstanding                      money.Units
}

func (e *env) snapshot() snapshot {
	e.t.Helper()
	out, err := bind.Call(e.claimsC, &bind.CallOpts{Context: e.ctx}, e.claims.PackOutstanding(), e.claims.UnpackOutstanding)
	if err != nil {
		e.t.Fatal(err)
	}
	o, _ := money.FromBig(out)
	return snapshot{
		treasury: e.balance(e.addr("treasury")), claims: e.balance(e.claimsA),
		platform: e.balance(e.addr("platform")), pool: e.balance(e.addr("pool")),
		alloc:       map[string]money.Units{nodeA: e.allocation(nodeA), nodeB: e.allocation(nodeB), nodeC: e.allocation(nodeC)},
		outstanding: o,
	}
}

// expected is the snapshot after settling splits on top of before.
func expected(before snapshot, splits ...epochs.Split) snapshot {
	want := before
	want.alloc = map[string]money.Units{}
	for k, v := range before.alloc {
		want.alloc[k] = v
	}
	for _, s := range splits {
		want.claims += s.Distributed
		want.platform += s.Platform + s.PlatformOperators // the platform's 30 % and its operators' part
		want.pool += s.Pool
		want.treasury -= s.Distributed + s.Platform + s.PlatformOperators + s.Pool
		want.outstanding += s.Distributed
		for _, sh := range s.Shares {
			want.alloc[sh.NodeID] += sh.Units
		}
	}
	return want
}

func (e *env) check(got, want snapshot) {
	e.t.Helper()
	if got.treasury != want.treasury || got.claims != want.claims || got.platform != want.platform || got.pool != want.pool ||
		got.outstanding != want.outstanding {
		e.t.Fatalf("balances:\n got %+v\nwant %+v", got, want)
	}
	for k, v := range want.alloc {
		if got.alloc[k] != v {
			e.t.Fatalf("allocation(%s) = %d, want %d", k, got.alloc[k], v)
		}
	}
	if got.claims != got.outstanding {
		e.t.Fatalf("ClaimsContract holds %d but owes %d", got.claims, got.outstanding)
	}
}

func (e *env) txCount(where string) int64 {
	e.t.Helper()
	return settletest.Count(e.t, e.pool, `SELECT count(*) FROM chain_txs WHERE `+where)
}

func (e *env) run(j *Job) {
	e.t.Helper()
	if err := j.Run(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// twoEpochs closes two epochs with odd amounts, so rounding is exercised.
func (e *env) twoEpochs() []epochs.Split {
	return []epochs.Split{
		e.closeEpoch(100, 1_000_003, epochs.Weight{NodeID: nodeA, Units: 600_001, Calls: 3},
			epochs.Weight{NodeID: nodeB, Units: 300_000, Calls: 2}, epochs.Weight{NodeID: nodeC, Units: 100_002, Calls: 1}),
		e.closeEpoch(101, 2_000_000, epochs.Weight{NodeID: nodeA, Units: 1, Calls: 1}, epochs.Weight{NodeID: nodeB, Units: 2, Calls: 1}),
	}
}

func TestSettlementForwardsAndAllocates(t *testing.T) {
	e := setup(t)
	before := e.snapshot()
	splits := e.twoEpochs()
	want := expected(before, splits...)

	e.run(e.job())
	e.check(e.snapshot(), want)
	if w := e.nodeWallet(nodeA); w != e.addr("operator-1") {
		t.Fatalf("nodeWallet(A) = %s", w.Hex())
	}
	if w := e.nodeWallet(nodeB); w != e.addr("operator-2") {
		t.Fatalf("nodeWallet(B) = %s", w.Hex())
	}
	if w := e.nodeWallet(nodeC); w != (common.Address{}) {
		t.Fatalf("nodeWallet(C) = %s, want none", w.Hex())
	}
	// Exactly: 3 transfers, 2 wallet bindings, 3 allocations, all mined.
	if n := e.txCount(`state = 'mined'`); n != 8 || e.txCount(`true`) != 8 {
		t.Fatalf("%d mined of %d recorded transactions", n, e.txCount(`true`))
	}
	// The Postgres view matches the chain.
	for _, node := range []string{nodeA, nodeB, nodeC} {
		if got := settletest.Count(t, e.pool, `SELECT allocated_units FROM node_allocations WHERE node_id = $1`, node); money.Units(got) != want.alloc[node] {
			t.Fatalf("node_allocations(%s) = %d, want %d", node, got, want.alloc[node])
		}
	}

	// A second run has nothing new to do.
	e.run(e.job())
	e.check(e.snapshot(), want)
	if n := e.txCount(`true`); n != 8 {
		t.Fatalf("second run recorded %d transactions in total, want 8", n)
	}

	// A new epoch: only its shares move; allocations are cumulative; no
	// wallet is bound again.
	s3 := e.closeEpoch(102, 777_777, epochs.Weight{NodeID: nodeA, Units: 10, Calls: 1})
	want = expected(want, s3)
	e.run(e.job())
	e.check(e.snapshot(), want)
	if n := e.txCount(`kind = 'set_node_wallet'`); n != 2 {
		t.Fatalf("%d wallet bindings, want 2", n)
	}
	if n := e.txCount(`true`); n != 12 { // + 3 transfers + 1 allocation
		t.Fatalf("%d transactions, want 12", n)
	}
}

var errCrash = errors.New("simulated crash")

// A crash at the dangerous points (after recording a transaction but before
// broadcasting it; after broadcasting it but before recording the outcome;
// the run's context cancelled right after a broadcast), followed by a
// restart, ends exactly like an uninterrupted run: same balances and
// allocations, one transaction per intent, no transaction the books do not
// know (the senders' on-chain nonces equal their recorded transactions).
func TestSettlementCrashThenRestart(t *testing.T) {
	cases := []struct {
		name    string
		kind    string // the first transaction of this kind crashes
		install func(s *chain.Sender, crash func(*chain.Tx) error)
	}{
		{"recorded, not broadcast (transfer)", chain.KindTransfer, func(s *chain.Sender, c func(*chain.Tx) error) {
			s.SetHooks(chain.Hooks{AfterCommit: c})
		}},
		{"broadcast, outcome not recorded (transfer)", chain.KindTransfer, func(s *chain.Sender, c func(*chain.Tx) error) {
			s.SetHooks(chain.Hooks{AfterBroadcast: c})
		}},
		{"broadcast, outcome not recorded (createClaim)", chain.KindCreateClaim, func(s *chain.Sender, c func(*chain.Tx) error) {
			s.SetHooks(chain.Hooks{AfterBroadcast: c})
		}},
		{"context cancelled after broadcast", chain.KindTransfer, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			before := e.snapshot()
			want := expected(before, e.twoEpochs()...)

			j := e.job()
			runCtx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			var fired atomic.Bool
			var crashed *chain.Tx
			crash := func(tx *chain.Tx) error {
				if tx.Kind != tc.kind || !fired.CompareAndSwap(false, true) {
					return nil
				}
				crashed = tx
				if tc.install == nil {
					cancel() // the daemon shutting down mid-run
					return nil
				}
				return errCrash
			}
			if tc.install != nil {
				tc.install(j.Sender(), crash)
			} else {
				j.Sender().SetHooks(chain.Hooks{AfterBroadcast: crash})
			}
			if err := j.Run(runCtx); err == nil {
				t.Fatal("the interrupted run reported success")
			}
			if crashed == nil {
				t.Fatal("the crash point was never reached")
			}

			// Restart: a new job, nothing carried over but Postgres.
			e.run(e.job())
			e.check(e.snapshot(), want)
			if n := e.txCount(`true`); n != 8 || e.txCount(`state = 'mined'`) != 8 {
				t.Fatalf("%d transactions recorded (%d mined), want 8 mined", n, e.txCount(`state = 'mined'`))
			}
			var hash string
			if err := e.pool.QueryRow(e.ctx, `SELECT tx_hash FROM chain_txs WHERE purpose = $1`, crashed.Purpose).Scan(&hash); err != nil ||
				common.HexToHash(hash) != crashed.Hash {
				t.Fatalf("%s: mined %s, the crashed run had recorded %s (%v)", crashed.Purpose, hash, crashed.Hash.Hex(), err)
			}
			for role, want := range map[string]int64{"treasury": 3, "relayer": 5} {
				nonce, err := e.client.NonceAt(e.ctx, e.addr(role), nil)
				if err != nil || int64(nonce) != want || e.txCount(`role = '`+role+`'`) != want {
					t.Fatalf("%s: on-chain nonce %d (%v), recorded %d, want %d", role, nonce, err, e.txCount(`role = '`+role+`'`), want)
				}
			}
			// And one more run changes nothing.
			e.run(e.job())
			e.check(e.snapshot(), want)
		})
	}
}

// A treasury holding less than a batch needs sends nothing (a transfer
// that would revert proves nothing and costs gas); once funded, the same
// batch goes through.
func TestTreasuryShortSendsNothing(t *testing.T) {
	e := setup(t)
	before := e.snapshot()
	s := e.closeEpoch(200, 3_000*money.Scale, epochs.Weight{NodeID: nodeA, Units: 1, Calls: 1})
	err := e.job().Run(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "still to send") {
		t.Fatalf("run with a short treasury: %v", err)
	}
	if n := e.txCount(`true`); n != 0 {
		t.Fatalf("%d transactions recorded", n)
	}
	e.transact("deployer", e.usdtC, e.usdt.PackMint(e.addr("treasury"), (2_000*money.Scale).Big()))
	before.treasury += 2_000 * money.Scale
	e.run(e.job())
	e.check(e.snapshot(), expected(before, s))
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM settlement_batches WHERE state = 'forwarded'`); n != 1 {
		t.Fatalf("%d forwarded batches", n)
	}
}
