package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
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
	go func() { done <- runDaemon(ctx, cfg, zap.NewNop()) }()
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
		{"GET", "/api/nodes"}, {"DELETE", "/api/nodes/NODE-EU-AAAAAAAA"},
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

// The sign-in domain is configuration: without TOLLGATE_AUTH_DOMAIN (and
// outside dev mode) settlementd says so in one log line and its login,
// operator and wallet-key routes answer 503 auth_not_configured, never
// taking the domain from a request's Host; TOLLGATE_DEV=1 serves them.
func TestOperatorRoutesNeedTheAuthDomain(t *testing.T) {
	for _, dev := range []bool{false, true} {
		t.Run(fmt.Sprintf("dev=%v", dev), func(t *testing.T) {
			testenv.Redis(t)
			dsn, _ := settletest.DB(t)
			api := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
			env := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": testenv.KeyPrefix(t),
				"TOLLGATE_HTTP_ADDR": api, "TOLLGATE_JWT_SECRET": strings.Repeat("j", 40), "TOLLGATE_LOG_LEVEL": "info"}
			if dev {
				env["TOLLGATE_DEV"] = "1"
			}
			getenv := func(k string) string { return env[k] }
			cfg, err := config.Load(nil, getenv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var logBuf syncBuffer
			log, err := newLogger(cfg, &logBuf)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- runDaemon(ctx, cfg, log) }()
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
			const wallet = `{"wallet":"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}`
			for _, p := range []string{"/api/auth/challenge", "/api/keys/wallet/challenge"} {
				c, b := do("POST", p, wallet)
				switch {
				case !dev && (c != 503 || !strings.Contains(b, "auth_not_configured") || !strings.Contains(b, "TOLLGATE_AUTH_DOMAIN")):
					t.Errorf("POST %s without a domain: %d %s", p, c, b)
				case dev && c != 200:
					t.Errorf("POST %s in dev mode: %d %s", p, c, b)
				}
			}
			logged := strings.Contains(logBuf.String(), "TOLLGATE_AUTH_DOMAIN is not set")
			if logged == dev {
				t.Errorf("the log says the domain is missing: %v (dev %v)\n%s", logged, dev, logBuf.String())
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
