package upstream

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// limitedCall is a call a fake answers with -32005 in modeRPCLimited.
const limitedCall = balanceCall

// TestClaimedLimitNeedsOurOwnCall: an upstream answering a call with -32005
// ("query too large" at some providers, or words a caller chose) while the
// gateway's own eth_blockNumber is served is not rate-limited: the answer is
// the caller's, served (billed) and relayed, the upstream is not backed off
// and nothing counts against it. Hundreds of such claims at once cost the
// upstream at most one extra call per second (one check in flight, its
// verdict kept for limitCheckFresh).
func TestClaimedLimitNeedsOurOwnCall(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(a), provider(b)))
	a.setMode(modeRPCLimited)
	b.setMode(modeRPCLimited)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := forward(t, p, limitedCall, ForwardOptions{})
			if err != nil || !strings.Contains(string(r.Body), "-32005") {
				mu.Lock()
				bad = append(bad, r.Upstream.Name+" "+string(r.Body)+" "+errString(err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d claims not served as the caller's answer; first: %s", len(bad), bad[0])
	}
	for _, name := range []string{"a", "b"} {
		s := upstreamState(t, p, name)
		if s.RateLimited || s.Throttled != 0 || s.Failures != 0 || s.Breaker != BreakerClosed {
			t.Fatalf("%s after 200 unconfirmed claims: %+v", name, s)
		}
	}
	secs := int64(time.Since(start)/limitCheckFresh) + 1
	if checks := checksOf(p, "a") + checksOf(p, "b"); checks < 1 || checks > 2*secs {
		t.Fatalf("%d checks for 200 claims in %v, want 1..%d (one per upstream per %v)", checks, time.Since(start), 2*secs, limitCheckFresh)
	}

	// The same claim with the gateway's own call limited too is a limit:
	// backed off, tried elsewhere, and (nowhere else to go) not served.
	for _, name := range []string{"a", "b"} { // the verdicts above expire
		m := p.member(name)
		m.limitCheck.mu.Lock()
		m.limitCheck.at = time.Time{}
		m.limitCheck.mu.Unlock()
	}
	a.setProbeMode(modeRPCLimited)
	b.setMode(modeOK)
	r, err := forward(t, p, limitedCall, ForwardOptions{Prefer: "a"})
	if err != nil || r.Upstream.Name != "b" {
		t.Fatalf("after a confirmed limit on a: %+v %v", r, err)
	}
	if s := upstreamState(t, p, "a"); !s.RateLimited || s.Failures != 0 {
		t.Fatalf("a, limited for real: %+v", s)
	}
}

// TestBatchItemsNeverDecideForTheBatch: a batch whose reply holds a
// claimed limit, a fault code and a word list's favourite message is served
// by the upstream that answered it, once: no item makes the whole batch
// retried elsewhere, refunded or the upstream backed off.
func TestBatchItemsNeverDecideForTheBatch(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(a), provider(b)))
	a.setMode(modeRPCLimited)
	b.setMode(modeRPCLimited)
	r, err := forward(t, p, batchCall, ForwardOptions{})
	if err != nil || r.Attempts != 1 || strings.Count(string(r.Body), "-32005") != 2 {
		t.Fatalf("batch: %+v %v", r, err)
	}
	if a.calls.Load()+b.calls.Load() != 1 || checksOf(p, "a")+checksOf(p, "b") != 0 {
		t.Fatalf("a batch was sent %d times", a.calls.Load()+b.calls.Load())
	}
	if s := upstreamState(t, p, r.Upstream.Name); s.RateLimited || s.Throttled != 0 {
		t.Fatalf("a batch's items backed off %s: %+v", r.Upstream.Name, s)
	}
}

// TestFiveHundredIsNeverServed: an HTTP 5xx carrying a well-formed JSON-RPC
// answer is the platform's failure, whatever its body: never returned as
// served (so never billed or credited), relayed only as the last reply.
func TestFiveHundredIsNeverServed(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	p := newTestPool(t, testConfig(provider(a)))
	a.setMode(mode503JSON)
	_, err := forward(t, p, balanceCall, ForwardOptions{})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.LastUpstream.Name != "a" || !strings.Contains(string(ue.LastReply), `"result"`) {
		t.Fatalf("503 with a JSON-RPC result: %v", err)
	}
	_, err = forward(t, p, batchCall, ForwardOptions{})
	if !errors.As(err, &ue) {
		t.Fatalf("503 batch served: %v", err)
	}
}

