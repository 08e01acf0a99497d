// Package ingest moves the gateway's events from the Redis stream into
// Postgres, exactly once in effect:
//
//   - a consumer group (default "settlementd") spreads the stream over every
//     replica's consumers; an entry is acknowledged (XACK) only after the
//     transaction that stored it has committed;
//   - every table is keyed by the event's own id and written with ON CONFLICT
//     DO NOTHING, so an entry delivered twice (XADDed twice, or committed and
//     then redelivered because the process died before XACK) is stored once;
//   - entries a dead consumer left pending are taken over with XAUTOCLAIM
//     once idle for ClaimMinIdle;
//   - entries this build cannot book are parked in dead_letters (and
//     acknowledged): nothing is dropped and nothing blocks the stream.
//
// After its commits each consumer records the group's watermark (see
// GroupWatermark) in Postgres, which is what the epoch closer waits for.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/crashhook"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/evidence"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// DefaultGroup is the consumer group's name when Config.Group is empty.
const DefaultGroup = "settlementd"

// Config of the consumers. Zero values take the defaults noted.
type Config struct {
	Stream         string        // stream key (<prefix>events)
	Group          string        // consumer group (settlementd)
	Consumer       string        // consumer name, unique per process
	Workers        int           // consumers in this process, named Consumer-1..n when > 1 (default 1)
	Batch          int           // entries per read and per transaction (default 4000)
	Block          time.Duration // how long a read waits for new entries (default 1s)
	ClaimMinIdle   time.Duration // idle time before another consumer's pending entry is taken over (default 30s)
	ClaimEvery     time.Duration // how often pending entries are checked for takeover (default 5s)
	WatermarkEvery time.Duration // least interval between watermark records while busy (default 200ms)
	StaleConsumer  time.Duration // idle consumers with nothing pending are removed from the group after this (default 1h)
	CommitTimeout  time.Duration // bound on one batch's transaction, also while shutting down (default 30s)
	// Linger: after a read that returned less than half a batch (but not
	// nothing), wait this long before the next read so entries gather into
	// a fuller batch (default 20ms; negative: never). A consumer that keeps
	// up with the stream otherwise writes a transaction for every few
	// entries, and a transaction's fixed costs (round trips, the rollup
	// upserts, the commit) dominate CPU per event; the price is at most
	// Linger more ingest lag.
	Linger time.Duration
	// Registry is the node registry hash (<prefix>nodes) whose records are
	// rewritten after evidence quarantines a node (default: the stream's
	// prefix + registry.NodesKey, as the stream is <prefix>events).
	Registry string
}

