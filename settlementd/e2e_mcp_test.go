package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// mcpCaddyfile is x402Caddyfile with a free tier (mcpFree calls a day for
// the test's one address), chain 8453 (TestUSDC's dev chain) served next to
// 137, and eth_blockNumber weighted on 137, so the rpc tool's charge is the
// method's weight and not 1 by accident.
const mcpCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			request_timeout 10s
			upstream_timeout 5s
			probe_interval 100ms
			free_daily_limit @FREE@
			free_subnet_limit 100000
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			x402_facilitator_url @FACILITATOR@
			chain 137 {
				provider dev @POLYGON@
				method eth_blockNumber weight @WEIGHT@
			}
			chain 8453 {
				provider dev @BASE@
			}
		}
		respond 404
	}
}
`

const mcpRPCWeight = 3 // eth_blockNumber on chain 137 in mcpCaddyfile

// mcpTools is the catalogue of tools the MCP server offers.
var mcpTools = []string{"account", "call_contract", "chain_info", "get_balance", "get_block", "get_logs", "get_receipt", "get_transaction", "rpc"}

// mcpCall is one tool call for tests/x402/mcp.mjs.
type mcpCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// mcpResult is one call's report in mcp.mjs's line.
type mcpResult struct {
	Name              string         `json:"name"`
	Required          map[string]any `json:"required"` // the PaymentRequired the call was first answered with (then paid)
	Paid              bool           `json:"paid"`
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
	Meta              map[string]any `json:"_meta"`
	Text              string         `json:"text"`
	Error             string         `json:"error"`
}

// mcpOut is the JSON line tests/x402/mcp.mjs prints.
type mcpOut struct {
	ClientLatest    string `json:"client_latest_protocol"` // the revision the client offers
	ProtocolVersion string `json:"protocol_version"`       // the one the server answered
	Server          struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	SessionID *string     `json:"session_id"`
	Tools     []string    `json:"tools"`
	Resources []string    `json:"resources"`
	Calls     []mcpResult `json:"calls"`
	Payments  []struct {
		Call    int            `json:"call"`
		Payload map[string]any `json:"payload"`
	} `json:"payments"`
	Wire struct {
		Requests int            `json:"requests"`
		Statuses map[string]int `json:"statuses"`
	} `json:"wire"`
	Error string `json:"error"`
}

// mcpClient is x402Client, and the MCP packages installed next to it.
func mcpClient(t *testing.T) (node, dir string) {
	t.Helper()
	node, dir = x402Client(t)
	for _, p := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector-cli"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
				t.Fatalf("tests/x402/node_modules lacks %s (make test runs npm ci there): %v", p, err)
			}
			t.Skipf("tests/x402/node_modules lacks %s: %v", p, err)
		}
	}
	return node, dir
}

// mcpRun runs tests/x402/mcp.mjs against url with env (API_KEY,
// EVM_PRIVATE_KEY) and calls, and returns its report; it fails the test
// when the client exits non-zero.
func mcpRun(t *testing.T, node, dir, url string, calls []mcpCall, env ...string) mcpOut {
	t.Helper()
	js, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	var out mcpOut
	took := runClient(t, node, dir, "mcp.mjs", string(js), 2*time.Minute, append([]string{"URL=" + url, "CALLS=" + string(js)}, env...), &out)
	t.Logf("mcp.mjs, %d call(s): %v, %d HTTP requests %v, %d payment(s)", len(calls), took, out.Wire.Requests, out.Wire.Statuses, len(out.Payments))
	return out
}

// metaInt reads an integer of a result's _meta (JSON numbers decode as float64).
func metaInt(t *testing.T, r mcpResult, key string) int64 {
	t.Helper()
	f, ok := r.Meta[key].(float64)
	if !ok || f != float64(int64(f)) {
		t.Fatalf("%s: _meta[%q] = %#v, want an integer (_meta %v)", r.Name, key, r.Meta[key], r.Meta)
	}
	return int64(f)
}

func metaStr(t *testing.T, r mcpResult, key string) string {
	t.Helper()
	s, ok := r.Meta[key].(string)
	if !ok || s == "" {
		t.Fatalf("%s: _meta[%q] = %#v, want a string (_meta %v)", r.Name, key, r.Meta[key], r.Meta)
	}
	return s
}

// served checks r is a served tool result (no error, structured content,
// charged calls to payer) and returns its request id.
func (r mcpResult) served(t *testing.T, payer string, calls int) string {
	t.Helper()
	if r.Error != "" || r.IsError || r.StructuredContent == nil {
		t.Fatalf("%s: want a served result, got %+v", r.Name, r)
	}
	if got := metaStr(t, r, "tollgate/payer"); got != payer {
		t.Fatalf("%s: _meta tollgate/payer %q, want %q (_meta %v)", r.Name, got, payer, r.Meta)
	}
	if got := metaInt(t, r, "tollgate/calls"); got != int64(calls) {
		t.Fatalf("%s: _meta tollgate/calls %d, want %d", r.Name, got, calls)
	}
	return metaStr(t, r, "tollgate/request-id")
}

// TestMCPOfficialClients: the official MCP clients,
// through our Caddy with real Redis and PostgreSQL and settlementd as the
// x402 facilitator:
//   - the official TypeScript MCP client (@modelcontextprotocol/sdk 1.32.2,
//     tests/x402/mcp.mjs) connects to /mcp, negotiates a protocol revision
//     and lists the nine tools; the MCP Inspector CLI
//     (@modelcontextprotocol/inspector-cli 1.0.3) lists them too;
//   - it calls get_balance (native, then TestUSDC: 3 calls in one
//     decision), call_contract (TestUSDC balanceOf by a human-readable
//     signature, decoded) and rpc (eth_blockNumber, weighted 3): on the
//     free tier (free-remaining drops by exactly each tool's calls), with
//     an API key (its Redis balance drops by exactly calls × the price per
//     call per tool, and each tool call is one PostgreSQL debit of that),
//     then keyless: the PaymentRequired tool result offers exactly what
//     /rpc's HTTP 402 offers, the client pays with @x402/core + @x402/evm
//     in params._meta["x402/payment"], the first payment settles on chain
//     (one TestUSDC transfer of the bundle price, recorded) and buys a
//     bundle that the later calls draw on;
//   - a replayed payment (the same _meta payload again) is refused and
//     settles nothing: no second transfer, no second grant, the bundle
//     untouched.
func TestMCPOfficialClients(t *testing.T) {
	node, dir := mcpClient(t)
	began := time.Now()
	e := startX402Env(t)
	m := e.net.Manifest
	payerAcct, err := m.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	payer := payerAcct.Addr()
	usdc := m.Base.USDC

	// Our gateway for this test: a free tier of exactly the calls the free
	// phase makes, chain 8453 too, eth_blockNumber weighted.
	e.gw.Stop()
	want := []int{1, 3, 1, mcpRPCWeight} // the calls each tool call below costs
	free := 0
	for _, n := range want {
		free += n
	}
	cf := strings.NewReplacer("@PREFIX@", e.prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT,
		"@USDC@", usdc, "@PAYTO@", e.payTo.Hex(), "@FACILITATOR@", e.api+"/x402", "@POLYGON@", m.Polygon.RPCURL,
		"@BASE@", m.Base.RPCURL, "@FREE@", fmt.Sprint(free), "@WEIGHT@", fmt.Sprint(mcpRPCWeight)).Replace(mcpCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))
	for _, id := range []uint64{137, 8453} {
		settletest.Eventually(t, 2*time.Minute, fmt.Sprintf("chain %d healthy on the gateway", id), func() (bool, error) { return gw.ChainHealthy(id) })
	}
	url := gw.URL() + "/mcp"
	t.Logf("set-up in %v", time.Since(began).Round(time.Millisecond))

	calls := []mcpCall{
		{Name: "get_balance", Arguments: map[string]any{"chain": "base", "address": payer.Hex()}},
		{Name: "get_balance", Arguments: map[string]any{"chain": "8453", "address": payer.Hex(), "token": usdc}},
		{Name: "call_contract", Arguments: map[string]any{"chain": "base", "to": usdc, "function": "balanceOf(address)",
			"args": []any{payer.Hex()}, "returns": "(uint256)"}},
		{Name: "rpc", Arguments: map[string]any{"chain": "137", "method": "eth_blockNumber"}},
	}
	// checkValues checks the four results against the chains, read directly.
	checkValues := func(t *testing.T, rs []mcpResult) {
		t.Helper()
		wei, err := e.base.BalanceAt(e.ctx, payer, nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens := fmt.Sprint(e.at(t).balance(payer))
		native, token, call, rpc := rs[0].StructuredContent, rs[1].StructuredContent, rs[2].StructuredContent, rs[3].StructuredContent
		if native["wei"] != wei.String() || native["chain_id"] != 8453.0 || native["decimals"] != 18.0 || native["symbol"] != "ETH" {
			t.Errorf("get_balance native: %v, want %s wei of ETH on 8453", native, wei)
		}
		if token["raw"] != tokens || token["decimals"] != 6.0 || token["symbol"] != "USDC" || !strings.EqualFold(fmt.Sprint(token["token"]), usdc) {
			t.Errorf("get_balance TestUSDC: %v, want raw %s, 6 decimals, USDC", token, tokens)
		}
		if d, _ := call["decoded"].([]any); len(d) != 1 || d[0] != tokens || !strings.HasPrefix(fmt.Sprint(call["data"]), "0x") {
			t.Errorf("call_contract balanceOf: %v, want decoded [%s]", call, tokens)
		}
		polygon, err := ethclient.DialContext(e.ctx, m.Polygon.RPCURL)
		if err != nil {
			t.Fatal(err)
		}
		defer polygon.Close()
		head, err := polygon.BlockNumber(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := rpc["result"].(string)
		if n, err := hexutil.DecodeUint64(got); err != nil || rpc["chain_id"] != 137.0 || rpc["method"] != "eth_blockNumber" || n > head {
			t.Errorf("rpc eth_blockNumber: %v, want a block number on 137 ≤ %d", rpc, head)
		}
	}

	t.Run("connect and list", func(t *testing.T) {
		out := mcpRun(t, node, dir, url, []mcpCall{})
		got := append([]string(nil), out.Tools...)
		sort.Strings(got)
		if !reflect.DeepEqual(got, mcpTools) {
			t.Errorf("tools/list: %v, want %v", out.Tools, mcpTools)
		}
		// The client offers its newest revision and the server speaks it
		// (an older one the client supports would connect too, but we
		// support what the official client negotiates today).
		if out.ProtocolVersion != out.ClientLatest || out.Error != "" {
			t.Fatalf("negotiated protocol %q, the client offered %q; error %q", out.ProtocolVersion, out.ClientLatest, out.Error)
		}
		if out.SessionID != nil {
			t.Errorf("stateless server handed out Mcp-Session-Id %q", *out.SessionID)
		}
		t.Logf("protocol %s with %s %s; tools %v; resources %v", out.ProtocolVersion, out.Server.Name, out.Server.Version, out.Tools, out.Resources)
	})

	t.Run("inspector lists the tools", func(t *testing.T) {
		got := inspectorTools(t, node, dir, url)
		if !reflect.DeepEqual(got, mcpTools) {
			t.Fatalf("mcp-inspector-cli tools/list: %v, want %v", got, mcpTools)
		}
	})

	if !t.Run("free tier", func(t *testing.T) {
		out := mcpRun(t, node, dir, url, calls)
		left := int64(free)
		for i, r := range out.Calls {
			id := r.served(t, "free", want[i])
			left -= int64(want[i])
			if got := metaInt(t, r, "tollgate/free-remaining"); got != left {
				t.Errorf("%s: free-remaining %d, want %d", r.Name, got, left)
			}
			e.at(t).wantDebit(id, "free", "", want[i], 0)
			t.Logf("free tier: %s %v → %d call(s), %d free left, debit %s", r.Name, calls[i].Arguments, want[i], left, id)
		}
		checkValues(t, out.Calls)
	}) {
		return
	}

	var key, keyID string // the credited key
	if !t.Run("API key", func(t *testing.T) {
		e := e.at(t)
		key, keyID = e.creditedKey(gw, money.Scale)
		before := money.Scale
		for i, c := range calls { // one client run per tool: the balance read between them
			out := mcpRun(t, node, dir, url, []mcpCall{c}, "API_KEY="+key)
			r := out.Calls[0]
			id := r.served(t, "credits", want[i])
			after, err := balances.Balance(e.ctx, e.rdb, e.prefix, keyID)
			if err != nil {
				t.Fatal(err)
			}
			cost := money.PricePerCall * money.Units(want[i])
			if before-after != cost {
				t.Errorf("%s: the key's balance %s → %s in Redis, want −%s (%d calls × %s)", r.Name, before.Decimal(), after.Decimal(),
					cost.Decimal(), want[i], money.PricePerCall.Decimal())
			}
			if got := metaStr(t, r, "tollgate/credits-remaining"); got != after.Decimal() {
				t.Errorf("%s: credits-remaining %q, want %q", r.Name, got, after.Decimal())
			}
			e.wantDebit(id, "credits", keyID, want[i], int64(cost))
			t.Logf("credits: %s → %d call(s), %s → %s USDT in Redis (−%s), debit %s", r.Name, want[i], before.Decimal(), after.Decimal(),
				(before - after).Decimal(), id)
			before = after
		}
		out := mcpRun(t, node, dir, url, calls, "API_KEY="+key)
		for i, r := range out.Calls {
			e.wantDebit(r.served(t, "credits", want[i]), "credits", keyID, want[i], int64(money.PricePerCall)*int64(want[i]))
		}
		checkValues(t, out.Calls)

		// account and chain_info are free: they report, and charge nothing.
		left, err := balances.Balance(e.ctx, e.rdb, e.prefix, keyID)
		if err != nil {
			t.Fatal(err)
		}
		out = mcpRun(t, node, dir, url, []mcpCall{{Name: "account", Arguments: map[string]any{}},
			{Name: "chain_info", Arguments: map[string]any{"chain": "base"}}}, "API_KEY="+key)
		acct, info := out.Calls[0], out.Calls[1]
		k, _ := acct.StructuredContent["api_key"].(map[string]any)
		if acct.IsError || acct.Error != "" || k["key_id"] != keyID || fmt.Sprint(k["credits_remaining_usdt"]) != left.Decimal() ||
			acct.StructuredContent["free_calls_left_today"] != 0.0 || acct.StructuredContent["price_per_call_units"] != money.PricePerCall.String() {
			t.Errorf("account with the key: %+v, want key %s with %s USDT left, no free calls left", acct, keyID, left.Decimal())
		}
		if info.IsError || info.Error != "" {
			t.Errorf("chain_info: %+v", info)
		}
		for _, r := range out.Calls {
			if _, charged := r.Meta["tollgate/calls"]; charged {
				t.Errorf("%s was charged: %v", r.Name, r.Meta)
			}
		}
		if after, err := balances.Balance(e.ctx, e.rdb, e.prefix, keyID); err != nil || after != left {
			t.Errorf("account and chain_info moved the key's balance %s → %s (%v)", left.Decimal(), after.Decimal(), err)
		}
		t.Logf("account: %v", acct.StructuredContent)
	}) {
		return
	}

	// Keyless past the free tier: the PaymentRequired tool result, then the
	// paid retry. The payments the x402 phase made, for the replay.
	var payments []map[string]any
	var settledTx, bundleKey string
	if !t.Run("x402 in _meta", func(t *testing.T) {
		e := e.at(t)
		// Unpaid: every paid tool answers PaymentRequired, offering what
		// /rpc's 402 offers at the same moment (resource aside).
		unpaid := mcpRun(t, node, dir, url, calls)
		_, v2 := paymentRequired(t, e.rpc(gw))
		for _, r := range unpaid.Calls {
			if r.Error != "" || !r.IsError || r.StructuredContent == nil {
				t.Fatalf("%s past the free tier: want the PaymentRequired tool result, got %+v", r.Name, r)
			}
			pr := r.StructuredContent
			if pr["x402Version"] != 2.0 || fmt.Sprint(pr["error"]) == "" {
				t.Errorf("%s: PaymentRequired %v", r.Name, pr)
			}
			if res, _ := pr["resource"].(map[string]any); res["url"] != "mcp://tool/"+r.Name {
				t.Errorf("%s: PaymentRequired resource %v, want url mcp://tool/%s", r.Name, pr["resource"], r.Name)
			}
			if got, want := jsonOf(t, pr["accepts"]), jsonOf(t, v2.Accepts); got != want {
				t.Errorf("%s: PaymentRequired accepts\n%s\nwant /rpc's 402 accepts\n%s", r.Name, got, want)
			}
			var text map[string]any
			if err := json.Unmarshal([]byte(r.Text), &text); err != nil || jsonOf(t, text) != jsonOf(t, pr) {
				t.Errorf("%s: content[0].text is not the PaymentRequired object: %v %s", r.Name, err, r.Text)
			}
		}

		payer0, payTo0 := e.balance(payer), e.balance(e.payTo)
		out := mcpRun(t, node, dir, url, calls, "EVM_PRIVATE_KEY="+payerAcct.PrivateKey)
		used := 0
		for i, r := range out.Calls {
			if !r.Paid || r.Required == nil {
				t.Fatalf("%s: the client did not pay (%+v)", r.Name, r)
			}
			id := r.served(t, "bundle", want[i])
			used += want[i]
			if got := metaInt(t, r, "tollgate/bundle-remaining"); got != int64(x402Bundle-used) {
				t.Errorf("%s: bundle-remaining %d, want %d", r.Name, got, x402Bundle-used)
			}
			e.wantDebit(id, "bundle", strings.ToLower(payer.Hex()), want[i], int64(money.BundleCallRevenue)*int64(want[i]))
			t.Logf("x402: %s → %d call(s) from the bundle, %d left, settlement %v", r.Name, want[i], x402Bundle-used, r.Meta["x402/payment-response"])
			pr, _ := r.Meta["x402/payment-response"].(map[string]any)
			if i == 0 {
				// The first payment settles and buys the bundle.
				settledTx, _ = pr["transaction"].(string)
				if pr["success"] != true || pr["network"] != x402NetworkV2 || !strings.EqualFold(fmt.Sprint(pr["payer"]), payer.Hex()) ||
					len(settledTx) != 66 {
					t.Fatalf("%s: x402/payment-response %v, want success on %s by %s with a transaction", r.Name, pr, x402NetworkV2, payer.Hex())
				}
				if bundleKey, _ = r.Meta["tollgate/bundle-key"].(string); !strings.HasPrefix(bundleKey, "tg_") {
					t.Errorf("%s: tollgate/bundle-key %q, want the bundle's key", r.Name, bundleKey)
				}
				continue
			}
			// The later payments are served from that bundle and never settled.
			if pr != nil {
				t.Errorf("%s: payment %d settled too: %v", r.Name, i+1, pr)
			}
		}
		checkValues(t, out.Calls)
		if len(out.Payments) != len(calls) {
			t.Fatalf("%d payments made, want %d (one per PaymentRequired)", len(out.Payments), len(calls))
		}
		for _, p := range out.Payments {
			payments = append(payments, p.Payload)
		}
		e.checkSettled(settledTx, payer)
		if got := e.balance(payer); got != payer0-x402Price {
			t.Errorf("payer TestUSDC %d → %d, want exactly −%d", payer0, got, x402Price)
		}
		if got := e.balance(e.payTo); got != payTo0+x402Price {
			t.Errorf("payTo TestUSDC %d → %d, want exactly +%d", payTo0, got, x402Price)
		}
		wantB := map[string]string{balances.BundleCalls: fmt.Sprint(x402Bundle - used), balances.BundleGranted: fmt.Sprint(x402Bundle),
			balances.BundleUsed: fmt.Sprint(used)}
		if got := e.bundle(payer); fmt.Sprint(got) != fmt.Sprint(wantB) {
			t.Errorf("bundle in Redis %v, want %v", got, wantB)
		}
		// Only the first authorization was spent on chain.
		for i, p := range payments {
			if used := e.authUsed(payer, authNonce(t, p)); used != (i == 0) {
				t.Errorf("payment %d: authorization used on chain %v, want %v", i+1, used, i == 0)
			}
		}
		e.wantSettlements(settledTx, payer)
	}) {
		return
	}

	// The bundle key the payment returned, as the MCP session's X-API-Key,
	// draws on the same bundle (as on /rpc).
	t.Run("bundle key", func(t *testing.T) {
		e := e.at(t)
		b0 := e.bundle(payer)
		out := mcpRun(t, node, dir, url, []mcpCall{calls[3], {Name: "account", Arguments: map[string]any{}}}, "API_KEY="+bundleKey)
		r := out.Calls[0]
		e.wantDebit(r.served(t, "bundle", mcpRPCWeight), "bundle", strings.ToLower(payer.Hex()), mcpRPCWeight,
			int64(money.BundleCallRevenue)*mcpRPCWeight)
		b := e.bundle(payer)
		if fmt.Sprint(atoi(b0[balances.BundleCalls])-atoi(b[balances.BundleCalls])) != fmt.Sprint(mcpRPCWeight) ||
			fmt.Sprint(metaInt(t, r, "tollgate/bundle-remaining")) != b[balances.BundleCalls] {
			t.Errorf("rpc with the bundle key: bundle %v → %v, bundle-remaining %v; want −%d", b0, b, r.Meta["tollgate/bundle-remaining"], mcpRPCWeight)
		}
		acct := out.Calls[1]
		k, _ := acct.StructuredContent["api_key"].(map[string]any)
		bundle, _ := k["bundle"].(map[string]any)
		if acct.IsError || acct.Error != "" || fmt.Sprint(bundle["calls_remaining"]) != b[balances.BundleCalls] ||
			!strings.EqualFold(fmt.Sprint(bundle["wallet"]), payer.Hex()) {
			t.Errorf("account with the bundle key: %+v, want the wallet's bundle with %s calls left", acct, b[balances.BundleCalls])
		}
		// GET /api/keys/usage says the same of the bundle key.
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, gw.URL()+"/api/keys/usage", nil)
		req.Header.Set("X-API-Key", bundleKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var usage struct {
			Bundle struct {
				Wallet         string `json:"wallet"`
				CallsRemaining int64  `json:"calls_remaining"`
			} `json:"bundle"`
		}
		err = json.NewDecoder(resp.Body).Decode(&usage)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || fmt.Sprint(usage.Bundle.CallsRemaining) != b[balances.BundleCalls] ||
			!strings.EqualFold(usage.Bundle.Wallet, payer.Hex()) {
			t.Errorf("usage of the bundle key: %d %+v (%v), want the wallet's bundle with %s calls left", resp.StatusCode, usage, err, b[balances.BundleCalls])
		}
		t.Logf("account with the bundle key: %v %s", acct.StructuredContent, acct.Text)
	})

	// Sign-In-With-X in _meta: the paying wallet signs in per tool call (a
	// sign-in's nonce is good for one request) and draws on its bundle
	// without paying again; the same proof a second time is refused.
	t.Run("sign-in-with-x in _meta", func(t *testing.T) {
		e := e.at(t)
		b0 := e.bundle(payer)
		c := calls[0]
		c.Meta = map[string]any{"x402/sign-in-with-x": siwxProof(t, gw.URL()+"/mcp", payerAcct.PrivateKey)}
		out := mcpRun(t, node, dir, url, []mcpCall{c, c})
		r := out.Calls[0]
		e.wantDebit(r.served(t, "bundle", want[0]), "bundle", strings.ToLower(payer.Hex()), want[0], int64(money.BundleCallRevenue)*int64(want[0]))
		b := e.bundle(payer)
		if atoi(b0[balances.BundleCalls])-atoi(b[balances.BundleCalls]) != int64(want[0]) {
			t.Errorf("get_balance signed in: bundle %v → %v, want −%d", b0, b, want[0])
		}
		again := out.Calls[1]
		if !again.IsError || again.StructuredContent == nil || !strings.Contains(fmt.Sprint(again.StructuredContent["error"]), meter.ReasonNonceUsed) {
			t.Errorf("the same sign-in again: want the PaymentRequired result naming %s, got %+v", meter.ReasonNonceUsed, again)
		}
		if got := e.bundle(payer); fmt.Sprint(got) != fmt.Sprint(b) {
			t.Errorf("the refused sign-in changed the bundle: %v → %v", b, got)
		}
	})

	t.Run("replayed payment", func(t *testing.T) {
		e := e.at(t)
		payer0, payTo0, bundle0 := e.balance(payer), e.balance(e.payTo), e.bundle(payer)
		// The settled payment, and one that was served from the bundle, sent
		// again as they were.
		for i, p := range []map[string]any{payments[0], payments[1]} {
			c := calls[3]
			c.Meta = map[string]any{"x402/payment": p}
			out := mcpRun(t, node, dir, url, []mcpCall{c})
			r := out.Calls[0]
			if r.Error != "" || !r.IsError || r.StructuredContent == nil {
				t.Fatalf("replay %d: want the PaymentRequired tool result, got %+v", i+1, r)
			}
			reason := fmt.Sprint(r.StructuredContent["error"])
			if !strings.HasPrefix(reason, x402.ReasonNonceUsed+": ") {
				t.Errorf("replay %d: error %q, want %s: …", i+1, reason, x402.ReasonNonceUsed)
			}
			if _, ok := r.Meta["x402/payment-response"]; ok {
				t.Errorf("replay %d: answered with a settlement %v", i+1, r.Meta)
			}
			t.Logf("replay %d → PaymentRequired %q", i+1, reason)
		}
		if e.balance(payer) != payer0 || e.balance(e.payTo) != payTo0 {
			t.Errorf("a replay moved TestUSDC: payer %d → %d, payTo %d → %d", payer0, e.balance(payer), payTo0, e.balance(e.payTo))
		}
		if got := e.bundle(payer); fmt.Sprint(got) != fmt.Sprint(bundle0) {
			t.Errorf("a replay changed the bundle: %v → %v", bundle0, got)
		}
		if e.authUsed(payer, authNonce(t, payments[1])) {
			t.Errorf("the replayed bundle-served authorization was settled")
		}
		e.wantSettlements(settledTx, payer)
	})

	// The callers' guide's client snippet (docs/callers.md, between its mcp-snippet markers) is
	// tests/x402/readme-mcp.mjs, and works: with an API key, and keyless
	// past the free tier, paying with x402 from a fresh wallet. X402_ASSET
	// names the token the gateway is paid in (the dev chain's TestUSDC, which
	// is not @x402/evm's default USDC), for the snippet's spend controls.
	t.Run("README snippet", func(t *testing.T) {
		e := e.at(t)
		readme, err := os.ReadFile("../docs/callers.md")
		if err != nil {
			t.Fatal(err)
		}
		snippet, ok := between(string(readme), "<!-- mcp-snippet -->\n```js\n", "```\n<!-- /mcp-snippet -->")
		file, err := os.ReadFile(filepath.Join(dir, "readme-mcp.mjs"))
		if err != nil || !ok || snippet != string(file) {
			t.Fatalf("docs/callers.md's mcp-snippet (found %v) is not tests/x402/readme-mcp.mjs (%v)", ok, err)
		}
		run := func(env ...string) (tools []string, result, meta map[string]any) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "readme-mcp.mjs")
			cmd.Dir = dir
			cmd.Env = append(append(os.Environ(), "TOLLGATE_MCP="+url, "ADDRESS="+payer.Hex(), "X402_ASSET="+usdc), env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var out struct {
				Result map[string]any `json:"result"`
				Meta   map[string]any `json:"meta"`
			}
			if runErr != nil || len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &out) != nil {
				hint := ""
				if strings.Contains(stderr.String(), "rejected by spendControls") {
					// @x402/core's default spend controls pay only @x402/evm's
					// default assets (Base's real USDC); a gateway paid in any other
					// token (the dev chain's TestUSDC here) is refused by the client.
					hint = "\nthe snippet's x402Client refuses the offer's asset: it must allow a non-default token, e.g. " +
						"if (process.env.X402_ASSET) payer.setSpendControls({ allowedAssets: [{ network: \"eip155:8453\", " +
						"asset: process.env.X402_ASSET, maxAmountPerPayment: \"100000\" }] }); (this test sets X402_ASSET)"
				}
				t.Fatalf("readme-mcp.mjs: %v%s\nstdout: %s\nstderr: %s", runErr, hint, stdout.String(), stderr.String())
			}
			tools = strings.Fields(lines[0])
			sort.Strings(tools)
			return tools, out.Result, out.Meta
		}
		wei, err := e.base.BalanceAt(e.ctx, payer, nil)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := balances.Balance(e.ctx, e.rdb, e.prefix, keyID)
		tools, res, meta := run("TOLLGATE_API_KEY=" + key)
		after, _ := balances.Balance(e.ctx, e.rdb, e.prefix, keyID)
		if !reflect.DeepEqual(tools, mcpTools) || res["wei"] != wei.String() || meta["tollgate/payer"] != "credits" || meta["tollgate/calls"] != 1.0 ||
			before-after != money.PricePerCall {
			t.Errorf("README snippet with a key: tools %v, result %v, meta %v, the key paid %s", tools, res, meta, (before - after).Decimal())
		}

		w := e.wallet("readme", 1_000_000)
		from := crypto.PubkeyToAddress(w.PublicKey)
		_, res, meta = run("EVM_PRIVATE_KEY=" + hexutil.Encode(crypto.FromECDSA(w)))
		pr, _ := meta["x402/payment-response"].(map[string]any)
		tx, _ := pr["transaction"].(string)
		if res["wei"] != wei.String() || meta["tollgate/payer"] != "bundle" || pr["success"] != true || len(tx) != 66 {
			t.Fatalf("README snippet paying with x402: result %v, meta %v", res, meta)
		}
		e.checkSettled(tx, from)
		if got := e.balance(from); got != 1_000_000-x402Price {
			t.Errorf("the README client's wallet holds %d TestUSDC after paying, want %d", got, 1_000_000-x402Price)
		}
	})
	t.Logf("end to end in %v", time.Since(began).Round(time.Millisecond))
}

// between is the text of s between the first start and the next end.
func between(s, start, end string) (string, bool) {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(after, end)
	return in, ok
}

// inspectorTools runs the MCP Inspector CLI's tools/list against url and
// returns the tool names, sorted.
func inspectorTools(t *testing.T, node, dir, url string) []string {
	t.Helper()
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, bin, "--cli", url, "--transport", "http", "--method", "tools/list")
	// inspector-cli 1.0.3 finds its package.json by testing "../package.json"
	// against the working directory and then importing it relative to its
	// own build/: run it from there, or it dies with "Cannot find module
	// …/@modelcontextprotocol/package.json".
	cmd.Dir = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	var out struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &out); err != nil || jerr != nil {
		t.Fatalf("mcp-inspector-cli: %v (%v)\nstdout: %s\nstderr: %s", err, jerr, stdout.String(), stderr.String())
	}
	t.Logf("mcp-inspector-cli --cli %s --transport http --method tools/list: %d tools in %v", url, len(out.Tools), time.Since(began).Round(time.Millisecond))
	var names []string
	for _, tl := range out.Tools {
		if tl.Description == "" || tl.InputSchema["type"] != "object" {
			t.Errorf("tool %s: description %q, inputSchema %v", tl.Name, tl.Description, tl.InputSchema)
		}
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

// creditedKey creates an API key through gw and credits it units, as the
// deposit listener books a deposit (shared/balances.Credit).
func (e *x402Env) creditedKey(gw *caddyrun.Server, units money.Units) (secret, id string) {
	e.t.Helper()
	resp, err := http.Post(gw.URL()+"/api/keys", "application/json", strings.NewReader(`{"label":"mcp","tier":"free"}`))
	if err != nil {
		e.t.Fatal(err)
	}
	var k struct {
		Key string `json:"api_key"`
		ID  string `json:"key_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&k)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("create key: %d %v", resp.StatusCode, err)
	}
	if applied, _, err := balances.Credit(e.ctx, e.rdb, e.prefix, k.ID, units, "0xmcp:"+k.ID); err != nil || !applied {
		e.t.Fatalf("credit: %v %v", applied, err)
	}
	return k.Key, k.ID
}

