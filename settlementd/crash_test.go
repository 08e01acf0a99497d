package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

func TestCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, func(string) string { return "" }, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "settlementd ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	if code := run([]string{"frobnicate"}, func(string) string { return "" }, &out, &errb); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
	errb.Reset()
	if code := run([]string{"reconcile", "-h"}, func(string) string { return "" }, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-apply") {
		t.Fatalf("help: %d %s", code, errb.String())
	}
	if code := run([]string{"migrate"}, func(string) string { return "" }, &out, &errb); code != 2 {
		t.Fatalf("migrate without a database: %d", code)
	}
}

// buildCrashable builds settlementd with the crash hooks compiled in.
func buildCrashable(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "settlementd")
	cmd := exec.Command("go", "build", "-tags", "crashhooks", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type proc struct {
	cmd    *exec.Cmd
	marker string
	log    *bytes.Buffer
}

// start runs the binary against dsn and prefix; hook ("point:n") blocks the
// process at that crash point. env ("NAME=value") is added to the process's
// environment (the chain jobs' settings).
func start(t *testing.T, bin, dsn, prefix, hook string, env ...string) *proc {
	t.Helper()
	p := &proc{marker: filepath.Join(t.TempDir(), "hook"), log: &bytes.Buffer{}}
	p.cmd = exec.Command(bin, "run")
	p.cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dsn, "TOLLGATE_PREFIX="+prefix, "TOLLGATE_HTTP_ADDR=127.0.0.1:0",
		"TOLLGATE_INGEST_WORKERS=1", "TOLLGATE_INGEST_BATCH=500", "TOLLGATE_INGEST_BLOCK=200ms",
		"TOLLGATE_CLAIM_MIN_IDLE=500ms", "TOLLGATE_CLAIM_EVERY=200ms", "TOLLGATE_EPOCH_GRACE=1s",
		"TOLLGATE_EPOCH_CLOSE_SCHEDULE=* * * * * *", "TOLLGATE_LEADER_HEARTBEAT=200ms", "TOLLGATE_LEADER_RETRY=200ms",
		"TOLLGATE_CRASH_HOOK="+hook, "TOLLGATE_CRASH_HOOK_FILE="+p.marker)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *proc) blocked(t *testing.T) {
	t.Helper()
	settletest.Eventually(t, 60*time.Second, "the process to reach its crash hook", func() (bool, error) {
		_, err := os.Stat(p.marker)
		if p.cmd.ProcessState != nil {
			return false, fmt.Errorf("exited: %s", p.log)
		}
		return err == nil, nil
	})
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// term stops the process the orderly way and expects a clean exit.
func (p *proc) term(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log)
	}
}

