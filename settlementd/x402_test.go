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

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// The /x402 routes exist only with TOLLGATE_X402_RPC_URL (a chain 8453).
func TestX402RoutesFollowTheRPCURL(t *testing.T) {
	testenv.Redis(t)
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c, err := simchain.New(simchain.Config{ChainID: 8453, HTTPPort: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	start := func(extra map[string]string) string {
		dsn, _ := settletest.DB(t)
		api := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
		env := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": testenv.KeyPrefix(t),
			"TOLLGATE_HTTP_ADDR": api}
		for k, v := range extra {
			env[k] = v
		}
		getenv := func(k string) string { return env[k] }
		cfg, err := config.Load(nil, getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- runDaemon(ctx, cfg, zap.NewNop()) }()
		t.Cleanup(func() { cancel(); <-done })
		settletest.Eventually(t, 20*time.Second, "settlementd up", func() (bool, error) {
			resp, err := http.Get("http://" + api + "/health")
			if err != nil {
				return false, nil
			}
			resp.Body.Close()
			return resp.StatusCode == 200, nil
		})
		return "http://" + api
	}
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}

	on := start(map[string]string{"TOLLGATE_X402_RPC_URL": c.HTTPURL(),
		"TOLLGATE_X402_RELAYER_KEY": fmt.Sprintf("%x", devnet.DevKey("relayer").D.FillBytes(make([]byte, 32))),
		"TOLLGATE_X402_PAY_TO":      "0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5", "TOLLGATE_DEV": "1"})
	// No receiver authorizer key: exact only.
	want := `{"kinds":[{"x402Version":1,"scheme":"exact","network":"base"},{"x402Version":2,"scheme":"exact","network":"eip155:8453"}]}`
	if code, body := get(on + "/x402/supported"); code != 200 || body != want {
		t.Fatalf("with TOLLGATE_X402_RPC_URL: %d %s", code, body)
	}
	off := start(nil)
	if code, body := get(off + "/x402/supported"); code != 404 {
		t.Fatalf("without TOLLGATE_X402_RPC_URL: %d %s", code, body)
	}
}
