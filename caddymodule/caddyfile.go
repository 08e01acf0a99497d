package caddymodule

import (
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("tollgate", parseCaddyfile)
	// Before reverse_proxy so one site block can hold both: our paths are
	// answered here, everything else falls through to the proxy.
	httpcaddyfile.RegisterDirectiveOrder("tollgate", httpcaddyfile.Before, "reverse_proxy")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var t Handler
	err := t.UnmarshalCaddyfile(h.Dispenser)
	return &t, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	tollgate {
//	    redis_url        {env.REDIS_URL}            # runtime placeholder: never stored expanded
//	    key_prefix       tollgate:
//	    admin_token      {env.TOLLGATE_ADMIN_TOKEN}
//	    max_body         1MiB
//	    max_batch        1000
//	    upstream_max_batch 100
//	    request_timeout  15s
//	    upstream_timeout 10s                        # per attempt
//	    max_attempts     3
//	    probe_interval   5s
//	    lag_threshold    5                          # blocks behind the pool's best head
//	    breaker_failures 5                          # consecutive failures that open a breaker
//	    breaker_open_for 30s
//	    registry_refresh 5s
//	    cache_size       64MiB
//	    finality_depth   64                         # blocks below head treated as final by the cache
//
//	    metering          on                        # off: an open gateway, no Redis needed
//	    redis_cluster                               # redis_url is a Cluster URL; key_prefix then needs a {hash tag}
//	    free_daily_limit  500                       # free calls per IP (IPv6 /64) per UTC day; 0 = no free tier
//	    free_subnet_limit 2500                      # free calls per /24 (IPv6 /48) per UTC day
//	    rate_limit_ip     50 1s 100                 # requests per period, burst (anonymous or bad key); or off
//	    rate_limit_key    250 1s 500                # per valid API key; or off
//	    key_create_limit  10 1h                     # key creations per IP per window; or off
//	    ip_concurrency    32                        # requests in flight per IP on this instance; or off
//	    vault_address     0x…                       # RevenueVault on chain 137
//	    usdt_address      0x…                       # USDT on chain 137
//	    min_deposit       1                         # USDT
//	    max_deposit       1000000                   # USDT
//	    explorer_url      https://polygonscan.com
//	    x402_asset        0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913   # USDC on Base
//	    x402_pay_to       0x…                       # receiver of x402 payments on Base
//	    public_url        https://rpc.example.com   # base of the 402 answer's URLs (default: the request's)
//	    x402_facilitator_url https://rpc.example.com/x402  # the x402 facilitator: called to verify and settle payments, advertised in service.json
//	    settlementd_url   http://127.0.0.1:8081   # settlementd, reached directly; its /x402 is the facilitator when x402_facilitator_url is unset
//	    heatmap_price     0.001                     # USDT per funding-rate-heatmap call
//	    chain 137 {
//	        provider <name> <url> {
//	            header <Name> <value>               # e.g. Authorization "Bearer {env.PROVIDER_TOKEN}"
//	        }
//	    }
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		opt := d.Val()
		switch opt {
		case "redis_url", "key_prefix", "admin_token", "vault_address", "usdt_address", "min_deposit", "max_deposit",
			"explorer_url", "x402_asset", "x402_pay_to", "public_url", "x402_facilitator_url", "heatmap_price", "settlementd_url":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			*map[string]*string{
				"redis_url": &h.RedisURL, "key_prefix": &h.KeyPrefix, "admin_token": &h.AdminToken,
				"vault_address": &h.VaultAddress, "usdt_address": &h.USDTAddress, "min_deposit": &h.MinDeposit,
				"max_deposit": &h.MaxDeposit, "explorer_url": &h.ExplorerURL, "x402_asset": &h.X402Asset,
				"x402_pay_to": &h.X402PayTo, "public_url": &h.PublicURL, "x402_facilitator_url": &h.X402Facilitator,
				"heatmap_price": &h.HeatmapPrice, "settlementd_url": &h.SettlementdURL,
			}[opt] = v
		case "metering":
			var v string
			if !d.Args(&v) || d.NextArg() || (v != "on" && v != "off") {
				return d.Errf("metering: want on or off")
			}
			h.MeteringOff = v == "off"
		case "redis_cluster":
			if d.NextArg() {
				return d.ArgErr()
			}
			h.RedisCluster = true
		case "allow_private_nodes":
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
				h.AllowPrivateNodes = true
			case "off", "0", "false", "":
				h.AllowPrivateNodes = false
			default:
				return d.Errf("allow_private_nodes: want on or off, got %q", v)
			}
		case "node_allow_cidrs":
			h.NodeAllowCIDRs = append(h.NodeAllowCIDRs, d.RemainingArgs()...)
		case "node_resolver":
			if !d.Args(&h.NodeResolver) || d.NextArg() {
				return d.ArgErr()
			}
		case "free_daily_limit", "free_subnet_limit":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > 1<<40 {
				return d.Errf("%s: want a non-negative integer, got %q", opt, v)
			}
			if opt == "free_daily_limit" {
				h.FreeDailyLimit = &n
			} else {
				h.FreeSubnetLimit = &n
			}
		case "ip_concurrency":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			n := 0
			if v != "off" {
				x, err := strconv.ParseUint(v, 10, 31)
				if err != nil || x == 0 {
					return d.Errf("ip_concurrency: want a positive integer or off, got %q", v)
				}
				n = int(x)
			}
			h.IPConcurrency = &n
		case "rate_limit_ip", "rate_limit_key", "key_create_limit":
			rc, err := parseRate(d, opt, opt != "key_create_limit")
			if err != nil {
				return err
			}
			*map[string]**RateConfig{"rate_limit_ip": &h.RateLimitIP, "rate_limit_key": &h.RateLimitKey,
				"key_create_limit": &h.KeyCreateLimit}[opt] = rc
		case "max_body", "cache_size":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			n, err := humanize.ParseBytes(v)
			if err != nil || n == 0 || n > 1<<40 {
				return d.Errf("%s: invalid size %q", opt, v)
			}
			if opt == "max_body" {
				h.MaxBodyBytes = int64(n)
			} else {
				h.CacheMaxBytes = int64(n)
			}
		case "max_batch", "upstream_max_batch", "max_attempts", "lag_threshold", "breaker_failures", "finality_depth":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				return d.Errf("%s: want a positive integer, got %q", opt, v)
			}
			switch opt {
			case "max_batch":
				h.MaxBatch = int(n)
			case "upstream_max_batch":
				h.UpstreamMaxBatch = int(n)
			case "max_attempts":
				h.MaxAttempts = int(n)
			case "lag_threshold":
				h.LagThreshold = n
			case "breaker_failures":
				h.BreakerFailures = uint32(n)
			case "finality_depth":
				h.FinalityDepth = n
			}
		case "request_timeout", "upstream_timeout", "probe_interval", "breaker_open_for", "registry_refresh", "body_timeout":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("%s: invalid duration %q", opt, v)
			}
			target := map[string]*caddy.Duration{
				"request_timeout": &h.RequestTimeout, "upstream_timeout": &h.UpstreamTimeout,
				"probe_interval": &h.ProbeInterval, "breaker_open_for": &h.BreakerOpenFor,
				"registry_refresh": &h.RegistryRefresh, "body_timeout": &h.BodyTimeout,
			}[opt]
			*target = caddy.Duration(dur)
		case "chain":
			c, err := parseChain(d)
			if err != nil {
				return err
			}
			h.Chains = append(h.Chains, c)
		default:
			return d.Errf("unrecognized tollgate option %q", opt)
		}
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
	c := ChainConfig{ID: id}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if d.Val() != "provider" {
			return c, d.Errf("chain %d: unrecognized option %q (want provider)", id, d.Val())
		}
		var p ProviderConfig
		if !d.Args(&p.Name, &p.URL) || d.NextArg() {
			return c, d.ArgErr()
		}
		for pn := d.Nesting(); d.NextBlock(pn); {
			if d.Val() != "header" {
				return c, d.Errf("provider %s: unrecognized option %q (want header)", p.Name, d.Val())
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

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
