package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// runInProcess runs settlementd's daemon in this process with env as its
// whole environment, waits until healthURL answers 200 (its /health, direct
// or through the gateway), and stops it when the test ends, printing its log
// (warnings and up) if the test failed.
func runInProcess(t *testing.T, env map[string]string, healthURL string) {
	t.Helper()
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	log, err := newLogger(cfg, &logBuf)
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDaemon(dctx, cfg, log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("settlementd: %v", err)
		}
		if t.Failed() {
			t.Logf("settlementd log:\n%s", logBuf.String())
		}
	})
	settletest.Eventually(t, 20*time.Second, "settlementd healthy at "+healthURL, func() (bool, error) {
		resp, err := http.Get(healthURL)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
