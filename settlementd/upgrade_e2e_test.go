package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/settlementd/migrations"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// previousRelease is the commit before the one that added this binary's
// newest migration: the schema the upgrade starts from. (Until releases
// are tagged, "the previous release" is defined this way; docs/operators.md.)
func previousRelease(t *testing.T) (commit string, version uint) {
	t.Helper()
	all := migrations.All()
	newest := all[len(all)-1]
	out, err := exec.Command("git", "log", "--diff-filter=A", "--format=%H", "-1", "--", "migrations/"+newest.Name+".up.sql").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("git log for the commit adding %s: %v %s", newest.Name, err, out)
	}
	return strings.TrimSpace(string(out)) + "^", all[len(all)-2].Version
}

// buildAt builds settlementd as it was at commit (git archive: only what
// was committed then).
func buildAt(t *testing.T, commit string) string {
	t.Helper()
	dir := t.TempDir()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	// From the top: in a subdirectory git archive takes only that one.
	archive := exec.Command("git", "-C", strings.TrimSpace(string(top)), "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "settlementd-old")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./settlementd") // -trimpath: the build cache serves the next run
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build settlementd at %s: %v\n%s", commit, err, out)
	}
	return bin
}

// TestUpgradeFromPreviousReleaseUnderLoad is the upgrade docs/operators.md
// describes, on real processes: the previous release's settlementd runs on
// its schema, ingesting a stream that keeps growing; the new binary refuses
// that schema without TOLLGATE_MIGRATE; `settlementd migrate status` shows
// the pending migration and `migrate up` applies it while the old replica
// keeps ingesting; the old replica is replaced by the new one; every event
// is stored exactly once.
func TestUpgradeFromPreviousReleaseUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release")
	}
	rdb := testenv.Redis(t)
	prev, prevVersion := previousRelease(t)
	oldBin := buildAt(t, prev)
	newBin := settlementdBinary(t)
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	prefix := testenv.KeyPrefix(t)
	stream := prefix + "events"

	// The load: ~20k events over four past epochs, pushed in 40 chunks, the
	// first before anything starts, the rest while the upgrade runs.
	e0 := events.EpochOf(time.Now()) - 7
	from := time.Unix(e0*events.EpochSeconds, 0)
	evs := settletest.Traffic(7, 10_000, from, from.Add(4*time.Minute))
	ids := settletest.TimeIDs(evs)
	const chunks = 40
	per := (len(evs) + chunks - 1) / chunks
	push := func(i int) {
		lo, hi := i*per, min((i+1)*per, len(evs))
		if lo < hi {
			settletest.XAddIDs(t, rdb, stream, ids[lo:hi], evs[lo:hi]...)
		}
	}
	push(0)
	total := int64(len(evs))
	stored := func() int64 {
		return settletest.Count(t, pool, `SELECT (SELECT count(*) FROM revenue_events) + (SELECT count(*) FROM debits) + (SELECT count(*) FROM refunds)`)
	}

	// 1. The previous release, migrating its own schema as it did.
	old := start(t, oldBin, dsn, prefix, "", "TOLLGATE_MIGRATE=true")
	settletest.Eventually(t, 90*time.Second, "the previous release's schema", func() (bool, error) {
		v, dirty, err := migrations.Version(dsn)
		if err == nil && (dirty || v > prevVersion) {
			return false, fmt.Errorf("the previous release migrated to %d (dirty %v), want %d", v, dirty, prevVersion)
		}
		return err == nil && v == prevVersion, nil
	})
	settletest.Eventually(t, 90*time.Second, "the previous release ingesting", func() (bool, error) { return stored() > 0, nil })
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for i := 1; i < chunks; i++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond): // pacing the producer, not synchronising
			}
			push(i)
		}
	})
	t.Cleanup(func() { close(done); wg.Wait() })

	// 2. The new binary, without TOLLGATE_MIGRATE, refuses the old schema.
	env := append(os.Environ(), "DATABASE_URL="+dsn, "TOLLGATE_PREFIX="+prefix, "TOLLGATE_HTTP_ADDR=127.0.0.1:0", "TOLLGATE_MIGRATE=")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	refuse := exec.CommandContext(ctx, newBin, "run")
	refuse.Env = env
	out, err := refuse.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("run `settlementd migrate up`")) {
		t.Fatalf("the new release on the old schema without TOLLGATE_MIGRATE: %v\n%s", err, out)
	}
	newest := migrations.All()[len(migrations.All())-1]
	status := func() string {
		t.Helper()
		c := exec.Command(newBin, "migrate", "status")
		c.Env = env
		b, err := c.Output()
		if err != nil {
			t.Fatalf("migrate status: %v\n%s", err, b)
		}
		return string(b)
	}
	if s := status(); !strings.Contains(s, fmt.Sprintf("schema version %d;", prevVersion)) || !strings.Contains(s, "1 pending: "+newest.Name) {
		t.Fatalf("migrate status before the upgrade: %s", s)
	}

	// 3. migrate up while the old replica ingests; it keeps ingesting on
	// the newer schema.
	before := stored()
	up := exec.Command(newBin, "migrate", "up")
	up.Env = env
	if b, err := up.CombinedOutput(); err != nil {
		t.Fatalf("migrate up: %v\n%s", err, b)
	}
	if s := status(); !strings.Contains(s, fmt.Sprintf("schema version %d;", newest.Version)) || !strings.Contains(s, "up to date") {
		t.Fatalf("migrate status after the upgrade: %s", s)
	}
	settletest.Eventually(t, 90*time.Second, "the old replica ingesting on the new schema", func() (bool, error) {
		return stored() > before, nil
	})

	// 4. Replace the old replica with the new one (no TOLLGATE_MIGRATE: the
	// schema is current); every event is stored exactly once.
	old.term(t)
	n := start(t, newBin, dsn, prefix, "")
	wg.Wait()
	settletest.Eventually(t, 2*time.Minute, "every event stored", func() (bool, error) { return stored() >= total, nil })
	n.term(t)
	if s := stored(); s != total {
		t.Fatalf("stored %d events, want exactly %d", s, total)
	}
	t.Logf("upgraded from %s (schema %d) to %d under load: %d events, %d stored before migrate up", prev, prevVersion, newest.Version, total, before)
}

