package core

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStacksReuseWarmGoroutines: sequential calls reuse warm goroutines
// (one, unless a call comes before the last one's goroutine is back
// waiting: a busy machine's scheduling); concurrent calls start at most
// max, the rest run on their callers'; every call has run when Run
// returns.
func TestStacksReuseWarmGoroutines(t *testing.T) {
	seq := NewStacks(64)
	defer seq.Close()
	ran := 0
	for range 100 {
		seq.Run(func() { ran++ })
	}
	if ran != 100 || seq.n.Load() > 4 {
		t.Fatalf("100 sequential calls: ran %d, %d warm goroutines, want 100 and at most 4", ran, seq.n.Load())
	}
	s := NewStacks(4)
	defer s.Close()
	var (
		wg      sync.WaitGroup
		done    atomic.Int64
		release = make(chan struct{})
		started sync.WaitGroup
	)
	started.Add(16)
	for range 16 {
		wg.Go(func() {
			s.Run(func() {
				started.Done()
				<-release // all 16 at once: 4 warm, 12 on their own goroutines
				done.Add(1)
			})
		})
	}
	started.Wait()
	if n := s.n.Load(); n > 4 {
		t.Fatalf("%d warm goroutines, want at most 4", n)
	}
	close(release)
	wg.Wait()
	if done.Load() != 16 {
		t.Fatalf("%d of 16 concurrent calls ran", done.Load())
	}
}

// TestStacksRaisePanicsOnTheCaller: a panic in f reaches Run's caller,
// and the warm goroutine goes on serving.
func TestStacksRaisePanicsOnTheCaller(t *testing.T) {
	s := NewStacks(1)
	defer s.Close()
	got := func() (p any) {
		defer func() { p = recover() }()
		s.Run(func() { panic("boom") })
		return nil
	}()
	p, ok := got.(*Panic)
	if !ok || p.Value != "boom" || !strings.Contains(string(p.Stack), "TestStacksRaisePanicsOnTheCaller.func") {
		t.Fatalf("recovered %#v, want a *Panic of boom with the stack where it began", got)
	}
	ran := false
	s.Run(func() { ran = true })
	if !ran || s.n.Load() > 1 {
		t.Fatalf("after a panic: ran %v with %d warm goroutines, want true and at most 1", ran, s.n.Load())
	}
}

// TestStacksGoexitEndsTheCaller: runtime.Goexit in f (t.FailNow in a
// test) ends the caller's goroutine, as it would have inline.
func TestStacksGoexitEndsTheCaller(t *testing.T) {
	s := NewStacks(1)
	defer s.Close()
	after := make(chan bool, 1)
	go func() {
		ended := true
		defer func() { after <- ended }()
		s.Run(func() { runtime.Goexit() })
		ended = false
	}()
	if !<-after {
		t.Fatal("the caller went on after f called runtime.Goexit")
	}
	ran := false
	s.Run(func() { ran = true })
	if !ran {
		t.Fatal("no call ran after a Goexit")
	}
}

// TestStacksClosedOrNilRunInline: a nil or closed Stacks still runs f.
func TestStacksClosedOrNilRunInline(t *testing.T) {
	var nilStacks *Stacks
	ran := 0
	nilStacks.Run(func() { ran++ })
	s := NewStacks(2)
	s.Run(func() { ran++ })
	s.Close()
	for range 10 {
		s.Run(func() { ran++ })
	}
	if ran != 12 {
		t.Fatalf("ran %d of 12", ran)
	}
}
