package caddymodule_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/gorilla/websocket"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// wsClient is a raw JSON-RPC socket client (gorilla/websocket, the wire
// format exactly as a client library sends it).
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func (e *meterEnv) dial(t *testing.T, path string, headers ...string) *wsClient {
	t.Helper()
	h := http.Header{}
	for _, x := range headers {
		k, v, _ := strings.Cut(x, ": ")
		h.Add(k, v)
	}
	url := "ws" + strings.TrimPrefix(e.gw.URL(), "http") + path
	ws, resp, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	t.Cleanup(func() { ws.Close() })
	return &wsClient{t, ws}
}

func (c *wsClient) send(msg string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// next reads one message (within 10 s).
func (c *wsClient) next() []byte {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return b
}

func (c *wsClient) call(msg string) []byte {
	c.t.Helper()
	c.send(msg)
	return c.next()
}

type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeOne(t *testing.T, b []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("not a JSON-RPC answer: %v: %s", err, b)
	}
	return a
}

func decodeBatch(t *testing.T, b []byte) []rpcAnswer {
	t.Helper()
	var a []rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("not a JSON-RPC batch answer: %v: %s", err, b)
	}
	return a
}

func credits(t *testing.T, e *meterEnv, key string) string {
	return fmt.Sprint(e.usage(t, key)["credits_remaining_usdt"])
}

