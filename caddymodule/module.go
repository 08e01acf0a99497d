// Package caddymodule is Tollgate's Caddy HTTP handler, http.handlers.tollgate:
// the metered JSON-RPC data path (/rpc, /rpc/{chain}) and its observability
// endpoints. Upstream pools, breakers and the Redis client live in
// caddy.UsagePools so a config reload keeps their state.
package caddymodule

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/accounts"
	"github.com/tollgate-rpc/tollgate/caddymodule/admin"
	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/discovery"
	"github.com/tollgate-rpc/tollgate/caddymodule/health"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/mcp"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/relay"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler is the tollgate HTTP handler.
type Handler struct {
	// The configuration as Caddy stores it (JSON) and the Caddyfile writes
	// it (caddymodule/config).
	config.Gateway

	logger   *zap.Logger
	redisURL string
	// dev is the dev profile in force (config.Gateway.Dev, else TOLLGATE_DEV).
	dev bool
	// devLeak logs, once, that the dev profile refused a request from off
	// the loopback (serve.go).
	devLeak *sync.Once
	// ready caches /readyz's Redis PING (health.Readiness).
	ready *health.Readiness
	// table is this config's chain table (shared/chains: the built-in
	// chains plus the configured ones); chains holds a state per entry.
	table  *chains.Table
	chains map[uint64]*chainState
	// nodePolicy is the address policy of node dials (built in Provision).
	nodePolicy netpolicy.Policy
	redis      redis.UniversalClient
	redisKey   string
	scripts    redis.UniversalClient // h.redis, auto-pipelined on a standalone Redis (scriptClient)
	poolKeys   []string
	cacheKeys  []string
	stopReg    func()
	// stopProbation ends the gateway's own probation rounds (trust.FeedProbation).
	stopProbation func()
	// trustSync shares trust state through Redis (trust.Sync; the
	// registry goroutine's own).
	trustSync *trust.Sync

	meter     *meter.Meter
	writer    *meter.EventWriter
	writerKey string
	retained  *retained // the money facts kept for replay (shared with the writer's lifetime)
	conc      *core.Concurrency
	admin     *admin.Handler
	pay       payment.Settings
	payers    *payment.Handler
	accounts  *accounts.Handler
	discovery *discovery.Handler
	relay     *relay.Relay  // the forward chain behind the core (caddymodule/relay)
	core      *core.Core    // what the doors hand their requests to (caddymodule/core)
	post      *httprpc.Door // the POST door of /rpc (caddymodule/httprpc)
	verifier  *verify.Verifier
	shadower  *trust.Shadower // copies for nodes in probation
	stopHeads func()
	health    *health.Handler
	// hub holds the upstream eth_subscribe subscriptions of this config
	// (caddymodule/subscribe); Cleanup closes it, ending every subscriber.
	hub     *subscribe.Hub
	intel   intelConfig
	sockets *wsrpc.Server // JSON-RPC over WebSocket (socket.go)
	// listenerClosed is closed by the server's on-shutdown hook: its
	// listener is closed, so sockets told to reconnect reach the next
	// configuration (socket.go).
	listenerClosed chan struct{}
	mcp            *mcp.Server // the MCP server at /mcp (caddymodule/mcp)
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.tollgate",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Validate checks the configuration (config.Gateway.Validate).
func (h *Handler) Validate() error { return h.Gateway.Validate() }

// poolConfig builds the upstream pool configuration of one chain, with
// placeholders expanded.
func (h *Handler) poolConfig(c config.ChainConfig, repl *caddy.Replacer) (upstream.Config, error) {
	cfg := upstream.Config{
		ChainID:        c.ID,
		ProbeInterval:  time.Duration(h.Upstreams.ProbeInterval),
		LagThreshold:   h.Upstreams.LagThreshold,
		MaxAttempts:    h.Upstreams.MaxAttempts,
		AttemptTimeout: time.Duration(h.Upstreams.Timeout),
		Breaker: upstream.BreakerConfig{
			FailuresToOpen: h.Upstreams.BreakerFailures,
			OpenTimeout:    time.Duration(h.Upstreams.BreakerOpenFor),
		},
		Logger: h.logger.Named("upstream"),
		Trust: upstream.TrustConfig{Off: h.Upstreams.ProbationOff || h.Upstreams.VerifyOff,
			ProbationMatches: h.Upstreams.ProbationMatches, ProbationMethods: h.Upstreams.ProbationMethods,
			CheckFloor: h.Upstreams.VerifyRate, CheckDecay: h.Upstreams.CheckDecay, CheckDecayTime: time.Duration(h.Upstreams.CheckDecayTime)},
	}
	hedge := h.Upstreams.Hedge
	if c.Hedge != nil {
		hedge = c.Hedge
	}
	if hedge != nil {
		cfg.Hedge = upstream.HedgeConfig{Off: hedge.Off, MaxShare: hedge.MaxShare, Floor: time.Duration(hedge.Floor), Ceiling: time.Duration(hedge.Ceiling)}
	}
	for _, r := range h.Upstreams.Ladder {
		cfg.Trust.Ladder = append(cfg.Trust.Ladder, upstream.TrustStep{Matches: r.Matches, Share: r.Share, After: time.Duration(r.After)})
	}
	cfg.Transport.NodeAddress = h.nodePolicy.Check
	cfg.Transport.NodePolicy = fmt.Sprintf("private=%v allow=%v resolver=%q", h.Upstreams.AllowPrivateNodes, h.Upstreams.NodeAllowCIDRs, h.Upstreams.NodeResolver)
	if h.Upstreams.NodeResolver != "" {
		addr := h.Upstreams.NodeResolver
		cfg.Transport.NodeResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	for _, p := range c.Providers {
		u := upstream.Upstream{Name: p.Name, URL: repl.ReplaceAll(p.URL, ""), Kind: upstream.KindProvider, WSURL: repl.ReplaceAll(p.WS, "")}
		if u.URL == "" {
			// An unset {env.*} URL is a mistake in production (the chain
			// would answer 503 to every call): refused, unless the provider
			// is marked optional or the dev profile is on, where it is
			// switched off with a warning.
			if !p.Optional && !h.dev {
				return cfg, fmt.Errorf("tollgate: chain %d: provider %s: url %q is empty after placeholder expansion "+
					"(set it, or mark the provider optional); {env.*} values are read when the process starts, so a restart picks up a new one",
					c.ID, p.Name, p.URL)
			}
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
	return cfg, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
