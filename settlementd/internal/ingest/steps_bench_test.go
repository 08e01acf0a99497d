package ingest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// BenchmarkIngestSteps splits the CPU of the fast path's transaction by
// step: one op is one batch of 1000 stream entries (settletest.Traffic)
// decoded and written by copyWrite's steps on one connection, each step's
// CPU read from /proc of this process (go) and of the connection's backend
// (pg), reported per stream entry. The usage rollups are written both ways
// — summed in Go (committed) and grouped in SQL (a rolled-back second
// transaction) — to compare them on the same batch. No Redis: this is the
// Postgres side and the decode only.
func BenchmarkIngestSteps(b *testing.B) {
	const per = 1000
	e := newEnv(b)
	ctx := context.Background()
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	var pid int32
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		b.Fatal(err)
	}
	steps := []string{"decode", "lock+epoch", "copy-revenue", "copy-debits+refunds", "copy-ledger", "rollups-go", "commit", "rollups-sql"}
	goT, pgT := make([]int64, len(steps)), make([]int64, len(steps))
	var self, be int64
	mark := func() { self, be = procTicks(os.Getpid()), procTicks(int(pid)) }
	took := func(i int) {
		s, p := procTicks(os.Getpid()), procTicks(int(pid))
		goT[i] += s - self
		pgT[i] += p - be
		self, be = s, p
	}
	now := time.Now()
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		evs := settletest.Traffic(uint64(n+1), per, now.Add(-time.Hour), now)[:per]
		msgs := make([]redis.XMessage, len(evs))
		for i, ev := range evs {
			f, err := events.Encode(ev)
			if err != nil {
				b.Fatal(err)
			}
			vals := make(map[string]any, len(f)/2)
			for k := 0; k+1 < len(f); k += 2 {
				vals[f[k].(string)] = f[k+1] // strings, as Redis returns them
			}
			msgs[i] = redis.XMessage{ID: "0-1", Values: vals}
		}
		b.StartTimer()
		mark()
		bt := newBatch(msgs)
		took(0)
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := pglock.XactShared(ctx, tx, pglock.Booking); err != nil {
				return err
			}
			var open *int64
			if err := tx.QueryRow(ctx, `SELECT max(id) FROM epochs WHERE state = 'open'`).Scan(&open); err != nil {
				return err
			}
			took(1)
			r := &bt.rev
			if err := copyRevenue(ctx, tx, r, nil); err != nil {
				return err
			}
			took(2)
			// The rest of copyWrite without revenue: debits, refunds, ledger.
			rev := bt.rev
			bt.rev = revenueCols{}
			err := bt.copyWrite(ctx, tx, "steps")
			bt.rev = rev
			took(3) // debits, refunds and ledger together; split below
			if err != nil {
				return err
			}
			return writeRollups(ctx, tx, &bt.rev)
		})
		took(5)
		if err != nil {
			b.Fatal(err)
		}
		// The SQL grouping of the same rows, rolled back.
		tx, err := conn.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		mark()
		r := &bt.rev
		if _, err := tx.Exec(ctx, copiedRevenueRollups, r.ts, r.chain, r.payer, r.account, r.amount, r.calls, r.node, r.method); err != nil {
			b.Fatal(err)
		}
		took(7)
		b.StopTimer()
		_ = tx.Rollback(ctx)
		b.StartTimer()
	}
	b.StopTimer()
	us := func(ticks int64) float64 { return float64(ticks) * 1e6 / float64(clkTck) / float64(b.N*per) }
	for i, s := range steps {
		if i == 4 || i == 6 {
			continue // folded into the step before (see above)
		}
		b.ReportMetric(us(goT[i]), s+"-go-µs/ev")
		b.ReportMetric(us(pgT[i]), s+"-pg-µs/ev")
	}
}
