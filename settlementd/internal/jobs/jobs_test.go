package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// lead is a Leadership the test switches by hand.
type lead struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

func (l *lead) set(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if on && l.ctx == nil {
		l.ctx, l.cancel = context.WithCancel(context.Background())
	} else if !on && l.ctx != nil {
		l.cancel()
		l.ctx = nil
	}
}

func (l *lead) Context() (context.Context, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ctx, l.ctx != nil
}

func TestParserTakesSecondsAndClassicSpecs(t *testing.T) {
	for _, spec := range []string{"*/2 * * * * *", "0 */5 * * * *", "*/5 * * * *", "@every 5m"} {
		if _, err := Parser.Parse(spec); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	s, _ := Parser.Parse("*/2 * * * * *")
	t0 := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	if next := s.Next(t0); next.Sub(t0) != time.Second {
		t.Errorf("*/2 s after :01 fires at %v", next)
	}
	sc := New(&lead{}, nil, nil)
	if err := sc.Add("not a schedule", Func{JobName: "x", Fn: nil}); err == nil {
		t.Error("bad schedule accepted")
	}
	if err := sc.Add("* * * * * *", Func{JobName: "x", Fn: func(context.Context) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Add("* * * * * *", Func{JobName: "x", Fn: func(context.Context) error { return nil }}); err == nil {
		t.Error("duplicate job name accepted")
	}
}

// Only a leader runs; runs of one job never overlap; losing leadership
// cancels the running job; a panicking job is reported, not fatal.
func TestEntryGating(t *testing.T) {
	l := &lead{}
	reg := prometheus.NewRegistry()
	s := New(l, nil, reg)
	var running, maxRunning, runs atomic.Int32
	release := make(chan struct{})
	e := &entry{s: s, job: Func{JobName: "j", Fn: func(ctx context.Context) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		runs.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}}

	e.Run() // follower: skipped
	if runs.Load() != 0 || value(s.runs.WithLabelValues("j", "skipped")) != 1 {
		t.Fatal("a follower ran the job")
	}
	l.set(true)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(e.Run)
	}
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond) // polling until one run has started
	}
	close(release)
	wg.Wait()
	if maxRunning.Load() != 1 {
		t.Fatalf("%d runs overlapped", maxRunning.Load())
	}

	// Leadership lost mid-run: the job's context is cancelled.
	release = make(chan struct{})
	done := make(chan struct{})
	go func() { e.Run(); close(done) }()
	for running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	l.set(false)
	<-done
	if got := value(s.runs.WithLabelValues("j", "error")); got != 1 {
		t.Fatalf("cancelled run not reported as error: %v", got)
	}

	l.set(true)
	p := &entry{s: s, job: Func{JobName: "p", Fn: func(context.Context) error { panic("boom") }}}
	p.Run()
	if value(s.runs.WithLabelValues("p", "error")) != 1 {
		t.Fatal("panic not turned into an error")
	}
}

// Stop waits for a running job, and cancels it when its context ends first.
func TestStopDrainsOrCancels(t *testing.T) {
	l := &lead{}
	l.set(true)
	s := New(l, nil, nil)
	started := make(chan struct{}, 1)
	var cancelled atomic.Bool
	if err := s.Add("* * * * * *", Func{JobName: "slow", Fn: func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		cancelled.Store(true)
		return ctx.Err()
	}}); err != nil {
		t.Fatal(err)
	}
	s.Start()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) || !cancelled.Load() {
		t.Fatalf("Stop = %v, job cancelled %v", err, cancelled.Load())
	}
}

func value(c prometheus.Counter) float64 {
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
