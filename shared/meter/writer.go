package meter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// EventWriter appends events to the stream off the request path: Enqueue
// never blocks, a single goroutine pipelines whatever has queued up since
// its last write (so batches grow with load and latency stays one Redis
// round trip when idle), failed writes are retried with backoff, and Close
// flushes what is left.
//
// Crash semantics (docs/decisions.md, "Metering"): events still queued when
// the process dies are lost. Only Revenue events travel this way; the money
// facts (Debit, Refund) are written by the metering scripts in the same
// atomic step as the balance change, so a lost Revenue event loses who
// served a request, never what it cost.
type EventWriter struct {
	rdb    redis.Cmdable
	stream string
	layout balances.Layout // sharded: events go to their payer's shard's stream
	log    *zap.Logger
	max    int

	mu     sync.RWMutex // guards closed against the channel close
	closed bool
	ch     chan queued
	done   chan struct{}
	abort  chan struct{}

	written atomic.Uint64
	dropped atomic.Uint64
	retries atomic.Uint64
}

// queued is an encoded event and the stream it goes to.
type queued struct {
	stream string
	vals   []any
}

// WriterConfig tunes an EventWriter.
type WriterConfig struct {
	Stream string
	// Layout, when sharded, sends each event to its payer's shard's stream
	// instead of Stream (see streamOf).
	Layout   balances.Layout
	Capacity int // events that may wait; beyond it Enqueue drops (default 65,536)
	MaxBatch int // events per pipeline (default 512)
	Logger   *zap.Logger
}

// NewEventWriter starts a writer.
func NewEventWriter(rdb redis.Cmdable, cfg WriterConfig) *EventWriter {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 1 << 16
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	w := &EventWriter{rdb: rdb, stream: cfg.Stream, layout: cfg.Layout, log: cfg.Logger, max: cfg.MaxBatch,
		ch: make(chan queued, cfg.Capacity), done: make(chan struct{}), abort: make(chan struct{})}
	go w.run()
	return w
}

// Enqueue queues an event. It returns false when the event was dropped:
// invalid, the queue full, or the writer closed.
func (w *EventWriter) Enqueue(e events.Event) bool {
	vals, err := events.Encode(e)
	if err != nil {
		w.dropped.Add(1)
		w.log.Error("dropping an invalid event", zap.String("type", e.EventType()), zap.String("id", e.EventID()), zap.Error(err))
		return false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.dropped.Add(1)
		return false
	}
	select {
	case w.ch <- queued{stream: w.streamOf(e), vals: vals}:
		return true
	default:
		w.dropped.Add(1)
		return false
	}
}

// streamOf is the stream an event goes to: with one shard, the writer's
// stream; sharded, a revenue event goes to its payer's shard (the account's
// or the wallet's; a free call's by its id when it has no account), any
// other event to shard 0. settlementd consumes every shard's stream, so the
// shard only spreads the writes; it is not needed to match the Debit's.
func (w *EventWriter) streamOf(e events.Event) string {
	if !w.layout.Sharded() {
		return w.stream
	}
	if r, ok := e.(*events.Revenue); ok {
		if r.Account != "" {
			return w.layout.Stream(w.layout.ShardOfPayer(r.Account))
		}
		return w.layout.Stream(w.layout.ShardOfPayer(r.ID))
	}
	return w.layout.Stream(0)
}

// Stats reports events written, dropped and retried writes so far, and how
// many wait.
func (w *EventWriter) Stats() (written, dropped, retries uint64, pending int) {
	return w.written.Load(), w.dropped.Load(), w.retries.Load(), len(w.ch)
}

// Close stops accepting events and waits until the queue is written or ctx
// ends; what could not be written by then is dropped (and logged).
func (w *EventWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		close(w.abort)
		<-w.done
		return ctx.Err()
	}
}

func (w *EventWriter) run() {
	defer close(w.done)
	batch := make([]queued, 0, w.max)
	for {
		first, ok := <-w.ch
		if !ok {
			return
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < w.max {
			select {
			case v, ok := <-w.ch:
				if !ok {
					break fill
				}
				batch = append(batch, v)
			default:
				break fill
			}
		}
		w.flush(batch)
	}
}

// flush writes batch, retrying what failed until it is written or the
// writer is aborted. A retried XADD may duplicate an entry whose reply was
// lost; settlementd stores each event id once, so that is harmless.
func (w *EventWriter) flush(batch []queued) {
	backoff := 10 * time.Millisecond
	for len(batch) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		pipe := w.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(batch))
		for i, q := range batch {
			cmds[i] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.stream, Values: q.vals})
		}
		_, _ = pipe.Exec(ctx)
		cancel()
		var failed []queued
		var firstErr error
		for i, c := range cmds {
			if err := c.Err(); err != nil {
				failed = append(failed, batch[i])
				if firstErr == nil {
					firstErr = err
				}
			}
		}
		w.written.Add(uint64(len(batch) - len(failed)))
		if len(failed) == 0 {
			return
		}
		batch = failed
		w.retries.Add(1)
		w.log.Warn("event stream write failed; retrying", zap.Int("events", len(batch)), zap.Error(firstErr))
		select {
		case <-w.abort:
			w.dropped.Add(uint64(len(batch)))
			w.log.Error("event writer closed with unwritten events", zap.Int("dropped", len(batch)), zap.Error(firstErr))
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}