// TestSocketCallsMeteredLikeHTTP: calls sent over a socket on /rpc are
// metered and refused exactly like POSTs: without a payer (free tier off)
// the 402 in the caller's ids with the onboarding in error.data; a key in
// the handshake's X-API-Key header or the key query parameter pays 30 units
// per call (eth_chainId is free, as over HTTP); an unknown key is a 401
// error; the key's rate limit refuses with 429's error and Retry-After; a
// plain GET /rpc is still answered as before (405), not upgraded.
func TestSocketCallsMeteredLikeHTTP(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, keyRate: "8 1m 8"})

	anon := e.dial(t, "/rpc")
	a := decodeOne(t, anon.call(blockNumber))
	if a.Error == nil || a.Error.Code != 402 || string(a.ID) != "7" || !strings.Contains(string(a.Error.Data), `"onboarding"`) ||
		!strings.Contains(string(a.Error.Data), `"http_status":402`) {
		t.Fatalf("anonymous call over the socket: %+v", a)
	}
	batch := decodeBatch(t, anon.call(`[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":"a","method":"eth_gasPrice"}]`))
	if len(batch) != 2 || string(batch[0].ID) != "1" || string(batch[1].ID) != `"a"` || batch[0].Error == nil || batch[1].Error == nil ||
		batch[0].Error.Code != 402 || batch[1].Error.Code != 402 {
		t.Fatalf("anonymous batch over the socket: %s", mustJSON(batch))
	}

	secret, id := e.createKey(t)
	e.credit(t, id, 1_000)
	byHeader := e.dial(t, "/rpc", "X-API-Key: "+secret)
	if a := decodeOne(t, byHeader.call(blockNumber)); a.Error != nil || string(a.ID) != "7" || len(a.Result) < 4 {
		t.Fatalf("keyed call: %+v", a)
	}
	if a := decodeOne(t, byHeader.call(`{"jsonrpc":"2.0","id":8,"method":"eth_chainId"}`)); a.Error != nil || string(a.Result) != `"0x89"` {
		t.Fatalf("eth_chainId: %+v", a)
	}
	byQuery := e.dial(t, "/rpc/137?key="+secret)
	got := decodeBatch(t, byQuery.call(`[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"eth_gasPrice"},{"jsonrpc":"2.0","id":3,"method":"eth_chainId"}]`))
	if len(got) != 3 || got[0].Error != nil || got[1].Error != nil || string(got[2].Result) != `"0x89"` {
		t.Fatalf("keyed batch: %s", mustJSON(got))
	}
	// 3 metered calls (eth_chainId is free): 1,000 − 90 units.
	if c := credits(t, e, secret); c != money.Units(1_000-3*30).Decimal() {
		t.Fatalf("credits after 3 paid socket calls: %s, want %s", c, money.Units(1_000-3*30).Decimal())
	}

	bad := e.dial(t, "/rpc?key=tg_"+strings.Repeat("x", 43))
	if a := decodeOne(t, bad.call(blockNumber)); a.Error == nil || a.Error.Code != -32001 || string(a.ID) != "7" {
		t.Fatalf("unknown key: %+v", a)
	}

	// The key's limit is 8 requests per minute, as over HTTP a batch is one
	// request and eth_chainId reaches no meter: 2 are spent, so 4 of 10
	// more are refused, in the caller's ids.
	limited := 0
	for i := range 10 {
		a := decodeOne(t, byHeader.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}`, 100+i)))
		if string(a.ID) != fmt.Sprint(100+i) {
			t.Fatalf("answer to %d carries id %s", 100+i, a.ID)
		}
		if a.Error != nil {
			if a.Error.Code != -32005 || !strings.Contains(string(a.Error.Data), `"http_status":429`) || !strings.Contains(string(a.Error.Data), `"retry_after":`) {
				t.Fatalf("rate-limited call: %+v %s", a.Error, a.Error.Data)
			}
			limited++
		}
	}
	if limited != 4 {
		t.Fatalf("%d of 10 calls rate-limited, want 4 (limit 8, 2 spent)", limited)
	}

	// A GET without Upgrade is not a socket.
	if a := e.do(t, http.MethodGet, "/rpc", ""); a.status != http.StatusMethodNotAllowed {
		t.Fatalf("plain GET /rpc: %d %s", a.status, a.body)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// startSockets is startMetered with a third provider, gamma, that has the
// dev chain's WebSocket: the hub subscribes there.
func startSockets(t *testing.T, o meterOpts) *meterEnv {
	t.Helper()
	o.chain137 = "provider gamma @POLYRPC@ {\n\t\t\t\t\tws @POLYWS@\n\t\t\t\t}\n" + o.chain137
	e := startMetered(t, o)
	deadline := time.Now().Add(readyWithin)
	for {
		resp, err := http.Get(e.gw.URL() + "/rpc/stats/polygon")
		if err != nil {
			t.Fatal(err)
		}
		var s stats
		_ = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if s.health("gamma") == "healthy" {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("gamma never healthy: %+v", s)
		}
		time.Sleep(20 * time.Millisecond) // polling observable state
	}
}

// transferUSDT sends n TestUSDT transfers from developer-1 straight to the
// dev chain and returns their transaction hashes.
func (e *meterEnv) transferUSDT(t *testing.T, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev, _ := e.net.Manifest.Account("developer-1")
	key, err := dev.Key()
	if err != nil {
		t.Fatal(err)
	}
	client, err := ethclient.DialContext(ctx, e.net.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	chainID, _ := client.ChainID(ctx)
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = ctx
	usdt := testusdt.NewTestUSDT()
	c := bind.NewBoundContract(common.HexToAddress(e.net.Manifest.Polygon.USDT), usdt.GetABI(), client, client, client)
	var hashes []string
	for i := range n {
		tx, err := c.RawTransact(opts, usdt.PackTransfer(common.BigToAddress(big.NewInt(int64(0x1000+i))), big.NewInt(int64(1+i))))
		if err != nil {
			t.Fatal(err)
		}
		r, err := deploy.WaitReceipt(ctx, client, tx.Hash(), 20*time.Millisecond)
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transfer %d: %v %+v", i, err, r)
		}
		hashes = append(hashes, tx.Hash().Hex())
	}
	return hashes
}

// TestSocketSubscriptionsViemEthers: viem's webSocket transport
// (watchBlockNumber, watchContractEvent on TestUSDT's Transfer) and ethers'
// WebSocketProvider (on("block"), contract.on("Transfer")), with their
// defaults, on one key's ?key= socket: each receives consecutive blocks
// (no gap, no repeat) and exactly the transfers the chain produced, and the
// key's credits fall by exactly 30 units per notification received plus
// 30 per paid call sent (eth_subscribe included; eth_chainId and
// eth_unsubscribe free), as counted on the wire by the script.
func TestSocketSubscriptionsViemEthers(t *testing.T) {
	dir, _ := filepath.Abs("../tests/js")
	node, err := exec.LookPath("node")
	if err != nil || !exists(filepath.Join(dir, "node_modules", "viem")) || !exists(filepath.Join(dir, "node_modules", "ethers")) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/js/node_modules missing (run make test, which runs npm ci): %v", err)
		}
		t.Skip("node or tests/js/node_modules missing")
	}
	e := startSockets(t, meterOpts{free: -1})
	secret, id := e.createKey(t)
	const credit = 1_000_000
	e.credit(t, id, credit)
	const transfers = 3
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "ws-subscribe.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WS_URL=ws"+strings.TrimPrefix(e.gw.URL(), "http")+"/rpc?key="+secret,
		"TOKEN="+e.net.Manifest.Polygon.USDT, fmt.Sprintf("TRANSFERS=%d", transfers), "MIN_BLOCKS=10")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ViemBlocks, EthersBlocks []uint64
		ViemLogs, EthersLogs     []string
		Wire                     struct {
			PaidCalls, FreeCalls, Notifications, Other int
			Methods                                    map[string]int
		}
	}
	var res *result
	var sent []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var line struct {
			Ready  bool
			Error  string
			Result *result
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Logf("script: %s", sc.Text())
			continue
		}
		switch {
		case line.Error != "":
			t.Errorf("script: %s", line.Error)
		case line.Ready:
			sent = e.transferUSDT(t, transfers)
		case line.Result != nil:
			res = line.Result
		}
	}
	if err := cmd.Wait(); err != nil || res == nil {
		t.Fatalf("script: %v\n%s", err, stderr.String())
	}
	consecutive := func(who string, b []uint64) {
		for i := 1; i < len(b); i++ {
			if b[i] != b[i-1]+1 {
				t.Errorf("%s blocks not consecutive at %d: %v", who, i, b)
				return
			}
		}
	}
	consecutive("viem", res.ViemBlocks)
	consecutive("ethers", res.EthersBlocks)
	slices.Sort(sent)
	for who, got := range map[string][]string{"viem": res.ViemLogs, "ethers": res.EthersLogs} {
		g := slices.Clone(got)
		for i := range g {
			g[i] = strings.ToLower(g[i])
		}
		want := slices.Clone(sent)
		for i := range want {
			want[i] = strings.ToLower(want[i])
		}
		slices.Sort(g)
		slices.Sort(want)
		if !slices.Equal(g, want) {
			t.Errorf("%s Transfer logs %v, want exactly %v", who, g, want)
		}
	}
	w := res.Wire
	if w.Other != 0 {
		t.Errorf("%d unexpected messages", w.Other)
	}
	spent := money.Units(credit) - balanceOf(t, e, secret)
	want := money.Units(30 * (w.Notifications + w.PaidCalls))
	if spent != want {
		t.Fatalf("the key paid %d units; %d notifications and %d paid calls (%v) cost %d", spent, w.Notifications, w.PaidCalls, w.Methods, want)
	}
	t.Logf("viem %d blocks, ethers %d blocks, %d transfers each; %d notifications + %d paid calls (%v) = %d units", len(res.ViemBlocks), len(res.EthersBlocks),
		transfers, w.Notifications, w.PaidCalls, w.Methods, spent)
}

// balanceOf reads the key's credits in units.
func balanceOf(t *testing.T, e *meterEnv, key string) money.Units {
	t.Helper()
	a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+key)
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	var u struct {
		Credits json.Number `json:"credits_remaining_usdt"`
	}
	if err := dec.Decode(&u); err != nil || a.status != http.StatusOK {
		t.Fatalf("usage: %d %s", a.status, a.body)
	}
	units, err := money.Parse(u.Credits.String())
	if err != nil {
		t.Fatal(err)
	}
	return units
}

// TestSocketOutOfCreditsMidSubscription: a key with credits for
// eth_subscribe and five notifications gets exactly five, then the
// tollgate_closing notification with the 402 onboarding, then close code
// 4402 and no further message; its credits are exactly used up.
func TestSocketOutOfCreditsMidSubscription(t *testing.T) {
	e := startSockets(t, meterOpts{free: -1})
	secret, id := e.createKey(t)
	e.credit(t, id, 30*(1+5))
	c := e.dial(t, "/rpc", "X-API-Key: "+secret)
	sub := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`))
	if sub.Error != nil || len(sub.Result) < 4 {
		t.Fatalf("eth_subscribe: %+v", sub)
	}
	var heads []uint64
	for {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Subscription json.RawMessage `json:"subscription"`
				Result       struct {
					Number string `json:"number"`
				} `json:"result"`
				Code   int    `json:"code"`
				Reason string `json:"reason"`
				Error  struct {
					Code int             `json:"code"`
					Data json.RawMessage `json:"data"`
				} `json:"error"`
			} `json:"params"`
		}
		if err := json.Unmarshal(c.next(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Method == "eth_subscription" {
			if string(m.Params.Subscription) != string(sub.Result) {
				t.Fatalf("notification for %s, want %s", m.Params.Subscription, sub.Result)
			}
			n, _ := hexutil.DecodeUint64(m.Params.Result.Number)
			heads = append(heads, n)
			continue
		}
		if m.Method != "tollgate_closing" || m.Params.Code != 4402 || m.Params.Reason != "payment_required" || m.Params.Error.Code != 402 ||
			!strings.Contains(string(m.Params.Error.Data), `"onboarding"`) || !strings.Contains(string(m.Params.Error.Data), "/v1/machine/register") {
			t.Fatalf("after %d notifications: %+v", len(heads), m)
		}
		break
	}
	if len(heads) != 5 {
		t.Fatalf("%d notifications delivered (%v), the credits paid for 5", len(heads), heads)
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4402 {
		t.Fatalf("after tollgate_closing: message %q, error %v; want close 4402 and nothing else", b, err)
	}
	if left := balanceOf(t, e, secret); left != 0 {
		t.Fatalf("%d units left, want 0 (30 for eth_subscribe + 5 × 30)", left)
	}
	t.Logf("blocks %v, then tollgate_closing and close %d %q", heads, ce.Code, ce.Text)
}

// TestSocketSlowReaderCutOff: a client that stops reading (a 4 KiB receive
// buffer, 20 newHeads subscriptions) is cut off with close 4008 once its
// send buffer (8 messages) is full or a write takes longer than 1 s, while a
// client on another socket keeps receiving every head. The memory the
// gateway holds for the slow client is bounded: at most send_buffer (8)
// queued messages plus each subscription's hub buffer (8 notifications, 20
// subscriptions), each a newHeads notification of about 1 KiB — under
// 200 KiB — plus the kernel's socket buffers; it cannot grow with time.
func TestSocketSlowReaderCutOff(t *testing.T) {
	e := startSockets(t, meterOpts{free: -1, extra: "websocket {\n\t\t\t\tsend_buffer 8\n\t\t\t\twrite_timeout 1s\n\t\t\t}"})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000_000)
	url := "ws" + strings.TrimPrefix(e.gw.URL(), "http") + "/rpc?key=" + secret
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			_ = rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			return serr
		}}
		return nd.Dial(network, addr)
	}}
	fast := e.dial(t, "/rpc?key="+secret)
	if a := decodeOne(t, fast.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)); a.Error != nil {
		t.Fatalf("fast subscribe: %+v", a.Error)
	}
	slowWS, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slowWS.Close()
	// The slow client subscribes, reading up to each answer (heads for the
	// subscriptions made so far may come first). On a busy machine it can
	// already be cut while it subscribes: with its 4 KiB receive buffer,
	// reading at a loaded machine's pace is slow reading. That is the
	// outcome under test, come early.
	var early *websocket.CloseError
