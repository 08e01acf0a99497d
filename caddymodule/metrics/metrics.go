// Package metrics holds the gateway's Prometheus collectors. They are
// created once per process and registered into each config's registry
// (Caddy makes a new registry per config load). Labels are bounded: chain
// ids, well-known method names or "other", outcome words, upstream names
// from config or the node registry — never a key, wallet or IP.
package metrics

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

const ns, sub = "tollgate", "gateway"

// The gateway's collectors.
var (
	RPCRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "rpc_requests_total",
		Help: "HTTP JSON-RPC requests by chain and outcome (ok, partial, unavailable, rejected).",
	}, []string{"chain_id", "outcome"})
	RPCCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "rpc_calls_total",
		Help: "JSON-RPC calls (batch items) by chain, method and source (upstream, cache, local, failed).",
	}, []string{"chain_id", "method", "source"})
	RPCDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: sub, Name: "rpc_request_duration_seconds",
		Help:    "Time to answer a JSON-RPC request, by chain.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"chain_id"})
	CacheLookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "cache_lookups_total",
		Help: "Edge-cache lookups by chain and result (hit, miss).",
	}, []string{"chain_id", "result"})
	MeterDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "meter", Name: "decisions_total",
		Help: "Metering decisions by outcome (paid, free, payment_required, rate_limited, unauthorized, unavailable, concurrency_limited, create_limited).",
	}, []string{"outcome"})
	MeterLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "meter", Name: "script_duration_seconds",
		Help:    "Round trip of the per-request metering script.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .1, .5, 1},
	})
	MeterUnreplicated = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "meter", Name: "unreplicated_total",
		Help: "Decisions that booked money while no replica acknowledged them within redis_replica_wait: what a master failover could lose.",
	})
	MeterOlderThanLedger = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "meter", Name: "redis_older_than_ledger_total",
		Help: "Metering decisions that found a Redis shard older than the ledger (restored from a snapshot): the shard serves no money until settlementd rebuilds it. Alert on any increase.",
	})
	MeterRefunds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "meter", Name: "refunded_calls_total",
		Help: "Calls refunded because the upstream failed, by payer (credits, free) and result (ok, error).",
	}, []string{"payer", "result"})
	KeysCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "meter", Name: "keys_created_total",
		Help: "API keys created, by kind (api, machine).",
	}, []string{"kind"})
	AdminActions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "admin", Name: "actions_total",
		Help: "Gateway admin requests by action (revoke, credit, debit, set_free_tier, clear_free_tier, reset_breaker, auth) and outcome.",
	}, []string{"action", "outcome"})
	X402Payments = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "x402", Name: "payments_total",
		Help: "x402 payment headers by outcome (settled, invalid, settle_failed, facilitator_unavailable, grant_failed).",
	}, []string{"outcome"})
	Verifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "node_verifications_total",
		Help: "Registered nodes' answers checked against a configured provider, by outcome (match, mismatch, unjudged, not_deterministic, no_provider, dropped: the node's queue slots were full, dropped_cap: over the gateway's cap on the checks' provider calls).",
	}, []string{"outcome"})
	Proofs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "node_answers_proved_total",
		Help: "Registered nodes' answers to provable methods checked before delivery, by method and outcome (proved: delivered; rerouted: the node could not prove, a provider answered; lie: its proof failed or proved another value, the node convicted).",
	}, []string{"method", "outcome"})
	ProofHeaders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "proof_header_fetches_total",
		Help: "Provider headers the proofs fetched (blocks the head poll had not: by hash for a block's roots, by number for the providers' block at a height), by how they were asked.",
	}, []string{"by"})
	SIWXOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "x402", Name: "siwx_total",
		Help: "Sign-In-With-X draws by outcome (served, invalid, bundle_exhausted, siwx_nonce_used, rate_limited): one per POST or MCP call carrying the header, one per call or notification of a signed-in socket.",
	}, []string{"outcome"})
)

