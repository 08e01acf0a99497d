package upstream

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
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

func newTransport(tc TransportConfig) *http.Transport {
	d := &net.Dialer{Timeout: tc.DialTimeout, KeepAlive: tc.KeepAlive}
	return &http.Transport{
		// Egress proxies are an operator's choice; honour the usual
		// environment variables like every Go HTTP client.
		Proxy:       http.ProxyFromEnvironment,
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

// errRedirect is returned for 3xx replies: a JSON-RPC endpoint has no reason
// to redirect a POST, and following one would send our auth headers to
// wherever the redirect points.
var errRedirect = errors.New("upstream answered with a redirect")
