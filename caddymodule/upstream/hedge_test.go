package upstream

import (
	"context"
	"testing"
	"time"
)

// A read whose first upstream is slow goes to a second one after the hedge
// delay; the fast answer wins, the slow attempt is cancelled, and the pool
// counts the hedge. The slow upstream's latency still reaches selection.
func TestHedgedReadWinsAndIsCounted(t *testing.T) {
	slow := newFakeRPC(t, "slow", 137, 1000)
	fast := newFakeRPC(t, "fast", 137, 1000)
	cfg := testConfig(provider(slow), provider(fast))
	cfg.Hedge = HedgeConfig{Floor: 10 * time.Millisecond, Ceiling: 30 * time.Millisecond, MaxShare: 1}
	cfg.AttemptTimeout = 30 * time.Second // slow's 3 s, not the attempt timeout, is what the hedge must beat
	p := newTestPool(t, cfg)
	// Teach the pool that slow is the faster one (by far more than a busy
	// machine's noise), then slow it down.
	fast.delay.Store(int64(50 * time.Millisecond))
	for range 20 {
		mustForward(t, p, balanceCall)
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "slow" {
		t.Fatalf("the test wants slow picked first, got %s", r.Upstream.Name)
	}
	// Slow by far more than a busy machine stalls, so only the hedge can
	// answer first; the training reads above may have been hedged too (a
	// stall past the 10 ms floor), so hedges are counted from here.
	// A hedge goes only to an upstream in the ideal tier: fast's first
	// probe (slowed by its delay) must have finished, which the quick
	// training reads above do not wait for.
	p.ProbeNow(context.Background())
	slow.delay.Store(int64(3 * time.Second))
	fast.delay.Store(0)
	before := p.Hedges()
	start := time.Now()
	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "fast" || r.Attempts != 2 {
		t.Fatalf("served by %s after %d attempts; hedges %+v; fast %+v", r.Upstream.Name, r.Attempts, p.Hedges(), upstreamState(t, p, "fast"))
	}
	if el := time.Since(start); el > 2500*time.Millisecond { // slow answers after 3 s, the attempt timeout is 30 s
		t.Fatalf("the hedge did not cut the wait: %v; hedges %+v (before %+v); fast %+v", el, p.Hedges(), before, upstreamState(t, p, "fast"))
	}
	h := p.Hedges()
	if h.Sent-before.Sent != 1 || h.Won-before.Won != 1 || h.Reads != 22 {
		t.Fatalf("hedges %+v, before the slow read %+v", h, before)
	}
	// The loser is not a failure, and its slowness counts for selection:
	// within a few hedged reads the fast upstream is picked first.
	for i := 0; ; i++ {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name == "fast" && r.Attempts == 1 {
			break
		}
		if i == 30 {
			t.Fatalf("after %d slow answers the slow upstream is still picked first", i)
		}
	}
	if s := upstreamState(t, p, "slow"); s.Failures != 0 {
		t.Fatalf("slow state %+v", s)
	}
}

// Hedges are capped as a share of reads, and writes are never hedged.
func TestHedgeBudgetAndWrites(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(a), provider(b))
	cfg.Hedge = HedgeConfig{Floor: 5 * time.Millisecond, Ceiling: 5 * time.Millisecond, MaxShare: 0.1}
	p := newTestPool(t, cfg)
	a.delay.Store(int64(30 * time.Millisecond))
	b.delay.Store(int64(30 * time.Millisecond))
	for range 100 {
		mustForward(t, p, balanceCall)
	}
	h := p.Hedges()
	if h.Reads != 100 || h.Sent > 10 || h.Sent == 0 {
		t.Fatalf("100 slow reads at a 10 %% cap: %+v", h)
	}
	before := a.method("eth_sendRawTransaction") + b.method("eth_sendRawTransaction")
	for range 10 {
		if _, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.method("eth_sendRawTransaction") + b.method("eth_sendRawTransaction") - before; got != 10 {
		t.Fatalf("10 sends reached the upstreams %d times", got)
	}
	if p.Hedges().Reads != 100 {
		t.Fatalf("sends counted as hedgeable reads: %+v", p.Hedges())
	}
}
