package upstream

import (
	"slices"
	"sync/atomic"
	"time"
)

// HedgeConfig tunes hedged reads: a read with no answer after a delay is
// sent to a second upstream as well, and the first good answer wins. A
// caller's experience is its slowest answers; an upstream slow without
// failing never opens its breaker, so without hedges every caller routed
// there waits. Writes (ForwardOptions.NoRetry) are never hedged.
type HedgeConfig struct {
	// Off: no hedges.
	Off bool
	// Quantile of the first upstream's recent latencies (its last
	// LatencySamples successful calls) after which the hedge is sent
	// (default 0.9), between Floor (default 20 ms) and Ceiling (default
	// 1 s).
	Quantile       float64
	Floor, Ceiling time.Duration
	// MaxShare caps hedges as a share of reads (default 0.10), so a slow
	// period cannot double upstream load: every read earns MaxShare of a
	// hedge, up to a burst of hedgeBurst.
	MaxShare float64
}

// Defaults of HedgeConfig.
const (
	DefaultHedgeQuantile = 0.9
	DefaultHedgeFloor    = 20 * time.Millisecond
	DefaultHedgeCeiling  = time.Second
	DefaultHedgeShare    = 0.10
	hedgeBurst           = 20 // hedges that may be sent back to back after a quiet spell
)

func (c HedgeConfig) withDefaults() HedgeConfig {
	if c.Quantile <= 0 || c.Quantile >= 1 {
		c.Quantile = DefaultHedgeQuantile
	}
	if c.Floor <= 0 {
		c.Floor = DefaultHedgeFloor
	}
	if c.Ceiling <= 0 {
		c.Ceiling = DefaultHedgeCeiling
	}
	c.Ceiling = max(c.Ceiling, c.Floor)
	if c.MaxShare <= 0 || c.MaxShare > 1 {
		c.MaxShare = DefaultHedgeShare
	}
	return c
}

// hedgeBudget is a token bucket in thousandths of a hedge: each read adds
// MaxShare·1000, a hedge takes 1000.
type hedgeBudget struct {
	milli atomic.Int64
}

func (b *hedgeBudget) earn(share float64) {
	add := int64(share * 1000)
	for {
		cur := b.milli.Load()
		next := min(cur+add, hedgeBurst*1000)
		if cur == next || b.milli.CompareAndSwap(cur, next) {
			return
		}
	}
}

func (b *hedgeBudget) take() bool {
	for {
		cur := b.milli.Load()
		if cur < 1000 {
			return false
		}
		if b.milli.CompareAndSwap(cur, cur-1000) {
			return true
		}
	}
}

// HedgeStats counts hedges, for metrics and /rpc/stats.
type HedgeStats struct {
	Reads uint64 `json:"reads"` // reads that could have been hedged
	Sent  uint64 `json:"hedges_sent"`
	Won   uint64 `json:"hedges_won"` // the hedge's answer was the one delivered
	// Share is Sent / Reads.
	Share float64 `json:"hedge_share"`
}

type hedgeCounters struct {
	reads, sent, won atomic.Uint64
}

// Hedges reports the pool's hedge counters.
func (p *Pool) Hedges() HedgeStats {
	s := HedgeStats{Reads: p.hedges.reads.Load(), Sent: p.hedges.sent.Load(), Won: p.hedges.won.Load()}
	if s.Reads > 0 {
		s.Share = float64(s.Sent) / float64(s.Reads)
	}
	return s
}

// hedgeDelay is how long to wait for m before hedging: its latency
// quantile, recomputed at most once a second (sorting the ring is not for
// every call), within the floor and the ceiling.
func (p *Pool) hedgeDelay(m *member) time.Duration {
	c := &p.cfg.Hedge
	now := time.Now().UnixNano()
	if at := m.hedgeAt.Load(); now-at < int64(time.Second) && at != 0 {
		return time.Duration(m.hedgeDelay.Load())
	}
	m.hedgeAt.Store(now)
	d := c.Ceiling
	if q, ok := m.stats.quantile(c.Quantile); ok {
		d = min(max(q, c.Floor), c.Ceiling)
	}
	m.hedgeDelay.Store(int64(d))
	return d
}

// quantile of the recent successful latencies (ok false without samples).
func (s *stats) quantile(q float64) (time.Duration, bool) {
	s.mu.Lock()
	sorted := slices.Clone(s.ring[:s.filled])
	s.mu.Unlock()
	if len(sorted) == 0 {
		return 0, false
	}
	slices.Sort(sorted)
	return percentile(sorted, int(q*100)), true
}
