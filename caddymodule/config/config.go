// Package config is the tollgate directive's configuration: the JSON layout
// Caddy stores (Gateway, embedded in the handler), its Caddyfile form with
// one section per room — upstreams, metering, payments, intelligence — and
// every check that needs nothing but the configuration itself (Validate).
// Values that may be {env.*} placeholders (URLs, addresses, secrets) are
// kept as written and expanded by the handler at provision time, so a
// secret never lands in Caddy's config JSON or autosave.
package config

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
)

// Defaults of the configuration.
const (
	DefaultMaxBodyBytes = jsonrpc.DefaultMaxBodyBytes
	DefaultMaxBatch     = jsonrpc.DefaultMaxBatch
	// DefaultUpstreamMaxBatch is the largest batch sent to one upstream;
	// larger caller batches go out in sub-batches of this size (many
	// providers refuse batches over 100).
	DefaultUpstreamMaxBatch = 100
	DefaultRequestTimeout   = 15 * time.Second
	// DefaultBodyTimeout bounds how long a request body may take to arrive
	// on the handler's routes: a body trickled a byte at a time, or a
	// chunked body that never ends, would otherwise hold its connection and
	// goroutine for as long as the client likes.
	DefaultBodyTimeout     = 10 * time.Second
	DefaultRegistryRefresh = 5 * time.Second
	// DefaultFinalityDepth is how far below the best head the cache treats
	// blocks as final: a conservative default for all supported chains;
	// operators who know their chain's finality can lower it.
	DefaultFinalityDepth = 64
	DefaultKeyPrefix     = "tollgate:"

	DefaultIPConcurrency = 32
	DefaultMinDeposit    = "1"       // USDT; the dev vault's minDeposit
	DefaultMaxDeposit    = "1000000" // USDT; a typo guard, not a policy
	DefaultExplorerURL   = "https://polygonscan.com"
	DefaultHeatmapPrice  = "0.001" // USDT per heatmap call (1,000 units)
)

// Gateway is the tollgate handler's configuration.
type Gateway struct {
	// Chains and their configured upstream providers. Chains without
	// providers are still served when registered nodes serve them. The
	// built-in chains (shared/chains) are served without an entry; an entry
	// with a new id adds a chain.
	Chains []ChainConfig `json:"chains,omitempty"`
	// DefaultChain names the chain of plain /rpc (an id or a name; default
	// 137, or the chain whose entry says default).
	DefaultChain string `json:"default_chain,omitempty"`

	// RedisURL is the metering/registry Redis, usually the runtime
	// placeholder {env.REDIS_URL}. RedisCluster makes it a Cluster URL
	// (redis.ParseClusterURL); key_prefix must then carry a hash tag
	// (docs/decisions.md, "Metering").
	RedisURL     string `json:"redis_url,omitempty"`
	RedisCluster bool   `json:"redis_cluster,omitempty"`
	// KeyPrefix namespaces every Redis key this handler touches.
	KeyPrefix string `json:"key_prefix,omitempty"`
	// RedisShards spreads the metering keys of payers and addresses over
	// this many shards (balances.Layout; 0 or 1: one shard, every key under
	// key_prefix). It must equal settlementd's TOLLGATE_REDIS_SHARDS: both
	// check the count recorded in Redis at start (balances.CheckLayout).
	RedisShards int `json:"redis_shards,omitempty"`
	// RedisReplicaWait, when set, follows every metering script that books
	// money with WAIT 1 <it> (shared/meter failover.go): on a Redis with
	// replicas, the bound on what a master failover can lose. Unset: no WAIT.
	RedisReplicaWait caddy.Duration `json:"redis_replica_wait,omitempty"`
	// AdminToken gates /admin/* (X-Admin-Token); a placeholder like
	// {env.TOLLGATE_ADMIN_TOKEN}.
	AdminToken string `json:"admin_token,omitempty"`

	// Limits of one request.
	MaxBodyBytes   int64          `json:"max_body_bytes,omitempty"`
	MaxBatch       int            `json:"max_batch,omitempty"`
	RequestTimeout caddy.Duration `json:"request_timeout,omitempty"`
	// BodyTimeout bounds how long a request body may take to arrive on the
	// handler's routes (default 10 s): 408 after it.
	BodyTimeout caddy.Duration `json:"body_timeout,omitempty"`

	// The edge cache: its size per chain, and how far below the head a
	// block counts as final.
	CacheMaxBytes int64  `json:"cache_max_bytes,omitempty"`
	FinalityDepth uint64 `json:"finality_depth,omitempty"`

	// Dev is the dev profile (Caddyfile `dev on`; unset: the environment
	// variable TOLLGATE_DEV, 1/true/on). Only with it may a money setting
	// name a dev chain account or its contracts (whose keys are public,
	// on the real chain ids 137 and 8453), and a provider with an empty
	// URL is switched off rather than refused. Never in production.
	Dev *bool `json:"dev,omitempty"`

	Upstreams    Upstreams    `json:"upstreams,omitempty"`
	Metering     Metering     `json:"metering,omitempty"`
	Payments     Payments     `json:"payments,omitempty"`
	Intelligence Intelligence `json:"intelligence,omitempty"`
	WebSocket    WebSocket    `json:"websocket,omitempty"`
}

