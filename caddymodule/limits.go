package caddymodule

import (
	"hash/maphash"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/meter"
)

// clientIP is Caddy's client IP: the connection's peer, or — only when the
// peer is one of the server's trusted_proxies — the address it forwarded.
// A raw X-Forwarded-For is never read here, so an untrusted client cannot
// pick the address its free tier and limits are counted under.
func clientIP(r *http.Request) netip.Addr {
	if v, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && v != "" {
		if a, err := netip.ParseAddr(v); err == nil {
			return a.Unmap()
		}
		if ap, err := netip.ParseAddrPort(v); err == nil {
			return ap.Addr().Unmap()
		}
	}
	// Outside a Caddy server (unit tests) the variable is unset.
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	host, _, _ = strings.Cut(host, "%")
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// concurrency caps the requests one caller (IP, IPv6 /64) has in flight on
// this instance. It is in-process on purpose: a Redis counter would cost a
// round trip per request and leak slots whenever an instance dies mid-request.
type concurrency struct {
	max    int
	seed   maphash.Seed
	shards [64]concShard
}

type concShard struct {
	mu sync.Mutex
	n  map[string]int
}

func newConcurrency(max int) *concurrency {
	c := &concurrency{max: max, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].n = map[string]int{}
	}
	return c
}

// acquire takes a slot for ip; ok is false when the caller is at its cap.
// release must be called exactly once when ok.
func (c *concurrency) acquire(ip netip.Addr) (release func(), ok bool) {
	if c == nil || c.max <= 0 {
		return func() {}, true
	}
	key, _ := meter.Subjects(ip)
	s := &c.shards[maphash.String(c.seed, key)%uint64(len(c.shards))]
	s.mu.Lock()
	if s.n[key] >= c.max {
		s.mu.Unlock()
		return nil, false
	}
	s.n[key]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.n[key]--; s.n[key] <= 0 {
			delete(s.n, key)
		}
		s.mu.Unlock()
	}, true
}
