package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// TestLocalAnswersAreFree: eth_chainId, net_version and eth_accounts are
// answered by the gateway itself to a caller with no free tier left, without
// reaching an upstream; a call that costs in the same batch still needs
// paying, and an eth_chainId with params goes on like any call.
func TestLocalAnswersAreFree(t *testing.T) {
	e := startMetered(t, meterOpts{free: 1})
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK {
		t.Fatalf("free call: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusPaymentRequired {
		t.Fatalf("free tier should be used up: %d %s", a.status, a.body)
	}
	probes := e.alpha.Calls("eth_chainId") + e.beta.Calls("eth_chainId")
	probeBlocks := e.alpha.Calls("eth_blockNumber") + e.beta.Calls("eth_blockNumber")

	for _, c := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":"a","method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":"a","result":"0x89"}`},
		{`{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}`, `{"jsonrpc":"2.0","id":2,"result":"0x89"}`},
		{`{"jsonrpc":"2.0","id":3,"method":"net_version"}`, `{"jsonrpc":"2.0","id":3,"result":"137"}`},
		{`{"jsonrpc":"2.0","id":4,"method":"eth_accounts","params":[ ]}`, `{"jsonrpc":"2.0","id":4,"result":[]}`},
		{`[{"jsonrpc":"2.0","id":5,"method":"eth_chainId"},{"jsonrpc":"2.0","id":6,"method":"net_version"}]`,
			`[{"jsonrpc":"2.0","id":5,"result":"0x89"},{"jsonrpc":"2.0","id":6,"result":"137"}]`},
	} {
		a := e.rpc(t, c.body)
		if a.status != http.StatusOK || strings.TrimSpace(string(a.body)) != c.want {
			t.Fatalf("%s: %d %s, want %s", c.body, a.status, a.body, c.want)
		}
		if p := a.header.Get("X-Tollgate-Payer"); p != "" {
			t.Fatalf("%s: a local answer was metered (payer %q)", c.body, p)
		}
	}
	// Probes ask eth_chainId and eth_blockNumber together in one batch, so
	// any eth_chainId beyond the probes' eth_blockNumber came from a caller.
	chainIDs := e.alpha.Calls("eth_chainId") + e.beta.Calls("eth_chainId") - probes
	blocks := e.alpha.Calls("eth_blockNumber") + e.beta.Calls("eth_blockNumber") - probeBlocks
	if chainIDs > blocks {
		t.Fatalf("%d eth_chainId reached an upstream, only %d were probes", chainIDs, blocks)
	}

	// A paid call next to a local one: the request still needs paying.
	a := e.rpc(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}]`)
	if a.status != http.StatusPaymentRequired {
		t.Fatalf("batch with a paid call: %d %s", a.status, a.body)
	}
	// eth_chainId with params is not a fact the gateway answers: it is
	// metered (and refused here) like any other call.
	a = e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[1]}`)
	if a.status != http.StatusPaymentRequired {
		t.Fatalf("eth_chainId with params: %d %s", a.status, a.body)
	}
}

// TestEthersReports402: ethers' JsonRpcProvider with its defaults, on an IP
// whose free tier is used up, detects the network (eth_chainId is answered
// locally) and reports the 402 of the call that costs — not "failed to
// detect network".
func TestEthersReports402(t *testing.T) {
	dir, _ := filepath.Abs("../tests/js")
	node, err := exec.LookPath("node")
	if err != nil || !exists(filepath.Join(dir, "node_modules", "ethers")) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/js/node_modules missing (run make test, which runs npm ci): %v", err)
		}
		t.Skip("node or tests/js/node_modules missing")
	}
	e := startMetered(t, meterOpts{free: 1})
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK {
		t.Fatalf("free call: %d %s", a.status, a.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "payment.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+e.gw.URL()+"/rpc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ethers client failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestAdminProbe: POST /admin/probe/{chain} sends one eth_blockNumber through
// the pool with no metering (the caller has no free tier) and says who
// answered; without the token it is 401; with every upstream failing, 503.
func TestAdminProbe(t *testing.T) {
	const token = "probe-admin-token-0123456789"
	e := startMetered(t, meterOpts{free: -1, adminToken: token})
	if a := e.do(t, http.MethodPost, "/admin/probe/137", ""); a.status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d %s", a.status, a.body)
	}
	before := e.alpha.Calls("eth_blockNumber") + e.beta.Calls("eth_blockNumber")
	a := e.do(t, http.MethodPost, "/admin/probe/polygon", "", "X-Admin-Token: "+token)
	m := a.json(t)
	if a.status != http.StatusOK || m["chain_id"] != 137.0 || !strings.HasPrefix(fmt.Sprint(m["block_number"]), "0x") ||
		(m["upstream"] != "alpha" && m["upstream"] != "beta") || a.header.Get("X-Tollgate-Payer") != "" {
		t.Fatalf("probe: %d %s", a.status, a.body)
	}
	if after := e.alpha.Calls("eth_blockNumber") + e.beta.Calls("eth_blockNumber"); after <= before {
		t.Fatalf("the probe reached no upstream (eth_blockNumber calls %d → %d)", before, after)
	}
	if a := e.do(t, http.MethodGet, "/admin/probe/137", "", "X-Admin-Token: "+token); a.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", a.status)
	}
	e.alpha.SetMode(faultproxy.Fail502)
	e.beta.SetMode(faultproxy.Fail502)
	a = e.do(t, http.MethodPost, "/admin/probe/137", "", "X-Admin-Token: "+token)
	if code, _, _ := errorField(t, a); a.status != http.StatusServiceUnavailable || code != "upstream_unavailable" {
		t.Fatalf("every upstream failing: %d %s", a.status, a.body)
	}
}

