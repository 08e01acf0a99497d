package walkthrough

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// guideNodeCalls is how many paid calls the guide's node serves.
const guideNodeCalls = 10

// checkNodeOperatorGuide runs the commands of docs/node-operators.md's
// ```sh run blocks with the built tollgate-node, in order, against the
// walkthrough's stack, as a new node operator (operator-2, whose wallet
// has never signed in) who has only their wallet's key and a node: key
// import, the endpoint proof, sign-in, registration (settlementd checks
// the proof), standing, earnings, the on-chain claim, evidence. Between
// registration and the first earnings command, callers call (what the
// operator waits for): free calls until the node is past probation, then
// paid calls until it has served guideNodeCalls of them, and the epoch
// holding them is closed and settled. The claim must pay on chain exactly
// what the guide's earnings command showed as claimable, which is exactly
// half of the calls the node served.
func checkNodeOperatorGuide(t *testing.T, ctx context.Context, st *Stack, sum Summary, root string) {
	began := time.Now()
	cli := binary(t, "TOLLGATE_NODE_BIN", "./cmd/tollgate-node", root)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "node-operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := GuideCommands(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 8 {
		t.Fatalf("docs/node-operators.md has %d guide commands; the guide check expects the whole path (at least 8)", len(cmds))
	}

	// The reader's starting point: operator-2's key in ./wallet.key and a
	// keystore password in ~/.tollgate-node/password, theirs only.
	op, err := st.Manifest.Account("operator-2")
	if err != nil {
		t.Fatal(err)
	}
	work, home, webRoot, state := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "wallet.key"), []byte(op.PrivateKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".tollgate-node"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".tollgate-node", "password"), []byte(randomHex(16)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodeURL, served, stopNode, err := StartGuideNode(st.Manifest.Polygon.RPCURL, webRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer stopNode()
	sh, err := NewGuideShell(state, work, []string{"HOME=" + home, "XDG_CONFIG_HOME=", "PATH=" + filepath.Dir(cli) + ":" + os.Getenv("PATH")},
		"http://"+ReadmeBaseURL, st.Gateway, GuideNodeOrigin, strings.TrimSuffix(nodeURL, "/"), GuideWebRoot, webRoot)
	if err != nil {
		t.Fatal(err)
	}
	run := func(c GuideCommand) string {
		t.Helper()
		code, stdout, stderr, err := sh.Run(ctx, c.Command, 3*time.Minute)
		t.Logf("docs/node-operators.md:%d $ %s\n%s%s", c.Line, sh.Expand(c.Command), stdout, stderr)
		if err != nil || code != 0 {
			t.Fatalf("docs/node-operators.md:%d %s: exit %d %v", c.Line, c.Command, code, err)
		}
		return stdout
	}
	// cliJSON runs a command of the check's own (not the guide's) in the
	// reader's shell and decodes its --json output.
	cliJSON := func(command string, out any) {
		t.Helper()
		code, stdout, stderr, err := sh.Run(ctx, command, time.Minute)
		if err != nil || code != 0 || json.Unmarshal([]byte(stdout), out) != nil {
			t.Fatalf("%s: exit %d %v\n%s%s", command, code, err, stdout, stderr)
		}
	}

	poly, err := ethclient.DialContext(ctx, st.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer poly.Close()
	usdt := testusdt.NewTestUSDT()
	balance := func() money.Units {
		t.Helper()
		b, err := bind.Call(usdt.Instance(poly, common.HexToAddress(st.Manifest.Polygon.USDT)), &bind.CallOpts{Context: ctx},
			usdt.PackBalanceOf(op.Addr()), usdt.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		u, err := money.FromBig(b)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	var nodeID string
	want := money.Units(guideNodeCalls) * money.PricePerCall / 2 // the node's half of what it served
	var shownClaimable, before money.Units
	claimed := false
	claimableRe := regexp.MustCompile(`(?m)^\s*claimable\s+([0-9.]+) USDT`)
	claimedRe := regexp.MustCompile(`(?m)^claimed ([0-9.]+) USDT for (\S+): tx (0x[0-9a-fA-F]{64}) in block \d+`)
	for _, c := range cmds {
		switch {
		case strings.HasPrefix(c.Command, "tollgate-node earnings") && nodeID == "":
			var l struct {
				Wallet string `json:"wallet"`
				Nodes  []struct {
					NodeID string `json:"node_id"`
					RPCURL string `json:"rpc_url"`
				} `json:"nodes"`
			}
			cliJSON("tollgate-node status --json", &l)
			if len(l.Nodes) != 1 || !strings.EqualFold(l.Wallet, op.Address) || l.Nodes[0].RPCURL != nodeURL {
				t.Fatalf("after the guide's registration, status shows %+v; want operator-2's one node at %s", l, nodeURL)
			}
			nodeID = l.Nodes[0].NodeID
			guideTraffic(t, ctx, st.Gateway, sum.APIKey, nodeID, served)
			t.Logf("the callers are done %s after the guide began; now the epoch holding their calls closes (epochs are a minute) and is settled",
				time.Since(began).Round(time.Second))
			// The epoch holding the calls closes, is settled and allocated
			// on chain (the operator waits; so does the check).
			deadline := time.Now().Add(150 * time.Second)
			for {
				var e struct {
					Earnings struct {
						Claimable string `json:"claimable_units"`
						Earned    string `json:"total_earned_units"`
					} `json:"earnings"`
				}
				cliJSON("tollgate-node earnings --json", &e)
				if e.Earnings.Claimable == want.String() {
					break
				}
				if u, err := money.ParseUnits(e.Earnings.Earned); err != nil || u > want {
					t.Fatalf("the node earned %s base units, more than half of the %d calls it served (%s)", e.Earnings.Earned, guideNodeCalls, want)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the node's share of %s base units was not claimable within 150 s: %+v", want, e.Earnings)
				}
				select {
				case <-ctx.Done():
					t.Fatal(ctx.Err())
				case <-time.After(time.Second): // poll interval, not a synchronisation
				}
			}
			t.Logf("the node's share is claimable %s after the guide began", time.Since(began).Round(time.Second))
			out := run(c)
			m := claimableRe.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the guide's earnings command shows no claimable amount:\n%s", out)
			}
			if shownClaimable, err = money.Parse(m[1]); err != nil || shownClaimable != want {
				t.Fatalf("earnings shows claimable %q, want %s USDT", m[1], want.Decimal())
			}
		case strings.HasPrefix(c.Command, "tollgate-node claim"):
			if shownClaimable == 0 {
				t.Fatal("the guide claims before its earnings command showed a claimable amount")
			}
			before = balance()
			out := run(c)
			m := claimedRe.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the guide's claim prints no claimed amount and transaction:\n%s", out)
			}
			paid, err := money.Parse(m[1])
			if err != nil || paid != shownClaimable || m[2] != nodeID {
				t.Fatalf("claim paid %q for %s, the guide's earnings showed %s USDT claimable for %s", m[1], m[2], shownClaimable.Decimal(), nodeID)
			}
			if got := balance() - before; got != shownClaimable {
				t.Fatalf("operator-2's USDT changed by %s on chain, the claim says %s", got.Decimal(), shownClaimable.Decimal())
			}
			rc, err := poly.TransactionReceipt(ctx, common.HexToHash(m[3]))
			if err != nil || rc.Status != 1 {
				t.Fatalf("the claim's transaction %s: %v %+v", m[3], err, rc)
			}
			claimed = true
		default:
			run(c)
		}
	}
	if !claimed {
		t.Fatal("the guide's commands never claimed")
	}
	// After the claim, nothing is left: a second claim exits 3.
	if code, stdout, stderr, err := sh.Run(ctx, "tollgate-node claim", time.Minute); err != nil || code != 3 {
		t.Fatalf("a second claim: exit %d %v, want 3 (nothing to claim)\n%s%s", code, err, stdout, stderr)
	}
	t.Logf("the guide: %d commands, from nothing to a claim of %s USDT, in %s", len(cmds), shownClaimable.Decimal(), time.Since(began).Round(time.Second))
}

// guideTraffic is the callers of the guide's node: free calls from one
// address until the node is past probation (none of them served by it),
// then paid calls with the key until the node has served guideNodeCalls.
func guideTraffic(t *testing.T, ctx context.Context, gateway, apiKey, nodeID string, served func() int64) {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second}
	call := func(body, ip, key string) (string, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, gateway+"/rpc", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", ip)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a caller's call: HTTP %d %s", resp.StatusCode, b)
		}
		return resp.Header.Get("X-Tollgate-Upstream"), resp.Header.Get("X-Tollgate-Payer")
	}
	follow := []string{fmt.Sprintf(blockNumber, 1), `{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",false]}`,
		`{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["0x000000000000000000000000000000000000dead","latest"]}`}
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		if up, _ := call(follow[i%len(follow)], "192.0.2.78", ""); up == nodeID {
			if ph := guidePhase(t, ctx, gateway, nodeID); ph == "probation" || ph == "" {
				t.Fatalf("a caller was served by %s during its probation", nodeID)
			}
		}
		if i%10 == 9 {
			if ph := guidePhase(t, ctx, gateway, nodeID); ph != "" && ph != "probation" {
				t.Logf("%s past probation after %d free calls (phase %s)", nodeID, i+1, ph)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was still on probation after 2 minutes (%d calls)", nodeID, i+1)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond): // the callers' pace, not a synchronisation
		}
	}
	byNode, calls := 0, 0
	for byNode < guideNodeCalls {
		if calls >= 100*guideNodeCalls {
			t.Fatalf("the node served %d of %d paid calls", byNode, calls)
		}
		// From a few addresses, so no per-address rate limit slows the callers.
		up, payer := call(fmt.Sprintf(blockNumber, calls), fmt.Sprintf("198.51.100.%d", 70+calls%8), apiKey)
		calls++
		if payer != "credits" {
			t.Fatalf("a paid call: payer %q", payer)
		}
		if up == nodeID {
			byNode++
		}
	}
	t.Logf("%d paid calls, %d served by %s; its endpoint received %d JSON-RPC requests in all", calls, byNode, nodeID, served())
}

