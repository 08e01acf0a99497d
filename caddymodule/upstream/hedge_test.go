package upstream

import (
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
	p := newTestPool(t, cfg)
	// Teach the pool that slow is the faster one, then slow it down.
	fast.delay.Store(int64(5 * time.Millisecond))
	for range 20 {
		mustForward(t, p, balanceCall)
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "slow" {
		t.Fatalf("the test wants slow picked first, got %s", r.Upstream.Name)
	}
	slow.delay.Store(int64(300 * time.Millisecond))
	start := time.Now()
	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "fast" || r.Attempts != 2 {
		t.Fatalf("served by %s after %d attempts", r.Upstream.Name, r.Attempts)
	}
	if el := time.Since(start); el > 200*time.Millisecond {
		t.Fatalf("the hedge did not cut the wait: %v", el)
	}
	h := p.Hedges()
	if h.Sent != 1 || h.Won != 1 || h.Reads != 22 {
		t.Fatalf("hedges %+v", h)
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
