package meter

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// AutoPipeline wraps a Redis client so that the script calls (EVAL,
// EVALSHA and their read-only forms — every metering decision, refund and
// draw) of concurrent requests share round trips: calls that arrive while
// a batch is on the wire wait and go together in the next one, one write
// and one read for all of them. An idle gateway sends each call at once,
// as before; under load the gateway and Redis each make a few syscalls per
// batch instead of two per request (make bench showed the metering round
// trip's write and read as the largest cost a paid call adds). Every other
// command passes through to the client unchanged.
//
// The guarantees the metering path relies on are kept, and tested
// (autopipe_test.go):
//
//   - One atomic script per request: each call is still its own EVALSHA;
//     a batch only shares the socket.
//   - Never twice: a batch is written once. The client must not retry
//     (MaxRetries -1, see NewAutoPipeline), and a NOSCRIPT answer — the
//     script did not run — is the only thing redis.Script.Run follows up.
//   - Fail closed, per call: each call gets its own reply or its own error.
//     A batch cut off mid-way fails the calls whose replies were lost (they
//     may have run: MaybeBooked), a dial failure fails them as never sent.
//   - The caller's deadline: a caller whose context ends stops waiting. A
//     call still queued is then never sent; one already sent may run
//     (MaybeBooked says so, and the gateway voids it).
//
// Background commands (the revenue events' XADDs, EventWriter) ride along:
// Carry queues a command that goes out with the next batch of script calls,
// so under load an event costs no write or read of its own (make bench: the
// event writer's own round trips were ~15 % of a paid call's CPU at
// concurrency 16). With no batch coming they go on their own after the
// linger. They may be re-sent by their owner on failure (an XADD twice is
// harmless: settlementd stores each event id once); a script never is.
type AutoPipeline struct {
	redis.UniversalClient

	lanes    int // batches in flight at once
	maxBatch int
	linger   time.Duration
	maxCarry int

	mu       sync.Mutex
	queue    []*piped
	inflight int // flushers running (at most lanes)
	carried  []passenger
	due      bool        // the carried commands have waited the linger: the next flush takes them
	timer    *time.Timer // fires the linger; armed while carried commands wait for a batch
	armed    bool

	batches, calls atomic.Uint64
}

// passenger is a background command and what to do once its reply is in.
type passenger struct {
	cmd  redis.Cmder
	done func(error)
}

// piped is one call waiting for its batch.
type piped struct {
	cmd  *redis.Cmd
	ctx  context.Context
	done chan struct{}
	// state: pipeQueued until a flusher takes it (pipeSent) or its caller
	// gives up first (pipeAbandoned); only one of the two wins.
	state atomic.Int32
}

const (
	pipeQueued int32 = iota
	pipeSent
	pipeAbandoned
)

// AutoPipelineConfig tunes an AutoPipeline.
type AutoPipelineConfig struct {
	// Lanes is how many batches may be in flight at once (default 2): one
	// more than one lets the gateway encode the next batch while Redis runs
	// the current one.
	Lanes int
	// MaxBatch caps the calls in one batch (default 128).
	MaxBatch int
	// Linger is how long a carried command waits for a batch of script
	// calls to ride with before it goes on its own (default 1 ms).
	Linger time.Duration
	// MaxCarry caps the carried commands in one batch (default 512); that
	// many waiting go at once.
	MaxCarry int
}

// NewAutoPipeline wraps rdb. It refuses a client that retries failed
// commands: a retried batch could run a metering script twice.
func NewAutoPipeline(rdb redis.UniversalClient, cfg AutoPipelineConfig) (*AutoPipeline, error) {
	// Standalone Redis only: a ClusterClient re-sends a pipeline's commands
	// after a network error (up to MaxRedirects), whatever MaxRetries says.
	c, ok := rdb.(*redis.Client)
	if !ok {
		return nil, fmt.Errorf("meter: auto-pipelining needs a standalone *redis.Client, not %T", rdb)
	}
	if n := c.Options().MaxRetries; n > 0 {
		return nil, fmt.Errorf("meter: auto-pipelining needs a client without retries (MaxRetries -1), not %d: "+
			"a retried batch could run a metering script twice", n)
	}
	if cfg.Lanes <= 0 {
		cfg.Lanes = 2
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 128
	}
	if cfg.Linger <= 0 {
		cfg.Linger = time.Millisecond
	}
	if cfg.MaxCarry <= 0 {
		cfg.MaxCarry = 512
	}
	p := &AutoPipeline{UniversalClient: rdb, lanes: cfg.Lanes, maxBatch: cfg.MaxBatch, linger: cfg.Linger, maxCarry: cfg.MaxCarry}
	p.timer = time.AfterFunc(time.Hour, p.lingered)
	p.timer.Stop()
	return p, nil
}

