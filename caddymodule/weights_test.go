package caddymodule_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const fullBlock = `{"jsonrpc":"2.0","id":3,"method":"eth_getBlockByNumber","params":["0x1",true]}`

// TestWeightedMethods: an operator's `method … weight N` makes a call of
// that method cost N times the flat price and count as N calls in the free
// tier; the weights are shown in the 402, service.json, llms.txt and a
// key's usage; a refund gives back exactly what the failed calls were
// booked at; and `max_response_bytes` replaces a larger answer with a
// -32040 naming the cap (charged: the upstream did the work; not -32005,
// which default clients retry).
func TestWeightedMethods(t *testing.T) {
	e := startMetered(t, meterOpts{free: 12, chain137: "method eth_getBalance weight 5\n" +
		"method eth_getBlockByNumber max_response_bytes 200"})
	price := money.PricePerCall

	// The free tier counts units: 2 × eth_getBalance = 10 of 12, then a
	// third (5 > 2 left) is refused while an unweighted call still fits.
	for i := range 2 {
		a := e.rpc(t, getBalance)
		if a.status != http.StatusOK {
			t.Fatalf("free weighted call %d: %d %s", i, a.status, a.body)
		}
		if want := fmt.Sprint(12 - 5*(i+1)); a.header.Get("X-Tollgate-Free-Remaining") != want {
			t.Fatalf("free weighted call %d: %s left, want %s", i, a.header.Get("X-Tollgate-Free-Remaining"), want)
		}
	}
	refused := e.rpc(t, getBalance)
	if refused.status != http.StatusPaymentRequired {
		t.Fatalf("a 5-unit call with 2 free units left: %d %s", refused.status, refused.body)
	}
	// The 402 names the weights where a program looks for the price.
	price402, _ := refused.json(t)["onboarding"].(map[string]any)["price"].(map[string]any)
	if w := fmt.Sprint(price402["method_weights"]); w != "map[137:map[eth_getBalance:5]]" {
		t.Fatalf("402 price.method_weights = %s; price: %v", w, price402)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "1" {
		t.Fatalf("a 1-unit call with 2 left: %d %s (left %q)", a.status, a.body, a.header.Get("X-Tollgate-Free-Remaining"))
	}

	// Credits: each call costs its weight times the price, to the unit.
	key, id := e.createKey(t)
	e.credit(t, id, 100*price)
	left := 100 * price
	charge := func(body string, units money.Units) {
		t.Helper()
		a := e.rpc(t, body, "X-API-Key: "+key)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", body, a.status, a.body)
		}
		left -= units * price
		if got := a.header.Get("X-Tollgate-Credits-Remaining"); got != left.Decimal() {
			t.Fatalf("%s: %s USDT left, want %s (charged %d calls' worth)", body, got, left.Decimal(), units)
		}
	}
	charge(getBalance, 5)
	charge(`[`+getBalance+`,`+blockNumber+`]`, 6)
	charge(blockNumber, 1)

	// An answer over the method's cap: a -32040 naming the cap, charged
	// like a served call (one unit: the method is not weighted).
	a := e.rpc(t, fullBlock, "X-API-Key: "+key)
	errObj, _ := a.json(t)["error"].(map[string]any)
	if a.status != http.StatusOK || errObj == nil || errObj["code"] != float64(-32040) ||
		!strings.Contains(fmt.Sprint(errObj["message"]), "at most 200 bytes per eth_getBlockByNumber call") {
		t.Fatalf("oversized answer: %d %s", a.status, a.body)
	}
	left -= price
	if got := a.header.Get("X-Tollgate-Credits-Remaining"); got != left.Decimal() {
		t.Fatalf("oversized answer: %s USDT left, want %s", got, left.Decimal())
	}
	// Every upstream failing: the whole weighted batch is given back.
	e.alpha.SetMode(faultproxy.Fail502)
	e.beta.SetMode(faultproxy.Fail502)
	a = e.rpc(t, `[`+getBalance+`,`+getBalance+`]`, "X-API-Key: "+key)
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("every upstream down: %d %s", a.status, a.body)
	}
	if got := a.header.Get("X-Tollgate-Credits-Remaining"); got != left.Decimal() {
		t.Fatalf("after a refunded weighted batch: %s USDT left, want %s", got, left.Decimal())
	}
	e.alpha.SetMode(faultproxy.Pass)
	e.beta.SetMode(faultproxy.Pass)

	// The key's usage, service.json and llms.txt show the weights.
	u := e.usage(t, key)
	if w := fmt.Sprint(u["method_weights"]); w != "map[137:map[eth_getBalance:5]]" {
		t.Fatalf("usage method_weights = %s", w)
	}
	if got := fmt.Sprint(u["credits_remaining_usdt"]); got != left.Decimal() {
		t.Fatalf("usage: %s USDT left, want %s", got, left.Decimal())
	}
	doc := e.do(t, http.MethodGet, "/.well-known/service.json", "").json(t)
	var found bool
	for _, s := range doc["services"].([]any) {
		s := s.(map[string]any)
		switch s["chain_id"] {
		case float64(137):
			found = fmt.Sprint(s["method_weights"]) == "map[eth_getBalance:5]"
		case float64(8453):
			if fmt.Sprint(s["method_weights"]) != "map[]" {
				t.Fatalf("chain 8453 weights nothing: %v", s["method_weights"])
			}
		}
	}
	if !found {
		t.Fatalf("service.json: chain 137's method_weights missing: %v", doc["services"])
	}
	if txt := string(e.do(t, http.MethodGet, "/llms.txt", "").body); !strings.Contains(txt, "eth_getBalance on chain 137 ×5") {
		t.Fatalf("llms.txt does not name the weight:\n%s", txt)
	}

	// Revenue is booked in units: the two keyed weighted requests carry
	// 5 and 6 calls' worth.
	var fives, sixes int
	for _, r := range e.revenues(t, 6) {
		if r.Account != id {
			continue
		}
		switch {
		case r.Calls == 5 && r.Amount == 5*price:
			fives++
		case r.Calls == 6 && r.Amount == 6*price:
			sixes++
		}
	}
	if fives != 1 || sixes != 1 {
		t.Fatalf("revenue events of 5 and 6 units: %d and %d, want 1 and 1", fives, sixes)
	}
}
