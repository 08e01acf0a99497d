package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Defaults for Config fields left zero.
const (
	DefaultProbeInterval       = 5 * time.Second
	DefaultProbeTimeout        = 3 * time.Second
	DefaultLagThreshold        = 5
	DefaultUnhealthyAfter      = 3
	DefaultHealthyAfter        = 2
	DefaultRateLimitBackoff    = 5 * time.Second
	DefaultMaxRateLimitBackoff = 60 * time.Second
	DefaultMaxAttempts         = 3
	DefaultAttemptTimeout      = 10 * time.Second
	DefaultMaxReplyBytes       = 64 << 20
	DefaultLatencySamples      = 1024
)

// Config describes a pool: the chain, its providers and every tunable.
// Zero fields take the defaults above (and those of BreakerConfig and
// TransportConfig).
type Config struct {
	// ChainID is the chain the pool serves; probes check eth_chainId
	// against it. Required.
	ChainID uint64
	// Providers are the configured fallback upstreams, fixed for the
	// pool's life. Kind may be left empty.
	Providers []Upstream

	// ProbeInterval is the health probe period (default 5 s). Negative
	// turns probing off: every upstream then counts as healthy and in
	// sync, and only breakers and back-offs steer selection.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe exchange (default 3 s).
	ProbeTimeout time.Duration
	// LagThreshold is how many blocks behind the pool's reference head an
	// upstream may be before it counts as lagging (default 5).
	LagThreshold uint64
	// UnhealthyAfter failed probes in a row make an upstream unhealthy
	// (default 3); HealthyAfter good probes in a row make it healthy
	// again (default 2).
	UnhealthyAfter int
	HealthyAfter   int

	Breaker   BreakerConfig
	Transport TransportConfig

	// RateLimitBackoff is how long an upstream that answered 429 or
	// -32005 is passed over (default 5 s). A Retry-After header, capped
	// at MaxRateLimitBackoff (default 60 s), takes precedence.
	RateLimitBackoff    time.Duration
	MaxRateLimitBackoff time.Duration

	// MaxAttempts is how many upstreams one Forward may try (default 3).
	MaxAttempts int
	// AttemptTimeout bounds one attempt (default 10 s); the caller's
	// context deadline bounds the whole Forward.
	AttemptTimeout time.Duration
	// MaxReplyBytes caps a reply body read into memory (default 64 MiB).
	MaxReplyBytes int64
	// LatencySamples is the size of each upstream's latency ring
	// (default 1024).
	LatencySamples int

	// Trust is the probation and ladder registered nodes climb (zero:
	// the defaults; Off: nodes trusted at once).
	Trust TrustConfig
	// Hedge tunes hedged reads (zero: the defaults; Off: none).
	Hedge HedgeConfig
	// FinalizedTag: the chain's finality is its "finalized" block tag
	// (shared/chains): the probe also asks providers for that block, and
	// FinalizedHead reports it.
	FinalizedTag bool

	// Classifier judges JSON-RPC error objects; nil means
	// DefaultClassifier. Not part of Key: a function cannot be compared,
	// and it is code, not configuration, so it is the same across reloads.
	Classifier ErrorClassifier
	// Logger receives state changes (breaker, health, membership). Nil
	// means no logging. Not part of Key.
	Logger *zap.Logger
}

