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
// never blocks, failed writes are retried with backoff, and Close flushes
// what is left. Events go one of two ways:
//
//   - Carried (a standalone Redis metered through an AutoPipeline,
//     WriterConfig.Carrier): each event's XADD rides the next batch of
//     metering scripts, so under load it costs no write or read of its own.
//     Only a failed one comes back here to be retried.
//   - Queued: a goroutine per stream pipelines whatever has queued up since
//     its last write (batches grow with load; latency stays one round trip
//     when idle). One queue per shard's stream, so a Redis Cluster master
//     that fails holds back only its own shard's events while the writer
//     retries them, not every other shard's behind them.
//
// Crash semantics (docs/decisions.md, "Metering"): events still queued when
// the process dies are lost. Only Revenue events travel this way; the money
// facts (Debit, Refund) are written by the metering scripts in the same
// atomic step as the balance change, so a lost Revenue event loses who
// served a request, never what it cost.
type EventWriter struct {
	rdb     redis.Cmdable
	carrier Carrier
	stream  string
	layout  balances.Layout // sharded: events go to their payer's shard's stream
	log     *zap.Logger
	max     int
	cap     int

	mu     sync.RWMutex // guards closed against the channels' close
	closed bool
	lanes  []chan queued // one per stream (carried: one, for the retries)
	wg     sync.WaitGroup
	abort  chan struct{}

	carried sync.WaitGroup // carried events whose reply is not in yet
	riding  atomic.Int64

	written atomic.Uint64
	dropped atomic.Uint64
	retries atomic.Uint64
}

// Carrier sends a background command along with other traffic
// (AutoPipeline.Carry): done runs once its reply or error is in.
type Carrier interface {
	Carry(cmd redis.Cmder, done func(error))
	SendCarried()
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
	// instead of Stream (see shardOf).
	Layout balances.Layout
	// Carrier, when set, carries each event's XADD (see EventWriter).
	Carrier  Carrier
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
	w := &EventWriter{rdb: rdb, carrier: cfg.Carrier, stream: cfg.Stream, layout: cfg.Layout, log: cfg.Logger, max: cfg.MaxBatch,
		cap: cfg.Capacity, abort: make(chan struct{})}
	n := 1
	if w.carrier == nil && w.layout.Sharded() {
		n = w.layout.N()
	}
	w.lanes = make([]chan queued, n)
	for i := range w.lanes {
		// Each stream's queue may hold the whole capacity: a failed shard
		// fills only its own (Enqueue still caps the total).
		w.lanes[i] = make(chan queued, cfg.Capacity)
		w.wg.Add(1)
		go w.run(w.lanes[i])
	}
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
	shard := w.shardOf(e)
	q := queued{stream: w.stream, vals: vals}
	if w.layout.Sharded() {
		q.stream = w.layout.Stream(shard) // built only when sharded: it allocates
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed || w.pending() >= w.cap {
		w.dropped.Add(1)
		return false
	}
	if w.carrier != nil {
		w.carry(q)
		return true
	}
	select {
	case w.lanes[shard%len(w.lanes)] <- q:
		return true
	default:
		w.dropped.Add(1)
		return false
	}
}

// carry hands q's XADD to the carrier; a failed one goes to the retry
// queue.
func (w *EventWriter) carry(q queued) {
	w.carried.Add(1)
	w.riding.Add(1)
	cmd := redis.NewStringCmd(context.Background(), xaddArgs(q)...)
	w.carrier.Carry(cmd, func(err error) {
		defer w.carried.Done()
		defer w.riding.Add(-1)
		if err == nil {
			w.written.Add(1)
			return
		}
		w.retries.Add(1)
		w.log.Warn("event stream write failed; retrying", zap.Error(err))
		w.mu.RLock()
		defer w.mu.RUnlock()
		select {
		case w.lanes[0] <- q: // the lanes close only after every carried reply is in
		default:
			w.dropped.Add(1)
		}
	})
}

// xaddArgs is XADD stream * field value ...: what redis.XAddArgs builds.
func xaddArgs(q queued) []any {
	args := make([]any, 0, 3+len(q.vals))
	args = append(args, "xadd", q.stream, "*")
	return append(args, q.vals...)
}

// shardOf is the shard whose stream an event goes to: with one shard, 0;
// sharded, a revenue event goes to its payer's shard (the account's or the
// wallet's; a free call's by its id when it has no account), any other
// event to shard 0. settlementd consumes every shard's stream, so the
// shard only spreads the writes; it is not needed to match the Debit's.
func (w *EventWriter) shardOf(e events.Event) int {
	if !w.layout.Sharded() {
		return 0
	}
	if r, ok := e.(*events.Revenue); ok {
		if r.Account != "" {
			return w.layout.ShardOfPayer(r.Account)
		}
		return w.layout.ShardOfPayer(r.ID)
	}
	return 0
}

// pending is how many events wait (queued or carried).
func (w *EventWriter) pending() int {
	n := int(w.riding.Load())
	for _, l := range w.lanes {
		n += len(l)
	}
	return n
}

// Stats reports events written, dropped and retried writes so far, and how
// many wait.
func (w *EventWriter) Stats() (written, dropped, retries uint64, pending int) {
	return w.written.Load(), w.dropped.Load(), w.retries.Load(), w.pending()
}

// Close stops accepting events and waits until the queue is written or ctx
// ends; what could not be written by then is dropped (and logged).
func (w *EventWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	w.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		if w.carrier != nil {
			w.carrier.SendCarried()
			w.carried.Wait() // failures are queued for retry by now
		}
		if first {
			w.mu.Lock()
			for _, l := range w.lanes {
				close(l)
			}
			w.mu.Unlock()
		}
		w.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		select {
		case <-w.abort:
		default:
			close(w.abort)
		}
		<-finished
		return ctx.Err()
	}
}

func (w *EventWriter) run(ch chan queued) {
	defer w.wg.Done()
	batch := make([]queued, 0, w.max)
	for {
		first, ok := <-ch
		if !ok {
			return
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < w.max {
			select {
			case v, ok := <-ch:
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
