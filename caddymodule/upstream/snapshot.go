package upstream

import (
	"time"
)

// Snapshot is the observable state of a pool, for /rpc/stats and admin
// pages. It holds no URLs beyond scheme://host and no headers.
type Snapshot struct {
	ChainID uint64 `json:"chain_id"`
	// BestHead is the reference head lag is measured against (see
	// updateLag: the best provider head when known, else the best node
	// head).
	BestHead  uint64             `json:"best_head"`
	Upstreams []UpstreamSnapshot `json:"upstreams"`
}

// UpstreamSnapshot is one upstream's state.
type UpstreamSnapshot struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	NodeID string `json:"node_id,omitempty"`
	// Host is scheme://host of the URL; path and query may hold a key.
	Host string `json:"host"`

	Probed       bool   `json:"probed"`
	Healthy      bool   `json:"healthy"`
	HealthReason string `json:"health_reason,omitempty"`
	Lagging      bool   `json:"lagging"`
	Head         uint64 `json:"head_block"`
	Lag          uint64 `json:"lag_blocks"`

	Breaker          BreakerState `json:"breaker"`
	RateLimited      bool         `json:"rate_limited"`
	RateLimitedUntil *time.Time   `json:"rate_limited_until,omitempty"`

	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	Throttled uint64 `json:"rate_limited_count"`
	// SuccessRate is successes / calls; absent before the first call.
	SuccessRate *float64 `json:"success_rate,omitempty"`

	LatencySamples int     `json:"latency_samples"`
	P50Ms          float64 `json:"p50_ms"`
	P99Ms          float64 `json:"p99_ms"`

	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`

	// Archive is what probing found: true when it has state older than a
	// full node keeps; absent until asked.
	Archive *bool `json:"archive,omitempty"`
	// Debug and Trace: whether it serves debug_* and trace_* calls (found
	// by asking); absent until asked.
	Debug *bool `json:"debug,omitempty"`
	Trace *bool `json:"trace,omitempty"`
	// LogsRange is the widest eth_getLogs range (blocks) the upstream
	// answered of the probed rungs (10,000, 2,000, 500, 100); 0 when it
	// refused them all; absent until probed.
	LogsRange *uint64 `json:"logs_range,omitempty"`

	// Quarantined: an answer of this upstream was proven wrong; it gets no
	// traffic until an operator's review (QuarantineReason says what).
	Quarantined      bool   `json:"quarantined"`
	QuarantineReason string `json:"quarantine_reason,omitempty"`

	// Trust is a node's standing: probation, its place on the ladder,
	// its verified history and check rate (absent for providers).
	Trust *TrustView `json:"trust,omitempty"`
	// Checks is what became of a node's sampled answers on this gateway
	// (offered to the verifier, checked, dropped, failed) and the capacity
	// factor its share is multiplied by (absent for providers; the public
	// /rpc/health leaves it out: it would tell a node its check rate).
	Checks *CheckView `json:"checks,omitempty"`

	// WS is the upstream's WebSocket side (eth_subscribe). The URL itself
	// is never shown.
	WS WSState `json:"ws"`
}

// WSState is an upstream's WebSocket state. Snapshot fills URLSet; the
// subscription hub (caddymodule/subscribe) knows the rest, and /rpc/health
// adds it.
type WSState struct {
	URLSet        bool `json:"url_set"`
	Connected     bool `json:"connected"`
	Subscriptions int  `json:"subscriptions"` // upstream subscriptions open on it
}

// Snapshot reports every upstream's state, providers first in config order,
// then nodes in SetNodes order.
func (p *Pool) Snapshot() Snapshot {
	now := time.Now()
	ms := p.list()
	s := Snapshot{ChainID: p.cfg.ChainID, BestHead: p.refHead.Load(), Upstreams: make([]UpstreamSnapshot, 0, len(ms))}
	for _, m := range ms {
		h := m.health.view()
		st := m.stats.view()
		u := UpstreamSnapshot{
			Name: m.up.Name, Kind: m.up.Kind, NodeID: m.up.NodeID, Host: m.host,
			Probed: h.probed, Healthy: h.healthy, HealthReason: h.reason, Lagging: h.lagging,
			Head: h.head, Lag: h.lag,
			Breaker:     breakerState(m.br.Load().State()),
			RateLimited: m.rateLimited(now),
			Successes:   st.successes, Failures: st.failures, Throttled: st.limited,
			LatencySamples: st.samples, P50Ms: millis(st.p50), P99Ms: millis(st.p99),
			LastError: st.lastErr,
		}
		u.QuarantineReason, u.Quarantined = p.Quarantined(m.up.Name)
		u.Archive, u.Debug, u.Trace = capOf(m, CapArchive), capOf(m, CapDebug), capOf(m, CapTrace)
		u.LogsRange = logsRangeOf(m)
		if m.up.Kind == KindNode {
			v := p.cfg.Trust.view(m.trust.Load(), m.up.Operator)
			p.nodeView(m, &v)
			u.Trust = &v
			c := m.checks.view(now)
			u.Checks = &c
		}
		u.WS.URLSet = m.ws != nil
		if u.RateLimited {
			t := time.Unix(0, m.limitedUntil.Load())
			u.RateLimitedUntil = &t
		}
		if calls := st.successes + st.failures + st.limited; calls > 0 {
			r := float64(st.successes) / float64(calls)
			u.SuccessRate = &r
		}
		if !st.lastErrAt.IsZero() {
			t := st.lastErrAt
			u.LastErrorAt = &t
		}
		s.Upstreams = append(s.Upstreams, u)
	}
	return s
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BestHead is the pool's reference head (0 until a probe has seen one); cheap
// enough for every request, unlike Snapshot.
func (p *Pool) BestHead() uint64 { return p.refHead.Load() }

// FinalizedHead is the highest "finalized" block the pool's healthy
// providers report, never above BestHead (0 unless Config.FinalizedTag).
func (p *Pool) FinalizedHead() uint64 { return p.finalHead.Load() }
