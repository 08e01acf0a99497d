package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/admin"
	"github.com/tollgate-rpc/tollgate/caddymodule/cache"
	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/discovery"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/health"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/mcp"
	"github.com/tollgate-rpc/tollgate/caddymodule/relay"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/httpx"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
)

// Shared state that must outlive one config load: a reload provisions the new
// handler before cleaning up the old one, so the reference count never drops
// to zero and breakers, health, caches and Redis connections carry over.
var (
	pools   = caddy.NewUsagePool()
	redises = caddy.NewUsagePool()
	caches  = caddy.NewUsagePool()
)

// chainState is what the handler uses for one chain.
type chainState struct {
	chain   chains.Chain
	pool    *upstream.Pool
	cache   *cache.Cache
	methods *evm.Table  // the method table with this chain's overrides
	head    *trust.Head // the providers' recent chain, for pins (caddymodule/trust)
	// core is the chain as the core (caddymodule/core) serves it.
	core *core.Chain
	// probation: the gateway's own probation questions (trust.Probation).
	probation *trust.Probation
	// relay is the chain as the forward chain (caddymodule/relay) uses it.
	relay *relay.Chain
}

// finalized is the head at or below which answers are treated as immutable:
// the pool's best head minus the chain's finality depth, or the finalized
// block its providers report when the chain's finality is its "finalized"
// tag (0 while unknown, which still lets genesis and hash-pinned lookups be
// cached). Two atomic reads.
func (cs *chainState) finalized() uint64 { return cs.relay.Finalized() }

// headInterval is how often the providers' head is read for pins: at most
// a second (a pin is that much behind the newest block at worst), faster
// when probes are.
func headInterval(probe time.Duration) time.Duration {
	if probe <= 0 || probe > time.Second {
		return time.Second
	}
	return probe
}

type cacheHandle struct{ *cache.Cache }

func (c cacheHandle) Destruct() error { c.Purge(); return nil }

// redisHandle is a pooled Redis client and the client the meter runs its
// scripts on (scriptClient), shared by every config using the same Redis
// so that their requests' metering calls and events share round trips.
type redisHandle struct {
	redis.UniversalClient
	scripts redis.UniversalClient
}

func (r redisHandle) Destruct() error { return r.Close() }