// Upstreams tunes every chain's upstream pool and how registered nodes are
// reached.
type Upstreams struct {
	Timeout         caddy.Duration `json:"timeout,omitempty"` // per attempt
	MaxAttempts     int            `json:"max_attempts,omitempty"`
	ProbeInterval   caddy.Duration `json:"probe_interval,omitempty"`
	LagThreshold    uint64         `json:"lag_threshold,omitempty"`
	BreakerFailures uint32         `json:"breaker_failures,omitempty"`
	BreakerOpenFor  caddy.Duration `json:"breaker_open_for,omitempty"`
	RegistryRefresh caddy.Duration `json:"registry_refresh,omitempty"`
	// MaxBatch is the largest batch sent to an upstream in one request
	// (default 100).
	MaxBatch int `json:"max_batch,omitempty"`
	// Registered nodes are strangers' endpoints: every address the gateway
	// dials for one must pass shared/netpolicy (public unicast only),
	// unless AllowPrivateNodes (development: loopback and private allowed)
	// or it is in NodeAllowCIDRs. NodeResolver (host:port of a DNS server)
	// resolves node host names instead of the system resolver.
	AllowPrivateNodes bool     `json:"allow_private_nodes,omitempty"`
	NodeAllowCIDRs    []string `json:"node_allow_cidrs,omitempty"`
	NodeResolver      string   `json:"node_resolver,omitempty"`
	// Verification of registered nodes' answers (caddymodule/verify): the
	// share of a node's requests checked against a configured provider
	// (0: the default, 5 %) and how many of its first requests are all
	// checked (nil: the default, 20); VerifyOff switches it off.
	// Since probation, VerifyRate is the floor the check rate
	// falls to with a node's verified history (it starts at 1), and
	// VerifyFirst is unused: probation checks every early answer.
	VerifyRate  float64 `json:"verify_rate,omitempty"`
	VerifyFirst *int64  `json:"verify_first,omitempty"`
	VerifyOff   bool    `json:"verify_off,omitempty"`
	// Probation (docs/trust.md): a new node serves no caller
	// until ProbationMatches of its shadow answers (default 50) over
	// ProbationMethods methods (default 3) matched a provider's; then its
	// share climbs the ladder (upstream.DefaultLadder). ProbationOff
	// trusts nodes at once (an operator running only their own nodes).
	ProbationMatches int          `json:"probation_matches,omitempty"`
	ProbationMethods int          `json:"probation_methods,omitempty"`
	ProbationOff     bool         `json:"probation_off,omitempty"`
	Ladder           []LadderRung `json:"ladder,omitempty"`
	// CheckDecay and CheckDecayTime: a node's check rate falls from 1 to
	// the floor (VerifyRate) linearly over this many verified matches after
	// probation and over this long, the higher of the two (0: the
	// defaults, upstream.DefaultCheckDecay and DefaultCheckDecayTime).
	CheckDecay     int            `json:"check_decay,omitempty"`
	CheckDecayTime caddy.Duration `json:"check_decay_time,omitempty"`
	// CheckQPS caps the provider calls the checks make, all check workers
	// of the gateway together, as a token bucket of CheckBurst (0: the
	// defaults, verify.DefaultProviderQPS, and one second's worth);
	// CheckQPSOff lifts the cap. Checks over it are dropped and counted
	// (dropped_cap), which lowers the node's traffic (upstream/checks.go).
	CheckQPS    float64 `json:"check_qps,omitempty"`
	CheckBurst  int     `json:"check_burst,omitempty"`
	CheckQPSOff bool    `json:"check_qps_off,omitempty"`
	// SendGrace: a transaction a node accepted must be known to a provider
	// this long after (default 30 s), or the node dropped it.
	SendGrace caddy.Duration `json:"send_grace,omitempty"`
	// Hedge is every chain's hedged reads (nil: the defaults).
	Hedge *HedgeConfig `json:"hedge,omitempty"`
	// ArchiveWindow is how many blocks of state a full node keeps (default
	// 128, geth's): reads of older state go to upstreams whose probe found
	// archive state.
	ArchiveWindow uint64 `json:"archive_window,omitempty"`
}