func (c *Config) defaults() {
	if c.Group == "" {
		c.Group = DefaultGroup
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.Batch <= 0 {
		c.Batch = 4000
	}
	if c.Block <= 0 {
		c.Block = time.Second
	}
	if c.ClaimMinIdle <= 0 {
		c.ClaimMinIdle = 30 * time.Second
	}
	if c.ClaimEvery <= 0 {
		c.ClaimEvery = 5 * time.Second
	}
	if c.WatermarkEvery <= 0 {
		c.WatermarkEvery = 200 * time.Millisecond
	}
	if c.StaleConsumer <= 0 {
		c.StaleConsumer = time.Hour
	}
	if c.CommitTimeout <= 0 {
		c.CommitTimeout = 30 * time.Second
	}
	if c.Linger == 0 {
		c.Linger = 20 * time.Millisecond
	}
	if c.Registry == "" {
		c.Registry = strings.TrimSuffix(c.Stream, "events") + registry.NodesKey
	}
}

// Ingester runs the consumers of one process.
type Ingester struct {
	rdb  redis.UniversalClient
	pool *pgxpool.Pool
	cfg  Config
	log  *zap.Logger
	m    *metrics
	seq  ledgerSeq
}

// New returns an ingester; metrics go to reg (nil: not registered).
func New(rdb redis.UniversalClient, pool *pgxpool.Pool, cfg Config, log *zap.Logger, reg prometheus.Registerer) (*Ingester, error) {
	cfg.defaults()
	if cfg.Stream == "" || cfg.Consumer == "" {
		return nil, errors.New("ingest: stream and consumer name are required")
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Ingester{rdb: rdb, pool: pool, cfg: cfg, log: log.Named("ingest"), m: newMetrics(reg)}, nil
}

// Run consumes until ctx ends. A batch being written when ctx ends is still
// committed and acknowledged (bounded by CommitTimeout), and so is a batch
// already read ahead of it; entries read but not committed (a commit that
// failed while shutting down) stay pending for a restart or another replica.
func (in *Ingester) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range in.cfg.Workers {
		name := in.cfg.Consumer
		if in.cfg.Workers > 1 {
			name = fmt.Sprintf("%s-%d", name, i+1)
		}
		w := &worker{in: in, name: name, claims: i == 0}
		wg.Go(func() { w.run(ctx) })
	}
	wg.Wait()
}

// worker is one consumer of the group.
type worker struct {
	in     *Ingester
	name   string
	claims bool // this worker also takes over dead consumers' entries

	lastMark  time.Time
	markEvent int64  // newest event time committed since the last record
	markID    string // highest stream id committed since the last record
}

func (w *worker) run(ctx context.Context) {
	in := w.in
	log := in.log.With(zap.String("consumer", w.name))
	log.Info("consuming", zap.String("stream", in.cfg.Stream), zap.String("group", in.cfg.Group))
	defer log.Info("stopped consuming")

	backoff := newBackoff()
	for ctx.Err() == nil {
		if err := in.ensureGroup(ctx); err != nil {
			log.Warn("creating consumer group", zap.Error(err))
			backoff.wait(ctx)
			continue
		}
		break
	}
	// A consumer restarted under the same name owns what it left pending.
	if err := w.drainOwn(ctx); err != nil && ctx.Err() == nil {
		log.Warn("recovering own pending entries", zap.Error(err))
	}
	nextClaim := time.Time{}
	thin := false // the last read returned a thin batch
	// ahead is the next read, started while the current batch commits: a
	// consumer behind the stream then decodes batch n+1 (and Redis serves
	// it) while PostgreSQL writes batch n, instead of each waiting on the
	// other. Only after a full batch (the stream has more) and when no claim
	// is due; the entries it reads are pending under this consumer like any
	// others until their own commit and XACK.
	var ahead <-chan fetched
	for ctx.Err() == nil {
		var f fetched
		if ahead != nil {
			f, ahead = <-ahead, nil
		} else {
			if thin && in.cfg.Linger > 0 {
				linger(ctx, in.cfg.Linger)
			}
			if w.claims && !time.Now().Before(nextClaim) {
				if err := w.claim(ctx); err != nil && ctx.Err() == nil {
					log.Warn("claiming pending entries", zap.Error(err))
				}
				nextClaim = time.Now().Add(in.cfg.ClaimEvery)
			}
			f = w.fetch(ctx)
		}
		msgs, err := f.msgs, f.err
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if isNoGroup(err) {
				_ = in.ensureGroup(ctx)
			}
			log.Warn("reading the stream", zap.Error(err))
			backoff.wait(ctx)
			continue
		}
		backoff.reset()
		thin = len(msgs) > 0 && len(msgs) < in.cfg.Batch/2
		if len(msgs) > 0 {
			var stored chan struct{}
			if len(msgs) >= in.cfg.Batch && (!w.claims || time.Now().Before(nextClaim)) {
				ch, done := make(chan fetched, 1), make(chan struct{})
				go func() { ch <- w.fetchAhead(ctx, done) }()
				ahead, stored = ch, done
			}
			ok := w.processBatch(ctx, msgs, f.b)
			f.b.release()
			if stored != nil {
				close(stored)
			}
			if !ok {
				if ahead != nil {
					<-ahead // its entries stay pending, as this batch's do
				}
				return
			}
		}
		w.mark(ctx, len(msgs) == 0)
	}
	// Shutting down with a read already done: store what it read, as a
	// batch being written is (Run), rather than leave it pending for a
	// restart or a takeover.
	if ahead != nil {
		if f := <-ahead; f.err == nil && len(f.msgs) > 0 {
			w.processBatch(ctx, f.msgs, f.b)
			f.b.release()
		}
	}
}

