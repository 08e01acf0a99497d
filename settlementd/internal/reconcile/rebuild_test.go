package reconcile

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The automatic rebuild after a loss (Options.Rebuild): on a wiped prefix
// it restores every key, balance, deposit set and bundle exactly and sets
// the generation marker; while it has not, the gateway's meter answers a
// valid key "recovering", never "unknown". Run again (a leader that took
// over before the marker was set), it leaves alone every record that is
// live by then — so calls paid after the first run are not given back —
// and a key created since the loss is left as the gateway made it.
func TestRebuildAfterLossIsExactAndSafeToRepeat(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, FreeDailyLimit: 100, FreeSubnetLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// A healthy deployment: the start-up run marks it.
	rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Rebuild: true}, nil)
	if err != nil || rep.Generation == "" {
		t.Fatalf("start-up run: %+v %v", rep, err)
	}
	ip := netip.MustParseAddr("192.0.2.77")
	var keys []meter.CreatedKey
	for i := range 3 {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: fmt.Sprint("k", i), IP: ip})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("0xdep%d", i)
		if _, _, err := balances.Credit(ctx, rdb, prefix, k.ID, 100*money.PricePerCall, id); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', $2, $3, now())`,
			k.ID, id, int64(100*money.PricePerCall)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	wallet := settletest.Wallet(300)
	pg, err := m.PrepareGrant(meter.Request{ChainID: 137, IP: ip, Calls: 1, Method: "eth_blockNumber"},
		meter.Grant{TxHash: fmt.Sprintf("0x%064x", 0xabc), Wallet: wallet, Network: "eip155:8453", Amount: money.BundlePrice, Calls: money.BundleCalls})
	if err != nil {
		t.Fatal(err)
	}
	if _, bk, err := m.GrantBundle(ctx, pg); err != nil || bk == nil {
		t.Fatalf("grant: %v", err)
	}
	pay := func(k meter.CreatedKey, calls int) meter.Decision {
		t.Helper()
		d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(k.Secret), Calls: calls})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i := range 30 {
		if d := pay(keys[i%3], 1+i%2); d.Outcome != meter.Paid {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	ingestAll(t, rdb, pool, l.Stream(0))
	before := dump(t, rdb, prefix)

	// Redis loses everything under the prefix.
	wipe(t, prefix)
	if d := pay(keys[0], 1); d.Outcome != meter.Recovering {
		t.Fatalf("a valid key after the loss: %+v, want recovering", d)
	}
	// A key created after the loss is the gateway's own, live at once.
	fresh, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "fresh", IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	freshRecord := rdb.HGetAll(ctx, l.Account(fresh.ID)).Val()

	rep, err = Run(ctx, pool, rdb, Options{Prefix: prefix, Rebuild: true}, nil)
	if err != nil || rep.Generation == "" || rep.Changed != len(keys)+1 || rep.WalletsChanged != 1 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
	if got := rdb.HGetAll(ctx, l.Account(fresh.ID)).Val(); len(got) == 0 || fmt.Sprint(got) != fmt.Sprint(freshRecord) {
		t.Fatalf("the key created after the loss was rewritten: %v, was %v", got, freshRecord)
	}
	rdb.Del(ctx, l.KeyLookup(meter.HashKey(fresh.Secret)), l.Account(fresh.ID))
	if after := dump(t, rdb, prefix); after != before {
		t.Fatalf("rebuilt Redis differs:\nwant\n%s\ngot\n%s", before, after)
	}
	if rdb.Exists(ctx, l.Rebuilding()).Val() != 0 {
		t.Fatal("the rebuild token was left behind")
	}
	unknown, _ := meter.NewKey()
	if d, _ := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(unknown), Calls: 1}); d.Outcome != meter.Unauthorized {
		t.Fatalf("an unknown key after the rebuild: %+v", d)
	}

	// Live traffic after the rebuild, not ingested yet; then the marker goes
	// missing again without a loss (a leader died before setting it) and a
	// second rebuild runs: nothing live is touched.
	d := pay(keys[1], 2)
	if d.Outcome != meter.Paid {
		t.Fatalf("paid after the rebuild: %+v", d)
	}
	live := dump(t, rdb, prefix)
	rdb.Del(ctx, l.Generation())
	rep, err = Run(ctx, pool, rdb, Options{Prefix: prefix, Rebuild: true}, nil)
	if err != nil || rep.Changed != 0 || rep.WalletsChanged != 0 || rep.Live != len(keys)+2 { // the credit keys, the bundle key, the wallet
		t.Fatalf("repeated rebuild: %+v %v", rep, err)
	}
	if again := dump(t, rdb, prefix); again != live {
		t.Fatalf("the repeated rebuild changed live records:\nbefore\n%s\nafter\n%s", live, again)
	}
	if bal, _ := balances.Balance(ctx, rdb, prefix, keys[1].ID); bal != d.Balance {
		t.Fatalf("balance %d after the repeated rebuild, want %d (the calls paid since must stay paid)", bal, d.Balance)
	}
}

// The marker is set only by the run whose token is still in Redis: a run
// overtaken by a second loss (its token gone) or a later run does not
// declare Redis whole.
func TestMarkerNeedsTheRunsOwnToken(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := balances.Layout{Prefix: testenv.KeyPrefix(t)}
	keys := []string{l.Rebuilding(), l.Generation(), l.Seq()}
	if n, err := markScript.Run(ctx, rdb, keys, "mine", "g1").Int(); err != nil || n != 0 {
		t.Fatalf("token gone (a second loss): %d %v", n, err)
	}
	rdb.Set(ctx, l.Rebuilding(), "later", time.Minute)
	if n, err := markScript.Run(ctx, rdb, keys, "mine", "g1").Int(); err != nil || n != 0 {
		t.Fatalf("another run's token: %d %v", n, err)
	}
	if rdb.Exists(ctx, l.Generation()).Val() != 0 {
		t.Fatal("marker set without the run's token")
	}
	if n, err := markScript.Run(ctx, rdb, keys, "later", "g2").Int(); err != nil || n != 1 || rdb.Get(ctx, l.Generation()).Val() != "g2" {
		t.Fatalf("own token: %d %v", n, err)
	}
	// The marker comes with the shard's state count: a built shard without
	// one is taken for a snapshot from before counts (recovery).
	if v, err := rdb.Get(ctx, l.Seq()).Int64(); err != nil || v < time.Now().Add(-time.Hour).UnixMicro() {
		t.Fatalf("marked without a state count: %d %v", v, err)
	}
}

// wipe deletes every key under prefix, as a Redis restarted empty has none.
func wipe(t *testing.T, prefix string) {
	t.Helper()
	ctx := context.Background()
	rdb := testenv.Redis(t)
	for _, k := range rdb.Keys(ctx, prefix+"*").Val() {
		rdb.Del(ctx, k)
	}
	if n := len(rdb.Keys(ctx, prefix+"*").Val()); n != 0 {
		t.Fatalf("%d keys left after the wipe", n)
	}
}
