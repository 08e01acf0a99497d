package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// bundleGateway does to Redis what the gateway does for x402 bundles, per
// the shared/balances layout: a settled payment adds the bundle's calls to
// calls and granted once per tx hash (the grants set) and creates a bundle
// key (account hash of kind bundle with w = the wallet); a draw moves calls
// to used; a refund moves them back. Each writes its events to the stream in
// the same script, as the gateway's scripts do.
type bundleGateway struct {
	t      *testing.T
	rdb    *redis.Client
	l      balances.Layout
	now    int64
	nextID int
}

var (
	gwGrant = redis.NewScript(`
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'calls', ARGV[2])
redis.call('HINCRBY', KEYS[2], 'granted', ARGV[2])
redis.call('SET', KEYS[4], ARGV[4])
redis.call('HSET', KEYS[5], 'st', 'active', 'tier', 'free', 'kind', 'bundle', 'label', 'x402 bundle', 'ts', ARGV[3], 'w', ARGV[5])
redis.call('XADD', KEYS[1], '*', 't', 'bundle_granted', 'v', '1', 'd', ARGV[6])
redis.call('XADD', KEYS[1], '*', 't', 'key_created', 'v', '1', 'd', ARGV[7])
return 1`)
	gwDraw = redis.NewScript(`
local n = tonumber(ARGV[1])
if tonumber(redis.call('HGET', KEYS[2], 'calls') or '0') < n then return 0 end
redis.call('HINCRBY', KEYS[2], 'calls', -n)
redis.call('HINCRBY', KEYS[2], 'used', n)
redis.call('XADD', KEYS[1], '*', 't', 'debit', 'v', '1', 'd', ARGV[2])
return 1`)
	gwRefund = redis.NewScript(`
redis.call('HINCRBY', KEYS[2], 'calls', ARGV[1])
redis.call('HINCRBY', KEYS[2], 'used', -tonumber(ARGV[1]))
redis.call('XADD', KEYS[1], '*', 't', 'refund', 'v', '1', 'd', ARGV[2])
return 1`)
)

func payload(t *testing.T, e events.Event) string {
	t.Helper()
	f, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return f[5].(string)
}

func (g *bundleGateway) tick() int64 { g.now++; return g.now }

// grant books a settled payment of tx for wallet; it reports whether the
// grant was new and returns the bundle key's id.
func (g *bundleGateway) grant(wallet, tx string) (string, bool) {
	g.t.Helper()
	ms := g.tick()
	id := accounts.NewID()
	hash := strings.Repeat(fmt.Sprintf("%04x", g.tick()%0x10000), 16)
	ok, err := gwGrant.Run(context.Background(), g.rdb,
		[]string{g.l.Stream(0), g.l.Bundle(wallet), g.l.BundleGrants(wallet), g.l.KeyLookup(hash), g.l.Account(id)},
		tx, money.BundleCalls, ms, id, wallet,
		payload(g.t, &events.BundleGranted{ID: tx, Wallet: wallet, Calls: money.BundleCalls, Amount: money.BundlePrice, Network: "eip155:8453", KeyID: id, TimeMs: ms}),
		payload(g.t, &events.KeyCreated{KeyID: id, KeyHash: hash, Kind: events.KeyBundle, Label: "x402 bundle", Tier: "free", Wallet: wallet, TimeMs: ms}),
	).Bool()
	if err != nil {
		g.t.Fatal(err)
	}
	return id, ok
}

// draw takes n calls from wallet's bundle (SIWX, payment or bundle key: the
// debit names the wallet in each case); it returns the request id, "" when
// the bundle has too few calls.
func (g *bundleGateway) draw(wallet string, n int) string {
	g.t.Helper()
	g.nextID++
	id := fmt.Sprintf("breq-%d", g.nextID)
	ok, err := gwDraw.Run(context.Background(), g.rdb, []string{g.l.Stream(0), g.l.Bundle(wallet)}, n,
		payload(g.t, &events.Debit{ID: id, TimeMs: g.tick(), ChainID: 8453, Payer: events.PayerBundle, Account: wallet,
			Asset: events.AssetUSDC, Amount: money.BundleCallRevenue * money.Units(n), Calls: n})).Bool()
	if err != nil {
		g.t.Fatal(err)
	}
	if !ok {
		return ""
	}
	return id
}

func (g *bundleGateway) refund(wallet, id string, n int) {
	g.t.Helper()
	if err := gwRefund.Run(context.Background(), g.rdb, []string{g.l.Stream(0), g.l.Bundle(wallet)}, n,
		payload(g.t, &events.Refund{ID: id, TimeMs: g.tick(), Payer: events.PayerBundle, Account: wallet,
			Amount: money.BundleCallRevenue * money.Units(n), Calls: n})).Err(); err != nil {
		g.t.Fatal(err)
	}
}

