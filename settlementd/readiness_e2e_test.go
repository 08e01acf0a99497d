package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// readyCaddyfile: the gateway as the root Caddyfile has it, on the test's
// own redis-server, with settlementd's /health behind it; chain 137 from the
// dev chain, chain 8453 through a proxy the test fails.
const readyCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix tollgate:
			request_timeout 5s
			upstreams {
				timeout 2s
				probe_interval 100ms
			}
			metering on {
				free_daily_limit 0
				free_subnet_limit 0
				rate_limit_ip off
				rate_limit_key off
				key_create_limit off
				ip_concurrency off
			}
			payments {
				vault_address @VAULT@
				usdt_address @USDT@
				x402_asset @USDC@
				x402_pay_to @PAYTO@
				settlementd_url http://@SD@
			}
			chain 137 {
				provider devchain @RPC137@
			}
			chain 8453 {
				provider base @RPC8453@
			}
		}
		reverse_proxy /health @SD@
		respond 404
	}
}
`

// TestGatewayReadinessForABalancer is the balancer's view of one gateway
// (docs/operators.md, "Health endpoints"): /readyz stays 200 and paid calls
// keep flowing while PostgreSQL refuses settlementd (whose /health turns
// 503) and while one chain's provider is down; it turns 503 when the
// gateway's Redis is gone, and 200 again when it is back. /livez is 200
// throughout.
func TestGatewayReadinessForABalancer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	const prefix = "tollgate:"
	rs := startOwnRedis(t, "")
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", rs.port), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	dsn, pool := settletest.DB(t)

	sdAddr := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
	sdLog := &syncBuf{}
	sd := exec.Command(settlementdBinary(t), "run")
	sd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "REDIS_URL="+rs.url(), "TOLLGATE_PREFIX="+prefix,
		"TOLLGATE_HTTP_ADDR="+sdAddr, "TOLLGATE_INGEST_BLOCK=100ms", "TOLLGATE_MIGRATE=true",
		"TOLLGATE_LEADER_HEARTBEAT=200ms", "TOLLGATE_LEADER_RETRY=200ms", "TOLLGATE_AUTH_DOMAIN=localhost")
	sd.Stdout, sd.Stderr = sdLog, sdLog
	if err := sd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sd.Process.Signal(syscall.SIGTERM)
		_ = sd.Wait()
		if t.Failed() {
			t.Logf("settlementd log:\n%s", sdLog)
		}
	})
	settletest.Eventually(t, 30*time.Second, "settlementd sets the generation marker", func() (bool, error) {
		ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix)
		return ok, nil
	})

	base := faultproxy.New(m.Base.RPCURL)
	t.Cleanup(base.Close)
	payTo, err := m.Account("treasury")
	if err != nil {
		t.Fatal(err)
	}
	gw := caddyrun.Start(t, strings.NewReplacer("@RPC137@", m.Polygon.RPCURL, "@RPC8453@", base.URL(), "@SD@", sdAddr,
		"@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC, "@PAYTO@", payTo.Address).Replace(readyCaddyfile),
		"TG_REDIS_URL="+rs.url())
	client := &http.Client{Timeout: 15 * time.Second}
	get := func(path string) (int, []byte) {
		resp, err := client.Get(gw.URL() + path)
		if err != nil {
			return 0, []byte(err.Error())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	chainHealthy := func(id uint64) bool { ok, _ := gw.ChainHealthy(id); return ok }
	settletest.Eventually(t, time.Minute, "chains 137 and 8453 healthy", func() (bool, error) {
		return chainHealthy(137) && chainHealthy(8453), nil
	})

	// A funded key, credited as the deposit listener would.
	resp, err := client.Post(gw.URL()+"/api/keys", "application/json", strings.NewReader(`{"label":"balancer","tier":"free"}`))
	if err != nil {
		t.Fatal(err)
	}
	var key struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&key)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create key: %d %v", resp.StatusCode, err)
	}
	if _, _, err := balances.Credit(ctx, rdb, prefix, key.KeyID, 1_000_000, "0xreadiness"); err != nil {
		t.Fatal(err)
	}
	paid := func(chain string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, gw.URL()+"/rpc/"+chain, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key.APIKey)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Tollgate-Payer")
	}
	expect := func(what string, ready int, settlementdHealth int) {
		t.Helper()
		if st, b := get("/livez"); st != http.StatusOK {
			t.Fatalf("%s: /livez %d %s", what, st, b)
		}
		if st, b := get("/readyz"); st != ready {
			t.Fatalf("%s: /readyz %d, want %d: %s", what, st, ready, b)
		}
		if settlementdHealth != 0 {
			if st, b := get("/health"); st != settlementdHealth {
				t.Fatalf("%s: settlementd's /health %d, want %d: %s", what, st, settlementdHealth, b)
			}
		}
		if ready == http.StatusOK {
			for range 5 {
				if st, payer := paid("137"); st != http.StatusOK || payer != "credits" {
					t.Fatalf("%s: a paid call: %d paid by %q", what, st, payer)
				}
			}
		}
		t.Logf("%s: /readyz %d", what, ready)
	}
	expect("all up", http.StatusOK, http.StatusOK)

	// /readyz is public: a flood of probes costs Redis one PING per 500 ms,
	// not one per probe.
	pings := func() int64 {
		info := rdb.Info(ctx, "commandstats").Val()
		_, rest, ok := strings.Cut(info, "cmdstat_ping:calls=")
		if !ok {
			return 0
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		return n
	}
	p0, began := pings(), time.Now()
	for range 300 {
		if st, _ := get("/readyz"); st != http.StatusOK {
			t.Fatalf("/readyz under a flood: %d", st)
		}
	}
	if n, most := pings()-p0, int64(time.Since(began)/(500*time.Millisecond))+2; n > most {
		t.Fatalf("300 /readyz probes in %s cost Redis %d PINGs, want at most %d", time.Since(began), n, most)
	} else {
		t.Logf("300 /readyz probes in %s: %d PINGs", time.Since(began).Round(time.Millisecond), n)
	}

	// 1. PostgreSQL refuses settlementd: no new connection to its database,
	// the open ones ended. settlementd's /health turns 503; the gateway,
	// which never waits on PostgreSQL, stays ready and keeps charging.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	admin := pgAdmin(t)
	pgExec := func(q string) {
		t.Helper()
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pgExec(fmt.Sprintf(`ALTER DATABASE %q ALLOW_CONNECTIONS false`, db))
	pool.Close()
	pgExec(fmt.Sprintf(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid()`, db))
	settletest.Eventually(t, time.Minute, "settlementd's /health 503 without PostgreSQL", func() (bool, error) {
		st, _ := get("/health")
		return st == http.StatusServiceUnavailable, nil
	})
	expect("PostgreSQL refusing settlementd", http.StatusOK, http.StatusServiceUnavailable)
	pgExec(fmt.Sprintf(`ALTER DATABASE %q ALLOW_CONNECTIONS true`, db))

	// 2. Chain 8453's only provider is down: that chain answers 503, the
	// gateway stays ready.
	base.SetMode(faultproxy.Fail502)
	settletest.Eventually(t, time.Minute, "chain 8453 unhealthy", func() (bool, error) { return !chainHealthy(8453), nil })
	if st, _ := paid("8453"); st == http.StatusOK {
		t.Fatalf("a call on chain 8453 without a provider answered %d", st)
	}
	expect("chain 8453's provider down", http.StatusOK, 0)
	base.SetMode(faultproxy.Pass)

	// 3. Redis is gone: the gateway cannot meter, so it is not ready.
	rs.kill()
	settletest.Eventually(t, 30*time.Second, "/readyz 503 without Redis", func() (bool, error) {
		st, b := get("/readyz")
		if st == http.StatusServiceUnavailable && bytes.Contains(b, []byte("127.0.0.1")) {
			return false, fmt.Errorf("/readyz names Redis' address: %s", b)
		}
		return st == http.StatusServiceUnavailable, nil
	})
	expect("Redis down", http.StatusServiceUnavailable, 0)
	rs.start()
	settletest.Eventually(t, 30*time.Second, "/readyz 200 with Redis back", func() (bool, error) {
		st, _ := get("/readyz")
		return st == http.StatusOK, nil
	})
}

// pgAdmin is a connection to DATABASE_URL's own database (a superuser
// in make test), from which the test's database can be closed and opened.
func pgAdmin(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