// TestAgentDiscovery: /.well-known/x402 lists exactly the x402-payable
// routes of the route table (expanded per chain), each of which answers a
// keyless caller past the free tier with an x402 offer; /llms.txt names every
// public route; the OpenAPI document carries payment information on exactly
// the paid operations.
func TestAgentDiscovery(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	a := e.do(t, http.MethodGet, "/.well-known/x402", "")
	var doc struct {
		Version      int
		Resources    []string
		Instructions string
	}
	if err := json.Unmarshal(a.body, &doc); err != nil || a.status != http.StatusOK || doc.Version != 1 || doc.Instructions == "" {
		t.Fatalf("/.well-known/x402: %d %s", a.status, a.body)
	}
	var want []string
	for _, rt := range caddymodule.RouteTable() {
		if rt[0] != http.MethodPost || !strings.HasPrefix(rt[1], "/rpc") {
			continue
		}
		if rt[1] == "/rpc" {
			want = append(want, e.gw.URL()+"/rpc")
			continue
		}
		for _, c := range chains.Builtin().All() {
			want = append(want, e.gw.URL()+"/rpc/"+strconv.FormatUint(c.ID, 10))
		}
	}
	if fmt.Sprint(doc.Resources) != fmt.Sprint(want) {
		t.Fatalf("resources %v, want %v", doc.Resources, want)
	}
	for _, res := range doc.Resources {
		resp, err := http.Post(res, "application/json", strings.NewReader(blockNumber))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get("PAYMENT-REQUIRED") == "" || !bytes.Contains(body, []byte(`"accepts"`)) {
			t.Fatalf("%s: %d %s, want an x402 offer", res, resp.StatusCode, body)
		}
	}

	a = e.do(t, http.MethodGet, "/llms.txt", "")
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/markdown") || !bytes.HasPrefix(a.body, []byte("# Tollgate\n")) {
		t.Fatalf("/llms.txt: %d %q %.80s", a.status, a.header.Get("Content-Type"), a.body)
	}
	for _, rt := range caddymodule.RouteTable() {
		line := rt[0] + " " + e.gw.URL() + rt[1] + " "
		if strings.HasPrefix(rt[1], "/admin/") {
			if bytes.Contains(a.body, []byte(line)) {
				t.Errorf("llms.txt lists the admin route %s", rt[1])
			}
			continue
		}
		if !bytes.Contains(a.body, []byte(line)) {
			t.Errorf("llms.txt lacks %s %s", rt[0], rt[1])
		}
	}

	doc3 := loadOpenAPI(t)
	for _, op := range gatewayOps(doc3) {
		info := doc3.Paths.Value(op[1]).GetOperation(op[0]).Extensions["x-payment-info"]
		paid := op[0] == http.MethodPost && strings.HasPrefix(op[1], "/rpc")
		if paid != (info != nil) {
			t.Errorf("%s %s: x-payment-info %v, want it exactly on the x402-payable operations", op[0], op[1], info)
		}
		if paid && !strings.Contains(fmt.Sprint(info), "x402") {
			t.Errorf("%s %s: x-payment-info %v does not name x402", op[0], op[1], info)
		}
	}
}

