package recovery

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A Redis whose state count is below the ledger's (restored from a
// snapshot, with no gateway metering on it yet) is found by the watcher
// itself: marked, alerted, wiped but for the stream and the bookkeeping,
// its count restarted above the floor, and rebuilt from PostgreSQL — the
// stale balance it held (the snapshot's, higher than PostgreSQL's) is gone.
// A count at or above the floor is left alone.
func TestWatcherWipesARedisOlderThanTheLedger(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil { // a new deployment: the marker
		t.Fatal(err)
	}
	// A key with 10 calls of credit in PostgreSQL; the restored Redis holds
	// the 100 it had at the snapshot.
	secret, err := meter.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	id := "key_00000000000000000000000001"
	if _, err := pool.Exec(ctx, `INSERT INTO api_keys (key_id, key_hash, kind, label, tier, created_at) VALUES ($1, $2, 'api', 'r', 'free', now())`, id, meter.HashKey(secret)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', '0xd', $2, now())`, id, int64(10*money.PricePerCall)); err != nil {
		t.Fatal(err)
	}
	w.missingSince = time.Time{}
	if err := rdb.Del(ctx, l.Generation()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // the key rebuilt, 10 calls
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, l.Account(id), balances.FieldBal, int64(100*money.PricePerCall)).Err(); err != nil {
		t.Fatal(err)
	}
	req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.9"), Calls: 1, KeyHash: meter.HashKey(secret)}
	if d, err := m.Authorize(ctx, req); err != nil || d.Outcome != meter.Paid {
		t.Fatalf("before: %+v %v", d, err)
	}
	seq, err := rdb.Get(ctx, l.Seq()).Int64()
	if err != nil {
		t.Fatal(err)
	}
	// At the floor: left alone.
	if err := rdb.Set(ctx, l.LedgerSeq(), seq, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); !ok || value(w.olderTotal) != 0 {
		t.Fatal("a Redis at the ledger's count was taken for older")
	}
	// The ledger moves past it: this Redis is from the past.
	floor := seq + 5000
	if err := rdb.Set(ctx, l.LedgerSeq(), floor, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if value(w.olderTotal) != 1 || value(w.older) != 1 {
		t.Fatalf("alert: total %v, gauge %v", value(w.olderTotal), value(w.older))
	}
	if n, _ := rdb.Exists(ctx, l.Account(id), l.KeyLookup(meter.HashKey(secret)), l.Generation()).Result(); n != 0 {
		t.Fatalf("%d of the account, its key lookup and the marker survived the wipe", n)
	}
	if n, _ := rdb.Exists(ctx, l.Stream(0), l.LedgerSeq()).Result(); n != 2 {
		t.Fatal("the wipe took the stream or the ledger's count")
	}
	if v, _ := rdb.Get(ctx, l.Seq()).Int64(); v <= floor {
		t.Fatalf("count restarted at %d, not above the floor %d", v, floor)
	}
	// Meanwhile the key is "recovering", not unknown.
	if d, err := m.Authorize(ctx, req); err != nil || d.Outcome != meter.Recovering {
		t.Fatalf("after the wipe: %+v %v", d, err)
	}
	// The next ticks rebuild it from PostgreSQL: 10 calls less the one paid
	// (its debit not ingested here: PostgreSQL's 10).
	w.missingSince = time.Now().Add(-time.Hour)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); !ok {
		t.Fatal("not rebuilt")
	}
	if bal, err := balances.Balance(ctx, rdb, prefix, id); err != nil || bal != 10*money.PricePerCall {
		t.Fatalf("balance %d %v, want PostgreSQL's %d", bal, err, 10*money.PricePerCall)
	}
	if value(w.older) != 0 {
		t.Fatal("the gauge stayed up after the rebuild")
	}
	if err := w.Run(ctx); err != nil || value(w.olderTotal) != 1 {
		t.Fatalf("a later tick: %v, alerts %v", err, value(w.olderTotal))
	}
}

// value reads a counter's or a gauge's value.
func value(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
