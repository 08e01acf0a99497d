package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"
)

// wsEndpoint is how an upstream is reached over WebSocket: its URL, the
// handshake headers and a dialer with the same address policy as its HTTP
// transport (a registered node's ws URL that resolves to a forbidden address
// reaches nothing, at every dial).
type wsEndpoint struct {
	url    string
	host   string // scheme://host, the only form shown outside
	header http.Header
	dialer *websocket.Dialer
	red    *redactor
}

func newWSEndpoint(u Upstream, tc TransportConfig) *wsEndpoint {
	if u.WSURL == "" {
		return nil
	}
	parsed, err := url.Parse(u.WSURL)
	if err != nil { // normalize checked it
		return nil
	}
	h := make(http.Header, len(u.Headers)+1)
	h.Set("User-Agent", "tollgate-gateway")
	for k, v := range u.Headers {
		h.Set(k, v)
	}
	d, proxy := newDialer(tc, u.Kind == KindNode)
	return &wsEndpoint{
		url:    parsed.String(),
		host:   redactURL(parsed),
		header: h,
		red:    newRedactor(parsed, u.Headers),
		dialer: &websocket.Dialer{
			NetDialContext:   d.DialContext,
			Proxy:            proxy,
			HandshakeTimeout: tc.DialTimeout + tc.TLSHandshakeTimeout,
			TLSClientConfig:  &tls.Config{MinVersion: tls.VersionTLS12},
			ReadBufferSize:   16 << 10,
			WriteBufferSize:  4 << 10,
		},
	}
}

// WSTarget is an upstream that offers JSON-RPC over WebSocket, as the
// subscription hub sees it: who it is (revenue for what it delivers goes to
// Ref().ServedBy()) and a Dial that keeps its URL and headers inside this
// package.
type WSTarget struct{ m *member }

// Ref names the upstream.
func (t WSTarget) Ref() Ref { return t.m.ref }

// Host is scheme://host of the ws URL (path and query may hold a key).
func (t WSTarget) Host() string { return t.m.ws.host }

// Dial opens the WebSocket. Errors never contain the URL's path, query or
// the headers.
func (t WSTarget) Dial(ctx context.Context) (*websocket.Conn, error) {
	ws := t.m.ws
	c, resp, err := ws.dialer.DialContext(ctx, ws.url, ws.header.Clone())
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		var refused *DialRefusedError
		if errors.As(err, &refused) {
			return nil, refused
		}
		if resp != nil {
			return nil, fmt.Errorf("ws handshake with %s: HTTP %d", ws.host, resp.StatusCode)
		}
		return nil, errors.New(ws.red.redact(fmt.Sprintf("ws dial %s: %v", ws.host, err)))
	}
	return c, nil
}

// PickWS returns the upstream a new subscription should go to, skipping the
// names in exclude: selection as for a call (Pick), among the upstreams that
// have a ws URL. A registered node serves no feed while trust is on: a
// notification is pushed, not asked for, so there is no pinned question to
// replay and no answer to sample before delivery — until feeds are checked
// (heads by hash, logs against the provider's logs of their block), feeds
// stay on providers (docs/node-market.md). With trust off (an operator's
// own nodes) nodes serve feeds as before.
func (p *Pool) PickWS(exclude map[string]bool) (WSTarget, bool) {
	m := p.pick(exclude, false, "", filter{ws: true, providersOnly: !p.cfg.Trust.Off})
	if m == nil {
		return WSTarget{}, false
	}
	return WSTarget{m}, true
}

// WSUpstreams lists the upstreams of the pool that have a ws URL, in
// Snapshot order.
func (p *Pool) WSUpstreams() []Ref {
	var out []Ref
	for _, m := range p.list() {
		if m.ws != nil {
			out = append(out, m.ref)
		}
	}
	return out
}

// Serves reports whether the named upstream is still a live member of the
// pool (not removed by a registry refresh): a feed on one that left moves.
func (p *Pool) Serves(name string) bool {
	m := p.member(name)
	return m != nil && !m.retired.Load()
}
