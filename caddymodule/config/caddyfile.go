package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// UnmarshalCaddyfile reads the tollgate directive:
//
//	tollgate {
//	    redis_url        {env.REDIS_URL}            # runtime placeholder: never stored expanded
//	    redis_cluster                               # redis_url is a Cluster URL; key_prefix then needs a {hash tag}
//	    key_prefix       tollgate:
//	    redis_replica_wait 20ms                     # WAIT 1 after each paying script (cluster with replicas); unset: none
//	    redis_shards     12                         # payers spread over 12 shards (default 1 = one slot); = settlementd's TOLLGATE_REDIS_SHARDS
//	    admin_token      {env.TOLLGATE_ADMIN_TOKEN}
//	    max_body         1MiB
//	    max_batch        1000
//	    request_timeout  15s
//	    body_timeout     10s
//	    cache_size       64MiB
//	    finality_depth   64                         # blocks below head treated as final by the cache (built-in chains without their own finality)
//	    dev              off                        # the dev profile (unset: TOLLGATE_DEV); never in production (docs/operators.md)
//
//	    upstreams {
//	        timeout          10s                    # per attempt
//	        max_attempts     3
//	        max_batch        100                    # the largest batch sent to one upstream
//	        probe_interval   5s
//	        lag_threshold    5                      # blocks behind the pool's best head
//	        breaker_failures 5                      # consecutive failures that open a breaker
//	        breaker_open_for 30s
//	        registry_refresh 5s
//	        allow_private_nodes off                 # development only: nodes on loopback/private addresses
//	        node_allow_cidrs 10.1.0.0/16            # private ranges nodes may use anyway
//	        node_resolver    127.0.0.1:53           # DNS server for node host names
//	        verify           0.05                   # the floor of the check rate after probation (it starts at 1); or off
//	        probation        50 3                   # matching shadow answers (over methods) before a node serves callers; or off
//	        ladder           0:0.1 200:0.25:10m 500:0.5:1h 1000:1:6h # verified matches after probation : share of calls [: time since probation]
//	        check_decay      2000 6h                # verified matches after probation, and time, over which the check rate falls from 1 to the verify floor
//	        check_qps        500 500                # the checks' provider calls per second, all workers together, and burst; or off
//	        send_grace       30s                    # a send a node accepted must be known to a provider by then
//	        hedge            0.1 20ms 1s            # hedged reads: share of reads, delay floor and ceiling; or off
//	        archive_window   128                    # blocks of state a full node keeps; older reads go to archive upstreams
//	    }
//	    metering [on|off] {                         # off: an open gateway, no Redis needed
//	        free_daily_limit  500                   # free calls per IP (IPv6 /64) per UTC day; 0 = no free tier
//	        free_subnet_limit 2500                  # free calls per /24 (IPv6 /48) per UTC day
//	        rate_limit_ip     50 1s 100             # requests per period, burst (anonymous or bad key); or off
//	        rate_limit_key    250 1s 500            # per valid API key; or off
//	        key_create_limit  10 1h                 # key creations per IP per window; or off
//	        ip_concurrency    32                    # requests in flight per IP on this instance; or off
//	        event_pack        32                    # revenue events per stream entry (2 ms window); off: one each
//	    }
//	    payments {
//	        vault_address   0x…                     # RevenueVault on chain 137
//	        usdt_address    0x…                     # USDT on chain 137
//	        min_deposit     1                       # USDT
//	        max_deposit     1000000                 # USDT
//	        explorer_url    https://polygonscan.com
//	        x402_asset      0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913   # USDC on Base
//	        x402_pay_to     0x…                     # receiver of x402 payments on Base
//	        x402_receiver_authorizer 0x…            # offer batch-settlement too (claims signed by this address)
//	        public_url      https://rpc.example.com # base of the 402 answer's URLs (default: the request's)
//	        facilitator_url https://rpc.example.com/x402  # the x402 facilitator: verifies and settles payments
//	        settlementd_url http://127.0.0.1:8081   # settlementd; its /x402 is the facilitator when facilitator_url is unset
//	        settlementd_secret {env.TOLLGATE_GATEWAY_SECRET} # authenticates the gateway to settlementd (refunds); sent to settlementd_url only
//	    }
//	    intelligence {
//	        heatmap_price   0.001                   # USDT per funding-rate-heatmap call
//	    }
//	    websocket [off] { … }                       # JSON-RPC sockets on /rpc (config/websocket.go)
//	    default_chain    137                        # the chain of plain /rpc (id or name)
//	    chain 137 {
//	        name         polygon                    # describing the chain: a built-in one changes only
//	        display_name Polygon PoS                #   what is given; a new id needs name, block_time
//	        testnet                                 #   and finality (shared/chains)
//	        block_time   2s
//	        finality     64                         # blocks below the head, or: finality tag (the chain's "finalized")
//	        explorer     https://polygonscan.com
//	        currency     POL 18
//	        default                                 # the chain of plain /rpc
//	        provider <name> <url> {
//	            header <Name> <value>               # e.g. Authorization "Bearer {env.PROVIDER_TOKEN}"
//	            ws     <ws-url>                     # its JSON-RPC-over-WebSocket endpoint, for eth_subscribe (wss://…)
//	            optional                            # an empty <url> (unset {env.*}) switches it off instead of failing
//	        }
//	        method eth_getLogs max_block_range 2000 # this chain's changes to the method table
//	        method debug_traceTransaction deny tracing is not offered on this chain
//	        method eth_call no_retry
//	    }
//	}
//
// The flat spellings of earlier versions (upstream_timeout, free_daily_limit,
// vault_address, x402_facilitator_url, heatmap_price, … directly in the
// block) are still read, with a deprecation warning naming the new place.
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		opt := d.Val()
		switch opt {
		case "upstreams", "payments", "intelligence":
			if d.NextArg() {
				return d.ArgErr()
			}
			if err := g.section(d, opt); err != nil {
				return err
			}
		case "metering":
			if d.NextArg() {
				switch v := d.Val(); v {
				case "on", "off":
					g.Metering.Off = v == "off"
				default:
					return d.Errf("metering: want on or off")
				}
				if d.NextArg() {
					return d.Errf("metering: want on or off")
				}
			}
			if err := g.section(d, opt); err != nil {
				return err
			}
		case "websocket":
			if err := g.parseWebSocket(d); err != nil {
				return err
			}
		case "chain":
			c, err := parseChain(d)
			if err != nil {
				return err
			}
			g.Chains = append(g.Chains, c)
		case "default_chain":
			if !d.Args(&g.DefaultChain) || d.NextArg() {
				return d.Errf("default_chain: want one chain id or name")
			}
		default:
			if sec, name, ok := flat(opt); ok {
				caddy.Log().Named("tollgate").Warn("deprecated Caddyfile option: move it into its section",
					zap.String("option", opt), zap.String("write", sec+" { "+name+" … }"))
				if err := g.set(d, sec, name); err != nil {
					return err
				}
				continue
			}
			if err := g.set(d, "", opt); err != nil {
				return err
			}
		}
	}
	return nil
}

