package core

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
)

// Metrics are a chain's per-request metric children, looked up once:
// WithLabelValues formats and hashes its labels on every call.
type Metrics struct {
	label     string // the chain_id label
	requests  map[string]prometheus.Counter
	duration  prometheus.Observer
	CacheHits prometheus.Counter // the edge cache's, counted by the relay
	CacheMiss prometheus.Counter
}

// NewMetrics are chainID's metric children.
func NewMetrics(chainID uint64) Metrics {
	l := metrics.Chain(chainID)
	m := Metrics{label: l, requests: map[string]prometheus.Counter{}, duration: metrics.RPCDuration.WithLabelValues(l),
		CacheHits: metrics.CacheLookups.WithLabelValues(l, "hit"), CacheMiss: metrics.CacheLookups.WithLabelValues(l, "miss")}
	for _, o := range []string{"rejected", "refused", "ok", "unavailable", "partial"} {
		m.requests[o] = metrics.RPCRequests.WithLabelValues(l, o)
	}
	return m
}

// Request counts one request with its outcome.
func (m *Metrics) Request(outcome string, took time.Duration) {
	if c, ok := m.requests[outcome]; ok {
		c.Inc()
	} else {
		metrics.RPCRequests.WithLabelValues(m.label, outcome).Inc()
	}
	m.duration.Observe(took.Seconds())
}
