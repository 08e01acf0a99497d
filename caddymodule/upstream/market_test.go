package upstream

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The ladder is earned over time as well as answers: on a
// busy gateway a stranger's thousands of verified answers within a minute
// give it the first rung and a check rate near 1, not full share and the
// floor; with the time served (6 h by default) the same history is trusted
// at the floor rate.
func TestLadderTakesTime(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{}
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	methods := []string{"eth_getBalance", "eth_blockNumber", "eth_call"}
	for i := range 5000 {
		p.RecordMatch("a", methods[i%3])
	}
	v, _ := p.Trust("a")
	if v.Phase != "ladder" || v.Share != 0.10 || v.CheckRate < 0.99 {
		t.Fatalf("5,000 matches within a minute: %+v; want the first rung (0.10) and a check rate near 1", v)
	}
	// Seven hours later (the standing's clock moved back).
	tr := p.member("a").trust.Load()
	tr.mu.Lock()
	tr.serving = tr.serving.Add(-7 * time.Hour)
	tr.mu.Unlock()
	p.RefreshTrust()
	if v, _ = p.Trust("a"); v.Phase != "trusted" || v.Share != 1 || v.CheckRate != DefaultCheckFloor {
		t.Fatalf("after 7 h: %+v; want trusted at the check floor", v)
	}
}

// Ten nodes of one wallet share one standing: one probation
// (a match of any counts for all), one rung, and the rung's share divided
// among them — together they take what one node of the wallet would.
func TestWalletNodesShareOneStanding(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{ProbationMatches: 6, ProbationMethods: 1, Ladder: []TrustStep{{Matches: 0, Share: 0.25}}}
	p := newTestPool(t, cfg)
	var ups []Upstream
	for i := range 10 {
		f := newFakeRPC(t, fmt.Sprintf("w%d", i), 137, 1000)
		u := node(f)
		u.Operator = "0x00000000000000000000000000000000000000AB"
		ups = append(ups, u)
	}
	setNodes(t, p, ups...)
	for range 6 {
		p.RecordMatch("w3", "eth_getBalance") // one node's matches
	}
	// The wallet is out of probation; each node still passes its own
	// (NodeProbation, here the probation's 6) before it serves.
	if v, _ := p.Trust("w0"); v.Phase != "probation" || v.Matches != 6 {
		t.Fatalf("w0 before its own matches: %+v", v)
	}
	if v, _ := p.Trust("w3"); v.Phase != "ladder" {
		t.Fatalf("w3 after its own matches: %+v", v)
	}
	for _, u := range ups {
		for range 6 {
			p.RecordMatch(u.Name, "eth_getBalance")
		}
	}
	for _, u := range ups {
		v, _ := p.Trust(u.Name)
		if v.Phase != "ladder" || v.WalletNodes != 10 || v.Share < 0.025-1e-9 || v.Share > 0.025+1e-9 {
			t.Fatalf("%s: %+v; want the wallet's rung 0.25 divided by 10", u.Name, v)
		}
	}
	byNodes := 0
	const calls = 2000
	for range calls {
		if r := mustForward(t, p, balanceCall); r.Upstream.Kind == KindNode {
			byNodes++
		}
	}
	// One node at 0.25 takes a quarter; ten of one wallet take no more.
	if byNodes < 350 || byNodes > 650 {
		t.Fatalf("ten nodes of one wallet at rung 0.25 served %d of %d calls; want about a quarter", byNodes, calls)
	}
	t.Logf("ten nodes of one wallet at rung 0.25 served %d of %d calls", byNodes, calls)
}

// A quarantine sends the node's wallet back behind a newcomer:
// its other and new nodes are in probation again, and that probation asks
// PenaltyFactor times the matches; a new node of a clean wallet needs the
// ordinary probation.
func TestQuarantinedWalletStartsBehind(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	a, b, c := newFakeRPC(t, "a", 137, 1000), newFakeRPC(t, "b", 137, 1000), newFakeRPC(t, "c", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{ProbationMatches: 5, ProbationMethods: 1, Ladder: []TrustStep{{Matches: 0, Share: 1}}}
	p := newTestPool(t, cfg)
	ua := node(a)
	ua.Operator = "0xaaaa"
	setNodes(t, p, ua)
	for range 5 {
		p.RecordMatch("a", "eth_getBalance")
	}
	if v, _ := p.Trust("a"); v.Phase != "trusted" {
		t.Fatalf("a: %+v", v)
	}
	p.Quarantine("a", "lied")
	ub, uc := node(b), node(c)
	ub.Operator = "0xAAAA" // the same wallet, another case
	uc.Operator = "0xcccc"
	setNodes(t, p, ua, ub, uc)
	for range 5 {
		p.RecordMatch("b", "eth_getBalance")
		p.RecordMatch("c", "eth_getBalance")
	}
	vb, _ := p.Trust("b")
	vc, _ := p.Trust("c")
	if vc.Phase != "trusted" || vb.Phase != "probation" || !vb.Penalty || vb.ProbationMatches != 20 {
		t.Fatalf("after 5 matches each: the quarantined wallet's new node %+v, a clean newcomer %+v", vb, vc)
	}
	for range 15 {
		p.RecordMatch("b", "eth_getBalance")
	}
	if vb, _ = p.Trust("b"); vb.Phase != "trusted" {
		t.Fatalf("after 20 matches: %+v", vb)
	}
	// The quarantined node itself stays out whatever its wallet's standing.
	for range 50 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name == "a" {
			t.Fatal("a quarantined node served")
		}
	}
}

