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
//			exempt 10.0.0.5/32   # the load balancer (optional)
//		}
//	}
//
// The address is the TCP peer: an IPv4 address, or an IPv6 /64 (one
// subscriber's usual allocation). It is counted at accept, before a byte of
// the request is read, so X-Forwarded-For cannot be consulted (and must not
// be: a header is the client's word). Behind a load balancer every
// connection comes from the balancer: list the balancer's addresses under
// exempt (their connections are not capped) and let the balancer cap
// connections per client, or raise per_ip to what the balancer needs.
package connlimit

import (
	"fmt"
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
	// Exempt lists prefixes whose connections are not capped: the load
	// balancers or proxies in front of the server, which carry many
	// clients' connections and must do the per-client capping themselves.
	Exempt []string `json:"exempt,omitempty"`

	exempt []netip.Prefix

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
	l.exempt = l.exempt[:0]
	for _, e := range l.Exempt {
		p, err := parsePrefix(e)
		if err != nil {
			return err
		}
		l.exempt = append(l.exempt, p)
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
		case "exempt":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			for _, a := range args {
				if _, err := parsePrefix(a); err != nil {
					return d.Errf("exempt: %v", err)
				}
			}
			l.Exempt = append(l.Exempt, args...)
		default:
			return d.Errf("unknown option %q", d.Val())
		}
	}
	return nil
}

// WrapListener counts ln's connections per address.
func (l *Limit) WrapListener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, addr: ln.Addr().String(), max: l.PerIP, exempt: l.exempt, rejected: l.rejected}
}

// parsePrefix reads a CIDR prefix or a single address.
func parsePrefix(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither an address nor a CIDR prefix", s)
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
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
	exempt   []netip.Prefix
	rejected prometheus.Counter
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.isExempt(c.RemoteAddr()) {
			return c, nil
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

func (l *listener) isExempt(a net.Addr) bool {
	if len(l.exempt) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, p := range l.exempt {
		if p.Contains(ip) {
			return true
		}
	}
	return false
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
