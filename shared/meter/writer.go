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
//   - Carried (metering through an AutoPipeline, or on a Redis Cluster a
//     ClusterAutoPipeline: WriterConfig.Carrier): each event's XADD rides
//     the next batch of metering scripts to its stream's Redis, so under
//     load it costs no write or read of its own. Only a failed one comes
//     back here, to its stream's queue, to be retried.
//   - Queued: a goroutine per stream pipelines whatever has queued up since
//     its last write (batches grow with load; latency stays one round trip
//     when idle). One queue per shard's stream, so a Redis Cluster master
//     that fails holds back only its own shard's events while the writer
//     retries them, not every other shard's behind them.
//
// Revenue events are packed (events.EncodePack): those of one stream that
// arrive within WriterConfig.PackWindow of each other, up to MaxPack, go as
// one stream entry, so Redis and settlementd pay their per-entry costs (the
// XADD, the consumer group's pending entry, the read, the XACK) once for
// the pack. Other events go one per entry.
//
// Crash semantics (docs/decisions.md, "Metering"): events still queued (or
// in an open pack) when the process dies are lost. Only Revenue events
// travel this way; the money facts (Debit, Refund) are written by the
// metering scripts in the same atomic step as the balance change, so a
// lost Revenue event loses who served a request, never what it cost.
type EventWriter struct {
	rdb     redis.Cmdable
	carrier Carrier
	retain  *Retention
	stream  string
	layout  balances.Layout // sharded: events go to their payer's shard's stream
	log     *zap.Logger
	max     int
	cap     int
	pack    int
	window  time.Duration

	mu     sync.RWMutex // guards closed against the channels' close
	closed bool
	lanes  []chan queued // one per stream (carried: for the retries)
	wg     sync.WaitGroup
	abort  chan struct{}

	packMu sync.Mutex
	open   map[string]*openPack // the pack filling up, per stream

	carried sync.WaitGroup // carried entries whose reply is not in yet
	waiting atomic.Int64   // events accepted and not yet written or dropped

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

// queued is an encoded stream entry, the stream it goes to and how many
// events it holds (more than one: a pack).
type queued struct {
	stream string
	vals   []any
	n      int
	shard  int
}

// openPack is a pack of revenue events still taking more.
type openPack struct {
	stream   string
	shard    int
	payloads []string
	timer    *time.Timer
}

func (p *openPack) entry() queued {
	return queued{stream: p.stream, vals: events.EncodePack(events.TypeRevenue, p.payloads), n: len(p.payloads), shard: p.shard}
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
	MaxBatch int // stream entries per pipeline (default 512)
	// MaxPack caps the revenue events packed into one stream entry
	// (default 32; 1 turns packing off). PackWindow is how long a pack
	// waits for more before it goes (default 2 ms): the most a revenue
	// event is held back, and what a crash may lose on top of the queue.
	MaxPack    int
	PackWindow time.Duration
	Logger     *zap.Logger
	// Retain, if set, keeps each revenue entry written until settlementd
	// has stored it, for a Redis that loses it (Replayer; retain.go).
	Retain *Retention
}

// NewEventWriter starts a writer.
func NewEventWriter(rdb redis.Cmdable, cfg WriterConfig) *EventWriter {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 1 << 16
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if cfg.MaxPack <= 0 {
		cfg.MaxPack = 32
	}
	cfg.MaxPack = min(cfg.MaxPack, events.MaxPack)
	if cfg.PackWindow <= 0 {
		cfg.PackWindow = 2 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	w := &EventWriter{rdb: rdb, carrier: cfg.Carrier, retain: cfg.Retain, stream: cfg.Stream, layout: cfg.Layout, log: cfg.Logger, max: cfg.MaxBatch,
		cap: cfg.Capacity, pack: cfg.MaxPack, window: cfg.PackWindow, abort: make(chan struct{}), open: map[string]*openPack{}}
	n := 1
	if w.layout.Sharded() {
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
	stream := w.stream
	if w.layout.Sharded() {
		stream = w.layout.Stream(shard) // built only when sharded: it allocates
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed || w.waiting.Load() >= int64(w.cap) {
		w.dropped.Add(1)
		return false
	}
	w.waiting.Add(1)
	if _, ok := e.(*events.Revenue); ok && w.pack > 1 {
		w.addToPack(stream, shard, vals[5].(string)) // Encode's "d": the payload
		return true
	}
	return w.send(queued{stream: stream, vals: vals, n: 1, shard: shard}, shard)
}

// addToPack adds a revenue event's payload to its stream's open pack,
// opening one (and its window) if there is none, and sends the pack when
// it is full. The caller holds w.mu for reading.
func (w *EventWriter) addToPack(stream string, shard int, payload string) {
	w.packMu.Lock()
	p := w.open[stream]
	if p == nil {
		p = &openPack{stream: stream, shard: shard, payloads: make([]string, 0, w.pack)}
		w.open[stream] = p
		p.timer = time.AfterFunc(w.window, func() { w.windowEnded(p) })
	}
	p.payloads = append(p.payloads, payload)
	full := len(p.payloads) >= w.pack
	if full {
		delete(w.open, stream)
		p.timer.Stop()
	}
	w.packMu.Unlock()
	if full {
		w.send(p.entry(), shard)
	}
}

// windowEnded sends p when its window ends, unless it was sent already
// (full, or taken by Close).
func (w *EventWriter) windowEnded(p *openPack) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	w.packMu.Lock()
	open := w.open[p.stream] == p
	if open {
		delete(w.open, p.stream)
	}
	w.packMu.Unlock()
	if open {
		w.send(p.entry(), p.shard)
	}
}

// send hands an entry on: to the carrier, or to its stream's queue. Its
// events are already counted as waiting; they count as dropped if the
// queue is full. The caller holds w.mu for reading.
func (w *EventWriter) send(q queued, shard int) bool {
	if w.carrier != nil {
		w.carry(q, shard)
		return true
	}
	select {
	case w.lanes[shard%len(w.lanes)] <- q:
		return true
	default:
		w.lost(q.n)
		return false
	}
}

// lost counts n waiting events as dropped.
func (w *EventWriter) lost(n int) {
	w.dropped.Add(uint64(n))
	w.waiting.Add(-int64(n))
}

// landed counts n waiting events as written.
func (w *EventWriter) landed(n int) {
	w.written.Add(uint64(n))
	w.waiting.Add(-int64(n))
}

// carry hands q's XADD to the carrier; a failed one goes to its stream's
// queue to be retried there (so a failed master holds back only its own
// shard's retries).
func (w *EventWriter) carry(q queued, shard int) {
	w.carried.Add(1)
	cmd := redis.NewStringCmd(context.Background(), xaddArgs(q)...)
	w.carrier.Carry(cmd, func(err error) {
		defer w.carried.Done()
		if err == nil {
			w.landed(q.n)
			w.retain.keepEntry(q, cmd.Val())
			return
		}
		w.retries.Add(1)
		w.log.Warn("event stream write failed; retrying", zap.Int("events", q.n), zap.Error(err))
		w.mu.RLock()
		defer w.mu.RUnlock()
		select {
		case w.lanes[shard%len(w.lanes)] <- q: // the lanes close only after every carried reply is in
		default:
			w.lost(q.n)
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

// Stats reports events written, dropped and retried writes so far, and how
// many wait.
func (w *EventWriter) Stats() (written, dropped, retries uint64, pending int) {
	return w.written.Load(), w.dropped.Load(), w.retries.Load(), int(w.waiting.Load())
}

// Close stops accepting events and waits until the queue is written or ctx
// ends; what could not be written by then is dropped (and logged).
func (w *EventWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	// The open packs go now. Holding w.mu, no window can be ending
	// (windowEnded holds it for reading), and one that ends later finds its
	// pack gone.
	w.packMu.Lock()
	packs := w.open
	w.open = map[string]*openPack{}
	w.packMu.Unlock()
	for _, p := range packs {
		p.timer.Stop()
		w.send(p.entry(), p.shard)
	}
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
		unwritten := 0
		for i, c := range cmds {
			if err := c.Err(); err != nil {
				failed = append(failed, batch[i])
				unwritten += batch[i].n
				if firstErr == nil {
					firstErr = err
				}
			} else {
				w.landed(batch[i].n)
				w.retain.keepEntry(batch[i], c.Val())
			}
		}
		if len(failed) == 0 {
			return
		}
		batch = failed
		w.retries.Add(1)
		w.log.Warn("event stream write failed; retrying", zap.Int("events", unwritten), zap.Error(firstErr))
		select {
		case <-w.abort:
			w.lost(unwritten)
			w.log.Error("event writer closed with unwritten events", zap.Int("dropped", unwritten), zap.Error(firstErr))
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}
