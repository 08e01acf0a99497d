package walkthrough

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// binary returns $env, or builds pkg into a temp dir.
func binary(t *testing.T, env, pkg, root string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func requireNode() bool {
	v := strings.TrimSpace(os.Getenv("TOLLGATE_REQUIRE_NODE"))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// TestWalkthroughEndToEnd runs the walkthrough of `make demo` on the real
// stack — the dev chains, settlementd and our Caddy with the root Caddyfile
// (plus a key_prefix line, so it shares Redis with other tests), as
// processes — and checks the Summary to the base unit. Then every curl
// example of README.md and docs/*.md runs against the same stack (the docs
// check), and so do the commands of the node operators' guide, with
// tollgate-node, from nothing to an on-chain claim (guide_test.go).
func TestWalkthroughEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack and waits for a 60 s epoch")
	}
	_ = testenv.Redis(t) // skips (or fails with TOLLGATE_REQUIRE_SERVICES) without Redis
	prefix := testenv.KeyPrefix(t)
	dsn := testenv.Postgres(t)
	root := repoRoot(t)
	// With TOLLGATE_REQUIRE_NODE (make test) the x402 step must run and
	// check out; otherwise it is checked whenever the gateway offers x402
	// and the Node client is there (X402Auto).
	x402 := X402Auto
	if requireNode() {
		x402 = X402Require
		if _, err := exec.LookPath("node"); err != nil {
			t.Fatal("node is required (TOLLGATE_REQUIRE_NODE) for the x402 step")
		}
	}
	if _, err := exec.LookPath("curl"); err != nil && testenv.Required() {
		t.Fatal("curl is required for the README examples")
	}
	sc := StackConfig{
		Caddy:       caddyrun.Binary(t),
		Settlementd: binary(t, "TOLLGATE_SETTLEMENTD_BIN", "./settlementd", root),
		Devchain:    binary(t, "TOLLGATE_DEVCHAIN_BIN", "./contracts/devchain", root),
		RepoRoot:    root, RunDir: t.TempDir(), RedisURL: os.Getenv("REDIS_URL"), DatabaseURL: dsn, Prefix: prefix,
		NodeProof: true, // registration asks the node's endpoint for the proof, as in production
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	st, err := StartStack(ctx, sc, &log)
	if err != nil {
		t.Fatalf("start the stack: %v\n%s", err, log.String())
	}
	t.Cleanup(st.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []string{"devchain", "settlementd", "caddy"} {
				t.Logf("--- %s.log (tail) ---\n%s", p, st.Log(p))
			}
		}
	})

	sum, err := Run(ctx, Config{Gateway: st.Gateway, Manifest: st.Manifest, RepoRoot: root, X402: x402}, &log)
	t.Logf("walkthrough output:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}

	checkSummary(t, sum)

	// The docs check: every curl example of README.md and of every page
	// under docs/ runs against this stack, so a guide's commands cannot drift.
	t.Run("README curl examples", func(t *testing.T) {
		docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		var exs []CurlExample
		var where []string
		for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CurlExamples(raw)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			rel, _ := filepath.Rel(root, path)
			for range got {
				where = append(where, rel)
			}
			exs = append(exs, got...)
		}
		if len(exs) < 10 {
			t.Fatalf("README.md and docs/ have %d curl examples; the docs check expects the API reference's (at least 10)", len(exs))
		}
		env := []string{"TOLLGATE_API_KEY=" + sum.APIKey, "KEY_ID=" + sum.KeyID, "TOLLGATE_JWT=" + sum.OperatorJWT,
			"NODE_ID=" + sum.NodeID, "TOLLGATE_ADMIN_TOKEN=" + st.AdminToken}
		for i, ex := range exs {
			res := RunCurl(ctx, ex, st.Gateway, env)
			want := "2xx"
			if ex.Expect != 0 {
				want = strconv.Itoa(ex.Expect)
			}
			if !res.OK() {
				body := res.Body
				if len(body) > 300 {
					body = body[:300] + "…"
				}
				t.Errorf("%s:%d %s\n  → %d (want %s) %v %s", where[i], ex.Line, ex.Command, res.Status, want, res.Err, body)
			} else {
				t.Logf("%s:%d → %d", where[i], ex.Line, res.Status)
			}
		}
	})

	// The node operators' guide (docs/node-operators.md's sh run blocks):
	// its commands, run with tollgate-node on the same stack, from nothing
	// to a registered node and a claim.
	t.Run("node operator guide", func(t *testing.T) {
		checkNodeOperatorGuide(t, ctx, st, sum, root)
	})

	// The operators' pages' sessions, last: docs/development.md reorganises
	// chain 137.
	t.Run("guide sessions", func(t *testing.T) {
		checkGuideSessions(t, ctx, st, root, sc.Settlementd)
	})

	// The root Caddyfile serves localhost; any other host name on the same
	// port (here 127.0.0.1) gets a JSON answer naming the service's URL, never
	// Caddy's empty 200.
	t.Run("other host names get JSON", func(t *testing.T) {
		u, err := url.Parse(st.Gateway)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://127.0.0.1:"+u.Port()+"/rpc", "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Error struct {
				Code    int
				Message string
				Data    struct{ URL string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusMisdirectedRequest ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || body.Error.Data.URL != st.Gateway+"/rpc" {
			t.Fatalf("http://127.0.0.1:%s/rpc: %d %s %+v (decode: %v); want 421 JSON naming %s/rpc", u.Port(), resp.StatusCode,
				resp.Header.Get("Content-Type"), body, err, st.Gateway)
		}
	})
}

