package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

const archiveCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			cache_size 1KiB
			upstreams {
				probe_interval 100ms
				archive_window 16
			}
			chain 137 {
				provider full @FULL@
				provider archive @ARCHIVE@
			}
		}
		respond 404
	}
}
`

// TestArchiveQueriesGoToArchiveNodes: two providers, one a full node
// (state older than its window answers geth's "missing trie node"), one an
// archive node. Probing finds which is which (/rpc/health shows it), and
// every read of state older than the chain's window (archive_window 16
// here: the simulated chain itself keeps only 128 blocks of state) goes to
// the archive node only.
func TestArchiveQueriesGoToArchiveNodes(t *testing.T) {
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	full := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(full.Close)
	full.PrunedBelow.Store(1 << 62) // every numbered block's state is gone for this test's questions
	full.SetMode(faultproxy.Pruned)
	archive := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(archive.Close)
	// The archive node is the slower one: without capability routing the
	// pool's fastest-first choice would be the full node.
	archive.SetDelay(20 * time.Millisecond)
	gw := caddyrun.Start(t, strings.NewReplacer("@FULL@", full.URL(), "@ARCHIVE@", archive.URL()).Replace(archiveCaddyfile))

	type ups struct {
		Name    string `json:"name"`
		Archive *bool  `json:"archive"`
	}
	health := func() (map[string]*bool, uint64) {
		var h struct {
			Chains []struct {
				ChainID uint64 `json:"chain_id"`
				Pool    struct {
					BestHead  uint64 `json:"best_head"`
					Upstreams []ups  `json:"upstreams"`
				} `json:"pool"`
			}
		}
		resp, err := http.Get(gw.URL() + "/rpc/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(&h)
		out := map[string]*bool{}
		for _, c := range h.Chains {
			if c.ChainID == 137 {
				for _, u := range c.Pool.Upstreams {
					out[u.Name] = u.Archive
				}
				return out, c.Pool.BestHead
			}
		}
		return out, 0
	}
	// Wait until probing has told the two apart and the chain is past the
	// full node's window.
	deadline := time.Now().Add(30 * time.Second)
	for {
		caps, head := health()
		if caps["full"] != nil && !*caps["full"] && caps["archive"] != nil && *caps["archive"] && head > 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capabilities not found: full %v archive %v, head %d", caps["full"], caps["archive"], head)
		}
		time.Sleep(50 * time.Millisecond) // polling the probe's findings through the API
	}
	before := full.Calls("eth_getBalance")
	const asks = 30
	for i := range asks {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","0x%x"]}`, i, i+1, 1+i%20)
		resp, err := http.Post(gw.URL()+"/rpc", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Result string          `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if by := resp.Header.Get("X-Tollgate-Upstream"); resp.StatusCode != 200 || out.Result == "" || by != "archive" {
			t.Fatalf("old state, ask %d: %d from %q: %s %s (eth_getBalance: full %d, archive %d)", i+1, resp.StatusCode, by, out.Result, out.Error, full.Calls("eth_getBalance")-before, archive.Calls("eth_getBalance"))
		}
	}
	if n := full.Calls("eth_getBalance") - before; n != 0 {
		t.Fatalf("%d reads of old state reached the full node", n)
	}
}

// TestTraceCallsGoToTracingNodes: of two providers only one serves the
// debug and trace APIs (the other, like the dev chain, answers -32601).
// Probing finds which (/rpc/health shows debug and trace), and every
// debug_* and trace_* call goes to it — never to the one that would
// answer "method not found".
func TestTraceCallsGoToTracingNodes(t *testing.T) {
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	plain := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(plain.Close)
	tracer := faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(tracer.Close)
	tracer.SetMode(faultproxy.Tracer)
	// The tracing node is the slower one: without capability routing the
	// pool's fastest-first choice would be the other.
	tracer.SetDelay(20 * time.Millisecond)
	gw := caddyrun.Start(t, strings.NewReplacer("@FULL@", plain.URL(), "@ARCHIVE@", tracer.URL()).Replace(archiveCaddyfile))

	type caps struct {
		Name         string `json:"name"`
		Debug, Trace *bool
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var h struct {
			Chains []struct {
				ChainID uint64 `json:"chain_id"`
				Pool    struct {
					Upstreams []caps `json:"upstreams"`
				} `json:"pool"`
			}
		}
		resp, err := http.Get(gw.URL() + "/rpc/health")
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		found := map[string]caps{}
		for _, c := range h.Chains {
			if c.ChainID == 137 {
				for _, u := range c.Pool.Upstreams {
					found[u.Name] = u
				}
			}
		}
		p, tr := found["full"], found["archive"]
		if p.Debug != nil && !*p.Debug && p.Trace != nil && !*p.Trace && tr.Debug != nil && *tr.Debug && tr.Trace != nil && *tr.Trace {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capabilities not found: %+v", found)
		}
		time.Sleep(50 * time.Millisecond) // polling the probe's findings through the API
	}
	before := plain.Calls("debug_traceTransaction") + plain.Calls("trace_transaction")
	for i := range 20 {
		method := "debug_traceTransaction"
		if i%2 == 1 {
			method = "trace_transaction"
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":["0x%064x"]}`, i, method, i+1)
		resp, err := http.Post(gw.URL()+"/rpc", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if by := resp.Header.Get("X-Tollgate-Upstream"); resp.StatusCode != 200 || by != "archive" || len(out.Error) > 0 {
			t.Fatalf("%s: %d from %q: %s %s", method, resp.StatusCode, by, out.Result, out.Error)
		}
	}
	if n := plain.Calls("debug_traceTransaction") + plain.Calls("trace_transaction") - before; n != 0 {
		t.Fatalf("%d debug/trace calls reached the upstream without those APIs", n)
	}
}