// fetched is one read of new entries, decoded.
type fetched struct {
	msgs []entry
	b    *batch
	err  error
}

// fetch reads new entries and decodes them.
func (w *worker) fetch(ctx context.Context) fetched {
	msgs, err := w.readEntries(ctx, ">")
	f := fetched{msgs: msgs, err: err}
	if err == nil && len(msgs) > 0 {
		f.b = batchOf(msgs)
	}
	return f
}

// topUpEvery paces fetchAhead's extra reads.
const topUpEvery = 5 * time.Millisecond

// fetchAhead is fetch run while the previous batch is being stored (stored
// closes when it is). A read that soon after the last one often finds less
// than a batch; rather than hand on a part batch (every transaction has
// fixed costs), it reads more, without blocking, every topUpEvery, until the
// batch is full, or Linger after the previous batch was stored (as a
// consumer that keeps up lingers), or at once then when Linger is off.
func (w *worker) fetchAhead(ctx context.Context, stored <-chan struct{}) fetched {
	f := w.fetch(ctx)
	t := time.NewTimer(topUpEvery)
	defer t.Stop()
	var deadline time.Time // Linger after stored closed
	for f.err == nil && len(f.msgs) > 0 && len(f.msgs) < w.in.cfg.Batch {
		if deadline.IsZero() {
			select {
			case <-stored:
				if w.in.cfg.Linger <= 0 {
					return f
				}
				deadline = time.Now().Add(w.in.cfg.Linger)
			default:
			}
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return f
		}
		t.Reset(topUpEvery)
		select {
		case <-ctx.Done():
			return f
		case <-t.C:
		}
		more, err := w.readN(ctx, ">", w.in.cfg.Batch-len(f.msgs), -1)
		if err != nil {
			// What was read is handed on; the next read meets the error again.
			return f
		}
		for _, m := range more {
			f.b.add(m)
		}
		f.msgs = append(f.msgs, more...)
	}
	return f
}

// ensureGroup creates the group at the start of the stream, so events
// written before settlementd first ran are ingested too.
func (in *Ingester) ensureGroup(ctx context.Context) error {
	err := in.rdb.XGroupCreateMkStream(ctx, in.cfg.Stream, in.cfg.Group, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

func isNoGroup(err error) bool { return err != nil && strings.Contains(err.Error(), "NOGROUP") }

// readEntries reads up to Batch entries: ">" for new ones, or an id for this
// consumer's own pending entries after it.
func (w *worker) readEntries(ctx context.Context, id string) ([]entry, error) {
	block := w.in.cfg.Block
	if id != ">" {
		block = -1 // no BLOCK: pending entries are returned at once
	}
	return w.readN(ctx, id, w.in.cfg.Batch, block)
}

// read is readEntries as go-redis messages.
func (w *worker) read(ctx context.Context, id string) ([]redis.XMessage, error) {
	es, err := w.readEntries(ctx, id)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	out := make([]redis.XMessage, len(es))
	for i, e := range es {
		out[i] = redis.XMessage{ID: e.id, Values: e.valueMap()}
	}
	return out, nil
}

// readN reads up to n entries after id, waiting up to block for new ones
// (negative: not at all).
func (w *worker) readN(ctx context.Context, id string, n int, block time.Duration) ([]entry, error) {
	return xreadgroup(ctx, w.in.rdb, w.in.cfg.Group, w.name, w.in.cfg.Stream, id, n, block)
}

// drainOwn processes entries pending under this consumer's name.
func (w *worker) drainOwn(ctx context.Context) error {
	after := "0"
	for ctx.Err() == nil {
		msgs, err := w.readEntries(ctx, after)
		if err != nil || len(msgs) == 0 {
			return err
		}
		w.in.m.claimed.Add(float64(len(msgs)))
		if !w.process(ctx, msgs) {
			return nil
		}
		after = msgs[len(msgs)-1].id
	}
	return nil
}

// claim takes over entries other consumers have left pending for longer than
// ClaimMinIdle (a crashed process, a replica that went away), and removes
// long-idle consumers that have nothing pending from the group.
func (w *worker) claim(ctx context.Context) error {
	in := w.in
	start := "0-0"
	for ctx.Err() == nil {
		msgs, next, err := in.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: in.cfg.Stream, Group: in.cfg.Group, Consumer: w.name,
			MinIdle: in.cfg.ClaimMinIdle, Start: start, Count: int64(in.cfg.Batch),
		}).Result()
		if err != nil {
			return err
		}
		if len(msgs) > 0 {
			in.m.claimed.Add(float64(len(msgs)))
			in.log.Info("took over pending entries", zap.String("consumer", w.name), zap.Int("entries", len(msgs)))
			if !w.process(ctx, entriesOf(msgs)) {
				return nil
			}
		}
		if next == "0-0" || next == "" {
			break
		}
		start = next
	}
	return pruneConsumers.Run(ctx, in.rdb, []string{in.cfg.Stream},
		in.cfg.Group, in.cfg.StaleConsumer.Milliseconds()).Err()
}