// wantDebit waits for the debit of request id in PostgreSQL (through the
// stream ingest) and checks it: one row, the payer, account (skipped when
// ""), calls and amount.
func (e *x402Env) wantDebit(id, payer, account string, calls int, units int64) {
	e.t.Helper()
	settletest.Eventually(e.t, 20*time.Second, "debit "+id+" ingested", func() (bool, error) {
		return settletest.Count(e.t, e.pool, `SELECT count(*) FROM debits WHERE id = $1`, id) == 1, nil
	})
	var gotPayer, gotAccount string
	var gotCalls, gotUnits int64
	if err := e.pool.QueryRow(e.ctx, `SELECT payer, COALESCE(account, ''), calls, amount_units FROM debits WHERE id = $1`, id).
		Scan(&gotPayer, &gotAccount, &gotCalls, &gotUnits); err != nil {
		e.t.Fatal(err)
	}
	if gotPayer != payer || (account != "" && !strings.EqualFold(gotAccount, account)) || gotCalls != int64(calls) || gotUnits != units {
		e.t.Errorf("debit %s in PostgreSQL: %s %s %d calls %d units; want %s %s %d calls %d units", id, gotPayer, gotAccount, gotCalls,
			gotUnits, payer, account, calls, units)
	}
	// Its revenue: the same request, served, nothing refunded.
	settletest.Eventually(e.t, 20*time.Second, "revenue of "+id+" ingested", func() (bool, error) {
		return settletest.Count(e.t, e.pool, `SELECT count(*) FROM revenue_events WHERE id = $1`, id) == 1, nil
	})
	if n := settletest.Count(e.t, e.pool, `SELECT count(*) FROM revenue_events WHERE id = $1 AND payer = $2 AND calls = $3 AND amount_units = $4`,
		id, payer, calls, units); n != 1 {
		e.t.Errorf("revenue event %s is not %s, %d calls, %d units", id, payer, calls, units)
	}
	if n := settletest.Count(e.t, e.pool, `SELECT count(*) FROM refunds WHERE id = $1`, id); n != 0 {
		e.t.Errorf("request %s was refunded", id)
	}
}

