// Package connlimit is a Caddy listener wrapper that caps how many open
// connections one client address may hold. Request-level limits cannot stop a
// slowloris: a client that opens thousands of connections and sends nothing
// (or a byte now and then) never becomes a request. Counted at accept, a
// connection over the cap is closed at once, before any byte is read.
//
// Caddyfile, inside the global options' servers block:
//
//	listener_wrappers {
//		tollgate_conn_limit {
//			per_ip 256
//		}
//	}
//
// The address is the TCP peer: an IPv4 address, or an IPv6 /64 (one
// subscriber's usual allocation). Behind a load balancer every connection
// comes from the balancer, so either raise per_ip to the balancer's share or
// let the balancer enforce per-client limits.
package connlimit

import (
	"net"
	"net/netip"
	"strconv"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/prometheus/client_golang/prometheus"
)

func init() { caddy.RegisterModule(Limit{}) }

// DefaultPerIP is the cap when per_ip is not set.
const DefaultPerIP = 256

// Limit caps open connections per client address.
type Limit struct {
	// PerIP is how many connections one address may hold open at once.
	PerIP int `json:"per_ip,omitempty"`

	rejected prometheus.Counter
}

// CaddyModule returns the module information.
func (Limit) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.listeners.tollgate_conn_limit", New: func() caddy.Module { return new(Limit) }}
}

// Provision sets the default and the metric.
func (l *Limit) Provision(ctx caddy.Context) error {
	if l.PerIP <= 0 {
		l.PerIP = DefaultPerIP
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tollgate", Subsystem: "gateway", Name: "connections_rejected_total",
		Help: "Connections closed at accept because their address held tollgate_conn_limit's per_ip connections."})
	if err := ctx.GetMetricsRegistry().Register(c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			c = are.ExistingCollector.(prometheus.Counter)
		} else {
			return err
		}
	}
	l.rejected = c
	return nil
}

// UnmarshalCaddyfile reads `tollgate_conn_limit { per_ip N }`.
func (l *Limit) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "per_ip":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return d.Errf("per_ip: want a positive integer, got %q", v)
			}
			l.PerIP = n
		default:
			return d.Errf("unknown option %q", d.Val())
		}
	}
	return nil
}

// WrapListener counts ln's connections per address.
func (l *Limit) WrapListener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, addr: ln.Addr().String(), max: l.PerIP, rejected: l.rejected}
}

// open counts connections per listening address, then per client address.
// It outlives one config: a reload wraps the same socket again while the old
// server's connections drain, and those still count against their address
// (a per-wrapper count would start at zero and let each reload double the
// cap). Empty entries are deleted, so it holds only live connections.
var open = struct {
	sync.Mutex
	by map[string]map[string]int
}{by: map[string]map[string]int{}}

type listener struct {
	net.Listener
	addr     string
	max      int
	rejected prometheus.Counter
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := clientKey(c.RemoteAddr())
		open.Lock()
		m := open.by[l.addr]
		if m == nil {
			m = map[string]int{}
			open.by[l.addr] = m
		}
		if m[key] >= l.max {
			open.Unlock()
			if l.rejected != nil {
				l.rejected.Inc()
			}
			_ = c.Close()
			continue
		}
		m[key]++
		open.Unlock()
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

func (l *listener) release(key string) {
	open.Lock()
	m := open.by[l.addr]
	if m[key]--; m[key] <= 0 {
		delete(m, key)
		if len(m) == 0 {
			delete(open.by, l.addr)
		}
	}
	open.Unlock()
}

type conn struct {
	net.Conn
	l    *listener
	key  string
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// clientKey is the address a connection counts under.
func clientKey(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// Interface guards.
var (
	_ caddy.ListenerWrapper = (*Limit)(nil)
	_ caddy.Provisioner     = (*Limit)(nil)
	_ caddyfile.Unmarshaler = (*Limit)(nil)
)
