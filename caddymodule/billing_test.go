package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// The billing rule (docs/billing.md) through our Caddy, real Redis and the
// dev chain: what is billed, refunded or held against an upstream is
// decided by facts a caller cannot write, never by an error's words, and
// revenue names exactly who served what.

// poisons are error answers a caller can make an upstream give (its words
// echo the caller's input), each with the words a rule book of phrases would
// read as the upstream's rate limit or outage. The codes are those a caller
// can provoke (-32601 for an unknown method, -32602 for bad params, -32000
// for a node's generic answer), plus the codes that claim a limit (-32005,
// 429) while the gateway's own call to the upstream is served — so the
// claim is not believed.
var poisons = []struct{ name, errObj string }{
	{"quota (unknown method)", `{"code":-32601,"message":"the method quota_x does not exist/is not available"}`},
	{"rate limit", `{"code":-32000,"message":"rate limit exceeded"}`},
	{"too many requests", `{"code":-32602,"message":"invalid argument 0: too many requests"}`},
	{"capacity", `{"code":-32000,"message":"capacity exceeded, daily request count exceeded"}`},
	{"quota under -32005", `{"code":-32005,"message":"quota exceeded: too many requests"}`},
	{"rate limit under 429", `{"code":429,"message":"rate limit: too many requests, over capacity"}`},
	{"capacity under -32603", `{"code":-32603,"message":"capacity exceeded"}`},
}

