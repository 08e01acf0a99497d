package upstream

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNodesPreferredAndTrafficSpread(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	n1 := newFakeRPC(t, "n1", 137, 1000)
	n2 := newFakeRPC(t, "n2", 137, 1000)
	p := newTestPool(t, testConfig(provider(prov)))
	setNodes(t, p, node(n1), node(n2))

	served := map[string]int{}
	for range 300 {
		r := mustForward(t, p, balanceCall)
		served[r.Upstream.Name]++
		if r.Upstream.Kind == KindNode && r.Upstream.EventName() != "NODE-EU-"+strings.ToUpper(r.Upstream.Name) {
			t.Fatalf("event name %q", r.Upstream.EventName())
		}
	}
	if served["prov"] != 0 || prov.calls.Load() != 0 {
		t.Fatalf("provider served %d calls while nodes were healthy", served["prov"])
	}
	// Both nodes earn. (Weighted by inverse latency; both are loopback,
	// so each should get far more than this floor.)
	if served["n1"] < 30 || served["n2"] < 30 {
		t.Fatalf("uneven spread: %v", served)
	}

	// Providers are the fallback.
	n1.setMode(mode502)
	n2.setMode(mode502)
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "prov" || r.Upstream.EventName() != "prov" {
		t.Fatalf("served by %s", r.Upstream.Name)
	}
}

func TestWeightShiftsTraffic(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	n1 := newFakeRPC(t, "n1", 137, 1000)
	n2 := newFakeRPC(t, "n2", 137, 1000)
	cfg := testConfig(provider(prov))
	// No hedges: on a busy machine n1 may take longer than the hedge
	// delay, and a hedge to n2 would win a call the weights gave n1.
	cfg.Hedge.Off = true
	p := newTestPool(t, cfg)
	u1, u2 := node(n1), node(n2)
	u2.Weight = 1e-6 // effectively off, but still a candidate
	setNodes(t, p, u1, u2)
	for range 50 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "n1" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
}

func TestProvidersFastestFirst(t *testing.T) {
	fast := newFakeRPC(t, "fast", 137, 1000)
	slow := newFakeRPC(t, "slow", 137, 1000)
	slow.delay.Store(int64(30 * time.Millisecond))
	p := newTestPool(t, testConfig(provider(slow), provider(fast)))
	p.ProbeNow(context.Background())
	for range 10 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "fast" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
	if ref, ok := p.Pick(map[string]bool{"fast": true}); !ok || ref.Name != "slow" {
		t.Fatalf("Pick with exclude: %+v %v", ref, ok)
	}
	if _, ok := p.Pick(map[string]bool{"fast": true, "slow": true}); ok {
		t.Fatal("Pick found an excluded upstream")
	}
}

func TestNewNodesWaitForFirstProbe(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	n1 := newFakeRPC(t, "n1", 137, 1000)
	p := newTestPool(t, Config{ChainID: 137, Providers: []Upstream{provider(prov)}, ProbeInterval: time.Hour})
	p.ProbeNow(context.Background())
	n1.setProbeMode(modeHang) // its first probe will not finish for a while
	must(t, p.SetNodes([]Upstream{node(n1)}))
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "prov" {
		t.Fatalf("unprobed node served before the probed provider: %s", r.Upstream.Name)
	}
}

