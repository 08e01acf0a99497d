package caddymodule_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// mcpResult is the part of an MCP tools/call answer the door tests read.
type mcpResult struct {
	Result struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Meta              map[string]any  `json:"_meta"`
	} `json:"result"`
}

// mcpRPC calls the rpc tool with args (its arguments object) on /mcp with
// headers (and _meta when meta is not empty).
func (e *meterEnv) mcpRPC(t *testing.T, args, meta string, headers ...string) (answer, mcpResult) {
	t.Helper()
	params := `{"name":"rpc","arguments":` + args + `}`
	if meta != "" {
		params = `{"name":"rpc","arguments":` + args + `,"_meta":` + meta + `}`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	h := append([]string{"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26"}, headers...)
	a := e.do(t, http.MethodPost, "/mcp", body, h...)
	var r mcpResult
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("MCP answer: %d %v %s", a.status, err, a.body)
	}
	return a, r
}

// TestEveryDoorChargesTheSamePayer: each door reads who asks once
// (payment.CallerOf on the POST, the handshake, the tool call's request),
// and the same credentials name the same payer at every door. Behind a
// trusted proxy one forwarded address has one free allowance (5 calls)
// across POST, a socket and MCP; an x402 payment header on a handshake is
// dropped (the socket's calls are the address's free calls, not a refused
// payment); once the allowance is spent, every door refuses with 402 and
// another address still has its own. A key pays wherever it is sent — a
// POST's X-API-Key, a handshake's header (winning over a different key in
// its query) or its ?key=, MCP's header (winning over a _meta payment, as
// a POST's key wins over a payment header) — exactly 30 units per paid
// call, and a POST's ?key= is not read (POST takes the header only).
func TestEveryDoorChargesTheSamePayer(t *testing.T) {
	e := startMetered(t, meterOpts{trusted: true, free: 5, subnet: 100})
	const a, b = "X-Forwarded-For: 198.51.100.7", "X-Forwarded-For: 198.51.100.8"
	ok := func(what string, got []byte) {
		t.Helper()
		if r := decodeOne(t, got); r.Error != nil || len(r.Result) < 4 {
			t.Fatalf("%s: %s", what, got)
		}
	}
	refused402 := func(what string, got []byte) {
		t.Helper()
		if r := decodeOne(t, got); r.Error == nil || r.Error.Code != 402 {
			t.Fatalf("%s: want the 402 refusal, got %s", what, got)
		}
	}

	// The address's 5 free calls, spent at three doors.
	if r := e.rpc(t, blockNumber, a); r.status != http.StatusOK || r.header.Get("X-Tollgate-Free-Remaining") != "4" {
		t.Fatalf("POST 1: %d free-remaining %q %s", r.status, r.header.Get("X-Tollgate-Free-Remaining"), r.body)
	}
	junkPayment := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":"not a payment"}`))
	ws := e.dial(t, "/rpc/137", a, "PAYMENT-SIGNATURE: "+junkPayment, "X-PAYMENT: "+junkPayment)
	ok("socket call 1 (payment header on the handshake is dropped)", ws.call(blockNumber))
	ok("socket call 2", ws.call(blockNumber))
	if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, "", a); m.Result.IsError || fmt.Sprint(m.Result.Meta["tollgate/free-remaining"]) != "1" {
		t.Fatalf("MCP: %d %s", r.status, r.body)
	}
	if r := e.rpc(t, blockNumber, a); r.status != http.StatusOK || r.header.Get("X-Tollgate-Free-Remaining") != "0" {
		t.Fatalf("POST 2: %d free-remaining %q %s", r.status, r.header.Get("X-Tollgate-Free-Remaining"), r.body)
	}
	// Spent at every door.
	refused402("socket call 3", ws.call(blockNumber))
	if r := e.rpc(t, blockNumber, a); r.status != http.StatusPaymentRequired {
		t.Fatalf("POST 3: %d %s", r.status, r.body)
	}
	if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, "", a); !m.Result.IsError || !strings.Contains(string(m.Result.StructuredContent), `"x402Version":2`) {
		t.Fatalf("MCP after the allowance: %d %s", r.status, r.body)
	}
	// Another forwarded address has its own allowance, at every door.
	if r := e.rpc(t, blockNumber, b); r.status != http.StatusOK || r.header.Get("X-Tollgate-Free-Remaining") != "4" {
		t.Fatalf("other address, POST: %d %q", r.status, r.header.Get("X-Tollgate-Free-Remaining"))
	}
	ok("other address, socket", e.dial(t, "/rpc/137", b).call(blockNumber))

	// A key pays wherever it is sent, from the spent address.
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000)
	other, otherID := e.createKey(t)
	e.credit(t, otherID, 10_000)
	paid := 0
	if r := e.rpc(t, blockNumber, a, "X-API-Key: "+secret); r.status != http.StatusOK || r.header.Get("X-Tollgate-Payer") != "credits" {
		t.Fatalf("POST with the key: %d %s %s", r.status, r.header.Get("X-Tollgate-Payer"), r.body)
	}
	paid++
	if r := e.do(t, http.MethodPost, "/rpc/137?key="+secret, blockNumber, a); r.status != http.StatusPaymentRequired {
		t.Fatalf("POST with ?key= only: %d %s (POST reads the header only)", r.status, r.body)
	}
	ok("socket, header key over another query key", e.dial(t, "/rpc/137?key="+other, a, "X-API-Key: "+secret).call(blockNumber))
	paid++
	ok("socket, ?key=", e.dial(t, "/rpc/137?key="+secret, a).call(blockNumber))
	paid++
	junkMeta := `{"x402/payment":{"x402Version":2,"payload":"not a payment"}}`
	if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, junkMeta, a, "X-API-Key: "+secret); m.Result.IsError || m.Result.Meta["tollgate/payer"] != "credits" {
		t.Fatalf("MCP with the key and a _meta payment: %d %s", r.status, r.body)
	}
	paid++
	if r := e.rpc(t, blockNumber, a, "X-API-Key: "+secret, "PAYMENT-SIGNATURE: "+junkPayment); r.status != http.StatusOK {
		t.Fatalf("POST with the key and a payment header: %d %s", r.status, r.body)
	}
	paid++
	if c, want := credits(t, e, secret), money.Units(10_000-paid*30).Decimal(); c != want {
		t.Fatalf("key credits after %d paid calls at three doors: %s, want %s", paid, c, want)
	}
	if c, want := credits(t, e, other), money.Units(10_000).Decimal(); c != want {
		t.Fatalf("the handshake's query key was charged: %s, want %s", c, want)
	}
}

