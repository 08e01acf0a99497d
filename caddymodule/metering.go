package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/accounts"
	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// writerFlushTimeout bounds how long a shutdown waits for queued events.
const writerFlushTimeout = 5 * time.Second

// Event writers outlive config reloads like the Redis clients they use, so
// a reload neither loses queued events nor stalls on a flush.
var writers = caddy.NewUsagePool()

type writerHandle struct {
	*meter.EventWriter
	retained *retained
}

func (w writerHandle) Destruct() error {
	w.retained.stop()
	ctx, cancel := context.WithTimeout(context.Background(), writerFlushTimeout)
	defer cancel()
	return w.Close(ctx)
}

// retained is this process's money facts kept until settlementd has stored
// them (meter.Retention) and the replayer that gives them to a Redis that
// lost them (meter.Replayer). It lives as long as the event writer: across
// config reloads, so a reload forgets nothing.
type retained struct {
	ret    *meter.Retention
	rep    *meter.Replayer
	cancel context.CancelFunc
	done   chan struct{}
}

func newRetained(rdb redis.UniversalClient, layout balances.Layout, log *zap.Logger) *retained {
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), meter.NewRequestID())
	ret := meter.NewRetention(layout.N(), 0, 0)
	r := &retained{ret: ret, rep: meter.NewReplayer(rdb, layout, ret, id, 0, log.Named("replay")), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		r.rep.Run(ctx)
	}()
	return r
}

func (r *retained) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}

