package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// registerWalletNode puts a node of wallet serving chain 137 at url into
// the gateway's registry (each wallet its own standing).
func (e *meterEnv) registerWalletNode(t *testing.T, id, url, wallet string) {
	t.Helper()
	raw, err := registry.Encode(&registry.Node{ID: id, Wallet: wallet, Region: "eu",
		URL: url, ChainIDs: []uint64{137}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(t.Context(), e.prefix+registry.NodesKey, id, raw).Err(); err != nil {
		t.Fatal(err)
	}
}

// adminUpstreams is chain 137's upstreams in the admin view of
// /rpc/health (check rates and check accounting included), by name.
func (e *meterEnv) adminUpstreams(t *testing.T) map[string]map[string]any {
	t.Helper()
	a := e.do(t, http.MethodGet, "/rpc/health", "", "X-Admin-Token: admin-token-0123456789")
	var h struct {
		View   string `json:"view"`
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []map[string]any `json:"upstreams"`
			} `json:"pool"`
		}
	}
	if err := json.Unmarshal(a.body, &h); err != nil || h.View != "admin" {
		t.Fatalf("admin health: %d %s", a.status, a.body)
	}
	out := map[string]map[string]any{}
	for _, c := range h.Chains {
		if c.ChainID == 137 {
			for _, u := range c.Pool.Upstreams {
				out[u["name"].(string)] = u
			}
		}
	}
	return out
}

// callTraffic is sampled traffic: a token's totalSupply by eth_call at
// latest and two below the head, and the head. Balances and blocks are
// proved before delivery (a lie there is caught at once, 0 delivered), so
// only a sampled method measures the sampled bound.
type callTraffic struct {
	token string
	head  uint64
	i     int
}