// pruneConsumers deletes consumers idle for longer than ARGV[2] ms that have
// nothing pending. It runs as one script so no entry can be delivered to a
// consumer between the check and the delete (which would drop the entry from
// the pending list).
var pruneConsumers = redis.NewScript(`
local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if tonumber(f['pending']) == 0 and tonumber(f['idle']) > tonumber(ARGV[2]) then
    removed = removed + redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
  end
end
return removed`)

// process stores msgs and acknowledges them. It retries transient failures
// until it succeeds or ctx ends; it returns false when it gave up because ctx
// ended (the entries stay pending).
func (w *worker) process(ctx context.Context, msgs []entry) bool {
	b := batchOf(msgs)
	defer b.release()
	return w.processBatch(ctx, msgs, b)
}

// processBatch is process with msgs already decoded into b.
func (w *worker) processBatch(ctx context.Context, msgs []entry, b *batch) bool {
	in := w.in
	backoff := newBackoff()
	for {
		start := time.Now()
		err := in.commit(ctx, b, w.name)
		if err != nil && isDataError(err) {
			// One entry Postgres refuses must not hold the others hostage:
			// store them one by one and park the ones refused.
			in.log.Warn("batch refused; storing entries one by one", zap.Error(err))
			err = w.commitEach(ctx, msgs)
		}
		if err == nil {
			in.m.batchSeconds.Observe(time.Since(start).Seconds())
			break
		}
		in.m.batches.WithLabelValues("error").Inc()
		if ctx.Err() != nil {
			in.log.Warn("shutting down with a batch uncommitted; it stays pending", zap.Int("entries", len(msgs)), zap.Error(err))
			return false
		}
		in.log.Warn("storing batch", zap.Int("entries", len(msgs)), zap.Error(err))
		backoff.wait(ctx)
	}
	in.m.batches.WithLabelValues("ok").Inc()
	in.m.observe(b)
	crashhook.Point("ingest-after-commit")

	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.cfg.CommitTimeout)
	defer cancel()
	if nodes := b.evidenceNodes(); len(nodes) > 0 {
		// Before the XACK, so a process dying here has the entries
		// redelivered and published again (the insert is a no-op then). A
		// failed write is not retried here (the entries must not stay
		// pending and hold the epoch close back): the node prober
		// republishes every node's status from Postgres.
		if err := evidence.Publish(actx, in.pool, in.rdb, in.cfg.Registry, nodes); err != nil {
			in.log.Warn("publishing quarantined nodes to the registry", zap.Strings("nodes", nodes), zap.Error(err))
		}
	}
	if err := in.rdb.XAck(actx, in.cfg.Stream, in.cfg.Group, b.ids...).Err(); err != nil {
		// Committed but not acknowledged: the entries will be redelivered
		// and are no-ops then. Nothing is lost.
		in.log.Warn("acknowledging committed entries", zap.Error(err))
	}
	w.markEvent = max(w.markEvent, b.maxEvent)
	w.markID = maxID(w.markID, b.ids[len(b.ids)-1])
	return true
}