// TestMethodTable: what no public RPC serves is answered by the gateway with
// -32601 naming the method and never reaches an upstream; an eth_getLogs
// wider than 10,000 blocks is refused with the limit named, a narrower one
// is served; eth_accounts is [].
func TestMethodTable(t *testing.T) {
	e := startMetered(t, meterOpts{free: 1000})
	denied := []string{"admin_nodeInfo", "admin_addPeer", "personal_listAccounts", "personal_unlockAccount", "miner_start",
		"engine_getPayloadV3", "clique_getSigners", "eth_sign", "eth_signTransaction", "eth_sendTransaction", "eth_subscribe", "debug_setHead"}
	var batch []string
	for i, m := range denied {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":[]}`, i, m))
	}
	a := e.rpc(t, "["+strings.Join(batch, ",")+"]")
	var out []struct {
		ID    int
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(a.body, &out); err != nil || a.status != 200 || len(out) != len(denied) {
		t.Fatalf("denied batch: %d %s", a.status, a.body)
	}
	for _, o := range out {
		if o.Error.Code != -32601 || !strings.Contains(o.Error.Message, denied[o.ID]) {
			t.Errorf("%s: %+v", denied[o.ID], o.Error)
		}
	}
	for _, m := range denied {
		if n := e.alpha.Calls(m) + e.beta.Calls(m); n != 0 {
			t.Errorf("%s reached an upstream %d times", m, n)
		}
	}

	// The probe asks each upstream eth_getLogs over its rungs: wait until
	// it has (so its questions are not counted below) and check that the
	// real node serves the widest.
	for _, name := range []string{"alpha", "beta"} {
		for deadline := time.Now().Add(10 * time.Second); ; {
			if r := e.upstreamState(t, name)["logs_range"]; r != nil {
				if r != float64(10_000) {
					t.Fatalf("%s logs_range %v, want 10000 (geth serves any range)", name, r)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: logs range never probed: %v", name, e.upstreamState(t, name))
			}
			time.Sleep(20 * time.Millisecond) // polling /rpc/health
		}
	}
	wide := `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2711"}]}` // 10,001 blocks
	before := e.alpha.Calls("eth_getLogs") + e.beta.Calls("eth_getLogs")
	a = e.rpc(t, wide)
	if m := a.json(t); a.status != 200 || !strings.Contains(fmt.Sprint(m["error"]), "10001 blocks") || !strings.Contains(fmt.Sprint(m["error"]), "at most 10000") {
		t.Fatalf("wide eth_getLogs: %d %s", a.status, a.body)
	}
	if e.alpha.Calls("eth_getLogs")+e.beta.Calls("eth_getLogs") != before {
		t.Fatal("the wide eth_getLogs reached an upstream")
	}
	// The same range spelled so that a second reader would skip it: zero
	// padding past 18 characters (the old bypass), and what the gateway
	// cannot read — a JSON number, a 0x-less string, a duplicated or
	// mis-cased member (read one way here and another by the upstream),
	// the whole 64-bit range (whose span once wrapped to 0). Each is
	// refused before any upstream sees it.
	pad := "0x" + strings.Repeat("0", 30) + "1"
	for _, filter := range []string{
		`{"fromBlock":"` + pad + `","toBlock":"0x2711"}`,
		`{"fromBlock":1,"toBlock":10001}`,
		`{"fromBlock":"1","toBlock":"10001"}`,
		`{"fromBlock":"0x2710","fromBlock":"0x0","toBlock":"0x2711"}`,
		`{"fromBlock":"0x2710","FromBlock":"0x0","toBlock":"0x2711"}`,
		`{"fromBlock":"0x0","toBlock":"0xffffffffffffffff"}`,
	} {
		a = e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[`+filter+`]}`)
		errObj, _ := a.json(t)["error"].(map[string]any)
		if a.status != 200 || errObj == nil || errObj["code"] != float64(-32602) {
			t.Fatalf("eth_getLogs %s: %d %s, want -32602", filter, a.status, a.body)
		}
	}
	if e.alpha.Calls("eth_getLogs")+e.beta.Calls("eth_getLogs") != before {
		t.Fatal("a respelled wide eth_getLogs reached an upstream")
	}
	a = e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2"}]}`)
	if m := a.json(t); a.status != 200 || m["result"] == nil || e.alpha.Calls("eth_getLogs")+e.beta.Calls("eth_getLogs") != before+1 {
		t.Fatalf("narrow eth_getLogs: %d %s", a.status, a.body)
	}
}

// TestMethodTablePerChain: an operator's chain { method … } lines change
// the table for that chain only: a narrower eth_getLogs range named in the
// refusal, a method refused with the operator's reason — while chain 137
// keeps the shared table.
func TestMethodTablePerChain(t *testing.T) {
	e := startMetered(t, meterOpts{free: 1000, extra: `chain 8453 {
				method eth_getLogs max_block_range 2
				method eth_getBalance deny balances are not served on this chain
			}`})
	logs := func(path string, span int) map[string]any {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x%x"}]}`, span)
		return e.do(t, http.MethodPost, path, body).json(t)
	}
	// Chain 137's head must be past block 3 for its control call.
	for deadline := time.Now().Add(10 * time.Second); ; {
		head, _ := e.rpc(t, blockNumber).json(t)["result"].(string)
		if n, _ := strconv.ParseUint(strings.TrimPrefix(head, "0x"), 16, 64); n > 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chain 137 is not past block 3")
		}
		time.Sleep(50 * time.Millisecond) // waiting for blocks
	}
	if m := logs("/rpc/8453", 3); !strings.Contains(fmt.Sprint(m["error"]), "spans 3 blocks") || !strings.Contains(fmt.Sprint(m["error"]), "at most 2") {
		t.Fatalf("chain 8453, 3 blocks: %v", m)
	}
	if m := logs("/rpc/8453", 2); strings.Contains(fmt.Sprint(m["error"]), "at most") {
		t.Fatalf("chain 8453, 2 blocks refused: %v", m)
	}
	if m := logs("/rpc", 3); m["result"] == nil {
		t.Fatalf("chain 137, 3 blocks: %v", m)
	}
	bal := `{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`
	m := e.do(t, http.MethodPost, "/rpc/8453", bal).json(t)
	if errObj, _ := m["error"].(map[string]any); errObj == nil || errObj["code"] != float64(-32601) ||
		!strings.Contains(fmt.Sprint(errObj["message"]), "balances are not served on this chain") {
		t.Fatalf("chain 8453 eth_getBalance: %v", m)
	}
	if m := e.rpc(t, bal).json(t); m["result"] == nil {
		t.Fatalf("chain 137 eth_getBalance: %v", m)
	}
}

