package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestChargedErrorsRecodedEverywhere: the re-coding TestViemChargedAnswerOnce
// shows for a single call over HTTP holds for every way a call is charged:
// each item of an HTTP batch, a socket message (single and batch) and an
// MCP rpc tool call. A provider's charged -32005 is -32040 and its charged
// -32603 is -32042 (data.charged, data.upstream_code), an answer over
// max_response_bytes is -32040 inside a batch too, the batch answer is HTTP
// 200, and none of them carries a code a default client retries.
func TestChargedErrorsRecodedEverywhere(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, chain137: "method eth_getBlockByNumber max_response_bytes 200"})
	e.alpha.SetMode(faultproxy.AskForLess)
	e.beta.SetMode(faultproxy.AskForLess)
	secret, id := e.createKey(t)
	e.credit(t, id, 100*money.PricePerCall)

	type item struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Charged      bool `json:"charged"`
				UpstreamCode *int `json:"upstream_code"`
			} `json:"data"`
		} `json:"error"`
	}
	check := func(where string, it item, code, upstream int) {
		t.Helper()
		if it.Error == nil || it.Error.Code != code || !it.Error.Data.Charged || jsonrpc.RetriedCodes[it.Error.Code] {
			t.Errorf("%s (id %s): %+v, want code %d, charged", where, it.ID, it.Error, code)
			return
		}
		if upstream != 0 && (it.Error.Data.UpstreamCode == nil || *it.Error.Data.UpstreamCode != upstream) {
			t.Errorf("%s (id %s): upstream_code %v, want %d", where, it.ID, it.Error.Data.UpstreamCode, upstream)
		}
	}
	const logs = `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2"}]}`
	const call = `{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x"},"latest"]}`
	const block = `{"jsonrpc":"2.0","id":3,"method":"eth_getBlockByNumber","params":["0x1",true]}`
	const chainID = `{"jsonrpc":"2.0","id":4,"method":"eth_chainId"}`
	batch := func(where string, body []byte, status int) {
		t.Helper()
		var items []item
		if status != http.StatusOK || json.Unmarshal(body, &items) != nil || len(items) != 2 {
			t.Fatalf("%s: %d %s", where, status, body)
		}
		check(where+" batch item 1", items[0], jsonrpc.CodeAnswerTooLarge, -32005)
		check(where+" batch item 2", items[1], jsonrpc.CodeChargedUpstreamError, -32603)
	}

	// HTTP: a batch of two charged provider errors, and a batch holding an
	// oversized answer next to a free local one.
	a := e.rpc(t, "["+logs+","+call+"]", "X-API-Key: "+secret)
	batch("HTTP", a.body, a.status)
	a = e.rpc(t, "["+block+","+chainID+"]", "X-API-Key: "+secret)
	var items []item
	if a.status != http.StatusOK || json.Unmarshal(a.body, &items) != nil || len(items) != 2 {
		t.Fatalf("HTTP block batch: %d %s", a.status, a.body)
	}
	check("HTTP batch oversized block", items[0], jsonrpc.CodeAnswerTooLarge, 0)

	// A socket: one message, then a batch.
	ws := e.dial(t, "/rpc", "X-API-Key: "+secret)
	var one item
	if err := json.Unmarshal(ws.call(call), &one); err != nil {
		t.Fatal(err)
	}
	check("socket", one, jsonrpc.CodeChargedUpstreamError, -32603)
	batch("socket", ws.call("["+logs+","+call+"]"), http.StatusOK)

	// MCP's rpc tool.
	var overMCP struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error json.RawMessage `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	m := e.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x"},"latest"]}}}`,
		"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26", "X-API-Key: "+secret)
	if json.Unmarshal(m.body, &overMCP) != nil || !overMCP.Result.IsError {
		t.Fatalf("MCP: %d %s", m.status, m.body)
	}
	var mcpItem item
	if json.Unmarshal([]byte(`{"id":"mcp","error":`+string(overMCP.Result.StructuredContent.Error)+`}`), &mcpItem) != nil {
		t.Fatalf("MCP: %s", m.body)
	}
	check("MCP", mcpItem, jsonrpc.CodeChargedUpstreamError, -32603)

	// Charged once each: 2 + 1 (eth_chainId is free) + 1 + 2 + 1 calls.
	u := e.usage(t, secret)
	if got, want := fmt.Sprint(u["credits_remaining_usdt"]), (93 * money.PricePerCall).Decimal(); got != want {
		t.Errorf("credits left %v, want %s (seven calls charged once)", got, want)
	}
}
