package upstream

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBreakerOpensBlocksHalfOpensAndCloses(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(b))) // open timeout 200 ms, 5 failures
	setNodes(t, p, node(a))                      // a, a node, is always tried first
	a.setMode(mode502)

	for i := range 5 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" {
			t.Fatalf("call %d served by %s", i, r.Upstream.Name)
		}
	}
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerOpen || s.Failures != 5 {
		t.Fatalf("after 5 failures: %+v", s)
	}

	// While open, no call reaches a. (A few calls, well inside 200 ms.)
	before := a.calls.Load()
	for range 3 {
		if upstreamState(t, p, "a").Breaker != BreakerOpen {
			break
		}
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" || r.Attempts != 1 {
			t.Fatalf("while open: served by %s after %d attempts", r.Upstream.Name, r.Attempts)
		}
	}
	if got := a.calls.Load(); got != before {
		t.Fatalf("a got %d calls while open", got-before)
	}
	if _, ok := p.Pick(nil); !ok {
		t.Fatal("Pick found nothing")
	}
	if ref, _ := p.Pick(nil); ref.Name != "b" {
		t.Fatalf("Pick chose %s while a is open", ref.Name)
	}

	// After the open timeout it is half-open. A failed trial opens it again.
	waitFor(t, "half-open", 2*time.Second, func() bool { return upstreamState(t, p, "a").Breaker == BreakerHalfOpen })
	before = a.calls.Load()
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" || r.Attempts != 2 {
		t.Fatalf("failed trial: served by %s after %d attempts", r.Upstream.Name, r.Attempts)
	}
	if a.calls.Load() != before+1 || upstreamState(t, p, "a").Breaker != BreakerOpen {
		t.Fatalf("trial: a calls %d, state %s", a.calls.Load()-before, upstreamState(t, p, "a").Breaker)
	}

	// Half-open again; a call that must not be replayed is not used as a trial.
	waitFor(t, "half-open again", 2*time.Second, func() bool { return upstreamState(t, p, "a").Breaker == BreakerHalfOpen })
	a.setMode(modeOK)
	before = a.calls.Load()
	if r, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true}); err != nil || r.Upstream.Name != "b" {
		t.Fatalf("NoRetry while half-open: %+v %v", r, err)
	}
	if a.calls.Load() != before {
		t.Fatal("NoRetry call was used as a half-open trial")
	}

	// A successful trial closes the breaker; a serves again.
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("trial served by %s", r.Upstream.Name)
	}
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerClosed {
		t.Fatalf("after good trial: %s", s.Breaker)
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("after close served by %s", r.Upstream.Name)
	}
}

func TestRateLimitDoesNotTripBreaker(t *testing.T) {
	for _, mode := range []srvMode{mode429, modeRPCLimited} {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		cfg := testConfig(provider(b))
		cfg.RateLimitBackoff = 20 * time.Millisecond
		p := newTestPool(t, cfg)
		setNodes(t, p, node(a))
		a.setMode(mode)
		// A limit is believed only when the gateway's own call is limited
		// too (limit.go).
		a.setProbeMode(mode)

		// Ten throttled calls in a row, twice the breaker's threshold.
		for i := range 10 {
			waitFor(t, "back-off to pass", 2*time.Second, func() bool { return !upstreamState(t, p, "a").RateLimited })
			if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" || r.Attempts != 2 {
				t.Fatalf("mode %d call %d: served by %s after %d", mode, i, r.Upstream.Name, r.Attempts)
			}
		}
		s := upstreamState(t, p, "a")
		if s.Breaker != BreakerClosed || s.Throttled != 10 || s.Failures != 0 {
			t.Fatalf("mode %d: %+v", mode, s)
		}
		if !strings.Contains(s.LastError, "429") && !strings.Contains(s.LastError, "-32005") {
			t.Fatalf("mode %d: last error %q", mode, s.LastError)
		}
	}
}

func TestRateLimitBacksOff(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.RateLimitBackoff = time.Minute
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	a.setMode(mode429)
	a.setProbeMode(mode429) // the gateway's own call is limited too (limit.go)

	for range 5 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
	if a.calls.Load() != 1 {
		t.Fatalf("a got %d calls during its back-off, want 1", a.calls.Load())
	}
	if s := upstreamState(t, p, "a"); !s.RateLimited || s.RateLimitedUntil == nil {
		t.Fatalf("a state %+v", s)
	}
	// Rate-limited is a degraded tier, not an exclusion: with b down, a is tried.
	b.setMode(mode502)
	a.setMode(modeOK)
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("served by %s", r.Upstream.Name)
	}
}

func TestBackoffHonoursRetryAfter(t *testing.T) {
	p := newTestPool(t, Config{ChainID: 137, ProbeInterval: -1})
	h := map[string][]string{"Retry-After": {"7"}}
	if d := p.backoffFor(h); d != 7*time.Second {
		t.Fatalf("backoff %v", d)
	}
	h["Retry-After"] = []string{"86400"}
	if d := p.backoffFor(h); d != DefaultMaxRateLimitBackoff {
		t.Fatalf("capped backoff %v", d)
	}
	if d := p.backoffFor(nil); d != DefaultRateLimitBackoff {
		t.Fatalf("default backoff %v", d)
	}
}

// An operator's reset closes an open breaker at once (no open timeout, no
// trial) and clears its failure count; an unknown name is an error.
func TestResetBreaker(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.Breaker.OpenTimeout = time.Hour // only a reset can close it within the test
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	a.setMode(mode502)
	for range 5 {
		mustForward(t, p, balanceCall)
	}
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerOpen {
		t.Fatalf("breaker %s after 5 failures", s.Breaker)
	}
	a.setMode(modeOK)
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "b" {
		t.Fatalf("open breaker let a serve")
	}

	prev, err := p.ResetBreaker("a")
	if err != nil || prev != BreakerOpen {
		t.Fatalf("reset: %s %v", prev, err)
	}
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerClosed {
		t.Fatalf("breaker %s after reset", s.Breaker)
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
		t.Fatalf("after reset served by %s", r.Upstream.Name)
	}
	// The failure count starts afresh: four failures do not reopen it.
	a.setMode(mode502)
	for range 4 {
		mustForward(t, p, balanceCall)
	}
	if s := upstreamState(t, p, "a"); s.Breaker != BreakerClosed {
		t.Fatalf("breaker %s after 4 failures since the reset", s.Breaker)
	}
	if prev, err := p.ResetBreaker("b"); err != nil || prev != BreakerClosed {
		t.Fatalf("reset of a closed breaker: %s %v", prev, err)
	}
	if _, err := p.ResetBreaker("nobody"); !errors.Is(err, ErrUnknownUpstream) {
		t.Fatalf("unknown upstream: %v", err)
	}
}
