package recovery

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// A snapshot from before the state count existed holds the generation
// marker and no count: it is refused like any Redis older than the ledger
// once a floor is known — by the watcher, and by the first metering
// decision of a gateway that knows the floor. A rebuild gives every shard
// its count before it sets the marker, so a Redis built with no decision
// yet is not taken for such a snapshot.
func TestSnapshotWithoutCountRefused(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil { // a new deployment: built, no decision yet
		t.Fatal(err)
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); !ok {
		t.Fatal("not built")
	}
	seq, err := rdb.Get(ctx, l.Seq()).Int64()
	if err != nil || seq <= 0 {
		t.Fatalf("built without a count: %d %v", seq, err)
	}
	// The ledger has caught up with some count; the Redis keeps its own.
	if err := rdb.Set(ctx, l.LedgerSeq(), seq, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil || value(w.olderTotal) != 0 {
		t.Fatalf("a built Redis at the floor taken for older: %v, alerts %v", err, value(w.olderTotal))
	}
	// Restored from a snapshot taken before counts: the marker, no count.
	if err := rdb.Del(ctx, l.Seq()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if value(w.olderTotal) != 1 {
		t.Fatal("the watcher served a built Redis without a count under a known floor")
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); ok {
		t.Fatal("marker still there after the wipe")
	}
	w.missingSince = time.Now().Add(-time.Hour)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); !ok {
		t.Fatal("not rebuilt")
	}
	// The same snapshot again, found by a gateway that knows the floor.
	if err := rdb.Del(ctx, l.Seq()).Err(); err != nil {
		t.Fatal(err)
	}
	ret := meter.NewRetention(1, 0, 0)
	ret.RaiseFloor(0, seq)
	found := 0
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, Retain: ret, OnOlderThanLedger: func(int) { found++ }})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := meter.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.12"), Calls: 1, KeyHash: meter.HashKey(secret)}
	if d, err := m.Authorize(ctx, req); err != nil || d.Outcome != meter.Recovering || found != 1 {
		t.Fatalf("a gateway on a built Redis without a count: %+v %v, alerts %d", d, err, found)
	}
}
