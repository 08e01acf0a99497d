package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWrongChainIsNeverUsed(t *testing.T) {
	a := newFakeRPC(t, "a", 1, 1000) // Ethereum mainnet in a Polygon pool
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(b)))
	setNodes(t, p, node(a))

	s := upstreamState(t, p, "a")
	if s.Healthy || !strings.Contains(s.HealthReason, "wrong chain id 1") {
		t.Fatalf("a state %+v", s)
	}
	for range 10 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
	// Not even as a last resort.
	b.setMode(mode502)
	if _, err := forward(t, p, balanceCall, ForwardOptions{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if a.calls.Load() != 0 {
		t.Fatalf("wrong-chain upstream got %d calls", a.calls.Load())
	}
	// Back on the right chain: healthy after HealthyAfter (2) good probes.
	a.chainID.Store(137)
	p.ProbeNow(context.Background())
	if upstreamState(t, p, "a").Healthy {
		t.Fatal("healthy after one good probe")
	}
	p.ProbeNow(context.Background())
	if s := upstreamState(t, p, "a"); !s.Healthy || s.HealthReason != "" {
		t.Fatalf("a state %+v", s)
	}
}

func TestLaggingIsAvoidedThenUsedAsFallback(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 900)
	b := newFakeRPC(t, "b", 137, 1000)
	c := newFakeRPC(t, "c", 137, 997) // within the 5-block threshold
	p := newTestPool(t, testConfig(provider(b)))
	setNodes(t, p, node(a), node(c))

	snap := p.Snapshot()
	if snap.BestHead != 1000 {
		t.Fatalf("best head %d", snap.BestHead)
	}
	if s := upstreamState(t, p, "a"); !s.Lagging || s.Lag != 100 || !s.Healthy {
		t.Fatalf("a state %+v", s)
	}
	if s := upstreamState(t, p, "c"); s.Lagging || s.Lag != 3 {
		t.Fatalf("c state %+v", s)
	}
	for range 10 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "c" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
	// With every in-sync upstream failing, the lagging one still serves.
	b.setMode(mode502)
	c.setMode(mode502)
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("served by %s", r.Upstream.Name)
	}
	// Catching up clears the flag.
	a.head.Store(1000)
	p.ProbeNow(context.Background())
	if upstreamState(t, p, "a").Lagging {
		t.Fatal("still lagging")
	}
}

func TestNodeCannotInflateReferenceHead(t *testing.T) {
	liar := newFakeRPC(t, "liar", 137, 1_000_000)
	honest := newFakeRPC(t, "honest", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(b)))
	setNodes(t, p, node(liar), node(honest))
	if snap := p.Snapshot(); snap.BestHead != 1000 {
		t.Fatalf("best head %d", snap.BestHead)
	}
	if upstreamState(t, p, "honest").Lagging {
		t.Fatal("honest node marked lagging by a node's claim")
	}
}

// TestFinalizedTagFromProvidersOnly: on a chain whose finality is its
// "finalized" tag, the pool's finalized head is the highest providers
// report, capped at the best head; a node's claim never counts (it would
// let the cache keep answers that may still change).
func TestFinalizedTagFromProvidersOnly(t *testing.T) {
	a, b := newFakeRPC(t, "a", 137, 1000), newFakeRPC(t, "b", 137, 1000)
	a.finalized.Store(900)
	b.finalized.Store(950)
	liar := newFakeRPC(t, "liar", 137, 1000)
	liar.finalized.Store(1000)
	cfg := testConfig(provider(a), provider(b))
	cfg.FinalizedTag = true
	p := newTestPool(t, cfg)
	setNodes(t, p, node(liar))
	p.ProbeNow(t.Context())
	if got := p.FinalizedHead(); got != 950 {
		t.Fatalf("finalized head %d, want 950", got)
	}
	b.finalized.Store(5000) // ahead of every head: capped
	p.ProbeNow(t.Context())
	if got := p.FinalizedHead(); got != 1000 {
		t.Fatalf("finalized head %d, want the best head 1000", got)
	}
	// Without the tag the pool never asks.
	plain := newTestPool(t, testConfig(provider(newFakeRPC(t, "c", 137, 1000))))
	untagged := cfg
	untagged.FinalizedTag = false
	if plain.FinalizedHead() != 0 || untagged.Key() == cfg.Key() {
		t.Fatal("a pool without FinalizedTag reports a finalized head, or the tag is not part of the key")
	}
}

