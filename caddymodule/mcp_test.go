package caddymodule_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// headerTransport adds fixed headers to every request of an MCP client.
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the official Go SDK client to the gateway's /mcp,
// with headers given as "Name: value".
func (e *meterEnv) mcpSession(t *testing.T, headers ...string) *sdk.ClientSession {
	t.Helper()
	h := http.Header{}
	for _, x := range headers {
		k, v, _ := strings.Cut(x, ": ")
		h.Add(k, v)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "tollgate-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.gw.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{h}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tool calls a tool and returns its result.
func tool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, meta sdk.Meta) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPToolsPaidLikeRPC: the official Go SDK client through our Caddy
// lists the nine tools and calls them on the free tier and with an API
// key; each tool call is one metering decision charged exactly the calls
// it makes (method weights included), free tools and wrong arguments cost
// nothing, and a call past the free tier is x402's payment-required tool
// result with the same offer as /rpc's 402.
func TestMCPToolsPaidLikeRPC(t *testing.T) {
	e := startMetered(t, meterOpts{free: 8, chain137: "method eth_getLogs weight 2"})
	usdt := e.net.Manifest.Polygon.USDT
	holder, _ := e.net.Manifest.Account("payer")
	cs := e.mcpSession(t)

	if v := cs.InitializeResult().ProtocolVersion; v == "" {
		t.Fatal("no protocol version negotiated")
	}
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Fatalf("tool %s has no description or input schema", tl.Name)
		}
	}
	sort.Strings(names)
	want := []string{"account", "call_contract", "chain_info", "get_balance", "get_block", "get_logs", "get_receipt", "get_transaction", "rpc"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	freeLeft := func() int64 {
		t.Helper()
		res := tool(t, cs, "account", nil, nil)
		if res.IsError {
			t.Fatalf("account: %s", text(res))
		}
		return int64(structured(t, res)["free_calls_left_today"].(float64))
	}
	if n := freeLeft(); n != 8 {
		t.Fatalf("free calls left %d, want 8", n)
	}
	// Free tier: native balance 1 call, ERC-20 balance 3 (one decision),
	// call_contract 1, rpc 1; the meta says what is left.
	steps := []struct {
		name  string
		args  map[string]any
		calls int64
	}{
		{"get_balance", map[string]any{"address": holder.Address}, 1},
		{"get_balance", map[string]any{"address": holder.Address, "token": usdt}, 3},
		{"call_contract", map[string]any{"to": usdt, "function": "balanceOf(address owner)", "args": []any{holder.Address}, "returns": "(uint256)"}, 1},
		{"rpc", map[string]any{"method": "eth_blockNumber"}, 1},
	}
	left := int64(8)
	var erc20 map[string]any
	for _, s := range steps {
		res := tool(t, cs, s.name, s.args, nil)
		if res.IsError {
			t.Fatalf("%s: %s", s.name, text(res))
		}
		left -= s.calls
		if got := res.Meta["tollgate/free-remaining"]; fmt.Sprint(got) != fmt.Sprint(left) || fmt.Sprint(res.Meta["tollgate/calls"]) != fmt.Sprint(s.calls) ||
			res.Meta["tollgate/payer"] != "free" {
			t.Fatalf("%s: meta %v, want %d free left after %d calls", s.name, res.Meta, left, s.calls)
		}
		if s.name == "get_balance" && s.args["token"] != nil {
			erc20 = structured(t, res)
		}
		if s.name == "call_contract" {
			dec := structured(t, res)["decoded"].([]any)
			if dec[0] != erc20["raw"] {
				t.Fatalf("balanceOf via call_contract %v, via get_balance %v", dec, erc20)
			}
		}
	}
	if erc20["symbol"] == nil || erc20["decimals"] == nil || erc20["formatted"] == nil {
		t.Fatalf("ERC-20 balance lacks symbol/decimals/formatted: %v", erc20)
	}
	// Free tools and wrong arguments cost nothing.
	for _, bad := range []struct {
		name string
		args map[string]any
	}{
		{"get_balance", map[string]any{"address": "0x1234"}},
		{"get_balance", map[string]any{"address": 7}},
		{"rpc", map[string]any{"method": "eth_blockNumber", "chain": "atlantis"}},
		{"rpc", map[string]any{"method": "not a method"}},
		{"rpc", map[string]any{"method": "testing_anything"}},
		{"get_logs", map[string]any{"from_block": "1", "to_block": "100000"}},
		{"call_contract", map[string]any{"to": usdt, "function": "balanceOf(address)", "args": []any{}}},
		{"get_block", map[string]any{"block": "yesterday"}},
	} {
		res := tool(t, cs, bad.name, bad.args, nil)
		if !res.IsError || text(res) == "" {
			t.Fatalf("%s %v: not a tool error: %s", bad.name, bad.args, text(res))
		}
	}
	if res := tool(t, cs, "chain_info", map[string]any{"chain": "polygon"}, nil); res.IsError ||
		fmt.Sprint(structured(t, res)["chains"].([]any)[0].(map[string]any)["chain_id"]) != "137" {
		t.Fatalf("chain_info: %s", text(res))
	}
	if n := freeLeft(); n != left {
		t.Fatalf("free calls left %d after free tools and wrong arguments, want %d", n, left)
	}
	// get_logs weighs 2: with 2 left it is served, then nothing is.
	if res := tool(t, cs, "get_logs", map[string]any{"from_block": "1", "to_block": "2"}, nil); res.IsError || fmt.Sprint(res.Meta["tollgate/free-remaining"]) != "0" {
		t.Fatalf("get_logs with 2 free left: %s %v", text(res), res.Meta)
	}
	// Past the free tier: the x402 payment-required tool result, whose
	// offer is /rpc's 402 offer.
	refused := tool(t, cs, "rpc", map[string]any{"method": "eth_blockNumber"}, nil)
	pr := structured(t, refused)
	if !refused.IsError || pr["x402Version"] != float64(2) || pr["resource"].(map[string]any)["url"] != "mcp://tool/rpc" || pr["onboarding"] == nil {
		t.Fatalf("past the free tier: %v %s", refused.IsError, text(refused))
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(refused)), &fromText); err != nil || !reflect.DeepEqual(fromText, pr) {
		t.Fatalf("the text content is not the PaymentRequired object: %v", err)
	}
	a := e.rpc(t, blockNumber)
	raw, _ := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	var http402 map[string]any
	if a.status != http.StatusPaymentRequired || json.Unmarshal(raw, &http402) != nil {
		t.Fatalf("/rpc past the free tier: %d %s", a.status, a.body)
	}
	if !reflect.DeepEqual(http402["accepts"], pr["accepts"]) {
		t.Fatalf("MCP offer %v\n/rpc offer %v", pr["accepts"], http402["accepts"])
	}

	// An API key: credits, each tool charged its calls to the unit.
	key, id := e.createKey(t)
	e.credit(t, id, 100*money.PricePerCall)
	ks := e.mcpSession(t, "X-API-Key: "+key)
	credits := 100 * money.PricePerCall
	for _, s := range append(steps, struct {
		name  string
		args  map[string]any
		calls int64
	}{"get_logs", map[string]any{"from_block": "1", "to_block": "2"}, 2}) {
		res := tool(t, ks, s.name, s.args, nil)
		if res.IsError {
			t.Fatalf("%s with a key: %s", s.name, text(res))
		}
		credits -= money.Units(s.calls) * money.PricePerCall
		if got := res.Meta["tollgate/credits-remaining"]; got != credits.Decimal() || res.Meta["tollgate/payer"] != "credits" {
			t.Fatalf("%s with a key: meta %v, want %s USDT left", s.name, res.Meta, credits.Decimal())
		}
	}
	if u := e.usage(t, key); fmt.Sprint(u["credits_remaining_usdt"]) != credits.Decimal() {
		t.Fatalf("usage says %v left, want %s", u["credits_remaining_usdt"], credits.Decimal())
	}
	acct := structured(t, tool(t, ks, "account", nil, nil))
	if fmt.Sprint(acct["api_key"].(map[string]any)["credits_remaining_usdt"]) != credits.Decimal() {
		t.Fatalf("account: %v", acct)
	}
	// The stream holds one debit per paid tool call, for the calls it made,
	// and their revenue.
	var debits, calls int64
	for _, ev := range e.stream(t) {
		if d, ok := ev.(*events.Debit); ok && d.Account == id {
			debits++
			calls += int64(d.Calls)
		}
	}
	if debits != 5 || calls != 8 {
		t.Fatalf("%d debits of %d calls for the key, want 5 of 8", debits, calls)
	}

	// Resources: the discovery document and llms.txt.
	for _, uri := range []string{"tollgate://service.json", "tollgate://llms.txt"} {
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "/mcp") {
			t.Fatalf("resource %s: %v %v", uri, err, rr)
		}
	}
}

