package wsrpc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Ticket closes the books of one charged call once its fate is known:
// delivered (revenue for by) or not (refunded). credit, for a copy of an
// upstream's notification (nil otherwise), takes the upstream's one credit
// for that message (subscribe.Credit.Take): the ticket calls it only for a
// delivered copy that pays, and a copy that does not take it earns the
// platform's fan-out.
type Ticket func(by events.ServedBy, delivered bool, credit func() bool)

// Refusal is a payer's typed "no" (caddymodule/payment.Refusal) as a socket
// renders it: its HTTP status picks the close code and reason word, and
// its JSON-RPC error is the one HTTP and MCP callers get too.
type Refusal interface {
	Status() int
	JSONRPC() *jsonrpc.Error
}

// Answer is what serving a message came to: the answers (one per item of
// the message, and encoded with the status POST would send), or the
// refusal that answered none.
type Answer struct {
	Resps   []jsonrpc.Response
	Body    []byte
	Status  int
	Refusal Refusal
}

// Sub is one client's view of a hub subscription (caddymodule/subscribe).
type Sub interface {
	C() <-chan Notification
	Err() error
	Close()
}

// Backend is what a socket needs from the gateway; caddymodule builds it
// from the core (caddymodule/core).
type Backend struct {
	// Serve serves msg (one parsed JSON-RPC message; who asks is read once
	// from the handshake, with its credentials) on chain exactly as POST
	// would, in process. ctx ends with the socket.
	Serve func(ctx context.Context, who *payment.Caller, chain uint64, msg *jsonrpc.Message) Answer
	// Charge books one call of method on chain for who's payer (its weight
	// at the flat price) and returns the ticket that settles it, or the
	// payer's typed refusal.
	Charge func(ctx context.Context, who *payment.Caller, chain uint64, method string) (Ticket, Refusal)
	// Subscribe opens a client subscription on the hub; nil when the
	// gateway offers none.
	Subscribe func(chain uint64, kind string, params json.RawMessage, buffer int) (Sub, error)
	// EndCode is the close code for a subscription the hub ended with err
	// (CloseSlowReader when its buffer filled, CloseGoingAway when the hub
	// closed); nil: CloseInternal.
	EndCode func(error) int
	// SubscribeError maps a hub refusal to the caller's JSON-RPC error code
	// (default -32603).
	SubscribeError func(error) int
}

// Config is a socket server's setup.
type Config struct {
	Backend
	Limits          config.WebSocket // with defaults
	MaxMessageBytes int64            // the module's max body
	MaxBatch        int
	Log             *zap.Logger
}

// Server holds a configuration's open sockets so that Close (Caddy's
// Cleanup on a reload or shutdown) can end them cleanly with 1001.
type Server struct {
	cfg   Config
	mu    sync.Mutex
	conns map[*conn]struct{}
	perIP map[netip.Addr]int // client subscriptions per address
	done  bool
	began atomic.Bool // a handshake reached Serve
}

// New makes a server.
func New(cfg Config) *Server {
	cfg.Limits = cfg.Limits.WithDefaults()
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Server{cfg: cfg, conns: map[*conn]struct{}{}, perIP: map[netip.Addr]int{}}
}

// IsUpgrade reports whether r asks for a WebSocket.
func IsUpgrade(r *http.Request) bool { return websocket.IsWebSocketUpgrade(r) }

// hijacker finds the connection's http.Hijacker under Caddy's response
// writer wrappers (they Unwrap); gorilla/websocket needs it directly.
func hijacker(w http.ResponseWriter) http.ResponseWriter {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return w
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// Serve upgrades r to a socket on chain and serves it until it closes. A
// failed handshake is answered with a JSON 400.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, chain uint64) {
	if !s.began.Load() {
		s.began.Store(true)
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done {
		w.Header().Set("Retry-After", "1")
		web.Error(w, http.StatusServiceUnavailable, "shutting_down", "this gateway configuration is being replaced; reconnect")
		return
	}
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		// Credentials are headers or a key the caller puts in the URL,
		// never cookies: any origin may open a socket, like any origin may
		// POST to /rpc (CORS *).
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			web.Error(w, status, "bad_handshake", reason.Error())
		},
	}
	ws, err := up.Upgrade(hijacker(w), r, nil)
	if err != nil {
		return
	}
	c := newConn(s, ws, r, chain)
	if !s.add(c) {
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseGoingAway, "reconnect"), time.Now().Add(time.Second))
		_ = ws.Close()
		return
	}
	metrics.WSConnections.Inc()
	defer func() {
		metrics.WSConnections.Dec()
		s.remove(c)
	}()
	c.run()
}

func (s *Server) add(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) remove(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// takeSub counts one more client subscription of ip against the per-IP cap.
func (s *Server) takeSub(ip netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perIP[ip] >= s.cfg.Limits.MaxSubscriptionsPerIP {
		return false
	}
	s.perIP[ip]++
	return true
}

func (s *Server) giveSub(ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// Close ends every socket with 1001 (going away) and waits, up to ctx, for
// them to finish; later handshakes are refused (503).
func (s *Server) Close(ctx context.Context) {
	s.mu.Lock()
	s.done = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.shutdown(CloseGoingAway, "the gateway is reloading or shutting down; reconnect", nil, false)
	}
	for _, c := range conns {
		select {
		case <-c.ended:
		case <-ctx.Done():
			return
		}
	}
}

// Began reports whether a handshake ever reached Serve: a socket may be
// open or opening.
func (s *Server) Began() bool { return s.began.Load() }

// Open is the number of open sockets.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Subscriptions reports whether eth_subscribe is offered.
func (s *Server) Subscriptions() bool { return s.cfg.Subscribe != nil }