// flat maps an option written directly in the block by earlier versions to
// its section and name.
func flat(opt string) (section, name string, ok bool) {
	switch opt {
	case "upstream_timeout":
		return "upstreams", "timeout", true
	case "upstream_max_batch":
		return "upstreams", "max_batch", true
	case "max_attempts", "probe_interval", "lag_threshold", "breaker_failures", "breaker_open_for", "registry_refresh",
		"allow_private_nodes", "node_allow_cidrs", "node_resolver":
		return "upstreams", opt, true
	case "free_daily_limit", "free_subnet_limit", "rate_limit_ip", "rate_limit_key", "key_create_limit", "ip_concurrency", "event_pack":
		return "metering", opt, true
	case "x402_facilitator_url":
		return "payments", "facilitator_url", true
	case "vault_address", "usdt_address", "min_deposit", "max_deposit", "explorer_url", "x402_asset", "x402_pay_to", "x402_receiver_authorizer",
		"public_url", "settlementd_url", "settlementd_secret":
		return "payments", opt, true
	case "heatmap_price":
		return "intelligence", opt, true
	}
	return "", "", false
}

// section reads the block of a section, if one follows.
func (g *Gateway) section(d *caddyfile.Dispenser, name string) error {
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := g.set(d, name, d.Val()); err != nil {
			return err
		}
	}
	return nil
}

