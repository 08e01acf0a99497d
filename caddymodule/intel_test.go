package caddymodule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/intel"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// concretePath fills a documented path's parameters with values our router
// serves (or answers itself, e.g. an unknown key id).
func concretePath(p string) string {
	return strings.NewReplacer("{chain}", "137", "{metric}", intel.FundingHeatmap, "{key_id}", "key_01JABCDEFGHJKMNPQRSTVWXYZ0",
		"{action}", "revoke", "{upstream}", "alpha").Replace(p)
}

// fellThrough reports whether the gateway passed the request on to the
// Caddyfile's next handler (`respond 404`: empty body) instead of answering.
func fellThrough(a answer) bool { return a.status == http.StatusNotFound && len(a.body) == 0 }

// TestServiceJSONListsEveryRoute: /.well-known/service.json lists exactly
// the route table ServeHTTP dispatches with, each listed route is answered
// by the gateway itself, a path outside the table falls through, and the
// document carries the running configuration's prices and ways to pay.
func TestServiceJSONListsEveryRoute(t *testing.T) {
	e := startMetered(t, meterOpts{free: 5, subnet: 100, adminToken: "an-admin-token-for-tests-0123456789"})
	a := e.do(t, http.MethodGet, "/.well-known/service.json", "")
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("service.json: %d %s", a.status, a.body)
	}
	var doc struct {
		BaseURL   string `json:"base_url"`
		Services  []map[string]any
		Endpoints []struct{ Method, Path, Auth, Summary string }
		Payment   map[string]map[string]any
		Links     map[string]string
	}
	if err := json.Unmarshal(a.body, &doc); err != nil {
		t.Fatal(err)
	}
	table := caddymodule.RouteTable()
	if len(doc.Endpoints) != len(table) {
		t.Fatalf("service.json lists %d endpoints, the router has %d routes", len(doc.Endpoints), len(table))
	}
	for i, rt := range table {
		ep := doc.Endpoints[i]
		if ep.Method != rt[0] || ep.Path != rt[1] || ep.Auth == "" || ep.Summary == "" {
			t.Fatalf("endpoint %d: listed %+v, router %v", i, ep, rt)
		}
		got := e.do(t, ep.Method, concretePath(ep.Path), "", "X-Admin-Token: wrong")
		if fellThrough(got) {
			t.Errorf("%s %s is listed but the gateway does not serve it", ep.Method, ep.Path)
		}
	}
	for _, p := range []string{"/nope", "/admin/settlement", "/api/status", "/health", "/v1/other"} {
		if got := e.do(t, http.MethodGet, p, ""); !fellThrough(got) {
			t.Errorf("%s is not in the table but the gateway answered %d %s", p, got.status, got.body)
		}
	}
	// Every documented route that the gateway owns is in the table.
	want := []string{"/rpc", "/rpc/{chain}", "/rpc/health", "/rpc/stats/{chain}", "/api/keys", "/api/keys/usage", "/v1/machine/register",
		"/credits/initiate", "/credits/deposit/initiate", "/stats/free-tier", "/.well-known/service.json", "/v1/intelligence",
		"/v1/intelligence/{metric}", "/openapi.yaml"}
	listed := map[string]bool{}
	for _, ep := range doc.Endpoints {
		listed[ep.Path] = true
	}
	for _, p := range want {
		if !listed[p] {
			t.Errorf("%s missing from service.json", p)
		}
	}

	// Services: one RPC service per supported chain, and the metric, priced.
	ids := map[string]map[string]any{}
	for _, s := range doc.Services {
		ids[s["id"].(string)] = s
	}
	for _, id := range []string{"rpc-polygon", "rpc-ethereum", "rpc-arbitrum", "rpc-base", "rpc-amoy", intel.FundingHeatmap} {
		if ids[id] == nil {
			t.Fatalf("service %s missing: %v", id, ids)
		}
	}
	price := func(id string) string {
		p := ids[id]["price"].(map[string]any)
		return fmt.Sprint(p["usdt"], "/", p["units"])
	}
	if price("rpc-polygon") != "3e-05/30" || price(intel.FundingHeatmap) != "0.001/1000" || ids["rpc-polygon"]["path"] != "/rpc" || ids["rpc-base"]["path"] != "/rpc/8453" {
		t.Fatalf("prices/paths: %v %v %v", price("rpc-polygon"), price(intel.FundingHeatmap), ids["rpc-polygon"])
	}
	// Ways to pay, from the running configuration.
	free, credits, x402 := doc.Payment["free_tier"], doc.Payment["api_key_credits"], doc.Payment["x402"]
	if free["daily_limit_per_ip"] != 5.0 || free["subnet_limit"] != 100.0 || free["limits_source"] != "in_force" {
		t.Fatalf("free tier %v", free)
	}
	m := e.net.Manifest
	if !strings.EqualFold(credits["vault_address"].(string), m.Polygon.RevenueVault) || !strings.EqualFold(credits["usdt_address"].(string), m.Polygon.USDT) ||
		credits["minimum_deposit_units"] != "1000000" || credits["confirmations"] != 25.0 || credits["chain_id"] != 137.0 {
		t.Fatalf("credits %v", credits)
	}
	if x402["network"] != "eip155:8453" || !strings.EqualFold(x402["asset"].(string), m.Base.USDC) || x402["bundle_price_units"] != "100000" ||
		x402["bundle_calls"] != 1000.0 || x402["facilitator_url"] != nil {
		t.Fatalf("x402 %v", x402)
	}
	for _, k := range []string{"status", "health", "rpc_health", "catalog", "openapi"} {
		if !strings.HasPrefix(doc.Links[k], doc.BaseURL+"/") {
			t.Fatalf("link %s: %v", k, doc.Links)
		}
	}
	// An operator's runtime free-tier limit is what service.json reports.
	if err := e.rdb.HSet(context.Background(), e.layout.FreeConfig(), balances.FreeConfigIP, 7).Err(); err != nil {
		t.Fatal(err)
	}
	if a = e.do(t, http.MethodGet, "/.well-known/service.json", ""); !strings.Contains(string(a.body), `"daily_limit_per_ip":7`) {
		t.Fatalf("runtime limit not reported: %s", a.body)
	}
}

