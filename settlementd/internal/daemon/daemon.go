// Package daemon assembles settlementd: Postgres and Redis clients, the
// migrations, leader election, the job scheduler, the stream ingest and the
// HTTP API, and shuts them down in an order that loses nothing.
//
// Other parts of settlementd plug in between New and Run:
//
//	d, _ := daemon.New(ctx, cfg, log)
//	d.Scheduler().Add("0 */5 * * * *", settlementJob) // leader-only, every 5 min
//	d.API().Handle("GET /api/status", statusHandler)   // every replica
//	d.Run(ctx)
package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/api"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/epochs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/jobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/leader"
	"github.com/tollgate-rpc/tollgate/settlementd/migrations"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Daemon is one settlementd replica.
type Daemon struct {
	cfg *config.Config
	log *zap.Logger
	reg *prometheus.Registry

	pool    *pgxpool.Pool
	rdb     redis.UniversalClient
	elector *leader.Elector
	sched   *jobs.Scheduler
	ingest  []*ingest.Ingester // one per shard's stream
	api     *api.Server
	ln      net.Listener
}

// New connects, applies the migrations (unless disabled), builds every
// component and binds the HTTP listener. Nothing runs until Run.
func New(ctx context.Context, cfg *config.Config, log *zap.Logger, version string) (d *Daemon, err error) {
	d = &Daemon{cfg: cfg, log: log, reg: prometheus.NewRegistry()}
	// `return nil, err` sets d to nil before the deferred call runs: close
	// what was built through its own reference.
	built := d
	defer func() {
		if err != nil {
			built.close()
		}
	}()
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	if cfg.Migrate {
		if err := migrations.Up(cfg.DatabaseURL); err != nil {
			return nil, err
		}
		log.Info("migrations applied")
	} else {
		// One replica migrates (TOLLGATE_MIGRATE, or `settlementd migrate
		// up` before the upgrade); the others refuse a schema they cannot
		// use rather than fail later on a missing column.
		st, err := migrations.Status(cfg.DatabaseURL)
		if err != nil {
			return nil, errors.New("daemon: reading the schema version failed (check DATABASE_URL)")
		}
		switch {
		case st.Dirty:
			return nil, fmt.Errorf("daemon: %s", st)
		case st.Behind():
			return nil, fmt.Errorf("daemon: %s: run `settlementd migrate up` (or start one replica with TOLLGATE_MIGRATE=true); docs/operators.md, \"Upgrades\"", st)
		case st.Ahead():
			log.Warn("the database schema is newer than this settlementd (a later release migrated it); upgrade this replica", zap.Uint("schema", st.Version), zap.Uint("newest_known", st.Latest))
		}
	}
	if d.pool, err = pgxpool.New(ctx, cfg.DatabaseURL); err != nil {
		return nil, errors.New("daemon: opening the PostgreSQL pool failed (check DATABASE_URL)")
	}
	if d.rdb, err = NewRedis(cfg); err != nil {
		return nil, err
	}
	// Redis records the shard count it is laid out for; settlementd reading
	// other streams than the gateways write would never see their events.
	// A Redis that is down now is checked by the gateways when it is back.
	if err := balances.CheckLayout(ctx, d.rdb, balances.Layout{Prefix: cfg.Prefix, Shards: cfg.RedisShards}); errors.Is(err, balances.ErrLayoutMismatch) {
		return nil, fmt.Errorf("daemon: %w (TOLLGATE_REDIS_SHARDS=%d)", err, cfg.RedisShards)
	} else if err != nil {
		log.Warn("could not check the Redis layout record", zap.Error(err))
	}

	leaderGauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_leader", Help: "1 while this replica is the leader."})
	transitions := prometheus.NewCounter(prometheus.CounterOpts{Name: "settlementd_leader_transitions_total", Help: "Leadership gained or lost."})
	d.reg.MustRegister(leaderGauge, transitions)
	d.elector = leader.New(cfg.DatabaseURL, leader.Options{Heartbeat: cfg.LeaderHeartbeat, Retry: cfg.LeaderRetry, Logger: log,
		OnChange: func(leading bool) {
			transitions.Inc()
			if leading {
				leaderGauge.Set(1)
			} else {
				leaderGauge.Set(0)
			}
		}})
	d.sched = jobs.New(d.elector, log, d.reg)

	// One ingester per shard's stream, each with its own consumer group on
	// that stream (the consumer names repeat: a group is per stream). With
	// several streams their metrics carry a stream label.
	streams := cfg.Streams()
	for _, stream := range streams {
		reg := prometheus.Registerer(d.reg)
		if len(streams) > 1 {
			reg = prometheus.WrapRegistererWith(prometheus.Labels{"stream": stream}, d.reg)
		}
		in, err := ingest.New(d.rdb, d.pool, ingest.Config{
			Stream: stream, Consumer: cfg.Consumer, Workers: cfg.IngestWorkers, Batch: cfg.IngestBatch,
			Block: cfg.IngestBlock, ClaimMinIdle: cfg.ClaimMinIdle, ClaimEvery: cfg.ClaimEvery,
			Registry: cfg.Prefix + registry.NodesKey,
		}, log, reg)
		if err != nil {
			return nil, err
		}
		d.ingest = append(d.ingest, in)
	}

	closer := &epochs.Closer{Pool: d.pool, Fence: d.elector, Grace: cfg.EpochGrace, Streams: streams, Lookback: cfg.EvidenceLookback,
		Log: log.Named("epochs")}
	closer.Register(d.reg)
	if err := d.sched.Add(cfg.EpochCloseSchedule, closer); err != nil {
		return nil, err
	}

	d.api = api.New(version, api.Checks{
		DB:     func(ctx context.Context) error { return d.pool.Ping(ctx) },
		Redis:  func(ctx context.Context) error { return d.rdb.Ping(ctx).Err() },
		Leader: d.elector.IsLeader,
	}, d.reg, d.reg)
	if d.ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, fmt.Errorf("daemon: listening on %s: %w", cfg.HTTPAddr, err)
	}
	return d, nil
}

