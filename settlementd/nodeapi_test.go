package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// Without TOLLGATE_JWT_SECRET the operator routes answer 503
// auth_not_configured; status and public data still answer, admin is off.
func TestOperatorRoutesNeedTheJWTSecret(t *testing.T) {
	testenv.Redis(t)
	dsn, _ := settletest.DB(t)
	api := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
	env := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": testenv.KeyPrefix(t),
		"TOLLGATE_HTTP_ADDR": api}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDaemon(ctx, cfg, zap.NewNop(), getenv) }()
	t.Cleanup(func() { cancel(); <-done })
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+api+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	settletest.Eventually(t, 20*time.Second, "settlementd up", func() (bool, error) {
		c, _ := do("GET", "/health", "")
		return c == 200, nil
	})
	for _, r := range [][2]string{{"POST", "/api/auth/challenge"}, {"POST", "/api/auth/login"}, {"POST", "/api/nodes/register"},
		{"GET", "/api/nodes/NODE-EU-AAAAAAAA/earnings"}, {"POST", "/api/nodes/NODE-EU-AAAAAAAA/claim"}} {
		if c, b := do(r[0], r[1], "{}"); c != 503 || !strings.Contains(b, "auth_not_configured") {
			t.Errorf("%s %s: %d %s", r[0], r[1], c, b)
		}
	}
	for _, p := range []string{"/api/status", "/api/admin/economics", "/api/admin/settlement"} {
		if c, b := do("GET", p, ""); c != 200 {
			t.Errorf("GET %s: %d %s", p, c, b)
		}
	}
	if c, _ := do("POST", "/admin/claims/pause", ""); c != 404 {
		t.Errorf("admin without a token configured: %d", c)
	}
}
