package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

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
			if a.Error.Code != -32005 || !strings.Contains(string(a.Error.Data), `"http_status":429`) || !strings.Contains(string(a.Error.Data), `"retry_after_seconds"`) {
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