// state is everything settlement computed, in a comparable form.
func state(t *testing.T, pool *pgxpool.Pool, upTo int64) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, state, carry_in_units, total_units, events, calls, node_units, operators_units, platform_units,
		        pool_units, distributed_units, carry_out_units FROM epochs WHERE id <= $1 ORDER BY id`,
		`SELECT epoch_id, node_id, weight_units, calls, share_units FROM epoch_node_shares WHERE epoch_id <= $1 ORDER BY 1, 2`,
		`SELECT node_id, kind, ref, amount_units FROM node_earnings WHERE epoch_id <= $1 ORDER BY 1, 2, 3`,
		`SELECT count(*), sum(amount_units)::bigint, sum(calls)::bigint, count(DISTINCT booked_epoch), bool_and(booked_epoch = epoch_id) FROM revenue_events WHERE $1 > 0`,
		`SELECT kind, count(*), sum(units)::bigint, sum(calls)::bigint FROM account_ledger WHERE $1 > 0 GROUP BY kind ORDER BY kind`,
		`SELECT (SELECT count(*) FROM debits), (SELECT count(*) FROM refunds), (SELECT count(*) FROM dead_letters) WHERE $1 > 0`,
	} {
		rows, err := pool.Query(context.Background(), q, upTo)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, v...)
		}
		rows.Close()
	}
	return b.String()
}

// The crash test: a real settlementd process is SIGKILLed at random while
// ingesting, after committing a batch but before acknowledging it, and in
// the middle of an epoch-close transaction; each time it is restarted. The
// final Postgres state must equal that of an uninterrupted run over the
// same stream.
func TestCrashRestartMatchesUninterruptedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	rdb := testenv.Redis(t)
	bin := buildCrashable(t)

	// Four past epochs of traffic (~20k events), written with stream ids at
	// the events' own times, as the gateway's XADD * would have.
	e0 := events.EpochOf(time.Now()) - 7
	from := time.Unix(e0*events.EpochSeconds, 0)
	evs := settletest.Traffic(42, 10_000, from, from.Add(4*time.Minute))
	ids := settletest.TimeIDs(evs)
	last := e0 + 4 // epochs e0..e0+3 carry traffic, e0+4 is empty; all must close

	closed := func(pool *pgxpool.Pool) (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED' AND id <= $1`, last) == 5, nil
	}

	// Reference: one uninterrupted run.
	refDSN, refPool := settletest.DB(t)
	refPrefix := testenv.KeyPrefix(t)
	settletest.XAddIDs(t, rdb, refPrefix+"events", ids, evs...)
	ref := start(t, bin, refDSN, refPrefix, "")
	settletest.Eventually(t, 90*time.Second, "reference epochs closed", func() (bool, error) { return closed(refPool) })
	ref.term(t)

	// The run that crashes.
	dsn, pool := settletest.DB(t)
	prefix := testenv.KeyPrefix(t)
	settletest.XAddIDs(t, rdb, prefix+"events", ids, evs...)
	total := int64(len(evs))
	stored := func() int64 {
		return settletest.Count(t, pool, `SELECT (SELECT count(*) FROM revenue_events) + (SELECT count(*) FROM debits) + (SELECT count(*) FROM refunds)`)
	}

	// 1. SIGKILL at an arbitrary moment of the ingest.
	p := start(t, bin, dsn, prefix, "")
	settletest.Eventually(t, 60*time.Second, "ingest under way", func() (bool, error) { return stored() > 0, nil })
	p.kill(t)
	n1 := stored()
	t.Logf("killed mid-ingest with %d of %d events stored", n1, total)

	// 2. SIGKILL after a batch committed, before its XACK: those entries
	// are redelivered (XAUTOCLAIM by the next process) and must not count twice.
	p = start(t, bin, dsn, prefix, "ingest-after-commit:3")
	p.blocked(t)
	pending := rdb.XPending(context.Background(), prefix+"events", "settlementd").Val().Count
	p.kill(t)
	t.Logf("killed between commit and XACK: %d stored, %d pending", stored(), pending)
	if pending == 0 {
		t.Fatal("no entries pending after the commit-before-XACK crash")
	}

	// 3. SIGKILL inside the second epoch-close transaction.
	p = start(t, bin, dsn, prefix, "close-before-commit:2")
	p.blocked(t)
	closedBefore := settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED'`)
	p.kill(t)
	// The killed transaction left nothing: the epoch it was closing is open.
	if got := settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED'`); got != closedBefore || got < 1 {
		t.Fatalf("closed epochs %d (before the kill %d)", got, closedBefore)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'open'`); n != 1 {
		t.Fatalf("%d open epochs after the kill", n)
	}
	t.Logf("killed inside an epoch close: %d epochs closed before it", closedBefore)

	// 4. Restart and let it finish.
	p = start(t, bin, dsn, prefix, "")
	settletest.Eventually(t, 90*time.Second, "epochs closed after the crashes", func() (bool, error) { return closed(pool) })
	p.term(t)

	want, got := state(t, refPool, last), state(t, pool, last)
	if got != want {
		t.Fatalf("state after crashes differs from the uninterrupted run\nwant\n%s\ngot\n%s", want, got)
	}
	if s := stored(); s != total {
		t.Fatalf("stored %d events, want %d", s, total)
	}
	t.Logf("uninterrupted and crashed runs agree:\n%s", got)
}