// set reads one option of a section ("" is the top level).
func (g *Gateway) set(d *caddyfile.Dispenser, section, opt string) error {
	u, m, p := &g.Upstreams, &g.Metering, &g.Payments
	str := map[string]*string{
		".redis_url": &g.RedisURL, ".key_prefix": &g.KeyPrefix, ".admin_token": &g.AdminToken,
		"upstreams.node_resolver": &u.NodeResolver,
		"payments.vault_address":  &p.VaultAddress, "payments.usdt_address": &p.USDTAddress,
		"payments.min_deposit": &p.MinDeposit, "payments.max_deposit": &p.MaxDeposit,
		"payments.explorer_url": &p.ExplorerURL, "payments.x402_asset": &p.X402Asset, "payments.x402_pay_to": &p.X402PayTo,
		"payments.x402_receiver_authorizer": &p.X402ReceiverAuthorizer,
		"payments.public_url":               &p.PublicURL, "payments.facilitator_url": &p.Facilitator,
		"payments.settlementd_url": &p.SettlementdURL, "payments.settlementd_secret": &p.SettlementdSecret,
		"intelligence.heatmap_price": &g.Intelligence.HeatmapPrice,
	}
	durations := map[string]*caddy.Duration{
		".request_timeout": &g.RequestTimeout, ".body_timeout": &g.BodyTimeout, ".redis_replica_wait": &g.RedisReplicaWait,
		"upstreams.timeout": &u.Timeout, "upstreams.probe_interval": &u.ProbeInterval,
		"upstreams.breaker_open_for": &u.BreakerOpenFor, "upstreams.registry_refresh": &u.RegistryRefresh,
	}
	key := section + "." + opt
	where := opt
	if section != "" {
		where = section + " " + opt
	}
	if dst, ok := str[key]; ok {
		if !d.Args(dst) || d.NextArg() {
			return d.ArgErr()
		}
		return nil
	}
	if dst, ok := durations[key]; ok {
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return d.Errf("%s: invalid duration %q", where, v)
		}
		*dst = caddy.Duration(dur)
		return nil
	}
	switch key {
	case ".redis_cluster":
		if d.NextArg() {
			return d.ArgErr()
		}
		g.RedisCluster = true
	case ".max_body", ".cache_size":
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 || n > 1<<40 {
			return d.Errf("%s: invalid size %q", where, v)
		}
		if opt == "max_body" {
			g.MaxBodyBytes = int64(n)
		} else {
			g.CacheMaxBytes = int64(n)
		}
	case ".max_batch", ".finality_depth", ".redis_shards", "upstreams.max_batch", "upstreams.archive_window", "upstreams.max_attempts", "upstreams.lag_threshold", "upstreams.breaker_failures":
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return d.Errf("%s: want a positive integer, got %q", where, v)
		}
		switch key {
		case ".max_batch":
			g.MaxBatch = int(n)
		case ".redis_shards":
			g.RedisShards = int(n)
		case ".finality_depth":
			g.FinalityDepth = n
		case "upstreams.max_batch":
			u.MaxBatch = int(n)
		case "upstreams.archive_window":
			u.ArchiveWindow = n
		case "upstreams.max_attempts":
			u.MaxAttempts = int(n)
		case "upstreams.lag_threshold":
			u.LagThreshold = n
		case "upstreams.breaker_failures":
			u.BreakerFailures = uint32(n)
		}
	case ".dev":
		// dev [on|off|1|0|true|false]; bare means on. The dev profile: the
		// dev chains' public-key accounts may be money settings and a
		// provider with an empty URL is switched off instead of refused.
		v := "on"
		if d.NextArg() {
			v = d.Val()
		}
		if d.NextArg() {
			return d.ArgErr()
		}
		on, ok := onOff(v)
		if !ok {
			return d.Errf("dev: want on or off, got %q", v)
		}
		g.Dev = &on
	case "upstreams.allow_private_nodes":
		// allow_private_nodes [on|off|1|0|true|false]; bare means on.
		// Placeholders such as {$TOLLGATE_ALLOW_PRIVATE_NODES:0} are
		// expanded before parsing.
		v := "on"
		if d.NextArg() {
			v = d.Val()
		}
		if d.NextArg() {
			return d.ArgErr()
		}
		switch v {
		case "on", "1", "true":
			u.AllowPrivateNodes = true
		case "off", "0", "false", "":
			u.AllowPrivateNodes = false
		default:
			return d.Errf("%s: want on or off, got %q", where, v)
		}
	case "upstreams.verify":
		// verify off | verify <rate> [<first>]
		args := d.RemainingArgs()
		if len(args) == 1 && args[0] == "off" {
			u.VerifyOff = true
			return nil
		}
		if len(args) < 1 || len(args) > 2 {
			return d.Errf("%s: want <rate> [<first requests>] or off", where)
		}
		r, err := strconv.ParseFloat(args[0], 64)
		if err != nil || r <= 0 || r > 1 {
			return d.Errf("%s: rate %q is not a share between 0 and 1", where, args[0])
		}
		u.VerifyRate = r
		if len(args) == 2 {
			n, err := strconv.ParseInt(args[1], 10, 32)
			if err != nil || n < 0 {
				return d.Errf("%s: first %q is not a non-negative integer", where, args[1])
			}
			u.VerifyFirst = &n
		}
	case "upstreams.probation":
		// probation off | probation <matches> [<methods>]
		args := d.RemainingArgs()
		if len(args) == 1 && args[0] == "off" {
			u.ProbationOff = true
			return nil
		}
		if len(args) < 1 || len(args) > 2 {
			return d.Errf("%s: want <matches> [<methods>] or off", where)
		}
		for i, a := range args {
			n, err := strconv.ParseInt(a, 10, 32)
			if err != nil || n <= 0 {
				return d.Errf("%s: %q is not a positive integer", where, a)
			}
			if i == 0 {
				u.ProbationMatches = int(n)
			} else {
				u.ProbationMethods = int(n)
			}
		}
	case "upstreams.check_decay":
		// check_decay <matches> [<duration>]: the check rate falls from 1 to
		// the floor linearly over this many verified matches after
		// probation and over this long (the higher of the two).
		args := d.RemainingArgs()
		if len(args) < 1 || len(args) > 2 {
			return d.Errf("%s: want <matches> [<duration>]", where)
		}
		n, err := strconv.ParseInt(args[0], 10, 32)
		if err != nil || n <= 0 {
			return d.Errf("%s: %q is not a positive integer", where, args[0])
		}
		u.CheckDecay = int(n)
		if len(args) == 2 {
			dur, err := caddy.ParseDuration(args[1])
			if err != nil || dur <= 0 {
				return d.Errf("%s: want a positive duration, got %q", where, args[1])
			}
			u.CheckDecayTime = caddy.Duration(dur)
		}
	case "upstreams.check_qps":
		// check_qps <per second> [<burst>] | off: the gateway-wide cap on
		// the provider calls the checks make.
		args := d.RemainingArgs()
		if len(args) == 1 && args[0] == "off" {
			u.CheckQPSOff = true
			return nil
		}
		if len(args) < 1 || len(args) > 2 {
			return d.Errf("%s: want <per second> [<burst>] or off", where)
		}
		r, err := strconv.ParseFloat(args[0], 64)
		if err != nil || r <= 0 || math.IsInf(r, 0) {
			return d.Errf("%s: %q is not a positive rate", where, args[0])
		}
		u.CheckQPS = r
		if len(args) == 2 {
			n, err := strconv.ParseInt(args[1], 10, 32)
			if err != nil || n <= 0 {
				return d.Errf("%s: burst %q is not a positive integer", where, args[1])
			}
			u.CheckBurst = int(n)
		}
	case "upstreams.hedge":
		h, err := parseHedge(d, where)
		if err != nil {
			return err
		}
		u.Hedge = &h
	case "upstreams.send_grace":
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return d.Errf("%s: want a positive duration, got %q", where, v)
		}
		u.SendGrace = caddy.Duration(dur)
	case "upstreams.ladder":
		// ladder <matches>:<share>[:<after>] … — ascending matches, shares
		// in (0, 1], after a duration since probation ended (default 0).
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.Errf("%s: want <matches>:<share> rungs", where)
		}
		u.Ladder = u.Ladder[:0]
		for _, a := range args {
			m, sh, ok := strings.Cut(a, ":")
			sh, after, timed := strings.Cut(sh, ":")
			n, err1 := strconv.ParseInt(m, 10, 64)
			share, err2 := strconv.ParseFloat(sh, 64)
			var dur time.Duration
			var err3 error
			if timed {
				dur, err3 = caddy.ParseDuration(after)
			}
			if !ok || err1 != nil || err2 != nil || err3 != nil || n < 0 || share <= 0 || share > 1 || dur < 0 {
				return d.Errf("%s: rung %q is not <matches>:<share>[:<after>] with a share in (0, 1]", where, a)
			}
			if k := len(u.Ladder); k > 0 && n <= u.Ladder[k-1].Matches {
				return d.Errf("%s: rung %q: matches must ascend", where, a)
			}
			u.Ladder = append(u.Ladder, LadderRung{Matches: n, Share: share, After: caddy.Duration(dur)})
		}
	case "upstreams.node_allow_cidrs":
		u.NodeAllowCIDRs = append(u.NodeAllowCIDRs, d.RemainingArgs()...)
	case "metering.free_daily_limit", "metering.free_subnet_limit":
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return d.Errf("%s: want a non-negative integer, got %q", where, v)
		}
		if opt == "free_daily_limit" {
			m.FreeDailyLimit = &n
		} else {
			m.FreeSubnetLimit = &n
		}
	case "metering.ip_concurrency":
		n, err := countOrOff(d, where, 0, math.MaxInt32, "a positive integer or off")
		if err != nil {
			return err
		}
		m.IPConcurrency = &n
	case "metering.event_pack":
		n, err := countOrOff(d, where, 1, events.MaxPack, fmt.Sprintf("1 to %d or off", events.MaxPack))
		if err != nil {
			return err
		}
		m.EventPack = &n
	case "metering.rate_limit_ip", "metering.rate_limit_key", "metering.key_create_limit":
		rc, err := parseRate(d, where, opt != "key_create_limit")
		if err != nil {
			return err
		}
		*map[string]**RateConfig{"rate_limit_ip": &m.RateLimitIP, "rate_limit_key": &m.RateLimitKey,
			"key_create_limit": &m.KeyCreateLimit}[opt] = rc
	default:
		if section == "" {
			return d.Errf("unrecognized tollgate option %q", opt)
		}
		return d.Errf("unrecognized option %q in tollgate %s", opt, section)
	}
	return nil
}

