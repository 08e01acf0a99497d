package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/api"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/jobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

func testConfig(dsn, prefix, name string) *config.Config {
	return &config.Config{
		DatabaseURL: dsn, RedisURL: os.Getenv("REDIS_URL"), Prefix: prefix, HTTPAddr: "127.0.0.1:0",
		Consumer: name, IngestWorkers: 1, IngestBatch: 200, IngestBlock: 100 * time.Millisecond,
		ClaimMinIdle: 500 * time.Millisecond, ClaimEvery: 200 * time.Millisecond,
		EpochGrace: time.Second, EpochCloseSchedule: "* * * * * *",
		LeaderHeartbeat: 100 * time.Millisecond, LeaderRetry: 100 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second, Migrate: true, LogLevel: "info", LogFormat: "json",
	}
}

type replica struct {
	name string
	d    *Daemon
	stop func()
}

func health(t *testing.T, r *replica) api.Health {
	t.Helper()
	resp, err := http.Get("http://" + r.d.Addr().String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h api.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// Two replicas on one database: exactly one leads, only the leader runs
// jobs (the runs of a job never overlap across replicas), both ingest and
// serve HTTP, and when the leader stops the other takes over.
func TestTwoReplicasOneLeader(t *testing.T) {
	dsn := testenv.Postgres(t)
	prefix := testenv.KeyPrefix(t)
	rdb := testenv.Redis(t)
	setup, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(context.Background())
	if _, err := setup.Exec(context.Background(), `CREATE TABLE probe_runs (replica text, started timestamptz, ended timestamptz)`); err != nil {
		t.Fatal(err)
	}

	var replicas []*replica
	for _, name := range []string{"r1", "r2"} {
		d, err := New(context.Background(), testConfig(dsn, prefix, name), zap.NewNop(), "test")
		if err != nil {
			t.Fatal(err)
		}
		// The probe job records each run, fenced, with some duration so an
		// overlap would show.
		if err := d.Scheduler().Add("* * * * * *", jobs.Func{JobName: "probe", Fn: func(ctx context.Context) error {
			return pgx.BeginFunc(ctx, d.Pool(), func(tx pgx.Tx) error {
				if err := d.Elector().Fence(ctx, tx); err != nil {
					return err
				}
				var started time.Time
				if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&started); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `SELECT pg_sleep(0.3)`); err != nil { // the job's "work"
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO probe_runs VALUES ($1, $2, clock_timestamp())`, name, started)
				return err
			})
		}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := d.Run(ctx); err != nil {
				t.Error(err)
			}
		})
		r := &replica{name: name, d: d, stop: sync.OnceFunc(func() { cancel(); wg.Wait() })}
		t.Cleanup(r.stop)
		replicas = append(replicas, r)
	}

	leaderOf := func() *replica {
		var l *replica
		for _, r := range replicas {
			if h := health(t, r); h.Leader {
				if l != nil {
					t.Fatalf("two leaders: %s and %s", l.name, r.name)
				}
				l = r
			}
		}
		return l
	}
	settletest.Eventually(t, 10*time.Second, "one leader", func() (bool, error) { return leaderOf() != nil, nil })
	first := leaderOf()
	for _, r := range replicas {
		if h := health(t, r); !h.OK || h.DB != "connected" || h.Server != "running" {
			t.Fatalf("%s health %+v", r.name, h)
		}
	}

	// Both replicas ingest: events spread over both consumers, stored once.
	now := time.Now()
	evs := settletest.Traffic(9, 2000, now.Add(-30*time.Second), now)
	settletest.XAdd(t, rdb, prefix+"events", evs...)
	settletest.XAdd(t, rdb, prefix+"events", evs...)
	pool := first.d.Pool()
	var nRev int64
	for _, e := range evs {
		if _, ok := e.(*events.Revenue); ok {
			nRev++
		}
	}
	settletest.Eventually(t, 30*time.Second, "events ingested", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM revenue_events`) == nRev, nil
	})
	settletest.Eventually(t, 10*time.Second, "three probe runs", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM probe_runs`) >= 3, nil
	})
	if n := settletest.Count(t, pool, `SELECT count(*) FROM probe_runs WHERE replica <> $1`, first.name); n != 0 {
		t.Fatalf("the follower ran %d jobs", n)
	}

	// The leader stops (orderly); the other replica takes over.
	first.stop()
	var second *replica
	for _, r := range replicas {
		if r != first {
			second = r
		}
	}
	settletest.Eventually(t, 10*time.Second, "failover", func() (bool, error) { return health(t, second).Leader, nil })
	settletest.Eventually(t, 10*time.Second, "runs on the new leader", func() (bool, error) {
		return settletest.Count(t, second.d.Pool(), `SELECT count(*) FROM probe_runs WHERE replica = $1`, second.name) >= 2, nil
	})
	// Never two runs at once, across the handover.
	if n := settletest.Count(t, second.d.Pool(), `SELECT count(*) FROM probe_runs a JOIN probe_runs b
		ON a.ctid < b.ctid AND a.started < b.ended AND b.started < a.ended`); n != 0 {
		t.Fatalf("%d overlapping job runs", n)
	}
	// The epoch closer ran on the leaders only and kept epochs gapless.
	if n := settletest.Count(t, second.d.Pool(), `SELECT count(*) FROM epochs`); n == 0 {
		t.Fatal("no epoch opened")
	}
	if n := settletest.Count(t, second.d.Pool(), `SELECT max(id) - min(id) + 1 - count(*) FROM epochs`); n != 0 {
		t.Fatalf("epochs have %d gaps", n)
	}
	t.Logf("leader %s, then %s", first.name, second.name)
}