func (c *callTraffic) next() string {
	c.i++
	at := "latest"
	if c.i%3 == 1 && c.head > 2 {
		at = "0x" + strconv.FormatUint(c.head-2, 16)
	}
	if c.i%3 == 2 {
		return `{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":[]}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + c.token + `","data":"0x18160ddd"},"` + at + `"]}`
}

// observe reads the head from an eth_blockNumber answer and reports
// whether the answer is the liar's (faultproxy.LieWord).
func (c *callTraffic) observe(body []byte) (lie bool) {
	var r struct {
		Result string `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil {
		return false
	}
	if c.i%3 == 2 {
		if n, err := strconv.ParseUint(strings.TrimPrefix(r.Result, "0x"), 16, 64); err == nil {
			c.head = n
		}
		return false
	}
	return r.Result == faultproxy.LieWord
}

// TestLiarAtTheFloorWithinTheBound: the measurement asked for ("the same
// liar starting only once it has reached the lowest check rate"). Six
// nodes of six wallets pass probation honestly and climb (a short ladder
// and check decay: `ladder 0:1`, `check_decay 30 1s`) until their check
// rate is the floor, 5 % (verify's default); from then each lies about 1
// in 5 of its eth_call answers (a plausible wrong value, faultproxy's
// ShapeCall; eth_call is sampled, not proved). Each is caught by a sampled check, and the wrong answers callers
// got from each before its quarantine are counted.
//
// The bound for sampled methods: each lie is checked with probability
// r = 0.05 and is delivered before it is checked, so the lies delivered up
// to and including the first checked one are geometric: expected 1/r = 20,
// at most 90 with 99 % probability, at most 180 with 99.99 %. The test
// asserts every liar within 180 and the runs' mean within 3/r = 60 (a sum
// of six geometric draws above 360 has probability < 0.1 %); the figures
// are logged and docs/trust.md states them.
func TestLiarAtTheFloorWithinTheBound(t *testing.T) {
	const runs, floor = 6, 0.05
	e := startMetered(t, meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\ttimeout 2s\n\t\t\t\tprobation 10 2\n\t\t\t\tladder 0:1\n\t\t\t\tcheck_decay 30 1s\n\t\t\t}"})
	type liarNode struct {
		id        string
		proxy     *faultproxy.Proxy
		lying     bool // at the floor: lies from now on
		caught    bool
		delivered int // wrong answers callers got from it
		served    int // calls it served while lying
	}
	liars := make([]*liarNode, runs)
	byID := map[string]*liarNode{}
	for i := range liars {
		p := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
		t.Cleanup(p.Close)
		p.LieAfter.Store(math.MaxInt64 / 2) // honest until told
		p.SetMode(faultproxy.LieSometimes)
		p.SetShape(faultproxy.ShapeCall)
		l := &liarNode{id: fmt.Sprintf("NODE-EU-FLOORLR%c", 'A'+i), proxy: p}
		liars[i], byID[l.id] = l, l
		e.registerWalletNode(t, l.id, p.URL(), fmt.Sprintf("0x00000000000000000000000000000000000000f%d", i))
	}
	traffic := &callTraffic{token: e.net.Manifest.Polygon.USDT}
	calls, unavailable := 0, 0
	deadline := time.Now().Add(90 * time.Second)
	for {
		ups := e.adminUpstreams(t)
		open := 0
		for _, l := range liars {
			if l.caught {
				continue
			}
			u := ups[l.id]
			if u == nil {
				if l.lying {
					l.caught = true // quarantined: it left the pool
				} else {
					open++ // not in the pool yet
				}
				continue
			}
			if u["quarantined"] == true {
				if !l.lying {
					t.Fatalf("%s was quarantined while honest: %v", l.id, u["quarantine_reason"])
				}
				l.caught = true
				t.Logf("%s: %v; checks %v", l.id, u["quarantine_reason"], u["checks"])
				continue
			}
			open++
			tv, _ := u["trust"].(map[string]any)
			if !l.lying && tv != nil && tv["phase"] == "trusted" && tv["check_rate"] == floor {
				// At the floor: lie about every 5th eth_call from the next
				// one on.
				l.proxy.LieAfter.Store(l.proxy.Answered.Load())
				l.lying = true
			}
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			var state []string
			for _, l := range liars {
				u := e.adminUpstreams(t)[l.id]
				state = append(state, fmt.Sprintf("%s lying=%v delivered=%d trust=%v", l.id, l.lying, l.delivered, u["trust"]))
			}
			t.Fatalf("after %d calls not every liar was caught: %v", calls, state)
		}
		calls++
		a := e.rpc(t, traffic.next())
		if a.status == http.StatusServiceUnavailable && unavailable < 20 {
			// Metering's Redis busy past its deadline on a loaded machine
			// (-32603 "retry shortly"): nothing was delivered or charged;
			// a caller retries, and so does this one.
			unavailable++
			t.Logf("call %d: %d %s", calls, a.status, a.body)
			continue
		}
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", calls, a.status, a.body)
		}
		lie := traffic.observe(a.body)
		l := byID[a.header.Get("X-Tollgate-Upstream")]
		switch {
		case lie && (l == nil || !l.lying):
			t.Fatalf("a lie delivered by %q, not a lying node: %s", a.header.Get("X-Tollgate-Upstream"), a.body)
		case l != nil && l.lying:
			l.served++
			if lie {
				l.delivered++
			}
		}
	}
	var delivered []int
	total := 0
	for _, l := range liars {
		t.Logf("%s: %d wrong answers delivered (%d lies told, %d calls served while lying) before its quarantine",
			l.id, l.delivered, l.proxy.Lies.Load(), l.served)
		if !l.caught || l.proxy.Lies.Load() == 0 {
			t.Fatalf("%s never lied or was never caught: %+v", l.id, l)
		}
		delivered = append(delivered, l.delivered)
		total += l.delivered
	}
	slices.Sort(delivered)
	mean := float64(total) / runs
	t.Logf("wrong answers delivered per liar at the floor (r = %.2f): %v, mean %.1f (expected 1/r = %.0f; 99th percentile %d); %d calls in all",
		floor, delivered, mean, 1/floor, int(math.Ceil(math.Log(0.01)/math.Log(1-floor))), calls)
	if worst := delivered[len(delivered)-1]; worst > 180 || mean > 3/floor {
		t.Fatalf("a liar at the floor delivered %d wrong answers (bound 180), mean %.1f (bound %.0f)", worst, mean, 3/floor)
	}
}
