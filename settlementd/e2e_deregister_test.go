package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// TestNodeDeregistrationEndToEnd, on real Redis, Postgres, the dev chain and
// our Caddy build: an operator lists their nodes and deregisters one that
// served paid calls; another wallet is refused (403), an unknown id is 404,
// a second deregistration answers the same; the gateway drops the node at
// its next registry refresh (the node receives nothing more, not even
// probes) while the other two pool members serve every call; the node's
// record stays gone while settlementd's prober runs; the epoch close pays
// the node exactly half of what it served before its deregistration, and
// its earnings stay readable by its wallet. Every answer is checked
// against docs/openapi.yaml.
func TestNodeDeregistrationEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway, settlementd and the dev chain")
	}
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, pool := settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	// Three operators' nodes in front of the dev chain, and a configured
	// provider that always fails (every served call is a node's).
	proxies := map[string]*faultproxy.Proxy{}
	for _, name := range []string{"A", "B", "C"} {
		p := faultproxy.New(m.Polygon.RPCURL)
		t.Cleanup(p.Close)
		proxies[name] = p
	}
	broken := faultproxy.New(m.Polygon.RPCURL)
	broken.SetMode(faultproxy.Fail502)
	t.Cleanup(broken.Close)
	treasury, err := m.Account("treasury")
	if err != nil {
		t.Fatal(err)
	}
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", treasury.Addr().Hex(), "@BROKEN@", broken.URL()).Replace(e2eCaddyfile)
	const adminToken = "dereg-admin-token-0123456789"
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+adminToken)

	api := fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	runInProcess(t, map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(api, "http://"), "TOLLGATE_EPOCH_GRACE": "1s",
		"TOLLGATE_EPOCH_CLOSE_SCHEDULE": "* * * * * *", "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_JWT_SECRET": "dereg-jwt-secret-0123456789abcdef012345678", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_NODE_PROBE_SCHEDULE": "* * * * * *", "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(api, "http://"),
		"TOLLGATE_ADMIN_TOKEN": adminToken,
	}, api+"/health")

	op1Key, op2Key := devnet.DevKey("operator-1"), devnet.DevKey("operator-2")
	auth1, auth2 := login(t, api, op1Key), login(t, api, op2Key)
	register := func(auth, region, url string) string {
		t.Helper()
		a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", mustJSON(map[string]any{"region": region, "rpc_url": url, "chain_ids": []uint64{137}}), auth)
		if a.status != http.StatusCreated {
			t.Fatalf("register %s: %d %s", url, a.status, a.body)
		}
		return a.obj(t)["node_id"].(string)
	}
	type listed struct {
		NodeID           string  `json:"node_id"`
		Status           string  `json:"status"`
		RPCURL           string  `json:"rpc_url"`
		ChainIDs         []int   `json:"chain_ids"`
		CreatedAt        string  `json:"created_at"`
		DeregisteredAt   *string `json:"deregistered_at"`
		TotalEarnedUnits string  `json:"total_earned_units"`
	}
	list := func(auth string) []listed {
		t.Helper()
		a := e2eDo(t, http.MethodGet, api+"/api/nodes", "", auth)
		var out struct {
			Wallet    string   `json:"wallet"`
			Nodes     []listed `json:"nodes"`
			Truncated bool     `json:"truncated"`
		}
		if a.status != 200 || json.Unmarshal(a.body, &out) != nil || out.Truncated {
			t.Fatalf("GET /api/nodes: %d %s", a.status, a.body)
		}
		return out.Nodes
	}
	if l := list(auth1); len(l) != 0 {
		t.Fatalf("nodes before any registration: %+v", l)
	}
	if a := e2eDo(t, http.MethodGet, api+"/api/nodes", ""); a.status != 401 || a.code() != "invalid_token" {
		t.Fatalf("GET /api/nodes without a token: %d %s", a.status, a.body)
	}
	// The pool's node members as the gateway reports them.
	members := func() []string {
		t.Helper()
		a := e2eDo(t, http.MethodGet, gw.URL()+"/rpc/health", "")
		var h struct {
			Chains []struct {
				ChainID uint64 `json:"chain_id"`
				Pool    struct {
					Upstreams []struct{ Name, Kind string } `json:"upstreams"`
				} `json:"pool"`
			} `json:"chains"`
		}
		if a.status != 200 || json.Unmarshal(a.body, &h) != nil {
			t.Fatalf("/rpc/health: %d %s", a.status, a.body)
		}
		var out []string
		for _, c := range h.Chains {
			for _, u := range c.Pool.Upstreams {
				if c.ChainID == 137 && u.Kind == "node" {
					out = append(out, u.Name)
				}
			}
		}
		slices.Sort(out)
		return out
	}

	// --- A alone serves paid calls.
	nodeA := register(auth1, "eu-west", proxies["A"].URL())
	key := e2eDo(t, http.MethodPost, gw.URL()+"/api/keys", `{"label":"dereg","tier":"free"}`)
	if key.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", key.status, key.body)
	}
	secret, keyID := key.obj(t)["api_key"].(string), key.obj(t)["key_id"].(string)
	if _, _, err := balances.Credit(ctx, rdb, prefix, keyID, 100*money.Scale, "0xdereg:1"); err != nil {
		t.Fatal(err)
	}
	rpc := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	settletest.Eventually(t, 15*time.Second, "the gateway routes to A", func() (bool, error) {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc) // anonymous: free, no revenue
		return a.status == 200 && a.header.Get("X-Tollgate-Upstream") == nodeA, nil
	})
	paid := func(n int, allowed ...string) map[string]int {
		t.Helper()
		served := map[string]int{}
		for i := range n {
			a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc, "X-API-Key: "+secret)
			up := a.header.Get("X-Tollgate-Upstream")
			if a.status != 200 || !slices.Contains(allowed, up) || a.header.Get("X-Tollgate-Payer") != "credits" {
				t.Fatalf("paid call %d: %d upstream %q (allowed %v) %s", i, a.status, up, allowed, a.body)
			}
			served[up]++
		}
		return served
	}
	beforeCalls := paid(10, nodeA)[nodeA] // paid calls A served before its deregistration

	// --- B (the same operator) and C (another) join the pool.
	nodeB := register(auth1, "us-east", proxies["B"].URL())
	nodeC := register(auth2, "ap-south", proxies["C"].URL())
	all := []string{nodeA, nodeB, nodeC}
	slices.Sort(all)
	settletest.Eventually(t, 15*time.Second, "A, B and C in the gateway's pool", func() (bool, error) {
		return slices.Equal(members(), all), nil
	})
	if l := list(auth1); len(l) != 2 || l[0].NodeID != nodeA || l[1].NodeID != nodeB || l[0].Status != "online" ||
		l[0].DeregisteredAt != nil || l[0].RPCURL != proxies["A"].URL() || !slices.Equal(l[0].ChainIDs, []int{137}) || l[0].CreatedAt == "" {
		t.Fatalf("op1's nodes: %+v", l)
	}
	if l := list(auth2); len(l) != 1 || l[0].NodeID != nodeC {
		t.Fatalf("op2's nodes: %+v", l)
	}

	// --- Refusals leave A in place.
	for name, c := range map[string]struct {
		url, auth string
		status    int
		code      string
	}{
		"another wallet": {api + "/api/nodes/" + nodeA, auth2, 403, "not_node_owner"},
		"unknown node":   {api + "/api/nodes/NODE-EU-AAAAAAAA", auth1, 404, "node_not_found"},
		"malformed id":   {api + "/api/nodes/hello", auth1, 404, "node_not_found"},
		"no token":       {api + "/api/nodes/" + nodeA, "X-None: 1", 401, "invalid_token"},
		"op1 deletes C":  {api + "/api/nodes/" + nodeC, auth1, 403, "not_node_owner"},
		"garbage token":  {api + "/api/nodes/" + nodeA, "Authorization: Bearer abc", 401, "invalid_token"},
		"op2 deletes B":  {api + "/api/nodes/" + nodeB, auth2, 403, "not_node_owner"},
		"unknown, op2":   {api + "/api/nodes/NODE-EU-BBBBBBBB", auth2, 404, "node_not_found"},
	} {
		if a := e2eDo(t, http.MethodDelete, c.url, "", c.auth); a.status != c.status || a.code() != c.code {
			t.Fatalf("DELETE %s: %d %s, want %d %s", name, a.status, a.body, c.status, c.code)
		}
	}
	if ok, err := rdb.HExists(ctx, prefix+registry.NodesKey, nodeA).Result(); err != nil || !ok {
		t.Fatalf("A's registry record after refused deregistrations: %v %v", ok, err)
	}

	// --- op1 deregisters A: the record goes at once, the pool drops A at
	// the next refresh, B and C keep serving, A receives nothing more.
	// B and C are made slower first, so until the refresh the gateway
	// still prefers A: the calls A serves in that gap earn it nothing.
	proxies["B"].SetDelay(20 * time.Millisecond)
	proxies["C"].SetDelay(20 * time.Millisecond)
	settletest.Eventually(t, 15*time.Second, "A preferred", func() (bool, error) {
		n := paid(1, nodeA, nodeB, nodeC)[nodeA]
		beforeCalls += n
		return n == 1, nil
	})
	del := e2eDo(t, http.MethodDelete, api+"/api/nodes/"+nodeA, "", auth1)
	var gone listed
	if del.status != 200 || json.Unmarshal(del.body, &gone) != nil || gone.NodeID != nodeA || gone.Status != "deregistered" || gone.DeregisteredAt == nil {
		t.Fatalf("deregister A: %d %s", del.status, del.body)
	}
	deregAt, err := time.Parse(time.RFC3339Nano, *gone.DeregisteredAt)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := rdb.HExists(ctx, prefix+registry.NodesKey, nodeA).Result(); err != nil || ok {
		t.Fatalf("A's registry record after the deregistration: %v %v", ok, err)
	}
	rest := []string{nodeB, nodeC}
	slices.Sort(rest)
	gapCalls := 0
	settletest.Eventually(t, 15*time.Second, "the gateway's pool without A", func() (bool, error) {
		gapCalls += paid(1, nodeA, nodeB, nodeC)[nodeA]
		return slices.Equal(members(), rest), nil
	})
	proxies["B"].SetDelay(0)
	proxies["C"].SetDelay(0)
	// A probe of A already in flight when it left may still land: wait
	// until A has heard nothing for five probe intervals (a member of the
	// pool is probed every 100 ms), then nothing may reach it at all.
	countA := func() int { return proxies["A"].Calls("eth_blockNumber") + proxies["A"].Calls("eth_chainId") }
	seenA, since := -1, time.Now()
	settletest.Eventually(t, 15*time.Second, "A's probes stopped", func() (bool, error) {
		if n := countA(); n != seenA {
			seenA, since = n, time.Now()
		}
		return time.Since(since) >= 500*time.Millisecond, nil
	})
	served := paid(40, nodeB, nodeC)
	if n := countA(); n != seenA {
		t.Fatalf("A received %d calls after it left the pool", n-seenA)
	}
	// settlementd's prober runs (B is re-probed after the deregistration)
	// and neither probes A nor writes its record back.
	settletest.Eventually(t, 15*time.Second, "a node re-probe after the deregistration", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM nodes WHERE node_id = $1 AND last_probe_at > $2`, nodeB, deregAt) == 1, nil
	})
	if ok, err := rdb.HExists(ctx, prefix+registry.NodesKey, nodeA).Result(); err != nil || ok || !slices.Equal(members(), rest) {
		t.Fatalf("A came back: record %v (%v), pool %v", ok, err, members())
	}
	if n := proxies["A"].Calls("eth_chainId") + proxies["A"].Calls("eth_blockNumber"); n != seenA {
		t.Fatalf("A was called %d times after its deregistration", n-seenA)
	}
	lastPaid := time.Now()

	// --- Idempotent: the same node, the same time.
	again := e2eDo(t, http.MethodDelete, api+"/api/nodes/"+nodeA, "", auth1)
	var second listed
	if again.status != 200 || json.Unmarshal(again.body, &second) != nil || second.Status != "deregistered" ||
		second.DeregisteredAt == nil || *second.DeregisteredAt != *gone.DeregisteredAt {
		t.Fatalf("deregister A again: %d %s (first %s)", again.status, again.body, del.body)
	}
	if l := list(auth1); len(l) != 2 || l[0].Status != "deregistered" || l[1].Status != "online" {
		t.Fatalf("op1's nodes after the deregistration: %+v", l)
	}
	if st := e2eDo(t, http.MethodGet, api+"/api/status", "").obj(t); st["nodes_registered"].(float64) != 2 {
		t.Fatalf("status counts the deregistered node: %v", st)
	}

	// --- The epochs close: A gets exactly half of what it served before
	// its deregistration; B and C half of what they served.
	settletest.Eventually(t, 90*time.Second, "the epoch of the last paid call closed", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state = 'CLOSED' AND ends_at > $1`, lastPaid) > 0, nil
	})
	revenue := func(node string, after bool) int64 {
		cmp := "<"
		if after {
			cmp = ">="
		}
		return settletest.Count(t, pool, `SELECT COALESCE(sum(amount_units), 0) FROM revenue_events WHERE node_id = $1 AND ts `+cmp+` $2`, node, deregAt)
	}
	earned := func(node string) int64 {
		return settletest.Count(t, pool, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1 AND kind = 'epoch_share'`, node)
	}
	before, after := revenue(nodeA, false), revenue(nodeA, true)
	if before != int64(beforeCalls*30) || after != int64(gapCalls*30) || earned(nodeA) != before/2 {
		t.Fatalf("A: revenue %d before its deregistration, %d after, earned %d; want %d, %d, %d",
			before, after, earned(nodeA), beforeCalls*30, gapCalls*30, beforeCalls*30/2)
	}
	for _, n := range []string{nodeB, nodeC} {
		// Everything B and C served (no paid call reached them before).
		r := revenue(n, false) + revenue(n, true)
		if earned(n) != r/2 || r < int64(served[n]*30) {
			t.Fatalf("%s served at least %d calls: revenue %d, earned %d", n, served[n], r, earned(n))
		}
	}
	// The wallet still reads the deregistered node's earnings.
	e := e2eDo(t, http.MethodGet, api+"/api/nodes/"+nodeA+"/earnings", "", auth1)
	if e.status != 200 || e.obj(t)["total_earned_units"] != fmt.Sprint(beforeCalls*30/2) {
		t.Fatalf("A's earnings after its deregistration: %d %s", e.status, e.body)
	}
	if l := list(auth1); l[0].TotalEarnedUnits != fmt.Sprint(beforeCalls*30/2) {
		t.Fatalf("listed earnings of A: %+v", l[0])
	}
	if a := e2eDo(t, http.MethodGet, api+"/api/nodes/"+nodeA+"/earnings", "", auth2); a.status != 403 {
		t.Fatalf("another wallet reads A's earnings: %d %s", a.status, a.body)
	}
	t.Logf("A served %d paid calls before its deregistration and earned %d units; %d calls in the gap before the gateway's refresh earned it nothing; after it B and C served %v",
		beforeCalls, earned(nodeA), gapCalls, served)
	checkAnswersAgainstOpenAPI(t, api)
}