// TestNewFilterKeepsTheLogsRange: eth_newFilter then eth_getFilterLogs
// answers the filter's whole range, so a filter is held to eth_getLogs'
// max_block_range (and its reading of the range) when it is made —
// otherwise a filter from block 0 to latest asks a node for every log of
// the chain at the price of two calls.
func TestNewFilterKeepsTheLogsRange(t *testing.T) {
	e := startMetered(t, meterOpts{free: 1000, chain137: "method eth_getLogs max_block_range 2"})
	filter := func(from, to string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"eth_newFilter","params":[{"fromBlock":"` + from + `","toBlock":"` + to + `"}]}`
		return e.rpc(t, body).json(t)
	}
	code := func(m map[string]any) any {
		errObj, _ := m["error"].(map[string]any)
		return errObj["code"]
	}
	before := e.alpha.Calls("eth_newFilter") + e.beta.Calls("eth_newFilter")
	if m := filter("0x1", "0x3"); code(m) != float64(-32602) || !strings.Contains(fmt.Sprint(m["error"]), "spans 3 blocks") {
		t.Fatalf("a filter over 3 blocks: %v", m)
	}
	if m := filter("0x00000000000000000000", "0x3"); code(m) != float64(-32602) || !strings.Contains(fmt.Sprint(m["error"]), "spans 4 blocks") {
		t.Fatalf("a fromBlock padded past 18 characters: %v", m)
	}
	if m := filter("1", "0x2"); code(m) != float64(-32602) {
		t.Fatalf("a fromBlock the gateway cannot read: %v", m)
	}
	if m := filter("0x1", "0x2"); m["result"] == nil {
		t.Fatalf("a filter over 2 blocks: %v", m)
	}
	if n := e.alpha.Calls("eth_newFilter") + e.beta.Calls("eth_newFilter") - before; n != 1 {
		t.Fatalf("eth_newFilter reached the upstreams %d times, want 1 (the control)", n)
	}
}
