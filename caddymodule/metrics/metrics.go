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
		Help: "Registered nodes' answers checked against a configured provider, by outcome (match, mismatch, unjudged, not_deterministic, no_provider, dropped).",
	}, []string{"outcome"})
	SIWXOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "x402", Name: "siwx_total",
		Help: "Sign-In-With-X headers by outcome (served, invalid, bundle_exhausted, siwx_nonce_used, rate_limited).",
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
		MeterDecisions, MeterLatency, MeterRefunds, KeysCreated, AdminActions, X402Payments, SIWXOutcomes, Verifications}
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
