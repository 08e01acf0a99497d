package trust

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

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
)

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
	limiters map[string]*rate.Limiter

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
		limiters: map[string]*rate.Limiter{}, ctx: ctx, cancel: cancel}
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
func (s *Shadower) Offer(pool *upstream.Pool, chainID uint64, requestID, trustedBy string, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	if s == nil || len(calls) == 0 {
		return
	}
	nodes := pool.InProbation()
	if len(nodes) == 0 {
		return
	}
	s.offerTo(pool, chainID, requestID, trustedBy, nodes[rand.IntN(len(nodes))], calls, pins, trusted)
}

// OfferEach is Offer to every node in probation (the gateway's own probation
// questions, asked of a provider once: each node in probation is judged by
// the same answer), within the same budgets.
func (s *Shadower) OfferEach(pool *upstream.Pool, chainID uint64, requestID, trustedBy string, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	if s == nil || len(calls) == 0 {
		return
	}
	for _, node := range pool.InProbation() {
		s.offerTo(pool, chainID, requestID, trustedBy, node, calls, pins, trusted)
	}
}

func (s *Shadower) offerTo(pool *upstream.Pool, chainID uint64, requestID, trustedBy string, node upstream.Ref, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	if !s.limiter(node.Name).Allow() {
		return
	}
	if !s.total.Allow() {
		metrics.Verifications.WithLabelValues("shadow_dropped").Inc()
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		metrics.Verifications.WithLabelValues("shadow_dropped").Inc()
		return
	}
	// The request goes on with its slices: the shadow gets its own.
	calls = append([]jsonrpc.Item(nil), calls...)
	pins = append([]verify.Pin(nil), pins...)
	trusted = append([]jsonrpc.Reply(nil), trusted...)
	s.wg.Add(1)
	go func() {
		defer func() { <-s.slots; s.wg.Done() }()
		s.shadow(pool, chainID, requestID, trustedBy, node, calls, pins, trusted)
	}()
}

func (s *Shadower) limiter(name string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.limiters[name]
	if !ok {
		if len(s.limiters) > 10_000 { // names of nodes long gone
			clear(s.limiters)
		}
		l = rate.NewLimiter(s.perNode, int(s.perNode))
		s.limiters[name] = l
	}
	return l
}

func (s *Shadower) shadow(pool *upstream.Pool, chainID uint64, requestID, trustedBy string, node upstream.Ref, calls []jsonrpc.Item, pins []verify.Pin, trusted []jsonrpc.Reply) {
	body, err := jsonrpc.EncodeUpstream(calls)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, shadowTimeout)
	defer cancel()
	res, err := pool.Forward(ctx, body, upstream.ForwardOptions{Only: node.Name, MaxAttempts: 1})
	if err != nil {
		metrics.Verifications.WithLabelValues("shadow_unanswered").Inc()
		return
	}
	answers, _ := jsonrpc.MatchReplies(calls, res.Body)
	job := verify.Job{Pool: pool, ChainID: chainID, RequestID: requestID, Node: node, Calls: calls, Replies: answers, Pins: pins}
	for k := range calls {
		if k >= len(trusted) || k >= len(answers) {
			break
		}
		switch verify.Compare(ctx, pool, &calls[k], pins[k], answers[k], trusted[k]) {
		case verify.Match:
			metrics.Verifications.WithLabelValues("shadow_match").Inc()
			if v, changed := pool.RecordMatch(node.Name, calls[k].Method); changed {
				s.log.Info("node climbed the trust ladder", zap.Uint64("chain_id", chainID), zap.String("node", node.Name),
					zap.String("phase", v.Phase), zap.Float64("traffic_share", v.Share), zap.Int64("verified_matches", v.Matches),
					zap.Int("verified_methods", v.Methods), zap.Float64("check_rate", v.CheckRate))
			}
		case verify.Mismatch:
			metrics.Verifications.WithLabelValues("shadow_mismatch").Inc()
			s.verifier.Convict(job, &calls[k], pins[k], answers[k].Result, trusted[k].Result, trustedBy)
			return
		default:
			metrics.Verifications.WithLabelValues("shadow_unjudged").Inc()
		}
	}
}
