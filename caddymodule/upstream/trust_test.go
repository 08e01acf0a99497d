package upstream

import (
	"testing"
	"time"
)

// A node in probation serves no caller, whatever its speed; it is promoted
// only after ProbationMatches matches over ProbationMethods methods, and
// then takes the ladder's share of the calls.
func TestProbationAndLadder(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{ProbationMatches: 6, ProbationMethods: 3,
		Ladder: []TrustStep{{Matches: 0, Share: 0.25}, {Matches: 10, Share: 1}}}
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))

	for i := range 50 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "prov" {
			t.Fatalf("call %d in probation served by %s", i, r.Upstream.Name)
		}
	}
	if got := p.InProbation(); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("InProbation = %v", got)
	}
	// Six matches on two methods: still in probation.
	for i := range 6 {
		p.RecordMatch("a", []string{"eth_getBalance", "eth_blockNumber"}[i%2])
	}
	if v, _ := p.Trust("a"); v.Phase != "probation" || v.Share != 0 {
		t.Fatalf("after 6 matches over 2 methods: %+v", v)
	}
	v, changed := p.RecordMatch("a", "eth_call")
	if !changed || v.Phase != "ladder" || v.Share != 0.25 || v.CheckRate < 0.99 {
		t.Fatalf("after the 7th match, 3rd method: %+v changed=%v", v, changed)
	}
	// A quarter of the calls, within a generous band (1,000 calls).
	byNode := 0
	for range 1000 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name == "a" {
			byNode++
		}
	}
	if byNode < 150 || byNode > 350 {
		t.Fatalf("node at share 0.25 served %d of 1000", byNode)
	}
	for range 10 {
		v, _ = p.RecordMatch("a", "eth_call")
	}
	if v.Phase != "trusted" || v.Share != 1 {
		t.Fatalf("after the last rung: %+v", v)
	}
	for i := range 20 {
		if r := mustForward(t, p, balanceCall); r.Upstream.Name != "a" {
			t.Fatalf("call %d: trusted node not preferred, served by %s", i, r.Upstream.Name)
		}
	}
	// A quarantine sends it back to the start; lifting it does not restore
	// its standing.
	p.Quarantine("a", "test")
	p.Unquarantine("a")
	if v, _ := p.Trust("a"); v.Phase != "probation" || v.Matches != 0 {
		t.Fatalf("after quarantine and lift: %+v", v)
	}
}

// The check rate falls linearly from 1 with verified history and with time,
// to the floor: the higher of the two, so a flood of answers alone does not
// lower it, nor waiting alone.
func TestCheckRate(t *testing.T) {
	c := TrustConfig{}.withDefaults()
	now := time.Now()
	long := now.Add(-100 * time.Hour)
	for _, tc := range []struct {
		matches int64
		serving time.Time
		want    float64
	}{{0, long, 1}, {50, long, 1}, {1050, long, 0.5}, {1950, long, 0.05}, {100000, long, 0.05},
		{100000, now.Add(-time.Minute), 1 - float64(time.Minute)/float64(DefaultCheckDecayTime)},
		{100000, now.Add(-3 * time.Hour), 0.5}, {1050, now.Add(-5 * time.Hour), 0.5}, {1950, now.Add(-5 * time.Hour), 1 - 5.0/6}} {
		if got := c.checkRate(tc.matches, false, tc.serving, now); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("checkRate(%d, serving %v ago) = %v, want %v", tc.matches, now.Sub(tc.serving), got, tc.want)
		}
	}
}
