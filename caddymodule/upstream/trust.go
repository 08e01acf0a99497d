package upstream

import (
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Trust is how far the pool trusts its registered nodes (docs/trust.md,
// docs/node-market.md). A node is a stranger's: it starts in
// probation, serving no caller — the gateway compares its answers to shadow
// copies of calls a provider answered — and climbs a ladder of traffic
// shares as its verified history grows and as time passes. Providers are
// always trusted.
//
// Standing belongs to the operator's wallet (Upstream.Operator), not to a
// URL: every node of one wallet shares one history, one probation and one
// rung, and the rung's share is divided among the wallet's nodes, so ten
// nodes of a wallet together take one node's share. A quarantine of any of
// them sends the wallet back to the start, behind a newcomer: its probation
// asks PenaltyFactor times the matches.
//
// The ladder (TrustConfig.Ladder) is a list of steps: with at least Matches
// verified answers after probation, and at least After since probation
// ended, a wallet gets Share of the chain's calls that an ideal provider
// could take (1 = nodes preferred over providers). Probation is the
// implicit first step: share 0 until ProbationMatches matches over
// ProbationMethods distinct methods.
//
// The standing lives on the pool, so it survives Caddy reloads and registry
// refreshes; the gateway also mirrors it to Redis (Standings, Restore), so
// it survives restarts and is shared by every gateway.
type TrustConfig struct {
	// Off: nodes are trusted at once (share 1), as before probation
	// existed. For tests of other concerns, and operators running only
	// their own nodes.
	Off bool
	// ProbationMatches is how many shadow answers must match before a
	// wallet's nodes serve any caller (default 50), over at least
	// ProbationMethods distinct methods (default 3).
	ProbationMatches int
	ProbationMethods int
	// Ladder is the share after probation by verified matches and time,
	// ascending (default DefaultLadder).
	Ladder []TrustStep
	// CheckFloor is the lowest share of a node's served requests that is
	// checked, however long its clean history (default 0.05).
	CheckFloor float64
	// CheckDecay is how many verified matches after probation take the
	// check rate from 1 down to the floor, linearly (default 2000), and
	// CheckDecayTime how long after probation (default 6 h): the rate is
	// the higher of the two, so neither a flood of answers nor waiting
	// alone lowers it.
	CheckDecay     int
	CheckDecayTime time.Duration
	// PenaltyFactor multiplies the probation of a wallet one of whose
	// nodes was quarantined (default 4).
	PenaltyFactor int
}

// TrustStep is one rung of the ladder: at least Matches verified answers
// after probation and at least After since probation ended.
type TrustStep struct {
	Matches int64         `json:"matches"`
	Share   float64       `json:"share"`
	After   time.Duration `json:"after,omitempty"`
}

// DefaultLadder: a wallet fresh out of probation takes a tenth of the calls
// an ideal provider could take; a quarter after 200 verified answers and
// 10 minutes, half after 500 and an hour, all (preferred over providers)
// after 1,000 verified answers and 6 hours. Each rung is reached only by
// answers checked against a provider, so climbing costs a liar the risk of
// being caught at every step; the time bound keeps a busy gateway from
// handing a stranger full share within a minute.
var DefaultLadder = []TrustStep{
	{Matches: 0, Share: 0.10},
	{Matches: 200, Share: 0.25, After: 10 * time.Minute},
	{Matches: 500, Share: 0.50, After: time.Hour},
	{Matches: 1000, Share: 1, After: 6 * time.Hour},
}

// NodeProbation is how many of its own answers must match before a node
// serves callers, whatever its wallet's standing (at most the probation's
// matches): a wallet's new node (or any node after a gateway restart) is
// never trusted on its wallet's word alone.
const NodeProbation = 10

// serving: m's wallet has a share and m has passed its own short
// probation (trust off: always).
func (p *Pool) serving(m *member) bool {
	if p.cfg.Trust.Off {
		return true
	}
	return m.trust.Load().getShare() > 0 && m.own.Load() >= int64(min(NodeProbation, p.cfg.Trust.ProbationMatches))
}

// Defaults of TrustConfig.
const (
	DefaultProbationMatches = 50
	DefaultProbationMethods = 3
	DefaultCheckFloor       = 0.05
	DefaultCheckDecay       = 2000
	DefaultCheckDecayTime   = 6 * time.Hour
	DefaultPenaltyFactor    = 4
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
	if c.CheckDecayTime <= 0 {
		c.CheckDecayTime = DefaultCheckDecayTime
	}
	if c.PenaltyFactor <= 0 {
		c.PenaltyFactor = DefaultPenaltyFactor
	}
	return c
}

// trust is one wallet's verified history on one chain (or one node's, for
// a node without a wallet, and for providers).
type trust struct {
	mu      sync.Mutex
	matches int64
	methods map[string]bool
	serving time.Time // when it first served callers (left probation; its creation with probation off)
	penalty bool      // a node of this wallet was quarantined: a longer probation
	gen     int64     // resets (quarantines) seen: a shared record of a later one replaces this history
	// unflushed: matches booked here since the last Standings (the
	// gateway adds them to the shared count in Redis); dirty: something to
	// write.
	unflushed int64
	dirty     bool
	share     atomic.Uint64 // math.Float64bits of the wallet's current share; read lock-free by selection
	nodes     atomic.Int32  // the wallet's nodes in the pool: each takes share/nodes
}

func (t *trust) getShare() float64 { return math.Float64frombits(t.share.Load()) }

// nodeShare is one node's part of its wallet's share.
func (t *trust) nodeShare() float64 {
	s := t.getShare()
	if n := t.nodes.Load(); n > 1 {
		return s / float64(n)
	}
	return s
}

// TrustView is a node's standing, for logs, /rpc/health and the verifier.
type TrustView struct {
	Phase     string  `json:"phase"` // "probation", "ladder", "trusted", or "no-probation" (probation off)
	Matches   int64   `json:"verified_matches"`
	Methods   int     `json:"verified_methods"`
	Share     float64 `json:"traffic_share"`        // this node's part of its wallet's share
	CheckRate float64 `json:"check_rate,omitempty"` // absent from the public /rpc/health
	// RungShare is Share before the capacity factor (checks.go): what the
	// public /rpc/health shows as traffic_share, since the factor tells
	// when a node's checks are being dropped.
	RungShare float64 `json:"-"`
	// Operator is the wallet whose standing this is; WalletNodes how many
	// of its nodes share it here; Penalty: a node of the wallet was
	// quarantined, so its probation is longer.
	Operator    string `json:"operator,omitempty"`
	WalletNodes int    `json:"wallet_nodes,omitempty"`
	Penalty     bool   `json:"penalty,omitempty"`
	// ProbationMatches is what this wallet's probation asks; NodeMatches
	// this node's own matches (it serves once its wallet has a share and
	// it has NodeProbation).
	ProbationMatches int   `json:"probation_matches,omitempty"`
	NodeMatches      int64 `json:"node_matches"`
	// ServingSince is when the node began to serve callers on this
	// gateway (zero in probation): evidence against it says its lies may
	// go back that far, since every answer after it was a caller's.
	ServingSince time.Time `json:"serving_since,omitzero"`
}

// probationMatches is what t's probation asks.
func (c *TrustConfig) probationMatches(penalty bool) int64 {
	if penalty {
		return int64(c.ProbationMatches) * int64(c.PenaltyFactor)
	}
	return int64(c.ProbationMatches)
}

// shareFor is the ladder's share for a history, serving since serving
// (zero: still in probation), at now.
func (c *TrustConfig) shareFor(matches int64, methods int, penalty bool, serving, now time.Time) float64 {
	if c.Off {
		return 1
	}
	pm := c.probationMatches(penalty)
	if matches < pm || methods < c.ProbationMethods {
		return 0
	}
	age := time.Duration(0)
	if !serving.IsZero() {
		age = now.Sub(serving)
	}
	share := 0.0
	for _, s := range c.Ladder {
		if matches-pm >= s.Matches && age >= s.After {
			share = s.Share
		}
	}
	return share
}

// checkRate is the share of a node's served requests to check: 1 fresh out
// of probation, falling linearly with verified history and with time to the
// floor (the higher of the two).
func (c *TrustConfig) checkRate(matches int64, penalty bool, serving, now time.Time) float64 {
	after := matches - c.probationMatches(penalty)
	if after <= 0 || serving.IsZero() {
		return 1
	}
	byAnswers := 1 - float64(after)/float64(c.CheckDecay)
	byTime := 1 - float64(now.Sub(serving))/float64(c.CheckDecayTime)
	return max(c.CheckFloor, byAnswers, byTime)
}

// refresh recomputes t's share at now (rungs are reached with time too);
// t.mu held. It reports whether the share changed.
func (c *TrustConfig) refresh(t *trust, now time.Time) bool {
	share := c.shareFor(t.matches, len(t.methods), t.penalty, t.serving, now)
	if share > 0 && t.serving.IsZero() {
		t.serving, t.dirty = now, true
		// The rungs count time from here: recompute with it.
		share = c.shareFor(t.matches, len(t.methods), t.penalty, t.serving, now)
	}
	return t.share.Swap(math.Float64bits(share)) != math.Float64bits(share)
}

func (c *TrustConfig) view(t *trust, operator string) TrustView {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	c.refresh(t, now)
	v := TrustView{Matches: t.matches, Methods: len(t.methods), Share: t.nodeShare(), CheckRate: c.checkRate(t.matches, t.penalty, t.serving, now),
		ServingSince: t.serving, Operator: operator, WalletNodes: int(t.nodes.Load()), Penalty: t.penalty,
		ProbationMatches: int(c.probationMatches(t.penalty))}
	switch {
	case c.Off:
		v.Phase = "no-probation" // no probation: the verifier samples as configured
	case t.getShare() == 0:
		v.Phase, v.CheckRate = "probation", 1
	case t.getShare() >= 1:
		v.Phase = "trusted"
	default:
		v.Phase = "ladder"
	}
	return v
}

func newTrust(c *TrustConfig, penalty bool) *trust {
	t := &trust{methods: map[string]bool{}, penalty: penalty}
	c.refresh(t, time.Now())
	t.dirty = false
	return t
}

// operatorKey is whose standing a node shares: its wallet's, or its own.
func operatorKey(u Upstream) string {
	if u.Kind != KindNode {
		return "provider:" + u.Name
	}
	if u.Operator != "" {
		return "wallet:" + strings.ToLower(u.Operator)
	}
	return "node:" + u.NodeID
}

// standings holds the pool's per-wallet trust.
type standings struct {
	mu sync.Mutex
	m  map[string]*trust
}

// standingFor returns the trust of key, creating it.
func (p *Pool) standingFor(key string) *trust {
	p.standing.mu.Lock()
	defer p.standing.mu.Unlock()
	if p.standing.m == nil {
		p.standing.m = map[string]*trust{}
	}
	t := p.standing.m[key]
	if t == nil {
		t = newTrust(&p.cfg.Trust, false)
		p.standing.m[key] = t
	}
	return t
}

// countWalletNodes sets each standing's node count from the member list
// (SetNodes, quarantines), so each node takes its part of its wallet's
// share; quarantined nodes take none.
//
// It also counts the wallets with nodes on each endpoint host (the host
// quarantine follows, endpointHost): the share of a node on a host that
// several wallets use is divided among those wallets, so ten wallets
// registered on ten ports (or paths) of one machine's name together take
// what one would, as ten nodes of one wallet do. Registration proves control
// of an origin (host and port), not of a machine, so without this one
// operator could buy ten shares with ten wallets on one host.
func (p *Pool) countWalletNodes(ms []*member) {
	n := map[*trust]int32{}
	hosts := map[string]map[string]bool{}
	for _, m := range ms {
		if m.up.Kind == KindNode && !m.retired.Load() && !p.isQuarantined(m) {
			n[m.trust.Load()]++
			if h := endpointHost(m.url); h != "" {
				if hosts[h] == nil {
					hosts[h] = map[string]bool{}
				}
				hosts[h][operatorKey(m.up)] = true
			}
		}
	}
	for t, k := range n {
		t.nodes.Store(k)
	}
	for _, m := range ms {
		if m.up.Kind == KindNode {
			m.hostWallets.Store(int32(len(hosts[endpointHost(m.url)])))
		}
	}
}

// share is the node's part of its wallet's share, divided among the
// wallets on its endpoint host, times its capacity factor (checks.go): a
// node whose sampled answers the gateway could not all check gets less
// traffic until they can be.
func (m *member) share() float64 { return m.rungShare() * m.checks.capacity() }

// rungShare is the node's share before its capacity factor.
func (m *member) rungShare() float64 {
	s := m.trust.Load().nodeShare()
	if n := m.hostWallets.Load(); n > 1 {
		s /= float64(n)
	}
	return s
}

// RecordMatch books one of the named node's answers that matched a trusted
// provider's (a shadow call in probation, or a check after it) to its
// wallet's standing, and moves it up the ladder when a rung is reached. It
// returns the node's standing after, and whether its share changed (the
// caller logs the figures).
func (p *Pool) RecordMatch(name, method string) (TrustView, bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return TrustView{}, false
	}
	m.own.Add(1)
	t := m.trust.Load()
	t.mu.Lock()
	t.matches++
	t.unflushed++
	if !t.methods[method] {
		t.methods[method] = true
	}
	t.dirty = true
	changed := p.cfg.Trust.refresh(t, time.Now())
	t.mu.Unlock()
	v := p.cfg.Trust.view(t, m.up.Operator)
	p.nodeView(m, &v)
	return v, changed
}

// nodeView adds m's own probation to its wallet's standing.
func (p *Pool) nodeView(m *member, v *TrustView) {
	v.NodeMatches = m.own.Load()
	v.Share, v.RungShare = m.share(), m.rungShare()
	if !p.cfg.Trust.Off && !p.serving(m) {
		v.Phase, v.CheckRate = "probation", 1
	}
}

// Trust is the named node's standing (ok false for providers and unknown
// names).
func (p *Pool) Trust(name string) (TrustView, bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return TrustView{}, false
	}
	v := p.cfg.Trust.view(m.trust.Load(), m.up.Operator)
	p.nodeView(m, &v)
	return v, true
}

