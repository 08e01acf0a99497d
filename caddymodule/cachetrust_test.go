package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

const cacheTrustCaddyfile = `{
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
			finality_depth 1
			upstreams {
				registry_refresh 100ms
				probe_interval 100ms
				allow_private_nodes
				probation off # a test of the cache, not of trust (trust_test.go)
			}
			chain 8453 {
				provider base @BASE@
			}
		}
		respond 404
	}
}
`

// TestNodeAnswersNeverEnterTheCache: a registered node that lies about a
// final block serves chain 137 alone, behind a gateway whose edge cache is
// on. Every caller who asks gets the node's answer fresh (none from the
// cache), so when the node stops lying the very next caller gets the
// truth: no lie was kept to be served to others. The same question to a
// configured provider (chain 8453) is cached from the second call on —
// the cache is on, it only does not keep a stranger's word.
func TestNodeAnswersNeverEnterTheCache(t *testing.T) {
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	liar := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.SetMode(faultproxy.Lie)
	base := faultproxy.New(d.Manifest.Base.RPCURL)
	t.Cleanup(base.Close)

	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	const nodeID = "NODE-EU-LIARLIAR"
	raw, err := registry.Encode(&registry.Node{ID: nodeID, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: liar.URL(), ChainIDs: []uint64{137}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(t.Context(), prefix+registry.NodesKey, nodeID, raw).Err(); err != nil {
		t.Fatal(err)
	}
	gw := caddyrun.Start(t, strings.NewReplacer("@PREFIX@", prefix, "@BASE@", base.URL()).Replace(cacheTrustCaddyfile),
		"TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	// ask returns block 1's hash as the gateway answers it and who served it
	// (while waiting for the node to join, a 503 is an empty answer).
	waiting := true
	ask := func(path string) (hash, servedBy string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, gw.URL()+path,
			strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"eth_getBlockByNumber","params":["0x1",false]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Hash string `json:"hash"`
			} `json:"result"`
		}
		if resp.StatusCode == http.StatusServiceUnavailable && waiting {
			return "", "" // chain 137 has no upstream until the node joins
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return out.Result.Hash, resp.Header.Get("X-Tollgate-Upstream")
	}
	// The node joins the pool at the next registry refresh and block 1 is
	// final once the head passes it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		h, by := ask("/rpc")
		if h == faultproxy.LieHash && by == nodeID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node never served: hash %s from %q", h, by)
		}
		time.Sleep(100 * time.Millisecond) // polling the pool's state through the API
	}
	waiting = false
	const asks = 20
	before := liar.Calls("eth_getBlockByNumber")
	for i := range asks {
		h, by := ask("/rpc")
		if by == "cache" {
			t.Fatalf("ask %d: a node's answer was served from the cache", i+1)
		}
		if h != faultproxy.LieHash || by != nodeID {
			t.Fatalf("ask %d: hash %s from %q, want the node's own answer", i+1, h, by)
		}
	}
	if n := liar.Calls("eth_getBlockByNumber") - before; n != asks {
		t.Fatalf("the node was asked %d times for %d questions", n, asks)
	}
	liar.SetMode(faultproxy.Pass)
	truth, by := ask("/rpc")
	if truth == faultproxy.LieHash || by != nodeID || !strings.HasPrefix(truth, "0x") || len(truth) != 66 {
		t.Fatalf("after the node stopped lying: hash %s from %q, want the true hash from the node", truth, by)
	}

	// Control: a configured provider's answer is cached.
	first, by1 := ask("/rpc/8453")
	second, by2 := ask("/rpc/8453")
	if by1 != "base" || by2 != "cache" || first != second {
		t.Fatalf("provider answers: %s from %q, then %s from %q; want the second from the cache", first, by1, second, by2)
	}
	t.Log(fmt.Sprintf("%d asks of a lying node: none cached, the truth served as soon as it stopped; the provider's answer cached", asks))
}
