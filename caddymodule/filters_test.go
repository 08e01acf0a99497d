package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

const filtersCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			probe_interval 100ms
			chain 137 {
				provider alpha @A@
				provider beta @B@
				provider gamma @C@
			}
		}
		respond 404
	}
}
`

// TestStickyFilters: a filter created through the gateway is asked of the
// upstream that created it, every time, in a pool of three; a forged id, or
// one of an upstream not in the pool, gets the node's own "filter not
// found" without reaching any upstream.
func TestStickyFilters(t *testing.T) {
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ups := map[string]*faultproxy.Proxy{}
	for _, n := range []string{"alpha", "beta", "gamma"} {
		ups[n] = faultproxy.New(d.Manifest.Polygon.RPCURL)
		t.Cleanup(ups[n].Close)
	}
	gw := caddyrun.Start(t, strings.NewReplacer("@A@", ups["alpha"].URL(), "@B@", ups["beta"].URL(), "@C@", ups["gamma"].URL()).Replace(filtersCaddyfile))
	(&meterEnv{gw: gw}).waitHealthy(t)
	rpc := func(body string) map[string]json.RawMessage {
		t.Helper()
		status, b := postRPC(gw.URL()+"/rpc", body)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil || status != 200 {
			t.Fatalf("%s: %d %s", body, status, b)
		}
		return m
	}
	calls := func(method string) map[string]int {
		out := map[string]int{}
		for n, p := range ups {
			out[n] = p.Calls(method)
		}
		return out
	}

	created := rpc(`{"jsonrpc":"2.0","id":1,"method":"eth_newBlockFilter","params":[]}`)
	var id string
	if err := json.Unmarshal(created["result"], &id); err != nil || !strings.HasPrefix(id, "0x") {
		t.Fatalf("eth_newBlockFilter: %s", created["result"])
	}
	creator := ""
	for n, c := range calls("eth_newBlockFilter") {
		if c == 1 {
			creator = n
		}
	}
	if creator == "" {
		t.Fatalf("no upstream created the filter: %v", calls("eth_newBlockFilter"))
	}
	before := calls("eth_getFilterChanges")
	for i := range 20 {
		r := rpc(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getFilterChanges","params":["%s"]}`, i, id))
		if r["error"] != nil || !strings.HasPrefix(string(r["result"]), "[") {
			t.Fatalf("eth_getFilterChanges %d: %s %s", i, r["result"], r["error"])
		}
	}
	after := calls("eth_getFilterChanges")
	for n := range ups {
		want := 0
		if n == creator {
			want = 20
		}
		if after[n]-before[n] != want {
			t.Fatalf("eth_getFilterChanges per upstream %v → %v; want all 20 on %s", before, after, creator)
		}
	}

	// Forged ids: answered as a node answers an unknown filter, locally.
	for _, forged := range []string{"0x1234", "0xffffffff00000000000000000000000000000001", strings.Replace(id, id[2:10], "00000000", 1)} {
		r := rpc(`{"jsonrpc":"2.0","id":7,"method":"eth_getFilterChanges","params":["` + forged + `"]}`)
		if !strings.Contains(string(r["error"]), "filter not found") {
			t.Fatalf("forged %s: %s", forged, r["error"])
		}
	}
	if got := calls("eth_getFilterChanges"); fmt.Sprint(got) != fmt.Sprint(after) {
		t.Fatalf("a forged filter id reached an upstream: %v → %v", after, got)
	}

	// Uninstalled on its upstream, the filter is gone there too.
	if r := rpc(`{"jsonrpc":"2.0","id":8,"method":"eth_uninstallFilter","params":["` + id + `"]}`); string(r["result"]) != "true" {
		t.Fatalf("eth_uninstallFilter: %s %s", r["result"], r["error"])
	}
	if r := rpc(`{"jsonrpc":"2.0","id":9,"method":"eth_getFilterChanges","params":["` + id + `"]}`); !strings.Contains(string(r["error"]), "filter not found") {
		t.Fatalf("after uninstall: %s %s", r["result"], r["error"])
	}
	if c := calls("eth_uninstallFilter"); c[creator] != 1 {
		t.Fatalf("eth_uninstallFilter went to %v, want %s", c, creator)
	}
}
