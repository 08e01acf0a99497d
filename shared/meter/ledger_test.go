package meter_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A Redis older than the ledger (its state count below the floor the
// gateway learned from settlementd) is found by the first metering decision
// on it: the decision books nothing and answers Recovering, the shard's
// marker is gone and its count is -1, so every later decision — this
// gateway's or another's with no floor at all — is Recovering too, for a
// valid key with credits as for an unknown one; the alert fires once. A
// Redis at or above the floor serves as before; an emptied Redis starts its
// count above the floor.
func TestOlderThanLedgerRefusesMoney(t *testing.T) {
	var alerts atomic.Int64
	ret := meter.NewRetention(fixtureShards, 0, 0)
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10, Retain: ret,
		OnOlderThanLedger: func(int) { alerts.Add(1) }})
	ctx := context.Background()
	secret, id := f.newKey(t)
	f.credit(t, id, 100*money.PricePerCall)
	req := meter.Request{ChainID: 137, IP: ip("192.0.2.61"), Calls: 1, KeyHash: meter.HashKey(secret)}
	if d := f.authorize(t, req); d.Outcome != meter.Paid {
		t.Fatalf("before: %+v", d)
	}
	shard := f.layout().ShardOfKey(meter.HashKey(secret))
	l := f.layout().Shard(shard)
	count := func() int64 {
		v, err := f.rdb.Get(ctx, l.Seq()).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	s := count()
	if s < time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Fatalf("a new count starts at Redis's clock in µs, got %d", s)
	}
	if d := f.authorize(t, req); d.Outcome != meter.Paid || count() != s+1 {
		t.Fatalf("a decision counts one: %+v, count %d after %d", d, count(), s)
	}
	// The ledger caught up with this count: still served.
	ret.RaiseFloor(shard, count())
	if d := f.authorize(t, req); d.Outcome != meter.Paid {
		t.Fatalf("at the floor: %+v", d)
	}
	bal := f.balance(t, id)
	events := len(f.stream(t))

	// The Redis goes back in time: its count is below what the ledger has.
	ret.RaiseFloor(shard, count()+1000)
	d := f.authorize(t, req)
	if d.Outcome != meter.Recovering || d.RetryAfter != meter.RecoveryRetryAfter {
		t.Fatalf("older than the ledger: %+v, want recovering", d)
	}
	if alerts.Load() != 1 {
		t.Fatalf("%d alerts, want 1", alerts.Load())
	}
	if n, _ := f.rdb.Exists(ctx, l.Generation()).Result(); n != 0 {
		t.Fatal("the shard kept its generation marker")
	}
	if count() != -1 {
		t.Fatalf("count %d, want -1 (marked)", count())
	}
	// Another gateway that knows no floor is refused as well, with no
	// second alert from this one.
	other, err := meter.New(f.rdb, meter.Config{Prefix: f.prefix, Shards: f.shards, FreeDailyLimit: 10, FreeSubnetLimit: 10, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d, err := other.Authorize(ctx, req)
		if err != nil || d.Outcome != meter.Recovering {
			t.Fatalf("another gateway: %+v %v", d, err)
		}
	}
	if d := f.authorize(t, req); d.Outcome != meter.Recovering || alerts.Load() != 1 {
		t.Fatalf("again: %+v, %d alerts", d, alerts.Load())
	}
	if got := f.balance(t, id); got != bal {
		t.Fatalf("balance %d moved from %d while older than the ledger", got, bal)
	}
	if n := len(f.stream(t)); n != events {
		t.Fatalf("%d events booked while older than the ledger", n-events)
	}

	// settlementd's wipe ends by deleting the count: the next decision
	// starts it above the floor (and, the marker missing, a key it cannot
	// find is Recovering, not unknown).
	floor := ret.Floor(shard)
	if err := f.rdb.Del(ctx, l.Seq()).Err(); err != nil {
		t.Fatal(err)
	}
	f.authorize(t, req)
	if c := count(); c <= floor {
		t.Fatalf("restarted count %d not above the floor %d", c, floor)
	}
	if alerts.Load() != 1 {
		t.Fatalf("%d alerts after the restart", alerts.Load())
	}
}