// Carry sends cmd with the next batch of script calls, or on its own once
// it has waited the linger; done gets its error (nil: written and answered)
// on the flushing goroutine, so it must not block. Carry never blocks.
func (p *AutoPipeline) Carry(cmd redis.Cmder, done func(error)) {
	p.mu.Lock()
	p.carried = append(p.carried, passenger{cmd: cmd, done: done})
	start := false
	if len(p.carried) >= p.maxCarry {
		start = p.dueLocked()
	} else if !p.armed {
		p.armed = true
		p.timer.Reset(p.linger)
	}
	p.mu.Unlock()
	if start {
		go p.flush()
	}
}

// SendCarried sends what is carried now instead of after the linger (a
// writer closing).
func (p *AutoPipeline) SendCarried() {
	p.mu.Lock()
	start := p.dueLocked()
	p.mu.Unlock()
	if start {
		go p.flush()
	}
}

// lingered is the linger timer: what is carried is due.
func (p *AutoPipeline) lingered() {
	p.mu.Lock()
	p.armed = false
	start := p.dueLocked()
	p.mu.Unlock()
	if start {
		go p.flush()
	}
}

// dueLocked makes the carried commands due (the next flush takes them, with
// or without script calls) and claims a lane for a flusher if one is free.
func (p *AutoPipeline) dueLocked() bool {
	if len(p.carried) == 0 {
		return false
	}
	p.due = true
	return p.startLocked()
}

// startLocked claims a lane for a new flusher if one is free.
func (p *AutoPipeline) startLocked() bool {
	if p.inflight >= p.lanes {
		return false
	}
	p.inflight++
	return true
}

// Stats reports the batches sent and the calls they carried so far (a
// batch counts once it is being written).
func (p *AutoPipeline) Stats() (batches, calls uint64) { return p.batches.Load(), p.calls.Load() }

// Queued is how many calls wait for a batch (tests poll it).
func (p *AutoPipeline) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Eval, EvalSha, EvalRO and EvalShaRO are the client's, batched.
func (p *AutoPipeline) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.do(ctx, "eval", script, keys, args)
}

func (p *AutoPipeline) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.do(ctx, "evalsha", sha1, keys, args)
}

func (p *AutoPipeline) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.do(ctx, "eval_ro", script, keys, args)
}

func (p *AutoPipeline) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.do(ctx, "evalsha_ro", sha1, keys, args)
}

