package metrics

import "github.com/prometheus/client_golang/prometheus"

// The JSON-RPC sockets' collectors (caddymodule/wsrpc).
var (
	WSConnections = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Subsystem: "ws", Name: "connections",
		Help: "Open JSON-RPC WebSocket connections.",
	})
	WSSubscriptions = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Subsystem: "ws", Name: "subscriptions",
		Help: "Client subscriptions (eth_subscribe) open on the sockets.",
	})
	WSNotifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "ws", Name: "notifications_total",
		Help: "Subscription notifications by outcome: delivered (paid, written), refused (the payer could not pay; the socket closed), dropped_slow_reader (the send buffer was full), dropped_refunded (charged, then not written: refunded).",
	}, []string{"outcome"})
	WSClosed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "ws", Name: "closed_total",
		Help: "Sockets closed, by close code (docs: wsrpc.CloseCodes).",
	}, []string{"code"})
	WSSubscribeRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "ws", Name: "subscribe_refused_total",
		Help: "eth_subscribe calls refused, by JSON-RPC error code (caps, params, payment, no upstream).",
	}, []string{"code"})
)

// WebSocketCollectors are the sockets' collectors, registered with the rest.
func WebSocketCollectors() []prometheus.Collector {
	return []prometheus.Collector{WSConnections, WSSubscriptions, WSNotifications, WSClosed, WSSubscribeRefused}
}
