package statemetrics

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/migrations"
)

// gather collects c once and returns "name{label=value}" → value.
func gather(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName()
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// A known state in PostgreSQL and Redis reads back as the gauges: the
// claims pause, an overdue epoch, the last closed epoch's split, unsettled
// epochs after the last forwarded batch, an unmined transaction, an
// insolvent check, nodes by status and the age of a pending stream entry.
func TestCollectorReadsTheState(t *testing.T) {
	dsn := testenv.Postgres(t)
	if err := migrations.Up(dsn); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	rdb := testenv.Redis(t)
	stream := testenv.KeyPrefix(t) + "events"

	for _, q := range []string{
		`UPDATE claims_state SET paused = true, reason = 'test', paused_by = 'test', paused_at = now() WHERE id = 1`,
		// Epoch 100 is forwarded, 101 and 102 closed and not, 103 open and
		// over for 100 s.
		`INSERT INTO epochs (id, state, starts_at, ends_at, total_units, node_units, operators_units, platform_units, pool_units,
			distributed_units, carry_out_units, platform_operators_units, closed_at) VALUES
			(100, 'CLOSED', now() - interval '4 hours', now() - interval '3 hours', 10, 0, 5, 3, 2, 0, 0, 5, now()),
			(101, 'CLOSED', now() - interval '3 hours', now() - interval '2 hours', 10, 0, 5, 3, 2, 0, 0, 5, now()),
			(102, 'CLOSED', now() - interval '2 hours', now() - interval '1 hour', 1000, 800, 500, 300, 200, 400, 0, 100, now())`,
		`INSERT INTO epochs (id, state, starts_at, ends_at) VALUES (103, 'open', now() - interval '160 seconds', now() - interval '100 seconds')`,
		`INSERT INTO settlement_batches (chain_id, first_epoch, last_epoch, epochs, claims_units, platform_units, pool_units, state, forwarded_at)
			VALUES (137, 100, 100, 1, 0, 8, 2, 'forwarded', now())`,
		`INSERT INTO chain_txs (chain_id, purpose, kind, role, from_addr, to_addr, nonce, gas_limit, calldata, raw_tx, tx_hash, created_at)
			VALUES (137, 'p1', 'transfer', 'treasury', '0xa', '0xb', 0, 21000, '\x00', '\x00', '0x1', now() - interval '20 minutes'),
			       (137, 'p2', 'transfer', 'treasury', '0xa', '0xb', 1, 21000, '\x00', '\x00', '0x2', now() - interval '5 minutes')`,
		`INSERT INTO chain_txs (chain_id, purpose, kind, role, from_addr, to_addr, nonce, gas_limit, calldata, raw_tx, tx_hash, state, created_at)
			VALUES (137, 'p0', 'transfer', 'treasury', '0xa', '0xb', 2, 21000, '\x00', '\x00', '0x3', 'mined', now() - interval '1 day')`,
		`INSERT INTO solvency_checks (chain_id, block_number, balance_raw, owed_raw, solvent, checked_at)
			VALUES (137, 1, 9, 9, true, now() - interval '1 hour'), (137, 2, 5000000, 7000000, false, to_timestamp(1700000000))`,
		`INSERT INTO nodes (node_id, status) VALUES ('n1', 'online'), ('n2', 'online'), ('n3', 'offline')`,
		`INSERT INTO nodes (node_id, status, quarantined_at, quarantine_reason) VALUES ('n4', 'quarantined', now(), 'test')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	// One entry read 30 s ago and not acknowledged: the ingest is 30 s behind.
	if err := rdb.XGroupCreateMkStream(ctx, stream, "settlementd", "0").Err(); err != nil {
		t.Fatal(err)
	}
	entry := fmt.Sprintf("%d-0", time.Now().Add(-30*time.Second).UnixMilli())
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: entry, Values: []any{"t", "x"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "settlementd", Consumer: "c", Streams: []string{stream, ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}

	got := gather(t, New(Config{Pool: pool, Redis: rdb, Stream: stream, Settlement: true}))
	exact := map[string]float64{
		"settlementd_postgres_up": 1, "settlementd_redis_up": 1, "settlementd_claims_paused": 1,
		"settlementd_epoch_last_closed_id":                       102,
		"settlementd_epoch_last_closed_units{share=total}":       1000,
		"settlementd_epoch_last_closed_units{share=operators}":   500,
		"settlementd_epoch_last_closed_units{share=platform}":    300,
		"settlementd_epoch_last_closed_units{share=pool}":        200,
		"settlementd_epoch_last_closed_units{share=distributed}": 400,
		"settlementd_settlement_unsettled_epochs":                2,
		"settlementd_chain_txs_unmined":                          2,
		"settlementd_solvency_solvent":                           0,
		"settlementd_solvency_balance_units":                     5000000,
		"settlementd_solvency_owed_units":                        7000000,
		"settlementd_solvency_checked_timestamp_seconds":         1700000000,
		"settlementd_nodes{status=online}":                       2,
		"settlementd_nodes{status=offline}":                      1,
		"settlementd_nodes{status=quarantined}":                  1,
		"settlementd_nodes{status=deregistered}":                 0,
	}
	for k, want := range exact {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	approx := map[string][2]float64{ // value, tolerance (the test's own time)
		"settlementd_epoch_overdue_seconds":               {100, 10},
		"settlementd_settlement_oldest_unsettled_seconds": {7200, 10},
		"settlementd_chain_tx_oldest_unmined_seconds":     {1200, 10},
		"settlementd_ingest_lag_seconds":                  {30, 10},
	}
	for k, w := range approx {
		if v, ok := got[k]; !ok || !near(v, w[0], w[1]) {
			t.Errorf("%s = %v (present %v), want %v ± %v", k, v, ok, w[0], w[1])
		}
	}
	if len(got) != len(exact)+len(approx) {
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("%d series, want %d: %v", len(got), len(exact)+len(approx), keys)
	}

	// Without settlement configured, unsettled epochs are not a problem and
	// not exported.
	got = gather(t, New(Config{Pool: pool, Redis: rdb, Stream: stream}))
	if _, ok := got["settlementd_settlement_unsettled_epochs"]; ok {
		t.Error("unsettled epochs exported without settlement")
	}
	if got["settlementd_claims_paused"] != 1 {
		t.Error("the rest is still exported")
	}

	// Acknowledged: the stream is drained and the lag 0.
	if err := rdb.XAck(ctx, stream, "settlementd", entry).Err(); err != nil {
		t.Fatal(err)
	}
	pend, err := rdb.XPending(ctx, stream, "settlementd").Result()
	if err != nil {
		t.Fatal(err)
	}
	if pend.Count != 0 {
		t.Fatalf("%d entries still pending", pend.Count)
	}
	if lag := gather(t, New(Config{Pool: pool, Redis: rdb, Stream: stream}))["settlementd_ingest_lag_seconds"]; lag > 1 {
		t.Errorf("ingest lag %v after the stream drained, want 0", lag)
	}
}

// When PostgreSQL cannot be read, the scrape says so (postgres_up 0) and
// leaves the state out instead of reporting stale or zero values; a missing
// stream is no lag.
func TestCollectorWithoutPostgres(t *testing.T) {
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	rdb := testenv.Redis(t)
	got := gather(t, New(Config{Pool: pool, Redis: rdb, Stream: testenv.KeyPrefix(t) + "events", Settlement: true, Timeout: 2 * time.Second}))
	want := map[string]float64{"settlementd_postgres_up": 0, "settlementd_redis_up": 1, "settlementd_ingest_lag_seconds": 0}
	if len(got) != len(want) {
		t.Fatalf("got %v, want only %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
