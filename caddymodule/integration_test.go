package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// gatewayCaddyfile serves chain 137 from two providers, each a fault proxy in
// front of the real dev chain. Timings are short so breaker transitions
// happen within a test.
const gatewayCaddyfile = `{
	admin {ADMIN}
	metrics
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			max_body 64KiB
			max_batch 100
			request_timeout %s
			upstream_timeout %s
			max_attempts 3
			probe_interval 100ms
			lag_threshold 5
			breaker_failures 3
			breaker_open_for 1s
			finality_depth 2
			chain 137 {
				provider alpha %s
				provider beta %s
			}
		}
		respond 404
	}
}
`

type env struct {
	upTimeout   string
	net         *devnet.Devnet
	alpha, beta *faultproxy.Proxy
	gw          *caddyrun.Server
}

func startEnv(t *testing.T) *env { return startEnvWith(t, "400ms") }

// startEnvWith starts the dev chain, two fault proxies and the gateway with
// the given per-attempt upstream timeout.
func startEnvWith(t *testing.T, upstreamTimeout string) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e := &env{upTimeout: upstreamTimeout, net: d, alpha: faultproxy.New(d.Manifest.Polygon.RPCURL), beta: faultproxy.New(d.Manifest.Polygon.RPCURL)}
	t.Cleanup(e.alpha.Close)
	t.Cleanup(e.beta.Close)
	e.gw = caddyrun.Start(t, e.caddyfile("15s"))
	// Wait until both providers have been probed healthy.
	e.waitFor(t, "both providers healthy", func(s stats) bool {
		return s.health("alpha") == "healthy" && s.health("beta") == "healthy"
	})
	return e
}

func (e *env) caddyfile(requestTimeout string) string {
	return fmt.Sprintf(gatewayCaddyfile, requestTimeout, e.upTimeout, e.alpha.URL(), e.beta.URL())
}

type rpcResp struct {
	status int
	header http.Header
	body   []byte
}

func post(t *testing.T, url, body string) rpcResp {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rpcResp{resp.StatusCode, resp.Header, b}
}

type stats struct {
	Breakers []struct {
		Name, Kind, State, Health string
	} `json:"circuit_breakers"`
	Cache struct {
		Hits   uint64 `json:"hits"`
		Misses uint64 `json:"misses"`
	} `json:"cache"`
}

func (s stats) breaker(name string) string {
	for _, b := range s.Breakers {
		if b.Name == name {
			return b.State
		}
	}
	return ""
}

func (s stats) health(name string) string {
	for _, b := range s.Breakers {
		if b.Name == name {
			return b.Health
		}
	}
	return ""
}

func (e *env) stats(t *testing.T) stats {
	t.Helper()
	resp, err := http.Get(e.gw.URL() + "/rpc/stats/polygon")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// bestHead is chain 137's pool head as /rpc/health shows it.
func (e *env) bestHead(t *testing.T) uint64 {
	t.Helper()
	resp, err := http.Get(e.gw.URL() + "/rpc/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				BestHead uint64 `json:"best_head"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Chains {
		if c.ChainID == 137 {
			return c.Pool.BestHead
		}
	}
	return 0
}

// waitFor polls the stats endpoint until cond holds.
func (e *env) waitFor(t *testing.T, what string, cond func(stats) bool) {
	t.Helper()
	deadline := time.Now().Add(readyWithin)
	for {
		s := e.stats(t)
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stats %+v", what, s)
		}
		time.Sleep(20 * time.Millisecond) // polling observable state
	}
}

const getBalance = `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`

