package faultproxy

import (
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// WebSocket: an upgrade request is relayed to the target's ws URL (the same
// host and port, ws scheme — the dev chain serves both on one port), message
// by message, so a test can watch and break an upstream's subscriptions:
// every call sent up is counted like an HTTP call; in Fail502 and
// Fail502Calls the handshake is refused with 502; in Hang the
// eth_subscription notifications coming down are swallowed (a socket that
// is open and answers pings but whose subscription has stalled); CutSockets
// drops every open socket at once.

// What ForgeFeeds rewrites: block hashes of heads and logs, and log data.
var (
	forgedHash = regexp.MustCompile(`"(hash|blockHash|parentHash)":"0x[0-9a-fA-F]{64}"`)
	forgedData = regexp.MustCompile(`"data":"0x[0-9a-fA-F]*"`)
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

type wsPair struct{ down, up *websocket.Conn }

func (p *Proxy) serveWS(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.calls["ws_connect"]++
	p.mu.Unlock()
	if m := Mode(p.mode.Load()); m == Fail502 || m == Fail502Calls {
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	target := "ws" + strings.TrimPrefix(p.target, "http")
	up, resp, err := websocket.DefaultDialer.DialContext(r.Context(), target, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		http.Error(w, "upstream ws: "+err.Error(), http.StatusBadGateway)
		return
	}
	down, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		up.Close()
		return
	}
	pair := &wsPair{down: down, up: up}
	p.wsMu.Lock()
	if p.ws == nil {
		p.ws = map[*wsPair]struct{}{}
	}
	p.ws[pair] = struct{}{}
	p.wsMu.Unlock()
	defer func() {
		p.wsMu.Lock()
		delete(p.ws, pair)
		p.wsMu.Unlock()
		down.Close()
		up.Close()
	}()
	var wg sync.WaitGroup
	wg.Go(func() { // upstream → client
		defer down.Close()
		for {
			t, msg, err := up.ReadMessage()
			if err != nil {
				return
			}
			if Mode(p.mode.Load()) == Hang && strings.Contains(string(msg), `"eth_subscription"`) {
				continue
			}
			if p.ForgeFeeds.Load() && strings.Contains(string(msg), `"eth_subscription"`) {
				msg = forgedHash.ReplaceAll(msg, []byte(`"$1":"`+LieHash+`"`))
				msg = forgedData.ReplaceAll(msg, []byte(`"data":"`+LieBalance+`"`))
				p.Forged.Add(1)
			}
			if err := down.WriteMessage(t, msg); err != nil {
				return
			}
		}
	})
	// client → upstream (gorilla answers the client's pings itself)
	for {
		t, msg, err := down.ReadMessage()
		if err != nil {
			up.Close()
			break
		}
		calls, _ := decodeCalls(msg)
		p.mu.Lock()
		for _, c := range calls {
			p.calls[c.Method]++
		}
		p.mu.Unlock()
		if err := up.WriteMessage(t, msg); err != nil {
			break
		}
	}
	wg.Wait()
}

// CutSockets drops every WebSocket open through the proxy, as a crashing
// upstream would.
func (p *Proxy) CutSockets() {
	p.wsMu.Lock()
	defer p.wsMu.Unlock()
	for pair := range p.ws {
		pair.down.Close()
		pair.up.Close()
	}
}

// Sockets is how many WebSockets are open through the proxy now.
func (p *Proxy) Sockets() int {
	p.wsMu.Lock()
	defer p.wsMu.Unlock()
	return len(p.ws)
}
