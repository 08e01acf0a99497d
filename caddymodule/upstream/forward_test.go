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
	// A timeout fails over but is not a failure of a: a heavy call times
	// out on any node, so callers must not be able to trip breakers with
	// them (a node that really hangs fails its probes). It shows as a's
	// last error.
	if s := upstreamState(t, p, "a"); s.Failures != 0 || s.Breaker != "closed" || !strings.Contains(s.LastError, "timeout") {
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

	_, err := forward(t, p, balanceCall, ForwardOptions{MaxAttempts: 4})
	var ue *UnavailableError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) {
		t.Fatalf("err = %v", err)
	}
	if len(ue.Attempts) != 4 || ue.LastUpstream.Name != "d" || !strings.Contains(string(ue.LastReply), "-32603") {
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
	p := newTestPool(t, testConfig(provider(a)))

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Forward(ctx, []byte(balanceCall), ForwardOptions{})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > time.Second {
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
	t.Run("upstream error reply is returned for relaying", func(t *testing.T) {
		a := newFakeRPC(t, "a", 137, 1000)
		b := newFakeRPC(t, "b", 137, 1000)
		p := newTestPool(t, testConfig(provider(b)))
		setNodes(t, p, node(a))
		a.setMode(modeRPCFault)

		_, err := forward(t, p, sendTxCall, ForwardOptions{NoRetry: true})
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.LastUpstream.Name != "a" || !strings.Contains(string(ue.LastReply), "-32603") {
			t.Fatalf("err = %v", err)
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