func (c Config) withDefaults() Config {
	if c.ProbeInterval == 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.LagThreshold == 0 {
		c.LagThreshold = DefaultLagThreshold
	}
	if c.UnhealthyAfter <= 0 {
		c.UnhealthyAfter = DefaultUnhealthyAfter
	}
	if c.HealthyAfter <= 0 {
		c.HealthyAfter = DefaultHealthyAfter
	}
	c.Breaker = c.Breaker.withDefaults()
	c.Trust = c.Trust.withDefaults()
	c.Hedge = c.Hedge.withDefaults()
	c.Transport = c.Transport.withDefaults()
	if c.RateLimitBackoff <= 0 {
		c.RateLimitBackoff = DefaultRateLimitBackoff
	}
	if c.MaxRateLimitBackoff <= 0 {
		c.MaxRateLimitBackoff = DefaultMaxRateLimitBackoff
	}
	c.MaxRateLimitBackoff = max(c.MaxRateLimitBackoff, c.RateLimitBackoff)
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	if c.MaxReplyBytes <= 0 {
		c.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if c.LatencySamples <= 0 {
		c.LatencySamples = DefaultLatencySamples
	}
	if c.Classifier == nil {
		c.Classifier = DefaultClassifier
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// Key identifies the pool this config builds, for caddy.UsagePool: a reload
// with an equal key reuses the running pool (breakers, stats, connections and
// nodes survive); any change to the chain, the providers (URLs and headers
// included) or a setting gives a new key and so a new pool. Order of
// providers counts. The key is a hash, so credentials never appear in it.
func (c Config) Key() string {
	c = c.withDefaults()
	k := poolKey{
		ChainID: c.ChainID, ProbeInterval: c.ProbeInterval, ProbeTimeout: c.ProbeTimeout,
		LagThreshold: c.LagThreshold, UnhealthyAfter: c.UnhealthyAfter, HealthyAfter: c.HealthyAfter,
		Breaker: c.Breaker, Transport: c.Transport, RateLimitBackoff: c.RateLimitBackoff,
		MaxRateLimitBackoff: c.MaxRateLimitBackoff, AttemptTimeout: c.AttemptTimeout,
		MaxAttempts: c.MaxAttempts, LatencySamples: c.LatencySamples, MaxReplyBytes: c.MaxReplyBytes, Trust: c.Trust,
		Hedge: c.Hedge, FinalizedTag: c.FinalizedTag,
	}
	for _, p := range c.Providers {
		// Normalize so that spellings that build the same pool (empty
		// kind, header name case, weight 0) give the same key.
		if n, _, err := normalize(p, KindProvider, c.ChainID); err == nil {
			p = n
		}
		k.Providers = append(k.Providers, providerKey{p.Name, p.URL, p.Kind, p.NodeID, p.Headers, p.ChainID, p.Weight, p.WSURL})
	}
	b, err := json.Marshal(k) // plain data, map keys sorted
	if err != nil {
		panic("upstream: pool key: " + err.Error()) // a Config field JSON cannot encode: a programming error
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("upstream-pool/%d/%s", c.ChainID, hex.EncodeToString(sum[:16]))
}

// poolKey is what Key hashes: every data field of a Config with defaults
// applied. (Upstream's own MarshalJSON hides URL and headers, so providers
// are copied into providerKey, which has none.)
type poolKey struct {
	ChainID                                               uint64
	Providers                                             []providerKey
	ProbeInterval, ProbeTimeout                           time.Duration
	LagThreshold                                          uint64
	UnhealthyAfter, HealthyAfter                          int
	Breaker                                               BreakerConfig
	Transport                                             TransportConfig
	RateLimitBackoff, MaxRateLimitBackoff, AttemptTimeout time.Duration
	MaxAttempts, LatencySamples                           int
	MaxReplyBytes                                         int64
	Trust                                                 TrustConfig
	Hedge                                                 HedgeConfig
	FinalizedTag                                          bool
}

type providerKey struct {
	Name, URL string
	Kind      Kind
	NodeID    string
	Headers   map[string]string
	ChainID   uint64
	Weight    float64
	WSURL     string
}

// Pool is the set of upstreams of one chain. All methods are safe for
// concurrent use.
//
// A Pool outlives Caddy config reloads (the caller keeps it in a
// caddy.UsagePool under Config.Key), so its probe loop runs on a context of
// its own, not on a caddy.Context that a reload cancels; Destruct stops it.
type Pool struct {
	cfg Config
	key string
	log *zap.Logger

	mu      sync.Mutex                // serializes SetNodes
	members atomic.Pointer[[]*member] // copy-on-write: readers never lock
	refHead atomic.Uint64
	// finalHead is the highest "finalized" block the healthy providers
	// report (Config.FinalizedTag only).
	finalHead atomic.Uint64

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	kick    chan struct{}
	stopped atomic.Bool
	once    sync.Once

	quarantined quarantine
	standing    standings // per-wallet trust (trust.go)

	hedgeBudget hedgeBudget
	hedges      hedgeCounters
}

// New builds a pool from cfg and starts its probe loop.
func New(cfg Config) (*Pool, error) {
	if cfg.ChainID == 0 {
		return nil, errors.New("upstream: pool without chain id")
	}
	key := cfg.Key()
	cfg = cfg.withDefaults()
	p := &Pool{cfg: cfg, key: key, log: cfg.Logger.With(zap.Uint64("chain_id", cfg.ChainID)), kick: make(chan struct{}, 1)}
	var ms []*member
	seen := map[string]bool{}
	for _, u := range cfg.Providers {
		n, parsed, err := normalize(u, KindProvider, cfg.ChainID)
		if err != nil {
			return nil, fmt.Errorf("upstream: %w", err)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("upstream: duplicate upstream name %q", n.Name)
		}
		seen[n.Name] = true
		ms = append(ms, newMember(n, parsed, &p.cfg, p.onBreaker))
	}
	p.members.Store(&ms)
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if cfg.ProbeInterval > 0 {
		p.wg.Go(p.probeLoop)
	}
	return p, nil
}

// Key is the Config.Key the pool was built from.
func (p *Pool) Key() string { return p.key }

// ChainID is the chain the pool serves.
func (p *Pool) ChainID() uint64 { return p.cfg.ChainID }

func (p *Pool) list() []*member { return *p.members.Load() }

func (p *Pool) onBreaker(m *member, from, to BreakerState) {
	lvl := zap.InfoLevel
	if to == BreakerOpen {
		lvl = zap.WarnLevel
	}
	p.log.Log(lvl, "upstream breaker state changed", zap.Object("upstream", m.up),
		zap.String("from", string(from)), zap.String("to", string(to)))
}

// SetNodes replaces the registered nodes with nodes. Nodes that stay (same
// name, URL, headers and node id) keep their breaker, statistics and health;
// a changed weight is applied in place. Removed nodes stop getting new calls
// at once; calls in flight finish. New nodes are probed right away and
// until their first probe rank below probed upstreams. Providers are not
// touched.
//
// Invalid or duplicate entries are skipped and reported in the returned
// error; the valid ones are applied anyway, so one bad registry entry cannot
// freeze the node set.
func (p *Pool) SetNodes(nodes []Upstream) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.list()
	next := make([]*member, 0, len(old)+len(nodes))
	oldNodes := map[string]*member{}
	seen := map[string]bool{}
	for _, m := range old {
		if m.up.Kind == KindProvider {
			next = append(next, m)
			seen[m.up.Name] = true
		} else {
			oldNodes[m.up.Name] = m
		}
	}
	var errs []error
	added := false
	for _, u := range nodes {
		n, parsed, err := normalize(u, KindNode, p.cfg.ChainID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[n.Name] {
			errs = append(errs, fmt.Errorf("upstream %q: duplicate name", n.Name))
			continue
		}
		seen[n.Name] = true
		if m, ok := oldNodes[n.Name]; ok && m.sameEndpoint(n, parsed) {
			m.setWeight(n.Weight)
			next = append(next, m)
			delete(oldNodes, n.Name)
			continue
		}
		m := newMember(n, parsed, &p.cfg, p.onBreaker)
		if !p.cfg.Trust.Off {
			m.trust.Store(p.standingFor(operatorKey(n))) // the wallet's standing, shared by its nodes
		}
		next = append(next, m)
		added = true
		p.log.Info("upstream node added", zap.Object("upstream", n))
	}
	p.members.Store(&next)
	for _, m := range oldNodes {
		m.retired.Store(true)
	}
	p.countWalletNodes(next)
	for _, m := range oldNodes {
		m.tr.CloseIdleConnections()
		p.log.Info("upstream node removed", zap.Object("upstream", m.up))
	}
	if added {
		select {
		case p.kick <- struct{}{}:
		default: // a probe round is already due
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("upstream: some nodes were skipped: %w", errors.Join(errs...))
	}
	return nil
}

// Destruct stops the probe loop, waits for it to end and closes idle
// connections. It implements caddy.Destructor, for the caddy.UsagePool that
// keeps pools across reloads. Forward keeps working afterwards (without
// probes), so calls still in flight on an old config finish normally.
// Calling it again does nothing.
func (p *Pool) Destruct() error {
	p.once.Do(func() {
		p.stopped.Store(true)
		p.cancel()
		p.wg.Wait()
		for _, m := range p.list() {
			m.tr.CloseIdleConnections()
		}
	})
	return nil
}

// ErrUnknownUpstream is returned for a name no member of the pool has.
var ErrUnknownUpstream = errors.New("upstream: no such upstream")

// ResetBreaker closes the named upstream's circuit breaker at once, with its
// failure counts cleared: an operator's override after fixing an upstream,
// instead of waiting out the open timeout and a half-open trial. It returns
// the state the breaker was in. Health, back-off and statistics are left
// alone: the probe loop still decides whether the upstream is healthy.
func (p *Pool) ResetBreaker(name string) (BreakerState, error) {
	m := p.member(name)
	if m == nil {
		return "", fmt.Errorf("%w: %q", ErrUnknownUpstream, name)
	}
	prev := breakerState(m.br.Swap(m.newBreaker()).State())
	p.log.Info("upstream breaker reset by operator", zap.Object("upstream", m.up), zap.String("from", string(prev)))
	return prev, nil
}

// member is the pool's member named name (nil if none).
func (p *Pool) member(name string) *member {
	for _, m := range p.list() {
		if m.up.Name == name {
			return m
		}
	}
	return nil
}