// guidePhase is the node's phase on chain 137 in the gateway's /rpc/health
// ("" before the gateway knows the node).
func guidePhase(t *testing.T, ctx context.Context, gateway, nodeID string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gateway+"/rpc/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []struct {
					Name  string         `json:"name"`
					Trust map[string]any `json:"trust"`
				} `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/rpc/health: %v", err)
	}
	for _, c := range h.Chains {
		for _, u := range c.Pool.Upstreams {
			if c.ChainID == 137 && u.Name == nodeID {
				p, _ := u.Trust["phase"].(string)
				return p
			}
		}
	}
	return ""
}

func TestGuideCommands(t *testing.T) {
	md := "text\n```sh run\n# a comment\nexport A=1\n\ntollgate-node register --rpc-url x \\\n  --chain 137\n```\n" +
		"```sh\ncurl -s localhost:8080/x\n```\n```sh tested-by=TestMakeRelease\nmake release\n```\n```sh run\ntollgate-node claim\n```\n"
	cmds, err := GuideCommands([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 3 || cmds[0] != (GuideCommand{4, "export A=1"}) || cmds[1] != (GuideCommand{6, "tollgate-node register --rpc-url x  --chain 137"}) ||
		cmds[2] != (GuideCommand{16, "tollgate-node claim"}) {
		t.Fatalf("%+v", cmds)
	}
	for _, bad := range []string{"```sh run\nfoo \\\n```\n", "```sh run\nfoo\n"} {
		if _, err := GuideCommands([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// One shell session: exports and the directory carry over.
	dir, state := t.TempDir(), t.TempDir()
	sh, err := NewGuideShell(state, dir, nil, "EXAMPLE", "replaced")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"export X=EXAMPLE", "mkdir sub && cd sub"} {
		if code, _, stderr, err := sh.Run(context.Background(), c, time.Minute); code != 0 || err != nil {
			t.Fatalf("%s: %d %v %s", c, code, err, stderr)
		}
	}
	code, stdout, _, err := sh.Run(context.Background(), `echo "$X $(basename "$PWD")"; exit 4`, time.Minute)
	if err != nil || code != 4 || stdout != "replaced sub\n" {
		t.Fatalf("exit %d %v %q", code, err, stdout)
	}
}