// LadderRung is a step of the trust ladder: with Matches verified answers
// after probation a node takes Share of the calls.
type LadderRung struct {
	Matches int64   `json:"matches"`
	Share   float64 `json:"share"`
	// After: the rung is reached no sooner than this after probation
	// ended (the ladder is earned over time as well as answers).
	After caddy.Duration `json:"after,omitempty"`
}

// Metering is on unless switched off explicitly: a missing
// Redis must never silently turn the gateway into a free one.
type Metering struct {
	Off bool `json:"off,omitempty"`
	// Free tier: calls per UTC day per IP (IPv6 /64), and per /24 (IPv6
	// /48). Nil means the default; 0 switches the free tier off.
	FreeDailyLimit  *int64 `json:"free_daily_limit,omitempty"`
	FreeSubnetLimit *int64 `json:"free_subnet_limit,omitempty"`
	// Abuse limits. A nil rate means the default, a zero Rate no limit.
	RateLimitIP    *RateConfig `json:"rate_limit_ip,omitempty"`
	RateLimitKey   *RateConfig `json:"rate_limit_key,omitempty"`
	KeyCreateLimit *RateConfig `json:"key_create_limit,omitempty"` // Rate creations per Per (an exact window; Burst unused)
	// IPConcurrency caps one IP's requests in flight on this instance; nil
	// means the default, 0 no cap.
	IPConcurrency *int `json:"ip_concurrency,omitempty"`
	// EventPack caps the revenue events the event writer packs into one
	// stream entry (shared/events pack.go); nil means the default (32), 1
	// one event per entry, as a settlementd from before packing reads.
	EventPack *int `json:"event_pack,omitempty"`
}

// Payments are deposits (chain 137), the x402 offer and the 402 answer.
// Addresses and URLs may be {env.*} placeholders.
type Payments struct {
	VaultAddress string `json:"vault_address,omitempty"`
	USDTAddress  string `json:"usdt_address,omitempty"`
	MinDeposit   string `json:"min_deposit,omitempty"` // USDT, decimal
	MaxDeposit   string `json:"max_deposit,omitempty"` // USDT, decimal
	ExplorerURL  string `json:"explorer_url,omitempty"`
	X402Asset    string `json:"x402_asset,omitempty"`  // USDC on Base
	X402PayTo    string `json:"x402_pay_to,omitempty"` // receiver of x402 payments on Base
	// X402ReceiverAuthorizer, when set, makes the 402 offer the x402
	// batch-settlement scheme beside exact: the address (its key is
	// settlementd's) that signs the channels' claim batches.
	X402ReceiverAuthorizer string `json:"x402_receiver_authorizer,omitempty"`
	// PublicURL is the gateway's external base URL for the absolute URLs
	// of the 402 answer; empty means the request's own scheme and host.
	PublicURL string `json:"public_url,omitempty"`
	// Facilitator is the x402 facilitator URL service.json advertises
	// (settlementd's /x402 by default: public_url + "/x402").
	Facilitator string `json:"facilitator_url,omitempty"`
	// SettlementdURL is settlementd's address as the gateway reaches it;
	// its /x402 settles payments when Facilitator is unset. The
	// facilitator is never derived from a request: a Host header naming
	// the caller's own "facilitator" would approve any payment.
	SettlementdURL string `json:"settlementd_url,omitempty"`
	// SettlementdSecret authenticates the gateway's calls to settlementd
	// (its TOLLGATE_GATEWAY_SECRET): refunds need it. Give it as a
	// placeholder ({env.TOLLGATE_GATEWAY_SECRET}), so the config (and the
	// admin API's copy of it) never holds the secret itself. It is sent to
	// SettlementdURL only, never to an external Facilitator.
	SettlementdSecret string `json:"settlementd_secret,omitempty"`
}

// Intelligence prices the paid metrics.
type Intelligence struct {
	// HeatmapPrice is the funding-rate heatmap's price per call in USDT
	// (decimal; default DefaultHeatmapPrice), debited from credits.
	HeatmapPrice string `json:"heatmap_price,omitempty"`
}

