package core

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	f      func()
	done   chan struct{}
	panic  *Panic // f's panic, raised again on the caller's goroutine
	goexit bool   // f called runtime.Goexit: so does the caller
}

// Panic is a panic of a call run on a warm goroutine, raised again on the
// caller's with the stack where it began (the caller's own stack shows
// only Stacks.Run).
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) Error() string {
	return fmt.Sprintf("%v\n\non a warm goroutine:\n%s", p.Value, p.Stack)
}

// Unwrap is the panic's value when it is an error.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

var stackJobs = sync.Pool{New: func() any { return &stackJob{done: make(chan struct{}, 1)} }}

// NewStacks keeps up to max warm goroutines, started as calls need them.
func NewStacks(max int) *Stacks {
	return &Stacks{jobs: make(chan *stackJob), max: int32(max), quit: make(chan struct{})}
}

// Run runs f on a warm goroutine and returns when f has. When every warm
// goroutine is busy and there are already max of them, or s is nil or
// closed, f runs on the caller's goroutine. A panic in f is raised again
// on the caller's goroutine as a *Panic carrying f's stack, where the
// door's recovery (Caddy's, the SDK's) sees it as if f had run there; an
// f that calls runtime.Goexit ends the caller's goroutine too.
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
	p, exit := j.panic, j.goexit
	j.f, j.panic, j.goexit = nil, nil, false
	stackJobs.Put(j)
	if p != nil {
		panic(p)
	}
	if exit {
		runtime.Goexit()
	}
}

func (s *Stacks) work(j *stackJob) {
	defer s.n.Add(-1)
	for {
		s.call(j) // does not return if f calls runtime.Goexit: this goroutine ends
		select {
		case j = <-s.jobs:
		case <-s.quit:
			return
		}
	}
}

// call runs j's f and hands its end to the caller: a return, a panic, or
// runtime.Goexit.
func (s *Stacks) call(j *stackJob) {
	returned := false
	defer func() {
		if v := recover(); v != nil {
			j.panic = &Panic{Value: v, Stack: debug.Stack()}
		} else if !returned {
			j.goexit = true
		}
		j.done <- struct{}{}
	}()
	j.f()
	returned = true
}

// Close ends the idle warm goroutines; calls after it run on their
// callers' goroutines. Calls running finish.
func (s *Stacks) Close() {
	if s != nil {
		s.stop.Do(func() { close(s.quit) })
	}
}
