package caddymodule_test

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// TestDisprovedLieWithoutProvidersNeverReachesTheCaller (found in
// review): a node's balance is disproved before delivery by its own proof
// against a state root the gateway already holds (a header cached by an
// earlier proof: no provider call needed), at a moment when no provider
// answers calls (they pass their health probes, so the pool still holds
// them). The part goes to the providers and none answers: the node's
// answer, a proven lie, once went out to the caller as it gave it. The
// caller gets an error instead (not charged), and the node is convicted.
func TestDisprovedLieWithoutProvidersNeverReachesTheCaller(t *testing.T) {
	e := startMetered(t, provedOpts())
	acct, _ := e.net.Manifest.Account("deployer")
	liar := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.SetShape(faultproxy.ShapeValue) // the honest proof beside an altered balance
	const nodeID = "NODE-EU-DISPROVE"
	e.registerNode(t, nodeID, liar.URL())
	e.waitForNodeOn(t, nodeID, func() string { return headNumber })

	// A final block, proved once through the node: its header is cached.
	var head struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(e.rpc(t, headNumber).body, &head); err != nil {
		t.Fatal(err)
	}
	n, err := hexutil.DecodeUint64(head.Result)
	if err != nil {
		t.Fatal(err)
	}
	balance := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + acct.Address + `","0x` + strconv.FormatUint(n-4, 16) + `"]}`
	var honest struct {
		Result json.RawMessage `json:"result"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := e.rpc(t, balance)
		if a.status == http.StatusOK && a.header.Get("X-Tollgate-Upstream") == nodeID {
			if err := json.Unmarshal(a.body, &honest); err != nil || len(honest.Result) == 0 {
				t.Fatalf("the node's balance: %v %s", err, a.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node never served the balance: %d %s", a.status, a.body)
		}
	}
	proved := e.provedCounts(t)["eth_getBalance"]["proved"]
	if proved == 0 {
		t.Fatalf("the node's balance was not proved: %v", e.provedCounts(t))
	}

	// No provider answers calls now; the node lies about every balance.
	e.alpha.SetMode(faultproxy.Fail502Calls)
	e.beta.SetMode(faultproxy.Fail502Calls)
	liar.LieEvery.Store(1)
	liar.LieAfter.Store(0)
	liar.SetMode(faultproxy.LieSometimes)
	deadline = time.Now().Add(60 * time.Second)
	for liar.Lies.Load() == 0 {
		a := e.rpc(t, balance)
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(a.body, &r) == nil && len(r.Result) > 0 && string(r.Result) != string(honest.Result) {
			t.Fatalf("a disproved balance reached the caller (by %s, status %d): %s", a.header.Get("X-Tollgate-Upstream"), a.status, a.body)
		}
		if liar.Lies.Load() > 0 {
			var got struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(a.body, &got); err != nil || got.Error == nil || len(got.Result) > 0 {
				t.Fatalf("a disproved balance with no provider to take its part: want an error, got %d %s", a.status, a.body)
			}
			if by := a.header.Get("X-Tollgate-Upstream"); by == nodeID {
				t.Fatalf("a disproved balance booked to the node")
			}
			t.Logf("the lie's answer: %d %s (by %q)", a.status, a.body, a.header.Get("X-Tollgate-Upstream"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no balance reached the node")
		}
	}
	if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] != true {
		t.Fatalf("the node was not convicted: %v", st)
	}
	if c := e.provedCounts(t)["eth_getBalance"]; c["lie"] != 1 {
		t.Fatalf("proofs: %v, want one lie", c)
	}
}

// providerCounts sums the providers' counts in the public /rpc/health:
// successes and latency samples (alpha and beta).
func (e *meterEnv) providerCounts(t *testing.T) (successes, samples float64) {
	t.Helper()
	for _, name := range []string{"alpha", "beta"} {
		u := e.upstreamState(t, name)
		s, _ := u["successes"].(float64)
		l, _ := u["latency_samples"].(float64)
		successes, samples = successes+s, samples+l
	}
	return successes, samples
}

// TestPublicHealthHidesCheckCalls (found in review): a check of a node's
// answer is a call to a provider, and the public /rpc/health counted it
// in the provider's successes and latency samples. A node serving a
// quiet gateway (its operator the caller) saw them grow by one right
// after each of its answers that was checked — which answers were
// checked, its check rate, and when checks stop (the cap's drops): what
// hiding verified_matches from the public view was for. The public view
// shows the providers' counts in steps of 1,000, so one call moves none.
// The same for the public /rpc/stats/{chain}'s hedge counts: a check's
// provider call was a hedge-eligible read (hedges.reads grew by one per
// check beside the caller's own read); checks are background work, never
// hedged (a hedge would also be a second provider call the checks' cap
// never counted).
func TestPublicHealthHidesCheckCalls(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tverify 1\n\t\t\t\tcheck_qps off\n\t\t\t\thedge 0.1 20ms 1s\n\t\t\t}"})
	hedgeReads := func() float64 {
		resp, err := http.Get(e.gw.URL() + "/rpc/stats/polygon")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st struct {
			Hedges struct {
				Reads float64 `json:"reads"`
			} `json:"hedges"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Hedges.Reads
	}
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	const nodeID = "NODE-EU-WATCHING"
	e.registerNode(t, nodeID, node.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	e.waitForNodeOn(t, nodeID, func() string { return headNumber }, "X-API-Key: "+key)
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + e.net.Manifest.Polygon.USDT + `","data":"0x18160ddd"},"latest"]}`
	// settled waits for every offered check of the node to be done.
	settled := func() map[string]float64 {
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, _ := e.nodeCheckMetrics(t, nodeID)
			if c["offered"] > 0 && c["offered"] == c["checked"]+c["dropped"]+c["failed"] {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("the node's checks never settled: %v", c)
			}
			time.Sleep(20 * time.Millisecond) // polling the metrics
		}
	}
	watched, minHedgeReads := 0, math.Inf(1)
	deadline := time.Now().Add(60 * time.Second)
	for watched < 10 {
		before := settled()
		s0, l0 := e.providerCounts(t)
		h0 := hedgeReads()
		a := e.rpc(t, body, "X-API-Key: "+key)
		if a.status != http.StatusOK || a.header.Get("X-Tollgate-Upstream") != nodeID {
			if time.Now().After(deadline) {
				t.Fatalf("the node stopped serving: %d %s", a.status, a.body)
			}
			continue // a provider served it: its own call, not a check
		}
		after := settled()
		if after["checked"] <= before["checked"] {
			continue // not checked (verify 1 checks every answer; a drop would say so)
		}
		s1, l1 := e.providerCounts(t)
		// The gateway's own header fetches (a block every 100 ms here) are
		// reads too, not tied to any answer: the count may grow by more
		// now and then, but with the checks counted it never grows by
		// the caller's read alone.
		minHedgeReads = min(minHedgeReads, hedgeReads()-h0)
		if s1 != s0 || l1 != l0 {
			t.Fatalf("the public view's provider counts moved with a check of the node's answer: successes %v → %v, latency samples %v → %v (checks %v → %v)",
				s0, s1, l0, l1, before, after)
		}
		watched++
	}
	if minHedgeReads != 1 {
		t.Fatalf("the public hedge count grew by at least %v with each read and its check (want 1 at times: the caller's own read)", minHedgeReads)
	}
}
