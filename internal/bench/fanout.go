package main

// The WebSocket fan-out row: one upstream newHeads subscription
// fanned out by our gateway to BENCH_WS_SUBSCRIBERS (1,000) sockets, each
// notification metered from a funded key. The head source is closed-loop: a
// head goes out only when every subscriber has received the one
// fanoutDepth before it, so the figure is what the gateway sustains, not
// what the bench offers. CPU is the gateway's and Redis' over the measured
// window, per delivered notification.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"
)

// fanoutDepth heads may be on their way at once: enough that the gateway is
// never idle waiting for the slowest reader, few enough that no reader's
// buffer (send_buffer) fills.
const fanoutDepth = 8

// fanoutCaddyfile is gatewayCaddyfile with a per-IP subscription cap above
// the subscriber count (every subscriber dials from 127.0.0.1) and the
// provider's WebSocket URL pointing at the head source.
var fanoutCaddyfile = strings.Replace(gatewayCaddyfile, `
			chain 137 {
				provider bench http://{UPSTREAM}
			}
`, `
			websocket {
				max_subscriptions_per_ip 100000
			}
			chain 137 {
				provider bench http://{UPSTREAM} {
					ws ws://{WS_UPSTREAM}
				}
			}
`, 1)

// wsHeads is the head source: a JSON-RPC-over-WebSocket server that answers
// what the gateway's hub asks (eth_subscribe, eth_unsubscribe,
// eth_blockNumber, eth_getBlockByNumber, eth_chainId) and pushes heads to
// every subscription on emit.
type wsHeads struct {
	srv        *http.Server
	addr       string
	subscribes atomic.Int64 // eth_subscribe calls received: the fan-out claim is that this stays 1
	head       atomic.Uint64

	mu    sync.Mutex
	conns map[*websocket.Conn]*sync.Mutex // subscribed sockets and their write locks
}

