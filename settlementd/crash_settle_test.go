package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Registered nodes of the settlement crash test (the generator's other two
// nodes have no nodes row: they are allocated, no wallet is bound).
var settleWallets = map[string]string{"NODE-EU-AAAAAAAA": "operator-1", "NODE-US-BBBBBBBB": "operator-2"}

// treasuryFunding is what the treasury holds before settlement (developers'
// deposits, minted here).
const treasuryFunding = 1_000 * money.Scale

// settleCase is one run of the settlement scenario.
type settleCase struct {
	name    string
	hook    string // "point:n" where the process is SIGKILLed; "" is the uninterrupted run
	purpose string // prefix of the purpose of the transaction the hook stops at
}

// settleOutcome is what a run left behind, in comparable form.
type settleOutcome struct {
	books string // Postgres: epochs, earnings, batches, chain_txs, allocations
	chain string // chain 137: balance deltas, allocations, wallets, transfers, nonces
}

// settleChain reads the dev chain the way an auditor would.
type settleChain struct {
	t       *testing.T
	ctx     context.Context
	m       *devnet.Manifest
	client  *ethclient.Client
	usdt    *testusdt.TestUSDT
	claims  *claimscontract.ClaimsContract
	usdtA   common.Address
	usdtC   *bind.BoundContract
	claimsC *bind.BoundContract
}

func (c *settleChain) addr(name string) common.Address {
	c.t.Helper()
	a, err := c.m.Account(name)
	if err != nil {
		c.t.Fatal(err)
	}
	return a.Addr()
}

func (c *settleChain) key(name string) string {
	c.t.Helper()
	a, err := c.m.Account(name)
	if err != nil {
		c.t.Fatal(err)
	}
	return a.PrivateKey
}

func (c *settleChain) units(b *big.Int, err error) money.Units {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
	u, err := money.FromBig(b)
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

func (c *settleChain) balance(a common.Address) money.Units {
	c.t.Helper()
	return c.units(bind.Call(c.usdtC, &bind.CallOpts{Context: c.ctx}, c.usdt.PackBalanceOf(a), c.usdt.UnpackBalanceOf))
}

func (c *settleChain) allocation(node string) money.Units {
	c.t.Helper()
	return c.units(bind.Call(c.claimsC, &bind.CallOpts{Context: c.ctx}, c.claims.PackAllocation(node), c.claims.UnpackAllocation))
}

func (c *settleChain) outstanding() money.Units {
	c.t.Helper()
	return c.units(bind.Call(c.claimsC, &bind.CallOpts{Context: c.ctx}, c.claims.PackOutstanding(), c.claims.UnpackOutstanding))
}

func (c *settleChain) nodeWallet(node string) common.Address {
	c.t.Helper()
	w, err := bind.Call(c.claimsC, &bind.CallOpts{Context: c.ctx}, c.claims.PackNodeWallet(node), c.claims.UnpackNodeWallet)
	if err != nil {
		c.t.Fatal(err)
	}
	return w
}

func (c *settleChain) nonce(name string) uint64 {
	c.t.Helper()
	n, err := c.client.NonceAt(c.ctx, c.addr(name), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// transfersFrom lists every USDT Transfer log sent by from, in chain order.
func (c *settleChain) transfersFrom(from common.Address) []string {
	c.t.Helper()
	logs, err := c.client.FilterLogs(c.ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{c.usdtA},
		Topics: [][]common.Hash{{crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))}, {common.BytesToHash(from.Bytes())}}})
	if err != nil {
		c.t.Fatal(err)
	}
	out := make([]string, 0, len(logs))
	for i := range logs {
		ev, err := c.usdt.UnpackTransferEvent(&logs[i])
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s:%s", ev.To.Hex(), ev.Value))
	}
	return out
}

// rows renders a query's rows, one line each.
func rows(t *testing.T, pool *pgxpool.Pool, q string, args ...any) string {
	t.Helper()
	r, err := pool.Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var b strings.Builder
	for r.Next() {
		v, err := r.Values()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, v...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// settled: every closed epoch is in a forwarded batch, no transaction is
// awaiting its outcome, every node's on-chain allocation (as recorded) is its
// credited earnings and every registered node's wallet is bound.
const settledSQL = `SELECT
	EXISTS (SELECT 1 FROM settlement_batches)
	AND NOT EXISTS (SELECT 1 FROM settlement_batches WHERE state <> 'forwarded')
	AND NOT EXISTS (SELECT 1 FROM epochs e WHERE e.id <= $1 AND NOT EXISTS (SELECT 1 FROM settled_epochs s WHERE s.epoch_id = e.id))
	AND NOT EXISTS (SELECT 1 FROM chain_txs WHERE state <> 'mined')
	AND NOT EXISTS (SELECT 1 FROM (SELECT node_id, sum(amount_units) AS earned FROM node_earnings WHERE kind = 'epoch_share' GROUP BY node_id) ne
		LEFT JOIN node_allocations a USING (node_id) WHERE COALESCE(a.allocated_units, 0) <> ne.earned)
	AND NOT EXISTS (SELECT 1 FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM chain_txs c
		WHERE c.kind = 'set_node_wallet' AND c.node_id = n.node_id AND c.state = 'mined'))`

// settleScenario runs the production path on its own dev chain, database
// and stream: the daemon ingests the events and closes their epochs (no
// chain jobs yet, so every epoch is closed before settlement plans its
// batch, as in every run); then the daemon runs with the chain jobs and
// settles every second. With c.hook it is SIGKILLed at that crash point and
// restarted without it.
func settleScenario(t *testing.T, bin string, rdb *redis.Client, c settleCase, evs []events.Event, ids []string, first, last int64) settleOutcome {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1}) // blocks mined as transactions arrive
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ch := &settleChain{t: t, ctx: ctx, m: d.Manifest, usdt: testusdt.NewTestUSDT(), claims: claimscontract.NewClaimsContract(),
		usdtA: common.HexToAddress(d.Manifest.Polygon.USDT)}
	if ch.client, err = ethclient.DialContext(ctx, d.Manifest.Polygon.RPCURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.client.Close)
	claimsA := common.HexToAddress(d.Manifest.Polygon.ClaimsContract)
	ch.usdtC, ch.claimsC = ch.usdt.Instance(ch.client, ch.usdtA), ch.claims.Instance(ch.client, claimsA)

	// The treasury holds what developers deposited.
	opts := bind.NewKeyedTransactor(devnet.DevKey("deployer"), big.NewInt(137))
	opts.Context = ctx
	mint, err := bind.Transact(ch.usdtC, opts, ch.usdt.PackMint(ch.addr("treasury"), treasuryFunding.Big()))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := deploy.WaitReceipt(ctx, ch.client, mint.Hash(), 20*time.Millisecond); err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("funding the treasury: %v %v", r, err)
	}
	wallets := []string{"treasury", "platform", "pool"}
	before := map[string]money.Units{"claims": ch.balance(claimsA)}
	for _, w := range wallets {
		before[w] = ch.balance(ch.addr(w))
	}

	dsn, pool := settletest.DB(t)
	for node, wallet := range settleWallets {
		if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status)
			VALUES ($1, $2, 'eu', 'https://node.example', '{137}', 'online')`, node, ch.addr(wallet).Hex()); err != nil {
			t.Fatal(err)
		}
	}
	prefix := testenv.KeyPrefix(t)
	settletest.XAddIDs(t, rdb, prefix+"events", ids, evs...)

	// 1. Ingest and close the epochs.
	p := start(t, bin, dsn, prefix, "")
	settletest.Eventually(t, 60*time.Second, "epochs closed", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED' AND id BETWEEN $1 AND $2`, first, last) == last-first+1, nil
	})
	p.term(t)

	// 2. Settle, with the chain jobs configured from the environment.
	m := d.Manifest
	chainEnv := []string{
		"TOLLGATE_CHAIN_RPC_URL=" + m.Polygon.RPCURL, "TOLLGATE_CHAIN_ID=137",
		"TOLLGATE_USDT_ADDRESS=" + m.Polygon.USDT, "TOLLGATE_VAULT_ADDRESS=" + m.Polygon.RevenueVault, "TOLLGATE_DEV=1",
		"TOLLGATE_CLAIMS_ADDRESS=" + m.Polygon.ClaimsContract,
		"TOLLGATE_PLATFORM_WALLET=" + ch.addr("platform").Hex(), "TOLLGATE_POOL_WALLET=" + ch.addr("pool").Hex(),
		"TOLLGATE_TREASURY_KEY=" + ch.key("treasury"), "TOLLGATE_RELAYER_KEY=" + ch.key("relayer"),
		"TOLLGATE_SETTLEMENT_SCHEDULE=* * * * * *", "TOLLGATE_SETTLEMENT_HOLD=0s",
	}
	p = start(t, bin, dsn, prefix, c.hook, chainEnv...)
	var crashed struct {
		purpose, hash, state string
		broadcasts           int
	}
	if c.hook != "" {
		p.blocked(t)
		p.kill(t)
		// The transaction the process stopped at is the newest row: recorded,
		// its outcome not.
		if err := pool.QueryRow(ctx, `SELECT purpose, tx_hash, state, broadcasts FROM chain_txs ORDER BY id DESC LIMIT 1`).
			Scan(&crashed.purpose, &crashed.hash, &crashed.state, &crashed.broadcasts); err != nil {
			t.Fatalf("no transaction recorded at %s: %v", c.hook, err)
		}
		if !strings.HasPrefix(crashed.purpose, c.purpose) || crashed.state != "signed" {
			t.Fatalf("killed at %s on %s (%s), want a signed %s…", c.hook, crashed.purpose, crashed.state, c.purpose)
		}
		hash := common.HexToHash(crashed.hash)
		if strings.HasPrefix(c.hook, "chaintx-after-broadcast") {
			// Sent: the chain has it (mined) while the books say 'signed'.
			r, err := deploy.WaitReceipt(ctx, ch.client, hash, 20*time.Millisecond)
			if err != nil || r.Status != types.ReceiptStatusSuccessful || crashed.broadcasts != 1 {
				t.Fatalf("%s: broadcasts %d, receipt %v %v", crashed.purpose, crashed.broadcasts, r, err)
			}
		} else if _, _, err := ch.client.TransactionByHash(ctx, hash); !errors.Is(err, ethereum.NotFound) || crashed.broadcasts != 0 {
			t.Fatalf("%s: broadcasts %d, the chain answers %v; want it never sent", crashed.purpose, crashed.broadcasts, err)
		}
		t.Logf("SIGKILLed at %s: %s (%s) recorded %s, %d broadcast(s)", c.hook, crashed.purpose, crashed.hash, crashed.state, crashed.broadcasts)
		p = start(t, bin, dsn, prefix, "", chainEnv...)
	}
	settletest.Eventually(t, 60*time.Second, "settlement complete", func() (bool, error) {
		var ok bool
		err := pool.QueryRow(ctx, settledSQL, last).Scan(&ok)
		return ok, err
	})
	p.term(t)

	if c.hook != "" {
		// The crashed intent was finished with the transaction recorded
		// before the kill, not a second one.
		var n int64
		var hash string
		if err := pool.QueryRow(ctx, `SELECT count(*), max(tx_hash) FROM chain_txs WHERE purpose = $1 AND state = 'mined'`, crashed.purpose).
			Scan(&n, &hash); err != nil || n != 1 || hash != crashed.hash {
			t.Fatalf("%s: %d mined, %s; the killed process had recorded %s (%v)", crashed.purpose, n, hash, crashed.hash, err)
		}
	}

	// The run is right on its own terms, not only equal to another run. The
	// platform wallet receives its 20 % and the operators' half of what the
	// providers and the cache served (platform_operators_units).
	var earned, platform, poolU int64
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE kind = 'epoch_share')::bigint,
		(SELECT COALESCE(sum(platform_units + platform_operators_units), 0) FROM epochs WHERE state = 'CLOSED')::bigint,
		(SELECT COALESCE(sum(pool_units), 0) FROM epochs WHERE state = 'CLOSED')::bigint`).Scan(&earned, &platform, &poolU); err != nil {
		t.Fatal(err)
	}
	after := map[string]money.Units{"claims": ch.balance(claimsA)}
	for _, w := range wallets {
		after[w] = ch.balance(ch.addr(w))
	}
	delta := func(w string) money.Units { return after[w] - before[w] }
	out := ch.outstanding()
	if earned == 0 || platform == 0 || poolU == 0 || delta("claims") != money.Units(earned) || delta("platform") != money.Units(platform) ||
		delta("pool") != money.Units(poolU) || delta("treasury") != -money.Units(earned+platform+poolU) || out != after["claims"] {
		t.Fatalf("deltas %v (outstanding %d), want claims %d platform %d pool %d", after, out, earned, platform, poolU)
	}
	var chainLines []string
	perNode := map[string]int64{}
	r, err := pool.Query(ctx, `SELECT node_id, sum(amount_units)::bigint FROM node_earnings WHERE kind = 'epoch_share' GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var node string
		var u int64
		if err := r.Scan(&node, &u); err != nil {
			t.Fatal(err)
		}
		perNode[node] = u
	}
	r.Close()
	for _, node := range settletest.Nodes {
		a, w := ch.allocation(node), ch.nodeWallet(node)
		if a != money.Units(perNode[node]) || a == 0 {
			t.Fatalf("allocation(%s) = %d, earned %d", node, a, perNode[node])
		}
		if want := settleWallets[node]; (want == "" && w != (common.Address{})) || (want != "" && w != ch.addr(want)) {
			t.Fatalf("nodeWallet(%s) = %s, want %q", node, w.Hex(), want)
		}
		chainLines = append(chainLines, fmt.Sprintf("allocation(%s) = %d, wallet %s", node, a, w.Hex()))
	}
	transfers := ch.transfersFrom(ch.addr("treasury"))
	recorded := func(role string) uint64 {
		return uint64(settletest.Count(t, pool, `SELECT count(*) FROM chain_txs WHERE role = $1 AND state = 'mined'`, role))
	}
	tn, rn := ch.nonce("treasury"), ch.nonce("relayer")
	// One transfer per leg; no transaction of our keys the books do not know.
	if len(transfers) != 3 || tn != 3 || tn != recorded("treasury") || rn != recorded("relayer") {
		t.Fatalf("treasury transfers %v, nonces treasury %d relayer %d, recorded %d %d", transfers, tn, rn, recorded("treasury"), recorded("relayer"))
	}
	chainLines = append(chainLines,
		fmt.Sprintf("delta claims %d platform %d pool %d treasury %d, outstanding %d", delta("claims"), delta("platform"), delta("pool"), delta("treasury"), out),
		fmt.Sprintf("treasury transfers %v", transfers), fmt.Sprintf("nonces treasury %d relayer %d", tn, rn))

	books := state(t, pool, last) +
		rows(t, pool, `SELECT count(*) FILTER (WHERE claims_units + platform_units + pool_units > 0), sum(claims_units)::bigint,
			sum(platform_units)::bigint, sum(pool_units)::bigint, bool_and(state = 'forwarded') FROM settlement_batches`) +
		rows(t, pool, `SELECT purpose, kind, role, COALESCE(recipient, ''), COALESCE(node_id, ''), COALESCE(amount_units, 0), nonce, state
			FROM chain_txs ORDER BY purpose, id`) +
		rows(t, pool, `SELECT node_id, allocated_units FROM node_allocations ORDER BY 1`)
	t.Logf("%s settled in %v: %s", c.name, time.Since(began).Round(100*time.Millisecond), strings.Join(chainLines, "; "))
	return settleOutcome{books: books, chain: strings.Join(chainLines, "\n")}
}

