package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestForwardServesAndNamesUpstream(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	p := newTestPool(t, testConfig(provider(a)))

	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "a" || r.Upstream.Kind != KindProvider || r.Upstream.EventName() != "a" {
		t.Fatalf("served by %+v", r.Upstream)
	}
	if r.Status != 200 || r.Attempts != 1 || !strings.Contains(string(r.Body), `"result":"0xde0b6b3a7640000"`) {
		t.Fatalf("result %+v body %s", r, r.Body)
	}
	// Batches pass through untouched.
	r = mustForward(t, p, batchCall)
	if !strings.HasPrefix(string(r.Body), "[") || !strings.Contains(string(r.Body), `"id":2`) {
		t.Fatalf("batch reply %s", r.Body)
	}
}

func TestFailoverOn502(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(b)))
	setNodes(t, p, node(a)) // a is preferred: nodes first
	a.setMode(mode502)

	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "b" || r.Attempts != 2 {
		t.Fatalf("served by %s after %d attempts", r.Upstream.Name, r.Attempts)
	}
	if a.method("eth_getBalance") != 1 {
		t.Fatalf("a got %d calls, want 1", a.method("eth_getBalance"))
	}
	s := upstreamState(t, p, "a")
	if s.Failures != 1 || !strings.Contains(s.LastError, "HTTP 502") {
		t.Fatalf("a state %+v", s)
	}
}