// Provision sets the handler up.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	h.SetDefaults()
	h.dev = devProfile(h.Dev)
	h.ready = &health.Readiness{}
	h.devLeak = &sync.Once{}
	if h.dev {
		h.logger.Warn("the dev profile is on (dev on / TOLLGATE_DEV): dev chain accounts, whose keys are public, are accepted as money addresses, " +
			"and only requests on this machine's loopback are served; never in production")
	}
	allow, err := netpolicy.ParsePrefixes(h.Upstreams.NodeAllowCIDRs)
	if err != nil {
		return fmt.Errorf("tollgate: node_allow_cidrs: %w", err)
	}
	h.nodePolicy = netpolicy.Policy{AllowPrivate: h.Upstreams.AllowPrivateNodes, Allow: allow}
	if h.Upstreams.AllowPrivateNodes {
		h.logger.Warn("allow_private_nodes is on: registered nodes may point at loopback and private addresses (development only)")
	}
	if err := h.registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("tollgate: metrics: %w", err)
	}
	repl := caddy.NewReplacer()
	h.redisURL = repl.ReplaceAll(h.RedisURL, "")
	adminTok := repl.ReplaceAll(h.AdminToken, "")
	if adminTok != "" && len(adminTok) < 16 {
		// Not fatal (a dev setup may use a short one), but worth saying:
		// the token is all that guards balance changes.
		h.logger.Warn("admin_token is shorter than 16 characters; use a long random token")
	}

	// This config's chain table: requests in flight keep the old handler's.
	table, err := h.ChainTable()
	if err != nil {
		return err
	}
	h.table = table
	configured := map[uint64]config.ChainConfig{}
	for _, c := range h.Chains {
		configured[c.ID] = c
	}
	h.chains = map[uint64]*chainState{}
	// Every served chain gets a pool, so registered nodes can serve a chain
	// the operator configured no provider for.
	for _, c := range table.All() {
		cc, ok := configured[c.ID]
		if !ok {
			cc = config.ChainConfig{Spec: chains.Spec{ID: c.ID}}
		}
		cfg, err := h.poolConfig(cc, repl)
		if err != nil {
			return err
		}
		cfg.FinalizedTag = c.Finality.Tag
		key := cfg.Key()
		v, _, err := pools.LoadOrNew(key, func() (caddy.Destructor, error) { return upstream.New(cfg) })
		if err != nil {
			return fmt.Errorf("tollgate: chain %d upstreams: %w", c.ID, err)
		}
		h.poolKeys = append(h.poolKeys, key)
		ckey := fmt.Sprintf("cache/%d/%d", c.ID, h.CacheMaxBytes)
		cv, _, err := caches.LoadOrNew(ckey, func() (caddy.Destructor, error) {
			return cacheHandle{cache.New(c.ID, cache.Config{MaxBytes: h.CacheMaxBytes})}, nil
		})
		if err != nil {
			return err
		}
		h.cacheKeys = append(h.cacheKeys, ckey)
		methods, err := evm.NewTable(cc.Methods)
		if err != nil {
			return fmt.Errorf("tollgate: chain %d: %w", c.ID, err)
		}
		pool := v.(*upstream.Pool)
		cs := &chainState{chain: c, pool: pool, cache: cv.(cacheHandle).Cache, methods: methods,
			head: trust.NewHead(pool, headInterval(time.Duration(h.Upstreams.ProbeInterval)), h.logger.Named("trust"))}
		m := core.NewMetrics(c.ID)
		cs.probation = trust.NewProbation(c, pool, methods, cs.head, func() uint64 { return cs.relay.Finalized() })
		cs.relay = relay.NewChain(c, pool, cs.cache, methods, cs.head, m.CacheHits, m.CacheMiss, cs.probation.NoteShadow)
		cs.core = &core.Chain{ID: c.ID, Methods: methods, Pool: pool, Relay: cs.relay, Metrics: m}
		h.chains[c.ID] = cs
	}
	// The heads run for this config's life; they poll only while their
	// chain has nodes.
	hctx, stopHeads := context.WithCancel(context.Background())
	h.stopHeads = stopHeads
	for _, cs := range h.chains {
		go cs.head.Run(hctx)
	}

	if h.redisURL != "" {
		client, err := redisOptions(h.redisURL, h.RedisCluster)
		if err != nil {
			// The error text of ParseURL may echo the URL; keep the password out of logs.
			return fmt.Errorf("tollgate: redis_url is not a valid redis:// URL")
		}
		sum := sha256.Sum256([]byte(fmt.Sprint(h.RedisCluster, h.redisURL)))
		h.redisKey = "redis/" + hex.EncodeToString(sum[:8])
		v, loaded, err := redises.LoadOrNew(h.redisKey, func() (caddy.Destructor, error) {
			return redisHandle{client, scriptClient(client)}, nil // lazy: no dial in Provision
		})
		if loaded {
			_ = client.Close() // the pooled client of an earlier config is the one in use
		}
		if err != nil {
			return err
		}
		h.redis = v.(redisHandle).UniversalClient
		h.scripts = v.(redisHandle).scripts
		rctx, cancel := context.WithCancel(ctx)
		h.stopReg = cancel
		h.trustSync = trust.NewSync(h.redis, h.KeyPrefix, h.logger)
		go h.refreshRegistry(rctx)
	}
	if err := h.provisionMetering(repl); err != nil {
		return err
	}
	if err := h.provisionIntel(repl); err != nil {
		return err
	}
	documented := make([]web.Route, len(routes))
	for i, rt := range routes {
		documented[i] = rt.Route
	}
	h.discovery = discovery.New(discovery.Config{Chains: table, Meter: h.meter, Writer: h.writer, Redis: h.redis, KeyPrefix: h.KeyPrefix,
		Pay: &h.pay, Payers: h.payers, Accounts: h.accounts, HeatmapPrice: h.intel.heatmapPrice, Routes: documented,
		Metered: func(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request) error) error {
			return h.meteredEntry(w, r, false, fn)
		}, Log: h.logger, WebSocket: h.socketOffer})
	subPools := map[uint64]*upstream.Pool{}
	for id, cs := range h.chains {
		subPools[id] = cs.pool
	}
	h.hub = subscribe.New(subscribe.Config{Pools: subPools, Chains: table, Logger: h.logger.Named("subscribe")})
	views := map[uint64]health.Chain{}
	for id, cs := range h.chains {
		views[id] = health.Chain{Pool: cs.pool, Cache: cs.cache, WS: func() map[string]subscribe.UpstreamState { return h.hub.Upstreams(id) }}
	}
	adminToken := httpx.NewAdminToken(adminTok)
	h.health = health.New(table, views, func(r *http.Request) bool { return adminToken.Match(r.Header.Get("X-Admin-Token")) })
	h.mcp = mcp.New(mcpBackend{h}, moduleVersion(), h.logger.Named("mcp"))
	if !h.Upstreams.VerifyOff {
		vc := verify.Config{Rate: h.Upstreams.VerifyRate, FirstAnswers: verify.DefaultFirstAnswers, Log: h.logger.Named("verify"),
			SendGrace: time.Duration(h.Upstreams.SendGrace), ProviderQPS: h.Upstreams.CheckQPS, ProviderBurst: h.Upstreams.CheckBurst}
		if h.Upstreams.CheckQPSOff {
			vc.ProviderQPS = -1
		}
		if h.Upstreams.VerifyFirst != nil {
			vc.FirstAnswers = *h.Upstreams.VerifyFirst
		}
		vc.ProveBodies = map[uint64]bool{}
		for _, c := range h.Chains {
			if c.ProveBodies == nil {
				continue
			}
			vc.ProveBodies[c.ID] = *c.ProveBodies
			if family := verify.KnownForeignBodies(c.ID); *c.ProveBodies && family != "" {
				// Allowed (a local dev chain may reuse such a chain id),
				// but an honest node of the real chain would be convicted.
				h.logger.Warn("prove_bodies on for a chain whose transactions go-ethereum does not decode: only for a chain of Ethereum's transaction types under this id",
					zap.Uint64("chain_id", c.ID), zap.String("family", family))
			}
		}
		if h.writer != nil {
			w := h.writer
			vc.Emit = func(ev *events.NodeMismatch) bool { return w.Enqueue(ev) }
		}
		h.verifier = verify.New(vc)
		h.shadower = trust.NewShadower(h.verifier, h.logger.Named("trust"))
		if h.redis != nil { // nodes come only from the registry
			pctx, stop := context.WithCancel(ctx)
			h.stopProbation = stop
			var ps []*trust.Probation
			for _, cs := range h.chains {
				ps = append(ps, cs.probation)
			}
			go trust.FeedProbation(pctx, h.shadower, ps)
		}
	}
	// The forward chain behind the doors (caddymodule/relay), with the
	// answer checks built above.
	h.relay = relay.New(&h.Upstreams, h.verifier, h.shadower, h.logger)
	h.core = &core.Core{Payers: h.payers, Relay: h.relay, Timeout: time.Duration(h.RequestTimeout), Conc: h.conc}
	h.post = &httprpc.Door{Core: h.core, MaxBody: h.MaxBodyBytes, MaxBatch: h.MaxBatch, BodyTimeout: time.Duration(h.BodyTimeout)}
	pools := map[uint64]*upstream.Pool{}
	for id, cs := range h.chains {
		pools[id] = cs.pool
	}
	h.provisionSockets(ctx)
	h.admin = admin.New(admin.Config{Chains: table, Token: adminTok, Meter: h.meter, Pools: pools,
		RequestTimeout: time.Duration(h.RequestTimeout), Log: h.logger})
	h.logger.Info("tollgate provisioned",
		zap.Int("chains", len(h.chains)),
		zap.Uint64("default_chain", table.Default().ID),
		zap.Bool("redis", h.redis != nil),
		zap.String("version", moduleVersion()),
		zap.Bool("dev", h.dev),
		zap.Duration("request_timeout", time.Duration(h.RequestTimeout)))
	return nil
}

