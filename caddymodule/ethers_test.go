package caddymodule_test

import (
	"context"
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
