package caddymodule

import (
	"strconv"

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
//	    max_batch        100
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
		case "redis_url", "key_prefix", "admin_token":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			switch opt {
			case "redis_url":
				h.RedisURL = v
			case "key_prefix":
				h.KeyPrefix = v
			case "admin_token":
				h.AdminToken = v
			}
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
		case "max_batch", "max_attempts", "lag_threshold", "breaker_failures", "finality_depth":
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
			case "max_attempts":
				h.MaxAttempts = int(n)
			case "lag_threshold":
				h.LagThreshold = n
			case "breaker_failures":
				h.BreakerFailures = uint32(n)
			case "finality_depth":
				h.FinalityDepth = n
			}
		case "request_timeout", "upstream_timeout", "probe_interval", "breaker_open_for", "registry_refresh":
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
				"registry_refresh": &h.RegistryRefresh,
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
