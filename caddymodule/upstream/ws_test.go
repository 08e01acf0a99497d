package upstream

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"
)

// TestNodeWSDialIsGuarded: a registered node's ws URL goes through the node
// address policy at dial time, like its HTTP URL: a refused address is never
// connected to. A provider's ws URL (the operator's) is dialled, with its
// headers on the handshake, and errors never show the URL's path or query.
func TestNodeWSDialIsGuarded(t *testing.T) {
	var conns atomic.Int64
	var auth atomic.Value
	up := websocket.Upgrader{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		c, err := up.Upgrade(w, r, nil)
		if err == nil {
			c.Close()
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ws := "ws" + strings.TrimPrefix(srv.URL, "http")

	refuseLoopback := func(a netip.Addr) error {
		if a.IsLoopback() {
			return errors.New(a.String() + " is loopback")
		}
		return nil
	}
	p, err := New(Config{ChainID: 137, ProbeInterval: -1, Trust: TrustConfig{Off: true},
		Providers: []Upstream{{Name: "prov", URL: srv.URL, WSURL: ws + "/key-in-path?apikey=secret-99", Headers: map[string]string{"Authorization": "Bearer tok-123456"}}},
		Transport: TransportConfig{NodeAddress: refuseLoopback, NodePolicy: "no loopback"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destruct()
	if err := p.SetNodes([]Upstream{{NodeID: "NODE-EU-AAAAAAAA", URL: srv.URL, WSURL: ws + "/?k=node-secret"}}); err != nil {
		t.Fatal(err)
	}
	if got := p.WSUpstreams(); len(got) != 2 {
		t.Fatalf("WSUpstreams %v", got)
	}
	// Nodes are preferred: PickWS gives the node first.
	node, ok := p.PickWS(nil)
	if !ok || node.Ref().Kind != KindNode {
		t.Fatalf("PickWS = %+v, %v; want the node", node.Ref(), ok)
	}
	_, err = node.Dial(t.Context())
	var refused *DialRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("node ws dial: %v, want DialRefusedError", err)
	}
	if conns.Load() != 0 {
		t.Fatalf("%d connections reached the refused address", conns.Load())
	}
	prov, ok := p.PickWS(map[string]bool{"NODE-EU-AAAAAAAA": true})
	if !ok || prov.Ref().Name != "prov" || prov.Host() != ws {
		t.Fatalf("PickWS without the node = %+v %q", prov.Ref(), prov.Host())
	}
	c, err := prov.Dial(t.Context())
	if err != nil {
		t.Fatalf("provider ws dial: %v", err)
	}
	c.Close()
	if auth.Load() != "Bearer tok-123456" {
		t.Fatalf("handshake Authorization %q", auth.Load())
	}
	srv.Close()
	_, err = prov.Dial(t.Context())
	if err == nil || strings.Contains(err.Error(), "secret-99") || strings.Contains(err.Error(), "key-in-path") {
		t.Fatalf("dial error after the server left: %v", err)
	}
	// Bad ws URLs are refused when the pool is built.
	for _, bad := range []string{"http://x", "ws://", "ws://a b"} {
		if _, err := New(Config{ChainID: 137, ProbeInterval: -1, Providers: []Upstream{{Name: "p", URL: "http://x", WSURL: bad}}}); err == nil {
			t.Errorf("ws URL %q accepted", bad)
		}
	}
	if b, _ := (Upstream{Name: "p", URL: "http://x", WSURL: ws + "/secret"}).MarshalJSON(); strings.Contains(string(b), "secret") || !strings.Contains(string(b), `"ws":true`) {
		t.Fatalf("MarshalJSON %s", b)
	}
}
