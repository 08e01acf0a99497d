package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// TestSIGHUPReloadsChains: SIGHUP reads the chains file again; a file that
// does not validate is logged with the chain named and the table in force
// stays.
func TestSIGHUPReloadsChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.json")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"chains":[]}`)
	cfg := &config.Config{ChainsFile: path}
	tb, err := cfg.ReloadChains()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chains = tb
	core, logs := observer.New(zap.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := watchChains(ctx, cfg, zap.New(core))
	hup := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}

	write(`{"chains":[{"id":10,"name":"optimism","block_time":"2s"}]}`) // no finality
	hup()
	settletest.Eventually(t, 30*time.Second, "the bad file logged", func() (bool, error) {
		for _, e := range logs.All() {
			if e.Message == "SIGHUP: chains file not reloaded; the chains in force stay" &&
				strings.Contains(fmt.Sprint(e.ContextMap()["error"]), "chain 10 (optimism): finality is missing") {
				return true, nil
			}
		}
		return false, nil
	})
	if _, ok := live.Load().ByID(10); ok || live.Load().Len() != 5 {
		t.Fatalf("a bad file changed the table: %s", live.Load().IDs())
	}

	write(`{"chains":[{"id":10,"name":"optimism","block_time":"2s","finality":"tag"}]}`)
	hup()
	settletest.Eventually(t, 30*time.Second, "chain 10 in force", func() (bool, error) {
		_, ok := live.Load().ByID(10)
		return ok, nil
	})
}
