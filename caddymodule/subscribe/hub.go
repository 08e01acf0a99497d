package subscribe

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Subscription kinds.
const (
	KindNewHeads     = "newHeads"
	KindLogs         = "logs"
	KindPendingTxs   = "newPendingTransactions"
	DefaultBuffer    = 64
	defaultStallFor  = 30 * time.Second // chains without a known block time
	minStall         = 5 * time.Second
	defaultStallBeat = 10
)

// Errors of Subscribe (match with errors.Is; the caller maps them to JSON-RPC
// errors) and reasons a Sub ends (Sub.Err).
var (
	ErrUnknownChain   = errors.New("subscribe: chain not served")
	ErrKindNotOffered = errors.New("subscribe: subscription kind not offered")
	ErrBadFilter      = errors.New("subscribe: invalid logs filter")
	ErrNoUpstream     = errors.New("subscribe: no upstream with a WebSocket URL could take the subscription")
	ErrSlowReader     = errors.New("subscribe: subscriber's buffer full (slow reader)")
	ErrHubClosed      = errors.New("subscribe: hub closed (reload or shutdown)")
)

// Notification is one eth_subscription notification.
type Notification struct {
	// Result is the "result" of the upstream's eth_subscription params,
	// passed through (a gap filled after failover is shaped the same way).
	Result json.RawMessage
	// ServedBy is the upstream that produced it; its revenue goes there,
	// once per upstream message: Credit decides which subscriber's copy
	// earns it (the others are the platform's fan-out).
	ServedBy events.ServedBy
	// Credit is shared by every subscriber's copy of one upstream message
	// (set by the feed that fans it out).
	Credit *Credit
}

// Credit is one upstream message's revenue for its upstream: taken by the
// first copy delivered, so a notification fanned out to N subscribers
// credits its upstream once, not N times.
type Credit struct{ taken atomic.Bool }

// Take reports whether this copy earns the upstream's credit (the first to
// ask). A nil Credit (a notification no feed fanned out) always does.
func (c *Credit) Take() bool { return c == nil || c.taken.CompareAndSwap(false, true) }

// Config of a Hub. Zero fields take the defaults.
type Config struct {
	// Pools are the chains' upstream pools; a chain without one is unknown.
	Pools map[uint64]*upstream.Pool
	// StallBlocks: a newHeads subscription that got no head for this many
	// of the chain's block times (shared/chains) counts as stalled and moves
	// to another upstream (default 10). StallAfter, when set, overrides the
	// product for every chain (tests, or chains with irregular blocks).
	StallBlocks int
	StallAfter  time.Duration
	// Chains is the gateway's chain table (block times).
	Chains *chains.Table
	// PingInterval and PongTimeout keep upstream sockets honest: a ping
	// every PingInterval (default 15 s), and a socket that has not been
	// heard from for PingInterval+PongTimeout (default 10 s) is dead.
	PingInterval time.Duration
	PongTimeout  time.Duration
	// CallTimeout bounds dial + eth_subscribe and each gap-filling call
	// (default 10 s).
	CallTimeout time.Duration
	// MaxMessageBytes caps one message read from an upstream (default 4 MiB).
	MaxMessageBytes int64
	// UpstreamQueue is how many notifications may wait between an upstream
	// socket and the fan-out (default 4096).
	UpstreamQueue int
	// MaxGapFill is the most heads filled from eth_getBlockByNumber (and
	// blocks of eth_getLogs) after a switch (default 256); a longer outage
	// resumes at the head with a gap rather than flooding subscribers.
	MaxGapFill uint64
	// FillPatience is how long a gap fill waits for subscribers' buffers
	// to have room before it delivers anyway (and a still-full buffer ends
	// its Sub as a slow reader); default 1 s. Live notifications never wait.
	FillPatience time.Duration
	// LogWindow is how many (blockHash, logIndex) pairs are remembered to
	// drop duplicate logs (default 4096).
	LogWindow int
	// RetryMin and RetryMax bound the wait between rounds when every
	// upstream with a ws URL failed (default 250 ms, 10 s).
	RetryMin, RetryMax time.Duration
	Logger             *zap.Logger
}

