package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// watchChains holds the chain table in force and, on SIGHUP, reads the
// chains file again (TOLLGATE_CHAINS_FILE): a chain added there can be
// registered without a restart. A file that no longer validates is logged
// and the table in force stays, so a typo never takes chains away from
// nodes already serving them.
func watchChains(ctx context.Context, cfg *config.Config, log *zap.Logger) *chains.Live {
	live := chains.NewLive(cfg.Chains)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			t, err := cfg.ReloadChains()
			if err != nil {
				log.Error("SIGHUP: chains file not reloaded; the chains in force stay", zap.Error(err))
				continue
			}
			live.Store(t)
			log.Info("SIGHUP: chains reloaded", zap.String("chains", t.IDs()), zap.Uint64("default_chain", t.Default().ID))
		}
	}()
	return live
}
