package upstream

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Trust is how far the pool trusts its registered nodes (DESIGN §3, "Trust
// in nodes"). A node is a stranger's: it starts in probation, serving no
// caller — the gateway compares its answers to shadow copies of calls a
// provider served — and climbs a ladder of traffic shares as its verified
// history grows. Providers are always trusted.
//
// The ladder (TrustConfig.Ladder) is a list of steps: with at least
// Matches verified answers a node gets Share of the chain's calls that an
// ideal provider could take (1 = nodes preferred over providers, as before
// the ladder). Probation is the implicit first step: share 0 until
// ProbationMatches matches over ProbationMethods distinct methods.
//
// The state lives on the member, so it survives Caddy reloads and registry
// refreshes; a quarantine resets it (a lifted node starts in probation).
type TrustConfig struct {
	// Off: nodes are trusted at once (share 1), as before probation
	// existed. For tests of other concerns, and operators running only
	// their own nodes.
	Off bool
	// ProbationMatches is how many shadow answers must match before a
	// node serves any caller (default 50), over at least
	// ProbationMethods distinct methods (default 3).
	ProbationMatches int
	ProbationMethods int
	// Ladder is the share after probation by verified matches, ascending
	// (default DefaultLadder).
	Ladder []TrustStep
	// CheckFloor is the lowest share of a node's served requests that is
	// checked, however long its clean history (default 0.05).
	CheckFloor float64
	// CheckDecay is how many verified matches after probation take the
	// check rate from 1 down to the floor, linearly (default 2000).
	CheckDecay int
}

// TrustStep is one rung of the ladder.
type TrustStep struct {
	Matches int64   `json:"matches"`
	Share   float64 `json:"share"`
}

// DefaultLadder: a node fresh out of probation takes a tenth of the calls
// an ideal provider could take; it is trusted with all (preferred over
// providers) after 1,000 verified answers. Each rung is reached only by
// answers checked against a provider, so climbing costs a liar the risk of
// being caught at every step.
var DefaultLadder = []TrustStep{{Matches: 0, Share: 0.10}, {Matches: 200, Share: 0.25}, {Matches: 500, Share: 0.50}, {Matches: 1000, Share: 1}}

// Defaults of TrustConfig.
const (
	DefaultProbationMatches = 50
	DefaultProbationMethods = 3
	DefaultCheckFloor       = 0.05
	DefaultCheckDecay       = 2000
)

func (c TrustConfig) withDefaults() TrustConfig {
	if c.ProbationMatches <= 0 {
		c.ProbationMatches = DefaultProbationMatches
	}
	if c.ProbationMethods <= 0 {
		c.ProbationMethods = DefaultProbationMethods
	}
	if len(c.Ladder) == 0 {
		c.Ladder = DefaultLadder
	}
	if c.CheckFloor <= 0 || c.CheckFloor > 1 {
		c.CheckFloor = DefaultCheckFloor
	}
	if c.CheckDecay <= 0 {
		c.CheckDecay = DefaultCheckDecay
	}
	return c
}

// trust is one node's verified history.
type trust struct {
	mu      sync.Mutex
	matches int64
	methods map[string]bool
	serving time.Time     // when it first served callers (left probation; its creation with probation off)
	share   atomic.Uint64 // math.Float64bits of the current share; read lock-free by selection
}

func (t *trust) getShare() float64 { return math.Float64frombits(t.share.Load()) }

// TrustView is a node's standing, for logs, /rpc/health and the verifier.
type TrustView struct {
	Phase     string  `json:"phase"` // "probation", "ladder", "trusted", or "no-probation" (probation off)
	Matches   int64   `json:"verified_matches"`
	Methods   int     `json:"verified_methods"`
	Share     float64 `json:"traffic_share"`
	CheckRate float64 `json:"check_rate"`
	// ServingSince is when the node began to serve callers on this
	// gateway (zero in probation): evidence against it says its lies may
	// go back that far, since every answer after it was a caller's.
	ServingSince time.Time `json:"serving_since,omitzero"`
}

// shareFor is the ladder's share for a history.
func (c *TrustConfig) shareFor(matches int64, methods int) float64 {
	if c.Off {
		return 1
	}
	if matches < int64(c.ProbationMatches) || methods < c.ProbationMethods {
		return 0
	}
	share := 0.0
	for _, s := range c.Ladder {
		if matches-int64(c.ProbationMatches) >= s.Matches {
			share = s.Share
		}
	}
	return share
}

// checkRate is the share of a node's served requests to check: 1 fresh out
// of probation, falling linearly with verified history to the floor.
func (c *TrustConfig) checkRate(matches int64) float64 {
	after := matches - int64(c.ProbationMatches)
	if after <= 0 {
		return 1
	}
	return max(c.CheckFloor, 1-float64(after)/float64(c.CheckDecay))
}

func (c *TrustConfig) view(t *trust) TrustView {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := TrustView{Matches: t.matches, Methods: len(t.methods), Share: t.getShare(), CheckRate: c.checkRate(t.matches), ServingSince: t.serving}
	switch {
	case c.Off:
		v.Phase = "no-probation" // no probation: the verifier samples as configured
	case v.Share == 0:
		v.Phase, v.CheckRate = "probation", 1
	case v.Share >= 1:
		v.Phase = "trusted"
	default:
		v.Phase = "ladder"
	}
	return v
}

func newTrust(c *TrustConfig) *trust {
	t := &trust{methods: map[string]bool{}}
	share := c.shareFor(0, 0)
	t.share.Store(math.Float64bits(share))
	if share > 0 {
		t.serving = time.Now()
	}
	return t
}

// RecordMatch books one of the named node's answers that matched a trusted
// provider's (a shadow call in probation, or a check after it), and moves
// it up the ladder when a rung is reached. It returns the node's standing
// after, and whether its share changed (the caller logs the figures).
func (p *Pool) RecordMatch(name, method string) (TrustView, bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return TrustView{}, false
	}
	t := m.trust.Load()
	t.mu.Lock()
	t.matches++
	t.methods[method] = true
	share := p.cfg.Trust.shareFor(t.matches, len(t.methods))
	changed := t.share.Swap(math.Float64bits(share)) != math.Float64bits(share)
	if share > 0 && t.serving.IsZero() {
		t.serving = time.Now()
	}
	t.mu.Unlock()
	return p.cfg.Trust.view(t), changed
}

