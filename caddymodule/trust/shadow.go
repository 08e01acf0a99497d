package trust

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
)

// Shadow bounds. A shadow call costs the providers nothing — the truth is
// the answer a provider already gave the caller — so a flood of
// registrations cannot multiply provider load; it costs only the node
// (bounded per node) and this gateway (bounded in total).
const (
	DefaultShadowRate     = 20 // shadow calls per second per node in probation
	DefaultShadowInFlight = 16 // shadow calls in flight per gateway, all nodes and chains
	// DefaultShadowTotal is the gateway's one shadow budget, all nodes
	// and chains (per second): however many nodes register, shadows cost
	// nodes and this gateway no more (docs/node-market.md).
	DefaultShadowTotal = 100
	shadowTimeout      = 5 * time.Second
	// A node holds at most shadowPerNodeInFlight of the gateway's shadow
	// slots (one while it has left any unanswered), and a node that left one
	// unanswered (hung, refused, cut) is offered none for shadowBackoff,
	// doubling with each further one up to shadowBackoffMax: a stranger's nodes that pass the health probe and
	// hang on everything else cannot keep the slots (and with them an
	// honest newcomer's probation, and the providers' probation questions)
	// for themselves (TestStallingNodesDoNotStarveNewcomer).
	shadowPerNodeInFlight = 2
	shadowBackoff         = time.Second
	shadowBackoffMax      = 30 * time.Second
)

// nodeShadows is one node's shadow budget and state.
type nodeShadows struct {
	lim      *rate.Limiter
	inFlight int
	fails    int
	until    time.Time // no shadow before this (after unanswered ones)
}

