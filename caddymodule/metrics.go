package caddymodule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// registerMetrics adds the collectors to a config's registry, plus a
// collector of this handler's upstream states read at scrape time.
func (h *Handler) registerMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, upstreamCollector{h}, writerCollector{h})
}

var (
	upAvailableDesc = prometheus.NewDesc("tollgate_gateway_upstream_available",
		"1 when an upstream can take traffic (healthy, breaker not open, not rate limited), else 0.",
		[]string{"chain_id", "upstream", "kind"}, nil)
	upBreakerDesc = prometheus.NewDesc("tollgate_gateway_upstream_breaker_state",
		"Circuit breaker state: 0 closed, 1 half-open, 2 open.",
		[]string{"chain_id", "upstream", "kind"}, nil)
)

// upstreamCollector reports pool snapshots when Prometheus scrapes, so nodes
// joining or leaving the registry need no bookkeeping here.
type upstreamCollector struct{ h *Handler }

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upAvailableDesc
	ch <- upBreakerDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for id, cs := range c.h.chains {
		for _, u := range cs.pool.Snapshot().Upstreams {
			avail := 0.0
			if u.Healthy && u.Breaker != upstream.BreakerOpen && !u.RateLimited {
				avail = 1
			}
			state := map[upstream.BreakerState]float64{upstream.BreakerClosed: 0, upstream.BreakerHalfOpen: 1, upstream.BreakerOpen: 2}[u.Breaker]
			ch <- prometheus.MustNewConstMetric(upAvailableDesc, prometheus.GaugeValue, avail, metrics.Chain(id), u.Name, string(u.Kind))
			ch <- prometheus.MustNewConstMetric(upBreakerDesc, prometheus.GaugeValue, state, metrics.Chain(id), u.Name, string(u.Kind))
		}
	}
}

var (
	eventsWrittenDesc = prometheus.NewDesc("tollgate_meter_events_written_total",
		"Events the asynchronous writer appended to the stream.", nil, nil)
	eventsDroppedDesc = prometheus.NewDesc("tollgate_meter_events_dropped_total",
		"Events the asynchronous writer dropped (queue full, invalid, or unwritable at shutdown).", nil, nil)
	eventsPendingDesc = prometheus.NewDesc("tollgate_meter_events_pending",
		"Events waiting in the asynchronous writer's queue.", nil, nil)
)

// writerCollector reports the event writer's counters at scrape time.
type writerCollector struct{ h *Handler }

func (c writerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventsWrittenDesc
	ch <- eventsDroppedDesc
	ch <- eventsPendingDesc
}

func (c writerCollector) Collect(ch chan<- prometheus.Metric) {
	if c.h.writer == nil {
		return
	}
	written, dropped, _, pending := c.h.writer.Stats()
	ch <- prometheus.MustNewConstMetric(eventsWrittenDesc, prometheus.CounterValue, float64(written))
	ch <- prometheus.MustNewConstMetric(eventsDroppedDesc, prometheus.CounterValue, float64(dropped))
	ch <- prometheus.MustNewConstMetric(eventsPendingDesc, prometheus.GaugeValue, float64(pending))
}