func TestSetNodesKeepsState(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	c := newFakeRPC(t, "c", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.Breaker.OpenTimeout = time.Minute
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	a.setMode(mode502)
	for range 5 {
		mustForward(t, p, balanceCall)
	}
	if upstreamState(t, p, "a").Breaker != BreakerOpen {
		t.Fatal("breaker did not open")
	}

	// a stays (new weight), c joins: a keeps breaker and stats.
	ua := node(a)
	ua.Weight = 3
	setNodes(t, p, ua, node(c))
	s := upstreamState(t, p, "a")
	if s.Breaker != BreakerOpen || s.Failures != 5 {
		t.Fatalf("a lost its state: %+v", s)
	}
	if got := len(p.Snapshot().Upstreams); got != 3 {
		t.Fatalf("%d upstreams", got)
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "c" {
		t.Fatalf("served by %s", r.Upstream.Name)
	}

	// A bad entry is reported and skipped; the rest is applied.
	err := p.SetNodes([]Upstream{node(a), {Name: "broken", URL: c.srv.URL}, {NodeID: "NODE-X", URL: "ftp://x"}, node(a)})
	if err == nil || !strings.Contains(err.Error(), "node without node id") || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("err = %v", err)
	}
	if got := len(p.Snapshot().Upstreams); got != 2 || upstreamState(t, p, "a").Breaker != BreakerOpen {
		t.Fatalf("after partial update: %+v", p.Snapshot())
	}

	// A node that moved to another URL starts afresh.
	moved := node(a)
	moved.URL = c.srv.URL
	setNodes(t, p, moved)
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerClosed || s.Failures != 0 {
		t.Fatalf("moved node kept old state: %+v", s)
	}

	// Removing every node leaves the providers.
	must(t, p.SetNodes(nil))
	if snap := p.Snapshot(); len(snap.Upstreams) != 1 || snap.Upstreams[0].Name != "b" {
		t.Fatalf("after removal: %+v", snap.Upstreams)
	}
	// A node may not take a provider's name or claim another chain.
	if err := p.SetNodes([]Upstream{{Name: "b", NodeID: "NODE-EU-B", URL: c.srv.URL}, {NodeID: "NODE-EU-Z", URL: c.srv.URL, ChainID: 1}}); err == nil {
		t.Fatal("no error")
	}
	if len(p.Snapshot().Upstreams) != 1 {
		t.Fatal("invalid nodes were added")
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{ChainID: 137, Providers: []Upstream{{URL: "http://x"}}},
		{ChainID: 137, Providers: []Upstream{{Name: "a", URL: "x"}}},
		{ChainID: 137, Providers: []Upstream{{Name: "a", URL: "http://x", Kind: KindNode}}},
		{ChainID: 137, Providers: []Upstream{{Name: "a", URL: "http://x"}, {Name: "a", URL: "http://y"}}},
		{ChainID: 137, Providers: []Upstream{{Name: "a", URL: "http://x", Weight: -1}}},
	} {
		if p, err := New(cfg); err == nil {
			p.Destruct()
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestKey(t *testing.T) {
	base := func() Config {
		return Config{ChainID: 137, Providers: []Upstream{{
			Name: "alchemy", URL: "https://polygon.example.com/v2/SECRETKEY",
			Headers: map[string]string{"authorization": "Bearer TOKENSECRET"},
		}}}
	}
	k := base().Key()
	if k != base().Key() {
		t.Fatal("key not stable")
	}
	if strings.Contains(k, "SECRET") || !strings.HasPrefix(k, "upstream-pool/137/") {
		t.Fatalf("key %q", k)
	}
	// Same pool spelled differently: same key.
	same := base()
	same.Providers[0].Kind = KindProvider
	same.Providers[0].Weight = 1
	same.Providers[0].Headers = map[string]string{"Authorization": "Bearer TOKENSECRET"}
	same.ProbeInterval = DefaultProbeInterval
	same.Classifier = func(RPCError) Verdict { return VerdictOK }
	same.Transport.NodeAddress = func(netip.Addr) error { return nil } // described by NodePolicy, not hashed
	if same.Key() != k {
		t.Fatal("equivalent config gave another key")
	}
	changes := []func(*Config){
		func(c *Config) { c.ChainID = 1 },
		func(c *Config) { c.Providers[0].URL = "https://polygon.example.com/v2/OTHERKEY" },
		func(c *Config) { c.Providers[0].Headers["authorization"] = "Bearer NEW" },
		func(c *Config) { c.Providers = append(c.Providers, Upstream{Name: "b", URL: "https://b.example.com"}) },
		func(c *Config) { c.Breaker.OpenTimeout = time.Second },
		func(c *Config) { c.LagThreshold = 10 },
		func(c *Config) { c.Transport.MaxIdleConnsPerHost = 8 },
		func(c *Config) { c.Transport.NodePolicy = "private=true" },
	}
	for i, change := range changes {
		c := base()
		change(&c)
		if c.Key() == k {
			t.Errorf("change %d kept the key", i)
		}
	}
	p := newTestPool(t, base())
	if p.Key() != k || p.ChainID() != 137 {
		t.Fatalf("pool key %q", p.Key())
	}
}

// TestConcurrentUse runs calls, membership changes, snapshots and probes
// together for the race detector.
func TestConcurrentUse(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	var nodes []Upstream
	for i := range 4 {
		nodes = append(nodes, node(newFakeRPC(t, fmt.Sprintf("n%d", i), 137, 1000)))
	}
	cfg := testConfig(provider(prov))
	cfg.ProbeInterval = 5 * time.Millisecond
	p := newTestPool(t, cfg)

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 8 {
		wg.Go(func() {
			for range 40 {
				if _, err := p.Forward(context.Background(), []byte(balanceCall), ForwardOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 40 {
			if err := p.SetNodes(nodes[:i%len(nodes)+1]); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		for range 40 {
			_ = p.Snapshot()
			p.Pick(nil)
		}
	})
	wg.Go(func() { p.ProbeNow(context.Background()) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
