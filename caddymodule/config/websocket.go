package config

import (
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// Defaults of the WebSocket section (caddymodule/wsrpc).
const (
	DefaultWSMaxSubscriptions      = 32               // per connection
	DefaultWSMaxSubscriptionsPerIP = 256              // per IP (IPv6 /64 is not grouped: one address)
	DefaultWSSendBuffer            = 256              // messages queued for one client
	DefaultWSPingInterval          = 20 * time.Second // a ping every interval; no pong in two intervals closes
	DefaultWSIdleTimeout           = 5 * time.Minute  // no subscription and no message for this long closes
	DefaultWSWriteTimeout          = 10 * time.Second // one message's write; longer is a slow reader
	DefaultWSMaxInFlight           = 16               // calls of one connection served at once
)

// WebSocket bounds the JSON-RPC sockets on /rpc (caddymodule/wsrpc). Zero
// values mean the defaults above; Off refuses the upgrade.
type WebSocket struct {
	Off                   bool           `json:"off,omitempty"`
	MaxSubscriptions      int            `json:"max_subscriptions,omitempty"`
	MaxSubscriptionsPerIP int            `json:"max_subscriptions_per_ip,omitempty"`
	SendBuffer            int            `json:"send_buffer,omitempty"`
	MaxInFlight           int            `json:"max_in_flight,omitempty"`
	PingInterval          caddy.Duration `json:"ping_interval,omitempty"`
	IdleTimeout           caddy.Duration `json:"idle_timeout,omitempty"`
	WriteTimeout          caddy.Duration `json:"write_timeout,omitempty"`
}

// WithDefaults is w with its unset values filled.
func (w WebSocket) WithDefaults() WebSocket {
	ints := []struct {
		p   *int
		def int
	}{{&w.MaxSubscriptions, DefaultWSMaxSubscriptions}, {&w.MaxSubscriptionsPerIP, DefaultWSMaxSubscriptionsPerIP},
		{&w.SendBuffer, DefaultWSSendBuffer}, {&w.MaxInFlight, DefaultWSMaxInFlight}}
	for _, x := range ints {
		if *x.p <= 0 {
			*x.p = x.def
		}
	}
	durs := []struct {
		p   *caddy.Duration
		def time.Duration
	}{{&w.PingInterval, DefaultWSPingInterval}, {&w.IdleTimeout, DefaultWSIdleTimeout}, {&w.WriteTimeout, DefaultWSWriteTimeout}}
	for _, x := range durs {
		if *x.p <= 0 {
			*x.p = caddy.Duration(x.def)
		}
	}
	return w
}

// parseWebSocket reads the websocket section:
//
//	websocket [off] {
//	    max_subscriptions        32     # per connection
//	    max_subscriptions_per_ip 256
//	    send_buffer              256    # messages queued per client; a slow reader past it is cut off (close 4008)
//	    max_in_flight            16     # calls of one socket served at once
//	    ping_interval            20s
//	    idle_timeout             5m     # no subscription and no message: closed (4408)
//	    write_timeout            10s
//	}
func (g *Gateway) parseWebSocket(d *caddyfile.Dispenser) error {
	w := &g.WebSocket
	if d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return d.Errf("websocket: want off or a block")
		}
		w.Off = true
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		var v string
		if !d.Args(&v) || d.NextArg() {
			return d.ArgErr()
		}
		ints := map[string]*int{"max_subscriptions": &w.MaxSubscriptions, "max_subscriptions_per_ip": &w.MaxSubscriptionsPerIP,
			"send_buffer": &w.SendBuffer, "max_in_flight": &w.MaxInFlight}
		durs := map[string]*caddy.Duration{"ping_interval": &w.PingInterval, "idle_timeout": &w.IdleTimeout, "write_timeout": &w.WriteTimeout}
		if p, ok := ints[opt]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 1_000_000 {
				return d.Errf("websocket %s: want a positive integer, got %q", opt, v)
			}
			*p = n
			continue
		}
		if p, ok := durs[opt]; ok {
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("websocket %s: invalid duration %q", opt, v)
			}
			*p = caddy.Duration(dur)
			continue
		}
		return d.Errf("websocket: unrecognized option %q", opt)
	}
	return nil
}
