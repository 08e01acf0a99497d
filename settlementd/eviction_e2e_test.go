package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// A Redis whose maxmemory-policy may evict keys is refused: settlementd
// does not start on it, and says which policy and what to set; the check
// reads INFO memory (managed Redis disables CONFIG). noeviction passes.
func TestEvictionPolicyRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs settlementd and its own redis-server")
	}
	port := caddyrun.FreePort(t)
	srv := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--maxmemory-policy", "volatile-lru", "--rename-command", "CONFIG", "")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	settletest.Eventually(t, 20*time.Second, "redis-server answers", func() (bool, error) {
		return rdb.Ping(ctx).Err() == nil, nil
	})
	err := balances.CheckEviction(ctx, rdb)
	if err == nil || !strings.Contains(err.Error(), "volatile-lru") || !strings.Contains(err.Error(), "noeviction") {
		t.Fatalf("CheckEviction with CONFIG disabled and volatile-lru: %v", err)
	}

	dsn, _ := settletest.DB(t)
	sd := exec.CommandContext(ctx, settlementdBinary(t), "run")
	sd.Env = append(os.Environ(), "DATABASE_URL="+dsn, fmt.Sprintf("REDIS_URL=redis://127.0.0.1:%d/0", port), "TOLLGATE_PREFIX=tollgate:",
		fmt.Sprintf("TOLLGATE_HTTP_ADDR=127.0.0.1:%d", caddyrun.FreePort(t)), "TOLLGATE_AUTH_DOMAIN=localhost")
	out, err := sd.CombinedOutput()
	if err == nil {
		t.Fatalf("settlementd ran on a Redis that may evict keys:\n%s", out)
	}
	if !strings.Contains(string(out), "maxmemory-policy") || !strings.Contains(string(out), "volatile-lru") {
		t.Fatalf("settlementd's refusal does not name the policy:\n%s", tail(string(out), 3000))
	}

	// Nor does our gateway: its provisioning (caddy validate runs it)
	// fails with the same words.
	dir := t.TempDir()
	cf := strings.NewReplacer("{ADMIN}", "off", "{PORT}", fmt.Sprint(caddyrun.FreePort(t)), "@PREFIX@", "tollgate:", "@RPC@", "http://127.0.0.1:1",
		"@VAULT@", "0x0000000000000000000000000000000000000001", "@USDT@", "0x0000000000000000000000000000000000000002",
		"@USDC@", "0x0000000000000000000000000000000000000003", "@PAYTO@", "0x0000000000000000000000000000000000000004").Replace(lossCaddyfile)
	if err := os.WriteFile(dir+"/Caddyfile", []byte(cf), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := exec.CommandContext(ctx, caddyrun.Binary(t), "validate", "--config", dir+"/Caddyfile", "--adapter", "caddyfile")
	gw.Env = append(os.Environ(), fmt.Sprintf("TG_REDIS_URL=redis://127.0.0.1:%d/0", port))
	out, err = gw.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "maxmemory-policy") || !strings.Contains(string(out), "volatile-lru") {
		t.Fatalf("the gateway provisioned on a Redis that may evict keys (%v):\n%s", err, tail(string(out), 3000))
	}

	// The right policy passes.
	ok := startOwnRedis(t, "") // redis-server's default: noeviction
	okc := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", ok.port)})
	t.Cleanup(func() { _ = okc.Close() })
	if err := balances.CheckEviction(ctx, okc); err != nil {
		t.Fatalf("noeviction refused: %v", err)
	}
}