// poisonedBatch is 50 eth_getBalance calls and one poison_x call (answered
// by both providers with the poison's error object), poison at position at.
func poisonedBatch(at int) string {
	items := make([]string, 0, 51)
	for i := range 50 {
		items = append(items, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}`, i, i+1))
	}
	poison := `{"jsonrpc":"2.0","id":"poison","method":"poison_x","params":[]}`
	items = append(items[:at], append([]string{poison}, items[at:]...)...)
	return "[" + strings.Join(items, ",") + "]"
}

// TestPoisonedBatchIsBilledAndThrottlesNoOne is the poisoned-batch case: a
// batch of 50 eth_getBalance plus one call whose error says "quota" (and
// "rate limit", "too many requests", "capacity", under every code a caller
// can provoke and the codes that claim a limit) is charged for all 51 calls
// it was served, 1,530 units at 30 units a call, credited to the provider
// that answered; neither provider is rate-limited afterwards; and 1,000
// such batches anonymously from one address get exactly the free tier's
// worth served, then 402 like any caller.
func TestPoisonedBatchIsBilledAndThrottlesNoOne(t *testing.T) {
	const batches = 20 // the free tier: 20 batches of 51 calls
	e := startMetered(t, meterOpts{free: batches * 51, subnet: 100_000})
	secret, keyID := e.createKey(t)
	const funded money.Units = 1_000_000
	e.credit(t, keyID, funded)
	units := funded
	var ids []string
	for i, p := range poisons {
		e.alpha.SetErrorFor("poison_x", p.errObj)
		e.beta.SetErrorFor("poison_x", p.errObj)
		a := e.rpc(t, poisonedBatch(i*7), "X-API-Key: "+secret)
		var got []rpcAnswer
		if a.status != http.StatusOK || json.Unmarshal(a.body, &got) != nil || len(got) != 51 {
			t.Fatalf("%s: %d %s", p.name, a.status, a.body)
		}
		results := 0
		for _, r := range got {
			switch {
			case r.Result != nil && r.Error == nil:
				results++
			case string(r.ID) == `"poison"`:
				var want, have map[string]any
				_ = json.Unmarshal([]byte(p.errObj), &want)
				b, _ := json.Marshal(r.Error)
				_ = json.Unmarshal(b, &have)
				// A charged answer keeps the upstream's words; a code a
				// default client retries (-32005, -32603) is re-coded so no
				// retry pays twice (docs/errors.md), with the upstream's
				// own code in data.upstream_code.
				data, _ := have["data"].(map[string]any)
				recoded := data != nil && data["upstream_code"] == want["code"] && (have["code"] == float64(-32040) || have["code"] == float64(-32042))
				if (have["code"] != want["code"] && !recoded) || have["message"] != want["message"] {
					t.Fatalf("%s: the poison's answer %s, want the upstream's %s", p.name, b, p.errObj)
				}
			default:
				t.Fatalf("%s: item %s: %+v", p.name, r.ID, r.Error)
			}
		}
		if results != 50 {
			t.Fatalf("%s: %d results, want 50", p.name, results)
		}
		// 51 calls at 30 units: 1,530 units charged, nothing refunded.
		units -= 51 * money.PricePerCall
		if got := a.header.Get("X-Tollgate-Credits-Remaining"); got != units.Decimal() {
			t.Fatalf("%s: credits left %s, want %s (every call charged)", p.name, got, units.Decimal())
		}
		ids = append(ids, a.header.Get("X-Tollgate-Request-Id"))
	}
	if bal, err := balances.BalanceAt(t.Context(), e.rdb, e.layout, keyID); err != nil || bal != units {
		t.Fatalf("Redis balance %d %v, want %d", bal, err, units)
	}
	revs := e.revenuesOf(t, ids)
	for i, id := range ids {
		r := revs[id]
		if r == nil || r.Calls != 51 || r.Amount != 51*money.PricePerCall || (r.Upstream != "alpha" && r.Upstream != "beta") {
			t.Fatalf("%s: revenue %+v, want 51 calls, 1530 units, served by a provider", poisons[i].name, r)
		}
		if _, split := revs[id+"/1"]; split {
			t.Fatalf("%s: the batch was split between servers: %+v", poisons[i].name, revs[id+"/1"])
		}
	}
	for _, ev := range e.stream(t) {
		if r, ok := ev.(*events.Refund); ok {
			t.Fatalf("a poisoned batch was refunded: %+v", r)
		}
	}

	// Anonymous, one address: the free tier serves exactly its 20 batches
	// (every call counted), then 402, as for any caller.
	e.alpha.SetErrorFor("poison_x", poisons[4].errObj) // the limit claim: the most expensive to judge
	e.beta.SetErrorFor("poison_x", poisons[4].errObj)
	before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
	served, refused := 0, 0
	for i := range 1000 {
		a := e.rpc(t, poisonedBatch(i%51))
		switch {
		case a.status == http.StatusOK:
			served++
			if refused > 0 {
				t.Fatalf("batch %d served after a 402", i)
			}
		case a.status == http.StatusPaymentRequired:
			refused++
		default:
			t.Fatalf("batch %d: %d %s", i, a.status, a.body)
		}
	}
	if served != batches || refused != 1000-batches {
		t.Fatalf("anonymous: %d batches served, %d refused; want %d served (the free tier), then 402", served, refused, batches)
	}
	if got := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance") - before; got != batches*50 {
		t.Fatalf("upstreams got %d eth_getBalance calls for %d served batches, want %d", got, batches, batches*50)
	}

	// No provider was backed off or blamed by any of it.
	for _, name := range []string{"alpha", "beta"} {
		u := e.upstreamState(t, name)
		if u == nil || u["rate_limited"] != false || u["breaker"] != "closed" {
			t.Fatalf("%s after the poisoned batches: %v", name, u)
		}
	}
	t.Logf("%d poisons × 51 calls charged %d units each; anonymous: %d batches served, %d refused with 402; providers not rate-limited",
		len(poisons), 51*money.PricePerCall, served, refused)
}

// TestRateLimitNeedsTheGatewaysOwnCall: providers that really throttle the
// gateway (its own eth_blockNumber is answered -32005 too) are held
// rate-limited, and the batch items they answered with the limit are
// refunded (served by nobody). The opposite case — a -32005 the gateway's
// own call does not reproduce is billed and backs no one off — is
// TestPoisonedBatchIsBilledAndThrottlesNoOne's "quota under -32005".
func TestRateLimitNeedsTheGatewaysOwnCall(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 1_000_000)
	limited := `{"code":-32005,"message":"daily request count exceeded"}`
	for _, p := range []*faultproxy.Proxy{e.alpha, e.beta} {
		p.SetErrorFor("eth_blockNumber", limited)
		p.SetErrorFor("eth_getBalance", limited)
	}
	a := e.rpc(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000002","latest"]}]`, "X-API-Key: "+secret)
	if a.header.Get("X-Tollgate-Credits-Remaining") != money.Units(1_000_000).Decimal() || !strings.Contains(string(a.body), "-32005") {
		t.Fatalf("a confirmed limit was charged: %d %s, credits %s", a.status, a.body, a.header.Get("X-Tollgate-Credits-Remaining"))
	}
	for _, name := range []string{"alpha", "beta"} {
		deadline := time.Now().Add(readyWithin)
		for u := e.upstreamState(t, name); u["rate_limited"] != true; u = e.upstreamState(t, name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s, limited for real, never held rate-limited: %v", name, u)
			}
			time.Sleep(20 * time.Millisecond) // polling observable state
		}
	}
}