subscribing:
	for i := range 20 {
		if err := slowWS.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"eth_subscribe","params":["newHeads"]}`, i)); err != nil {
			t.Fatal(err)
		}
		for {
			_ = slowWS.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, b, err := slowWS.ReadMessage()
			if errors.As(err, &early) && early.Code == 4008 {
				break subscribing
			} else if err != nil {
				t.Fatalf("subscribe %d: %v", i, err)
			}
			if a := decodeOne(t, b); string(a.ID) == strconv.Itoa(i) {
				if a.Error != nil {
					t.Fatalf("subscribe %d: %+v", i, a.Error)
				}
				break
			}
		}
	}
	// The slow client reads nothing; the fast one reads on until the gateway
	// has cut the slow one, then ten more heads.
	began := time.Now()
	cut := func() bool { return strings.Contains(e.metric(t, "tollgate_ws_closed_total"), `code="4008"`) }
	var heads []uint64
	after := 0
	for after < 10 {
		var m struct {
			Params struct {
				Result struct {
					Number string `json:"number"`
				} `json:"result"`
			} `json:"params"`
		}
		if err := json.Unmarshal(fast.next(), &m); err != nil {
			t.Fatal(err)
		}
		n, _ := hexutil.DecodeUint64(m.Params.Result.Number)
		if len(heads) > 0 && n != heads[len(heads)-1]+1 {
			t.Fatalf("the fast client's heads jumped from %d to %d", heads[len(heads)-1], n)
		}
		heads = append(heads, n)
		if after > 0 || cut() {
			after++
		}
		if time.Since(began) > 90*time.Second {
			t.Fatal("the slow reader was never cut off")
		}
	}
	// Now the slow client reads: what was queued, then close 4008.
	if early != nil {
		t.Logf("slow client cut while subscribing, with %d %q; the fast one got %d consecutive heads, 10 after the cut", early.Code, early.Text, len(heads))
		return
	}
	_ = slowWS.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		_, _, err := slowWS.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4008 {
			t.Fatalf("slow client: %v, want close 4008", err)
		}
		t.Logf("slow client cut with %d %q; the fast one got %d consecutive heads, 10 after the cut", ce.Code, ce.Text, len(heads))
		break
	}
}

// metric returns the lines of the gateway's metrics that start with name.
func (e *meterEnv) metric(t *testing.T, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + e.gw.AdminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSocketsCloseOnReloadAndShutdown: a configuration reload ends the old
// configuration's sockets with 1001 (going away) after their subscription
// delivered; a new socket on the new configuration subscribes and receives;
// a graceful shutdown ends it with 1001 too.
func TestSocketsCloseOnReloadAndShutdown(t *testing.T) {
	e := startSockets(t, meterOpts{free: 1000})
	subscribed := func() *wsClient {
		c := e.dial(t, "/rpc")
		if a := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)); a.Error != nil {
			t.Fatalf("eth_subscribe: %+v", a.Error)
		}
		if m := string(c.next()); !strings.Contains(m, `"eth_subscription"`) {
			t.Fatalf("first message after subscribing: %s", m)
		}
		return c
	}
	goingAway := func(c *wsClient, when string) {
		t.Helper()
		_ = c.ws.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			_, _, err := c.ws.ReadMessage()
			if err == nil {
				continue // heads delivered before the close
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 1001 {
				t.Fatalf("%s: %v, want close 1001", when, err)
			}
			return
		}
	}
	// The client reconnects the moment it is told to go away, as viem and
	// ethers do: that must reach the new configuration, never the old
	// one's closing listener (Caddy listens with SO_REUSEPORT; a
	// connection queued on a closed socket is reset). Several reloads, as
	// the race is narrow on a quiet machine.
	sock := subscribed()
	for i := range 6 {
		timeout := fmt.Sprintf("request_timeout %ds", 6+i%2)
		reloaded := make(chan error, 1)
		go func() { reloaded <- e.gw.TryReload(strings.Replace(e.caddyfile, "request_timeout 5s", timeout, 1)) }()
		goingAway(sock, fmt.Sprintf("reload %d", i+1))
		sock = subscribed()
		if err := <-reloaded; err != nil {
			t.Fatal(err)
		}
	}
	e.gw.Stop()
	goingAway(sock, "shutdown")
}

// TestSocketBoundsThroughCaddy: the websocket section's bounds hold through
// our Caddy. A socket's subscription cap and the address's cap answer
// -32041 (subscription cap, not -32005: viem would retry that), and an eth_unsubscribe frees the slot; a socket
// with no subscription and no message is closed 4408 after idle_timeout
// while one holding a subscription stays open; a client that stops
// answering pings is dropped within about two ping intervals.
func TestSocketBoundsThroughCaddy(t *testing.T) {
	e := startSockets(t, meterOpts{free: 1000, extra: "websocket {\n\t\t\t\tmax_subscriptions 2\n\t\t\t\tmax_subscriptions_per_ip 3\n" +
		"\t\t\t\tidle_timeout 2s\n\t\t\t}"})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000_000)
	// answer sends a call and reads on (past notifications of earlier
	// subscriptions) to its answer.
	answer := func(c *wsClient, id int, method, params string) rpcAnswer {
		t.Helper()
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}`, id, method, params))
		for {
			if a := decodeOne(t, c.next()); string(a.ID) == strconv.Itoa(id) {
				return a
			}
		}
	}
	subscribe := func(c *wsClient, id int) rpcAnswer { return answer(c, id, "eth_subscribe", `["newHeads"]`) }
	limited := func(what string, r rpcAnswer, msg string) {
		t.Helper()
		if r.Error == nil || r.Error.Code != -32041 || !strings.Contains(r.Error.Message, msg) || !strings.Contains(string(r.Error.Data), `"max_subscriptions":`) {
			t.Fatalf("%s: %s / %+v, want -32041 naming %q with data.max_subscriptions", what, r.Result, r.Error, msg)
		}
	}

	a := e.dial(t, "/rpc?key="+secret)
	first := subscribe(a, 1)
	if first.Error != nil {
		t.Fatalf("subscription 1: %+v", first.Error)
	}
	if r := subscribe(a, 2); r.Error != nil {
		t.Fatalf("subscription 2: %+v", r.Error)
	}
	limited("a third subscription on one socket", subscribe(a, 3), "connection")
	b := e.dial(t, "/rpc?key="+secret)
	if r := subscribe(b, 1); r.Error != nil {
		t.Fatalf("the address's third subscription: %+v", r.Error)
	}
	limited("the address's fourth subscription", subscribe(b, 2), "address")
	if r := answer(a, 4, "eth_unsubscribe", "["+string(first.Result)+"]"); string(r.Result) != "true" {
		t.Fatalf("eth_unsubscribe: %s %+v", r.Result, r.Error)
	}
	if r := subscribe(b, 3); r.Error != nil {
		t.Fatalf("after an unsubscribe the address has room again: %+v", r.Error)
	}

	// Idle: a socket that never subscribes nor sends is closed 4408 after
	// idle_timeout (2 s); a and b, holding subscriptions, stay open.
	idle := e.dial(t, "/rpc?key="+secret)
	began := time.Now()
	_ = idle.ws.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, _, err := idle.ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4408 {
		t.Fatalf("idle socket: %v, want close 4408", err)
	}
	if took := time.Since(began); took < 2*time.Second || took > 10*time.Second {
		t.Fatalf("idle socket closed after %v, want about 2 s", took)
	}
	if r := answer(a, 5, "eth_blockNumber", "[]"); r.Error != nil {
		t.Fatalf("a socket holding a subscription did not answer after the idle one was closed: %+v", r.Error)
	}

	// Missed pongs (a gateway pinging every 400 ms): a client that reads but
	// never answers pings is dropped within about two ping intervals
	// (0.8 s), long before idle_timeout (10 s; the bound leaves a busy
	// machine's timers room and stays well short of it).
	p := startSockets(t, meterOpts{free: 1000, extra: "websocket {\n\t\t\t\tidle_timeout 10s\n\t\t\t\tping_interval 400ms\n\t\t\t}"})
	deaf := p.dial(t, "/rpc")
	deaf.ws.SetPingHandler(func(string) error { return nil })
	deaf.send(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)
	began = time.Now()
	_ = deaf.ws.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		if _, _, err := deaf.ws.ReadMessage(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("a client that never answered pings was not dropped: %v", err)
			}
			break
		}
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("the pong-less client was dropped after %v, want within about 0.8 s (well before the 10 s idle timeout)", took)
	}
}

