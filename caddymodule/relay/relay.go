// Package relay forwards a chain's paid JSON-RPC calls and brings their
// answers back: the edge cache (cache.Cache.Split), sticky filter calls to
// the upstream that made the filter, sub-batches, trust pins for
// registered nodes, the pool's pick/hedge/retry (upstream.Pool.Forward),
// screening and verification of a node's answers, second opinions on a
// batch's items, answer-size caps — and who served each call, for the
// books. It is the core's room behind the doors: no HTTP in it; the
// gateway's POST, WebSocket and MCP doors reach it through the core
// (caddymodule/core: core.Core.Serve), after the payers.
package relay

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/cache"
	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// Relay is one configuration's forwarding: the upstream settings and the
// answer checks every chain shares.
type Relay struct {
	Upstreams *config.Upstreams // upstream_max_batch, archive_window
	verifier  *verify.Verifier  // nil: no node answers are checked
	shadower  *trust.Shadower   // copies for nodes in probation
	logger    *zap.Logger
}

// New makes a Relay. verifier and shadower may be nil.
func New(upstreams *config.Upstreams, verifier *verify.Verifier, shadower *trust.Shadower, logger *zap.Logger) *Relay {
	return &Relay{Upstreams: upstreams, verifier: verifier, shadower: shadower, logger: logger}
}

// Chain is what the relay uses of one chain.
type Chain struct {
	chain     chains.Chain
	pool      *upstream.Pool
	cache     *cache.Cache
	methods   *evm.Table  // the method table with this chain's overrides
	head      *trust.Head // the providers' recent chain, for pins (caddymodule/trust)
	metrics   chainMetrics
	probation probation
}

// chainMetrics are the chain's edge-cache lookup counters.
type chainMetrics struct {
	cacheHits prometheus.Counter
	cacheMiss prometheus.Counter
}

// probation is the gateway's own probation bookkeeping of the chain.
type probation struct{ note func() }

// noteShadow counts a caller's call offered as shadow material.
func (p probation) noteShadow() {
	if p.note != nil {
		p.note()
	}
}

// NewChain makes a chain's Chain: hits and miss count edge-cache lookups,
// noteShadow (may be nil) is told of each call offered as shadow material.
func NewChain(c chains.Chain, pool *upstream.Pool, cache *cache.Cache, methods *evm.Table, head *trust.Head,
	hits, miss prometheus.Counter, noteShadow func()) *Chain {
	return &Chain{chain: c, pool: pool, cache: cache, methods: methods, head: head,
		metrics: chainMetrics{cacheHits: hits, cacheMiss: miss}, probation: probation{note: noteShadow}}
}

// Finalized is the head at or below which answers are treated as
// immutable: the pool's best head minus the chain's finality depth, or the
// finalized block its providers report when the chain's finality is its
// "finalized" tag (0 while unknown, which still lets genesis and
// hash-pinned lookups be cached). Two atomic reads.
func (cs *Chain) Finalized() uint64 {
	if cs.chain.Finality.Tag {
		return cs.pool.FinalizedHead()
	}
	head, depth := cs.pool.BestHead(), cs.chain.Finality.Depth
	if head <= depth {
		return 0
	}
	return head - depth
}

// finalized is Finalized, as the moved code calls it.
func (cs *Chain) finalized() uint64 { return cs.Finalized() }
