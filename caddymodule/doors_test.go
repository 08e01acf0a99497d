package caddymodule_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// x402Accept is the part of an x402 offer (accepts[0]) that says what to pay
// and to whom: v1 names the amount maxAmountRequired, v2 amount.
type x402Accept struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	MaxAmountRequired string `json:"maxAmountRequired"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
}

type x402Offer struct {
	X402Version int             `json:"x402Version"`
	Error       string          `json:"error"`
	Accepts     []x402Accept    `json:"accepts"`
	Onboarding  json.RawMessage `json:"onboarding"`
}

// mcpToolCall is the MCP tools/call of the rpc tool for eth_blockNumber.
const mcpToolCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_blockNumber"}}}`

// TestThreeDoorsRenderOneRefusal: the doors render the same typed refusal
// (payment.Refusal), so for the same state POST /rpc, a WebSocket message and
// an MCP tool call say the same thing. A caller with no way to pay gets the
// same x402 offer on all three — the scheme, network, amount, asset and
// payTo of the 402's PAYMENT-REQUIRED header (v2) are MCP's PaymentRequired
// tool result's, those of its body (v1) are the socket error's
// data.payment_required, and v1 and v2 agree — with the same reason; a
// rate-limited key gets one Retry-After, as the header, data.retry_after
// over HTTP, the socket and MCP.
func TestThreeDoorsRenderOneRefusal(t *testing.T) {
	t.Run("402 offer", func(t *testing.T) {
		e := startMetered(t, meterOpts{free: -1})
		a := e.rpc(t, blockNumber)
		if a.status != http.StatusPaymentRequired {
			t.Fatalf("HTTP: %d %s", a.status, a.body)
		}
		var httpV1, httpV2 x402Offer
		if err := json.Unmarshal(a.body, &httpV1); err != nil || httpV1.X402Version != 1 || len(httpV1.Accepts) == 0 {
			t.Fatalf("HTTP body: %v %s", err, a.body)
		}
		raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
		if err != nil || json.Unmarshal(raw, &httpV2) != nil || httpV2.X402Version != 2 || len(httpV2.Accepts) == 0 {
			t.Fatalf("HTTP PAYMENT-REQUIRED: %v %s", err, raw)
		}

		var overWS struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					HTTPStatus      int       `json:"http_status"`
					PaymentRequired x402Offer `json:"payment_required"`
				} `json:"data"`
			} `json:"error"`
		}
		ws := e.dial(t, "/rpc").call(blockNumber)
		if err := json.Unmarshal(ws, &overWS); err != nil || overWS.Error.Data.HTTPStatus != http.StatusPaymentRequired ||
			len(overWS.Error.Data.PaymentRequired.Accepts) == 0 {
			t.Fatalf("socket: %v %s", err, ws)
		}
		if want := "Payment required: " + httpV1.Error; overWS.Error.Message != want {
			t.Fatalf("socket message %q, want %q", overWS.Error.Message, want)
		}

		var overMCP struct {
			Result struct {
				IsError           bool      `json:"isError"`
				StructuredContent x402Offer `json:"structuredContent"`
			} `json:"result"`
		}
		m := e.do(t, http.MethodPost, "/mcp", mcpToolCall, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26")
		if err := json.Unmarshal(m.body, &overMCP); err != nil || !overMCP.Result.IsError || overMCP.Result.StructuredContent.X402Version != 2 ||
			len(overMCP.Result.StructuredContent.Accepts) == 0 {
			t.Fatalf("MCP: %d %v %s", m.status, err, m.body)
		}

		wsV1, mcpV2 := overWS.Error.Data.PaymentRequired, overMCP.Result.StructuredContent
		if wsV1.Error != httpV1.Error || mcpV2.Error != httpV2.Error || httpV2.Error != httpV1.Error {
			t.Fatalf("reasons differ: HTTP %q / %q, socket %q, MCP %q", httpV1.Error, httpV2.Error, wsV1.Error, mcpV2.Error)
		}
		if got, want := wsV1.Accepts[0], httpV1.Accepts[0]; got != want {
			t.Fatalf("socket offer %+v, HTTP body's %+v", got, want)
		}
		if got, want := mcpV2.Accepts[0], httpV2.Accepts[0]; got != want {
			t.Fatalf("MCP offer %+v, HTTP header's %+v", got, want)
		}
		v1, v2 := httpV1.Accepts[0], httpV2.Accepts[0]
		if v1.MaxAmountRequired == "" || v1.MaxAmountRequired != v2.Amount || v1.Asset != v2.Asset || v1.PayTo != v2.PayTo || v1.Scheme != v2.Scheme {
			t.Fatalf("v1 offer %+v and v2 offer %+v differ", v1, v2)
		}
		if string(wsV1.Onboarding) != string(httpV1.Onboarding) || len(httpV1.Onboarding) < 2 {
			t.Fatalf("socket onboarding differs from HTTP's")
		}
	})

	// The offer names the same resource at every door for the same path:
	// the scheme and Host the request came in on plus its path, never its
	// query (a socket's ?key= is a credential). POST /rpc/137 and a socket
	// opened on /rpc/137 name it in the v1 offer's accepts[0].resource (the
	// socket's data.payment_required), v2's resource.url and the sign-in
	// challenge's uri; MCP's tool result, whose resource.url is the tool's
	// (x402's MCP binding), names the chain's path in its sign-in challenge.
	t.Run("402 resource", func(t *testing.T) {
		e := startMetered(t, meterOpts{free: -1})
		type v1Offer struct {
			Accepts []struct {
				Resource string `json:"resource"`
			} `json:"accepts"`
		}
		type v2Offer struct {
			Resource struct {
				URL string `json:"url"`
			} `json:"resource"`
			Extensions map[string]struct {
				Info struct {
					Domain    string   `json:"domain"`
					URI       string   `json:"uri"`
					Resources []string `json:"resources"`
				} `json:"info"`
			} `json:"extensions"`
		}
		want := e.gw.URL() + "/rpc/137"
		a := e.do(t, http.MethodPost, "/rpc/137?probe=1", blockNumber)
		var httpV1 v1Offer
		var httpV2 v2Offer
		raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
		if a.status != http.StatusPaymentRequired || json.Unmarshal(a.body, &httpV1) != nil || len(httpV1.Accepts) == 0 ||
			err != nil || json.Unmarshal(raw, &httpV2) != nil {
			t.Fatalf("HTTP: %d %s", a.status, a.body)
		}
		siwx := httpV2.Extensions["sign-in-with-x"].Info
		if httpV1.Accepts[0].Resource != want || httpV2.Resource.URL != want || siwx.URI != want ||
			len(siwx.Resources) != 1 || siwx.Resources[0] != want || "http://"+siwx.Domain != e.gw.URL() {
			t.Fatalf("HTTP offer names %q / %q / %+v, want %q", httpV1.Accepts[0].Resource, httpV2.Resource.URL, siwx, want)
		}
		var overWS struct {
			Error struct {
				Data struct {
					PaymentRequired v1Offer `json:"payment_required"`
				} `json:"data"`
			} `json:"error"`
		}
		ws := e.dial(t, "/rpc/137?key=&probe=1").call(blockNumber)
		if json.Unmarshal(ws, &overWS) != nil || len(overWS.Error.Data.PaymentRequired.Accepts) == 0 ||
			overWS.Error.Data.PaymentRequired.Accepts[0].Resource != want {
			t.Fatalf("socket offer: %s, want resource %q", ws, want)
		}
		var overMCP struct {
			Result struct {
				StructuredContent v2Offer `json:"structuredContent"`
			} `json:"result"`
		}
		m := e.do(t, http.MethodPost, "/mcp", mcpToolCall, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26")
		if json.Unmarshal(m.body, &overMCP) != nil {
			t.Fatalf("MCP: %d %s", m.status, m.body)
		}
		mcpSIWX := overMCP.Result.StructuredContent.Extensions["sign-in-with-x"].Info
		if mcpSIWX.URI != want || mcpSIWX.Domain != siwx.Domain || overMCP.Result.StructuredContent.Resource.URL != "mcp://tool/rpc" {
			t.Fatalf("MCP offer: %s, want the sign-in for %q", m.body, want)
		}
	})

	t.Run("retry after", func(t *testing.T) {
		e := startMetered(t, meterOpts{free: -1, keyRate: "1 1m 1"})
		secret, id := e.createKey(t)
		e.credit(t, id, 10_000)
		if a := e.rpc(t, blockNumber, "X-API-Key: "+secret); a.status != http.StatusOK {
			t.Fatalf("the one call the key may make: %d %s", a.status, a.body)
		}
		type data struct {
			RetryAfter int `json:"retry_after"`
			HTTPStatus int `json:"http_status"`
		}
		type rpcErr struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    data   `json:"data"`
		}
		start := time.Now()
		a := e.rpc(t, blockNumber, "X-API-Key: "+secret)
		var overHTTP struct{ Error rpcErr }
		if a.status != http.StatusTooManyRequests || json.Unmarshal(a.body, &overHTTP) != nil {
			t.Fatalf("HTTP: %d %s", a.status, a.body)
		}
		header, err := strconv.Atoi(a.header.Get("Retry-After"))
		if err != nil || header != overHTTP.Error.Data.RetryAfter || header < 1 || header > 60 {
			t.Fatalf("HTTP: Retry-After %q, data.retry_after %d", a.header.Get("Retry-After"), overHTTP.Error.Data.RetryAfter)
		}
		var overWS struct{ Error rpcErr }
		ws := e.dial(t, "/rpc", "X-API-Key: "+secret).call(blockNumber)
		if json.Unmarshal(ws, &overWS) != nil || overWS.Error.Data.HTTPStatus != http.StatusTooManyRequests {
			t.Fatalf("socket: %s", ws)
		}
		var overMCP struct {
			Result struct {
				StructuredContent struct{ Error rpcErr } `json:"structuredContent"`
			} `json:"result"`
		}
		m := e.do(t, http.MethodPost, "/mcp", mcpToolCall, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26", "X-API-Key: "+secret)
		if json.Unmarshal(m.body, &overMCP) != nil || overMCP.Result.StructuredContent.Error.Data.HTTPStatus != http.StatusTooManyRequests {
			t.Fatalf("MCP: %d %s", m.status, m.body)
		}
		// Each door's call is its own decision, a moment later: the same
		// bucket's wait, less the seconds that passed between the calls.
		passed := int(time.Since(start).Seconds()) + 1
		for what, e := range map[string]rpcErr{"socket": overWS.Error, "MCP": overMCP.Result.StructuredContent.Error} {
			if e.Code != overHTTP.Error.Code || e.Message != overHTTP.Error.Message {
				t.Fatalf("%s: %d %q, HTTP %d %q", what, e.Code, e.Message, overHTTP.Error.Code, overHTTP.Error.Message)
			}
			if r := e.Data.RetryAfter; r > header || r < header-passed || r < 1 {
				t.Fatalf("%s: retry_after %d, HTTP's %d (%d s later)", what, r, header, passed)
			}
		}
	})
}