// parseRate reads "<rate> <period> [<burst>]" or "off" (no limit).
func parseRate(d *caddyfile.Dispenser, opt string, burst bool) (*RateConfig, error) {
	args := d.RemainingArgs()
	if len(args) == 1 && args[0] == "off" {
		return &RateConfig{}, nil
	}
	if len(args) < 2 || len(args) > 3 || (!burst && len(args) == 3) {
		if burst {
			return nil, d.Errf("%s: want <rate> <period> [<burst>] or off", opt)
		}
		return nil, d.Errf("%s: want <count> <period> or off", opt)
	}
	n, err := strconv.ParseUint(args[0], 10, 31)
	if err != nil || n == 0 {
		return nil, d.Errf("%s: rate %q is not a positive integer", opt, args[0])
	}
	per, err := caddy.ParseDuration(args[1])
	if err != nil || per < time.Millisecond {
		return nil, d.Errf("%s: invalid period %q", opt, args[1])
	}
	rc := &RateConfig{Rate: int(n), Per: caddy.Duration(per)}
	if len(args) == 3 {
		b, err := strconv.ParseUint(args[2], 10, 31)
		if err != nil || b == 0 {
			return nil, d.Errf("%s: burst %q is not a positive integer", opt, args[2])
		}
		rc.Burst = int(b)
	} else {
		rc.Burst = int(n)
	}
	return rc, nil
}

