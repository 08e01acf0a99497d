package main

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/hardhat"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// stuckCase is one run of the stuck-settlement scenario.
type stuckCase struct {
	name string
	// hook is where the process is SIGKILLed: after the first replacement
	// is recorded (before it is sent), or after it is sent. "": no kill.
	hook string
	// originalMined: after the kill the node gives up the replacement and
	// mines the original (the spike ended; a node kept the original).
	originalMined bool
}

// miner mines a block every 50 ms at a given base fee, until stopped.
type miner struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func mine(ctx context.Context, n *hardhat.Node, baseFee *big.Int) *miner {
	ctx, cancel := context.WithCancel(ctx)
	m := &miner{cancel: cancel}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if n.SetNextBaseFee(ctx, baseFee) != nil || n.Mine(ctx) != nil {
				return
			}
		}
	}()
	return m
}

func (m *miner) stop() { m.cancel(); m.wg.Wait() }

// stuckScenario settles two epochs of traffic from a real Hardhat node in
// a gas spike: the treasury's transfers are priced before the spike, so they
// stay pending until settlementd replaces them with higher fees.
func stuckScenario(t *testing.T, bin string, rdb *redis.Client, c stuckCase, evs []events.Event, ids []string, first, last int64) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	n := hardhat.Start(t, 137)

	// Accounts as on the dev chain (same keys), funded by the node.
	m := &devnet.Manifest{}
	for _, name := range []string{"deployer", "treasury", "relayer", "governor", "platform", "pool", "operator-1", "operator-2"} {
		k := devnet.DevKey(name)
		a := crypto.PubkeyToAddress(k.PublicKey)
		m.Accounts = append(m.Accounts, devnet.Account{Name: name, Address: a.Hex(), PrivateKey: "0x" + common.Bytes2Hex(crypto.FromECDSA(k))})
		if err := n.SetBalance(ctx, a, new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18))); err != nil {
			t.Fatal(err)
		}
	}
	ch := &settleChain{t: t, ctx: ctx, m: m, client: n.Client, usdt: testusdt.NewTestUSDT(), claims: claimscontract.NewClaimsContract()}
	var poly *deploy.Polygon
	if err := n.Automined(ctx, func() (err error) {
		deployer := bind.NewKeyedTransactor(devnet.DevKey("deployer"), big.NewInt(137))
		if poly, err = deploy.DeployPolygon(ctx, n.Client, deployer, deploy.PolygonParams{Treasury: ch.addr("treasury"),
			Governor: ch.addr("governor"), ClaimCreator: ch.addr("relayer"), MinDeposit: big.NewInt(1)},
			deploy.WithPollInterval(10*time.Millisecond)); err != nil {
			return err
		}
		deployer.Context = ctx
		usdtC := ch.usdt.Instance(n.Client, poly.USDT)
		mint, err := bind.Transact(usdtC, deployer, ch.usdt.PackMint(ch.addr("treasury"), treasuryFunding.Big()))
		if err != nil {
			return err
		}
		r, err := deploy.WaitReceipt(ctx, n.Client, mint.Hash(), 10*time.Millisecond)
		if err == nil && r.Status != types.ReceiptStatusSuccessful {
			err = errors.New("mint reverted")
		}
		return err
	}); err != nil {
		t.Fatalf("setting up the hardhat node: %v\n%s", err, n.Output())
	}
	ch.usdtA = poly.USDT
	ch.usdtC, ch.claimsC = ch.usdt.Instance(n.Client, poly.USDT), ch.claims.Instance(n.Client, poly.Claims)
	wallets := []string{"treasury", "platform", "pool"}
	before := map[string]money.Units{"claims": ch.balance(poly.Claims)}
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
	p := start(t, bin, dsn, prefix, "")
	settletest.Eventually(t, 60*time.Second, "epochs closed", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED' AND id BETWEEN $1 AND $2`, first, last) == last-first+1, nil
	})
	p.term(t)

	stuckAfter := "1s"
	if c.hook == "" {
		// Long enough for the dropped transaction to be noticed (polled
		// every second) before it would count as stuck.
		stuckAfter = "3s"
	}
	chainEnv := []string{
		"TOLLGATE_CHAIN_RPC_URL=" + n.URL, "TOLLGATE_CHAIN_ID=137",
		"TOLLGATE_DEV=1", "TOLLGATE_USDT_ADDRESS=" + poly.USDT.Hex(), "TOLLGATE_VAULT_ADDRESS=" + poly.Vault.Hex(), "TOLLGATE_CLAIMS_ADDRESS=" + poly.Claims.Hex(),
		"TOLLGATE_PLATFORM_WALLET=" + ch.addr("platform").Hex(), "TOLLGATE_POOL_WALLET=" + ch.addr("pool").Hex(),
		"TOLLGATE_TREASURY_KEY=" + ch.key("treasury"), "TOLLGATE_RELAYER_KEY=" + ch.key("relayer"),
		"TOLLGATE_SETTLEMENT_SCHEDULE=* * * * * *", "TOLLGATE_SETTLEMENT_HOLD=0s",
		"TOLLGATE_TX_STUCK_AFTER=" + stuckAfter, "TOLLGATE_TX_FEE_BUMP_PERCENT=20", "TOLLGATE_TX_MAX_FEE_GWEI=1000",
	}
	p = start(t, bin, dsn, prefix, c.hook, chainEnv...)
	logs := p.log

	// The three transfers are sent, priced from the head before the spike.
	settletest.Eventually(t, 60*time.Second, "the transfers sent", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM chain_txs WHERE role = 'treasury' AND broadcasts > 0`) == 3, nil
	})
	version := func(purpose string, nth int) (common.Hash, []byte) {
		t.Helper()
		var h string
		var raw []byte
		if err := pool.QueryRow(ctx, `SELECT a.tx_hash, a.raw_tx FROM chain_tx_attempts a JOIN chain_txs c ON c.id = a.chain_tx_id
			WHERE c.purpose = $1 ORDER BY a.id OFFSET $2 LIMIT 1`, purpose, nth).Scan(&h, &raw); err != nil {
			t.Fatalf("version %d of %s: %v", nth, purpose, err)
		}
		return common.HexToHash(h), raw
	}
	origHash, origRaw := version("settle:1:claims", 0)
	var orig types.Transaction
	if err := orig.UnmarshalBinary(origRaw); err != nil {
		t.Fatal(err)
	}
	// The spike: every block's base fee 15 % above what the transfers
	// offer; only a replacement can pay it.
	spike := new(big.Int).Div(new(big.Int).Mul(orig.GasFeeCap(), big.NewInt(115)), big.NewInt(100))
	mn := &miner{cancel: func() {}}
	if !c.originalMined {
		mn = mine(ctx, n, spike)
	} // else no block at all until the kill: the replacement stays pending too
	defer func() { mn.stop() }()

	var dropped common.Hash
	if c.hook == "" {
		// The pool leg is evicted from the node's pool: it must be re-sent.
		dropped, _ = version("settle:1:pool", 0)
		if held, err := n.Drop(ctx, dropped); err != nil || !held {
			t.Fatalf("dropping %s: %v %v", dropped.Hex(), held, err)
		}
	}

	wantMined := "replacement"
	if c.hook != "" {
		p.blocked(t)
		p.kill(t)
		var reps, versions int64
		if err := pool.QueryRow(ctx, `SELECT replacements, (SELECT count(*) FROM chain_tx_attempts a WHERE a.chain_tx_id = c.id)
			FROM chain_txs c WHERE purpose = 'settle:1:claims' AND state = 'signed'`).Scan(&reps, &versions); err != nil || reps != 1 || versions != 2 {
			t.Fatalf("at the kill: %d replacements, %d versions (%v)", reps, versions, err)
		}
		repHash, _ := version("settle:1:claims", 1)
		_, _, repErr := n.Client.TransactionByHash(ctx, repHash)
		_, origPending, origErr := n.Client.TransactionByHash(ctx, origHash)
		if strings.HasPrefix(c.hook, "chaintx-before-replace-broadcast") {
			// Recorded, not sent: the node still holds the original only.
			if !errors.Is(repErr, ethereum.NotFound) || origErr != nil || !origPending {
				t.Fatalf("killed before sending: replacement %v, original pending %v %v", repErr, origPending, origErr)
			}
		} else if repErr != nil || !errors.Is(origErr, ethereum.NotFound) {
			t.Fatalf("killed after sending: replacement %v, original %v", repErr, origErr)
		}
		if c.originalMined {
			// The spike ends and the original, not its replacement, is mined.
			if held, err := n.Drop(ctx, repHash); err != nil || !held {
				t.Fatalf("dropping the replacement: %v %v", held, err)
			}
			if _, err := n.SendRaw(ctx, origRaw); err != nil {
				t.Fatal(err)
			}
			low := new(big.Int).Div(orig.GasFeeCap(), big.NewInt(2))
			if err := n.SetNextBaseFee(ctx, low); err != nil {
				t.Fatal(err)
			}
			if err := n.Mine(ctx); err != nil {
				t.Fatal(err)
			}
			if r, err := n.Client.TransactionReceipt(ctx, origHash); err != nil || r.Status != types.ReceiptStatusSuccessful {
				t.Fatalf("the original is not mined: %v %v", r, err)
			}
			mn = mine(ctx, n, low)
			wantMined = "original"
		}
		t.Logf("SIGKILLed at %s: settle:1:claims original %s, replacement %s", c.hook, origHash.Hex(), repHash.Hex())
		p = start(t, bin, dsn, prefix, "", chainEnv...)
	}
	settletest.Eventually(t, 90*time.Second, "settlement complete", func() (bool, error) {
		var ok bool
		err := pool.QueryRow(ctx, settledSQL, last).Scan(&ok)
		return ok, err
	})
	p.term(t)

	// The claims transfer: one row, mined with the expected version; the
	// other version of its nonce never mined.
	var minedHash string
	var minedRows int64
	if err := pool.QueryRow(ctx, `SELECT count(*), max(tx_hash) FROM chain_txs WHERE purpose = 'settle:1:claims' AND state = 'mined'`).
		Scan(&minedRows, &minedHash); err != nil || minedRows != 1 {
		t.Fatalf("settle:1:claims: %d mined rows (%v)", minedRows, err)
	}
	repHash, _ := version("settle:1:claims", 1)
	want, other := repHash, origHash
	if wantMined == "original" {
		want, other = origHash, repHash
	}
	if common.HexToHash(minedHash) != want {
		t.Fatalf("settle:1:claims recorded %s, want the %s %s", minedHash, wantMined, want.Hex())
	}
	if _, err := n.Client.TransactionReceipt(ctx, other); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the other version %s has a receipt: %v", other.Hex(), err)
	}
	// Every row: exactly one of its versions has a receipt, and it is the
	// recorded one.
	r, err := pool.Query(ctx, `SELECT c.purpose, c.tx_hash, array_agg(a.tx_hash ORDER BY a.id) FROM chain_txs c
		JOIN chain_tx_attempts a ON a.chain_tx_id = c.id GROUP BY c.id, c.purpose, c.tx_hash ORDER BY c.id`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		purpose, hash string
		versions      []string
	}
	var all []row
	for r.Next() {
		var x row
		if err := r.Scan(&x.purpose, &x.hash, &x.versions); err != nil {
			t.Fatal(err)
		}
		all = append(all, x)
	}
	r.Close()
	replaced := 0
	for _, x := range all {
		var got []string
		for _, v := range x.versions {
			if rc, err := n.Client.TransactionReceipt(ctx, common.HexToHash(v)); err == nil && rc.Status == types.ReceiptStatusSuccessful {
				got = append(got, v)
			}
		}
		if len(got) != 1 || got[0] != x.hash {
			t.Fatalf("%s: mined versions %v of %v, recorded %s", x.purpose, got, x.versions, x.hash)
		}
		if len(x.versions) > 1 {
			replaced++
		}
	}
	if replaced == 0 {
		t.Fatal("no transaction was replaced")
	}

	// Paid exactly once: the balances moved by the books' amounts, three
	// transfers from the treasury, and no transaction of our keys that the
	// books do not know.
	var earned, platform, poolU int64
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE kind = 'epoch_share')::bigint,
		(SELECT COALESCE(sum(platform_units + platform_operators_units), 0) FROM epochs WHERE state = 'CLOSED')::bigint,
		(SELECT COALESCE(sum(pool_units), 0) FROM epochs WHERE state = 'CLOSED')::bigint`).Scan(&earned, &platform, &poolU); err != nil {
		t.Fatal(err)
	}
	after := map[string]money.Units{"claims": ch.balance(poly.Claims)}
	for _, w := range wallets {
		after[w] = ch.balance(ch.addr(w))
	}
	delta := func(w string) money.Units { return after[w] - before[w] }
	if earned == 0 || delta("claims") != money.Units(earned) || delta("platform") != money.Units(platform) ||
		delta("pool") != money.Units(poolU) || delta("treasury") != -money.Units(earned+platform+poolU) {
		t.Fatalf("deltas %v (before %v), want claims %d platform %d pool %d", after, before, earned, platform, poolU)
	}
	transfers := ch.transfersFrom(ch.addr("treasury"))
	recorded := func(role string) uint64 {
		return uint64(settletest.Count(t, pool, `SELECT count(*) FROM chain_txs WHERE role = $1 AND state = 'mined'`, role))
	}
	tn, rn := ch.nonce("treasury"), ch.nonce("relayer")
	if len(transfers) != 3 || tn != 3 || tn != recorded("treasury") || rn != recorded("relayer") {
		t.Fatalf("treasury transfers %v, nonces treasury %d relayer %d, recorded %d %d", transfers, tn, rn, recorded("treasury"), recorded("relayer"))
	}
	for _, node := range settletest.Nodes {
		if a := ch.allocation(node); a == 0 {
			t.Fatalf("allocation(%s) = 0", node)
		}
	}
	if c.hook == "" {
		// The dropped transfer was sent again (then replaced or mined as is).
		if !strings.Contains(logs.String(), "unknown to the node (dropped); sending it again") || !strings.Contains(logs.String(), dropped.Hex()) {
			t.Fatalf("the dropped transfer %s was not re-sent:\n%s", dropped.Hex(), logs)
		}
	}
	t.Logf("%s: settled in %v; %d of %d transactions replaced; claims transfer mined as the %s; transfers %v",
		c.name, time.Since(began).Round(100*time.Millisecond), replaced, len(all), wantMined, transfers)
}

// Stuck transactions: settlement against a real node (Hardhat Network) in a gas
// spike. The transfers priced before the spike are replaced with higher
// fees and mined; settlement completes exactly once, also when settlementd
// is SIGKILLed between the original and its replacement (the replacement
// recorded but not sent, or sent and then the original mined after all);
// a transfer the node drops is re-sent.
func TestStuckSettlementOnARealNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	rdb := testenv.Redis(t)
	bin := buildCrashable(t)
	first := events.EpochOf(time.Now()) - 4
	from := time.Unix(first*events.EpochSeconds, 0)
	evs := settletest.Traffic(7, 400, from, from.Add(2*time.Minute))
	ids := settletest.TimeIDs(evs)
	last := first + 2
	for _, c := range []stuckCase{
		{name: "gas spike, a transfer dropped"},
		{name: "killed after recording the replacement", hook: "chaintx-before-replace-broadcast:1"},
		{name: "killed after sending the replacement, original mined", hook: "chaintx-after-replace-broadcast:1", originalMined: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stuckScenario(t, bin, rdb, c, evs, ids, first, last)
		})
	}
}
