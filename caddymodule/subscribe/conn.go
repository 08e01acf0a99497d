package subscribe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// rpcConn is a JSON-RPC client over one upstream WebSocket: calls are matched
// to their answers by id, eth_subscription notifications are queued in
// order. A reader goroutine reads everything; a pinger keeps the socket
// honest (no pong within the timeout ends it).
type rpcConn struct {
	ws     *websocket.Conn
	wmu    sync.Mutex // one writer at a time (gorilla's rule)
	nextID atomic.Uint64

	mu      sync.Mutex
	pending map[uint64]chan rpcReply

	notes chan note     // notifications, in arrival order
	done  chan struct{} // closed when the connection ended; err says why
	err   error
	once  sync.Once
}

type note struct {
	sub    string
	result json.RawMessage
}

type rpcReply struct {
	Result json.RawMessage
	Err    *RPCError
}

// RPCError is an error object an upstream answered a call with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream error %d: %s", e.Code, truncate(e.Message, 200))
}

func newRPCConn(ws *websocket.Conn, cfg *Config) *rpcConn {
	c := &rpcConn{ws: ws, pending: map[uint64]chan rpcReply{}, notes: make(chan note, cfg.UpstreamQueue), done: make(chan struct{})}
	ws.SetReadLimit(cfg.MaxMessageBytes)
	go c.read(cfg.PingInterval + cfg.PongTimeout)
	go c.ping(cfg.PingInterval, cfg.PongTimeout)
	return c
}

// fail ends the connection once, with err as the reason.
func (c *rpcConn) fail(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
		_ = c.ws.Close()
	})
}

// close ends the connection politely (a close frame, then the socket).
func (c *rpcConn) close() {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.fail(errConnClosed)
}

var errConnClosed = errors.New("subscribe: connection closed")

func (c *rpcConn) read(idle time.Duration) {
	extend := func() { _ = c.ws.SetReadDeadline(time.Now().Add(idle)) }
	extend()
	c.ws.SetPongHandler(func(string) error { extend(); return nil })
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.fail(fmt.Errorf("upstream socket: %w", err))
			return
		}
		extend()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
			Method string          `json:"method"`
			Params struct {
				Subscription string          `json:"subscription"`
				Result       json.RawMessage `json:"result"`
			} `json:"params"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			continue // not JSON-RPC; nothing to do with it
		}
		if m.Method == "eth_subscription" {
			select {
			case c.notes <- note{m.Params.Subscription, m.Params.Result}:
			default:
				// The feed is not keeping up (it only falls behind while
				// filling a gap); starting over elsewhere is safe, the
				// fill-and-dedupe logic covers the switch.
				c.fail(errors.New("upstream notification queue full"))
				return
			}
			continue
		}
		id, err := strconv.ParseUint(string(bytes.Trim(m.ID, `"`)), 10, 64)
		if err != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- rpcReply{m.Result, m.Error}
		}
	}
}

func (c *rpcConn) ping(every, timeout time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(timeout)); err != nil {
				c.fail(fmt.Errorf("upstream ping: %w", err))
				return
			}
		}
	}
}

// call sends one request and waits for its answer; out may be nil.
func (c *rpcConn) call(ctx context.Context, out any, method string, params ...any) error {
	id := c.nextID.Add(1)
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	ch := make(chan rpcReply, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	c.wmu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.ws.SetWriteDeadline(dl)
	}
	err = c.ws.WriteMessage(websocket.TextMessage, body)
	c.wmu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("upstream socket write: %w", err))
		return c.err
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return r.Err
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				return fmt.Errorf("%s: unreadable result: %w", method, err)
			}
		}
		return nil
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}
