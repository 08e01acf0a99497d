package testenv

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		ci, require string
		want        bool
	}{
		{"", "", false},
		{"true", "", true},
		{"1", "", true},
		{"0", "", false},
		{"false", "", false},
		{"FALSE", "", false},
		{"", "1", true},
		{"", "yes", true},
		{"", "0", false},
		{"false", "1", true},
		{"0", "false", false},
	} {
		t.Setenv("CI", tc.ci)
		t.Setenv("TOLLGATE_REQUIRE_SERVICES", tc.require)
		if got := Required(); got != tc.want {
			t.Errorf("CI=%q TOLLGATE_REQUIRE_SERVICES=%q: Required() = %v, want %v", tc.ci, tc.require, got, tc.want)
		}
	}
}

// fakeTB records Skip/Fatal instead of acting on the real test, so the
// "missing service" paths can be checked in both modes.
type fakeTB struct {
	testing.TB
	skipped, fatal string
}

func (f *fakeTB) Helper()        {}
func (f *fakeTB) Cleanup(func()) {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// call runs fn on a fresh fakeTB in its own goroutine (Skip/Fatal Goexit).
func call(t *testing.T, fn func(testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestMissingServicesSkipOrFail(t *testing.T) {
	helpers := map[string]func(testing.TB){
		"Redis":    func(tb testing.TB) { Redis(tb) },
		"Postgres": func(tb testing.TB) { Postgres(tb) },
	}
	envs := map[string][]string{ // variable -> values meaning "not available"
		"REDIS_URL":    {"", "redis://127.0.0.1:1/0"},
		"DATABASE_URL": {"", "postgres://tollgate@127.0.0.1:1/tollgate?sslmode=disable"},
	}
	for name, fn := range helpers {
		envVar := map[string]string{"Redis": "REDIS_URL", "Postgres": "DATABASE_URL"}[name]
		for _, val := range envs[envVar] {
			for _, required := range []bool{false, true} {
				t.Setenv(envVar, val)
				t.Setenv("TOLLGATE_REQUIRE_SERVICES", "")
				t.Setenv("CI", "")
				if required {
					t.Setenv("CI", "1")
				}
				f := call(t, fn)
				msg := f.skipped + f.fatal
				switch {
				case required && f.fatal == "":
					t.Errorf("%s with %s=%q, CI=1: want Fatal, got skip %q", name, envVar, val, f.skipped)
				case !required && f.skipped == "":
					t.Errorf("%s with %s=%q, CI unset: want Skip, got fatal %q", name, envVar, val, f.fatal)
				case !strings.Contains(msg, "make services"):
					t.Errorf("%s: message %q does not mention `make services`", name, msg)
				}
			}
		}
	}
}

func TestKeyPrefixIsolationAndCleanup(t *testing.T) {
	rdb := Redis(t)
	ctx := context.Background()

	// A key outside any child prefix must survive the children's cleanup.
	outside := KeyPrefix(t) + "survivor"
	if err := rdb.Set(ctx, outside, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}

	const n = 1200 // more than one SCAN page, to exercise the cursor loop
	var prefixes []string
	for i := range 2 {
		t.Run(fmt.Sprintf("child%d", i), func(t *testing.T) {
			c := Redis(t)
			p := KeyPrefix(t)
			if !strings.HasPrefix(p, "t:") || !strings.HasSuffix(p, ":") {
				t.Fatalf("unexpected prefix shape %q", p)
			}
			prefixes = append(prefixes, p)
			pipe := c.Pipeline()
			for k := range n {
				pipe.Set(ctx, fmt.Sprintf("%skey:%d", p, k), k, 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if got := countKeys(t, c, p); got != n {
				t.Fatalf("wrote %d keys under %s, SCAN sees %d", n, p, got)
			}
		})
	}
	if len(prefixes) != 2 || prefixes[0] == prefixes[1] {
		t.Fatalf("prefixes not distinct: %q", prefixes)
	}
	// The subtests have finished, so their cleanups have run.
	for _, p := range prefixes {
		if got := countKeys(t, rdb, p); got != 0 {
			t.Errorf("%d keys under %s left after cleanup", got, p)
		}
	}
	if v, err := rdb.Get(ctx, outside).Result(); err != nil || v != "x" {
		t.Errorf("key %s outside the child prefixes: got %q, %v", outside, v, err)
	}
}

// countKeys counts keys under prefix p with SCAN, independently of the
// package's own deletion code.
func countKeys(t *testing.T, c *redis.Client, p string) int {
	t.Helper()
	n := 0
	iter := c.Scan(context.Background(), 0, p+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPostgresDistinctDatabases(t *testing.T) {
	ctx := context.Background()
	admin := os.Getenv("DATABASE_URL")
	_ = Postgres(t) // skip/fail here if the cluster is missing

	var names []string
	t.Run("two databases", func(t *testing.T) {
		dsnA, dsnB := Postgres(t), Postgres(t)
		if dsnA == dsnB {
			t.Fatalf("same DSN twice: %s", dsnA)
		}
		for i, dsn := range []string{dsnA, dsnB} {
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatalf("connect %s: %v", dsn, err)
			}
			t.Cleanup(func() { conn.Close(context.Background()) })
			var name string
			if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(name, "t_") {
				t.Errorf("database name %q lacks t_ prefix", name)
			}
			names = append(names, name)
			// Only the first database gets the table: they must be independent.
			if i == 0 {
				if _, err := conn.Exec(ctx, "CREATE TABLE only_in_a (id int); INSERT INTO only_in_a VALUES (1)"); err != nil {
					t.Fatal(err)
				}
			} else {
				var exists bool
				if err := conn.QueryRow(ctx, "SELECT to_regclass('only_in_a') IS NOT NULL").Scan(&exists); err != nil {
					t.Fatal(err)
				}
				if exists {
					t.Error("table created in database A is visible in database B")
				}
			}
		}
		if len(names) == 2 && names[0] == names[1] {
			t.Fatalf("both DSNs point at database %s", names[0])
		}
	})

	// The subtest's cleanups (connections closed, databases dropped) are done.
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || left != 0 {
		t.Errorf("databases %v: %d still exist after cleanup", names, left)
	}
}

func TestPostgresPool(t *testing.T) {
	pool := PostgresPool(t)
	var one int
	if err := pool.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h:5/tollgate?sslmode=disable": "postgres://u@h:5/t_x?sslmode=disable",
		"postgresql://u@h/":                         "postgresql://u@h/t_x",
		"host=h port=5 dbname=tollgate":             "host=h port=5 dbname=tollgate dbname=t_x",
	} {
		if got, err := withDatabase(in, "t_x"); err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
