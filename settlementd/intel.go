package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/intel"
)

// registerIntelJob schedules the funding-rate poller (leader only) when a
// venue URL is configured (config.Intel: TOLLGATE_VENUE_BINANCE_URL,
// TOLLGATE_VENUE_BYBIT_URL).
func registerIntelJob(d *daemon.Daemon, cfg *config.Config, log *zap.Logger) error {
	s := cfg.Intel
	if !s.Enabled() {
		log.Info("intelligence job off: no venue URL configured")
		return nil
	}
	j := intel.New(s, d.Pool(), d.Redis(), cfg.Prefix, log)
	if err := d.Scheduler().Add(s.Schedule(), j); err != nil {
		return fmt.Errorf("schedule %s: %w", j.Name(), err)
	}
	log.Info("intelligence job scheduled", zap.String("schedule", s.Schedule()), zap.Int("venues", len(j.Venues)))
	return nil
}