// TestEveryDoorRefundsAnUnavailableCall: when no upstream can answer a
// call (both providers fail every call while their health probes pass),
// the core's Unavailable outcome is a 503 at every door — POST's status,
// the socket error's data.http_status, MCP's refused tool result — and the
// key that was booked for it is refunded at every door.
func TestEveryDoorRefundsAnUnavailableCall(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, id := e.createKey(t)
	e.credit(t, id, 1_000)
	key := "X-API-Key: " + secret
	ws := e.dial(t, "/rpc", key)
	e.alpha.SetMode(faultproxy.Fail502Calls)
	e.beta.SetMode(faultproxy.Fail502Calls)

	// A balance no one asked for before: not in the edge cache.
	const addr = "0x00000000000000000000000000000000000d00a5"
	balance := `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["` + addr + `","latest"]}`
	if r := e.rpc(t, balance, key); r.status != http.StatusServiceUnavailable {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	got := decodeOne(t, ws.call(balance))
	if got.Error == nil || !strings.Contains(string(got.Error.Data), `"http_status":503`) || string(got.ID) != "7" {
		t.Fatalf("socket: %s", mustJSON(got))
	}
	r, m := e.mcpRPC(t, `{"method":"eth_getBalance","params":["`+addr+`","latest"]}`, "", key)
	if !m.Result.IsError || !strings.Contains(string(m.Result.StructuredContent), `"http_status":503`) {
		t.Fatalf("MCP: %d %s", r.status, r.body)
	}
	if c, want := credits(t, e, secret), money.Units(1_000).Decimal(); c != want {
		t.Fatalf("credits after three unavailable calls: %s, want %s (each refunded)", c, want)
	}
	// The same key is charged again once an upstream answers.
	e.alpha.SetMode(faultproxy.Pass)
	e.beta.SetMode(faultproxy.Pass)
	e.waitHealthy(t)
	if r := e.rpc(t, balance, key); r.status != http.StatusOK {
		t.Fatalf("POST after recovery: %d %s", r.status, r.body)
	}
	if c, want := credits(t, e, secret), money.Units(1_000-30).Decimal(); c != want {
		t.Fatalf("credits after one served call: %s, want %s", c, want)
	}
}

// TestInFlightCapSharedByEveryDoor: the per-address in-flight cap
// (ip_concurrency 2) counts a socket message and an MCP tool call the way
// it counts a POST — the core takes the in-process doors' slots, the POST
// door's entry its own — so with a socket call and an MCP call in flight
// (both providers hold every call until the request deadline, 5 s) a POST
// is refused 429 with Retry-After, and a further socket message and MCP
// call get the same refusal (-32005, http_status 429). Nothing refused is
// charged and the two held calls, unanswered at the deadline, are refunded:
// the key ends where it started.
func TestInFlightCapSharedByEveryDoor(t *testing.T) {
	// A held call waits for the request deadline, not the per-attempt one.
	e := startMetered(t, meterOpts{free: -1, conc: "2", extra: "upstream_timeout 20s"})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000)
	key := "X-API-Key: " + secret
	ws := e.dial(t, "/rpc", key)
	e.alpha.SetMode(faultproxy.HangCalls)
	e.beta.SetMode(faultproxy.HangCalls)
	balanceOf := func(id int, a byte) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000001%02x","latest"]}`, id, a)
	}
	before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
	start := time.Now()
	ws.send(balanceOf(8, 1))
	var wg sync.WaitGroup
	var heldMCP mcpResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, heldMCP = e.mcpRPC(t, `{"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000102","latest"]}`, "", key)
	}()
	deadline := time.Now().Add(readyWithin)
	for e.alpha.Calls("eth_getBalance")+e.beta.Calls("eth_getBalance") < before+2 {
		if time.Now().After(deadline) {
			t.Fatal("the socket and MCP calls never reached an upstream")
		}
		time.Sleep(5 * time.Millisecond) // polling the proxies' counters
	}
	if r := e.rpc(t, balanceOf(9, 3), key); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.body), "-32005") {
		t.Fatalf("POST beside a socket and an MCP call in flight: %d %s", r.status, r.body)
	}
	ws.send(balanceOf(10, 4))
	busy := decodeOne(t, ws.next())
	if string(busy.ID) != "10" || busy.Error == nil || busy.Error.Code != -32005 || !strings.Contains(string(busy.Error.Data), `"http_status":429`) {
		t.Fatalf("socket message over the cap: %s", mustJSON(busy))
	}
	_, m := e.mcpRPC(t, `{"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000105","latest"]}`, "", key)
	if !m.Result.IsError || !strings.Contains(string(m.Result.StructuredContent), `"http_status":429`) {
		t.Fatalf("MCP call over the cap: %s", mustJSON(m))
	}
	if held := decodeOne(t, ws.next()); string(held.ID) != "8" || held.Error == nil || !strings.Contains(string(held.Error.Data), `"http_status":503`) {
		t.Fatalf("held socket call: %s", mustJSON(held))
	}
	wg.Wait()
	if !heldMCP.Result.IsError || !strings.Contains(string(heldMCP.Result.StructuredContent), `"http_status":503`) {
		t.Fatalf("held MCP call: %s", mustJSON(heldMCP))
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Fatalf("the held calls ended after %v, before the 5 s request deadline", took)
	}
	if c, want := credits(t, e, secret), money.Units(10_000).Decimal(); c != want {
		t.Fatalf("credits: %s, want %s (refused calls uncharged, held ones refunded)", c, want)
	}
	// The slots came back: a call is served once the providers answer.
	e.alpha.SetMode(faultproxy.Pass)
	e.beta.SetMode(faultproxy.Pass)
	if r := e.rpc(t, balanceOf(11, 6), key); r.status != http.StatusOK {
		t.Fatalf("after the held calls: %d %s", r.status, r.body)
	}
}

