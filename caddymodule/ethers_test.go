package caddymodule_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEthersClient drives the gateway with an independent client, ethers'
// JsonRpcProvider (pinned in tests/js), including a batch. It needs node and
// `npm ci` in tests/js (make test does both); TOLLGATE_REQUIRE_NODE turns
// their absence into a failure.
func TestEthersClient(t *testing.T) {
	dir, _ := filepath.Abs("../tests/js")
	node, err := exec.LookPath("node")
	if err != nil || !exists(filepath.Join(dir, "node_modules", "ethers")) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/js/node_modules missing (run make test, which runs npm ci): %v", err)
		}
		t.Skip("node or tests/js/node_modules missing")
	}
	e := startEnv(t)
	dev, err := e.net.Manifest.Account("developer-1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "gateway.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+e.gw.URL()+"/rpc", "ACCOUNT="+dev.Address)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ethers client failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestViemBatchOfAThousand: viem's http({ batch: true }) with its defaults
// sends 1,000 concurrent reads as one batch; the gateway accepts it (geth's
// limit), meters each call once from the key's credits, and forwards it to
// the upstreams in sub-batches they accept; every read succeeds.
func TestViemBatchOfAThousand(t *testing.T) {
	dir, _ := filepath.Abs("../tests/js")
	node, err := exec.LookPath("node")
	if err != nil || !exists(filepath.Join(dir, "node_modules", "viem")) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/js/node_modules missing (run make test, which runs npm ci): %v", err)
		}
		t.Skip("node or tests/js/node_modules missing")
	}
	e := startMetered(t, meterOpts{free: -1})
	secret, id := e.createKey(t)
	e.credit(t, id, 100_000)
	upstreamCalls := func() int { return e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance") }
	before := upstreamCalls()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "viem-batch.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+e.gw.URL()+"/rpc", "API_KEY="+secret)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("viem client failed: %v\n%s", err, out)
	}
	// Metered once per call: 1,000 × 30 units from 100,000.
	u := e.usage(t, secret)
	if fmt.Sprint(u["requests_today"]) != "1000" || fmt.Sprint(u["credits_remaining_usdt"]) != "0.07" {
		t.Fatalf("usage after the batch: %v", u)
	}
	if got := upstreamCalls() - before; got != 1000 {
		t.Fatalf("%d eth_getBalance calls reached the upstreams, want each of the 1,000 once", got)
	}
}
