package caddymodule

import (
	"errors"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// Collectors are created once per process and registered into each config's
// registry (Caddy makes a new registry per config load). Labels are bounded:
// chain ids, well-known method names or "other", outcome words, upstream
// names from config or the node registry — never a key, wallet or IP.
var (
	metricsOnce sync.Once

	rpcRequests *prometheus.CounterVec
	rpcCalls    *prometheus.CounterVec
	rpcDuration *prometheus.HistogramVec
	cacheCalls  *prometheus.CounterVec
)

func initMetrics() {
	metricsOnce.Do(func() {
		const ns, sub = "tollgate", "gateway"
		rpcRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "rpc_requests_total",
			Help: "HTTP JSON-RPC requests by chain and outcome (ok, partial, unavailable, rejected).",
		}, []string{"chain_id", "outcome"})
		rpcCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "rpc_calls_total",
			Help: "JSON-RPC calls (batch items) by chain, method and source (upstream, cache, failed).",
		}, []string{"chain_id", "method", "source"})
		rpcDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "rpc_request_duration_seconds",
			Help:    "Time to answer a JSON-RPC request, by chain.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"chain_id"})
		cacheCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "cache_lookups_total",
			Help: "Edge-cache lookups by chain and result (hit, miss).",
		}, []string{"chain_id", "result"})
	})
}

// registerMetrics adds the collectors to a config's registry, plus a
// collector of this handler's upstream states read at scrape time.
func (h *Handler) registerMetrics(reg prometheus.Registerer) error {
	initMetrics()
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{rpcRequests, rpcCalls, rpcDuration, cacheCalls, upstreamCollector{h}} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

func chainLabel(id uint64) string { return strconv.FormatUint(id, 10) }

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
			ch <- prometheus.MustNewConstMetric(upAvailableDesc, prometheus.GaugeValue, avail, chainLabel(id), u.Name, string(u.Kind))
			ch <- prometheus.MustNewConstMetric(upBreakerDesc, prometheus.GaugeValue, state, chainLabel(id), u.Name, string(u.Kind))
		}
	}
}