// RateConfig is a request-rate limit: Rate requests per Per, in bursts of
// up to Burst.
type RateConfig struct {
	Rate  int            `json:"rate"`
	Per   caddy.Duration `json:"per,omitempty"`
	Burst int            `json:"burst,omitempty"`
}

// ChainConfig is one served chain: what it is (chains.Spec: id, name,
// block time, finality, … — the fields settlementd's chains file uses
// too; for a built-in chain only the fields set change it) and how the
// gateway reaches it.
type ChainConfig struct {
	chains.Spec
	Providers []ProviderConfig `json:"providers,omitempty"`
	// Methods are this chain's changes to the method table
	// (caddymodule/evm): deny, allow, an eth_getLogs range, no replay.
	Methods []evm.Override `json:"methods,omitempty"`
	// Hedge overrides upstreams' hedge for this chain.
	Hedge *HedgeConfig `json:"hedge,omitempty"`
	// ProveBodies overrides whether nodes' block bodies (transactions,
	// receipts, a block's logs) on this chain are proved by their roots
	// before delivery; unset, the chain's family decides
	// (verify.BodiesProvableByDefault: Ethereum's chains yes; OP-stack,
	// Arbitrum, Polygon PoS and unknown chains are sampled).
	ProveBodies *bool `json:"prove_bodies,omitempty"`
}

// HedgeConfig is the hedged reads' setting: Off, or the share of reads
// that may be hedged (default 0.10) and the bounds of the delay (default
// 20 ms and 1 s around the first upstream's p90).
type HedgeConfig struct {
	Off      bool           `json:"off,omitempty"`
	MaxShare float64        `json:"max_share,omitempty"`
	Floor    caddy.Duration `json:"floor,omitempty"`
	Ceiling  caddy.Duration `json:"ceiling,omitempty"`
}

// ProviderConfig is one configured upstream provider. URL and header values
// may hold {env.*} placeholders, expanded at provision time.
type ProviderConfig struct {
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	// WS is the provider's JSON-RPC-over-WebSocket URL (ws:// or wss://),
	// where eth_subscribe goes; empty: the provider serves no
	// subscriptions. May be a placeholder; an empty expansion turns it off.
	WS string `json:"ws_url,omitempty"`
	// Optional: an empty URL after placeholder expansion switches the
	// provider off (with a warning) instead of failing provisioning.
	Optional bool `json:"optional,omitempty"`
}