// Scheduler is where leader-only jobs are registered.
func (d *Daemon) Scheduler() *jobs.Scheduler { return d.sched }

// API is where HTTP routes are registered.
func (d *Daemon) API() *api.Server { return d.api }

// Pool is the shared PostgreSQL pool.
func (d *Daemon) Pool() *pgxpool.Pool { return d.pool }

// Redis is the shared Redis client.
func (d *Daemon) Redis() redis.UniversalClient { return d.rdb }

// Elector tells whether this replica leads, and fences leader-only writes.
func (d *Daemon) Elector() *leader.Elector { return d.elector }

// Registry is the Prometheus registry /metrics serves.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Addr is the bound HTTP address.
func (d *Daemon) Addr() net.Addr { return d.ln.Addr() }

// Run serves until ctx ends, then shuts down within ShutdownTimeout:
//  1. the scheduler stops starting jobs and waits for running ones (an
//     epoch close commits or rolls back whole);
//  2. the ingest finishes its in-flight batch (commit + XACK) and stops
//     reading; entries it read but did not commit stay pending;
//  3. leadership is given up, so another replica takes over at once;
//  4. the HTTP server drains, and the connections close.
func (d *Daemon) Run(ctx context.Context) error {
	electCtx, stopElect := context.WithCancel(context.Background())
	ingestCtx, stopIngest := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.elector.Run(electCtx) })
	for _, in := range d.ingest {
		wg.Go(func() { in.Run(ingestCtx) })
	}
	d.sched.Start()
	serveErr := make(chan error, 1)
	go func() { serveErr <- d.api.Serve(d.ln) }()
	d.log.Info("settlementd running", zap.String("http", d.ln.Addr().String()), zap.Any("config", d.cfg.Describe()))

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		d.log.Error("HTTP server failed", zap.Error(err))
	}
	d.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout)
	defer cancel()
	if e := d.sched.Stop(sctx); e != nil {
		d.log.Warn("jobs did not finish in time; cancelled", zap.Error(e))
	}
	stopIngest()
	stopElect()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-sctx.Done():
		d.log.Warn("ingest or election did not stop in time")
	}
	if e := d.api.Shutdown(sctx); e != nil {
		d.log.Warn("HTTP shutdown", zap.Error(e))
	}
	d.close()
	d.log.Info("stopped")
	return err
}

func (d *Daemon) close() {
	if d.ln != nil {
		_ = d.ln.Close()
	}
	if d.rdb != nil {
		_ = d.rdb.Close()
	}
	if d.pool != nil {
		d.pool.Close()
	}
}

// NewRedis is settlementd's Redis client: a cluster client when REDIS_URL
// names a Redis Cluster, else a single-node client. A cluster client reloads
// its slot map every second: go-redis reloads it on MOVED, but a failed
// master answers nothing, and at the default interval (60 s) the client
// would keep sending the failed master's slots to it for up to a minute
// after its replica took over.
func NewRedis(cfg *config.Config) (redis.UniversalClient, error) {
	if cfg.Cluster() {
		o, err := redis.ParseClusterURL(cfg.RedisURL)
		if err != nil {
			return nil, errors.New("daemon: REDIS_URL is not a valid Redis Cluster URL")
		}
		o.ClusterStateReloadInterval = time.Second
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, errors.New("daemon: REDIS_URL is invalid")
	}
	return redis.NewClient(o), nil
}

// Ping checks both stores, for subcommands that need them up front.
func Ping(ctx context.Context, pool *pgxpool.Pool, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		return errors.New("PostgreSQL is unreachable")
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		return errors.New("Redis is unreachable")
	}
	return nil
}