// Shadower sends copies of provider-served calls to nodes in probation and
// compares their answers with the provider's. A node in probation serves no
// caller: its answers are never relayed, billed or paid for.
type Shadower struct {
	verifier *verify.Verifier // convicts a liar (quarantine and evidence)
	log      *zap.Logger
	perNode  rate.Limit
	total    *rate.Limiter // the global budget (DefaultShadowTotal)
	slots    chan struct{}

	mu       sync.Mutex
	limiters map[string]*nodeShadows

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewShadower makes a Shadower convicting through v (required: without
// checks there is nothing to judge shadows by); Close waits for its calls.
func NewShadower(v *verify.Verifier, log *zap.Logger) *Shadower {
	if log == nil {
		log = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Shadower{verifier: v, log: log, perNode: DefaultShadowRate, slots: make(chan struct{}, DefaultShadowInFlight),
		total:    rate.NewLimiter(DefaultShadowTotal, DefaultShadowTotal),
		limiters: map[string]*nodeShadows{}, ctx: ctx, cancel: cancel}
}

// Close stops new shadow calls and waits for those in flight.
func (s *Shadower) Close() {
	s.cancel()
	s.wg.Wait()
}

// Offer considers a provider-served part for a shadow copy: calls as sent
// (pinned), the provider's replies, the plan's pins. It never blocks: with
// no node in probation, no token for the chosen node, or every slot taken,
// the copy is simply not made.
func (s *Shadower) Offer(pool *upstream.Pool, chainID uint64, blockTime time.Duration, requestID, trustedBy string, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	if s == nil || len(calls) == 0 {
		return
	}
	nodes := s.ready(pool.InProbation())
	if len(nodes) == 0 {
		return
	}
	s.offerTo(pool, chainID, blockTime, requestID, trustedBy, nodes[rand.IntN(len(nodes))], calls, pins, trusted)
}

// OfferEach is Offer to every node in probation (the gateway's own probation
// questions, asked of a provider once: each node in probation is judged by
// the same answer), within the same budgets, in a random order so no node's
// place in the pool decides who gets the last slot.
func (s *Shadower) OfferEach(pool *upstream.Pool, chainID uint64, blockTime time.Duration, requestID, trustedBy string, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	if s == nil || len(calls) == 0 {
		return
	}
	nodes := pool.InProbation()
	rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	for _, node := range nodes {
		s.offerTo(pool, chainID, blockTime, requestID, trustedBy, node, calls, pins, trusted)
	}
}

// ready: the nodes that would take a shadow now (a caller's call goes to
// one of them, not to a node backing off).
func (s *Shadower) ready(nodes []upstream.Ref) []upstream.Ref {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := nodes[:0]
	for _, n := range nodes {
		if ns, ok := s.limiters[n.Name]; !ok || ns.free(now) {
			out = append(out, n)
		}
	}
	return out
}

// Wants reports whether any of nodes would take a shadow now (not backing
// off after unanswered shadows, a slot of its own free): the gateway asks
// providers its probation questions only then, so nodes that never answer
// cost the providers next to nothing.
func (s *Shadower) Wants(nodes []upstream.Ref) bool {
	return s != nil && len(s.ready(nodes)) > 0
}

func (s *Shadower) offerTo(pool *upstream.Pool, chainID uint64, blockTime time.Duration, requestID, trustedBy string, node upstream.Ref, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	ns, ok := s.claim(node.Name)
	if !ok {
		metrics.Verifications.WithLabelValues("shadow_backoff").Inc()
		return
	}
	if !ns.lim.Allow() {
		s.done(ns, true)
		return
	}
	if !s.total.Allow() {
		s.done(ns, true)
		metrics.Verifications.WithLabelValues("shadow_dropped").Inc()
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.done(ns, true)
		metrics.Verifications.WithLabelValues("shadow_dropped").Inc()
		return
	}
	// The request goes on with its slices: the shadow gets its own.
	calls = append([]jsonrpc.Item(nil), calls...)
	pins = append([]verify.Pin(nil), pins...)
	trusted = append([]jsonrpc.Reply(nil), trusted...)
	s.wg.Add(1)
	go func() {
		answered := false
		defer func() { s.done(ns, answered); <-s.slots; s.wg.Done() }()
		answered = s.shadow(pool, chainID, blockTime, requestID, trustedBy, node, calls, pins, trusted)
	}()
}

// free: the node may take a shadow now.
func (ns *nodeShadows) free(now time.Time) bool {
	limit := shadowPerNodeInFlight
	if ns.fails > 0 {
		limit = 1
	}
	return ns.inFlight < limit && !now.Before(ns.until)
}

// claim takes one of the node's in-flight places unless it has none free or
// is backing off.
func (s *Shadower) claim(name string) (*nodeShadows, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns, ok := s.limiters[name]
	if !ok {
		if len(s.limiters) > 10_000 { // names of nodes long gone
			clear(s.limiters)
		}
		ns = &nodeShadows{lim: rate.NewLimiter(s.perNode, int(s.perNode))}
		s.limiters[name] = ns
	}
	if !ns.free(time.Now()) {
		return nil, false
	}
	ns.inFlight++
	return ns, true
}

// done gives the place back; an unanswered shadow starts or doubles the
// node's back-off, an answered one ends it.
func (s *Shadower) done(ns *nodeShadows, answered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns.inFlight--
	if answered {
		ns.fails, ns.until = 0, time.Time{}
		return
	}
	ns.fails++
	d := shadowBackoffMax
	if ns.fails < 8 {
		d = min(shadowBackoff<<(ns.fails-1), shadowBackoffMax)
	}
	ns.until = time.Now().Add(d)
}

// shadow asks node and judges its answers; false when it gave none.
func (s *Shadower) shadow(pool *upstream.Pool, chainID uint64, blockTime time.Duration, requestID, trustedBy string, node upstream.Ref, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) bool {
	body, err := jsonrpc.EncodeUpstream(calls)
	if err != nil {
		return true // nothing was asked: not the node's doing
	}
	ctx, cancel := context.WithTimeout(s.ctx, shadowTimeout)
	defer cancel()
	res, err := pool.Forward(ctx, body, upstream.ForwardOptions{Only: node.Name, MaxAttempts: 1})
	if err != nil {
		metrics.Verifications.WithLabelValues("shadow_unanswered").Inc()
		return false
	}
	answers, _ := jsonrpc.MatchReplies(calls, res.Body)
	job := verify.Job{Pool: pool, ChainID: chainID, RequestID: requestID, Node: node, Calls: calls, Replies: answers, Pins: pins, BlockTime: blockTime}
	for k := range calls {
		if k >= len(trusted) || k >= len(answers) {
			break
		}
		truth, by := trusted[k], trustedBy
		if pins[k].Judge == evm.JudgeHead {
			// The provider's head when the caller asked is older than the
			// node's answer (a shadow is sent after the caller's call, and a
			// node may answer late): judge by the provider's head now.
			fresh, ok := verify.FreshHead(ctx, pool)
			if !ok {
				metrics.Verifications.WithLabelValues("shadow_unjudged").Inc()
				continue
			}
			truth = fresh
		}
		jd := verify.Judge(ctx, verify.Case{Pool: pool, Node: node, BlockTime: blockTime, Call: &calls[k], Pin: pins[k], Answer: answers[k], Trusted: truth})
		switch jd.Outcome {
		case verify.Match:
			metrics.Verifications.WithLabelValues("shadow_match").Inc()
			if answers[k].Response.Error != nil {
				continue // two refusals alike: no lie, but no verified work either (verify.check)
			}
			if v, changed := pool.RecordMatch(node.Name, calls[k].Method); changed {
				s.log.Info("node climbed the trust ladder", zap.Uint64("chain_id", chainID), zap.String("node", node.Name),
					zap.String("phase", v.Phase), zap.Float64("traffic_share", v.Share), zap.Int64("verified_matches", v.Matches),
					zap.Int("verified_methods", v.Methods), zap.Float64("check_rate", v.CheckRate))
			}
		case verify.Mismatch:
			metrics.Verifications.WithLabelValues("shadow_mismatch").Inc()
			s.verifier.Convict(job, &calls[k], pins[k], verify.AnswerOf(answers[k]), jd.Truth, by, jd.Why)
			return true
		default:
			metrics.Verifications.WithLabelValues("shadow_unjudged").Inc()
		}
	}
	return true
}