// redisOptions are the connection settings of the metering Redis. Retries
// are off: a metering script that timed out may have run, and running it
// again would charge twice — the request fails with 503 instead. Dialing is
// retried once, so a down Redis answers 503 in ~0.1 s rather than ~0.5 s.
func redisOptions(url string, cluster bool) (redis.UniversalClient, error) {
	if cluster {
		o, err := clusterOptions(url)
		if err != nil {
			return nil, err
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	o.MaxRetries, o.PoolSize, o.DialerRetries, o.DialerRetryTimeout = -1, pool, 1, 50*time.Millisecond
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = time.Second, time.Second, time.Second
	return redis.NewClient(o), nil
}

// pool is the connection pool's size: one connection per request in
// flight; the default (10/CPU) queues under load.
const pool = 64

// clusterOptions are redisOptions for a Redis Cluster. go-redis's cluster
// client re-sends a command, or a pipeline, after a timeout or a lost
// connection up to MaxRedirects times whatever MaxRetries says, so a
// metering script whose answer was lost would run again: MaxRedirects -1
// turns every re-send off. A MOVED answer (the script did not run) is then
// a 503 too, until the slot map is reloaded: at once on the error, and
// every second.
func clusterOptions(url string) (*redis.ClusterOptions, error) {
	o, err := redis.ParseClusterURL(url)
	if err != nil {
		return nil, err
	}
	o.MaxRetries, o.MaxRedirects, o.PoolSize, o.DialerRetries, o.DialerRetryTimeout = -1, -1, pool, 1, 50*time.Millisecond
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = time.Second, time.Second, time.Second
	// go-redis reloads the slot map on MOVED, but a failed master answers
	// nothing: at the default interval (60 s) its slots would keep going
	// to it, 503 after 503, for up to a minute after its replica took over.
	o.ClusterStateReloadInterval = time.Second
	return o, nil
}

// scriptClient is the client the meter runs its scripts on: concurrent
// requests' metering calls share round trips (meter.AutoPipeline: one
// write and one read per batch instead of per request, the largest cost a
// paid call added in make bench), on a Redis Cluster per master
// (meter.ClusterAutoPipeline).
func scriptClient(rdb redis.UniversalClient) redis.UniversalClient {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		if ap, err := meter.NewClusterAutoPipeline(cc, meter.AutoPipelineConfig{}); err == nil {
			return ap
		}
		return rdb
	}
	if ap, err := meter.NewAutoPipeline(rdb, meter.AutoPipelineConfig{}); err == nil {
		return ap
	}
	return rdb
}

func rateOf(c *config.RateConfig, def meter.Rate) meter.Rate {
	if c == nil {
		return def
	}
	return meter.Rate{Rate: c.Rate, Per: time.Duration(c.Per), Burst: c.Burst}
}

func int64Or(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// provisionMetering builds the meter, its event writer and the limits. It
// runs after the Redis client exists.
func (h *Handler) provisionMetering(repl *caddy.Replacer) error {
	if h.Metering.Off {
		h.logger.Warn("metering is off: every call is free and unlimited")
		return nil
	}
	if h.redis == nil {
		return errors.New("tollgate: metering needs redis_url (or `metering off` for an open gateway)")
	}
	var err error
	if h.pay, err = payment.NewSettings(h.Payments, func(v string) string { return repl.ReplaceAll(v, "") }, h.dev); err != nil {
		return err
	}
	for id, cs := range h.chains {
		if w := cs.methods.Weights(); w != nil {
			if h.pay.MethodWeights == nil {
				h.pay.MethodWeights = map[string]map[string]uint32{}
			}
			h.pay.MethodWeights[strconv.FormatUint(id, 10)] = w
		}
	}
	if h.pay.PublicURL == "" {
		h.logger.Warn("public_url is not set: 402 answers and Sign-In-With-X challenges take their origin from the request's Host header; " +
			"set public_url in production so a signed sign-in names this gateway only")
	}

	create := rateOf(h.Metering.KeyCreateLimit, meter.Rate{Rate: meter.DefaultCreatePerWindow, Per: meter.DefaultCreateWindow})
	cfg := meter.Config{
		Prefix:         h.KeyPrefix,
		Shards:         h.RedisShards,
		ReplicaWait:    time.Duration(h.RedisReplicaWait),
		OnUnreplicated: metrics.MeterUnreplicated.Inc,
		OnOlderThanLedger: func(shard int) {
			metrics.MeterOlderThanLedger.Inc()
			h.logger.Error("ALERT: the metering Redis is older than the ledger (restored from a snapshot or an older RDB/AOF): "+
				"it serves no money until settlementd has rebuilt it from PostgreSQL; callers get 503 metering_recovering meanwhile",
				zap.Int("shard", shard))
		},
		FreeDailyLimit:  int64Or(h.Metering.FreeDailyLimit, meter.DefaultFreeDailyLimit),
		FreeSubnetLimit: int64Or(h.Metering.FreeSubnetLimit, meter.DefaultFreeSubnetLimit),
		IPRate:          rateOf(h.Metering.RateLimitIP, meter.Rate{Rate: meter.DefaultIPRate, Per: time.Second, Burst: meter.DefaultIPBurst}),
		KeyRate:         rateOf(h.Metering.RateLimitKey, meter.Rate{Rate: meter.DefaultKeyRate, Per: time.Second, Burst: meter.DefaultKeyBurst}),
		CreateLimit:     create.Rate,
		CreateWindow:    create.Per,
	}
	if h.meter, err = meter.New(h.scripts, cfg); err != nil {
		return fmt.Errorf("tollgate: %w", err)
	}
	layout := h.meter.Layout()
	// The shard count must be the one Redis is laid out for (and
	// settlementd's): a gateway metering payers on shards nobody reads
	// would lose their events. A Redis that does not answer now is not
	// fatal (metering fails closed per request until it does).
	lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err = balances.CheckLayout(lctx, h.redis, layout)
	cancel()
	if errors.Is(err, balances.ErrLayoutMismatch) {
		return fmt.Errorf("tollgate: redis_shards %d: %w", layout.N(), err)
	} else if err != nil {
		h.logger.Warn("could not check the Redis key layout at start", zap.Error(err))
	}
	// A Redis that may evict keys may evict money (balances.CheckEviction):
	// refused. One that does not answer now is checked by settlementd.
	ectx, ecancel := context.WithTimeout(context.Background(), 2*time.Second)
	err = balances.CheckEviction(ectx, h.redis)
	ecancel()
	if errors.Is(err, balances.ErrEvictionPolicy) {
		return fmt.Errorf("tollgate: %w", err)
	} else if err != nil {
		h.logger.Warn("could not read the Redis eviction policy at start", zap.Error(err))
	}
	stream := layout.Stream(0)
	h.writerKey = "events/" + h.redisKey + "/" + stream + "/" + strconv.Itoa(layout.N())
	v, _, err := writers.LoadOrNew(h.writerKey, func() (caddy.Destructor, error) {
		kept := newRetained(h.redis, layout, h.logger)
		wc := meter.WriterConfig{Stream: stream, Layout: layout, Logger: h.logger.Named("events"), Retain: kept.ret}
		if n := h.Metering.EventPack; n != nil {
			wc.MaxPack = *n
		}
		if ap, ok := h.scripts.(meter.Carrier); ok {
			wc.Carrier = ap // events ride the metering calls' round trips
		}
		return writerHandle{meter.NewEventWriter(h.redis, wc), kept}, nil
	})
	if err != nil {
		return err
	}
	h.writer, h.retained = v.(writerHandle).EventWriter, v.(writerHandle).retained
	// Every paid debit and refund is kept until settlementd has stored it.
	h.meter.SetRetention(h.retained.ret)
	h.payers = payment.New(h.meter, h.writer, &h.pay, h.logger)
	h.accounts = accounts.New(h.meter, &h.pay, time.Duration(h.BodyTimeout), h.logger)
	conc := config.DefaultIPConcurrency
	if h.Metering.IPConcurrency != nil {
		conc = *h.Metering.IPConcurrency
	}
	h.conc = core.NewConcurrency(conc)
	h.logger.Info("metering on",
		zap.Int64("free_daily_limit", cfg.FreeDailyLimit), zap.Int64("free_subnet_limit", cfg.FreeSubnetLimit),
		zap.Int("redis_shards", layout.N()), zap.Duration("redis_replica_wait", cfg.ReplicaWait), zap.Int("ip_rate", cfg.IPRate.Rate), zap.Int("key_rate", cfg.KeyRate.Rate), zap.Int("ip_concurrency", conc),
		zap.String("min_deposit_usdt", h.pay.MinDeposit.Decimal()))
	return nil
}

// meteredEntry wraps the metered endpoints: the per-IP concurrency cap and
// the "metering is off" answer.
func (h *Handler) meteredEntry(w http.ResponseWriter, r *http.Request, rpc bool, fn func(http.ResponseWriter, *http.Request) error) error {
	if h.meter == nil {
		if rpc {
			return fn(w, r)
		}
		web.Error(w, http.StatusNotFound, "metering_off", "this gateway runs without metering: keys and credits are not available")
		return nil
	}
	release, ok := h.conc.Acquire(web.ClientIP(r))
	if !ok {
		metrics.MeterDecisions.WithLabelValues("concurrency_limited").Inc()
		if rpc {
			payment.WriteHTTP(w, nil, payment.Busy()) // as core.Core.Serve refuses it
		} else {
			w.Header().Set("Retry-After", "1")
			web.Error(w, http.StatusTooManyRequests, "rate_limited", "too many requests in flight from this address; retry in 1 s")
		}
		return nil
	}
	defer release()
	return fn(w, r)
}