// An x402 grant on a Redis older than the ledger grants nothing: its grants
// set is the past's, so a transaction granted since the snapshot would be
// granted again. The grant fails (ErrUnavailable; the gateway answers 503
// and the payer retries the same payment once the shard is rebuilt), the
// alert fires, and the shard is marked for every later decision.
func TestOlderThanLedgerRefusesGrant(t *testing.T) {
	var alerts atomic.Int64
	ret := meter.NewRetention(fixtureShards, 0, 0)
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10, Retain: ret,
		OnOlderThanLedger: func(int) { alerts.Add(1) }})
	ctx := context.Background()
	req := meter.Request{ChainID: 137, IP: ip("198.51.100.8"), Calls: 1}
	pg, err := f.m.PrepareGrant(req, grant("0xddd"))
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := f.m.GrantBundle(ctx, pg); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("first grant: %+v %v", d, err)
	}
	shard := f.layout().ShardOfPayer(wallet)
	l := f.layout().Shard(shard)
	calls, granted, used := f.bundleHash(t)
	s, err := f.rdb.Get(ctx, l.Seq()).Int64()
	if err != nil {
		t.Fatal(err)
	}
	ret.RaiseFloor(shard, s+1000)
	pg2, err := f.m.PrepareGrant(req, grant("0xeee"))
	if err != nil {
		t.Fatal(err)
	}
	if _, key, err := f.m.GrantBundle(ctx, pg2); !errors.Is(err, meter.ErrUnavailable) || key != nil {
		t.Fatalf("grant on a Redis older than the ledger: key %v, err %v; want ErrUnavailable", key, err)
	}
	if c, g, u := f.bundleHash(t); c != calls || g != granted || u != used {
		t.Fatalf("bundle moved: %d %d %d, was %d %d %d", c, g, u, calls, granted, used)
	}
	if alerts.Load() != 1 {
		t.Fatalf("%d alerts, want 1", alerts.Load())
	}
	if v, _ := f.rdb.Get(ctx, l.Seq()).Int64(); v != -1 {
		t.Fatalf("count %d, want -1", v)
	}
}

// What a gateway tells settlementd's trim it may still look up: now less
// the margin when it holds nothing; a request it may still void holds the
// stream from that request on, on its shard only, until its void is
// settled.
func TestKeepFrom(t *testing.T) {
	ret := meter.NewRetention(2, 0, 0)
	now := time.UnixMilli(1_800_000_000_000)
	if got, want := ret.KeepFrom(0, now), now.Add(-5*time.Second).UnixMilli(); got != want {
		t.Fatalf("nothing kept: %d, want %d", got, want)
	}
	old := now.Add(-3 * time.Minute).UnixMilli()
	ret.HoldVoid(1, "req-1", old)
	if got := ret.KeepFrom(1, now); got != old {
		t.Fatalf("a pending void on shard 1: %d, want %d", got, old)
	}
	if got := ret.KeepFrom(0, now); got != now.Add(-5*time.Second).UnixMilli() {
		t.Fatalf("shard 0 held by shard 1's void: %d", got)
	}
	ret.ReleaseVoid("req-1")
	if got := ret.KeepFrom(1, now); got != now.Add(-5*time.Second).UnixMilli() {
		t.Fatalf("after the void: %d", got)
	}
	// A hold nobody settles ends after the void's patience.
	ret.HoldVoid(0, "req-2", old)
	if got := ret.KeepFrom(0, now.Add(12*time.Minute)); got != now.Add(12*time.Minute-5*time.Second).UnixMilli() {
		t.Fatalf("an abandoned hold still holds: %d", got)
	}
}
