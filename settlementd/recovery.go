package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/recovery"
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
	return nil
}