// commit writes b in one transaction. It does not stop for ctx: a batch
// that started is finished (or fails on CommitTimeout), so shutdown never
// leaves work half-done in a way that matters — and a transaction that does
// not commit leaves nothing behind.
func (in *Ingester) commit(ctx context.Context, b *batch, consumer string) error {
	if b.len() == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.cfg.CommitTimeout)
	defer cancel()
	if b.copyRows() > 0 {
		err := pgx.BeginFunc(cctx, in.pool, func(tx pgx.Tx) error {
			return b.copyWrite(cctx, tx, consumer)
		})
		if !isUniqueViolation(err) {
			return err
		}
		// Part of the batch is already stored (copy.go): write it again,
		// skipping what is there.
		in.m.copyConflicts.Inc()
	}
	return pgx.BeginFunc(cctx, in.pool, func(tx pgx.Tx) error {
		return b.write(cctx, tx, consumer)
	})
}

// commitEach stores entries one per transaction, parking those Postgres
// refuses with the reason it gave.
func (w *worker) commitEach(ctx context.Context, msgs []entry) error {
	in := w.in
	for _, m := range msgs {
		one := batchOf([]entry{m})
		err := in.commit(ctx, one, w.name)
		if err == nil {
			continue
		}
		if !isDataError(err) {
			return err
		}
		parked := &batch{counts: map[string]int{}}
		parked.park(m, deadRejected, err.Error())
		if err := in.commit(ctx, parked, w.name); err != nil {
			return err
		}
		in.m.dead.WithLabelValues(deadRejected).Inc()
	}
	return nil
}

// isDataError: Postgres refused the data itself (class 22 data exception,
// 23 integrity violation, 54 program limit), so retrying cannot help. Other
// errors (connection, deadlock, shutdown) are retried as they are.
func isDataError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}

// mark records the group watermark, at most every WatermarkEvery while busy
// and on every idle read (so the watermark follows the clock when there is
// no traffic, and quiet epochs close).
func (w *worker) mark(ctx context.Context, idle bool) {
	in := w.in
	if !idle && time.Since(w.lastMark) < in.cfg.WatermarkEvery {
		return
	}
	// The Redis process before and after the watermark: an
	// acknowledgement names the process whose group state it read, and is
	// published only if that did not change meanwhile (a failover).
	run, runErr := meter.RunID(ctx, in.rdb, in.cfg.Stream)
	wm, err := GroupWatermark(ctx, in.rdb, in.cfg.Stream, in.cfg.Group)
	if err != nil {
		if ctx.Err() == nil {
			in.log.Warn("reading the stream watermark", zap.Error(err))
		}
		return
	}
	if runErr == nil {
		in.acknowledge(ctx, wm, run)
	}
	if err := RecordWatermark(ctx, in.pool, in.cfg.Stream, wm, w.markEvent, w.markID); err != nil {
		if ctx.Err() == nil {
			in.log.Warn("recording the stream watermark", zap.Error(err))
		}
		return
	}
	w.lastMark = time.Now()
	w.markEvent, w.markID = 0, ""
	in.m.watermarkLag.Set(float64(time.Now().UnixMilli()-wm.LowMs) / 1000)
	in.m.pending.Set(float64(wm.Pending))
}

