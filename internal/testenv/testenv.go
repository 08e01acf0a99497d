// Package testenv gives integration tests isolated access to the real Redis
// and PostgreSQL started by scripts/services.sh.
//
// Tests find the services through REDIS_URL and DATABASE_URL (printed by
// `eval "$(scripts/services.sh start)"`, a.k.a. `make services`). When a
// service is missing the test is skipped on a laptop, but fails in CI (or
// with TOLLGATE_REQUIRE_SERVICES=1): a silently skipped integration suite
// would otherwise look green.
//
// Isolation is per test, so tests may run with t.Parallel and several
// packages may share one Redis and one PostgreSQL cluster:
//   - Redis: every test namespaces its keys with KeyPrefix, and the keys are
//     deleted afterwards (FLUSHDB would wipe other packages' data).
//   - PostgreSQL: every test gets a brand-new database, dropped afterwards.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

const (
	// pingTimeout bounds the reachability check so a missing service costs a
	// test that would skip 2 s, not the client libraries' much longer default
	// dial timeouts. Where services are required (Required) the check fails
	// rather than skips, so it waits requiredPingTimeout instead: a busy
	// machine once kept a PING from a running Redis past 2 s.
	pingTimeout         = 2 * time.Second
	requiredPingTimeout = 30 * time.Second
	// cleanupTimeout bounds teardown work; t.Context() is already cancelled
	// when cleanups run, so they need a context of their own.
	cleanupTimeout = 30 * time.Second

	hint = "run `make services` (or: eval \"$(scripts/services.sh start)\")"
)

// Required reports whether missing services must fail tests instead of
// skipping them: true when CI or TOLLGATE_REQUIRE_SERVICES is set to anything
// other than "", "0" or "false".
func Required() bool {
	return truthy(os.Getenv("CI")) || truthy(os.Getenv("TOLLGATE_REQUIRE_SERVICES"))
}

func truthy(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// unavailable skips the test, or fails it when Required.
// reachTimeout is how long a service is given to answer the reachability
// check (pingTimeout, or requiredPingTimeout where services are required).
func reachTimeout() time.Duration {
	if Required() {
		return requiredPingTimeout
	}
	return pingTimeout
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("testenv: %s, and services are required (CI or TOLLGATE_REQUIRE_SERVICES is set); %s", msg, hint)
	}
	t.Skipf("testenv: %s; skipping. To run this test, %s", msg, hint)
}

// Redis returns a client for REDIS_URL, closed when the test ends. It skips
// (or fails, see Required) when REDIS_URL is unset or Redis does not answer
// PING within 2 s (30 s where services are required). Use KeyPrefix for every key the test writes.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	raw := os.Getenv("REDIS_URL")
	if raw == "" {
		unavailable(t, "REDIS_URL is not set")
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("testenv: bad REDIS_URL %q: %v", raw, err)
	}
	// The read and write deadlines too: a busy machine once kept a PING's
	// reply from a running Redis past go-redis's default 3 s (CI at load
	// average 17: TestClosePropertiesAgainstPostgres).
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = reachTimeout(), reachTimeout(), reachTimeout()
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout())
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		unavailable(t, "Redis at %s is unreachable: %v", raw, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// KeyPrefix returns a prefix ("t:<16 hex>:") unique to this call, so tests
// sharing one Redis never see each other's keys. When the test ends, every
// key starting with the prefix (in REDIS_URL's database) is deleted. It needs
// Redis, so it skips/fails like Redis does.
func KeyPrefix(t testing.TB) string {
	t.Helper()
	c := Redis(t) // registered first, so it is closed after the deletion below
	prefix := "t:" + randomHex(8) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := deletePrefix(ctx, c, prefix); err != nil {
			t.Errorf("testenv: deleting Redis keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

// deletePrefix removes all keys matching prefix*. SCAN (not KEYS) keeps a
// shared Redis responsive; UNLINK frees memory off the main thread. The
// prefix is hex and ':' only, so it holds no glob metacharacters.
func deletePrefix(ctx context.Context, c *redis.Client, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := c.Unlink(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// Postgres creates a fresh, empty database "t_<16 hex>" on the cluster in
// DATABASE_URL and returns a DSN for it; the database is dropped (WITH
// (FORCE), so leaked connections do not block it) when the test ends. It
// skips (or fails, see Required) when DATABASE_URL is unset or the server is
// unreachable within 2 s (30 s where services are required). The DATABASE_URL role must be allowed to CREATE
// DATABASE (scripts/services.sh makes it a superuser).
func Postgres(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		unavailable(t, "DATABASE_URL is not set")
	}
	if _, err := pgx.ParseConfig(admin); err != nil {
		t.Fatalf("testenv: bad DATABASE_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout())
	conn, err := pgx.Connect(ctx, admin)
	cancel()
	if err != nil {
		unavailable(t, "PostgreSQL at DATABASE_URL is unreachable: %v", err)
	}
	// One short-lived admin connection per call (not a shared pool): it keeps
	// the helper free of package state and is cheap at test scale.
	defer conn.Close(context.Background())

	name := "t_" + randomHex(8)
	ident := pgx.Identifier{name}.Sanitize()
	ctx, cancel = context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("testenv: CREATE DATABASE %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("testenv: connecting to drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("testenv: DROP DATABASE %s: %v", name, err)
		}
	})

	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dsn
}

// PostgresPool is Postgres plus a pgxpool.Pool on the new database, closed
// when the test ends (before the database is dropped).
func PostgresPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatalf("testenv: pgxpool.New: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// withDatabase returns dsn pointing at database name instead. It accepts the
// URL form (postgres://...) and the keyword/value form (host=... dbname=...),
// since DATABASE_URL may be either.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parsing DATABASE_URL: %w", err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In keyword/value form a later key overrides an earlier one.
	return dsn + " dbname=" + name, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