func TestBatchOrderAndIDs(t *testing.T) {
	e := startEnv(t)
	body := `[
		{"jsonrpc":"2.0","id":"first","method":"eth_chainId","params":[]},
		{"jsonrpc":"2.0","id":2.50,"method":"eth_blockNumber","params":[]},
		{"jsonrpc":"2.0","method":"eth_chainId","params":[]},
		{"jsonrpc":"1.0","id":4,"method":"eth_chainId"},
		{"jsonrpc":"2.0","id":null,"method":"net_version","params":[]},
		{"jsonrpc":"2.0","id":6,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}
	]`
	r := post(t, e.gw.URL()+"/rpc", body)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	wantIDs := []string{`"first"`, `2.50`, `4`, `null`, `6`} // the notification gets no answer
	if len(out) != len(wantIDs) {
		t.Fatalf("got %d answers, want %d: %s", len(out), len(wantIDs), r.body)
	}
	for i, id := range wantIDs {
		if string(out[i]["id"]) != id {
			t.Errorf("answer %d has id %s, want %s", i, out[i]["id"], id)
		}
	}
	if string(out[0]["result"]) != `"0x89"` || string(out[3]["result"]) != `"137"` {
		t.Errorf("wrong results: %s", r.body)
	}
	if !bytes.Contains(out[2]["error"], []byte("-32600")) {
		t.Errorf("invalid item not answered with -32600: %s", out[2]["error"])
	}

	// The request shows up in Prometheus metrics with bounded labels only.
	resp, err := http.Get("http://" + e.gw.AdminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`tollgate_gateway_rpc_requests_total{chain_id="137",outcome="ok"}`,
		`tollgate_gateway_rpc_calls_total{chain_id="137",method="eth_blockNumber",source="upstream"}`,
		`tollgate_gateway_rpc_calls_total{chain_id="137",method="eth_chainId",source="local"}`,
		`tollgate_gateway_upstream_breaker_state{chain_id="137",kind="provider",upstream="alpha"} 0`,
		`tollgate_gateway_rpc_request_duration_seconds_count{chain_id="137"}`,
	} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestMalformedInputs(t *testing.T) {
	e := startEnv(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":["` + strings.Repeat("a", 70<<10) + `"]}`
	var batch101 []string
	for i := range 101 {
		batch101 = append(batch101, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_chainId"}`, i))
	}
	cases := []struct {
		name, path, body string
		status           int
		code             string // JSON-RPC error code expected in the body ("" = none)
	}{
		{"not JSON", "/rpc", `{"jsonrpc":`, 400, "-32700"},
		{"garbage", "/rpc", `hello`, 400, "-32700"},
		{"empty body", "/rpc", ``, 400, "-32700"},
		{"invalid request", "/rpc", `{"jsonrpc":"2.0","id":1}`, 400, "-32600"},
		{"wrong version", "/rpc", `{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}`, 400, "-32600"},
		{"scalar", "/rpc", `42`, 400, "-32600"},
		{"empty batch", "/rpc", `[]`, 400, "-32600"},
		{"batch over limit", "/rpc", "[" + strings.Join(batch101, ",") + "]", 413, "-32600"},
		{"body over limit", "/rpc", big, 413, "-32600"},
		{"unknown chain", "/rpc/56", getBalance, 404, "-32601"},
		{"notification only", "/rpc", `{"jsonrpc":"2.0","method":"eth_chainId"}`, 204, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, e.gw.URL()+c.path, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.code == "" {
				if len(r.body) != 0 {
					t.Fatalf("expected no body, got %s", r.body)
				}
				return
			}
			var m struct {
				JSONRPC string `json:"jsonrpc"`
				ID      json.RawMessage
				Error   struct{ Code int }
			}
			if err := json.Unmarshal(r.body, &m); err != nil || m.JSONRPC != "2.0" || fmt.Sprint(m.Error.Code) != c.code {
				t.Fatalf("body %s, want a JSON-RPC error %s (%v)", r.body, c.code, err)
			}
		})
	}
	t.Run("GET /rpc", func(t *testing.T) {
		resp, err := http.Get(e.gw.URL() + "/rpc")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST, OPTIONS" {
			t.Fatalf("status %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
	t.Run("other chains are routed", func(t *testing.T) {
		// No provider is configured for 8453 here: the chain is known (not 404)
		// but nothing can serve it, which is a 503 with -32603.
		r := post(t, e.gw.URL()+"/rpc/8453", getBalance)
		if r.status != http.StatusServiceUnavailable || !bytes.Contains(r.body, []byte("-32603")) {
			t.Fatalf("status %d body %s", r.status, r.body)
		}
	})
}

func TestFailoverOn502AndTimeout(t *testing.T) {
	e := startEnv(t)
	for _, mode := range []faultproxy.Mode{faultproxy.Fail502, faultproxy.Hang} {
		e.alpha.SetMode(mode)
		e.beta.SetMode(faultproxy.Pass)
		for i := range 5 {
			r := post(t, e.gw.URL()+"/rpc", getBalance)
			if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"result"`)) {
				t.Fatalf("mode %d call %d: status %d body %s", mode, i, r.status, r.body)
			}
			if got := r.header.Get("X-Tollgate-Upstream"); got != "beta" {
				t.Fatalf("mode %d call %d served by %q, want beta", mode, i, got)
			}
		}
		e.alpha.SetMode(faultproxy.Pass)
		e.driveUntilClosed(t, "alpha")
	}
}

// driveUntilClosed sends calls until the named upstream's breaker is closed:
// only real traffic moves a breaker from half-open to closed (health probes
// deliberately do not feed it).
func (e *env) driveUntilClosed(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(readyWithin)
	for e.stats(t).breaker(name) != "closed" {
		post(t, e.gw.URL()+"/rpc", getBalance)
		if time.Now().After(deadline) {
			t.Fatalf("%s never closed: %+v", name, e.stats(t))
		}
	}
}

func TestBreakerOpensStopsTrafficAndRecovers(t *testing.T) {
	e := startEnv(t)
	e.beta.SetDelay(30 * time.Millisecond) // alpha is the faster, preferred provider
	// Its calls fail, its health probes pass: the breaker, not the health
	// check, is what must take it out of traffic. Which upstream a call
	// tries first follows the probes' latency, so call until it opens.
	e.alpha.SetMode(faultproxy.Fail502Calls)
	for deadline := time.Now().Add(10 * time.Second); e.stats(t).breaker("alpha") != "open"; {
		if r := post(t, e.gw.URL()+"/rpc", getBalance); r.status != http.StatusOK {
			t.Fatalf("status %d body %s", r.status, r.body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha breaker %q after 10 s of 502s, want open", e.stats(t).breaker("alpha"))
		}
	}
	// While open, no call reaches alpha.
	before := e.alpha.Calls("eth_getBalance")
	for range 10 {
		if r := post(t, e.gw.URL()+"/rpc", getBalance); r.status != http.StatusOK {
			t.Fatalf("status %d body %s", r.status, r.body)
		}
	}
	if got := e.alpha.Calls("eth_getBalance"); got != before {
		t.Fatalf("alpha received %d calls while its breaker was open", got-before)
	}
	// After breaker_open_for it lets a trial call through; once alpha works
	// again the breaker closes and alpha serves again.
	e.alpha.SetMode(faultproxy.Pass)
	e.waitFor(t, "alpha half-open", func(s stats) bool { return s.breaker("alpha") != "open" })
	e.driveUntilClosed(t, "alpha")
	servedByAlpha := false
	for range 20 {
		if post(t, e.gw.URL()+"/rpc", getBalance).header.Get("X-Tollgate-Upstream") == "alpha" {
			servedByAlpha = true
			break
		}
	}
	if !servedByAlpha {
		t.Fatal("recovered alpha never served again")
	}
}

func TestWrongChainAndLaggingAvoided(t *testing.T) {
	for _, mode := range []faultproxy.Mode{faultproxy.WrongChain, faultproxy.Lag} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			e := startEnv(t)
			e.beta.SetDelay(30 * time.Millisecond) // alpha would be preferred if it were usable
			e.alpha.SetMode(mode)
			want := "unhealthy"
			if mode == faultproxy.Lag {
				want = "lagging"
			}
			e.waitFor(t, "alpha "+want, func(s stats) bool { return s.health("alpha") == want })
			before := e.alpha.Calls("eth_getBalance")
			for range 10 {
				r := post(t, e.gw.URL()+"/rpc", getBalance)
				if r.status != http.StatusOK || r.header.Get("X-Tollgate-Upstream") != "beta" {
					t.Fatalf("status %d upstream %q", r.status, r.header.Get("X-Tollgate-Upstream"))
				}
			}
			if got := e.alpha.Calls("eth_getBalance"); got != before {
				t.Fatalf("%s upstream received %d calls", want, got-before)
			}
		})
	}
}

func TestCacheServesImmutableAnswersWithoutUpstream(t *testing.T) {
	e := startEnv(t)
	// Block 1 is final once the head is past finality_depth (2): wait for
	// the pool to have seen such a head, or the first answer is (rightly)
	// not kept.
	for deadline := time.Now().Add(10 * time.Second); e.bestHead(t) < 4; {
		if time.Now().After(deadline) {
			t.Fatal("the pool never saw block 4")
		}
		time.Sleep(20 * time.Millisecond) // waiting for blocks and a probe
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"eth_getBlockByNumber","params":["0x1",false]}`
	first := post(t, e.gw.URL()+"/rpc", body)
	if first.status != http.StatusOK || !bytes.Contains(first.body, []byte(`"number":"0x1"`)) {
		t.Fatalf("first call: %d %s", first.status, first.body)
	}
	upstreamCalls := e.alpha.Calls("eth_getBlockByNumber") + e.beta.Calls("eth_getBlockByNumber")
	before := e.stats(t).Cache.Hits
	for i := range 3 {
		r := post(t, e.gw.URL()+"/rpc", strings.Replace(body, `"id":7`, fmt.Sprintf(`"id":%d`, 100+i), 1))
		if r.status != http.StatusOK || r.header.Get("X-Tollgate-Upstream") != "cache" {
			t.Fatalf("call %d: %d upstream %q", i, r.status, r.header.Get("X-Tollgate-Upstream"))
		}
		if !bytes.Contains(r.body, []byte(fmt.Sprintf(`"id":%d`, 100+i))) {
			t.Fatalf("cached answer lost the caller's id: %s", r.body)
		}
	}
	if got := e.alpha.Calls("eth_getBlockByNumber") + e.beta.Calls("eth_getBlockByNumber"); got != upstreamCalls {
		t.Fatalf("cache hits reached an upstream (%d more calls)", got-upstreamCalls)
	}
	if hits := e.stats(t).Cache.Hits - before; hits != 3 {
		t.Fatalf("stats show %d new cache hits, want 3", hits)
	}
	// A batch mixing a cached call and a live one forwards only the live one.
	batch := `[` + body + `,{"jsonrpc":"2.0","id":8,"method":"eth_blockNumber","params":[]}]`
	r := post(t, e.gw.URL()+"/rpc", batch)
	if r.status != http.StatusOK || e.alpha.Calls("eth_getBlockByNumber")+e.beta.Calls("eth_getBlockByNumber") != upstreamCalls {
		t.Fatalf("mixed batch: %d %s", r.status, r.body)
	}
	// latest is never cached.
	latest := `{"jsonrpc":"2.0","id":9,"method":"eth_getBlockByNumber","params":["latest",false]}`
	post(t, e.gw.URL()+"/rpc", latest)
	if r := post(t, e.gw.URL()+"/rpc", latest); r.header.Get("X-Tollgate-Upstream") == "cache" {
		t.Fatal("latest was served from cache")
	}
}

func TestReloadKeepsBreakerStateAndInFlightRequests(t *testing.T) {
	e := startEnvWith(t, "5s") // the in-flight call below takes 1.5 s
	e.beta.SetDelay(30 * time.Millisecond)
	e.alpha.SetMode(faultproxy.Fail502Calls) // calls fail, probes pass: the breaker takes it out
	for deadline := time.Now().Add(10 * time.Second); e.stats(t).breaker("alpha") != "open"; {
		post(t, e.gw.URL()+"/rpc", getBalance)
		if time.Now().After(deadline) {
			t.Fatalf("alpha breaker %q, want open", e.stats(t).breaker("alpha"))
		}
	}
	failuresBefore := e.failures(t, "alpha")
	// A slow request is in flight while the config reloads.
	e.beta.SetDelay(1500 * time.Millisecond)
	seen := e.beta.Calls("eth_getBalance")
	var wg sync.WaitGroup
	var inflight rpcResp
	wg.Add(1)
	go func() {
		defer wg.Done()
		inflight = post(t, e.gw.URL()+"/rpc", getBalance)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for e.beta.Calls("eth_getBalance") == seen {
		if time.Now().After(deadline) {
			t.Fatal("slow request never reached beta")
		}
		time.Sleep(5 * time.Millisecond) // polling the proxy's counter
	}
	e.gw.Reload(e.caddyfile("20s")) // a real change; the pools' config is the same
	wg.Wait()
	if inflight.status != http.StatusOK || !bytes.Contains(inflight.body, []byte(`"result"`)) {
		t.Fatalf("in-flight request during reload: %d %s", inflight.status, inflight.body)
	}
	// A pool rebuilt by the reload would start closed with no history; the
	// kept one is still open or, its open period having passed during the
	// slow call, half-open — and it remembers alpha's failures.
	if st := e.stats(t).breaker("alpha"); st != "open" && st != "half-open" {
		t.Fatalf("after reload alpha breaker is %q: state was reset", st)
	}
	if after := e.failures(t, "alpha"); after < failuresBefore || failuresBefore == 0 {
		t.Fatalf("alpha failures %d before reload, %d after: history lost", failuresBefore, after)
	}
}

// failures reads an upstream's failure count from /rpc/health.
func (e *env) failures(t *testing.T, name string) uint64 {
	t.Helper()
	resp, err := http.Get(e.gw.URL() + "/rpc/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []struct {
					Name     string
					Failures uint64
				}
			} `json:"pool"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Chains {
		for _, u := range c.Pool.Upstreams {
			if c.ChainID == 137 && u.Name == name {
				return u.Failures
			}
		}
	}
	t.Fatalf("%s not in /rpc/health", name)
	return 0
}
