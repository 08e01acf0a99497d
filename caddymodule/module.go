// Package caddymodule is Tollgate's Caddy HTTP handler, http.handlers.tollgate:
// the metered JSON-RPC data path (/rpc, /rpc/{chain}) and its observability
// endpoints. Upstream pools, breakers and the Redis client live in
// caddy.UsagePools so a config reload keeps their state.
package caddymodule

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/accounts"
	"github.com/tollgate-rpc/tollgate/caddymodule/admin"
	"github.com/tollgate-rpc/tollgate/caddymodule/discovery"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults of the handler's limits.
const (
	DefaultMaxBodyBytes = jsonrpc.DefaultMaxBodyBytes
	DefaultMaxBatch     = jsonrpc.DefaultMaxBatch
	// DefaultUpstreamMaxBatch is the largest batch sent to one upstream;
	// larger caller batches go out in sub-batches of this size (many
	// providers refuse batches over 100).
	DefaultUpstreamMaxBatch = 100
	DefaultRequestTimeout   = 15 * time.Second
	DefaultRegistryRefresh  = 5 * time.Second
	// DefaultFinalityDepth is how far below the best head the cache treats
	// blocks as final: a conservative default for all supported chains;
	// operators who know their chain's finality can lower it.
	DefaultFinalityDepth = 64
)

