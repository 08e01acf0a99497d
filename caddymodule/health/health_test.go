package health

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// TestPublicViewPublishesNoCheckCounts: the public /rpc/health shows a
// node's phase and its rung's share, but no count that moves with its
// checks (verified_matches grows by one per matched check: a node counting
// what it served would learn which answers were checked, and its rate), no
// check rate, no check accounting, no capacity factor in the share, and
// none of its host or errors. The admin view keeps them all.
func TestPublicViewPublishesNoCheckCounts(t *testing.T) {
	serving := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	snap := upstream.Snapshot{ChainID: 137, BestHead: 100, Upstreams: []upstream.UpstreamSnapshot{
		{Name: "alpha", Kind: upstream.KindProvider, Host: "https://alpha.example", Successes: 7},
		{Name: "NODE-EU-A", Kind: upstream.KindNode, NodeID: "NODE-EU-A", Host: "http://node.example", LastError: "boom", Successes: 900,
			Trust: &upstream.TrustView{Phase: "ladder", Matches: 1234, Methods: 5, NodeMatches: 1200, Share: 0.2, RungShare: 0.5, CheckRate: 0.37,
				Operator: "0xabc", WalletNodes: 2, ProbationMatches: 50, ServingSince: serving},
			Checks: &upstream.CheckView{Offered: 400, Checked: 390, Dropped: 10, CapacityFactor: 0.4}},
	}}
	admin, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"verified_matches":1234`, `"verified_methods":5`, `"node_matches":1200`, `"check_rate":0.37`, `"checks":`} {
		if !strings.Contains(string(admin), k) {
			t.Fatalf("the admin view lacks %s: %s", k, admin)
		}
	}
	redactNodes(&snap)
	pub, err := json.Marshal(publicView(snap))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verified_matches", "verified_methods", "node_matches", "check_rate", `"checks"`, "capacity", "node.example", "boom"} {
		if strings.Contains(string(pub), k) {
			t.Errorf("the public view publishes %s: %s", k, pub)
		}
	}
	var back struct {
		Upstreams []map[string]any `json:"upstreams"`
	}
	if err := json.Unmarshal(pub, &back); err != nil || len(back.Upstreams) != 2 {
		t.Fatalf("%s: %v", pub, err)
	}
	node := back.Upstreams[1]
	tv, _ := node["trust"].(map[string]any)
	if node["name"] != "NODE-EU-A" || node["successes"] != 900.0 || tv["phase"] != "ladder" || tv["traffic_share"] != 0.5 ||
		tv["serving_since"] != "2026-11-28T10:00:00Z" || tv["probation_matches"] != 50.0 || tv["wallet_nodes"] != 2.0 {
		t.Fatalf("the public view of the node: %v", node)
	}
	if back.Upstreams[0]["host"] != "https://alpha.example" || back.Upstreams[0]["trust"] != nil {
		t.Fatalf("the public view of the provider: %v", back.Upstreams[0])
	}
}