// flushPrefix deletes every key of the test's prefix: Redis lost.
func flushPrefix(t *testing.T, rdb *redis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := rdb.Del(ctx, iter.Val()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(rdb.Keys(ctx, prefix+"*").Val()); n != 0 {
		t.Fatalf("%d keys left after the flush", n)
	}
}

// x402 bundles: a healthy system with bundles, bundle keys and
// credit keys side by side is left exactly as it is; after the prefix is
// flushed, reconcile rebuilds every wallet's bundle hash and grants set and
// every bundle key's record exactly, and a bundle key never gets credits.
func TestReconcileBundlesHealthyNoOpAndRebuild(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	g := &bundleGateway{t: t, rdb: rdb, l: l, now: time.Now().UnixMilli()}

	// Credit keys next to the bundles, made by the gateway's own code.
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, FreeDailyLimit: 500, FreeSubnetLimit: 2500})
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("192.0.2.9")
	var credit []meter.CreatedKey
	for i := range 2 {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: fmt.Sprint("credit ", i), Tier: "free", IP: ip})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("0xdep%d:0", i)
		if _, _, err := balances.Credit(ctx, rdb, prefix, k.ID, 3_000, id); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', $2, 3000, now())`, k.ID, id); err != nil {
			t.Fatal(err)
		}
		credit = append(credit, k)
	}
	var revs []events.Event
	for i := range 20 {
		d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(credit[i%2].Secret), Calls: 1 + i%2})
		if err != nil {
			t.Fatal(err)
		}
		if ev, ok := d.Revenue(0, "alchemy", "", time.Now()); ok {
			revs = append(revs, ev)
		}
	}
	settletest.XAdd(t, rdb, l.Stream(0), revs...)

	tx := func(i int) string { return fmt.Sprintf("0x%064x", 0xfeed00+i) }
	wA, wB, wC, wD := settletest.Wallet(200), settletest.Wallet(201), settletest.Wallet(202), settletest.Wallet(203)
	var bundleKeys []string
	mustGrant := func(w, h string) {
		id, ok := g.grant(w, h)
		if !ok {
			t.Fatalf("grant %s of %s was not new", h, w)
		}
		bundleKeys = append(bundleKeys, id)
	}
	// A: two payments, heavy use with refunds; a retried grant grants nothing.
	mustGrant(wA, tx(1))
	for i := range 300 {
		n := 1 + i%4
		id := g.draw(wA, n)
		if id == "" {
			t.Fatalf("draw %d of A refused", i)
		}
		if i%9 == 0 {
			g.refund(wA, id, n)
		}
	}
	if _, ok := g.grant(wA, tx(1)); ok {
		t.Fatal("a replayed grant was granted again")
	}
	mustGrant(wA, tx(2))
	for range 250 {
		if g.draw(wA, 3) == "" {
			t.Fatal("draw of A refused")
		}
	}
	// B: used up exactly (calls "0"), then refused.
	mustGrant(wB, tx(3))
	for range 10 {
		if g.draw(wB, 100) == "" {
			t.Fatal("draw of B refused")
		}
	}
	if g.draw(wB, 1) != "" {
		t.Fatal("an empty bundle served")
	}
	// C: granted, never drawn (the paying request was larger than a bundle).
	mustGrant(wC, tx(4))
	// D: the paying call drawn and refunded: used exists and is "0".
	mustGrant(wD, tx(5))
	g.refund(wD, g.draw(wD, 1), 1)
	// One bundle key revoked, as the gateway's admin path does it.
	rdb.HSet(ctx, l.Account(bundleKeys[1]), balances.FieldStatus, balances.StatusRevoked)
	settletest.XAdd(t, rdb, l.Stream(0), &events.KeyRevoked{KeyID: bundleKeys[1], TimeMs: g.tick()})

	if _, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil); !errors.Is(err, ErrNotIngested) {
		t.Fatalf("reconcile before ingest: %v", err)
	}
	ingestAll(t, rdb, pool, l.Stream(0))

	want := map[string][3]string{ // calls, granted, used
		wA: {fmt.Sprint(2000 - hgetInt(t, rdb, l.Bundle(wA), "used")), "2000", ""},
		wB: {"0", "1000", "1000"},
		wC: {"1000", "1000", ""},
		wD: {"1000", "1000", "0"},
	}
	for w, f := range want {
		got := rdb.HGetAll(ctx, l.Bundle(w)).Val()
		if got["calls"] != f[0] || got["granted"] != f[1] || (f[2] != "" && got["used"] != f[2]) {
			t.Fatalf("the simulated gateway built %s = %v, want calls/granted/used %v", w, got, f)
		}
	}
	if _, ok := rdb.HGetAll(ctx, l.Bundle(wC)).Val()["used"]; ok {
		t.Fatal("C has a used field without any draw")
	}
	before := dump(t, rdb, prefix)
	for run := range 2 {
		rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Changed != 0 || rep.WalletsChanged != 0 || len(rep.Fields) != 0 ||
			rep.Accounts != len(credit)+len(bundleKeys) || rep.Wallets != 4 {
			t.Fatalf("run %d on a healthy system: %+v", run, rep)
		}
		if after := dump(t, rdb, prefix); after != before {
			t.Fatalf("run %d changed Redis:\nbefore\n%s\nafter\n%s", run, before, after)
		}
	}

	// Postgres agrees with the live bundle (calls = granted − used).
	for w := range want {
		live := rdb.HGetAll(ctx, l.Bundle(w)).Val()
		if n := settletest.Count(t, pool, `SELECT bundle_calls FROM account_balances WHERE account = $1`, w); fmt.Sprint(n) != live["calls"] {
			t.Errorf("%s: Postgres bundle_calls %d, Redis calls %s", w, n, live["calls"])
		}
	}

	// Redis is lost: everything under the prefix, stream included.
	flushPrefix(t, rdb, prefix)
	rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix}, nil) // dry run
	if err != nil {
		t.Fatal(err)
	}
	// Every wallet differs in calls (B's "0" included), granted and grants;
	// in used all but C, which never drew (the gateway made no used field).
	if rep.WalletsChanged != 4 || rep.Fields["bundle.grants"] != 4 || rep.Fields["bundle.granted"] != 4 ||
		rep.Fields["bundle.calls"] != 4 || rep.Fields["bundle.used"] != 3 ||
		rep.Changed != len(credit)+len(bundleKeys) || rep.Fields["w"] != len(bundleKeys) || rep.Fields["bal"] != len(credit) {
		t.Fatalf("dry run after the loss: %+v", rep)
	}
	if d := dump(t, rdb, prefix); d != "" {
		t.Fatalf("dry run wrote:\n%s", d)
	}
	if _, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt := dump(t, rdb, prefix); rebuilt != before {
		t.Fatalf("rebuilt Redis differs:\nwant\n%s\ngot\n%s", before, rebuilt)
	}
	// The rebuilt bundles work: a replayed grant still grants nothing, a
	// draw is served from what is left, an empty bundle stays empty.
	if _, ok := g.grant(wA, tx(2)); ok {
		t.Fatal("a replayed grant was granted again after the rebuild")
	}
	if g.draw(wC, 1000) == "" || g.draw(wB, 1) != "" {
		t.Fatal("rebuilt bundles do not serve as they should")
	}
	for _, k := range bundleKeys {
		f := rdb.HGetAll(ctx, l.Account(k)).Val()
		if _, ok := f[balances.FieldBal]; ok {
			t.Fatalf("bundle key %s was given a credit balance: %v", k, f)
		}
		if f[balances.FieldKind] != string(events.KeyBundle) || !strings.HasPrefix(f[balances.FieldWallet], "0x") {
			t.Fatalf("bundle key %s rebuilt as %v", k, f)
		}
	}

	// A bundle key never gets credits from reconcile, even when the ledger
	// holds money for its id (a deposit sent to it by hand).
	if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', '0xstray:0', 5000, now())`, bundleKeys[0]); err != nil {
		t.Fatal(err)
	}
	// And a damaged bundle field is repaired alone.
	rdb.HSet(ctx, l.Bundle(wD), balances.BundleCalls, "999999")
	ingestAll(t, rdb, pool, l.Stream(0)) // the draw above, on the new stream
	rep, err = Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.WalletsChanged != 1 || rep.Fields["bundle.calls"] != 1 || rep.Fields["bal"] != 0 || rep.Fields["spent"] != 0 {
		t.Fatalf("repair run: %+v", rep)
	}
	if v := rdb.HGet(ctx, l.Bundle(wD), balances.BundleCalls).Val(); v != "1000" {
		t.Fatalf("damaged calls repaired to %q", v)
	}
	if n := rdb.HExists(ctx, l.Account(bundleKeys[0]), balances.FieldBal).Val(); n {
		t.Fatal("reconcile gave a bundle key a credit balance")
	}
}

func hgetInt(t *testing.T, rdb *redis.Client, key, field string) int64 {
	t.Helper()
	v, err := rdb.HGet(context.Background(), key, field).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
