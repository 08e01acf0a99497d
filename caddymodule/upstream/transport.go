package upstream

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// TransportConfig tunes the HTTP transport each upstream gets.
//
// Every upstream has its own http.Transport rather than sharing
// http.DefaultTransport: its idle connections can be closed when the node
// leaves the pool or the pool is destroyed, one slow upstream cannot use up
// a shared connection budget, and the settings here suit a gateway (the
// default keeps only 2 idle connections per host, so a busy gateway would
// keep reconnecting to its providers).
type TransportConfig struct {
	// DialTimeout bounds TCP connection setup (default 5 s). Kept well
	// below the attempt timeout so a dead host fails fast and the call can
	// move to another upstream.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake (default 5 s).
	TLSHandshakeTimeout time.Duration
	// KeepAlive is the TCP keep-alive period (default 30 s).
	KeepAlive time.Duration
	// MaxIdleConnsPerHost is how many idle connections are kept for reuse
	// (default 64).
	MaxIdleConnsPerHost int
	// MaxConnsPerHost caps connections to the upstream; 0 means no cap.
	MaxConnsPerHost int
	// IdleConnTimeout closes connections idle this long (default 90 s).
	IdleConnTimeout time.Duration

	// NodeAddress, when set, is checked against every address a
	// registered node's transport actually dials — after DNS, on every
	// connection — and a refused one fails the dial ("dial refused:
	// 127.0.0.1 is loopback"). A node's host name that resolved to a
	// public address at registration and is later re-pointed at the
	// gateway's own network (DNS rebinding) reaches nothing. Providers
	// from the Caddyfile are the operator's and are not checked.
	NodeAddress func(netip.Addr) error `json:"-"`
	// NodeResolver resolves node host names (nil: the system resolver).
	NodeResolver *net.Resolver `json:"-"`
	// NodePolicy describes NodeAddress and NodeResolver for the pool's Key
	// (functions have no identity to compare): a config that changes the
	// policy gets a new pool.
	NodePolicy string
}

func (tc TransportConfig) withDefaults() TransportConfig {
	if tc.DialTimeout <= 0 {
		tc.DialTimeout = 5 * time.Second
	}
	if tc.TLSHandshakeTimeout <= 0 {
		tc.TLSHandshakeTimeout = 5 * time.Second
	}
	if tc.KeepAlive <= 0 {
		tc.KeepAlive = 30 * time.Second
	}
	if tc.MaxIdleConnsPerHost <= 0 {
		tc.MaxIdleConnsPerHost = 64
	}
	if tc.MaxConnsPerHost < 0 {
		tc.MaxConnsPerHost = 0
	}
	if tc.IdleConnTimeout <= 0 {
		tc.IdleConnTimeout = 90 * time.Second
	}
	return tc
}

func newTransport(tc TransportConfig, node bool) *http.Transport {
	d, proxy := newDialer(tc, node)
	return &http.Transport{
		Proxy:       proxy,
		DialContext: d.DialContext,
		// Providers speak HTTP/2; one multiplexed connection beats many.
		ForceAttemptHTTP2:   true,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: tc.TLSHandshakeTimeout,
		// One host per transport, so the total and per-host caps agree.
		MaxIdleConns:        tc.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost: tc.MaxIdleConnsPerHost,
		MaxConnsPerHost:     tc.MaxConnsPerHost,
		IdleConnTimeout:     tc.IdleConnTimeout,
		// No ResponseHeaderTimeout: the per-attempt context deadline
		// covers the whole exchange, body included.
		ExpectContinueTimeout: time.Second,
	}
}

// newDialer is the dialer of an upstream's connections, HTTP and WebSocket
// alike, with the node address policy applied to a node's.
func newDialer(tc TransportConfig, node bool) (*net.Dialer, func(*http.Request) (*url.URL, error)) {
	d := &net.Dialer{Timeout: tc.DialTimeout, KeepAlive: tc.KeepAlive}
	// Egress proxies are an operator's choice; honour the usual
	// environment variables like every Go HTTP client — except for nodes
	// under an address policy: through a proxy the dial would reach the
	// proxy, and the proxy the node's address unchecked.
	proxy := http.ProxyFromEnvironment
	if node && tc.NodeAddress != nil {
		check := tc.NodeAddress
		d.Resolver = tc.NodeResolver
		d.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return &DialRefusedError{Reason: "unparsable address " + address}
			}
			a, err := netip.ParseAddr(host)
			if err != nil {
				return &DialRefusedError{Reason: host + " is not an IP address"}
			}
			if err := check(a.Unmap()); err != nil {
				return &DialRefusedError{Reason: err.Error()}
			}
			return nil
		}
		proxy = nil
	}
	return d, proxy
}

// DialRefusedError is a dial to a registered node that the address policy
// refused: a fault of the node (its name points where nodes may not be).
type DialRefusedError struct{ Reason string }

func (e *DialRefusedError) Error() string { return "dial refused: " + e.Reason }

// errRedirect is returned for 3xx replies: a JSON-RPC endpoint has no reason
// to redirect a POST, and following one would send our auth headers to
// wherever the redirect points.
var errRedirect = errors.New("upstream answered with a redirect")