func TestProbeHysteresis(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	a.setProbeMode(mode502)
	p := newTestPool(t, testConfig(provider(a)))
	// The loop's first round gives failure 1.
	waitFor(t, "first probe", 2*time.Second, func() bool { return upstreamState(t, p, "a").Probed })
	p.ProbeNow(context.Background()) // 2
	if !upstreamState(t, p, "a").Healthy {
		t.Fatal("unhealthy after 2 failed probes")
	}
	p.ProbeNow(context.Background()) // 3
	s := upstreamState(t, p, "a")
	if s.Healthy || s.HealthReason != "HTTP 502" || !strings.Contains(s.LastError, "probe: HTTP 502") {
		t.Fatalf("after 3 failed probes: %+v", s)
	}
	// Probe failures are not breaker failures.
	if s.Breaker != BreakerClosed || s.Failures != 0 {
		t.Fatalf("probe fed the breaker: %+v", s)
	}
	// Degrade gracefully: unhealthy is still tried when it is all there is.
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("served by %s", r.Upstream.Name)
	}

	a.setProbeMode(modeOK)
	p.ProbeNow(context.Background())
	if upstreamState(t, p, "a").Healthy {
		t.Fatal("healthy after 1 good probe")
	}
	p.ProbeNow(context.Background())
	if s := upstreamState(t, p, "a"); !s.Healthy || s.Head != 1000 || s.LatencySamples == 0 {
		t.Fatalf("after 2 good probes: %+v", s)
	}
}

func TestProbeFallsBackToSingleCalls(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 4242)
	a.noBatch.Store(true)
	p := newTestPool(t, Config{ChainID: 137, Providers: []Upstream{provider(a)}, ProbeInterval: time.Hour})
	p.ProbeNow(context.Background())
	p.ProbeNow(context.Background())
	s := upstreamState(t, p, "a")
	if !s.Healthy || s.Head != 4242 || s.LastError != "" {
		t.Fatalf("a state %+v", s)
	}
}

func TestDestructStopsProbes(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	baseline := runtime.NumGoroutine()

	cfg := testConfig(provider(a))
	cfg.ProbeInterval = 10 * time.Millisecond
	p, err := New(cfg)
	must(t, err)
	must(t, p.SetNodes([]Upstream{node(b)}))
	waitFor(t, "probes to run", 5*time.Second, func() bool { return a.probes.Load() >= 3 && b.probes.Load() >= 3 })
	mustForward(t, p, balanceCall)

	must(t, p.Destruct())
	must(t, p.Destruct()) // idempotent
	waitFor(t, "goroutines to end", 5*time.Second, func() bool { return runtime.NumGoroutine() <= baseline })
	// Counted once the probe loops have ended: a probe already on the wire
	// when Destruct ran may still land (it was sent before); none may start.
	stoppedA, stoppedB := a.probes.Load(), b.probes.Load()
	// Absence cannot be polled for: give the loop 20 intervals to misbehave.
	time.Sleep(200 * time.Millisecond)
	if a.probes.Load() != stoppedA || b.probes.Load() != stoppedB {
		t.Fatalf("probes continued after Destruct: a %d→%d, b %d→%d", stoppedA, a.probes.Load(), stoppedB, b.probes.Load())
	}
	// Calls in flight on an old config still work after Destruct.
	if r := mustForward(t, p, balanceCall); r.Upstream.Name == "" {
		t.Fatal("no upstream")
	}
}

func TestProbeLoopRunsOnItsOwn(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	cfg := testConfig(provider(a))
	cfg.ProbeInterval = 10 * time.Millisecond
	p := newTestPool(t, cfg)
	waitFor(t, "probe loop", 5*time.Second, func() bool { return a.probes.Load() >= 3 })
	a.head.Store(1100)
	waitFor(t, "new head", 5*time.Second, func() bool { return p.Snapshot().BestHead == 1100 })
}

