// Package recovery is settlementd's Redis loss watcher: a leader-only job
// that checks, every interval, for the generation marker
// (balances.Layout.Generation) and, when it is missing — Redis lost its
// data, or this is a fresh deployment — and still missing after a grace
// period (Watcher.Grace, one interval), rebuilds the key lookups, account
// records, balances, credited deposit ids, x402 bundles and x402
// batch-settlement channels from PostgreSQL
// with the same code as `settlementd reconcile -apply` (reconcile.Run in
// its Rebuild form), which sets the marker when it has written everything.
//
// With the marker present, each new leader's watcher first makes sure
// PostgreSQL holds a state of every batch-settlement channel Redis holds
// (recordChannels), so that a later loss can rebuild them.
//
// While the marker is missing the gateway answers a key it cannot find with
// 503 metering_recovering and Retry-After (never 401), so traffic resumes by
// itself once the rebuild ends; no operator runs anything.
//
// Crash safety: the rebuild writes each account (lookup, record, money,
// deposit ids) and each wallet's bundle in one Lua script, and leaves alone
// what the gateway already holds live, so a rebuild cut short (crash, lost
// leadership) is simply run again by the next leader, and two overlapping
// runs (a stale leader) write each record at most once. The marker is set
// only by the run whose token is still in Redis, so a run that raced a
// second loss does not declare Redis whole.
package recovery

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// DefaultReplayWait is ReplayWait's default.
const DefaultReplayWait = 15 * time.Second

// gatewayAlive is how recent a gateway's heartbeat must be for a rebuild to
// wait for its replay (gateways beat every 200 ms).
const gatewayAlive = 3 * time.Second

// DefaultInterval is how often the leader checks the marker: one EXISTS
// (config.DefaultRedisWatchInterval; TOLLGATE_REDIS_WATCH_INTERVAL).
const DefaultInterval = time.Second

// Watcher is the job.
type Watcher struct {
	Pool   *pgxpool.Pool
	Redis  redis.UniversalClient
	Prefix string
	Shards int // metering shards (balances.Layout): every shard's marker is checked
	Log    *zap.Logger
	// Grace is how long the marker must stay missing before a rebuild
	// starts (default: DefaultInterval). An ingest batch read from the
	// stream just before the loss commits to PostgreSQL right after it; a
	// rebuild that read its accounts before that commit would leave their
	// balances high by those debits. The gateway answers "recovering"
	// meanwhile, so waiting costs callers a Retry-After, not money.
	Grace time.Duration
	// ReplayWait bounds how long, after Grace, a rebuild waits for the
	// gateways alive to have appended the money facts they keep
	// (meter.Replayer) and for ingest to have stored everything appended
	// until then (default DefaultReplayWait). The rebuild reads PostgreSQL
	// after that, so the balances it writes include every replayed debit
	// and refund exactly once. Past the bound it rebuilds anyway (logged):
	// a gateway that replays later has its facts stored, and the balances
	// of those payers differ from PostgreSQL's until `settlementd
	// reconcile -apply`.
	ReplayWait time.Duration
	// Group is the ingest consumer group whose progress shows the replayed
	// facts stored (default "settlementd").
	Group string

	missingSince time.Time // runs of the job never overlap (jobs.Scheduler)
	replayedAt   int64     // Redis time (ms) at which every gateway alive had replayed; 0 not yet
	channelsSeen bool      // this watcher found every channel Redis holds recorded in PostgreSQL

	floors []int64 // per shard: the highest ledger count seen published (rollback.go)

	rebuilds   *prometheus.CounterVec
	olderTotal prometheus.Counter
	older      prometheus.Gauge
	duration   prometheus.Gauge
	missing    prometheus.Gauge
}