// acknowledge publishes wm to the gateways (balances.Layout.Ingested of
// the stream's shard): they let go of the money facts they keep for replay
// below it (meter.Retention). Several consumers may publish out of order;
// an older value only makes the gateways keep facts a little longer.
//
// A fact is let go only when a failover cannot take it either: on a master
// with replicas the acknowledgement waits (WAIT) until every replica the
// master has holds everything written so far — the stored entries and the
// balance changes their scripts made. A replica that does not answer holds
// the acknowledgements back, and the gateways keep their facts (up to
// their bound) until it does or it is promoted: then the facts it lacks
// are booked again.
func (in *Ingester) acknowledge(ctx context.Context, wm Watermark, run string) {
	node, err := masterOf(ctx, in.rdb, in.cfg.Stream)
	if err != nil {
		return
	}
	prefix := strings.TrimSuffix(in.cfg.Stream, "events")
	if want, err := replicasOf(ctx, node); err != nil {
		return
	} else if want > 0 {
		var wait *redis.Cmd
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			// A write of this connection, so WAIT covers every write the
			// master made before it.
			p.Set(ctx, prefix+"ingest-fence", wm.LowMs, 0)
			wait = p.Do(ctx, "WAIT", want, ackReplicaWait.Milliseconds())
			return nil
		})
		if n, _ := wait.Int(); err != nil || n < want {
			return
		}
	}
	again, err := meter.RunID(ctx, in.rdb, in.cfg.Stream)
	if err != nil || again != run {
		return
	}
	if err := in.rdb.Set(ctx, prefix+"ingested", meter.FormatAck(wm.LowMs, run), 0).Err(); err != nil && ctx.Err() == nil {
		in.log.Warn("publishing the stream watermark to the gateways", zap.Error(err))
	}
	// The state count PostgreSQL has caught up with: the floor the
	// gateways hold this shard's Redis to (a Redis restored from the past
	// is below it). The replicas hold it too (the WAIT above). It starts
	// from the floor PostgreSQL keeps, so a settlementd restarted onto a
	// Redis restored from a snapshot publishes the real floor, not the
	// snapshot's; and what is published is kept there.
	if err := in.seq.load(ctx, in.pool, in.cfg.Stream); err != nil {
		if ctx.Err() == nil {
			in.log.Warn("reading the ledger's state count from PostgreSQL", zap.Error(err))
		}
		return // publishing a floor below PostgreSQL's could let a restored Redis pass
	}
	if v := in.seq.advance(ctx, node, prefix, run, wm.LowMs); v > 0 {
		if err := in.rdb.Set(ctx, prefix+"ledger-seq", v, 0).Err(); err != nil && ctx.Err() == nil {
			in.log.Warn("publishing the ledger's state count", zap.Error(err))
		}
		if err := in.seq.store(ctx, in.pool, in.cfg.Stream, v); err != nil && ctx.Err() == nil {
			in.log.Warn("keeping the ledger's state count in PostgreSQL", zap.Error(err))
		}
	}
}

// ackReplicaWait bounds how long an acknowledgement waits for the replicas.
const ackReplicaWait = 500 * time.Millisecond

// masterOf is the client of the Redis process holding key.
func masterOf(ctx context.Context, rdb redis.UniversalClient, key string) (*redis.Client, error) {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	}
	return nil, errors.New("ingest: unknown Redis client")
}

// replicasOf is how many replicas the master has: on a Redis Cluster every
// replica the cluster lists for it, connected, cut off or flagged failing
// (any may be promoted later, and must hold acknowledgements back until it
// has the writes; one gone for good holds them back until an operator
// removes it, CLUSTER FORGET); otherwise those connected.
func replicasOf(ctx context.Context, node *redis.Client) (int, error) {
	if id, err := node.ClusterMyID(ctx).Result(); err == nil {
		nodes, err := node.ClusterNodes(ctx).Result()
		if err != nil {
			return 0, err
		}
		n := 0
		for line := range strings.SplitSeq(nodes, "\n") {
			f := strings.Fields(line)
			// A replica flagged failing counts too: a busy one is flagged
			// and cleared again, and may then be promoted.
			if len(f) > 3 && f[3] == id && strings.Contains(f[2], "slave") {
				n++
			}
		}
		return n, nil
	}
	info, err := node.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(line, "connected_slaves:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, nil
}

// linger waits d (or until ctx ends).
func linger(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// backoff paces retries: 100 ms doubling to 5 s.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{d: 100 * time.Millisecond} }
func (b *backoff) reset()  { b.d = 100 * time.Millisecond }
func (b *backoff) wait(ctx context.Context) {
	t := time.NewTimer(b.d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	b.d = min(2*b.d, 5*time.Second)
}
