package upstream

import (
	"math/rand/v2"
	"time"
)

// Selection ranks upstreams in tiers and picks from the best non-empty tier.
// Tier 0 is the ideal: probed, healthy, breaker not open, not rate-limited,
// in sync. When no upstream is ideal, selection degrades step by step rather
// than failing while something might still work; each later tier is a worse
// bet than the one before. An upstream gets the worst tier any of its
// problems puts it in.
//
// Never selected: an open breaker (Allow would refuse it anyway) and a wrong
// chain id (its answers would be another chain's data).
const (
	tierIdeal       = iota
	tierUnprobed    // added moments ago, first probe pending
	tierHalfOpen    // breaker recovering; only calls that must not be replayed avoid it
	tierLagging     // answers, but behind the reference head
	tierRateLimited // likely to answer 429 again
	tierUnhealthy   // its probes keep failing
)

// defaultLatency stands in for an upstream without samples when no other
// upstream in the tier has any either.
const defaultLatency = 50 * time.Millisecond

type candidate struct {
	m        *member
	latency  time.Duration
	known    bool // latency measured
	trialDue bool // half-open with a free trial slot
}

// Pick returns the upstream a call would go to now, skipping names in
// exclude. Within the best tier: a half-open upstream with a free trial slot
// comes first (otherwise a recovering upstream behind faster ones would
// never get the trial call that closes its breaker); then registered nodes,
// spread at random weighted by Weight/latency so that every good node earns;
// then providers, fastest first. Pick does not reserve a breaker slot:
// Forward does that when it sends.
func (p *Pool) Pick(exclude map[string]bool) (Ref, bool) {
	m := p.pick(exclude, false, "", filter{})
	if m == nil {
		return Ref{}, false
	}
	return m.ref, true
}

// pick is Pick with the request's retry policy: a call that must not be
// replayed (noRetry) is not used as a half-open trial; prefer names an
// upstream to take when it is among the best tier (the other parts of a
// batch split into sub-batches go where the first went); f leaves out the
// upstreams the call may not use.
// filter narrows selection to the upstreams a call may use.
type filter struct {
	providersOnly bool         // no registered nodes
	need          []Capability // only upstreams whose probe found these
	logsSpan      uint64       // only upstreams serving eth_getLogs over this many blocks (0: any)
	ws            bool         // only upstreams with a WebSocket URL
	idealOnly     bool         // only upstreams in the ideal tier (a hedge never goes to a worse bet)
}

func (f filter) admits(m *member) bool {
	if f.providersOnly && m.up.Kind != KindProvider {
		return false
	}
	if f.ws && m.ws == nil {
		return false
	}
	for _, c := range f.need {
		if !m.has(c) {
			return false
		}
	}
	return f.logsSpan == 0 || m.servesLogs(f.logsSpan)
}

func (p *Pool) pick(exclude map[string]bool, noRetry bool, prefer string, f filter) *member {
	now := time.Now()
	best := -1
	var group []candidate
	for _, m := range p.list() {
		if exclude[m.up.Name] || m.retired.Load() || !f.admits(m) {
			continue
		}
		if p.isQuarantined(m) {
			continue
		}
		if m.up.Kind == KindNode && !p.serving(m) {
			continue // in probation: shadow traffic only, never a caller's answer
		}
		tier, halfOpen, ok := p.tierOf(m, now, noRetry)
		if !ok || (f.idealOnly && (tier != tierIdeal || halfOpen)) {
			continue
		}
		if best >= 0 && tier > best {
			continue
		}
		if tier < best || best < 0 {
			best, group = tier, group[:0]
		}
		lat, known := m.stats.latency()
		group = append(group, candidate{
			m: m, latency: lat, known: known,
			trialDue: halfOpen && !noRetry && trialSlotFree(m.br.Load(), m.halfOpenMax),
		})
	}
	if len(group) == 0 {
		return nil
	}
	for _, c := range group {
		if c.trialDue || (prefer != "" && c.m.up.Name == prefer) {
			return c.m
		}
	}
	fillUnknownLatency(group)
	var nodes, providers []candidate
	for _, c := range group {
		if c.m.up.Kind == KindNode {
			nodes = append(nodes, c)
		} else {
			providers = append(providers, c)
		}
	}
	if len(nodes) > 0 && (len(providers) == 0 || rand.Float64() < nodesShare(nodes)) {
		return weightedByInverseLatency(nodes)
	}
	return fastest(providers)
}

// nodesShare is the share of calls the candidate nodes take from providers
// of the same tier: the sum of their ladder shares, at most 1 (a trusted
// node alone takes everything, as nodes are preferred). A wallet's nodes
// each take their part of its share, so together they count once.
func nodesShare(nodes []candidate) float64 {
	s := 0.0
	for _, c := range nodes {
		s += c.m.share()
	}
	return min(s, 1)
}

func (p *Pool) tierOf(m *member, now time.Time, noRetry bool) (tier int, halfOpen, ok bool) {
	switch breakerState(m.br.Load().State()) {
	case BreakerOpen:
		return 0, false, false
	case BreakerHalfOpen:
		halfOpen = true
	}
	h := m.health.view()
	if h.wrongChain {
		return 0, false, false
	}
	tier = tierIdeal
	if !h.probed {
		tier = max(tier, tierUnprobed)
	}
	if halfOpen && noRetry {
		tier = max(tier, tierHalfOpen)
	}
	if h.lagging {
		tier = max(tier, tierLagging)
	}
	if m.rateLimited(now) {
		tier = max(tier, tierRateLimited)
	}
	if !h.healthy {
		tier = max(tier, tierUnhealthy)
	}
	return tier, halfOpen, true
}

// fillUnknownLatency gives upstreams without samples the mean of those with
// samples, so a new node gets a fair share (and thereby samples) instead of
// none or all of the traffic.
func fillUnknownLatency(group []candidate) {
	var sum time.Duration
	n := 0
	for _, c := range group {
		if c.known {
			sum += c.latency
			n++
		}
	}
	fill := defaultLatency
	if n > 0 {
		fill = sum / time.Duration(n)
	}
	for i := range group {
		if !group[i].known {
			group[i].latency = fill
		}
	}
}

func weightedByInverseLatency(cs []candidate) *member {
	weights := make([]float64, len(cs))
	total := 0.0
	for i, c := range cs {
		// Floor at 100 µs: a loopback upstream would otherwise get
		// near-infinite weight.
		ms := max(c.latency.Seconds()*1000, 0.1)
		weights[i] = c.m.getWeight() * c.m.share() / ms
		total += weights[i]
	}
	r := rand.Float64() * total
	for i, w := range weights {
		if r < w {
			return cs[i].m
		}
		r -= w
	}
	return cs[len(cs)-1].m
}

func fastest(cs []candidate) *member {
	if len(cs) == 0 {
		return nil
	}
	best := cs[0]
	for _, c := range cs[1:] {
		if c.latency < best.latency {
			best = c
		}
	}
	return best.m
}