// publishHeatmap writes a heatmap as settlementd's job does: BTCUSDT and
// ETHUSDT on binance and bybit, generated at gen.
func publishHeatmap(t *testing.T, e *meterEnv, gen time.Time, binanceStale bool) {
	t.Helper()
	ok := gen.Add(-time.Minute)
	hm := intel.Heatmap{GeneratedAt: gen, PollIntervalS: 60, Symbols: []string{"BTCUSDT", "ETHUSDT"},
		Venues:  map[string]intel.VenueStatus{"binance": {LastSuccess: &ok, LastAttempt: &gen, Stale: binanceStale}, "bybit": {LastSuccess: &gen, LastAttempt: &gen}},
		Windows: map[string]intel.Grid{}}
	for _, w := range intel.Windows {
		n := int(w.Span / w.Bucket)
		g := intel.Grid{BucketSeconds: int64(w.Bucket / time.Second), Rates: map[string]map[string][]*intel.Rate{}}
		for i := range n {
			g.Buckets = append(g.Buckets, gen.Truncate(w.Bucket).Add(-time.Duration(n-1-i)*w.Bucket))
		}
		for si, s := range hm.Symbols {
			g.Rates[s] = map[string][]*intel.Rate{}
			for vi, v := range []string{"binance", "bybit"} {
				cells := make([]*intel.Rate, n)
				cells[n-1] = intel.NewRate(int64(100_000 * (si + 1) * (1 - 2*vi))) // BTC binance 0.0001, BTC bybit -0.0001, ETH ×2
				g.Rates[s][v] = cells
			}
		}
		hm.Windows[w.Name] = g
	}
	b, _ := json.Marshal(hm)
	if err := e.rdb.Set(context.Background(), intel.LatestKey(e.prefix), b, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestHeatmapMeteredAtItsPrice: the heatmap is paid from credits at its own
// price through the metering script (debit and revenue event of 1,000
// units), /rpc stays at 30 units, unpaid callers get the 402 onboarding
// body, bad parameters are 400s naming the parameter without a charge,
// stale data says so, and no data is a 503 with the debit refunded.
func TestHeatmapMeteredAtItsPrice(t *testing.T) {
	e := startMetered(t, meterOpts{free: 5, subnet: 100})
	ctx := context.Background()
	const path = "/v1/intelligence/" + intel.FundingHeatmap
	publishHeatmap(t, e, time.Now().UTC(), false)
	bal := func(id string) money.Units {
		t.Helper()
		b, err := balances.BalanceAt(ctx, e.rdb, e.layout, id)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Unpaid: no key, and a key without credits (the free tier does not pay for metrics).
	for _, hdr := range [][]string{nil, {"X-API-Key: " + func() string { k, _ := e.createKey(t); return k }()}} {
		a := e.do(t, http.MethodGet, path, "", hdr...)
		if a.status != http.StatusPaymentRequired || a.header.Get("PAYMENT-REQUIRED") == "" {
			t.Fatalf("unpaid: %d %s", a.status, a.body)
		}
		m := a.json(t)
		ob, _ := m["onboarding"].(map[string]any)
		if m["x402Version"] != 1.0 || ob == nil || ob["minimum_deposit_units"] != "1000000" ||
			!strings.HasSuffix(ob["register"].(map[string]any)["url"].(string), "/v1/machine/register") ||
			!strings.Contains(ob["deposit_calldata"].(map[string]any)["url"].(string), "/credits/initiate") || len(ob["examples"].([]any)) < 3 ||
			!strings.Contains(m["error"].(string), "credits") {
			t.Fatalf("402 body: %s", a.body)
		}
	}
	if a := e.do(t, http.MethodGet, path, "", "X-API-Key: tg_short"); a.status != http.StatusUnauthorized {
		t.Fatalf("malformed key: %d %s", a.status, a.body)
	}

	key, id := e.createKey(t)
	e.credit(t, id, 10_000)
	k := "X-API-Key: " + key

	// Paid: 1,000 units debited, the answer filtered as asked.
	a := e.do(t, http.MethodGet, path+"?symbols=btcusdt&venues=bybit,binance&window=1h", "", k)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" || a.header.Get("X-Tollgate-Credits-Remaining") != "0.009" {
		t.Fatalf("paid: %d %v %s", a.status, a.header, a.body)
	}
	var hm struct {
		Stale         bool
		Window        string
		BucketSeconds int64 `json:"bucket_seconds"`
		Buckets       []string
		Symbols       []string
		Venues        []struct {
			Venue string
			Stale bool
		}
		Rates map[string]map[string][]*intel.Rate
		Price struct{ Units string }
	}
	if err := json.Unmarshal(a.body, &hm); err != nil {
		t.Fatal(err)
	}
	last := len(hm.Buckets) - 1
	if hm.Stale || hm.Window != "1h" || hm.BucketSeconds != 300 || len(hm.Buckets) != 12 || len(hm.Rates) != 1 || len(hm.Rates["BTCUSDT"]) != 2 ||
		hm.Rates["BTCUSDT"]["bybit"][last].Decimal != "-0.0001" || hm.Rates["BTCUSDT"]["binance"][last].PPB != 100_000 ||
		hm.Rates["BTCUSDT"]["binance"][0] != nil || hm.Price.Units != "1000" || len(hm.Venues) != 2 || hm.Venues[0].Venue != "bybit" {
		t.Fatalf("heatmap: %s", a.body)
	}
	if bal(id) != 9_000 {
		t.Fatalf("balance %d after one heatmap call, want 9000", bal(id))
	}
	rid := a.header.Get("X-Tollgate-Request-Id")
	rev := e.revenues(t, 1)[rid]
	if rev == nil || rev.Amount != 1_000 || rev.Payer != events.PayerCredits || rev.Account != id || rev.Calls != 1 || rev.ChainID != 137 || rev.Method != "funding_rate_heatmap" {
		t.Fatalf("revenue event %+v", rev)
	}
	var debit *events.Debit
	for _, ev := range e.stream(t) {
		if d, ok := ev.(*events.Debit); ok && d.ID == rid {
			debit = d
		}
	}
	if debit == nil || debit.Amount != 1_000 || debit.Account != id {
		t.Fatalf("debit event %+v", debit)
	}

	// /rpc with the same key still costs 30 units.
	if a := e.rpc(t, blockNumber, k); a.status != http.StatusOK || bal(id) != 8_970 {
		t.Fatalf("rpc: %d, balance %d", a.status, bal(id))
	}

	// Bad parameters: 400 naming the parameter; syntax errors cost nothing,
	// unknown names are refunded.
	for q, field := range map[string]string{
		"?window=2h": "window", "?symbols=" + strings.Repeat("BTCUSDT,", 21): "symbols", "?symbols=BTC/USDT": "symbols",
		"?venues=bin%20ance": "venues", "?symbols=DOGEUSDT": "symbols", "?venues=okx": "venues",
	} {
		a := e.do(t, http.MethodGet, path+q, "", k)
		if code, f, _ := errorField(t, a); a.status != http.StatusBadRequest || f != field || code != "invalid_parameter" {
			t.Fatalf("%s: %d %s", q, a.status, a.body)
		}
	}
	if bal(id) != 8_970 {
		t.Fatalf("bad requests charged: balance %d", bal(id))
	}

	// Stale data is labelled stale, with its age; a stale venue too.
	publishHeatmap(t, e, time.Now().UTC().Add(-10*time.Minute), false)
	a = e.do(t, http.MethodGet, path, "", k)
	m := a.json(t)
	if a.status != http.StatusOK || m["stale"] != true || m["age_seconds"].(float64) < 599 || m["window"] != intel.DefaultWindow {
		t.Fatalf("stale: %d %s", a.status, a.body)
	}
	publishHeatmap(t, e, time.Now().UTC(), true)
	a = e.do(t, http.MethodGet, path+"?venues=bybit", "", k)
	if m = a.json(t); m["stale"] != false {
		t.Fatalf("fresh venue: %s", a.body)
	}
	a = e.do(t, http.MethodGet, path+"?venues=binance", "", k)
	if m = a.json(t); m["stale"] != true {
		t.Fatalf("stale venue presented as fresh: %s", a.body)
	}
	if bal(id) != 8_970-3_000 {
		t.Fatalf("balance %d", bal(id))
	}

	// No data: 503, refunded.
	if err := e.rdb.Del(ctx, intel.LatestKey(e.prefix)).Err(); err != nil {
		t.Fatal(err)
	}
	a = e.do(t, http.MethodGet, path, "", k)
	if code, _, _ := errorField(t, a); a.status != http.StatusServiceUnavailable || code != "no_data" || bal(id) != 5_970 {
		t.Fatalf("no data: %d %s, balance %d", a.status, a.body, bal(id))
	}
	// HEAD is refused (it would be charged for nothing).
	if a = e.do(t, http.MethodHead, path, "", k); a.status != http.StatusMethodNotAllowed || bal(id) != 5_970 {
		t.Fatalf("HEAD: %d, balance %d", a.status, bal(id))
	}
	// Unknown metric: 404 from our router, no charge.
	if a = e.do(t, http.MethodGet, "/v1/intelligence/nope", "", k); a.status != http.StatusNotFound || fellThrough(a) || bal(id) != 5_970 {
		t.Fatalf("unknown metric: %d %s", a.status, a.body)
	}

	// The catalog: price, interval and freshness (no data now).
	a = e.do(t, http.MethodGet, "/v1/intelligence", "")
	var cat struct {
		Metrics []struct {
			ID, Path string
			Price    struct {
				USDT  float64
				Units string
			}
			Interval  int64 `json:"update_interval_seconds"`
			Freshness map[string]any
		}
	}
	if err := json.Unmarshal(a.body, &cat); err != nil || len(cat.Metrics) != 1 {
		t.Fatalf("catalog: %s", a.body)
	}
	c := cat.Metrics[0]
	if c.ID != intel.FundingHeatmap || c.Path != path || c.Price.Units != "1000" || c.Price.USDT != 0.001 || c.Interval != 60 ||
		c.Freshness["available"] != false || c.Freshness["stale"] != true {
		t.Fatalf("catalog entry %+v", c)
	}
	publishHeatmap(t, e, time.Now().UTC(), false)
	a = e.do(t, http.MethodGet, "/v1/intelligence", "")
	if err := json.Unmarshal(a.body, &cat); err != nil || cat.Metrics[0].Freshness["stale"] != false || cat.Metrics[0].Freshness["last_updated"] == nil {
		t.Fatalf("catalog with data: %s", a.body)
	}
}