// checkGuideSessions runs the sh run blocks of the operators' pages that
// need the stack (SessionTests), last, once the walkthrough is done:
// docs/redis.md's reconcile dry run with settlementd's environment, and
// docs/development.md's devchain_reorg call from a checkout whose .run/
// holds the dev chains' manifest (the stack's).
func checkGuideSessions(t *testing.T, ctx context.Context, st *Stack, root, settlementd string) {
	bin := t.TempDir()
	if err := os.Symlink(settlementd, filepath.Join(bin, "settlementd")); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"docs/redis.md", "docs/development.md"} {
		raw, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := GuideCommands(raw)
		if err != nil || len(cmds) == 0 {
			t.Fatalf("%s: %d commands, %v", page, len(cmds), err)
		}
		work := t.TempDir()
		if err := os.MkdirAll(filepath.Join(work, ".run"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(st.ManifestPath, filepath.Join(work, ".run", "devchain.json")); err != nil {
			t.Fatal(err)
		}
		sh, err := NewGuideShell(t.TempDir(), work, append([]string{"PATH=" + bin + ":" + os.Getenv("PATH")}, st.SettlementdEnv...),
			"http://"+ReadmeBaseURL, st.Gateway)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			code, stdout, stderr, err := sh.Run(ctx, c.Command, 2*time.Minute)
			if err != nil || code != 0 {
				t.Fatalf("%s:%d %s: exit %d %v\n%s%s", page, c.Line, c.Command, code, err, stdout, stderr)
			}
			t.Logf("%s:%d $ %s\n%s", page, c.Line, c.Command, stdout)
			// What each command says it does, checked.
			switch prog := SimpleCommands(c.Command)[0]; {
			case prog.Program == "settlementd" && strings.Join(prog.Sub, " ") == "reconcile":
				if !strings.Contains(stderr, "reconcile finished") || !strings.Contains(stderr, `"applied":false`) {
					t.Errorf("%s:%d %s: no dry-run report in its log:\n%s", page, c.Line, c.Command, stderr)
				}
			case prog.Program == "curl" && strings.Contains(c.Command, "devchain_reorg"):
				var res struct {
					Result json.RawMessage
					Error  *struct{ Message string }
				}
				if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Error != nil || len(res.Result) == 0 || string(res.Result) == "null" {
					t.Errorf("%s:%d devchain_reorg answered %q (%v)", page, c.Line, stdout, err)
				}
			default:
				t.Errorf("%s:%d %s: the check knows no such command; say what it must show", page, c.Line, c.Command)
			}
		}
	}
}