func TestFailoverOnTimeout(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.AttemptTimeout = 150 * time.Millisecond
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	a.setMode(modeHang)

	start := time.Now()
	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "b" || r.Attempts != 2 {
		t.Fatalf("served by %s after %d attempts", r.Upstream.Name, r.Attempts)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
	// A timeout fails over; b, a provider, answering the same call in
	// time is the evidence that counts it against a (blame).
	if s := upstreamState(t, p, "a"); s.Failures != 1 || !strings.Contains(s.LastError, "timeout") {
		t.Fatalf("a state %+v", s)
	}
}

// A heavy call that times out everywhere is nobody's fault: no evidence, no
// failure, whatever the number of calls.
func TestTimeoutEverywhereIsNotCounted(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(a), provider(b))
	cfg.AttemptTimeout = 50 * time.Millisecond
	p := newTestPool(t, cfg)
	a.setMode(modeHang)
	b.setMode(modeHang)
	for range 8 {
		if _, err := forward(t, p, balanceCall, ForwardOptions{}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	}
	for _, n := range []string{"a", "b"} {
		if s := upstreamState(t, p, n); s.Failures != 0 || s.Breaker != BreakerClosed {
			t.Fatalf("%s state %+v", n, s)
		}
	}
}

// An error answer is the call's own outcome unless another upstream serves
// the same call: two providers both answering -32603 are relayed (served,
// so charged) and neither is counted, however often; only one second
// opinion is asked, so a poisoned call costs at most two upstream calls.
func TestErrorAnswersNeedEvidence(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	c := newFakeRPC(t, "c", 137, 1000)
	p := newTestPool(t, testConfig(provider(a), provider(b), provider(c)))
	for _, f := range []*fakeRPC{a, b, c} {
		f.setMode(modeRPCFault)
	}
	for i := range 20 {
		r, err := forward(t, p, balanceCall, ForwardOptions{})
		if err != nil || !strings.Contains(string(r.Body), "-32603") || r.Attempts != 2 {
			t.Fatalf("call %d: %+v %v", i, r, err)
		}
	}
	if got := a.calls.Load() + b.calls.Load() + c.calls.Load(); got != 40 {
		t.Fatalf("20 calls made %d upstream calls, want 40 (one second opinion each)", got)
	}
	for _, n := range []string{"a", "b", "c"} {
		if s := upstreamState(t, p, n); s.Failures != 0 || s.Breaker != BreakerClosed {
			t.Fatalf("%s state %+v", n, s)
		}
	}
	// Evidence: a provider serving the call counts the error against the
	// upstream that gave it (here a node, tried first).
	n := newFakeRPC(t, "n", 137, 1000)
	q := newTestPool(t, testConfig(provider(b)))
	setNodes(t, q, node(n))
	n.setMode(modeRPCFault)
	b.setMode(modeOK)
	r := mustForward(t, q, balanceCall)
	if r.Upstream.Name != "b" || strings.Contains(string(r.Body), "error") {
		t.Fatalf("served %s: %s", r.Upstream.Name, r.Body)
	}
	if s := upstreamState(t, q, "n"); s.Failures != 1 || !strings.Contains(s.LastError, "another upstream served") {
		t.Fatalf("n state %+v", s)
	}
}

// A chain with one upstream never counts its error answers: there is no
// one to give evidence.
func TestSingleUpstreamErrorAnswersNeverOpen(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	p := newTestPool(t, testConfig(provider(a)))
	a.setMode(modeRPCFault)
	for range 20 {
		r, err := forward(t, p, balanceCall, ForwardOptions{})
		if err != nil || r.Upstream.Name != "a" || !strings.Contains(string(r.Body), "-32603") {
			t.Fatalf("%+v %v", r, err)
		}
	}
	if s := upstreamState(t, p, "a"); s.Failures != 0 || s.Breaker != BreakerClosed {
		t.Fatalf("a state %+v", s)
	}
}

// A reply that does not answer the request (Validate refuses it) is the
// upstream's fault at once, and the call fails over.
func TestMismatchedReplyCountsAndFailsOver(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	p := newTestPool(t, testConfig(provider(b)))
	setNodes(t, p, node(a))
	first := true
	validate := func(reply []byte) error {
		if first { // a's reply, tried first: pretend its id is foreign
			first = false
			return errors.New("no reply for call 0")
		}
		return nil
	}
	r, err := forward(t, p, balanceCall, ForwardOptions{Validate: validate})
	if err != nil || r.Upstream.Name != "b" || r.Attempts != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	if s := upstreamState(t, p, "a"); s.Failures != 1 || !strings.Contains(s.LastError, "does not match the request") {
		t.Fatalf("a state %+v", s)
	}
}

func TestFailoverOnUpstreamFaultRPCErrorAndNonJSON(t *testing.T) {
	for _, mode := range []srvMode{modeRPCFault, modeNotJSON} {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		p := newTestPool(t, testConfig(provider(b)))
		setNodes(t, p, node(a))
		a.setMode(mode)
		r := mustForward(t, p, balanceCall)
		if r.Upstream.Name != "b" || r.Attempts != 2 {
			t.Fatalf("mode %d: served by %s after %d attempts", mode, r.Upstream.Name, r.Attempts)
		}
		if s := upstreamState(t, p, "a"); s.Failures != 1 {
			t.Fatalf("mode %d: a state %+v", mode, s)
		}
	}
}

func TestCustomClassifier(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.Classifier = func(RPCError) Verdict { return VerdictOK } // every error is the caller's
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	a.setMode(modeRPCFault)

	r := mustForward(t, p, balanceCall)
	if r.Upstream.Name != "a" || !strings.Contains(string(r.Body), "-32603") {
		t.Fatalf("served by %s: %s", r.Upstream.Name, r.Body)
	}
}

func TestUnavailableWhenAllFail(t *testing.T) {
	var fakes []*fakeRPC
	var ups []Upstream
	for _, n := range []string{"a", "b", "c", "d"} {
		f := newFakeRPC(t, n, 137, 1000)
		f.setMode(mode502)
		fakes = append(fakes, f)
		ups = append(ups, provider(f))
	}
	fakes[3].setMode(modeRPCFault)
	p := newTestPool(t, testConfig(ups...))

	// d's error answer is an answer: it is served (d did the work) though
	// the upstreams tried before it failed (in an order their probes'
	// latencies decide).
	r, err := forward(t, p, balanceCall, ForwardOptions{MaxAttempts: 4})
	if err != nil || r.Upstream.Name != "d" || r.Attempts < 1 || !strings.Contains(string(r.Body), "-32603") {
		t.Fatalf("r = %+v, err = %v", r, err)
	}

	fakes[3].setMode(modeRPCLimited)
	fakes[3].setProbeMode(modeRPCLimited) // the gateway's own call is limited too: a real limit
	_, err = forward(t, p, balanceCall, ForwardOptions{MaxAttempts: 4})
	var ue *UnavailableError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) {
		t.Fatalf("err = %v", err)
	}
	if len(ue.Attempts) != 4 || ue.LastUpstream.Name != "d" || !strings.Contains(string(ue.LastReply), "-32005") {
		t.Fatalf("attempts %+v last %s %s", ue.Attempts, ue.LastUpstream.Name, ue.LastReply)
	}
	if strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error names an address: %v", err)
	}

	// Default MaxAttempts is 3.
	fakes[3].setMode(mode502)
	_, err = forward(t, p, balanceCall, ForwardOptions{})
	if !errors.As(err, &ue) || len(ue.Attempts) != 3 {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestDeadlineBoundsForwardAndDoesNotCount(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	a.setMode(modeHang)
	cfg := testConfig(provider(a))
	cfg.AttemptTimeout = 30 * time.Second // only the caller's deadline can end the attempt in time
	p := newTestPool(t, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Forward(ctx, []byte(balanceCall), ForwardOptions{})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2500*time.Millisecond { // the deadline is 100 ms, the attempt timeout 30 s; a busy machine's room
		t.Fatalf("took %v", el)
	}
	// The caller's deadline is not the upstream's failure.
	if s := upstreamState(t, p, "a"); s.Failures != 0 || s.Breaker != BreakerClosed {
		t.Fatalf("a state %+v", s)
	}
}

func TestNoRetry(t *testing.T) {
	t.Run("5xx is not replayed", func(t *testing.T) {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		p := newTestPool(t, testConfig(provider(b)))
		setNodes(t, p, node(a))
		a.setMode(mode502)

		_, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true})
		var ue *UnavailableError
		if !errors.As(err, &ue) || len(ue.Attempts) != 1 || !ue.Attempts[0].Sent {
			t.Fatalf("err = %v", err)
		}
		if a.method("eth_sendRawTransaction") != 1 || b.method("eth_sendRawTransaction") != 0 {
			t.Fatalf("a got %d, b got %d", a.method("eth_sendRawTransaction"), b.method("eth_sendRawTransaction"))
		}
	})
	t.Run("timeout is not replayed", func(t *testing.T) {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		p := newTestPool(t, testConfig(provider(b)))
		setNodes(t, p, node(a))
		a.setMode(modeHang)

		_, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true, AttemptTimeout: 100 * time.Millisecond})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		if b.method("eth_sendRawTransaction") != 0 {
			t.Fatal("replayed on b")
		}
	})
	t.Run("upstream error answer is served as its own", func(t *testing.T) {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		p := newTestPool(t, testConfig(provider(b)))
		setNodes(t, p, node(a))
		a.setMode(modeRPCFault)

		r, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true})
		if err != nil || r.Upstream.Name != "a" || !strings.Contains(string(r.Body), "-32603") {
			t.Fatalf("r = %+v, err = %v", r, err)
		}
		if s := upstreamState(t, p, "a"); s.Failures != 0 {
			t.Fatalf("a state %+v", s)
		}
		if b.method("eth_sendRawTransaction") != 0 {
			t.Fatal("replayed on b")
		}
	})
	t.Run("connect failure fails over", func(t *testing.T) {
		b := newFakeRPC(t, "b", 137, 1000)
		cfg := testConfig(provider(b))
		cfg.ProbeInterval = -1 // no probes: the dead node counts as healthy and is tried first
		p := newTestPool(t, cfg)
		must(t, p.SetNodes([]Upstream{{NodeID: "NODE-EU-DEAD0000", URL: deadURL(t)}}))

		r, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true})
		if err != nil || r.Upstream.Name != "b" || r.Attempts != 2 {
			t.Fatalf("r = %+v, err = %v", r, err)
		}
		if b.method("eth_sendRawTransaction") != 1 {
			t.Fatal("b did not get the transaction")
		}
	})
}

