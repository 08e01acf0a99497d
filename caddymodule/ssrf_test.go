package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

const ssrfCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			redis_url {env.TG_REDIS_URL}
			admin_token ssrf-test-admin-token-0123456789
			key_prefix @PREFIX@
			registry_refresh 100ms
			probe_interval 100ms
			upstream_timeout 2s
			max_attempts 2
			node_allow_cidrs 127.0.0.2/32
			node_resolver @DNS@
			upstreams {
				probation off # a test of dialing, not of trust (trust_test.go)
			}
			chain 137 {
				provider alpha @ALPHA@
			}
		}
		respond 404
	}
}
`

// TestNodeDNSRebindingIsRefusedAtDial: a registered node's host name, served
// by a DNS server under the test's control, first resolves to an allowed
// address (127.0.0.2, a real dev-chain endpoint) and serves callers; then it
// is re-pointed at 127.0.0.1, where a canary listens on the same port. No
// connection ever reaches the canary: the gateway checks the address it
// dials after DNS, marks the node unhealthy with the reason in /rpc/health,
// and callers are served by the provider.
func TestNodeDNSRebindingIsRefusedAtDial(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	alpha := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(alpha.Close)

	// The node: a reverse proxy to the dev chain on 127.0.0.2, closing every
	// connection so each call dials (and resolves) anew.
	nodeLn, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	port := nodeLn.Addr().(*net.TCPAddr).Port
	target, _ := url.Parse(d.Manifest.Polygon.RPCURL)
	var nodeCalls atomic.Int64
	nodeSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nodeCalls.Add(1)
		w.Header().Set("Connection", "close")
		r.Host = target.Host // the dev chain checks its virtual host
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	})}
	nodeSrv.SetKeepAlivesEnabled(false)
	go func() { _ = nodeSrv.Serve(nodeLn) }()
	t.Cleanup(func() { _ = nodeSrv.Close() })

	// The canary: what the gateway must never reach, on loopback at the
	// node's port.
	canary, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = canary.Close() })
	var canaryConns atomic.Int64
	go func() {
		for {
			c, err := canary.Accept()
			if err != nil {
				return
			}
			canaryConns.Add(1)
			_ = c.Close()
		}
	}()

	// The DNS server: node.tollgate.test → whatever points at.
	var points atomic.Value
	points.Store(netip.MustParseAddr("127.0.0.2"))
	var lookups atomic.Int64
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, qq := range q.Question {
			if qq.Name == "node.tollgate.test." && qq.Qtype == dns.TypeA {
				lookups.Add(1)
				ip := points.Load().(netip.Addr)
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: qq.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
					A: net.IP(ip.AsSlice())})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	const nodeID = "NODE-EU-ABCDEFGH"
	raw, err := registry.Encode(&registry.Node{ID: nodeID, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: fmt.Sprintf("http://node.tollgate.test:%d", port), ChainIDs: []uint64{137}, Status: registry.StatusOnline,
		UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(t.Context(), prefix+registry.NodesKey, nodeID, raw).Err(); err != nil {
		t.Fatal(err)
	}
	cf := strings.NewReplacer("@PREFIX@", prefix, "@DNS@", pc.LocalAddr().String(), "@ALPHA@", alpha.URL()).Replace(ssrfCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	node := func() map[string]any {
		var h struct {
			Chains []struct {
				ChainID uint64 `json:"chain_id"`
				Pool    struct {
					Upstreams []map[string]any `json:"upstreams"`
				} `json:"pool"`
			}
		}
		// The node's health reason is the admin view's (the public one
		// redacts nodes' hosts and errors).
		req, _ := http.NewRequest(http.MethodGet, gw.URL()+"/rpc/health", nil)
		req.Header.Set("X-Admin-Token", "ssrf-test-admin-token-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		for _, c := range h.Chains {
			for _, u := range c.Pool.Upstreams {
				if c.ChainID == 137 && u["name"] == nodeID {
					return u
				}
			}
		}
		return nil
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened; node %v", what, node())
			}
			time.Sleep(50 * time.Millisecond) // polling observable state
		}
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`

	// Phase 1: the name points at the allowed address; the node serves.
	waitUntil("the node healthy", func() bool { u := node(); return u != nil && u["healthy"] == true })
	waitUntil("a call served by the node", func() bool {
		resp, err := http.Post(gw.URL()+"/rpc", "application/json", strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == 200 && resp.Header.Get("X-Tollgate-Upstream") == nodeID
	})

	// Phase 2: re-pointed at loopback.
	points.Store(netip.MustParseAddr("127.0.0.1"))
	before := lookups.Load()
	waitUntil("the node unhealthy with the dial refusal as its reason", func() bool {
		u := node()
		reason := fmt.Sprint(u["health_reason"], u["last_error"])
		return u != nil && u["healthy"] == false && strings.Contains(reason, "dial refused") && strings.Contains(reason, "loopback")
	})
	if lookups.Load() == before {
		t.Fatal("the gateway did not resolve the name again: the test proves nothing")
	}
	// The public view shows the node's state, not its host or error; a
	// wrong admin token gets the public view too.
	preq, _ := http.NewRequest(http.MethodGet, gw.URL()+"/rpc/health", nil)
	preq.Header.Set("X-Admin-Token", "ssrf-test-admin-token-012345678")
	pub, err := http.DefaultClient.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(pub.Body)
	pub.Body.Close()
	if !bytes.Contains(pb, []byte(nodeID)) || bytes.Contains(pb, []byte("node.tollgate.test")) || bytes.Contains(pb, []byte("dial refused")) ||
		!bytes.Contains(pb, []byte(`"view":"public"`)) {
		t.Fatalf("public /rpc/health shows a node's host or error (or not the node): %s", pb)
	}
	for i := range 30 {
		resp, err := http.Post(gw.URL()+"/rpc", "application/json", strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Tollgate-Upstream") != "alpha" {
			t.Fatalf("call %d after the rebinding: %d served by %q", i, resp.StatusCode, resp.Header.Get("X-Tollgate-Upstream"))
		}
	}
	if n := canaryConns.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback canary", n)
	}
	t.Logf("node served %d calls at 127.0.0.2; after re-pointing to 127.0.0.1: 0 connections to the canary, %d DNS lookups, node: %v",
		nodeCalls.Load(), lookups.Load(), node()["health_reason"])
}