// Handler is the tollgate HTTP handler.
type Handler struct {
	// Chains and their configured upstream providers. Chains without providers
	// are still served when registered nodes serve them.
	Chains []ChainConfig `json:"chains,omitempty"`

	// RedisURL is the metering/registry Redis, usually the runtime placeholder
	// {env.REDIS_URL}; it is expanded in Provision so the secret never lands in
	// Caddy's config JSON or autosave.
	RedisURL string `json:"redis_url,omitempty"`
	// KeyPrefix namespaces every Redis key this handler touches.
	KeyPrefix string `json:"key_prefix,omitempty"`
	// AdminToken gates /admin/* (X-Admin-Token); a placeholder like {env.TOLLGATE_ADMIN_TOKEN}.
	AdminToken string `json:"admin_token,omitempty"`

	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	MaxBatch     int   `json:"max_batch,omitempty"`
	// UpstreamMaxBatch is the largest batch sent to an upstream in one
	// request (default 100).
	UpstreamMaxBatch int            `json:"upstream_max_batch,omitempty"`
	RequestTimeout   caddy.Duration `json:"request_timeout,omitempty"`
	// BodyTimeout bounds how long a request body may take to arrive on the
	// handler's routes (default 10 s): 408 after it.
	BodyTimeout caddy.Duration `json:"body_timeout,omitempty"`

	// Registered nodes are strangers' endpoints: every address the gateway
	// dials for one must pass shared/netpolicy (public unicast only),
	// unless AllowPrivateNodes (development: loopback and private allowed)
	// or it is in NodeAllowCIDRs. NodeResolver (host:port of a DNS server)
	// resolves node host names instead of the system resolver.
	AllowPrivateNodes bool     `json:"allow_private_nodes,omitempty"`
	NodeAllowCIDRs    []string `json:"node_allow_cidrs,omitempty"`
	NodeResolver      string   `json:"node_resolver,omitempty"`

	// Upstream pool tuning, applied to every chain.
	UpstreamTimeout caddy.Duration `json:"upstream_timeout,omitempty"`
	MaxAttempts     int            `json:"max_attempts,omitempty"`
	ProbeInterval   caddy.Duration `json:"probe_interval,omitempty"`
	LagThreshold    uint64         `json:"lag_threshold,omitempty"`
	BreakerFailures uint32         `json:"breaker_failures,omitempty"`
	BreakerOpenFor  caddy.Duration `json:"breaker_open_for,omitempty"`
	RegistryRefresh caddy.Duration `json:"registry_refresh,omitempty"`
	CacheMaxBytes   int64          `json:"cache_max_bytes,omitempty"`
	FinalityDepth   uint64         `json:"finality_depth,omitempty"`

	// Metering (DESIGN §4) is on unless switched off explicitly: a missing
	// Redis must never silently turn the gateway into a free one.
	MeteringOff bool `json:"metering_off,omitempty"`
	// RedisCluster makes redis_url a Cluster URL (redis.ParseClusterURL);
	// key_prefix must then carry a hash tag (docs/decisions.md, "Metering").
	RedisCluster bool `json:"redis_cluster,omitempty"`
	// Free tier: calls per UTC day per IP (IPv6 /64), and per /24 (IPv6 /48).
	// Nil means the default; 0 switches the free tier off.
	FreeDailyLimit  *int64 `json:"free_daily_limit,omitempty"`
	FreeSubnetLimit *int64 `json:"free_subnet_limit,omitempty"`
	// Abuse limits. A nil rate means the default, a zero Rate no limit.
	RateLimitIP    *RateConfig `json:"rate_limit_ip,omitempty"`
	RateLimitKey   *RateConfig `json:"rate_limit_key,omitempty"`
	KeyCreateLimit *RateConfig `json:"key_create_limit,omitempty"` // Rate creations per Per (an exact window; Burst unused)
	// IPConcurrency caps one IP's requests in flight on this instance; nil
	// means the default, 0 no cap.
	IPConcurrency *int `json:"ip_concurrency,omitempty"`

	// Deposits (chain 137) and the 402 answer. Addresses may be {env.*}
	// placeholders.
	VaultAddress string `json:"vault_address,omitempty"`
	USDTAddress  string `json:"usdt_address,omitempty"`
	MinDeposit   string `json:"min_deposit,omitempty"` // USDT, decimal
	MaxDeposit   string `json:"max_deposit,omitempty"` // USDT, decimal
	ExplorerURL  string `json:"explorer_url,omitempty"`
	X402Asset    string `json:"x402_asset,omitempty"`  // USDC on Base
	X402PayTo    string `json:"x402_pay_to,omitempty"` // receiver of x402 payments on Base
	// PublicURL is the gateway's external base URL for the absolute URLs of
	// the 402 answer; empty means the request's own scheme and host.
	PublicURL string `json:"public_url,omitempty"`
	// X402Facilitator is the x402 facilitator URL service.json advertises
	// (settlementd's /x402 by default: public_url + "/x402").
	X402Facilitator string `json:"x402_facilitator_url,omitempty"`
	// SettlementdURL is settlementd's address as the gateway reaches it;
	// its /x402 settles payments when X402Facilitator is unset. The
	// facilitator is never derived from a request: a Host header naming the
	// caller's own "facilitator" would approve any payment.
	SettlementdURL string `json:"settlementd_url,omitempty"`
	// HeatmapPrice is the funding-rate heatmap's price per call in USDT
	// (decimal; default DefaultHeatmapPrice), debited from credits.
	HeatmapPrice string `json:"heatmap_price,omitempty"`

	logger   *zap.Logger
	redisURL string
	chains   map[uint64]*chainState
	// nodePolicy is the address policy of node dials (built in Provision).
	nodePolicy netpolicy.Policy
	redis      redis.UniversalClient
	redisKey   string
	poolKeys   []string
	cacheKeys  []string
	stopReg    func()

	meter     *meter.Meter
	writer    *meter.EventWriter
	writerKey string
	conc      *concurrency
	admin     *admin.Handler
	pay       payment.Settings
	payers    *payment.Handler
	accounts  *accounts.Handler
	discovery *discovery.Handler
	intel     intelConfig
}

// RateConfig is a request-rate limit: Rate requests per Per, in bursts of
// up to Burst.
type RateConfig struct {
	Rate  int            `json:"rate"`
	Per   caddy.Duration `json:"per,omitempty"`
	Burst int            `json:"burst,omitempty"`
}

// ChainConfig is one served chain.
type ChainConfig struct {
	ID        uint64           `json:"id"`
	Providers []ProviderConfig `json:"providers,omitempty"`
}

// ProviderConfig is one configured upstream provider. URL and header values
// may hold {env.*} placeholders, expanded at provision time.
type ProviderConfig struct {
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.tollgate",
		New: func() caddy.Module { return new(Handler) },
	}
}

