package core

import (
	"sync"
	"sync/atomic"
)

// Stacks runs calls on long-lived goroutines whose stacks have already
// grown to what serving a call needs.
//
// Why: a door whose protocol library hands every call a fresh goroutine
// (the MCP SDK runs each tool call on its own) starts that goroutine with
// a small stack, and the core's first deep call grows it, the runtime
// copying the stack at each doubling: 5.4 µs of an MCP call's 42 µs of our
// CPU (docs/benchmarks.md). A POST runs on net/http's connection goroutine,
// grown long ago, and does not need this. A warm goroutine idle through
// garbage collections may have its stack halved and grow it once again;
// that is still one step, not every step from the smallest.
type Stacks struct {
	jobs chan *stackJob
	n    atomic.Int32 // goroutines started
	max  int32
	quit chan struct{}
	stop sync.Once
}

type stackJob struct {
	f     func()
	done  chan struct{}
	panic any // f's panic, raised again on the caller's goroutine
}

var stackJobs = sync.Pool{New: func() any { return &stackJob{done: make(chan struct{}, 1)} }}

// NewStacks keeps up to max warm goroutines, started as calls need them.
func NewStacks(max int) *Stacks {
	return &Stacks{jobs: make(chan *stackJob), max: int32(max), quit: make(chan struct{})}
}

// Run runs f on a warm goroutine and returns when f has. When every warm
// goroutine is busy and there are already max of them, or s is nil or
// closed, f runs on the caller's goroutine. A panic in f is raised again
// on the caller's goroutine, where the door's recovery (Caddy's, the SDK's)
// sees it as if f had run there.
func (s *Stacks) Run(f func()) {
	if s == nil {
		f()
		return
	}
	j := stackJobs.Get().(*stackJob)
	j.f = f
	select {
	case s.jobs <- j: // an idle warm goroutine took it
	case <-s.quit:
		j.f = nil
		stackJobs.Put(j)
		f()
		return
	default:
		if s.n.Add(1) > s.max {
			s.n.Add(-1)
			j.f = nil
			stackJobs.Put(j)
			f()
			return
		}
		go s.work(j)
	}
	<-j.done
	p := j.panic
	j.f, j.panic = nil, nil
	stackJobs.Put(j)
	if p != nil {
		panic(p)
	}
}

func (s *Stacks) work(j *stackJob) {
	defer s.n.Add(-1)
	for {
		s.call(j)
		select {
		case j = <-s.jobs:
		case <-s.quit:
			return
		}
	}
}

func (s *Stacks) call(j *stackJob) {
	defer func() {
		j.panic = recover()
		j.done <- struct{}{}
	}()
	j.f()
}

// Close ends the idle warm goroutines; calls after it run on their
// callers' goroutines. Calls running finish.
func (s *Stacks) Close() {
	if s != nil {
		s.stop.Do(func() { close(s.quit) })
	}
}