// TestPlatformFaultsAreRefunded: providers answering HTTP 503 with a
// well-formed JSON-RPC error body (an outage that still speaks JSON-RPC) are
// the platform's fault: the caller gets the upstream's words but every call
// is refunded and no provider earns revenue for it.
func TestPlatformFaultsAreRefunded(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 10_000)
	e.alpha.SetMode(faultproxy.Fail503RPCCalls)
	e.beta.SetMode(faultproxy.Fail503RPCCalls)
	var ids []string
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`, batchOf(5)} {
		a := e.rpc(t, body, "X-API-Key: "+secret)
		if a.header.Get("X-Tollgate-Credits-Remaining") != money.Units(10_000).Decimal() || !strings.Contains(string(a.body), "upstream connect error") {
			t.Fatalf("503 with a JSON-RPC body: %d %s, credits %s", a.status, a.body, a.header.Get("X-Tollgate-Credits-Remaining"))
		}
		ids = append(ids, a.header.Get("X-Tollgate-Request-Id"))
	}
	// Both refunds are on the stream; no revenue names a provider.
	deadline := time.Now().Add(30 * time.Second)
	for {
		refunded := map[string]bool{}
		for _, ev := range e.stream(t) {
			switch ev := ev.(type) {
			case *events.Refund:
				refunded[ev.ID] = true
			case *events.Revenue:
				t.Fatalf("revenue for a platform fault: %+v", ev)
			}
		}
		if refunded[ids[0]] && refunded[ids[1]] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refunds on the stream: %v, want %v", refunded, ids)
		}
		time.Sleep(20 * time.Millisecond) // polling the stream
	}
	if bal, err := balances.BalanceAt(t.Context(), e.rdb, e.layout, keyID); err != nil || bal != 10_000 {
		t.Fatalf("Redis balance %d %v, want 10000", bal, err)
	}
}

// registerNodeWS registers a node serving chain 137 over HTTP (url) and
// WebSocket (ws).
func (e *meterEnv) registerNodeWS(t *testing.T, id, url, ws string) {
	t.Helper()
	raw, err := registry.Encode(&registry.Node{ID: id, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: url, WSURL: ws, ChainIDs: []uint64{137}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(t.Context(), e.prefix+registry.NodesKey, id, raw).Err(); err != nil {
		t.Fatal(err)
	}
}

// revenueParts waits for the revenue events of request id (the request's
// own and its parts "<id>/<n>") to hold want calls in all.
func (e *meterEnv) revenueParts(t *testing.T, id string, want int) []*events.Revenue {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out []*events.Revenue
		calls := 0
		for _, ev := range e.stream(t) {
			if r, ok := ev.(*events.Revenue); ok && (r.ID == id || strings.HasPrefix(r.ID, id+"/")) {
				out = append(out, r)
				calls += r.Calls
			}
		}
		if calls >= want {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s: revenue for %d calls after 30 s, want %d: %+v", id, calls, want, out)
		}
		time.Sleep(20 * time.Millisecond) // polling the stream
	}
}

// TestRevenueNamesWhoServed is the attribution case: a batch of 99
// cached calls and 1 call a registered node served credits the node with
// exactly 1 call (the cache earns the 99, for the platform); a logs
// notification fanned out to 10 subscribers from one upstream message
// credits the node once (the 9 copies are the platform's fan-out), while
// each subscriber pays for its own copy.
func TestRevenueNamesWhoServed(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tladder 0:1\n\t\t\t\tverify off\n\t\t\t}"})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 10_000_000)
	key := "X-API-Key: " + secret

	// The cache holds block 1 (final), answered by a provider.
	const cached = `{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x1",false]}`
	deadline := time.Now().Add(readyWithin)
	for {
		a := e.rpc(t, fmt.Sprintf(cached, 0), key)
		if a.status == http.StatusOK && a.header.Get("X-Tollgate-Upstream") == "cache" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("block 1 never came from the cache: %d %s", a.status, a.body)
		}
		time.Sleep(20 * time.Millisecond) // polling until block 1 is final
	}

	// A node joins; it serves the calls it may answer.
	const nodeID = "NODE-EU-ATTRIBUT"
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	e.registerNodeWS(t, nodeID, node.URL(), e.net.Manifest.Polygon.WSURL)
	e.waitForNode(t, nodeID, key)

	t.Run("99 cached and 1 node-served", func(t *testing.T) {
		// The one forwarded call goes where selection sends it (nodes are
		// preferred, but a provider may take a call): ask until the node
		// served it, a fresh address each time so nothing is cached.
		var a answer
		tries := 0
		for ; tries < 50; tries++ {
			items := make([]string, 0, 100)
			for i := range 99 {
				items = append(items, fmt.Sprintf(cached, i+1))
			}
			fresh := fmt.Sprintf(`{"jsonrpc":"2.0","id":"n","method":"eth_getBalance","params":["0x%040x","latest"]}`, 0xa77e5+tries)
			items = append(items[:40], append([]string{fresh}, items[40:]...)...)
			before := node.Calls("eth_getBalance")
			a = e.rpc(t, "["+strings.Join(items, ",")+"]", key)
			var got []rpcAnswer
			if a.status != http.StatusOK || json.Unmarshal(a.body, &got) != nil || len(got) != 100 {
				t.Fatalf("batch: %d: %.300s", a.status, a.body)
			}
			if a.header.Get("X-Tollgate-Upstream") == nodeID {
				if node.Calls("eth_getBalance")-before != 1 {
					t.Fatalf("the node got %d calls, want 1", node.Calls("eth_getBalance")-before)
				}
				break
			}
		}
		if tries == 50 {
			t.Fatalf("the node never served the batch's forwarded call in 50 batches")
		}
		id := a.header.Get("X-Tollgate-Request-Id")
		parts := e.revenueParts(t, id, 100)
		var nodeCalls, cacheCalls int
		var amount money.Units
		for _, r := range parts {
			amount += r.Amount
			switch {
			case r.NodeID == nodeID && r.Upstream == nodeID:
				nodeCalls += r.Calls
			case r.Upstream == "cache" && r.NodeID == "":
				cacheCalls += r.Calls
			default:
				t.Fatalf("revenue credited to %+v", r)
			}
		}
		if nodeCalls != 1 || cacheCalls != 99 || amount != 100*money.PricePerCall {
			t.Fatalf("node %d calls, cache %d, amount %d; want 1, 99, %d: %+v", nodeCalls, cacheCalls, amount, 100*money.PricePerCall, parts)
		}
	})

	t.Run("notification to 10 subscribers", func(t *testing.T) {
		filter := `{"address":"` + e.net.Manifest.Polygon.USDT + `"}`
		revenueIDs := func() map[string]bool {
			ids := map[string]bool{}
			for _, ev := range e.stream(t) {
				if r, ok := ev.(*events.Revenue); ok {
					ids[r.ID] = true
				}
			}
			return ids
		}
		before := len(revenueIDs())
		var subs []*wsClient
		for range 10 {
			c := e.dial(t, "/rpc", key)
			s := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["logs",`+filter+`]}`))
			if s.Error != nil || len(s.Result) < 4 {
				t.Fatalf("eth_subscribe: %+v", s)
			}
			subs = append(subs, c)
		}
		// The 10 eth_subscribe charges are on the stream before the log.
		seen := revenueIDs()
		for deadline := time.Now().Add(30 * time.Second); len(seen) < before+10; seen = revenueIDs() {
			if time.Now().After(deadline) {
				t.Fatalf("%d revenue events for 10 subscriptions", len(seen)-before)
			}
			time.Sleep(20 * time.Millisecond) // polling the stream
		}
		e.transferUSDT(t, 1) // one log: one upstream message
		for i, c := range subs {
			var m struct {
				Method string `json:"method"`
			}
			if err := json.Unmarshal(c.next(), &m); err != nil || m.Method != "eth_subscription" {
				t.Fatalf("subscriber %d: %v %+v", i, err, m)
			}
		}
		var fresh []*events.Revenue
		deadline := time.Now().Add(30 * time.Second)
		for len(fresh) < 10 {
			fresh = fresh[:0]
			for _, ev := range e.stream(t) {
				if r, ok := ev.(*events.Revenue); ok && !seen[r.ID] {
					fresh = append(fresh, r)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d notification revenue events after 30 s, want 10", len(fresh))
			}
			time.Sleep(20 * time.Millisecond) // polling the stream
		}
		credited, fanout := 0, 0
		for _, r := range fresh {
			switch {
			case r.NodeID == nodeID:
				credited += r.Calls
			case r.Upstream == events.ServedByFanout.Upstream && r.NodeID == "":
				fanout += r.Calls
			default:
				t.Fatalf("notification revenue credited to %+v", r)
			}
		}
		if len(fresh) != 10 || credited != 1 || fanout != 9 {
			t.Fatalf("%d events: node credited %d, fan-out %d; want 10 events, 1 and 9", len(fresh), credited, fanout)
		}
	})
}

// TestCraftedErrorsCostAtMostOneSecondOpinion: the words a classifier
// still reads ("missing trie node", "database", …) only buy a second
// opinion, once, and the caller pays for every call either way. A batch of
// 50 calls all answered with such words reaches the providers exactly
// twice (100 calls), is charged 50 calls and backs no one off; a single such
// call reaches them twice. A send in a batch is never asked twice,
// whatever its answer.
func TestCraftedErrorsCostAtMostOneSecondOpinion(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 1_000_000)
	key := "X-API-Key: " + secret
	crafted := `{"code":-32000,"message":"missing trie node: database is syncing, server busy"}`
	e.alpha.SetErrorFor("eth_getBalance", crafted)
	e.beta.SetErrorFor("eth_getBalance", crafted)
	calls := func() int { return e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance") }

	before := calls()
	a := e.rpc(t, batchOf(50), key)
	if a.status != http.StatusOK || strings.Count(string(a.body), "missing trie node") != 50 {
		t.Fatalf("batch: %d %.300s", a.status, a.body)
	}
	if got := calls() - before; got != 100 {
		t.Fatalf("50 crafted calls reached the providers %d times, want 100 (one second opinion each)", got)
	}
	left := money.Units(1_000_000) - 50*money.PricePerCall
	if a.header.Get("X-Tollgate-Credits-Remaining") != left.Decimal() {
		t.Fatalf("credits %s, want %s (every call charged)", a.header.Get("X-Tollgate-Credits-Remaining"), left.Decimal())
	}
	before = calls()
	a = e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`, key)
	if got := calls() - before; a.status != http.StatusOK || got != 2 {
		t.Fatalf("single crafted call: %d, reached the providers %d times, want 2", a.status, got)
	}
	left -= money.PricePerCall
	if a.header.Get("X-Tollgate-Credits-Remaining") != left.Decimal() {
		t.Fatalf("credits %s, want %s", a.header.Get("X-Tollgate-Credits-Remaining"), left.Decimal())
	}

	// A send answered with a fault code, in a batch: never replayed.
	e.alpha.SetErrorFor("eth_sendRawTransaction", `{"code":-32603,"message":"internal error"}`)
	e.beta.SetErrorFor("eth_sendRawTransaction", `{"code":-32603,"message":"internal error"}`)
	sends := func() int { return e.alpha.Calls("eth_sendRawTransaction") + e.beta.Calls("eth_sendRawTransaction") }
	before = sends()
	a = e.rpc(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x02f8"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]`, key)
	if got := sends() - before; a.status != http.StatusOK || got != 1 {
		t.Fatalf("a send in a batch reached the providers %d times (%d %s), want 1", got, a.status, a.body)
	}
	for _, name := range []string{"alpha", "beta"} {
		if u := e.upstreamState(t, name); u["rate_limited"] != false || u["breaker"] != "closed" {
			t.Fatalf("%s: %v", name, u)
		}
	}
}

// TestUnservedRepliesDeliverNoResults: a reply that is not served — HTTP
// 5xx, refunded whatever its body — never hands the caller a result for
// free. Providers whose proxy answers HTTP 500 while carrying the node's
// real answers (results included): every call is refunded, and no item of
// what the caller gets holds a result (else a 5xx would be service no one
// pays for: a caller who can make a provider answer 5xx, or one poisoned
// item that does, would get a whole batch free).
func TestUnservedRepliesDeliverNoResults(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 10_000)
	e.alpha.SetMode(faultproxy.Status500Calls)
	e.beta.SetMode(faultproxy.Status500Calls)
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`, batchOf(5)} {
		a := e.rpc(t, body, "X-API-Key: "+secret)
		if a.header.Get("X-Tollgate-Credits-Remaining") != money.Units(10_000).Decimal() {
			t.Fatalf("HTTP 500 charged: %d %s, credits %s", a.status, a.body, a.header.Get("X-Tollgate-Credits-Remaining"))
		}
		var got []rpcAnswer
		raw := strings.TrimSpace(string(a.body))
		if !strings.HasPrefix(raw, "[") {
			raw = "[" + raw + "]"
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got) == 0 {
			t.Fatalf("answer: %d %s", a.status, a.body)
		}
		for _, r := range got {
			if r.Result != nil || r.Error == nil {
				t.Fatalf("a refunded call delivered a result: %d %s", a.status, a.body)
			}
		}
	}
	if bal, err := balances.BalanceAt(t.Context(), e.rdb, e.layout, keyID); err != nil || bal != 10_000 {
		t.Fatalf("Redis balance %d %v, want 10000", bal, err)
	}
}

// TestConfirmedLimitRefundedBesideASend: a batch holding a send is never
// replayed, but its other items are still judged on their own facts: an
// item answered with a rate limit the gateway's own call confirms is
// refunded (the platform's fault), as in a batch without a send; the send
// is charged and reaches the providers once.
func TestConfirmedLimitRefundedBesideASend(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	const funded money.Units = 1_000_000
	e.credit(t, keyID, funded)
	limited := `{"code":-32005,"message":"daily request count exceeded"}`
	for _, p := range []*faultproxy.Proxy{e.alpha, e.beta} {
		p.SetErrorFor("eth_blockNumber", limited)
		p.SetErrorFor("eth_getBalance", limited)
		p.SetErrorFor("eth_sendRawTransaction", `{"code":-32000,"message":"nonce too low"}`)
	}
	sends := func() int { return e.alpha.Calls("eth_sendRawTransaction") + e.beta.Calls("eth_sendRawTransaction") }
	before := sends()
	a := e.rpc(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x02f8"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000002","latest"]}]`, "X-API-Key: "+secret)
	if a.status != http.StatusOK || !strings.Contains(string(a.body), "-32005") || !strings.Contains(string(a.body), "nonce too low") {
		t.Fatalf("batch: %d %s", a.status, a.body)
	}
	if got := sends() - before; got != 1 {
		t.Fatalf("the send reached the providers %d times, want 1", got)
	}
	if left := funded - money.PricePerCall; a.header.Get("X-Tollgate-Credits-Remaining") != left.Decimal() {
		t.Fatalf("credits %s, want %s (the send charged, the confirmed limit refunded)", a.header.Get("X-Tollgate-Credits-Remaining"), left.Decimal())
	}
}