// TestMCPMetaSaysWhatWasCharged: a paid tool result's _meta says what was
// charged (tollgate/calls, docs/callers.md), which is the core's
// Outcome.Charged — booked minus refunded — not the tool's calls at their
// weights: eth_chainId, answered by the gateway itself for free, and a
// method name the parser refuses (over 256 bytes; neither served nor
// charged, and no node answered it) charge nothing, as the key's credits
// show, so their results say no tollgate/calls (as the free tools' do),
// and the refused one does not say a node answered; a paid call says its
// weight (1).
func TestMCPMetaSaysWhatWasCharged(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000)
	key := "X-API-Key: " + secret
	for _, c := range []struct {
		what, args string
		calls      int
		units      money.Units
	}{
		{"eth_chainId (local, free)", `{"method":"eth_chainId","params":[]}`, 0, 0},
		{"a method name over 256 bytes", `{"method":"eth_` + strings.Repeat("x", 300) + `","params":[]}`, 0, 0},
		{"eth_blockNumber (paid)", `{"method":"eth_blockNumber","params":[]}`, 1, 30},
	} {
		before := credits(t, e, secret)
		r, m := e.mcpRPC(t, c.args, "", key)
		after := credits(t, e, secret)
		var b, a float64
		fmt.Sscan(before, &b)
		fmt.Sscan(after, &a)
		if got := money.Units(math.Round((b - a) * 1e6)); got != c.units { // credits are USDT, 6 decimals
			t.Fatalf("%s: charged %d units, want %d (%s → %s)", c.what, got, c.units, before, after)
		}
		got, said := m.Result.Meta["tollgate/calls"]
		if c.calls == 0 && said || c.calls > 0 && fmt.Sprint(got) != fmt.Sprint(c.calls) {
			t.Fatalf("%s: _meta tollgate/calls %v, want %d (what was charged; absent when nothing was): %s", c.what, got, c.calls, r.body)
		}
		if c.calls == 0 && strings.Contains(string(r.body), "the node answered") {
			t.Fatalf("%s: the result says a node answered: %s", c.what, r.body)
		}
	}
}