// Register adds the collectors and extra (collectors of one handler's state,
// read at scrape time) to reg. A collector registered by an earlier config
// is fine.
func Register(reg prometheus.Registerer, extra ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	all := []prometheus.Collector{RPCRequests, RPCCalls, RPCDuration, CacheLookups,
		MeterDecisions, MeterLatency, MeterUnreplicated, MeterOlderThanLedger, MeterRefunds, KeysCreated, AdminActions, X402Payments, SIWXOutcomes, Verifications, Proofs, ProofHeaders}
	all = append(all, subscribeCollectors()...)
	for _, c := range append(all, extra...) {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// Chain is the chain_id label of a chain.
func Chain(id uint64) string { return strconv.FormatUint(id, 10) }

// Pools is a collector of the upstream pools' states, read when Prometheus
// scrapes, so nodes joining or leaving the registry need no bookkeeping.
func Pools(pools func() map[uint64]*upstream.Pool) prometheus.Collector {
	return upstreamCollector{pools}
}

// Writer is a collector of the event writer's counters (nil writer: none).
func Writer(w func() *meter.EventWriter) prometheus.Collector { return writerCollector{w} }

var (
	upAvailableDesc = prometheus.NewDesc("tollgate_gateway_upstream_available",
		"1 when an upstream can take traffic (healthy, breaker not open, not rate limited, not quarantined), else 0.",
		[]string{"chain_id", "upstream", "kind"}, nil)
	upBreakerDesc = prometheus.NewDesc("tollgate_gateway_upstream_breaker_state",
		"Circuit breaker state: 0 closed, 1 half-open, 2 open.",
		[]string{"chain_id", "upstream", "kind"}, nil)
	upQuarantinedDesc = prometheus.NewDesc("tollgate_gateway_upstream_quarantined",
		"1 when a registered node is quarantined (an answer of it was proven wrong; no traffic until an operator's review), else 0.",
		[]string{"chain_id", "upstream", "kind"}, nil)
	nodeChecksDesc = prometheus.NewDesc("tollgate_gateway_node_checks_total",
		"A registered node's sampled answers by what became of them: offered to the verifier, checked, dropped (never checked: its queue slots were full, or the gateway's cap on the checks' provider calls had no room), dropped_cap (the part of dropped that the cap turned away), failed (no provider answered the check).",
		[]string{"chain_id", "upstream", "outcome"}, nil)
	nodeCapacityDesc = prometheus.NewDesc("tollgate_gateway_node_check_capacity",
		"The factor a registered node's traffic share is multiplied by because its sampled answers could not all be checked (1: all were; falls with drops, recovers without them).",
		[]string{"chain_id", "upstream"}, nil)
	hedgesDesc = prometheus.NewDesc("tollgate_gateway_hedges_total",
		"Hedged reads: reads that could be hedged (outcome read), hedges sent to a second upstream (sent), and hedges whose answer was delivered (won).",
		[]string{"chain_id", "outcome"}, nil)
)

// upstreamCollector reports pool snapshots when Prometheus scrapes, so nodes
// joining or leaving the registry need no bookkeeping here.
type upstreamCollector struct {
	pools func() map[uint64]*upstream.Pool
}

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upAvailableDesc
	ch <- upBreakerDesc
	ch <- upQuarantinedDesc
	ch <- hedgesDesc
	ch <- nodeChecksDesc
	ch <- nodeCapacityDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for id, pool := range c.pools() {
		h := pool.Hedges()
		for outcome, n := range map[string]uint64{"read": h.Reads, "sent": h.Sent, "won": h.Won} {
			ch <- prometheus.MustNewConstMetric(hedgesDesc, prometheus.CounterValue, float64(n), Chain(id), outcome)
		}
		for _, u := range pool.Snapshot().Upstreams {
			avail := 0.0
			if u.Healthy && u.Breaker != upstream.BreakerOpen && !u.RateLimited && !u.Quarantined {
				avail = 1
			}
			quarantined := 0.0
			if u.Quarantined {
				quarantined = 1
			}
			state := map[upstream.BreakerState]float64{upstream.BreakerClosed: 0, upstream.BreakerHalfOpen: 1, upstream.BreakerOpen: 2}[u.Breaker]
			ch <- prometheus.MustNewConstMetric(upAvailableDesc, prometheus.GaugeValue, avail, Chain(id), u.Name, string(u.Kind))
			ch <- prometheus.MustNewConstMetric(upBreakerDesc, prometheus.GaugeValue, state, Chain(id), u.Name, string(u.Kind))
			ch <- prometheus.MustNewConstMetric(upQuarantinedDesc, prometheus.GaugeValue, quarantined, Chain(id), u.Name, string(u.Kind))
			if c := u.Checks; c != nil {
				for outcome, n := range map[string]uint64{"offered": c.Offered, "checked": c.Checked, "dropped": c.Dropped, "dropped_cap": c.DroppedCap, "failed": c.Failed} {
					ch <- prometheus.MustNewConstMetric(nodeChecksDesc, prometheus.CounterValue, float64(n), Chain(id), u.Name, outcome)
				}
				ch <- prometheus.MustNewConstMetric(nodeCapacityDesc, prometheus.GaugeValue, c.CapacityFactor, Chain(id), u.Name)
			}
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
type writerCollector struct{ writer func() *meter.EventWriter }

func (c writerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventsWrittenDesc
	ch <- eventsDroppedDesc
	ch <- eventsPendingDesc
}

func (c writerCollector) Collect(ch chan<- prometheus.Metric) {
	w := c.writer()
	if w == nil {
		return
	}
	written, dropped, _, pending := w.Stats()
	ch <- prometheus.MustNewConstMetric(eventsWrittenDesc, prometheus.CounterValue, float64(written))
	ch <- prometheus.MustNewConstMetric(eventsDroppedDesc, prometheus.CounterValue, float64(dropped))
	ch <- prometheus.MustNewConstMetric(eventsPendingDesc, prometheus.GaugeValue, float64(pending))
}

// Retained is a collector of the money facts kept for replay
// (meter.Retention, meter.Replayer); stats returns ok false when metering
// is off.
func Retained(stats func() (meter.RetentionStats, meter.ReplayStats, bool)) prometheus.Collector {
	return retainedCollector{stats}
}

var (
	retainedFactsDesc = prometheus.NewDesc("tollgate_meter_retained_facts",
		"Money facts (paid debits, refunds) this gateway keeps until settlementd has stored them.", nil, nil)
	retainedBytesDesc = prometheus.NewDesc("tollgate_meter_retained_bytes",
		"Accounted size of the money facts kept.", nil, nil)
	retainedDroppedDesc = prometheus.NewDesc("tollgate_meter_retained_dropped_total",
		"Money facts let go at the retention's bound before settlementd acknowledged them (a Redis loss then could lose them).", nil, nil)
	replayedDesc = prometheus.NewDesc("tollgate_meter_replayed_total",
		"Money facts appended again to a Redis that lost them, by how: append (Redis restarted empty), rebook (with their balance change: a promoted replica, an AOF restart), late (after a rebuild that did not wait for this gateway).",
		[]string{"how"}, nil)
)

type retainedCollector struct {
	stats func() (meter.RetentionStats, meter.ReplayStats, bool)
}

func (c retainedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- retainedFactsDesc
	ch <- retainedBytesDesc
	ch <- retainedDroppedDesc
	ch <- replayedDesc
}

func (c retainedCollector) Collect(ch chan<- prometheus.Metric) {
	r, p, ok := c.stats()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(retainedFactsDesc, prometheus.GaugeValue, float64(r.Facts))
	ch <- prometheus.MustNewConstMetric(retainedBytesDesc, prometheus.GaugeValue, float64(r.Bytes))
	ch <- prometheus.MustNewConstMetric(retainedDroppedDesc, prometheus.CounterValue, float64(r.Dropped))
	ch <- prometheus.MustNewConstMetric(replayedDesc, prometheus.CounterValue, float64(p.Replayed-p.Rebooked-p.Late), "append")
	ch <- prometheus.MustNewConstMetric(replayedDesc, prometheus.CounterValue, float64(p.Rebooked), "rebook")
	ch <- prometheus.MustNewConstMetric(replayedDesc, prometheus.CounterValue, float64(p.Late), "late")
}
