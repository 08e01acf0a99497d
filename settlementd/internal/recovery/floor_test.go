package recovery

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A full-stack restart onto a Redis restored from a snapshot: every
// gateway and settlementd start with no memory of the ledger floor, and the
// restored Redis holds the snapshot's (here none). The floor ingest
// published before is kept in PostgreSQL, so the new settlementd's watcher
// finds the shard older at its first tick and wipes it, and the new
// ingester publishes PostgreSQL's floor (not the snapshot's count) to the
// restored Redis, so a freshly started gateway holds it to that floor.
func TestFloorSurvivesAFullStackRestart(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	stream := l.Stream(0)
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil { // a new deployment: the marker
		t.Fatal(err)
	}
	secret, err := meter.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	id := "key_00000000000000000000000002"
	if _, err := pool.Exec(ctx, `INSERT INTO api_keys (key_id, key_hash, kind, label, tier, created_at) VALUES ($1, $2, 'api', 'r', 'free', now())`, id, meter.HashKey(secret)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', '0xd', $2, now())`, id, int64(1000*money.PricePerCall)); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, l.Generation()).Err(); err != nil {
		t.Fatal(err)
	}
	w.missingSince = time.Time{}
	if err := w.Run(ctx); err != nil { // the key rebuilt
		t.Fatal(err)
	}
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.10"), Calls: 1, KeyHash: meter.HashKey(secret)}
	pay := func() {
		t.Helper()
		if d, err := m.Authorize(ctx, req); err != nil || d.Outcome != meter.Paid {
			t.Fatalf("paid call: %+v %v", d, err)
		}
	}
	pay()
	// The snapshot: the state count and the balance at this point.
	snapSeq, err := rdb.Get(ctx, l.Seq()).Int64()
	if err != nil {
		t.Fatal(err)
	}
	snapBal, err := balances.Balance(ctx, rdb, prefix, id)
	if err != nil {
		t.Fatal(err)
	}
	// Paid load ingested until the ledger's floor is past the snapshot.
	runIngest := func() (stop func()) {
		in, err := ingest.New(rdb, pool, ingest.Config{Stream: stream, Consumer: "t", Block: 50 * time.Millisecond, WatermarkEvery: 10 * time.Millisecond}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ictx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { in.Run(ictx); close(done) }()
		return func() { cancel(); <-done }
	}
	stop := runIngest()
	deadline := time.Now().Add(60 * time.Second)
	var redisFloor int64
	for {
		pay()
		redisFloor, _ = rdb.Get(ctx, l.LedgerSeq()).Int64()
		if redisFloor > snapSeq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger floor %d never passed the snapshot's count %d", redisFloor, snapSeq)
		}
		time.Sleep(20 * time.Millisecond) // pacing the load, not a sync
	}
	stop()
	var pgFloor int64
	if err := pool.QueryRow(ctx, `SELECT ledger_seq FROM ingest_watermark WHERE stream = $1`, stream).Scan(&pgFloor); err != nil {
		t.Fatal(err)
	}
	if pgFloor < redisFloor {
		t.Fatalf("PostgreSQL keeps floor %d, below the %d published", pgFloor, redisFloor)
	}
	// Everything stops; Redis comes back from the snapshot (its count, its
	// balance, no ledger count yet), and everything starts again.
	restore := func() {
		t.Helper()
		if err := rdb.Set(ctx, l.Seq(), snapSeq, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Del(ctx, l.LedgerSeq()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.HSet(ctx, l.Account(id), balances.FieldBal, int64(snapBal)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	restore()
	w2 := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w2.Grace = 0
	if err := w2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if value(w2.olderTotal) != 1 {
		t.Fatalf("a restarted settlementd did not find the restored Redis older than the ledger (count %d, PostgreSQL's floor %d)", snapSeq, pgFloor)
	}
	if n, _ := rdb.Exists(ctx, l.Account(id)).Result(); n != 0 {
		t.Fatal("the snapshot's account survived")
	}
	// The rebuild: PostgreSQL's balance again.
	w2.missingSince = time.Now().Add(-time.Hour)
	if err := w2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Restored once more, with only a restarted ingester and a gateway that
	// just started (floor 0) running: the ingester publishes PostgreSQL's
	// floor to the restored Redis, the gateway raises its floor to it, and
	// its next paid call is refused.
	restore()
	stop = runIngest()
	defer stop()
	deadline = time.Now().Add(60 * time.Second)
	for {
		v, _ := rdb.Get(ctx, l.LedgerSeq()).Int64()
		if v >= pgFloor {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted ingester published %d, below PostgreSQL's floor %d", v, pgFloor)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ret := meter.NewRetention(1, 0, 0)
	v, _ := rdb.Get(ctx, l.LedgerSeq()).Int64()
	ret.RaiseFloor(0, v)
	m2, err := meter.New(rdb, meter.Config{Prefix: prefix, Retain: ret})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := m2.Authorize(ctx, req); err != nil || d.Outcome != meter.Recovering {
		t.Fatalf("a fresh gateway on the restored Redis: %+v %v, want recovering", d, err)
	}
}
