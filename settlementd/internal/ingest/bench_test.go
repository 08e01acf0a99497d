package ingest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// Ingest throughput against the real Redis and Postgres (make
// bench-settlement). One op is one stream entry; the metric events/s is
// entries committed to Postgres and acknowledged per second.
//
//   - backlog: b.N entries are XADDed first, then the clock runs while the
//     ingester drains them;
//   - sustained: a producer XADDs at full speed while the ingester runs, and
//     the clock runs from the first XADD to the last entry committed (the
//     producer shares the machine's cores with Redis, Postgres and ingest).
func BenchmarkIngest(b *testing.B) {
	for _, mode := range []string{"backlog", "sustained"} {
		for _, c := range []struct{ workers, batch int }{{1, 1000}, {2, 1000}, {2, 2000}, {4, 1000}} {
			b.Run(fmt.Sprintf("%s/workers=%d/batch=%d", mode, c.workers, c.batch), func(b *testing.B) {
				benchIngest(b, mode == "sustained", c.workers, c.batch)
			})
		}
	}
}

func benchIngest(b *testing.B, sustained bool, workers, batch int) {
	e := newEnv(b)
	now := time.Now()
	evs := settletest.Traffic(uint64(b.N), (b.N+1)/2, now.Add(-time.Hour), now)[:b.N]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, err := New(e.rdb, e.pool, Config{Stream: e.stream, Consumer: "bench", Workers: workers, Batch: batch,
		Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if !sustained {
		settletest.XAdd(b, e.rdb, e.stream, evs...)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	if sustained {
		settletest.XAdd(b, e.rdb, e.stream, evs...)
	}
	settletest.Eventually(b, 10*time.Minute, "ingest", func() (bool, error) {
		w, err := GroupWatermark(context.Background(), e.rdb, e.stream, "settlementd")
		return err == nil && w.Drained(), err
	})
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	wg.Wait()
	stored := settletest.Count(b, e.pool, `SELECT (SELECT count(*) FROM revenue_events) + (SELECT count(*) FROM debits) + (SELECT count(*) FROM refunds)`)
	if stored != int64(len(evs)) {
		b.Fatalf("stored %d of %d", stored, len(evs))
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

// BenchmarkIngestPaced writes b.N entries at a steady 25,000 entries/s (in
// 20 ms ticks) while the default ingest (2 workers × 1000) runs, and reports
// how far behind the ingest was when the producer stopped: if it keeps up,
// the drain after the last XADD is a batch or two, not a backlog.
func BenchmarkIngestPaced(b *testing.B) {
	const rate, tick = 25_000, 20 * time.Millisecond
	e := newEnv(b)
	now := time.Now()
	evs := settletest.Traffic(uint64(b.N), (b.N+1)/2, now.Add(-time.Hour), now)[:b.N]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, err := New(e.rdb, e.pool, Config{Stream: e.stream, Consumer: "bench", Workers: 2, Batch: 1000, Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	b.ResetTimer()
	start := time.Now()
	per := rate * int(tick) / int(time.Second)
	t := time.NewTicker(tick)
	maxPending := int64(0)
	for off := 0; off < len(evs); off += per {
		settletest.XAdd(b, e.rdb, e.stream, evs[off:min(off+per, len(evs))]...)
		if p := e.rdb.XPending(ctx, e.stream, "settlementd").Val().Count; p > maxPending {
			maxPending = p
		}
		<-t.C // pacing the producer, not synchronising with the consumer
	}
	t.Stop()
	produced := time.Since(start)
	settletest.Eventually(b, 10*time.Minute, "ingest", func() (bool, error) {
		w, err := GroupWatermark(context.Background(), e.rdb, e.stream, "settlementd")
		return err == nil && w.Drained(), err
	})
	drain := time.Since(start) - produced
	b.StopTimer()
	cancel()
	wg.Wait()
	b.ReportMetric(float64(b.N)/produced.Seconds(), "offered/s")
	b.ReportMetric(float64(drain.Milliseconds()), "drain-ms")
	b.ReportMetric(float64(maxPending), "max-pending")
}