func TestReplyTooLargeIsNotRetried(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	cfg := testConfig(provider(b))
	cfg.MaxReplyBytes = 16
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))

	_, err := forward(t, p, balanceCall, ForwardOptions{})
	if !errors.Is(err, ErrReplyTooLarge) || b.calls.Load() != 0 {
		t.Fatalf("err = %v, b calls %d", err, b.calls.Load())
	}
	if s := upstreamState(t, p, "a"); s.Failures != 0 || s.Breaker != BreakerClosed {
		t.Fatalf("a state %+v", s)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBlame is docs/decisions.md's table ("Upstream errors are judged by
// evidence"), case by case, without and with evidence.
func TestBlame(t *testing.T) {
	cases := []struct {
		name                  string
		o                     outcome
		without, withEvidence bool
	}{
		{"served", outcome{served: true, jsonRPC: true}, false, false},
		{"caller left", outcome{cause: context.Canceled, verdict: VerdictFault}, false, false},
		{"reply too large", outcome{cause: ErrReplyTooLarge}, false, false},
		{"rate limited", outcome{verdict: VerdictRateLimited, jsonRPC: true}, false, false},
		{"missing state / unknown block answer", outcome{verdict: VerdictSkip, jsonRPC: true}, false, false},
		{"suspect error answer", outcome{verdict: VerdictFault, jsonRPC: true}, false, true},
		{"timeout", outcome{verdict: VerdictSkip, timeout: true}, false, true},
		{"4xx refusal a caller can provoke (413)", outcome{verdict: VerdictFault, provoked: true}, false, true},
		{"transport failure, bare 5xx, not JSON-RPC, mismatched", outcome{verdict: VerdictFault}, true, true},
	}
	for _, c := range cases {
		if got := blame(c.o, false); got != c.without {
			t.Errorf("%s without evidence: %v, want %v", c.name, got, c.without)
		}
		if got := blame(c.o, true); got != c.withEvidence {
			t.Errorf("%s with evidence: %v, want %v", c.name, got, c.withEvidence)
		}
	}
}