// TestUnconfirmed429BacksNothingOff: an upstream answering HTTP 429 to
// callers' requests while the gateway's own call is served (a big batch may
// draw a 429 an ordinary call would not) is not held rate-limited: the
// request is not served there (tried elsewhere, so refunded if nowhere) and
// the upstream stays in line for the next one.
func TestUnconfirmed429BacksNothingOff(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(a), provider(b)))
	a.setMode(mode429)
	for range 5 {
		if r, err := forward(t, p, batchCall, ForwardOptions{Prefer: "a"}); err != nil || r.Upstream.Name != "b" {
			t.Fatalf("served by %+v %v", r, err)
		}
	}
	if s := upstreamState(t, p, "a"); s.RateLimited || s.Throttled != 0 || s.Failures != 0 || a.calls.Load() != 5 {
		t.Fatalf("a after 5 unconfirmed 429s (%d calls): %+v", a.calls.Load(), s)
	}
}

// TestProvokedRefusalsNeedEvidence: a 4xx refusal without a JSON-RPC
// answer (413: the caller's request was too large for this upstream) is
// not served (refunded) and never opens a breaker by itself: ten in a row
// on a lone upstream record no failure. With a provider serving the same
// request cleanly it counts (evidence).
func TestProvokedRefusalsNeedEvidence(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	cfg := testConfig(provider(a))
	cfg.Breaker.FailuresToOpen = 3
	p := newTestPool(t, cfg)
	a.setMode(mode413)
	for range 10 {
		if _, err := forward(t, p, balanceCall, ForwardOptions{}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("413 served: %v", err)
		}
	}
	if s := upstreamState(t, p, "a"); s.Failures != 0 || s.Breaker != BreakerClosed {
		t.Fatalf("ten 413s counted without evidence: %+v", s)
	}
	b := newFakeRPC(t, "b", 137, 1000)
	p2 := newTestPool(t, testConfig(provider(a), provider(b)))
	for range 5 {
		if r, err := forward(t, p2, balanceCall, ForwardOptions{Prefer: "a"}); err != nil || r.Upstream.Name != "b" {
			t.Fatalf("with a second provider: %+v %v", r, err)
		}
	}
	if s := upstreamState(t, p2, "a"); s.Failures == 0 {
		t.Fatalf("413s while b served the same request were not counted: %+v", s)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func checksOf(p *Pool, name string) int64 {
	m := p.member(name)
	m.limitCheck.mu.Lock()
	defer m.limitCheck.mu.Unlock()
	return m.limitCheck.checks
}

// TestErrorAnswerNeedsAResultAsEvidence: an upstream's error answer counts
// against it only when a provider serves the same request with a result; a
// provider's error answer is no evidence (the call errs, and a caller who
// repeats it must not open a breaker).
func TestErrorAnswerNeedsAResultAsEvidence(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(a), provider(b)))
	a.setMode(modeRPCFault)
	b.setMode(modeRPCLimited) // an error answer: an unconfirmed limit claim, the caller's
	for range 5 {
		if r, err := forward(t, p, balanceCall, ForwardOptions{Prefer: "a"}); err != nil || r.Upstream.Name != "b" {
			t.Fatalf("served by %+v %v", r, err)
		}
	}
	if s := upstreamState(t, p, "a"); s.Failures != 0 || a.calls.Load() == 0 {
		t.Fatalf("a blamed on another's error answers (%d calls): %+v", a.calls.Load(), s)
	}
	b.setMode(modeOK)
	if r, err := forward(t, p, balanceCall, ForwardOptions{Prefer: "a"}); err != nil || r.Upstream.Name != "b" {
		t.Fatalf("served by %+v %v", r, err)
	}
	if s := upstreamState(t, p, "a"); s.Failures == 0 {
		t.Fatalf("a's fault answer while b served a result was not counted: %+v", s)
	}
}