func TestCurlExamples(t *testing.T) {
	md := "text\n```sh\n# expect 402\ncurl -s localhost:8080/rpc \\\n  -d '{}'\necho hi\ncurl -s http://localhost:8080/health\n```\n" +
		"```sh run\ncurl -s localhost:8080/x\n```\n```sh tested-by=TestX\ncurl -s localhost:8080/y\n```\n```caddyfile\ncurl no\n```\n"
	exs, err := CurlExamples([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || exs[0].Expect != 402 || exs[0].Command != "curl -s localhost:8080/rpc  -d '{}'" || exs[0].Line != 4 ||
		exs[1].Expect != 0 || exs[1].Command != "curl -s http://localhost:8080/health" {
		t.Fatalf("%+v", exs)
	}
	if _, err := CurlExamples([]byte("```sh\ncurl -s localhost:8080/x -o out\n```\n")); err == nil {
		t.Fatal("-o accepted")
	}
}

// checkSummary checks a walkthrough's Summary to the base unit: the calls,
// the deposit, the 50/30/20 split, the claim and every balance change.
func checkSummary(t *testing.T, sum Summary) {
	t.Helper()
	const price = money.PricePerCall
	deposit := 5 * money.Scale
	if sum.FreeCalls != 500 || sum.Deposit != deposit || sum.Credited != deposit || sum.PaidCalls != 10 || sum.MCPCalls != 4 || sum.NodeCalls != 20 ||
		sum.NodeStepCalls < sum.NodeCalls {
		t.Fatalf("summary %+v", sum)
	}
	// Paid calls: 10 before the node, then as many as it took the node,
	// on the first rung of the trust ladder, to serve 20.
	paid := money.Units(sum.PaidCalls + sum.MCPCalls + sum.NodeStepCalls)
	x402Revenue := money.Units(0)
	if sum.X402.Ran {
		if sum.X402.Payments != 1 || sum.X402.OK != 3 || sum.X402.PayerPaid != money.BundlePrice {
			t.Fatalf("x402 %+v", sum.X402)
		}
		x402Revenue = 3 * (money.BundlePrice / money.BundleCalls)
	} else {
		t.Logf("x402 step NOT CHECKED: %s", sum.X402.NotRunWhy)
	}
	revenue := paid*price + x402Revenue
	ops, plat, pool := revenue/2, revenue*3/10, revenue-revenue/2-revenue*3/10
	// The node earns half of the 20 calls it served; the operators' half of
	// the provider-served and x402 calls is the platform's.
	nodeShare := 20 * price / 2
	if sum.Revenue != revenue || sum.Operators != ops || sum.Platform != plat || sum.Pool != pool || sum.Claimed != nodeShare ||
		sum.Distributed != nodeShare || sum.PlatformOperators != ops-nodeShare {
		t.Fatalf("revenue %d split %d/%d/%d, node %d, platform's operators' part %d, claimed %d; want %d split %d/%d/%d, node %d, %d",
			sum.Revenue, sum.Operators, sum.Platform, sum.Pool, sum.Distributed, sum.PlatformOperators, sum.Claimed,
			revenue, ops, plat, pool, nodeShare, ops-nodeShare)
	}
	if sum.CreditsLeft != deposit-paid*price {
		t.Fatalf("credits left %d", sum.CreditsLeft)
	}
	want := map[string]money.Units{
		"developer-1 (deposits)/USDT": -deposit, "treasury/USDT": deposit - revenue,
		"platform wallet/USDT": plat + ops - nodeShare, "pool wallet (20 %)/USDT": pool, "node operator-1/USDT": nodeShare,
		"ClaimsContract/USDT": 0, "x402 payer/USDC": -sum.X402.PayerPaid, "x402 payTo (treasury)/USDC": sum.X402.PayerPaid,
	}
	for _, b := range sum.Balances {
		if w, ok := want[b.Who+"/"+b.Asset]; ok {
			if b.Delta() != w {
				t.Errorf("%s %s: %d → %d, change %d, want %d", b.Who, b.Asset, b.Before, b.After, b.Delta(), w)
			}
			delete(want, b.Who+"/"+b.Asset)
		}
	}
	if len(want) != 0 {
		t.Errorf("balances not in the summary: %v", want)
	}
}