// New returns the watcher; Register adds its metrics.
func New(pool *pgxpool.Pool, rdb redis.UniversalClient, prefix string, log *zap.Logger) *Watcher {
	if log == nil {
		log = zap.NewNop()
	}
	return &Watcher{Pool: pool, Redis: rdb, Prefix: prefix, Log: log.Named("recovery"), Grace: DefaultInterval,
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_redis_rebuilds_total",
			Help: "Automatic rebuilds of Redis from PostgreSQL after the generation marker was found missing, by result (ok, error, lost: Redis was lost again during the run).",
		}, []string{"result"}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_redis_rebuild_duration_seconds",
			Help: "Duration of the last automatic rebuild of Redis from PostgreSQL.",
		}),
		olderTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "settlementd_redis_older_than_ledger_total",
			Help: "Times the leader found a Redis shard older than the ledger (restored from a snapshot, or missing writes PostgreSQL has) and wiped it for a rebuild. Alert on any increase.",
		}),
		older: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_redis_older_than_ledger",
			Help: "1 from finding a Redis shard older than the ledger until its rebuild from PostgreSQL is done.",
		}),
		missing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_redis_generation_missing",
			Help: "1 while the leader finds Redis without its generation marker (the gateway answers keys 503 metering_recovering).",
		}),
	}
}

// Register adds the metrics to reg.
func (w *Watcher) Register(reg prometheus.Registerer) {
	reg.MustRegister(w.rebuilds, w.duration, w.missing, w.olderTotal, w.older)
}

// Name is the job's name.
func (w *Watcher) Name() string { return "redis-recovery" }

// Run is one check, and a rebuild when the marker is missing.
func (w *Watcher) Run(ctx context.Context) error {
	if wiped, err := w.checkLedger(ctx); err != nil {
		return err
	} else if wiped {
		// The wiped shard is a Redis that lost its data: the gateways
		// replay to it from their next tick, and the grace starts now.
		w.missing.Set(1)
		w.missingSince, w.replayedAt = time.Now(), 0
		return nil
	}
	present, err := reconcile.MarkersPresent(ctx, w.Redis, w.Prefix, w.Shards)
	if err != nil {
		return err // Redis down: the gateway answers 503 by itself; check again next tick
	}
	if present {
		w.missing.Set(0)
		w.older.Set(0)
		w.missingSince, w.replayedAt = time.Time{}, 0
		if !w.channelsSeen {
			if err := w.recordChannels(ctx); err != nil {
				return err
			}
			w.channelsSeen = true
		}
		return nil
	}
	w.missing.Set(1)
	if w.missingSince.IsZero() {
		w.missingSince = time.Now()
		w.Log.Warn("Redis has no generation marker (it lost its data, or this deployment is new): rebuilding keys, balances, deposits, bundles and x402 channels from PostgreSQL after a grace period; the gateway answers keys and vouchers 503 metering_recovering meanwhile",
			zap.Duration("grace", w.Grace))
	}
	if time.Since(w.missingSince) < w.Grace {
		return nil
	}
	if done, err := w.replaysStored(ctx); err != nil {
		return err
	} else if !done {
		waited := time.Since(w.missingSince) - w.Grace
		if waited < w.replayWait() {
			return nil
		}
		w.Log.Warn("rebuilding without every gateway's replayed money facts stored: the balances of their payers may differ from PostgreSQL's until `settlementd reconcile -apply`",
			zap.Duration("waited", waited))
	}
	start := time.Now()
	rep, err := reconcile.Run(ctx, w.Pool, w.Redis, reconcile.Options{Prefix: w.Prefix, Shards: w.Shards, Rebuild: true}, w.Log)
	took := time.Since(start)
	switch {
	case errors.Is(err, reconcile.ErrLostDuringRun):
		w.replayedAt = 0
		w.rebuilds.WithLabelValues("lost").Inc()
		w.Log.Warn("Redis was lost again (or another rebuild started) during the rebuild; running it again", zap.Duration("took", took))
		return nil
	case err != nil:
		w.rebuilds.WithLabelValues("error").Inc()
		return err
	}
	w.rebuilds.WithLabelValues("ok").Inc()
	w.duration.Set(took.Seconds())
	w.missing.Set(0)
	w.older.Set(0)
	w.missingSince, w.replayedAt = time.Time{}, 0
	w.Log.Info("Redis rebuilt from PostgreSQL; generation marker set, metering resumes",
		zap.Duration("took", took), zap.Int("accounts", rep.Accounts), zap.Int("accounts_written", rep.Changed),
		zap.Int("wallets", rep.Wallets), zap.Int("wallets_written", rep.WalletsChanged), zap.Int("live_left_alone", rep.Live),
		zap.Int("x402_channels", rep.Channels), zap.Int("x402_channels_written", rep.ChannelsWritten),
		zap.String("generation", rep.Generation))
	return nil
}

