package caddymodule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

const wsHealthCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			registry_refresh 100ms
			probe_interval 100ms
			allow_private_nodes
			chain 137 {
				provider alpha @RPC@ {
					header Authorization "Bearer provider-token-4711"
					ws @WS@/provider-secret-4711
				}
				provider beta @RPC@
			}
		}
		respond 404
	}
}
`

// TestHealthShowsUpstreamWebSocketState: /rpc/health tells, per upstream,
// whether it has a WebSocket URL (a provider's from the Caddyfile's ws line, a
// node's from its registry record) and how many subscriptions the gateway has
// open on it — and never the URL, its path or query, or the headers.
func TestHealthShowsUpstreamWebSocketState(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	const nodeID = "NODE-EU-WSWSWSWS"
	raw, err := registry.Encode(&registry.Node{ID: nodeID, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: d.Manifest.Polygon.RPCURL, WSURL: d.Manifest.Polygon.WSURL + "/?key=node-secret-0815", ChainIDs: []uint64{137},
		Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(t.Context(), prefix+registry.NodesKey, nodeID, raw).Err(); err != nil {
		t.Fatal(err)
	}
	cf := strings.NewReplacer("@PREFIX@", prefix, "@RPC@", d.Manifest.Polygon.RPCURL, "@WS@", d.Manifest.Polygon.WSURL).Replace(wsHealthCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	type ws struct {
		URLSet        bool `json:"url_set"`
		Connected     bool `json:"connected"`
		Subscriptions int  `json:"subscriptions"`
	}
	var body string
	read := func() map[string]ws {
		resp, err := http.Get(gw.URL() + "/rpc/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		var h struct {
			Chains []struct {
				ChainID uint64 `json:"chain_id"`
				Pool    struct {
					Upstreams []struct {
						Name string `json:"name"`
						WS   *ws    `json:"ws"`
					} `json:"upstreams"`
				} `json:"pool"`
			} `json:"chains"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("/rpc/health: %v: %s", err, b)
		}
		out := map[string]ws{}
		for _, c := range h.Chains {
			if c.ChainID != 137 {
				continue
			}
			for _, u := range c.Pool.Upstreams {
				if u.WS == nil {
					t.Fatalf("upstream %s has no ws object: %s", u.Name, b)
				}
				out[u.Name] = *u.WS
			}
		}
		return out
	}
	deadline := time.Now().Add(readyWithin)
	got := read()
	for _, ok := got[nodeID]; !ok; _, ok = got[nodeID] {
		if time.Now().After(deadline) {
			t.Fatalf("node never joined chain 137's pool: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
		got = read()
	}
	want := map[string]ws{"alpha": {URLSet: true}, "beta": {}, nodeID: {URLSet: true}}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: ws %+v, want %+v", name, got[name], w)
		}
	}
	for _, secret := range []string{"provider-secret-4711", "provider-token-4711", "node-secret-0815", "ws://"} {
		if strings.Contains(body, secret) {
			t.Errorf("/rpc/health shows %q: %s", secret, body)
		}
	}
}