// SetDefaults fills what the configuration left unset.
func (g *Gateway) SetDefaults() {
	if g.MaxBodyBytes <= 0 {
		g.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if g.MaxBatch <= 0 {
		g.MaxBatch = DefaultMaxBatch
	}
	if g.Upstreams.MaxBatch <= 0 {
		g.Upstreams.MaxBatch = DefaultUpstreamMaxBatch
	}
	if g.BodyTimeout <= 0 {
		g.BodyTimeout = caddy.Duration(DefaultBodyTimeout)
	}
	if g.RequestTimeout <= 0 {
		g.RequestTimeout = caddy.Duration(DefaultRequestTimeout)
	}
	if g.Upstreams.RegistryRefresh <= 0 {
		g.Upstreams.RegistryRefresh = caddy.Duration(DefaultRegistryRefresh)
	}
	if g.FinalityDepth == 0 {
		g.FinalityDepth = DefaultFinalityDepth
	}
	if g.KeyPrefix == "" {
		g.KeyPrefix = DefaultKeyPrefix
	}
}

// Validate checks everything the configuration can be checked on without
// expanding its placeholders (those values are checked when the handler
// provisions).
func (g *Gateway) Validate() error {
	if _, err := g.ChainTable(); err != nil {
		return err
	}
	for _, c := range g.Chains {
		if _, err := evm.NewTable(c.Methods); err != nil {
			return fmt.Errorf("tollgate: chain %d: %w", c.ID, err)
		}
		names := map[string]bool{}
		for _, p := range c.Providers {
			if p.Name == "" || p.URL == "" {
				return fmt.Errorf("tollgate: chain %d: provider needs a name and a url", c.ID)
			}
			if names[p.Name] {
				return fmt.Errorf("tollgate: chain %d: provider %q twice", c.ID, p.Name)
			}
			if p.WS != "" && !strings.Contains(p.WS, "{") && !strings.HasPrefix(p.WS, "ws://") && !strings.HasPrefix(p.WS, "wss://") {
				return fmt.Errorf("tollgate: chain %d: provider %q: ws must be a ws:// or wss:// URL", c.ID, p.Name)
			}
			names[p.Name] = true
		}
	}
	if g.MaxBatch > 10_000 {
		return fmt.Errorf("tollgate: max_batch %d is unreasonably large", g.MaxBatch)
	}
	u := g.Upstreams
	if u.MaxBatch > 10_000 {
		return fmt.Errorf("tollgate: upstreams max_batch %d is unreasonably large", u.MaxBatch)
	}
	if _, err := netpolicy.ParsePrefixes(u.NodeAllowCIDRs); err != nil {
		return fmt.Errorf("tollgate: upstreams node_allow_cidrs: %w", err)
	}
	if u.NodeResolver != "" {
		if _, _, err := net.SplitHostPort(u.NodeResolver); err != nil {
			return fmt.Errorf("tollgate: upstreams node_resolver %q: want host:port", u.NodeResolver)
		}
	}
	if u.VerifyRate < 0 || u.VerifyRate > 1 {
		return fmt.Errorf("tollgate: upstreams verify: rate %v is not a share between 0 and 1", u.VerifyRate)
	}
	m := g.Metering
	for name, r := range map[string]*RateConfig{"rate_limit_ip": m.RateLimitIP, "rate_limit_key": m.RateLimitKey, "key_create_limit": m.KeyCreateLimit} {
		if r != nil && (r.Rate < 0 || r.Burst < 0 || (r.Rate > 0 && time.Duration(r.Per) < time.Millisecond)) {
			return fmt.Errorf("tollgate: metering %s: want a positive rate per period of at least 1ms, or off", name)
		}
	}
	for name, p := range map[string]*int64{"free_daily_limit": m.FreeDailyLimit, "free_subnet_limit": m.FreeSubnetLimit} {
		if p != nil && (*p < 0 || *p > 1<<40) {
			return fmt.Errorf("tollgate: metering %s: want a non-negative integer, got %d", name, *p)
		}
	}
	if m.IPConcurrency != nil && *m.IPConcurrency < 0 {
		return fmt.Errorf("tollgate: metering ip_concurrency: want a positive integer or off")
	}
	if m.EventPack != nil && (*m.EventPack < 1 || *m.EventPack > events.MaxPack) {
		return fmt.Errorf("tollgate: metering event_pack: want 1 to %d or off, got %d", events.MaxPack, *m.EventPack)
	}
	p := g.Payments
	for name, v := range map[string]string{"min_deposit": p.MinDeposit, "max_deposit": p.MaxDeposit, "heatmap_price": g.Intelligence.HeatmapPrice} {
		if v == "" || isPlaceholder(v) {
			continue
		}
		if u, err := money.Parse(v); err != nil || u <= 0 {
			return fmt.Errorf("tollgate: %s %q must be a positive USDT amount", name, v)
		}
	}
	for name, v := range map[string]string{"public_url": p.PublicURL, "facilitator_url": p.Facilitator, "settlementd_url": p.SettlementdURL} {
		if v != "" && !isPlaceholder(v) && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fmt.Errorf("tollgate: payments %s %q must start with http:// or https://", name, v)
		}
	}
	return nil
}

// ChainTable is the table of served chains: the built-in ones with the
// configured chains added or changed. finality_depth is the built-in
// chains' finality where their chain block gives none. Its errors name the
// chain.
func (g *Gateway) ChainTable() (*chains.Table, error) {
	specs := make([]chains.Spec, 0, len(g.Chains)+5)
	described := map[uint64]bool{}
	for _, c := range g.Chains {
		specs = append(specs, c.Spec)
		described[c.ID] = true
	}
	depth := chains.FinalitySpec{Depth: g.FinalityDepth}
	for i := range specs {
		if g.FinalityDepth > 0 && chains.IsBuiltin(specs[i].ID) && specs[i].Finality == nil {
			specs[i].Finality = &depth
		}
	}
	for _, c := range chains.Builtin().All() {
		if g.FinalityDepth > 0 && !described[c.ID] {
			specs = append(specs, chains.Spec{ID: c.ID, Finality: &depth})
		}
	}
	t, err := chains.Build(specs, g.DefaultChain)
	if err != nil {
		return nil, fmt.Errorf("tollgate: %w", err)
	}
	return t, nil
}

// isPlaceholder reports whether v holds a placeholder expanded later.
func isPlaceholder(v string) bool { return strings.Contains(v, "{") }