// Trust is the named node's standing (ok false for providers and unknown
// names).
func (p *Pool) Trust(name string) (TrustView, bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return TrustView{}, false
	}
	return p.cfg.Trust.view(m.trust.Load()), true
}

// InProbation lists the nodes that serve no caller yet (shadow traffic
// only), excluding quarantined, retired and wrong-chain ones.
func (p *Pool) InProbation() []Ref {
	var out []Ref
	for _, m := range p.list() {
		if m.up.Kind != KindNode || m.retired.Load() || m.health.view().wrongChain {
			continue
		}
		if _, q := p.quarantined.of(m.up.Name); q {
			continue
		}
		if m.trust.Load().getShare() == 0 {
			out = append(out, m.ref)
		}
	}
	return out
}

// HasNodes reports whether the pool has any registered node that is not
// quarantined: only then do calls need pinning and shadows.
func (p *Pool) HasNodes() bool {
	for _, m := range p.list() {
		if m.up.Kind == KindNode && !m.retired.Load() {
			if _, q := p.quarantined.of(m.up.Name); !q {
				return true
			}
		}
	}
	return false
}

// NodeState is what the pool's probes last saw of the named node: the head
// it reports and whether it answered a question about old state (an
// archive node). The judge (caddymodule/verify) reads it to decide whether
// the node should have known an answer it said it did not have: a block at
// or below the head it reports, within the state it keeps. ok is false for
// providers, unknown names and nodes never probed.
func (p *Pool) NodeState(name string) (head uint64, archive, ok bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return 0, false, false
	}
	h := m.health.view()
	if !h.probed || h.head == 0 {
		return 0, false, false
	}
	return h.head, m.caps.known[CapArchive].Load() == capYes, true
}