// scriptCmd builds the command the client's Eval family would send: name,
// script or digest, the key count, the keys, the arguments (a lone slice
// argument spread, as go-redis does).
func scriptCmd(ctx context.Context, name, payload string, keys []string, args []any) *redis.Cmd {
	if len(args) == 1 {
		switch a := args[0].(type) {
		case []any:
			args = a
		case []string:
			args = make([]any, len(a))
			for i, s := range a {
				args[i] = s
			}
		}
	}
	all := make([]any, 0, 3+len(keys)+len(args))
	all = append(all, name, payload, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	all = append(all, args...)
	cmd := redis.NewCmd(ctx, all...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // routes the call by its first key on Redis Cluster
	}
	return cmd
}

// autoPipelined is a client that batches concurrent script calls itself
// (AutoPipeline, ClusterAutoPipeline): the meter hands it a request's
// several runs one by one, concurrently, instead of in a pipeline of their
// own.
type autoPipelined interface {
	Stats() (batches, calls uint64)
}

// errAbandoned is the error of a call whose caller stopped waiting;
// errNeverSent marks one that was still queued then, so it cannot have
// run (MaybeBooked is false: no void is started for it).
var (
	errAbandoned = errors.New("metering call abandoned at its deadline")
	errNeverSent = errors.New("never sent")
)

func (p *AutoPipeline) do(ctx context.Context, name, payload string, keys []string, args []any) *redis.Cmd {
	it := &piped{cmd: scriptCmd(ctx, name, payload, keys, args), ctx: ctx, done: make(chan struct{})}
	if err := ctx.Err(); err != nil {
		it.cmd.SetErr(err)
		return it.cmd
	}
	p.mu.Lock()
	p.queue = append(p.queue, it)
	start := p.startLocked()
	p.mu.Unlock()
	if start {
		go p.flush()
	}
	select {
	case <-it.done:
		return it.cmd
	case <-ctx.Done():
	}
	// The caller's deadline. A call still queued is never sent; one on the
	// wire may run, and its reply will land in a command nobody reads: the
	// caller gets a fresh one carrying the error (not booked, or MaybeBooked).
	out := redis.NewCmd(ctx, it.cmd.Args()...)
	if it.state.CompareAndSwap(pipeQueued, pipeAbandoned) {
		out.SetErr(fmt.Errorf("%w (%w): %w", errAbandoned, errNeverSent, ctx.Err()))
		return out
	}
	select {
	case <-it.done: // the reply came in the meantime
		return it.cmd
	default:
	}
	out.SetErr(fmt.Errorf("%w after it was sent: %w", errAbandoned, ctx.Err()))
	return out
}

// flush writes batches until the queue is empty, then ends (an idle
// pipeline holds no goroutine). Carried commands go with a batch of script
// calls, or alone once due.
//
// Before it takes a batch it yields once. A new flusher is scheduled ahead
// of every other runnable goroutine, so without the yield it would take
// the one call that started it while the requests ready to follow it wait
// for the next round trip; after the yield they are in its batch. It costs
// nothing on an idle gateway (nothing else to run) and does not wait for
// calls that are not ready, so unlike a linger it adds no latency at low
// load (make bench, docs/benchmarks.md "Round 4": a 100 µs linger cost CPU
// at concurrency 16; the yield took Redis' CPU per paid call 12–19 % down
// there, the fuller batches' doing).
func (p *AutoPipeline) flush() {
	for {
		runtime.Gosched()
		p.mu.Lock()
		batch := takeFront(&p.queue, p.maxBatch)
		var riders []passenger
		if len(batch) > 0 || p.due {
			riders = takeFront(&p.carried, p.maxCarry)
			p.due = p.due && len(p.carried) > 0
		}
		if len(batch) == 0 && len(riders) == 0 {
			p.inflight--
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.exec(batch, riders)
	}
}

// takeFront removes and returns up to limit items from the front of *q,
// keeping its backing array for what is appended next.
func takeFront[T any](q *[]T, limit int) []T {
	n := min(len(*q), limit)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	copy(out, *q)
	rest := copy(*q, (*q)[n:])
	clear((*q)[rest:])
	*q = (*q)[:rest]
	return out
}

// exec sends one batch: one write, one read. Each call's reply or error
// lands in its own command.
func (p *AutoPipeline) exec(batch []*piped, riders []passenger) {
	sent := batch[:0:0]
	for _, it := range batch {
		if it.state.CompareAndSwap(pipeQueued, pipeSent) {
			sent = append(sent, it)
		}
	}
	if len(sent) == 0 && len(riders) == 0 {
		return
	}
	// No deadline of its own: the client's socket, dial and pool timeouts
	// bound the round trip, and callers stop waiting at their own deadlines
	// (one caller's deadline must not cut the others' batch short).
	ctx := context.Background()
	pipe := p.UniversalClient.Pipeline()
	for _, it := range sent {
		_ = pipe.Process(ctx, it.cmd)
	}
	for _, r := range riders {
		_ = pipe.Process(ctx, r.cmd)
	}
	p.batches.Add(1)
	p.calls.Add(uint64(len(sent)))
	_, _ = pipe.Exec(ctx) // the errors are the commands'
	for _, it := range sent {
		close(it.done)
	}
	for _, r := range riders {
		r.done(r.cmd.Err())
	}
}
