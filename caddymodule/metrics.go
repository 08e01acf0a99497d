package caddymodule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// registerMetrics adds the collectors to a config's registry, plus the
// collectors of this handler's upstream pools and event writer, read at
// scrape time (they are built after the metrics are registered).
func (h *Handler) registerMetrics(reg prometheus.Registerer) error {
	pools := func() map[uint64]*upstream.Pool {
		out := make(map[uint64]*upstream.Pool, len(h.chains))
		for id, cs := range h.chains {
			out[id] = cs.pool
		}
		return out
	}
	extra := append(metrics.WebSocketCollectors(), metrics.Pools(pools), metrics.Writer(func() *meter.EventWriter { return h.writer }),
		metrics.Retained(func() (meter.RetentionStats, meter.ReplayStats, bool) {
			if h.retained == nil {
				return meter.RetentionStats{}, meter.ReplayStats{}, false
			}
			return h.retained.ret.Stats(), h.retained.rep.Stats(), true
		}))
	return metrics.Register(reg, extra...)
}