// Quarantine follows the endpoint's host as well as the node id (issue
// 41.6): the same endpoint registered again under a new id is out too.
func TestQuarantineFollowsHost(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	a, other := newFakeRPC(t, "a", 137, 1000), newFakeRPC(t, "other", 137, 1000)
	cfg := testConfig(provider(prov))
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a), node(other))
	p.Quarantine("a", "lied")
	again := Upstream{Name: "again", NodeID: "NODE-EU-AGAIN", URL: a.srv.URL + "/other/path"}
	setNodes(t, p, node(a), again, node(other))
	if r, q := p.Quarantined("again"); !q || !strings.Contains(r, "same endpoint host") {
		t.Fatalf("the liar's endpoint under a new id: quarantined %v (%q)", q, r)
	}
	if _, q := p.Quarantined("other"); q {
		t.Fatal("another endpoint was quarantined with it")
	}
	for range 100 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name == "again" || r.Upstream.Name == "a" {
			t.Fatalf("served by %s", r.Upstream.Name)
		}
	}
	if got := p.InProbation(); len(got) != 0 {
		t.Fatalf("InProbation = %v (trust off)", got)
	}
}

// Quarantine follows the endpoint's host whatever its spelling (found in
// review): the host rule compares names, and a liar re-registering the same
// endpoint as an upper-case name, a name with the root's trailing dot, an
// IPv4 address written as IPv4-mapped IPv6, or an IPv6 address written
// uncompressed was a new host and escaped it.
func TestQuarantineFollowsHostSpellings(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	a := newFakeRPC(t, "a", 137, 1000)
	port := a.srv.URL[strings.LastIndex(a.srv.URL, ":")+1:]
	for _, c := range []struct{ liar, other string }{
		{"https://node.example.com/rpc", "https://NODE.Example.COM/rpc"},
		{"https://node.example.com/rpc", "https://node.example.com./rpc"},
		{"https://node.example.com/rpc", "https://node.example.com.:8443/"},
		{"http://203.0.113.7:8545", "http://[::ffff:203.0.113.7]:8545"},
		{"http://203.0.113.7:8545", "http://[::ffff:cb00:7107]:9000/"},
		{"http://[2001:db8::1]:8545", "http://[2001:0db8:0:0:0:0:0:1]:8545"},
		{"http://[2001:db8::1]:8545", "http://[2001:DB8::1]:9000"},
		{a.srv.URL, "http://[::ffff:127.0.0.1]:" + port},
	} {
		p := newTestPool(t, testConfig(provider(prov)))
		if err := p.SetNodes([]Upstream{{Name: "liar", NodeID: "NODE-EU-LIAR", URL: c.liar}}); err != nil {
			t.Fatal(err)
		}
		p.Quarantine("liar", "lied")
		if err := p.SetNodes([]Upstream{{Name: "liar", NodeID: "NODE-EU-LIAR", URL: c.liar},
			{Name: "alias", NodeID: "NODE-EU-ALIAS", URL: c.other}}); err != nil {
			t.Fatal(err)
		}
		if r, q := p.Quarantined("alias"); !q || !strings.Contains(r, "same endpoint host") {
			t.Errorf("%s quarantined, %s not (%q)", c.liar, c.other, r)
		}
	}
	// A different private endpoint (another port on loopback) stays apart.
	p := newTestPool(t, testConfig(provider(prov)))
	if err := p.SetNodes([]Upstream{{Name: "liar", NodeID: "NODE-EU-LIAR", URL: "http://127.0.0.1:1"},
		{Name: "other", NodeID: "NODE-EU-OTHER", URL: a.srv.URL}}); err != nil {
		t.Fatal(err)
	}
	p.Quarantine("liar", "lied")
	if _, q := p.Quarantined("other"); q {
		t.Fatal("another loopback port was quarantined with the liar")
	}
}

// Ten wallets on one host get no more than one share (found in review):
// registration proves control of an origin (host and port), so one
// operator could register ten wallets on ten ports of one machine's name
// and take ten shares where ten nodes of one wallet take one. The share of
// a node is divided among the wallets on its endpoint host (here
// "localhost", one host whatever the port, as a public name is).
func TestWalletsOnOneHostShareOneShare(t *testing.T) {
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{ProbationMatches: 6, ProbationMethods: 1, Ladder: []TrustStep{{Matches: 0, Share: 0.25}}}
	p := newTestPool(t, cfg)
	var ups []Upstream
	for i := range 10 {
		f := newFakeRPC(t, fmt.Sprintf("h%d", i), 137, 1000)
		u := node(f)
		u.URL = strings.Replace(u.URL, "127.0.0.1", "localhost", 1)
		u.Operator = fmt.Sprintf("0x00000000000000000000000000000000000000%02x", 0xa0+i)
		ups = append(ups, u)
	}
	setNodes(t, p, ups...)
	for _, u := range ups {
		for range 6 {
			p.RecordMatch(u.Name, "eth_getBalance")
		}
	}
	for _, u := range ups {
		v, _ := p.Trust(u.Name)
		if v.Phase != "ladder" || v.Share < 0.025-1e-9 || v.Share > 0.025+1e-9 {
			t.Fatalf("%s: %+v; want rung 0.25 divided among the host's 10 wallets", u.Name, v)
		}
	}
	byNodes := 0
	const calls = 2000
	for range calls {
		if r := mustForward(t, p, balanceCall); r.Upstream.Kind == KindNode {
			byNodes++
		}
	}
	if byNodes < 350 || byNodes > 650 {
		t.Fatalf("ten wallets on one host at rung 0.25 served %d of %d calls; want about a quarter", byNodes, calls)
	}
	t.Logf("ten wallets on one host at rung 0.25 served %d of %d calls", byNodes, calls)
}