// TestCappedAnswerIsNoLimitClaim: the -32005 the gateway itself puts in
// place of an answer over max_response_bytes is the caller's answer,
// served and charged (the upstream did the work), even while the upstream
// really limits the gateway: it is not an upstream's limit claim, so it is
// neither refunded nor fetched again from another provider (a second
// oversized answer, free).
func TestCappedAnswerIsNoLimitClaim(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, chain137: "method eth_getBlockByNumber max_response_bytes 200"})
	secret, keyID := e.createKey(t)
	const funded money.Units = 1_000_000
	e.credit(t, keyID, funded)
	// The providers limit the gateway's own call: a limit claim would be
	// believed.
	for _, p := range []*faultproxy.Proxy{e.alpha, e.beta} {
		p.SetErrorFor("eth_blockNumber", `{"code":-32005,"message":"daily request count exceeded"}`)
	}
	blocks := func() int { return e.alpha.Calls("eth_getBlockByNumber") + e.beta.Calls("eth_getBlockByNumber") }
	before := blocks()
	a := e.rpc(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000002","latest"]}]`, "X-API-Key: "+secret)
	if a.status != http.StatusOK || !strings.Contains(string(a.body), "returns at most 200 bytes") {
		t.Fatalf("batch: %d %s", a.status, a.body)
	}
	if got := blocks() - before; got != 1 {
		t.Fatalf("the capped call reached the providers %d times, want 1", got)
	}
	if left := funded - 2*money.PricePerCall; a.header.Get("X-Tollgate-Credits-Remaining") != left.Decimal() {
		t.Fatalf("credits %s, want %s (the capped answer charged)", a.header.Get("X-Tollgate-Credits-Remaining"), left.Decimal())
	}
}