func startWSHeads() (*wsHeads, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &wsHeads{addr: l.Addr().String(), conns: map[*websocket.Conn]*sync.Mutex{}}
	u.srv = &http.Server{Handler: http.HandlerFunc(u.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

func (u *wsHeads) Close() { _ = u.srv.Close() }

func headJSON(n uint64) []byte {
	return fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x","timestamp":"0x%x","gasLimit":"0x1c9c380","gasUsed":"0x0","baseFeePerGas":"0x7","miner":"0x0000000000000000000000000000000000000000","difficulty":"0x0"}`,
		n, n, n-1, 1_700_000_000+n)
}

func (u *wsHeads) serve(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	wmu := &sync.Mutex{}
	defer func() {
		u.mu.Lock()
		delete(u.conns, c)
		u.mu.Unlock()
		c.Close()
	}()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if json.Unmarshal(msg, &req) != nil {
			continue
		}
		var result []byte
		switch req.Method {
		case "eth_subscribe":
			u.subscribes.Add(1)
			result = []byte(`"0x1"`)
			u.mu.Lock()
			u.conns[c] = wmu
			u.mu.Unlock()
		case "eth_unsubscribe":
			result = []byte(`true`)
		case "eth_blockNumber":
			result = strconv.AppendQuote(nil, "0x"+strconv.FormatUint(u.head.Load(), 16))
		case "eth_getBlockByNumber":
			var tag string
			n := u.head.Load()
			if len(req.Params) > 0 && json.Unmarshal(req.Params[0], &tag) == nil && strings.HasPrefix(tag, "0x") {
				if v, err := strconv.ParseUint(tag[2:], 16, 64); err == nil {
					n = v
				}
			}
			result = headJSON(n)
		case "eth_chainId":
			result = []byte(`"0x89"`)
		default:
			result = []byte(`null`)
		}
		out := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		wmu.Lock()
		err = c.WriteMessage(websocket.TextMessage, out)
		wmu.Unlock()
		if err != nil {
			return
		}
	}
}

// emit sends head n to every subscribed socket.
func (u *wsHeads) emit(n uint64) {
	u.head.Store(n)
	msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":%s}}`, headJSON(n))
	u.mu.Lock()
	defer u.mu.Unlock()
	for c, wmu := range u.conns {
		wmu.Lock()
		_ = c.WriteMessage(websocket.TextMessage, msg)
		wmu.Unlock()
	}
}

// fanoutResult is one measured window of the fan-out row.
type fanoutResult struct {
	subscribers         int
	delivered           int64 // notifications received by the subscribers in the window
	window              time.Duration
	proxyCPU, redisCPU  time.Duration
	upstreamSubscribes  int64
	closedEarly         int64 // subscribers whose socket ended during the run (must be 0)
	heads               uint64
	stalls              int // heads that waited more than a second for the slowest reader
	perNotifProxy       float64
	perNotifRedis       float64
	notificationsPerSec float64
}

// runFanout starts its own gateway (the other rows keep their Caddyfile),
// subscribes n sockets with key and measures d after warm-up.
func runFanout(ctx context.Context, cfg config, httpUp *upstream, rdb *redis.Client, redisPID int, prefix string, n int) (fanoutResult, error) {
	var res fanoutResult
	heads, err := startWSHeads()
	if err != nil {
		return res, err
	}
	defer heads.Close()
	heads.head.Store(1)
	gw, err := startCaddy(ctx, cfg, cfg.caddyBin, "gateway-ws", fanoutCaddyfile,
		map[string]string{"UPSTREAM": httpUp.addr, "WS_UPSTREAM": heads.addr, "PREFIX": prefix}, "BENCH_REDIS_URL="+cfg.redisURL)
	if err != nil {
		return res, err
	}
	defer gw.stop()
	if err := gw.waitUpstreamHealthy(ctx); err != nil {
		return res, err
	}
	key, err := fundedKey(ctx, gw, rdb, prefix)
	if err != nil {
		return res, err
	}

	// received[h % ring] counts the subscribers that got head h.
	const ring = 4 * fanoutDepth
	var received [ring]atomic.Int64
	var total, closed atomic.Int64
	wsURL := "ws" + strings.TrimPrefix(gw.url, "http") + "/rpc/137"
	hdr := http.Header{"X-Api-Key": {key}}
	conns := make([]*websocket.Conn, 0, n)
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	defer func() {
		close(stopped) // the readers' errors from here on are ours
		for _, c := range conns {
			_ = c.Close()
		}
		wg.Wait()
	}()
	for i := range n {
		c, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, hdr)
		if err != nil {
			return res, fmt.Errorf("subscriber %d: %w", i, err)
		}
		conns = append(conns, c)
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)); err != nil {
			return res, err
		}
		var ack struct {
			Result string          `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := c.ReadJSON(&ack); err != nil || ack.Result == "" {
			return res, fmt.Errorf("subscriber %d: eth_subscribe answered %s (%v)", i, ack.Error, err)
		}
		wg.Go(func() {
			var note struct {
				Params struct {
					Result struct {
						Number string `json:"number"`
					} `json:"result"`
				} `json:"params"`
			}
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					select {
					case <-stopped:
					default:
						closed.Add(1)
					}
					return
				}
				if os.Getenv("BENCH_WS_DEBUG") != "" {
					fmt.Fprintf(os.Stderr, "ws: %s\n", msg)
				}
				if json.Unmarshal(msg, &note) != nil {
					continue
				}
				h, err := strconv.ParseUint(strings.TrimPrefix(note.Params.Result.Number, "0x"), 16, 64)
				if err != nil {
					continue
				}
				received[h%ring].Add(1)
				total.Add(1)
			}
		})
	}

	// The closed loop: head h goes out once every subscriber has head
	// h-fanoutDepth (its slot is then reused for h+…).
	next := uint64(2)
	pump := func(until time.Time) error {
		for time.Now().Before(until) {
			if next >= 2+fanoutDepth { // heads start at 2
				old := next - fanoutDepth
				waitStart := time.Now()
				for received[old%ring].Load() < int64(n)-closed.Load() {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					if time.Since(waitStart) > 30*time.Second {
						return fmt.Errorf("head %d reached %d of %d subscribers in 30 s", old, received[old%ring].Load(), n)
					}
					time.Sleep(200 * time.Microsecond) // polling a counter the readers bump
				}
				if time.Since(waitStart) > time.Second {
					res.stalls++
				}
				received[old%ring].Store(0)
			}
			heads.emit(next)
			next++
		}
		return nil
	}
	if err := pump(time.Now().Add(cfg.warmup)); err != nil {
		return res, err
	}
	d0 := total.Load()
	p0, err1 := procCPU(gw.cmd.Process.Pid)
	q0, err2 := procCPU(redisPID)
	t0 := time.Now()
	if err := pump(t0.Add(cfg.duration)); err != nil {
		return res, err
	}
	res.window = time.Since(t0)
	res.delivered = total.Load() - d0
	p1, err3 := procCPU(gw.cmd.Process.Pid)
	q1, err4 := procCPU(redisPID)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return res, fmt.Errorf("CPU accounting of the fan-out row: %w", err)
	}
	res.proxyCPU, res.redisCPU = p1-p0, q1-q0
	res.subscribers, res.heads, res.upstreamSubscribes, res.closedEarly = n, next-2, heads.subscribes.Load(), closed.Load()
	if res.delivered == 0 {
		return res, errors.New("no notification delivered in the measured window")
	}
	res.notificationsPerSec = float64(res.delivered) / res.window.Seconds()
	res.perNotifProxy = float64(res.proxyCPU.Microseconds()) / float64(res.delivered)
	res.perNotifRedis = float64(res.redisCPU.Microseconds()) / float64(res.delivered)
	return res, nil
}

func (r fanoutResult) String() string {
	return fmt.Sprintf("\nWebSocket fan-out: %d subscribers on newHeads through one gateway, each notification metered "+
		"from a funded key: **%.0f notifications delivered/s** over %v (%d heads), CPU per delivered notification "+
		"%.1f µs in the gateway + %.1f µs in Redis; upstream eth_subscribe calls: %d; sockets ended early: %d; "+
		"heads that waited over 1 s for the slowest reader: %d.\n",
		r.subscribers, r.notificationsPerSec, r.window.Round(time.Millisecond), r.heads, r.perNotifProxy, r.perNotifRedis,
		r.upstreamSubscribes, r.closedEarly, r.stalls)
}
