package epochs

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestCloseWaitsForEveryShardsStream: with several shard streams an epoch
// closes only when every stream's watermark has passed its end (+ grace);
// a shard that never reported holds even the genesis epoch back.
func TestCloseWaitsForEveryShardsStream(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	epoch := events.EpochOf(time.Now()) - 10
	end := epochEnd(epoch)
	now := end.Add(time.Minute)
	c := &Closer{Pool: pool, Grace: 5 * time.Second, Streams: []string{"a:events", "b:events", "c:events"},
		Now: func() time.Time { return now }}
	mark := func(stream string, at time.Time) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO ingest_watermark (stream, low_ms) VALUES ($1, $2)
			ON CONFLICT (stream) DO UPDATE SET low_ms = EXCLUDED.low_ms`, stream, at.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	closeNext := func() bool {
		t.Helper()
		ok, err := c.CloseNext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	mark("a:events", now)
	mark("b:events", now)
	if closeNext() {
		t.Fatal("genesis opened while shard c had not reported")
	}
	mark("c:events", epochStart(epoch).Add(time.Second)) // c is still inside the epoch
	if !closeNext() {
		t.Fatal("genesis not opened once every shard reported")
	}
	var open int64
	if err := pool.QueryRow(ctx, `SELECT id FROM epochs WHERE state = 'open'`).Scan(&open); err != nil || open != epoch {
		t.Fatalf("open epoch %d (%v), want %d: genesis anchors to the lowest shard", open, err, epoch)
	}
	if closeNext() {
		t.Fatal("epoch closed while shard c was ingested only to inside it")
	}
	mark("c:events", end.Add(4*time.Second)) // past the end, not past the grace
	if closeNext() {
		t.Fatal("epoch closed before shard c passed its end + grace")
	}
	mark("c:events", end.Add(5*time.Second))
	if !closeNext() {
		t.Fatal("epoch not closed once every shard passed its end + grace")
	}
}