// mcpPost sends one raw MCP HTTP request (a message or a batch) as a
// client would, at protocol version 2025-03-26 (the last that allows
// batches) unless version says otherwise.
func (e *meterEnv) mcpPost(t *testing.T, body, version string) answer {
	t.Helper()
	if version == "" {
		version = "2025-03-26"
	}
	return e.do(t, http.MethodPost, "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: "+version)
}

func callMsg(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// TestMCPHostileInputs: what a stranger can send /mcp gets the protocol's
// error or a tool error that says what is wrong — never a 500, a hang or
// a charge: a body over the limit, a thousand tool calls in one batch,
// unknown tools and methods, bodies that are not JSON, arguments of the
// wrong type, a payment in _meta that is not one; and a batch within the
// limit is answered call by call, each its own paid decision.
func TestMCPHostileInputs(t *testing.T) {
	e := startMetered(t, meterOpts{free: 20})
	freeLeft := func() string {
		t.Helper()
		a := e.mcpPost(t, callMsg(1, "account", `{}`), "")
		var m struct {
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if a.status != http.StatusOK || json.Unmarshal(a.body, &m) != nil {
			t.Fatalf("account: %d %s", a.status, a.body)
		}
		return fmt.Sprint(m.Result.StructuredContent["free_calls_left_today"])
	}
	debits := func() int {
		n := 0
		for _, ev := range e.stream(t) {
			if _, ok := ev.(*events.Debit); ok {
				n++
			}
		}
		return n
	}
	protocolErr := func(what string, a answer, status, code int) {
		t.Helper()
		var m struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if a.status != status || json.Unmarshal(a.body, &m) != nil || m.Error == nil || m.Error.Code != code || m.Error.Message == "" {
			t.Fatalf("%s: %d %s, want %d with JSON-RPC error %d", what, a.status, a.body, status, code)
		}
	}
	toolErr := func(what string, a answer, contains string) {
		t.Helper()
		var m struct {
			Result *struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if a.status != http.StatusOK || json.Unmarshal(a.body, &m) != nil || m.Result == nil || !m.Result.IsError ||
			len(m.Result.Content) == 0 || !strings.Contains(m.Result.Content[0].Text, contains) {
			t.Fatalf("%s: %d %s, want a tool error saying %q", what, a.status, a.body, contains)
		}
	}
	before, debits0 := freeLeft(), debits()

	// A browser's preflight is answered without a charge.
	if a := e.do(t, http.MethodOptions, "/mcp", ""); a.status != http.StatusNoContent || a.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(a.header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Fatalf("preflight: %d %v", a.status, a.header)
	}

	huge := callMsg(1, "rpc", `{"method":"eth_call","params":[{"data":"0x`+strings.Repeat("ab", 300<<10)+`"}]}`)
	protocolErr("a 600 KiB tool call", e.mcpPost(t, huge, ""), http.StatusRequestEntityTooLarge, -32600)

	calls := make([]string, 1000)
	for i := range calls {
		calls[i] = callMsg(i, "rpc", `{"method":"eth_blockNumber"}`)
	}
	protocolErr("a thousand tool calls in a batch", e.mcpPost(t, "["+strings.Join(calls, ",")+"]", ""), http.StatusBadRequest, -32600)
	protocolErr("an empty batch", e.mcpPost(t, "[]", ""), http.StatusBadRequest, -32600)
	protocolErr("not JSON", e.mcpPost(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`, ""), http.StatusBadRequest, -32700)
	protocolErr("an unknown tool", e.mcpPost(t, callMsg(1, "drain_wallet", `{}`), ""), http.StatusOK, -32602)
	protocolErr("an unknown MCP method", e.mcpPost(t, `{"jsonrpc":"2.0","id":1,"method":"tools/explode","params":{}}`, ""), http.StatusBadRequest, -32601)

	toolErr("a number for an address", e.mcpPost(t, callMsg(1, "get_balance", `{"address":12}`), ""), "address")
	toolErr("a missing required argument", e.mcpPost(t, callMsg(1, "get_receipt", `{}`), ""), "hash")
	toolErr("an unknown argument", e.mcpPost(t, callMsg(1, "rpc", `{"method":"eth_blockNumber","steal":true}`), ""), "steal")
	toolErr("params that are not an array", e.mcpPost(t, callMsg(1, "rpc", `{"method":"eth_blockNumber","params":"all"}`), ""), "params")
	toolErr("a denied method", e.mcpPost(t, callMsg(1, "rpc", `{"method":"admin_peers"}`), ""), "admin_peers")
	// A name the tool's pattern takes but JSON-RPC parsing refuses (over
	// 256 bytes): the call's -32600, never a served null result.
	toolErr("a method name over 256 bytes", e.mcpPost(t, callMsg(1, "rpc", `{"method":"eth_`+strings.Repeat("a", 300)+`"}`), ""), "-32600")
	toolErr("an unsupported chain", e.mcpPost(t, callMsg(1, "rpc", `{"method":"eth_blockNumber","chain":"99999"}`), ""), "unknown chain")
	toolErr("an integer too large", e.mcpPost(t, callMsg(1, "call_contract",
		`{"to":"0x0000000000000000000000000000000000000001","function":"f(uint8)","args":["256"]}`), ""), "does not fit uint8")
	toolErr("a tuple signature", e.mcpPost(t, callMsg(1, "call_contract",
		`{"to":"0x0000000000000000000000000000000000000001","function":"f((uint8,bool))","args":[[1,true]]}`), ""), "raw calldata")

	// A payment in _meta that is not an x402 payload is refused with the
	// payment-required result (the reason in its error), nothing served.
	bogus := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_blockNumber"},"_meta":{"x402/payment":{"x402Version":2,"payload":"nope"}}}}`)
	var pr struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if a := e.mcpPost(t, bogus, ""); a.status != http.StatusOK || json.Unmarshal(a.body, &pr) != nil || !pr.Result.IsError ||
		pr.Result.StructuredContent["x402Version"] != float64(2) || pr.Result.StructuredContent["error"] == "" {
		t.Fatalf("a bogus payment in _meta: %d %s", a.status, a.body)
	}

	if after := freeLeft(); after != before || debits() != debits0 {
		t.Fatalf("hostile inputs were charged: %s free calls left before, %s after; %d debits before, %d after", before, after, debits0, debits())
	}

	// A batch within the limit (2025-03-26) is answered call by call: each
	// tool call its own decision, so 3 calls draw 3 free calls.
	a := e.mcpPost(t, "["+callMsg(1, "rpc", `{"method":"eth_blockNumber"}`)+","+callMsg(2, "rpc", `{"method":"eth_chainId"}`)+","+
		callMsg(3, "rpc", `{"method":"eth_blockNumber"}`)+"]", "")
	var batch []map[string]any
	if a.status != http.StatusOK || json.Unmarshal(a.body, &batch) != nil || len(batch) != 3 {
		t.Fatalf("a batch of 3 tool calls: %d %s", a.status, a.body)
	}
	// eth_chainId is the chain's own fact, answered free (as on /rpc).
	if after := freeLeft(); after != fmt.Sprint(mustInt(t, before)-2) {
		t.Fatalf("a batch of 3 tool calls (one free): %s free calls left, want %d", after, mustInt(t, before)-2)
	}
	// Revisions from 2025-06-18 on have no batches: the SDK refuses them.
	if a := e.mcpPost(t, "["+callMsg(1, "rpc", `{"method":"eth_blockNumber"}`)+"]", "2025-06-18"); a.status != http.StatusBadRequest {
		t.Fatalf("a batch at 2025-06-18: %d %s", a.status, a.body)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not an integer", s)
	}
	return n
}