func parseChain(d *caddyfile.Dispenser) (ChainConfig, error) {
	var idStr string
	if !d.Args(&idStr) || d.NextArg() {
		return ChainConfig{}, d.ArgErr()
	}
	id, err := strconv.ParseUint(idStr, 10, 64)
	if err != nil {
		return ChainConfig{}, d.Errf("chain: %q is not a chain id", idStr)
	}
	c := ChainConfig{Spec: chains.Spec{ID: id}}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if d.Val() == "method" {
			if err := parseMethod(d, &c); err != nil {
				return c, err
			}
			continue
		}
		if d.Val() == "hedge" {
			h, err := parseHedge(d, fmt.Sprintf("chain %d: hedge", id))
			if err != nil {
				return c, err
			}
			c.Hedge = &h
			continue
		}
		if d.Val() == "prove_bodies" {
			var v string
			if !d.Args(&v) || d.NextArg() {
				return c, d.ArgErr()
			}
			var on bool
			switch v {
			case "on", "true":
				on = true
			case "off", "false":
			default:
				return c, d.Errf("chain %d: prove_bodies %q: want on or off", id, v)
			}
			if c.ProveBodies != nil {
				return c, d.Errf("chain %d: prove_bodies given twice", id)
			}
			c.ProveBodies = &on
			continue
		}
		if ok, err := parseChainSpec(d, &c.Spec); ok || err != nil {
			if err != nil {
				return c, err
			}
			continue
		}
		if d.Val() != "provider" {
			return c, d.Errf("chain %d: unrecognized option %q (want provider, method, hedge, prove_bodies, name, display_name, testnet, block_time, finality, explorer, currency or default)", id, d.Val())
		}
		var p ProviderConfig
		if !d.Args(&p.Name, &p.URL) || d.NextArg() {
			return c, d.ArgErr()
		}
		for pn := d.Nesting(); d.NextBlock(pn); {
			if d.Val() == "ws" {
				if p.WS != "" {
					return c, d.Errf("provider %s: ws given twice", p.Name)
				}
				if !d.Args(&p.WS) || d.NextArg() {
					return c, d.ArgErr()
				}
				continue
			}
			if d.Val() == "optional" {
				// An empty URL (an unset {env.*}) switches this provider
				// off instead of failing the configuration.
				if d.NextArg() {
					return c, d.ArgErr()
				}
				p.Optional = true
				continue
			}
			if d.Val() != "header" {
				return c, d.Errf("provider %s: unrecognized option %q (want header, ws or optional)", p.Name, d.Val())
			}
			var k, v string
			if !d.Args(&k, &v) || d.NextArg() {
				return c, d.ArgErr()
			}
			if p.Headers == nil {
				p.Headers = map[string]string{}
			}
			p.Headers[k] = v
		}
		c.Providers = append(c.Providers, p)
	}
	return c, nil
}

