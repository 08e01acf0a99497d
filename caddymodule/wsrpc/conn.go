package wsrpc

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// frame is one message queued for the client; done learns whether it was
// written (a charged notification is refunded when it was not).
type frame struct {
	data []byte
	done func(delivered bool)
}

// conn is one socket. Its goroutines: the reader (Serve's), the writer (the
// only one writing data frames), one per call being served (at most
// max_in_flight) and one pump per client subscription.
type conn struct {
	s     *Server
	ws    *websocket.Conn
	who   payment.Caller // who asks, read once from the handshake (template)
	chain uint64
	ip    netip.Addr

	ctx    context.Context // the calls' context: cancelled when the socket ends
	cancel context.CancelFunc

	// The send buffer: out holds queued frames; reserved slots are held
	// by notifications being charged, so a paid notification always finds
	// room. qmu guards reserved, stopped and sends on out.
	out      chan frame
	qmu      sync.Mutex
	reserved int
	stopped  bool

	quit     chan struct{} // closed by shutdown
	once     sync.Once
	code     int
	reason   string
	final    []byte // the last data message (tollgate_closing), or nil
	flush    bool   // write what is queued before final (it is paid for)
	ended    chan struct{}
	inflight chan struct{}
	lastSeen atomic.Int64 // unix nanoseconds of the last message from the client

	mu   sync.Mutex
	subs map[string]*clientSub
}

func newConn(s *Server, ws *websocket.Conn, r *http.Request, chain uint64) *conn {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c := &conn{s: s, ws: ws, chain: chain, ip: web.ClientIP(r), ctx: ctx, cancel: cancel,
		out: make(chan frame, s.cfg.Limits.SendBuffer), quit: make(chan struct{}), ended: make(chan struct{}),
		inflight: make(chan struct{}, s.cfg.Limits.MaxInFlight), subs: map[string]*clientSub{}}
	c.who = payment.CallerOf(template(r, ctx))
	// A sign-in lasts as long as the socket: checked and its nonce spent
	// once, by the first call served, then every call and notification is
	// drawn from the wallet's bundle (payment.Caller.HoldSignIn).
	c.who.HoldSignIn()
	c.lastSeen.Store(time.Now().UnixNano())
	return c
}

// hopHeaders belong to the handshake, not to the calls made over it.
var hopHeaders = []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions",
	"Sec-Websocket-Protocol", "Origin"}

// template is the handshake as the request every call over the socket is
// served as: a POST to the same path with the same credentials — the
// X-API-Key header, or the key query parameter (browsers cannot set
// headers on a WebSocket), a Sign-In-With-X header (held for the socket's
// life: newConn) — and the caller's address. An x402 payment header is dropped: a payment pays for one
// request, and replaying it on every message would only be refused.
func template(r *http.Request, ctx context.Context) *http.Request {
	t := r.Clone(ctx)
	t.Method = http.MethodPost
	t.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		t.Header.Del(h)
	}
	t.Header.Del("PAYMENT-SIGNATURE")
	t.Header.Del("X-PAYMENT")
	t.Header.Set("Content-Type", "application/json")
	q := t.URL.Query()
	if k := q.Get("key"); k != "" {
		if _, keyed := web.APIKey(t); !keyed {
			t.Header.Set(web.APIKeyHeader, k)
		}
		q.Del("key")
		u := *t.URL
		u.RawQuery = q.Encode()
		t.URL = &u
		t.RequestURI = u.RequestURI()
	}
	return t
}

func (c *conn) run() {
	lim := c.s.cfg.Limits
	pongWait := 2 * time.Duration(lim.PingInterval)
	c.ws.SetReadLimit(c.s.cfg.MaxMessageBytes)
	_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		select {
		case <-c.quit:
		default:
			_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
		}
		return nil
	})
	go c.writeLoop()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			code, reason := CloseNormal, "closed"
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				// gorilla has sent 1009 already; this ends the rest.
				code, reason = CloseTooBig, "message larger than "+strconv.FormatInt(c.s.cfg.MaxMessageBytes, 10)+" bytes"
			case websocket.IsUnexpectedCloseError(err, CloseNormal, CloseGoingAway, websocket.CloseNoStatusReceived):
				code, reason = CloseGoingAway, "connection lost"
			}
			c.shutdown(code, reason, nil, false)
			break
		}
		select {
		case <-c.quit:
			continue // ending: read on until the client's close (or the deadline)
		default:
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
		c.lastSeen.Store(time.Now().UnixNano())
		select {
		case c.inflight <- struct{}{}:
		case <-c.quit:
			continue
		}
		go func() {
			defer func() { <-c.inflight }()
			c.handle(data)
		}()
	}
	<-c.ended
	c.cancel()
	c.closeSubs()
	_ = c.ws.Close()
}