// recordChannels makes sure PostgreSQL holds a state of every
// batch-settlement channel Redis holds, once per watcher (each new leader):
// a channel drawn from before the gateway recorded channel states
// (migration 0072), and unchanged since, has none, and a Redis loss would
// take its latest voucher (what the claims pay the receiver from). Such a
// channel's state is appended to the stream as it is now
// (meter.RecordChannel) and ingested like any other; a channel whose states
// are still in the stream is recorded once more, which changes nothing (the
// newest state wins).
func (w *Watcher) recordChannels(ctx context.Context) error {
	m, err := meter.New(w.Redis, meter.Config{Prefix: w.Prefix, Shards: w.Shards})
	if err != nil {
		return err
	}
	ids, err := m.Channels(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	rows, err := w.Pool.Query(ctx, `SELECT channel_id FROM x402_channels WHERE channel_id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	has := make(map[string]bool, len(known))
	for _, id := range known {
		has[id] = true
	}
	recorded := 0
	for _, id := range ids {
		if has[id] {
			continue
		}
		ok, err := m.RecordChannel(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			recorded++
		}
	}
	if recorded > 0 {
		w.Log.Info("recorded the state of x402 channels PostgreSQL had none of", zap.Int("channels", recorded))
	}
	return nil
}

func (w *Watcher) replayWait() time.Duration {
	if w.ReplayWait > 0 {
		return w.ReplayWait
	}
	return DefaultReplayWait
}

// replaysStored reports whether every gateway alive (a heartbeat in
// balances.Layout.Gateways in the last gatewayAlive) has appended its kept
// money facts to every shard that lost its marker (balances.Layout.Replayed),
// and the ingest group has stored every entry appended until then. Both
// sets are in the Redis that lost its data: a gateway beats and replays
// within its next tick after the loss. A second loss meanwhile takes the
// sets with it, and the wait starts again.
func (w *Watcher) replaysStored(ctx context.Context) (bool, error) {
	layout := balances.Layout{Prefix: w.Prefix, Shards: w.Shards}
	group := w.Group
	if group == "" {
		group = ingest.DefaultGroup
	}
	var lost []balances.Layout
	for i := range layout.N() {
		l := layout.Shard(i)
		if n, err := w.Redis.Exists(ctx, l.Generation()).Result(); err != nil {
			return false, err
		} else if n == 0 {
			lost = append(lost, l)
		}
	}
	for _, l := range lost {
		since := strconv.FormatInt(time.Now().Add(-gatewayAlive).UnixMilli(), 10)
		alive, err := w.Redis.ZRangeByScore(ctx, l.Gateways(), &redis.ZRangeBy{Min: since, Max: "+inf"}).Result()
		if err != nil {
			return false, err
		}
		for _, gw := range alive {
			ok, err := w.Redis.SIsMember(ctx, l.Replayed(), gw).Result()
			if err != nil || !ok {
				w.replayedAt = 0
				return false, err
			}
		}
	}
	if w.replayedAt == 0 {
		// Every entry appended so far has an id at or below Redis's clock.
		now, err := w.Redis.Time(ctx).Result()
		if err != nil {
			return false, err
		}
		w.replayedAt = now.UnixMilli() + 1
	}
	for _, l := range lost {
		stream := l.Stream(0)
		if n, err := w.Redis.Exists(ctx, stream).Result(); err != nil {
			return false, err
		} else if n == 0 {
			continue // nothing appended
		}
		wm, err := ingest.GroupWatermark(ctx, w.Redis, stream, group)
		if errors.Is(err, ingest.ErrNoGroup) {
			return false, nil // ingest has not found the new stream yet
		}
		if err != nil {
			return false, err
		}
		// Drained: every entry in the stream is stored, those appended
		// until replayedAt included (the same millisecond as replayedAt
		// would otherwise hold a rebuild back a tick for nothing).
		if !wm.Drained() && wm.LowMs < w.replayedAt {
			return false, nil
		}
	}
	return true, nil
}