// parseChainSpec reads one line describing the chain (chains.Spec), if the
// line is one: name <name> | display_name <text…> | testnet | block_time
// <duration> | finality <depth>|tag | explorer <https-url> | currency
// <symbol> <decimals> | default. It reports whether it was.
func parseChainSpec(d *caddyfile.Dispenser, s *chains.Spec) (bool, error) {
	opt := d.Val()
	one := func() (string, error) {
		var v string
		if !d.Args(&v) || d.NextArg() {
			return "", d.Errf("chain %d: %s: want one value", s.ID, opt)
		}
		return v, nil
	}
	switch opt {
	case "name", "explorer":
		v, err := one()
		if err != nil {
			return true, err
		}
		if opt == "name" {
			s.Name = v
		} else {
			s.Explorer = v
		}
	case "display_name":
		args := d.RemainingArgs()
		if len(args) == 0 {
			return true, d.Errf("chain %d: display_name: want a name", s.ID)
		}
		s.DisplayName = strings.Join(args, " ")
	case "testnet", "default":
		if d.NextArg() {
			return true, d.Errf("chain %d: %s takes no value", s.ID, opt)
		}
		if opt == "testnet" {
			s.Testnet = true
		} else {
			s.Default = true
		}
	case "block_time":
		v, err := one()
		if err != nil {
			return true, err
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return true, d.Errf("chain %d: block_time: want a duration such as 2s, got %q", s.ID, v)
		}
		s.BlockTime = chains.Duration(dur)
	case "finality":
		v, err := one()
		if err != nil {
			return true, err
		}
		f, err := chains.ParseFinality(v)
		if err != nil {
			return true, d.Errf("chain %d: %v", s.ID, err)
		}
		fs := chains.FinalitySpec(f)
		s.Finality = &fs
	case "currency":
		var sym, dec string
		if !d.Args(&sym, &dec) || d.NextArg() {
			return true, d.Errf("chain %d: currency: want <symbol> <decimals>, e.g. currency POL 18", s.ID)
		}
		n, err := strconv.ParseUint(dec, 10, 8)
		if err != nil {
			return true, d.Errf("chain %d: currency decimals: want 0 to 36, got %q", s.ID, dec)
		}
		s.Currency = &chains.Currency{Symbol: sym, Decimals: uint8(n)}
	default:
		return false, nil
	}
	return true, nil
}