func TestProbeRPCErrors(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	a.setProbeMode(modeRPCLimited)
	cfg := Config{ChainID: 137, Providers: []Upstream{provider(a)}, ProbeInterval: time.Hour, RateLimitBackoff: time.Minute}
	p := newTestPool(t, cfg)
	for range 3 {
		p.ProbeNow(context.Background())
	}
	// A throttled probe backs off but is not a health failure.
	if s := upstreamState(t, p, "a"); !s.Healthy || !s.RateLimited {
		t.Fatalf("throttled probes: %+v", s)
	}
	a.setProbeMode(modeRPCFault)
	for range 3 {
		p.ProbeNow(context.Background())
	}
	if s := upstreamState(t, p, "a"); s.Healthy || !strings.Contains(s.HealthReason, "eth_chainId: JSON-RPC error -32603") {
		t.Fatalf("failing probes: %+v", s)
	}
}

// TestLogsRangeProbe: the probe finds the widest eth_getLogs range each
// upstream serves (a provider's "max block range" refusal moves it down the
// rungs), /rpc/health shows it, and a call spanning more than an upstream
// serves goes to one that serves it — while a narrow call may go to either,
// and with no upstream wide enough, any is asked.
func TestLogsRangeProbe(t *testing.T) {
	narrow := newFakeRPC(t, "narrow", 137, 20_000)
	narrow.logsLimit.Store(500)
	wide := newFakeRPC(t, "wide", 137, 20_000)
	wide.logsLimit.Store(100_000)
	none := newFakeRPC(t, "none", 137, 20_000) // eth_getLogs does not exist there
	// The narrow upstream is the fastest, so it is picked first when it may be.
	wide.delay.Store(int64(20 * time.Millisecond))
	none.delay.Store(int64(20 * time.Millisecond))
	p := newTestPool(t, testConfig(provider(narrow), provider(wide), provider(none)))
	range_ := func(name string) *uint64 { return upstreamState(t, p, name).LogsRange }
	waitFor(t, "logs ranges probed", 5*time.Second, func() bool {
		return range_("narrow") != nil && range_("wide") != nil && range_("none") != nil
	})
	if n, w, z := *range_("narrow"), *range_("wide"), *range_("none"); n != 500 || w != 10_000 || z != 0 {
		t.Fatalf("logs ranges: narrow %d, wide %d, none %d; want 500, 10000, 0", n, w, z)
	}
	logs := `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x7d0"}]}`
	for i := range 10 {
		res, err := forward(t, p, logs, ForwardOptions{LogsSpan: 2000})
		if err != nil || res.Upstream.Name != "wide" {
			t.Fatalf("2,000-block call %d went to %q (%v)", i, res.Upstream.Name, err)
		}
	}
	waitFor(t, "a narrow call on the fastest upstream", 5*time.Second, func() bool {
		res, err := forward(t, p, logs, ForwardOptions{LogsSpan: 100})
		return err == nil && res.Upstream.Name == "narrow"
	})
	// Wider than anyone serves: still asked (the node's own refusal is the
	// call's answer), never refused by the pool.
	if _, err := forward(t, p, logs, ForwardOptions{LogsSpan: 50_000}); err != nil {
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.LastReply == nil {
			t.Fatalf("50,000-block call: %v", err)
		}
	}
}

// The probe reads an upstream's eth_chainId and eth_blockNumber with the
// one quantity reader (ethparse.Quantity), as it read them before: 0x or
// 0X, leading zeros taken however many, 64 bits; anything else is an
// error, never a zero that would look like a chain or a head.
func TestProbeQuantity(t *testing.T) {
	for in, want := range map[string]uint64{
		`"0x89"`: 137, `"0X89"`: 137, `"0x0089"`: 137, `"0x` + strings.Repeat("0", 17) + `1"`: 1,
		`"0xffffffffffffffff"`: 1<<64 - 1,
	} {
		if got, err := hexQuantity(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{`"0x"`, `"89"`, `""`, `137`, `null`, `"0x1ffffffffffffffff"`, `"0xg1"`, `"0x-1"`, `"0x_1"`} {
		if got, err := hexQuantity(json.RawMessage(in)); err == nil {
			t.Errorf("%s read as %d", in, got)
		}
	}
}
