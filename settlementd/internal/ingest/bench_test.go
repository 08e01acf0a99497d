package ingest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

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
//
// Beside events/s each case reports the CPU it cost per event (cpuMeter):
// on a shared machine that is the figure to compare.
func BenchmarkIngest(b *testing.B) {
	for _, mode := range []string{"backlog", "sustained"} {
		for _, c := range []struct{ workers, batch int }{{1, 1000}, {2, 1000}, {2, 2000}, {4, 1000}, {2, 4000}, {4, 4000}} {
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
		Block: 50 * time.Millisecond, Linger: benchLinger(b)}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if !sustained {
		settletest.XAddPacked(b, e.rdb, e.stream, benchPack(b), evs...)
	}
	b.ResetTimer()
	cpu := newCPUMeter(b, e)
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	if sustained {
		settletest.XAddPacked(b, e.rdb, e.stream, benchPack(b), evs...)
	}
	settletest.Eventually(b, 10*time.Minute, "ingest", func() (bool, error) {
		w, err := GroupWatermark(context.Background(), e.rdb, e.stream, "settlementd")
		return err == nil && w.Drained(), err
	})
	elapsed := time.Since(start)
	b.StopTimer()
	cpu.report(b, b.N)
	cancel()
	wg.Wait()
	stored := settletest.Count(b, e.pool, `SELECT (SELECT count(*) FROM revenue_events) + (SELECT count(*) FROM debits) + (SELECT count(*) FROM refunds)`)
	if stored != int64(len(evs)) {
		b.Fatalf("stored %d of %d", stored, len(evs))
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	// Entries per transaction: a consumer that keeps up reads what has
	// arrived since its last read, so sustained batches run smaller.
	b.ReportMetric(float64(b.N)/okBatches(b, in), "ev/batch")
}

// BenchmarkIngestPaced writes b.N entries at a steady 25,000 entries/s (in
// 20 ms ticks) while the default ingest (2 workers × 4000) runs, and reports
// how far behind the ingest was when the producer stopped: if it keeps up,
// the drain after the last XADD is a batch or two, not a backlog. A
// consumer that keeps up reads thin batches: ev/batch and the CPU per event
// show what Config.Linger saves then (BENCH_LINGER=-1ns turns it off).
func BenchmarkIngestPaced(b *testing.B) {
	const rate, tick = 25_000, 20 * time.Millisecond
	e := newEnv(b)
	now := time.Now()
	evs := settletest.Traffic(uint64(b.N), (b.N+1)/2, now.Add(-time.Hour), now)[:b.N]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, err := New(e.rdb, e.pool, Config{Stream: e.stream, Consumer: "bench", Workers: 2, Block: 50 * time.Millisecond,
		Linger: benchLinger(b)}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	b.ResetTimer()
	cpu := newCPUMeter(b, e)
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
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/okBatches(b, in), "ev/batch")
	cancel()
	wg.Wait()
	b.ReportMetric(float64(b.N)/produced.Seconds(), "offered/s")
	b.ReportMetric(float64(drain.Milliseconds()), "drain-ms")
	b.ReportMetric(float64(maxPending), "max-pending")
}

// cpuMeter counts the CPU time (user + system, /proc/<pid>/stat) a run
// costs in each process involved: this test process (the ingester, and in
// the sustained mode the producer too), the PostgreSQL backends serving the
// benchmark's database, and the Redis server. On a shared machine events/s
// follows whatever else runs; CPU per event much less. Redis is
// shared with other users of the same server, so its figure is an upper
// bound.
type cpuMeter struct {
	pool     *pgxpool.Pool
	redisPid int
	self     int64
	redis    int64
	pg       map[int]int64
}

func newCPUMeter(b *testing.B, e *env) *cpuMeter {
	m := &cpuMeter{pool: e.pool}
	info, err := e.rdb.Info(context.Background(), "server").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			m.redisPid, _ = strconv.Atoi(v)
		}
	}
	m.self, m.redis, m.pg = procTicks(os.Getpid()), procTicks(m.redisPid), m.backends(b)
	return m
}

func (m *cpuMeter) backends(b *testing.B) map[int]int64 {
	rows, err := m.pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	out := map[int]int64{}
	for _, p := range pids {
		out[int(p)] = procTicks(int(p))
	}
	return out
}

// report adds µs of CPU per event for each process group.
func (m *cpuMeter) report(b *testing.B, n int) {
	self, redis := procTicks(os.Getpid())-m.self, procTicks(m.redisPid)-m.redis
	var pg int64
	for pid, t := range m.backends(b) {
		pg += t - m.pg[pid] // a backend opened during the run started at 0
	}
	us := func(ticks int64) float64 { return float64(ticks) * 1e6 / float64(clkTck) / float64(n) }
	b.ReportMetric(us(self), "go-µs/ev")
	b.ReportMetric(us(pg), "pg-µs/ev")
	b.ReportMetric(us(redis), "redis-µs/ev")
	b.ReportMetric(us(self+pg+redis), "cpu-µs/ev")
}

// clkTck is the kernel's USER_HZ (100 on Linux/amd64).
const clkTck = 100

// procTicks is utime + stime of pid (0 when it cannot be read).
func procTicks(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	k, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	return u + k
}

// okBatches is how many batch transactions in committed.
func okBatches(b *testing.B, in *Ingester) float64 {
	reg := prometheus.NewRegistry()
	reg.MustRegister(in.m.batches)
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == "ok" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// benchLinger is Config.Linger from BENCH_LINGER (a duration; "-1ns" turns
// lingering off, to compare), the default when unset.
func benchLinger(b *testing.B) time.Duration {
	v := os.Getenv("BENCH_LINGER")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchPack is how many revenue events the producer packs per stream entry
// (BENCH_PACK; default 1: one event per entry, as before the gateways
// packed). The gateway packs those of its last 2 ms, up to 32: at the
// ~3,500 revenue events/s one gateway serves on this machine that is ~7.
func benchPack(b *testing.B) int {
	n, _ := strconv.Atoi(os.Getenv("BENCH_PACK"))
	return max(n, 1)
}
