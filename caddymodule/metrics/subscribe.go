package metrics

import "github.com/prometheus/client_golang/prometheus"

// The upstream side of eth_subscribe (caddymodule/subscribe). Kind is one of
// newHeads, logs, newPendingTransactions.
var (
	UpstreamSubscriptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: ns, Subsystem: sub, Name: "upstream_subscriptions_open",
		Help: "Upstream eth_subscribe subscriptions open now (one per distinct chain, kind and filter, shared by every subscriber), by chain and kind.",
	}, []string{"chain_id", "kind"})
	UpstreamNotifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "upstream_notifications_total",
		Help: "eth_subscription notifications received from upstreams (before fan-out; gap fills included, duplicates dropped after failover excluded), by chain and kind.",
	}, []string{"chain_id", "kind"})
	UpstreamResubscriptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "upstream_resubscriptions_total",
		Help: "Upstream subscriptions moved to another upstream (or re-opened) after their socket failed or stalled, by chain and kind.",
	}, []string{"chain_id", "kind"})
)

// subscribeCollectors are registered with the others by Register.
func subscribeCollectors() []prometheus.Collector {
	return []prometheus.Collector{UpstreamSubscriptions, UpstreamNotifications, UpstreamResubscriptions}
}