// The third crash test: settlementd is SIGKILLed between sending a settlement
// transaction and recording its outcome (and, for contrast, between recording
// one and sending it), then restarted. The USDT balances, on-chain
// allocations, transactions per intent and Postgres settlement books must be
// exactly those of an uninterrupted run over the same stream on its own
// chain. The runs are independent and go in parallel.
func TestCrashBetweenSettlementBroadcastAndRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	rdb := testenv.Redis(t)
	bin := buildCrashable(t)

	// Two past epochs of traffic served by four nodes, and a third, empty
	// one; all must close.
	first := events.EpochOf(time.Now()) - 4
	from := time.Unix(first*events.EpochSeconds, 0)
	evs := settletest.Traffic(7, 400, from, from.Add(2*time.Minute))
	ids := settletest.TimeIDs(evs)
	last := first + 2

	// Transactions in order: 1-3 the treasury's transfers (ClaimsContract,
	// platform, pool), then per node by id: createClaim NODE-AP (4), then
	// NODE-EU-AAAAAAAA (operator-1): setNodeWallet (5), createClaim (6), …
	cases := []settleCase{
		{name: "uninterrupted"},
		{"claims transfer sent, not recorded", "chaintx-after-broadcast:1", "settle:1:claims"},
		{"claims transfer recorded, not sent", "chaintx-before-broadcast:1", "settle:1:claims"},
		{"createClaim sent, not recorded", "chaintx-after-broadcast:6", "alloc:NODE-EU-AAAAAAAA:"},
	}
	out := make([]settleOutcome, len(cases))
	t.Run("runs", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				out[i] = settleScenario(t, bin, rdb, c, evs, ids, first, last)
			})
		}
	})
	if t.Failed() {
		return
	}
	for i, c := range cases[1:] {
		got := out[i+1]
		if got.chain != out[0].chain {
			t.Errorf("%s: chain differs from the uninterrupted run\nwant\n%s\ngot\n%s", c.name, out[0].chain, got.chain)
		}
		if got.books != out[0].books {
			t.Errorf("%s: Postgres differs from the uninterrupted run\nwant\n%s\ngot\n%s", c.name, out[0].books, got.books)
		}
	}
	t.Logf("crashed and uninterrupted runs agree:\n%s\n%s", out[0].chain, out[0].books)
}