func (h *Handler) setDefaults() {
	if h.MaxBodyBytes <= 0 {
		h.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.MaxBatch <= 0 {
		h.MaxBatch = DefaultMaxBatch
	}
	if h.UpstreamMaxBatch <= 0 {
		h.UpstreamMaxBatch = DefaultUpstreamMaxBatch
	}
	if h.BodyTimeout <= 0 {
		h.BodyTimeout = caddy.Duration(DefaultBodyTimeout)
	}
	if h.RequestTimeout <= 0 {
		h.RequestTimeout = caddy.Duration(DefaultRequestTimeout)
	}
	if h.RegistryRefresh <= 0 {
		h.RegistryRefresh = caddy.Duration(DefaultRegistryRefresh)
	}
	if h.FinalityDepth == 0 {
		h.FinalityDepth = DefaultFinalityDepth
	}
	if h.KeyPrefix == "" {
		h.KeyPrefix = "tollgate:"
	}
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	seen := map[uint64]bool{}
	for _, c := range h.Chains {
		if _, ok := chains.ByID(c.ID); !ok {
			return fmt.Errorf("tollgate: chain %d is not supported", c.ID)
		}
		if seen[c.ID] {
			return fmt.Errorf("tollgate: chain %d configured twice", c.ID)
		}
		seen[c.ID] = true
		names := map[string]bool{}
		for _, p := range c.Providers {
			if p.Name == "" || p.URL == "" {
				return fmt.Errorf("tollgate: chain %d: provider needs a name and a url", c.ID)
			}
			if names[p.Name] {
				return fmt.Errorf("tollgate: chain %d: provider %q twice", c.ID, p.Name)
			}
			names[p.Name] = true
		}
	}
	if h.MaxBatch > 10_000 {
		return fmt.Errorf("tollgate: max_batch %d is unreasonably large", h.MaxBatch)
	}
	if _, err := netpolicy.ParsePrefixes(h.NodeAllowCIDRs); err != nil {
		return fmt.Errorf("tollgate: node_allow_cidrs: %w", err)
	}
	if h.NodeResolver != "" {
		if _, _, err := net.SplitHostPort(h.NodeResolver); err != nil {
			return fmt.Errorf("tollgate: node_resolver %q: want host:port", h.NodeResolver)
		}
	}
	if h.UpstreamMaxBatch > 10_000 {
		return fmt.Errorf("tollgate: upstream_max_batch %d is unreasonably large", h.UpstreamMaxBatch)
	}
	return nil
}

// poolConfig builds the upstream pool configuration of one chain, with
// placeholders expanded.
func (h *Handler) poolConfig(c ChainConfig, repl *caddy.Replacer) upstream.Config {
	cfg := upstream.Config{
		ChainID:        c.ID,
		ProbeInterval:  time.Duration(h.ProbeInterval),
		LagThreshold:   h.LagThreshold,
		MaxAttempts:    h.MaxAttempts,
		AttemptTimeout: time.Duration(h.UpstreamTimeout),
		Breaker: upstream.BreakerConfig{
			FailuresToOpen: h.BreakerFailures,
			OpenTimeout:    time.Duration(h.BreakerOpenFor),
		},
		Logger: h.logger.Named("upstream"),
	}
	cfg.Transport.NodeAddress = h.nodePolicy.Check
	cfg.Transport.NodePolicy = fmt.Sprintf("private=%v allow=%v resolver=%q", h.AllowPrivateNodes, h.NodeAllowCIDRs, h.NodeResolver)
	if h.NodeResolver != "" {
		addr := h.NodeResolver
		cfg.Transport.NodeResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	for _, p := range c.Providers {
		u := upstream.Upstream{Name: p.Name, URL: repl.ReplaceAll(p.URL, ""), Kind: upstream.KindProvider}
		if u.URL == "" {
			// An unset {env.*} URL switches a provider off instead of failing
			// the whole config: one Caddyfile serves dev and production.
			h.logger.Warn("provider URL is empty after placeholder expansion; provider disabled",
				zap.Uint64("chain_id", c.ID), zap.String("provider", p.Name))
			continue
		}
		if len(p.Headers) > 0 {
			u.Headers = make(map[string]string, len(p.Headers))
			for k, v := range p.Headers {
				u.Headers[k] = repl.ReplaceAll(v, "")
			}
		}
		cfg.Providers = append(cfg.Providers, u)
	}
	return cfg
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