// TestHangUpCancelsAndRefundsAtEveryDoor: a caller that goes away while
// its call waits on an upstream (both providers hold every call) ends the
// upstream work and gets its call back at every door — a POST whose
// client cancels, an MCP tool call whose HTTP request is cancelled, a
// socket that closes — long before any deadline could (request_timeout
// 60 s, upstream_timeout 20 s): the key is refunded within 15 s.
func TestHangUpCancelsAndRefundsAtEveryDoor(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, extra: "upstream_timeout 20s\nrequest_timeout 60s"})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000)
	key := "X-API-Key: " + secret
	e.alpha.SetMode(faultproxy.HangCalls)
	e.beta.SetMode(faultproxy.HangCalls)
	full := money.Units(10_000).Decimal()
	post := func(path, body string, extra ...string) func() {
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.gw.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", secret)
		for _, h := range extra {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		return func() { cancel(); <-done }
	}
	for i, door := range []string{"POST", "MCP", "socket"} {
		addr := fmt.Sprintf("0x00000000000000000000000000000000000002%02x", i)
		call := `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["` + addr + `","latest"]}`
		before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
		var hangUp func()
		switch door {
		case "POST":
			hangUp = post("/rpc", call)
		case "MCP":
			hangUp = post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_getBalance","params":["`+addr+`","latest"]}}}`,
				"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26")
		case "socket":
			ws := e.dial(t, "/rpc", key)
			ws.send(call)
			hangUp = func() { ws.ws.Close() }
		}
		deadline := time.Now().Add(readyWithin)
		for e.alpha.Calls("eth_getBalance")+e.beta.Calls("eth_getBalance") < before+1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the call never reached an upstream", door)
			}
			time.Sleep(5 * time.Millisecond) // polling the proxies' counters
		}
		if c := credits(t, e, secret); c == full {
			t.Fatalf("%s: the held call is not booked (credits %s)", door, c)
		}
		hungUp := time.Now()
		hangUp()
		for credits(t, e, secret) != full {
			if time.Since(hungUp) > 15*time.Second {
				t.Fatalf("%s: not refunded 15 s after the caller went away (credits %s)", door, credits(t, e, secret))
			}
			time.Sleep(20 * time.Millisecond) // polling the key's balance
		}
	}
}