// reserve holds a slot of the send buffer; false when it is full (or the
// socket is ending).
func (c *conn) reserve() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.stopped || len(c.out)+c.reserved >= cap(c.out) {
		return false
	}
	c.reserved++
	return true
}

func (c *conn) unreserve() {
	c.qmu.Lock()
	c.reserved--
	c.qmu.Unlock()
}

// sendReserved queues f in the slot reserve held.
func (c *conn) sendReserved(f frame) {
	c.qmu.Lock()
	c.reserved--
	if c.stopped {
		c.qmu.Unlock()
		if f.done != nil {
			f.done(false)
		}
		return
	}
	c.out <- f // room: the slot was reserved
	c.qmu.Unlock()
}

// reply queues an answer; a client whose buffer is full is cut off.
func (c *conn) reply(b []byte) {
	if len(b) == 0 {
		return
	}
	if !c.reserve() {
		c.slow()
		return
	}
	c.sendReserved(frame{data: b})
}

func (c *conn) slow() {
	metrics.WSNotifications.WithLabelValues("dropped_slow_reader").Inc()
	c.shutdown(CloseSlowReader, "slow reader: the send buffer of "+strconv.Itoa(cap(c.out))+" messages is full", nil, false)
}

// shutdown ends the socket once: the writer sends final (if any) and the
// close frame with code. flush writes what is queued first.
func (c *conn) shutdown(code int, reason string, final []byte, flush bool) {
	c.once.Do(func() {
		// A close frame's reason is at most 123 bytes (RFC 6455 5.5);
		// tollgate_closing carries the whole story.
		for len(reason) > 120 {
			_, size := utf8.DecodeLastRuneInString(reason)
			reason = reason[:len(reason)-size]
		}
		c.code, c.reason, c.final, c.flush = code, reason, final, flush
		metrics.WSClosed.WithLabelValues(strconv.Itoa(code)).Inc()
		close(c.quit)
	})
}

func (c *conn) writeLoop() {
	defer close(c.ended)
	lim := c.s.cfg.Limits
	wt := time.Duration(lim.WriteTimeout)
	tick := time.NewTicker(min(time.Duration(lim.PingInterval), time.Duration(lim.IdleTimeout)/2))
	defer tick.Stop()
	broken := false
	write := func(f frame) {
		ok := false
		if !broken {
			_ = c.ws.SetWriteDeadline(time.Now().Add(wt))
			ok = c.ws.WriteMessage(websocket.TextMessage, f.data) == nil
			broken = !ok
		}
		if f.done != nil {
			f.done(ok)
		}
	}
	lastPing := time.Now()
loop:
	for {
		select {
		case f := <-c.out:
			write(f)
			if broken {
				// A write that did not finish within write_timeout: the
				// client does not read.
				c.shutdown(CloseSlowReader, "slow reader: a write took longer than "+wt.String(), nil, false)
				break loop
			}
		case now := <-tick.C:
			if c.idle(now) {
				c.shutdown(CloseIdle, "idle: no subscription and no message for "+time.Duration(lim.IdleTimeout).String(), nil, false)
				break loop
			}
			if now.Sub(lastPing) >= time.Duration(lim.PingInterval) {
				lastPing = now
				if c.ws.WriteControl(websocket.PingMessage, nil, now.Add(wt)) != nil {
					c.shutdown(CloseGoingAway, "connection lost", nil, false)
					break loop
				}
			}
		case <-c.quit:
			break loop
		}
	}
	c.qmu.Lock()
	c.stopped = true
	c.qmu.Unlock()
	for {
		select {
		case f := <-c.out:
			if c.flush {
				write(f)
			} else if f.done != nil {
				f.done(false)
			}
			continue
		default:
		}
		break
	}
	if c.final != nil {
		write(frame{data: c.final})
	}
	deadline := time.Now().Add(time.Second)
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(c.code, c.reason), deadline)
	// The reader ends when the client answers the close, or here.
	_ = c.ws.SetReadDeadline(time.Now().Add(2 * time.Second))
}

// idle: no subscription, no call in flight and no message for idle_timeout.
func (c *conn) idle(now time.Time) bool {
	if now.Sub(time.Unix(0, c.lastSeen.Load())) < time.Duration(c.s.cfg.Limits.IdleTimeout) || len(c.inflight) > 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs) == 0
}