// TestFailedMigrationRecoveredWithForce: a migration that fails half-way
// (here: the column it adds already exists) leaves the schema dirty;
// `settlementd migrate status` says so, `run` and `migrate up` refuse it;
// once the cause is fixed, `migrate force <last good>` and `migrate up`
// finish the upgrade.
func TestFailedMigrationRecoveredWithForce(t *testing.T) {
	bin := settlementdBinary(t)
	dsn := testenv.Postgres(t)
	all := migrations.All()
	newest, good := all[len(all)-1], all[len(all)-2].Version
	if err := migrations.To(dsn, good); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// The sabotage: something (a hand-made hotfix, say) already added the
	// column the newest migration adds.
	const sabotage = `ALTER TABLE ingest_watermark ADD COLUMN ledger_seq bigint`
	if newest.Name != "0084_ledger_seq" {
		t.Fatalf("the sabotage is written for 0084_ledger_seq; the newest migration is %s: write one for it", newest.Name)
	}
	if _, err := pool.Exec(context.Background(), sabotage); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "TOLLGATE_HTTP_ADDR=127.0.0.1:0", "TOLLGATE_MIGRATE=")
	settlementd := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, bin, args...)
		c.Env = env
		b, err := c.CombinedOutput()
		return string(b), err
	}
	if out, err := settlementd("migrate", "up"); err == nil || !strings.Contains(out, "ledger_seq") {
		t.Fatalf("migrate up over the sabotage: %v\n%s", err, out)
	}
	dirty := fmt.Sprintf("schema version %d (DIRTY", newest.Version)
	if out, _ := settlementd("migrate", "status"); !strings.Contains(out, dirty) {
		t.Fatalf("migrate status after the failure: %s", out)
	}
	if out, err := settlementd("run"); err == nil || !strings.Contains(out, dirty) {
		t.Fatalf("run on a dirty schema: %v\n%s", err, out)
	}
	if out, err := settlementd("migrate", "up"); err == nil || !strings.Contains(strings.ToLower(out), "dirty") {
		t.Fatalf("migrate up on a dirty schema: %v\n%s", err, out)
	}
	// The recovery, as docs/operators.md says: fix the cause, force the
	// last good version, migrate up.
	if _, err := pool.Exec(context.Background(), `ALTER TABLE ingest_watermark DROP COLUMN ledger_seq`); err != nil {
		t.Fatal(err)
	}
	if out, err := settlementd("migrate", "force", fmt.Sprint(good)); err != nil {
		t.Fatalf("migrate force %d: %v\n%s", good, err, out)
	}
	if out, err := settlementd("migrate", "up"); err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate up after the recovery: %v\n%s", err, out)
	}
	if v, d, err := migrations.Version(dsn); err != nil || d || v != newest.Version {
		t.Fatalf("after the recovery: version %d dirty %v (%v)", v, d, err)
	}
	if out, err := settlementd("migrate", "force", "12345"); err == nil || !strings.Contains(out, "no such migration") {
		t.Fatalf("migrate force to an unknown version: %v\n%s", err, out)
	}
}
