package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/recovery"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// registerRecovery schedules the Redis loss watcher (leader only, package
// recovery): every TOLLGATE_REDIS_WATCH_INTERVAL (cfg.RedisWatchInterval,
// default 1 s) it checks the generation marker and rebuilds Redis from
// PostgreSQL when it has been missing for one interval.
func registerRecovery(d *daemon.Daemon, cfg *config.Config, log *zap.Logger) error {
	every := cfg.RedisWatchInterval
	w := recovery.New(d.Pool(), d.Redis(), cfg.Prefix, log)
	w.Shards = cfg.RedisShards
	w.Grace = every
	w.Register(d.Registry())
	if err := d.Scheduler().Add(fmt.Sprintf("@every %s", every), w); err != nil {
		return fmt.Errorf("schedule %s: %w", w.Name(), err)
	}
	// A Redis that may evict keys may evict money: refused at start
	// (balances.CheckEviction); the trimmer alerts on a policy changed
	// later. One that does not answer now is checked by the trimmer.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := balances.CheckEviction(ctx, d.Redis())
	cancel()
	if errors.Is(err, balances.ErrEvictionPolicy) {
		return err
	} else if err != nil {
		log.Warn("could not read the Redis eviction policy at start", zap.Error(err))
	}
	t := recovery.NewTrimmer(d.Redis(), cfg.Prefix, cfg.RedisShards, log)
	t.Register(d.Registry())
	if err := d.Scheduler().Add(fmt.Sprintf("@every %s", recovery.DefaultTrimInterval), t); err != nil {
		return fmt.Errorf("schedule %s: %w", t.Name(), err)
	}
	return nil
}