// TestErrorAnswersInA5xxBlameNoOne: a provider that sends its error
// answers with HTTP 500 (the node's JSON-RPC error in the body) while
// serving results normally is not failing: a caller who asks it, again and
// again, for a method that does not exist must not open its breaker. The
// other provider answering the same call with the same kind of error is no
// evidence against it (only a result would be); each call is charged, the
// other provider's error answer being the caller's answer.
func TestErrorAnswersInA5xxBlameNoOne(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	secret, keyID := e.createKey(t)
	const funded money.Units = 1_000_000
	e.credit(t, keyID, funded)
	e.alpha.SetMode(faultproxy.Status500Errors)
	// beta slower, so alpha is the first choice: on a busy machine the
	// two loopback providers' latencies are noise, and beta alone could
	// answer all the calls.
	e.beta.SetDelay(20 * time.Millisecond)
	const n = 40
	for i := range n {
		a := e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"poison_x","params":[]}`, i), "X-API-Key: "+secret)
		if !strings.Contains(string(a.body), "-32601") {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	if e.alpha.Calls("poison_x") == 0 {
		t.Fatalf("alpha was never asked: the test shows nothing")
	}
	u := e.upstreamState(t, "alpha")
	if u == nil || u["breaker"] != "closed" || u["failures"] != float64(0) {
		t.Fatalf("alpha, blamed for %d error answers sent with HTTP 500 (beta erred the same): %v", e.alpha.Calls("poison_x"), u)
	}
}

// TestFreeCopiesDoNotTakeTheNodesCredit: a notification fanned out to
// subscribers who pay and subscribers on the free tier credits its node
// once, with a copy that pays: the node's revenue for the message is the
// paid copy's price, never a free copy's zero (else strangers holding free
// subscriptions to the same filter would take a node's earnings for the
// messages it sent, by the luck of delivery order).
func TestFreeCopiesDoNotTakeTheNodesCredit(t *testing.T) {
	e := startMetered(t, meterOpts{free: 10_000, subnet: 100_000, extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tladder 0:1\n\t\t\t\tverify off\n\t\t\t}"})
	secret, keyID := e.createKey(t)
	e.credit(t, keyID, 10_000_000)
	key := "X-API-Key: " + secret
	const nodeID = "NODE-EU-FREECOPY"
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	e.registerNodeWS(t, nodeID, node.URL(), e.net.Manifest.Polygon.WSURL)
	e.waitForNode(t, nodeID, key)

	filter := `{"address":"` + e.net.Manifest.Polygon.USDT + `"}`
	revenues := func() []*events.Revenue {
		var out []*events.Revenue
		for _, ev := range e.stream(t) {
			if r, ok := ev.(*events.Revenue); ok {
				out = append(out, r)
			}
		}
		return out
	}
	before := len(revenues())
	var subs []*wsClient
	for i := range 10 {
		var c *wsClient
		if i == 0 {
			c = e.dial(t, "/rpc", key) // the one subscriber who pays
		} else {
			c = e.dial(t, "/rpc") // free tier
		}
		s := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["logs",`+filter+`]}`))
		if s.Error != nil || len(s.Result) < 4 {
			t.Fatalf("eth_subscribe %d: %+v", i, s)
		}
		subs = append(subs, c)
	}
	for deadline := time.Now().Add(30 * time.Second); len(revenues()) < before+10; {
		if time.Now().After(deadline) {
			t.Fatalf("%d revenue events for 10 subscriptions", len(revenues())-before)
		}
		time.Sleep(20 * time.Millisecond) // polling the stream
	}
	const logs = 3
	for l := range logs {
		seen := len(revenues())
		e.transferUSDT(t, 1) // one log: one upstream message
		for i, c := range subs {
			var m struct {
				Method string `json:"method"`
			}
			if err := json.Unmarshal(c.next(), &m); err != nil || m.Method != "eth_subscription" {
				t.Fatalf("log %d, subscriber %d: %v %+v", l, i, err, m)
			}
		}
		var fresh []*events.Revenue
		for deadline := time.Now().Add(30 * time.Second); len(fresh) < 10; fresh = revenues()[seen:] {
			if time.Now().After(deadline) {
				t.Fatalf("log %d: %d notification revenue events after 30 s, want 10", l, len(fresh))
			}
			time.Sleep(20 * time.Millisecond) // polling the stream
		}
		credited, amount := 0, money.Units(0)
		for _, r := range fresh {
			if r.NodeID == nodeID {
				credited += r.Calls
				amount += r.Amount
			}
		}
		if credited != 1 || amount != money.PricePerCall {
			t.Fatalf("log %d: the node credited %d copies worth %d units, want 1 worth %d (the paid copy): %+v", l, credited, amount, money.PricePerCall, fresh)
		}
	}
}