// InProbation lists the nodes that serve no caller yet (shadow traffic
// only), excluding quarantined, retired and wrong-chain ones.
func (p *Pool) InProbation() []Ref {
	var out []Ref
	for _, m := range p.list() {
		if m.up.Kind != KindNode || m.retired.Load() || m.health.view().wrongChain {
			continue
		}
		if p.isQuarantined(m) {
			continue
		}
		if !p.serving(m) {
			out = append(out, m.ref)
		}
	}
	return out
}

// HasNodes reports whether the pool has any registered node that is not
// quarantined: only then do calls need pinning and shadows.
func (p *Pool) HasNodes() bool {
	for _, m := range p.list() {
		if m.up.Kind == KindNode && !m.retired.Load() && !p.isQuarantined(m) {
			return true
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

// RefreshTrust recomputes every standing's share now: rungs are reached
// with time as well as answers, and a wallet that serves little must still
// climb when its time comes (the gateway calls it on its registry tick).
func (p *Pool) RefreshTrust() {
	now := time.Now()
	p.refreshChecks(now)
	p.standing.mu.Lock()
	ts := make([]*trust, 0, len(p.standing.m))
	for _, t := range p.standing.m {
		ts = append(ts, t)
	}
	p.standing.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		p.cfg.Trust.refresh(t, now)
		t.mu.Unlock()
	}
}

// Standing is a wallet's trust as the gateway shares it through Redis:
// what it learnt here since the last exchange (Delta matches), and the
// whole (Matches, Methods, ServingSince, Penalty).
type Standing struct {
	Key          string
	Delta        int64
	Matches      int64
	Methods      []string
	ServingSince time.Time
	Penalty      bool
	// Gen counts the wallet's resets (quarantines): a record of a later
	// generation replaces the history, an earlier one is ignored.
	Gen int64
}

// Standings returns the standings with something new to share and marks
// their matches as shared (their Delta is now the caller's to add).
func (p *Pool) Standings() []Standing {
	p.standing.mu.Lock()
	defer p.standing.mu.Unlock()
	var out []Standing
	for k, t := range p.standing.m {
		if strings.HasPrefix(k, "provider:") {
			continue
		}
		t.mu.Lock()
		if t.dirty {
			s := Standing{Key: k, Delta: t.unflushed, Matches: t.matches, ServingSince: t.serving, Penalty: t.penalty, Gen: t.gen}
			for m := range t.methods {
				s.Methods = append(s.Methods, m)
			}
			sort.Strings(s.Methods)
			out = append(out, s)
			t.unflushed, t.dirty = 0, false
		}
		t.mu.Unlock()
	}
	return out
}

// Keys lists the standings the pool holds (wallets of its nodes).
func (p *Pool) Keys() []string {
	p.standing.mu.Lock()
	defer p.standing.mu.Unlock()
	out := make([]string, 0, len(p.standing.m))
	for k := range p.standing.m {
		if !strings.HasPrefix(k, "provider:") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// KeyOf is the standing key of a node: "wallet:<address>" or
// "node:<id>".
func KeyOf(u Upstream) string { return operatorKey(u) }

// Restore sets a standing from the shared record: the matches every
// gateway verified (plus what this one booked since it last shared), the
// methods, when it began serving and whether it is penalised. A record of a
// later generation (a quarantine on some gateway) replaces the history; one
// of an earlier generation is stale and ignored.
func (p *Pool) Restore(s Standing) {
	t := p.standingFor(s.Key)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case s.Gen < t.gen:
		return
	case s.Gen > t.gen:
		t.unflushed, t.methods, t.serving, t.gen = 0, map[string]bool{}, time.Time{}, s.Gen
		t.penalty = s.Penalty
	}
	t.matches = s.Matches + t.unflushed
	for _, m := range s.Methods {
		t.methods[m] = true
	}
	if !s.ServingSince.IsZero() && (t.serving.IsZero() || s.ServingSince.Before(t.serving)) {
		t.serving = s.ServingSince
	}
	t.penalty = t.penalty || s.Penalty
	p.cfg.Trust.refresh(t, time.Now())
}

// StandingView is the standing of key (a wallet's) as a node of it would
// see it, its share undivided: what the operator is shown (settlementd reads
// it from the shared record).
func (p *Pool) StandingView(key string) (TrustView, bool) {
	p.standing.mu.Lock()
	t := p.standing.m[key]
	p.standing.mu.Unlock()
	if t == nil {
		return TrustView{}, false
	}
	v := p.cfg.Trust.view(t, "")
	v.Share = t.getShare()
	return v, true
}