// parseMethod reads "method <name> deny [<reason>…] | allow |
// max_block_range <n> | no_retry | weight <n> | max_response_bytes <size>";
// lines for one method add up.
func parseMethod(d *caddyfile.Dispenser, c *ChainConfig) error {
	args := d.RemainingArgs()
	if len(args) < 2 {
		return d.Errf("chain %d: method: want <name> deny [reason] | allow | max_block_range <n> | no_retry | weight <n> | max_response_bytes <size>", c.ID)
	}
	i := slices.IndexFunc(c.Methods, func(o evm.Override) bool { return o.Method == args[0] })
	if i < 0 {
		c.Methods = append(c.Methods, evm.Override{Method: args[0]})
		i = len(c.Methods) - 1
	}
	o := &c.Methods[i]
	switch args[1] {
	case "deny":
		o.Deny = strings.Join(args[2:], " ")
		if o.Deny == "" {
			o.Deny = "the operator does not serve it on this chain"
		}
	case "allow":
		o.Allow = true
	case "max_block_range":
		if len(args) != 3 {
			return d.ArgErr()
		}
		n, err := strconv.ParseUint(args[2], 10, 32)
		if err != nil || n == 0 {
			return d.Errf("chain %d: method %s max_block_range: want a positive integer, got %q", c.ID, args[0], args[2])
		}
		o.MaxBlockRange = n
	case "no_retry":
		o.NoRetry = true
	case "no_hedge":
		o.NoHedge = true
	case "weight":
		if len(args) != 3 {
			return d.ArgErr()
		}
		n, err := strconv.ParseUint(args[2], 10, 32)
		if err != nil || n == 0 || n > evm.MaxWeight {
			return d.Errf("chain %d: method %s weight: want a whole number from 1 to %d, got %q", c.ID, args[0], evm.MaxWeight, args[2])
		}
		o.Weight = uint32(n)
	case "max_response_bytes":
		if len(args) != 3 {
			return d.ArgErr()
		}
		n, err := humanize.ParseBytes(args[2])
		if err != nil || n == 0 || n > 1<<40 {
			return d.Errf("chain %d: method %s max_response_bytes: want a size such as 4MB, got %q", c.ID, args[0], args[2])
		}
		o.MaxResponseBytes = int64(n)
	default:
		return d.Errf("chain %d: method %s: unknown setting %q (deny, allow, max_block_range, no_retry, no_hedge, weight, max_response_bytes)", c.ID, args[0], args[1])
	}
	if args[1] != "deny" && args[1] != "max_block_range" && args[1] != "weight" && args[1] != "max_response_bytes" && len(args) > 2 {
		return d.ArgErr()
	}
	return nil
}

// parseHedge reads "hedge off | hedge <share> [<floor> <ceiling>]": the
// share of reads that may be hedged, and the bounds of the hedge delay.
func parseHedge(d *caddyfile.Dispenser, where string) (HedgeConfig, error) {
	args := d.RemainingArgs()
	if len(args) == 1 && args[0] == "off" {
		return HedgeConfig{Off: true}, nil
	}
	if len(args) != 1 && len(args) != 3 {
		return HedgeConfig{}, d.Errf("%s: want off, or <share> [<floor> <ceiling>]", where)
	}
	share, err := strconv.ParseFloat(args[0], 64)
	if err != nil || share <= 0 || share > 1 {
		return HedgeConfig{}, d.Errf("%s: share %q is not between 0 and 1", where, args[0])
	}
	h := HedgeConfig{MaxShare: share}
	if len(args) == 3 {
		floor, err1 := caddy.ParseDuration(args[1])
		ceil, err2 := caddy.ParseDuration(args[2])
		if err1 != nil || err2 != nil || floor <= 0 || ceil < floor {
			return HedgeConfig{}, d.Errf("%s: want a floor and a ceiling duration, floor ≤ ceiling, got %q %q", where, args[1], args[2])
		}
		h.Floor, h.Ceiling = caddy.Duration(floor), caddy.Duration(ceil)
	}
	return h, nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Gateway)(nil)

// countOrOff reads an option's one argument: an integer from 1 to maxN, or
// "off", which reads as off; want says what is accepted.
func countOrOff(d *caddyfile.Dispenser, where string, off int, maxN uint64, want string) (int, error) {
	var v string
	if !d.Args(&v) || d.NextArg() {
		return 0, d.ArgErr()
	}
	if v == "off" {
		return off, nil
	}
	x, err := strconv.ParseUint(v, 10, 31)
	if err != nil || x == 0 || x > maxN {
		return 0, d.Errf("%s: want %s, got %q", where, want, v)
	}
	return int(x), nil
}

// onOff reads a switch: on/1/true, off/0/false or empty (an unset
// placeholder).
func onOff(v string) (on, ok bool) {
	switch v {
	case "on", "1", "true":
		return true, true
	case "off", "0", "false", "":
		return false, true
	}
	return false, false
}
