package recovery

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// DefaultTrimInterval is how often the leader trims the streams.
const DefaultTrimInterval = 5 * time.Second

// gatewayKeeps is how recent a gateway's heartbeat must be for what it
// keeps (balances.Layout.Keep) to hold the trim back: the gateways' own
// pruning of the heartbeat set (meter.Replayer).
const gatewayKeeps = time.Minute

// Trimmer is the leader-only job that keeps every shard's event stream as
// long as the ingest lag, not the traffic's history: it deletes (XTRIM
// MINID) the entries below the lowest of
//
//   - what settlementd has stored (the consumer group's watermark: every
//     entry below it is committed to PostgreSQL and acknowledged),
//   - what each live gateway still keeps (balances.Layout.Keep: the money
//     facts it may book again after a failover, which look their entry up,
//     and the requests whose lost reply it may still void, which look
//     their debit up).
//
// A live gateway that has not said what it keeps (an older version, or one
// that just started) holds the trim back entirely, as does a stream
// without its consumer group. Each run also checks the eviction policy
// (balances.CheckEviction): a policy changed at runtime is alerted.
type Trimmer struct {
	Redis  redis.UniversalClient
	Prefix string
	Shards int
	Group  string // ingest's consumer group (default ingest.DefaultGroup)
	Log    *zap.Logger

	length   *prometheus.GaugeVec
	trimmed  *prometheus.CounterVec
	eviction prometheus.Gauge
}

// NewTrimmer returns the job; Register adds its metrics.
func NewTrimmer(rdb redis.UniversalClient, prefix string, shards int, log *zap.Logger) *Trimmer {
	if log == nil {
		log = zap.NewNop()
	}
	return &Trimmer{Redis: rdb, Prefix: prefix, Shards: shards, Log: log.Named("stream-trim"),
		length: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "settlementd_stream_length",
			Help: "Entries in a shard's event stream after the last trim (XLEN): the ingest lag plus what gateways keep.",
		}, []string{"stream"}),
		trimmed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_stream_trimmed_total",
			Help: "Stream entries deleted by the trim (stored in PostgreSQL and kept by no gateway).",
		}, []string{"stream"}),
		eviction: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_redis_eviction_unsafe",
			Help: "1 while a Redis master's maxmemory-policy is not noeviction: it may evict money keys. Alert on 1.",
		}),
	}
}

// Register adds the metrics to reg.
func (t *Trimmer) Register(reg prometheus.Registerer) {
	reg.MustRegister(t.length, t.trimmed, t.eviction)
}

// Name is the job's name.
func (t *Trimmer) Name() string { return "stream-trim" }

// Run trims every shard's stream once.
func (t *Trimmer) Run(ctx context.Context) error {
	if err := balances.CheckEviction(ctx, t.Redis); errors.Is(err, balances.ErrEvictionPolicy) {
		t.eviction.Set(1)
		t.Log.Error("ALERT: "+err.Error(), zap.Error(err))
	} else if err == nil {
		t.eviction.Set(0)
	}
	layout := balances.Layout{Prefix: t.Prefix, Shards: t.Shards}
	var firstErr error
	for i := range layout.N() {
		if err := t.trim(ctx, layout.Shard(i)); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// MinID is the id below which shard l's stream may go: the lowest of the
// group's watermark and what every live gateway keeps; ok is false when
// nothing may go yet.
func (t *Trimmer) MinID(ctx context.Context, l balances.Layout) (minMs int64, ok bool, err error) {
	stream := l.Stream(0)
	group := t.Group
	if group == "" {
		group = ingest.DefaultGroup
	}
	wm, err := ingest.GroupWatermark(ctx, t.Redis, stream, group)
	if errors.Is(err, ingest.ErrNoGroup) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	minMs = wm.LowMs
	now, err := t.Redis.Time(ctx).Result()
	if err != nil {
		return 0, false, err
	}
	since := strconv.FormatInt(now.Add(-gatewayKeeps).UnixMilli(), 10)
	alive, err := t.Redis.ZRangeByScore(ctx, l.Gateways(), &redis.ZRangeBy{Min: since, Max: "+inf"}).Result()
	if err != nil {
		return 0, false, err
	}
	keeps, err := t.Redis.HGetAll(ctx, l.Keep()).Result()
	if err != nil {
		return 0, false, err
	}
	live := make(map[string]bool, len(alive))
	for _, gw := range alive {
		live[gw] = true
		v, found := keeps[gw]
		ms, perr := strconv.ParseInt(v, 10, 64)
		if !found || perr != nil {
			return 0, false, nil // a gateway that has not said what it keeps
		}
		minMs = min(minMs, ms)
	}
	var gone []string
	for gw := range keeps {
		if !live[gw] {
			gone = append(gone, gw)
		}
	}
	if len(gone) > 0 {
		t.Redis.HDel(ctx, l.Keep(), gone...)
	}
	return minMs, minMs > 0, nil
}

func (t *Trimmer) trim(ctx context.Context, l balances.Layout) error {
	stream := l.Stream(0)
	minMs, ok, err := t.MinID(ctx, l)
	if err != nil || !ok {
		return err
	}
	// Approximate (~): whole radix-tree nodes go, which is what frees
	// memory; at most one node's entries (stream-node-max-entries) above
	// the bound stay until the next run.
	n, err := t.Redis.XTrimMinIDApprox(ctx, stream, strconv.FormatInt(minMs, 10), 0).Result()
	if err != nil {
		return err
	}
	t.trimmed.WithLabelValues(stream).Add(float64(n))
	if xl, err := t.Redis.XLen(ctx, stream).Result(); err == nil {
		t.length.WithLabelValues(stream).Set(float64(xl))
	}
	return nil
}
