package epochs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// BenchmarkClose times the close of one epoch holding 10k, 100k and 1M
// revenue events (make bench-close). Run it with -benchtime 1x:
// each size is booked once (not timed) into its own epoch of one database,
// so the smaller epochs are the larger one's history, and the close is then
// timed BENCH_CLOSE_RUNS times (default 5): every run but the last is the
// whole close transaction rolled back, the last is CloseNext committed for
// real. The metrics are the median, min and max over the runs (ms) and the
// committed run alone.
//
// The epoch looks like traffic: 1,000 registered nodes serve 70 % of the
// requests (5 of them deregistered half-way through the epoch, 2 with
// evidence of a lie booked into it), providers 20 %, the edge cache 10 %;
// payers are 20,000 API keys, 5,000 x402 wallets and the free tier.
func BenchmarkClose(b *testing.B) {
	_, pool := settletest.DB(b)
	ctx := context.Background()
	base := events.EpochOf(time.Now()) - 1000
	if _, err := pool.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at) VALUES ($1, 'open', $2, $3)`,
		base, epochStart(base), epochEnd(base)); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO ingest_watermark (stream, low_ms) VALUES ('bench', $1)`, time.Now().UnixMilli()); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, status)
		SELECT 'NODE-' || g, '0x' || lpad(to_hex(g), 40, '0'), 'EU', 'https://node-' || g || '.example', 'online'
		FROM generate_series(0, 999) g`); err != nil {
		b.Fatal(err)
	}
	runs := 5
	if s := os.Getenv("BENCH_CLOSE_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			runs = n
		}
	}
	for i, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			benchClose(b, pool, base+int64(i), n, runs)
		})
	}
}

var errRollback = errors.New("rolled back on purpose")

func benchClose(b *testing.B, pool *pgxpool.Pool, epoch int64, n, runs int) {
	ctx := context.Background()
	c := &Closer{Pool: pool, Grace: time.Second, Stream: "bench"}
	// Epochs before this one (skipped sizes) are closed first, untimed.
	for {
		var open int64
		if err := pool.QueryRow(ctx, `SELECT id FROM epochs WHERE state = 'open'`).Scan(&open); err != nil {
			b.Fatal(err)
		}
		if open == epoch {
			break
		}
		if ok, err := c.CloseNext(ctx); err != nil || !ok {
			b.Fatal("closing an earlier epoch:", ok, err)
		}
	}
	book(b, pool, epoch, n)

	b.ResetTimer()
	var took []time.Duration
	for range runs - 1 {
		start := time.Now()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := c.close(ctx, tx, epoch); err != nil {
				return err
			}
			return errRollback
		})
		took = append(took, time.Since(start))
		if !errors.Is(err, errRollback) {
			b.Fatal(err)
		}
	}
	start := time.Now()
	ok, err := c.CloseNext(ctx)
	committed := time.Since(start)
	took = append(took, committed)
	b.StopTimer()
	if err != nil || !ok {
		b.Fatal("close:", ok, err)
	}
	checkClosed(b, pool, epoch, n)
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "median-ms")
	b.ReportMetric(ms(took[0]), "min-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.ReportMetric(ms(committed), "committed-ms")
	b.ReportMetric(float64(n), "events")
}

// book writes n revenue events into epoch (untimed setup), plus the
// deregistrations and evidence the close has to account for.
func book(b *testing.B, pool *pgxpool.Pool, epoch int64, n int) {
	ctx := context.Background()
	t0 := epochStart(epoch)
	if _, err := pool.Exec(ctx, `INSERT INTO revenue_events (id, ts, epoch_id, booked_epoch, chain_id, payer, account, asset,
			amount_units, calls, upstream, node_id, method)
		SELECT 'req-' || $1::bigint || '-' || g,
		       $2::timestamptz + (g::float8 / $3 * 60) * interval '1 second', $1, $1, 137,
		       CASE WHEN g % 10 = 0 THEN 'bundle' WHEN g % 10 = 1 THEN 'free' ELSE 'credits' END,
		       CASE WHEN g % 10 = 0 THEN '0x' || lpad(to_hex(g % 5000), 40, '0') WHEN g % 10 = 1 THEN NULL
		            ELSE 'key_' || lpad((g * 31 % 20000)::text, 5, '0') END,
		       CASE WHEN g % 10 = 0 THEN 'USDC' ELSE 'USDT' END,
		       CASE WHEN g % 10 = 1 THEN 0 ELSE 30 * (1 + g % 3) END, 1 + g % 3,
		       CASE WHEN g % 10 < 7 THEN 'NODE-' || (g / 10 * 7919 % 1000) WHEN g % 10 = 7 THEN 'cache' ELSE 'alchemy' END,
		       CASE WHEN g % 10 < 7 THEN 'NODE-' || (g / 10 * 7919 % 1000) END,
		       'eth_call'
		FROM generate_series(0, $3 - 1) g`, epoch, t0, n); err != nil {
		b.Fatal(err)
	}
	mid := t0.Add(30 * time.Second)
	if _, err := pool.Exec(ctx, `UPDATE nodes SET status = 'deregistered', deregistered_at = $2
		WHERE node_id = ANY($1) AND deregistered_at IS NULL`,
		[]string{fmt.Sprintf("NODE-%d", 10+epoch%100), "NODE-1", "NODE-2", "NODE-3", "NODE-4"}, mid); err != nil {
		b.Fatal(err)
	}
	for _, node := range []string{"NODE-500", fmt.Sprintf("NODE-%d", 600+epoch%100)} {
		if _, err := pool.Exec(ctx, `INSERT INTO node_evidence (id, ts, epoch_id, booked_epoch, chain_id, node_id, method, block,
				node_answer, trusted_answer, trusted_by)
			VALUES ($1, $2, $3, $3, 137, $4, 'eth_getBalance', 1, '"0x1"', '"0x2"', 'alchemy')`,
			fmt.Sprintf("ev-%d-%s", epoch, node), mid, epoch, node); err != nil {
			b.Fatal(err)
		}
	}
	// What autovacuum does after a bulk load like this one.
	if _, err := pool.Exec(ctx, `ANALYZE revenue_events`); err != nil {
		b.Fatal(err)
	}
}

// checkClosed: the committed close booked every unit of the epoch, and the
// split adds up exactly.
func checkClosed(b *testing.B, pool *pgxpool.Pool, epoch int64, n int) {
	ctx := context.Background()
	var (
		state                                                      string
		nev, total, ops, carryIn, dist, carryOut, platOps, withh   int64
		sumRev, sumShares, sumEarn, nShares, withheldShares, zeros int64
	)
	if err := pool.QueryRow(ctx, `SELECT state, events, total_units, operators_units, carry_in_units, distributed_units,
			carry_out_units, platform_operators_units, withheld_units,
			(SELECT COALESCE(sum(amount_units), 0) FROM revenue_events WHERE booked_epoch = $1)::bigint,
			(SELECT COALESCE(sum(share_units), 0) FROM epoch_node_shares WHERE epoch_id = $1)::bigint,
			(SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE epoch_id = $1)::bigint,
			(SELECT count(*) FROM epoch_node_shares WHERE epoch_id = $1),
			(SELECT COALESCE(sum(withheld_units), 0) FROM epoch_node_shares WHERE epoch_id = $1)::bigint,
			(SELECT count(*) FROM epoch_node_shares WHERE epoch_id = $1 AND withheld_units > 0)
		FROM epochs WHERE id = $1`, epoch).Scan(&state, &nev, &total, &ops, &carryIn, &dist, &carryOut, &platOps, &withh,
		&sumRev, &sumShares, &sumEarn, &nShares, &withheldShares, &zeros); err != nil {
		b.Fatal(err)
	}
	switch {
	case state != "CLOSED" || nev != int64(n):
		b.Fatalf("epoch %d: state %s, %d events; want CLOSED, %d", epoch, state, nev, n)
	case total != sumRev || total == 0:
		b.Fatalf("epoch %d: total %d, revenue rows sum to %d", epoch, total, sumRev)
	case sumShares != dist || sumEarn != dist || withheldShares != withh:
		b.Fatalf("epoch %d: shares %d, earnings %d, distributed %d; withheld %d vs %d", epoch, sumShares, sumEarn, dist, withheldShares, withh)
	case dist+carryOut+platOps+withh != ops+carryIn:
		b.Fatalf("epoch %d: %d+%d+%d+%d != %d+%d", epoch, dist, carryOut, platOps, withh, ops, carryIn)
	case nShares < 900 || zeros != 2:
		b.Fatalf("epoch %d: %d node shares, %d withheld; want ~1000 and 2", epoch, nShares, zeros)
	}
}
