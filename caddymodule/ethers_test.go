package caddymodule_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/money"
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

// TestViemChargedAnswerOnce: viem's http transport with its default retries
// (three, on -32005, -32603, HTTP 429/5xx...) against answers the gateway
// charges although they are errors: a block over the method's
// max_response_bytes (-32040), and a provider's "query returned more than
// 10000 results" (-32005) and "execution timeout" (-32603), which the
// gateway re-codes (-32040, -32042) because they are charged. Each call
// reaches the gateway once and is charged exactly once —
// relayed as -32005/-32603, viem would have paid for each four times.
func TestViemChargedAnswerOnce(t *testing.T) {
	dir, _ := filepath.Abs("../tests/js")
	node, err := exec.LookPath("node")
	if err != nil || !exists(filepath.Join(dir, "node_modules", "viem")) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/js/node_modules missing (run make test, which runs npm ci): %v", err)
		}
		t.Skip("node or tests/js/node_modules missing")
	}
	e := startMetered(t, meterOpts{free: -1, chain137: "method eth_getBlockByNumber max_response_bytes 200"})
	e.alpha.SetMode(faultproxy.AskForLess)
	e.beta.SetMode(faultproxy.AskForLess)
	secret, id := e.createKey(t)
	e.credit(t, id, 100*money.PricePerCall)
	upstream := func(method string) int { return e.alpha.Calls(method) + e.beta.Calls(method) }
	logs, calls := upstream("eth_getLogs"), upstream("eth_call")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "viem-charged-once.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+e.gw.URL()+"/rpc", "API_KEY="+secret)
	out, err := cmd.CombinedOutput()
	// Three calls, each charged once at the flat price (checked first: a
	// retrying client's failure shows what it paid).
	u := e.usage(t, secret)
	if got, want := fmt.Sprint(u["credits_remaining_usdt"]), (97 * money.PricePerCall).Decimal(); fmt.Sprint(u["requests_today"]) != "3" || got != want {
		t.Errorf("usage after three charged errors: %v requests, %s USDT left; want 3 requests, %s USDT left", u["requests_today"], got, want)
	}
	if err != nil {
		t.Fatalf("viem client failed: %v\n%s", err, out)
	}
	// The usage above counts the caller's requests (a retry would be a
	// fourth, charged). The providers may be asked more than once per
	// request at the gateway's own cost: a claimed -32005 is checked with
	// the gateway's own call while a hedge may ask the other provider.
	if l, c := upstream("eth_getLogs")-logs, upstream("eth_call")-calls; l < 1 || c < 1 {
		t.Fatalf("the provider was asked eth_getLogs %d times and eth_call %d times, want each at least once", l, c)
	}
}
