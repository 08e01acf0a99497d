package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// member is an upstream inside a pool, with everything kept about it. The
// breaker, stats and health live here so that SetNodes can carry them over
// for nodes that stay.
type member struct {
	up     Upstream // normalized; Weight is read from weight instead
	ref    Ref
	host   string // scheme://host, the only form shown outside
	url    string
	header http.Header
	red    *redactor
	tr     *http.Transport
	ws     *wsEndpoint // nil when the upstream has no WebSocket URL
	// finalized is the "finalized" block this provider last reported
	// (pools with Config.FinalizedTag).
	finalized atomic.Uint64
	// hostWallets: wallets with nodes on this node's endpoint host (its
	// share is divided among them; countWalletNodes).
	hostWallets atomic.Int32
	// probed is set once a probe of the member has begun: the round that
	// SetNodes kicks probes only members no round has reached yet.
	probed atomic.Bool

	// br is swapped whole by an operator's reset (gobreaker has no reset);
	// a call in flight reports to the breaker it was allowed by.
	br          atomic.Pointer[breaker]
	brCfg       BreakerConfig
	onBreaker   func(m *member, from, to BreakerState)
	halfOpenMax uint32
	stats       *stats
	health      *health

	weight       atomic.Uint64         // math.Float64bits
	limitedUntil atomic.Int64          // unix ns; rate-limit back-off
	noBatch      atomic.Bool           // probes: the upstream rejects batches
	retired      atomic.Bool           // removed from the pool
	trust        atomic.Pointer[trust] // its wallet's verified history (trust.go); replaced whole by a quarantine
	own          atomic.Int64          // this node's own matches (NodeProbation)
	hedgeDelay   atomic.Int64          // ns: its latency quantile, the wait before a hedge (hedge.go)
	hedgeAt      atomic.Int64          // unix ns when hedgeDelay was computed
	caps         capabilities          // what probing found it can answer
	logs         logsRange             // the widest eth_getLogs range probing found it serves
	limitCheck   limitCheck            // the latest check of a rate limit a reply claimed (limit.go)
	checks       checkBook             // what became of its sampled answers; its capacity factor (checks.go)
}

func newMember(u Upstream, parsed *url.URL, cfg *Config, onBreaker func(m *member, from, to BreakerState)) *member {
	h := make(http.Header, len(u.Headers)+3)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "tollgate-gateway")
	for k, v := range u.Headers {
		h.Set(k, v)
	}
	tr := newTransport(cfg.Transport, u.Kind == KindNode)
	m := &member{
		up:          u,
		ref:         Ref{Name: u.Name, Kind: u.Kind, NodeID: u.NodeID},
		host:        redactURL(parsed),
		url:         parsed.String(),
		header:      h,
		red:         newRedactor(parsed, u.Headers),
		tr:          tr,
		halfOpenMax: cfg.Breaker.HalfOpenMaxRequests,
		stats:       newStats(cfg.LatencySamples),
		health:      newHealth(cfg.ProbeInterval > 0),
	}
	m.ws = newWSEndpoint(u, cfg.Transport)
	m.brCfg, m.onBreaker = cfg.Breaker, onBreaker
	m.br.Store(m.newBreaker())
	m.setWeight(u.Weight)
	tc := cfg.Trust
	if u.Kind != KindNode {
		tc.Off = true // providers are trusted
	}
	m.trust.Store(newTrust(&tc, false))
	if u.Kind == KindNode {
		m.checks.init()
	}
	return m
}

// newBreaker builds a breaker for m whose state changes are reported only
// while it is m's current one: after a reset, calls still in flight on the
// replaced breaker must not log changes of a breaker nobody consults.
func (m *member) newBreaker() *breaker {
	var b *breaker
	b = newBreaker(m.up.Name, m.brCfg, func(from, to BreakerState) {
		if m.onBreaker != nil && m.br.Load() == b {
			m.onBreaker(m, from, to)
		}
	})
	return b
}

func (m *member) setWeight(w float64) { m.weight.Store(math.Float64bits(w)) }
func (m *member) getWeight() float64  { return math.Float64frombits(m.weight.Load()) }

// sameEndpoint reports whether u is the endpoint m talks to. A node that
// changed URL or credentials is a new endpoint and starts afresh.
func (m *member) sameEndpoint(u Upstream, parsed *url.URL) bool {
	return m.url == parsed.String() && m.up.NodeID == u.NodeID && maps.Equal(m.up.Headers, u.Headers) && m.up.WSURL == u.WSURL &&
		m.up.Operator == u.Operator
}

func (m *member) rateLimited(now time.Time) bool {
	return now.UnixNano() < m.limitedUntil.Load()
}

func (m *member) backOff(d time.Duration, now time.Time) {
	until := now.Add(d).UnixNano()
	for {
		cur := m.limitedUntil.Load()
		if cur >= until || m.limitedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// exchange is one HTTP round trip to an upstream.
type exchange struct {
	status  int
	header  http.Header
	body    []byte
	latency time.Duration
	// sent: the request headers were written, so the upstream may have
	// the request. False only when the failure happened before that
	// (dial, TLS handshake), which is what makes failing over safe for
	// calls that must not be replayed.
	sent     bool
	err      error // transport failure (connect, timeout, body read)
	tooLarge bool  // the reply exceeded the size limit
}

func (m *member) post(ctx context.Context, body []byte, maxBytes int64) exchange {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return exchange{err: err}
	}
	req.Header = m.header.Clone()
	if host := m.header.Get("Host"); host != "" {
		req.Host = host
	}
	start := time.Now()
	// The transport directly: the client adds nothing here (redirects are
	// never followed, there is no cookie jar or client timeout) but costs
	// allocations per call (make bench profile).
	resp, err := m.tr.RoundTrip(req)
	if err != nil {
		return exchange{err: err, sent: wrote.Load(), latency: time.Since(start)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	x := exchange{status: resp.StatusCode, header: resp.Header, sent: true, latency: time.Since(start)}
	switch {
	case err != nil:
		x.err = fmt.Errorf("reading reply: %w", err)
	case int64(len(data)) > maxBytes:
		x.tooLarge = true
	default:
		x.body = data
	}
	return x
}

// describe turns a transport error into text safe to store and log. A
// url.Error quotes the full request URL, which may contain an API key, so it
// is rebuilt around the host only, and the rest is scrubbed of the
// upstream's secrets.
func (m *member) describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = fmt.Errorf("%s %s: %w", ue.Op, m.host, ue.Err)
	}
	return m.red.redact(err.Error())
}
