package upstream

import "testing"

// TestQuarantine: a quarantined node gets no call — not by selection, not
// named by Only — survives a refresh of the node set, shows in the
// snapshot with its reason, and returns after Unquarantine. ProvidersOnly
// keeps a call off every node.
func TestQuarantine(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	n1 := newFakeRPC(t, "n1", 137, 1000)
	p := newTestPool(t, testConfig(provider(prov)))
	setNodes(t, p, node(n1))
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "n1" {
		t.Fatalf("before: served by %s", r.Upstream.Name)
	}
	if r, err := forward(t, p, balanceCall, ForwardOptions{ProvidersOnly: true}); err != nil || r.Upstream.Name != "prov" {
		t.Fatalf("providers only: %+v %v", r.Upstream, err)
	}
	if !p.Quarantine("n1", "answered eth_getBalance unlike provider prov") || p.Quarantine("n1", "again") {
		t.Fatal("Quarantine reports the first proof only")
	}
	setNodes(t, p, node(n1)) // a registry refresh must not bring it back
	calls := n1.calls.Load()
	for range 20 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "prov" {
			t.Fatalf("quarantined node served a call")
		}
	}
	if _, err := forward(t, p, balanceCall, ForwardOptions{Only: "n1"}); err == nil {
		t.Fatal("Only reached a quarantined node")
	}
	if n1.calls.Load() != calls {
		t.Fatalf("%d calls reached the quarantined node", n1.calls.Load()-calls)
	}
	var seen bool
	for _, u := range p.Snapshot().Upstreams {
		if u.Name == "n1" {
			seen = u.Quarantined && u.QuarantineReason == "answered eth_getBalance unlike provider prov"
		}
	}
	if !seen {
		t.Fatalf("snapshot: %+v", p.Snapshot().Upstreams)
	}
	if !p.Unquarantine("n1") || p.Unquarantine("n1") {
		t.Fatal("Unquarantine reports whether it was quarantined")
	}
	if r := mustForward(t, p, balanceCall); r.Upstream.Name != "n1" {
		t.Fatalf("after review: served by %s", r.Upstream.Name)
	}
}