func (c Config) withDefaults() Config {
	if c.StallBlocks <= 0 {
		c.StallBlocks = defaultStallBeat
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 15 * time.Second
	}
	if c.PongTimeout <= 0 {
		c.PongTimeout = 10 * time.Second
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 10 * time.Second
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 4 << 20
	}
	if c.UpstreamQueue <= 0 {
		c.UpstreamQueue = 4096
	}
	if c.MaxGapFill == 0 {
		c.MaxGapFill = 256
	}
	if c.FillPatience <= 0 {
		c.FillPatience = time.Second
	}
	if c.LogWindow <= 0 {
		c.LogWindow = 4096
	}
	if c.RetryMin <= 0 {
		c.RetryMin = 250 * time.Millisecond
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Chains == nil {
		c.Chains = chains.Builtin()
	}
	return c
}

// stallAfter is how long a newHeads feed of chain may go without a head.
func (c *Config) stallAfter(chain uint64) time.Duration {
	if c.StallAfter > 0 {
		return c.StallAfter
	}
	if ch, ok := c.Chains.ByID(chain); ok && ch.BlockTime > 0 {
		// Floored: on a fast chain a few quiet blocks are no outage.
		return max(time.Duration(c.StallBlocks)*ch.BlockTime, minStall)
	}
	return defaultStallFor
}

// Hub holds the upstream subscriptions of one gateway config. All methods
// are safe for concurrent use.
type Hub struct {
	cfg Config
	log *zap.Logger

	mu     sync.Mutex // guards feeds and closed; taken before any feed's mu
	feeds  map[feedKey]*feed
	closed bool
	wg     sync.WaitGroup
}

// New builds a hub over the pools. Nothing is dialled until the first
// Subscribe.
func New(cfg Config) *Hub {
	cfg = cfg.withDefaults()
	return &Hub{cfg: cfg, log: cfg.Logger, feeds: map[feedKey]*feed{}}
}

// Subscribe adds a subscriber to the (chain, kind, filter) feed, opening the
// upstream subscription if it is the first. kind is newHeads, logs or
// newPendingTransactions; params is the logs filter object (nil for every
// log), or for newPendingTransactions an optional boolean (full
// transactions), and nil otherwise. buffer is the Sub's channel capacity
// (DefaultBuffer when <= 0); after a failover the heads (or logs) the old
// upstream missed arrive in a burst of up to Config.MaxGapFill, which the hub
// paces to the subscribers' buffers for up to Config.FillPatience. The first subscriber of a feed waits until an
// upstream accepted the subscription (at most about Config.CallTimeout per
// upstream tried).
func (h *Hub) Subscribe(chain uint64, kind string, params json.RawMessage, buffer int) (*Sub, error) {
	pool := h.cfg.Pools[chain]
	if pool == nil {
		return nil, fmt.Errorf("%w: %d", ErrUnknownChain, chain)
	}
	key := feedKey{chain: chain, kind: kind}
	switch kind {
	case KindNewHeads:
		if !emptyParams(params) {
			return nil, fmt.Errorf("%w: newHeads takes no parameters", ErrBadFilter)
		}
	case KindPendingTxs:
		switch p := string(trimSpace(params)); p {
		case "", "null", "false":
		case "true":
			key.filter = p
		default:
			return nil, fmt.Errorf("%w: newPendingTransactions takes an optional boolean", ErrBadFilter)
		}
	case KindLogs:
		f, err := canonicalFilter(params)
		if err != nil {
			return nil, err
		}
		key.filter = string(f)
	default:
		return nil, fmt.Errorf("%w: %q (newHeads, logs, newPendingTransactions)", ErrKindNotOffered, truncate(kind, 40))
	}
	if len(pool.WSUpstreams()) == 0 {
		return nil, fmt.Errorf("%w: chain %d has none", ErrNoUpstream, chain)
	}
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &Sub{ch: make(chan Notification, buffer)}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrHubClosed
	}
	f := h.feeds[key]
	if f == nil {
		f = newFeed(h, key, pool)
		h.feeds[key] = f
		h.wg.Add(1)
		go f.run()
	}
	s.f = f
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	h.mu.Unlock()

	<-f.ready // run closes it on success or failure, and Close cancels run
	if f.startErr != nil {
		s.Close()
		return nil, f.startErr
	}
	return s, nil
}

// Close ends every Sub with ErrHubClosed and every upstream subscription,
// and waits for the upstream sockets to close (reload or shutdown).
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	feeds := h.feeds
	h.feeds = map[feedKey]*feed{}
	for _, f := range feeds {
		f.mu.Lock()
		for s := range f.subs {
			delete(f.subs, s)
			s.end(ErrHubClosed)
		}
		f.mu.Unlock()
		f.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// release drops f from the hub when its last subscriber left, which stops
// its upstream subscription.
func (h *Hub) release(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.mu.Lock()
	empty := len(f.subs) == 0
	f.mu.Unlock()
	if empty {
		if h.feeds[f.key] == f {
			delete(h.feeds, f.key)
		}
		f.cancel()
	}
}

// Sub is one subscriber's view of a feed.
type Sub struct {
	f   *feed
	ch  chan Notification
	err atomic.Pointer[error]
}

// C delivers the notifications; it is closed when the subscription ends.
func (s *Sub) C() <-chan Notification { return s.ch }

// Err says why C was closed: ErrSlowReader, ErrHubClosed, or nil after the
// subscriber's own Close (and while C is open).
func (s *Sub) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// end closes C with reason err. The caller holds s.f.mu and has removed s
// from the feed, so it runs once.
func (s *Sub) end(err error) {
	if err != nil {
		s.err.Store(&err)
	}
	close(s.ch)
}

// Close ends the subscription; the last Close of a feed unsubscribes
// upstream. Calling it again does nothing.
func (s *Sub) Close() {
	f := s.f
	f.mu.Lock()
	_, ok := f.subs[s]
	if ok {
		delete(f.subs, s)
		s.end(nil)
	}
	f.mu.Unlock()
	if ok {
		f.h.release(f)
	}
}

// UpstreamState is an upstream's WebSocket state for /rpc/health.
type UpstreamState struct {
	Connected     bool `json:"connected"`
	Subscriptions int  `json:"subscriptions"` // upstream subscriptions open on it now
}

// Upstreams reports, per upstream name of chain, the subscriptions the hub
// has open on it. Upstreams with none are absent.
func (h *Hub) Upstreams(chain uint64) map[string]UpstreamState {
	out := map[string]UpstreamState{}
	if h == nil {
		return out
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, f := range h.feeds {
		if k.chain != chain {
			continue
		}
		if name, ok := f.connectedTo(); ok {
			st := out[name]
			st.Connected = true
			st.Subscriptions++
			out[name] = st
		}
	}
	return out
}

func emptyParams(p json.RawMessage) bool {
	t := string(trimSpace(p))
	return t == "" || t == "null" || t == "{}"
}

func trimSpace(p json.RawMessage) []byte {
	i, j := 0, len(p)
	for i < j && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	for j > i && (p[j-1] == ' ' || p[j-1] == '\t' || p[j-1] == '\n' || p[j-1] == '\r') {
		j--
	}
	return p[i:j]
}