// Cleanup releases this config's references to the shared state.
func (h *Handler) Cleanup() error {
	h.closeSockets() // before the pools, payers and Redis they use
	if h.stopReg != nil {
		h.stopReg()
	}
	if h.stopHeads != nil {
		h.stopHeads()
	}
	if h.stopProbation != nil {
		h.stopProbation()
	}
	if h.shadower != nil {
		h.shadower.Close() // before the verifier its convictions go through
	}
	if h.verifier != nil {
		h.verifier.Close()
	}
	if h.hub != nil {
		h.hub.Close() // before the pools it dials through are released
	}
	for _, k := range h.poolKeys {
		_, _ = pools.Delete(k)
	}
	for _, k := range h.cacheKeys {
		_, _ = caches.Delete(k)
	}
	// The writer goes before the client it writes with.
	if h.writerKey != "" {
		_, _ = writers.Delete(h.writerKey)
	}
	if h.redisKey != "" {
		_, _ = redises.Delete(h.redisKey)
	}
	return nil
}

// devProfile is the Caddyfile's `dev` if written, else TOLLGATE_DEV from the
// process environment (1, true or on): one switch, also settlementd's.
func devProfile(set *bool) bool {
	if set != nil {
		return *set
	}
	switch strings.ToLower(strings.TrimSpace(os.Getenv("TOLLGATE_DEV"))) {
	case "1", "true", "on":
		return true
	}
	return false
}

// refreshRegistry keeps every pool's node set equal to the registry that
// settlementd maintains in Redis and exchanges trust state with the other
// gateways (trust.Sync). It runs off the request path: a request never
// waits for the registry.
func (h *Handler) refreshRegistry(ctx context.Context) {
	t := time.NewTicker(time.Duration(h.Upstreams.RegistryRefresh))
	defer t.Stop()
	for {
		pools := make([]*upstream.Pool, 0, len(h.chains))
		for _, cs := range h.chains {
			pools = append(pools, cs.pool)
		}
		h.trustSync.Nodes(ctx, pools)
		h.trustSync.Run(ctx, pools)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