// TestOneRefusalThreeTransports: the same refusal (the key's rate limit)
// reaches an HTTP caller, a socket caller and an MCP tool caller as the
// same error: code -32005 and data.retry_after on all three, plus
// data.http_status where there is no HTTP status of one's own
// (docs/errors.md).
func TestOneRefusalThreeTransports(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, keyRate: "1 1m 1"})
	secret, id := e.createKey(t)
	e.credit(t, id, 10_000)
	if a := e.rpc(t, blockNumber, "X-API-Key: "+secret); a.status != http.StatusOK {
		t.Fatalf("the one call the key may make: %d %s", a.status, a.body)
	}
	type rpcErr struct {
		Code int                        `json:"code"`
		Data map[string]json.RawMessage `json:"data"`
	}
	var overHTTP struct{ Error rpcErr }
	a := e.rpc(t, blockNumber, "X-API-Key: "+secret)
	if a.status != http.StatusTooManyRequests || json.Unmarshal(a.body, &overHTTP) != nil || overHTTP.Error.Code != -32005 {
		t.Fatalf("HTTP: %d %s", a.status, a.body)
	}
	var overWS struct{ Error rpcErr }
	if err := json.Unmarshal(e.dial(t, "/rpc", "X-API-Key: "+secret).call(blockNumber), &overWS); err != nil || overWS.Error.Code != -32005 {
		t.Fatalf("socket: %+v %v", overWS, err)
	}
	var overMCP struct {
		Result struct {
			IsError           bool                   `json:"isError"`
			StructuredContent struct{ Error rpcErr } `json:"structuredContent"`
		} `json:"result"`
	}
	m := e.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_blockNumber"}}}`,
		"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-03-26", "X-API-Key: "+secret)
	if json.Unmarshal(m.body, &overMCP) != nil || !overMCP.Result.IsError || overMCP.Result.StructuredContent.Error.Code != -32005 {
		t.Fatalf("MCP: %d %s", m.status, m.body)
	}
	for what, d := range map[string]map[string]json.RawMessage{"HTTP": overHTTP.Error.Data, "socket": overWS.Error.Data, "MCP": overMCP.Result.StructuredContent.Error.Data} {
		if n, err := strconv.Atoi(string(d["retry_after"])); err != nil || n < 1 {
			t.Fatalf("%s: data.retry_after = %s", what, d["retry_after"])
		}
		if what != "HTTP" && string(d["http_status"]) != "429" {
			t.Fatalf("%s: data.http_status = %s", what, d["http_status"])
		}
	}
}