// wantSettlements checks PostgreSQL knows exactly one x402 settlement and
// one bundle grant, both tx.
func (e *x402Env) wantSettlements(tx string, payer common.Address) {
	e.t.Helper()
	settletest.Eventually(e.t, 20*time.Second, "the grant ingested", func() (bool, error) {
		return settletest.Count(e.t, e.pool, `SELECT count(*) FROM bundle_grants`) >= 1, nil
	})
	if n := settletest.Count(e.t, e.pool, `SELECT count(*) FROM bundle_grants WHERE lower(id) = lower($1) AND lower(wallet) = lower($2)
		AND calls = $3 AND amount_units = $4`, tx, payer.Hex(), x402Bundle, x402Price); n != 1 {
		e.t.Errorf("bundle_grants holds %d rows of tx %s by %s for %d calls / %d units, want 1", n, tx, payer.Hex(), x402Bundle, x402Price)
	}
	if n := settletest.Count(e.t, e.pool, `SELECT count(*) FROM bundle_grants`); n != 1 {
		e.t.Errorf("%d bundle_grants rows, want 1", n)
	}
	if n := settletest.Count(e.t, e.pool, `SELECT count(*) FROM chain_txs WHERE kind = 'x402_transfer_with_authorization'`); n != 1 {
		e.t.Errorf("%d x402 settlement transactions in chain_txs, want 1", n)
	}
}

// authNonce is the authorization nonce of an exact EVM PaymentPayload.
func authNonce(t *testing.T, p map[string]any) [32]byte {
	t.Helper()
	var pl struct {
		Payload struct {
			Authorization struct {
				Nonce string `json:"nonce"`
			} `json:"authorization"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(jsonOf(t, p)), &pl); err != nil {
		t.Fatal(err)
	}
	b := common.FromHex(pl.Payload.Authorization.Nonce)
	if len(b) != 32 {
		t.Fatalf("payment nonce %q", pl.Payload.Authorization.Nonce)
	}
	return [32]byte(b)
}

// jsonOf is v as canonical JSON (object keys sorted).
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x) // maps marshal with sorted keys
	return string(b)
}

func atoi(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// siwxProof is a SIGN-IN-WITH-X header value for the wallet of key on the
// gateway whose URL is uri, signed now: the EIP-4361 text the x402 client's
// SIWE library signs, with an EIP-191 personal signature.
func siwxProof(t *testing.T, uri, key string) string {
	t.Helper()
	k, err := crypto.HexToECDSA(strings.TrimPrefix(key, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	addr := crypto.PubkeyToAddress(k.PublicKey)
	host := strings.TrimPrefix(strings.TrimPrefix(uri, "http://"), "https://")
	host = host[:strings.IndexByte(host, '/')]
	nonce := fmt.Sprintf("mcp%d", time.Now().UnixNano())
	issued := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	msg := host + " wants you to sign in with your Ethereum account:\n" + addr.Hex() + "\n\n" +
		"\nURI: " + uri + "\nVersion: 1\nChain ID: 8453\nNonce: " + nonce + "\nIssued At: " + issued
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), k)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	raw, _ := json.Marshal(map[string]any{"domain": host, "address": addr.Hex(), "uri": uri, "version": "1", "chainId": "eip155:8453",
		"type": "eip191", "nonce": nonce, "issuedAt": issued, "signature": hexutil.Encode(sig)})
	return base64.StdEncoding.EncodeToString(raw)
}
