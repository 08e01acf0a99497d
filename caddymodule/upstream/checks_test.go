package upstream

import (
	"math"
	"testing"
	"time"
)

// TestCapacityFactorFollowsDrops: a node whose sampled answers are dropped
// loses share with the square of the checked fraction of each period (at
// most half per period); periods without a drop give it back 0.05 at a
// time; the accounting says so (offered, checked, dropped, the last
// minute's coverage). Another node's drops never touch it.
func TestCapacityFactorFollowsDrops(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	b := newFakeRPC(t, "b", 137, 1000)
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{Off: true}
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a), node(b))
	ma, mb := p.member("a"), p.member("b")
	if ma.share() != 1 || mb.share() != 1 {
		t.Fatalf("shares before any check: %v %v", ma.share(), mb.share())
	}
	// One period: 30 checked, 10 dropped (a's slots were full).
	t0 := time.Unix(1_800_000_000, 0)
	for i := range 40 {
		ma.checks.note(CheckOffered, t0)
		if i%4 == 3 {
			ma.checks.note(CheckDropped, t0)
		} else {
			ma.checks.note(CheckDone, t0)
		}
	}
	// The period closes: the factor falls to the checked share squared.
	v := ma.checks.view(t0.Add(checkPeriod))
	if v.CapacityFactor != 0.5625 || math.Abs(ma.share()-0.5625) > 1e-9 {
		t.Fatalf("after a period with a quarter dropped: %+v, share %v", v, ma.share())
	}
	if v.Offered != 40 || v.Checked != 30 || v.Dropped != 10 || v.RecentChecked != 30 || v.RecentDropped != 10 || v.Coverage != 0.75 {
		t.Fatalf("accounting %+v", v)
	}
	if mb.share() != 1 {
		t.Fatalf("b's share moved with a's drops: %v", mb.share())
	}
	// A period with only drops halves it, never more.
	for range 50 {
		ma.checks.note(CheckDropped, t0.Add(checkPeriod))
	}
	if v = ma.checks.view(t0.Add(2 * checkPeriod)); v.CapacityFactor != 0.28125 {
		t.Fatalf("after a period of drops: %+v", v)
	}
	// Clean periods (checks, or none at all) give it back: 0.05 each.
	ma.checks.note(CheckDone, t0.Add(2*checkPeriod))
	if v = ma.checks.view(t0.Add(3 * checkPeriod)); math.Abs(v.CapacityFactor-0.33125) > 1e-9 {
		t.Fatalf("after a clean period: %+v", v)
	}
	// A minute later the drops are out of the recent figures and the
	// factor is 1 again.
	v = ma.checks.view(t0.Add(70 * checkPeriod))
	if v.CapacityFactor != 1 || v.RecentDropped != 0 || v.Coverage != 1 || v.Dropped != 60 {
		t.Fatalf("a minute later: %+v", v)
	}
	// Failed checks (no provider answered) are counted, not held against it.
	ma.checks.note(CheckFailed, t0.Add(70*checkPeriod))
	if v = ma.checks.view(t0.Add(72 * checkPeriod)); v.Failed != 1 || v.CapacityFactor != 1 {
		t.Fatalf("after a failed check: %+v", v)
	}
	// Through the pool: the snapshot shows it, providers have none.
	p.NoteCheck("a", CheckOffered)
	p.NoteCheck("prov", CheckDropped)
	for _, u := range p.Snapshot().Upstreams {
		switch {
		case u.Name == "a" && (u.Checks == nil || u.Checks.Offered != 41):
			t.Fatalf("a's snapshot checks %+v", u.Checks)
		case u.Name == "prov" && u.Checks != nil:
			t.Fatalf("a provider has check accounting: %+v", u.Checks)
		}
	}
}

// TestCapacityFactorSettlesAtWhatCanBeChecked: a node offered more checks
// per period than the verifier takes ends up with the traffic the checks
// can take — a plain "share × checked fraction" would settle with drops
// going on — and gets its full share back once the verifier keeps up.
func TestCapacityFactorSettlesAtWhatCanBeChecked(t *testing.T) {
	var b checkBook
	b.init()
	const demand, capacity = 200.0, 100.0 // sampled answers per period at full share; checks per period
	t0 := time.Unix(1_800_000_000, 0)
	var dropsLate, offeredLate float64
	for period := range 60 {
		now := t0.Add(time.Duration(period) * checkPeriod)
		offered := demand * b.capacity()
		checked := min(offered, capacity)
		for range int(checked) {
			b.note(CheckDone, now)
		}
		for range int(offered - checked) {
			b.note(CheckDropped, now)
		}
		if period >= 30 {
			dropsLate += offered - checked
			offeredLate += offered
		}
	}
	t.Logf("after 30 periods: %.1f %% of the offered checks dropped, factor %.2f", 100*dropsLate/offeredLate, b.capacity())
	if share := dropsLate / offeredLate; share > 0.06 {
		t.Fatalf("%.1f %% of the offered checks still dropped after 30 periods (factor %.2f)", 100*share, b.capacity())
	}
	if f := b.capacity(); f < 0.35 || f > 0.65 {
		t.Fatalf("factor %.2f; the checks can take half the demand", f)
	}
	// The verifier keeps up again: back to full share within 20 s.
	for period := 60; period < 80; period++ {
		b.note(CheckDone, t0.Add(time.Duration(period)*checkPeriod))
	}
	if f := b.capacity(); f != 1 {
		t.Fatalf("factor %.2f after clean periods", f)
	}
}

// TestCapacityFactorSteersSelection: a node whose factor fell takes that
// share of the calls an ideal provider could take.
func TestCapacityFactorSteersSelection(t *testing.T) {
	a := newFakeRPC(t, "a", 137, 1000)
	prov := newFakeRPC(t, "prov", 137, 1000)
	cfg := testConfig(provider(prov))
	cfg.Trust = TrustConfig{Off: true}
	p := newTestPool(t, cfg)
	setNodes(t, p, node(a))
	p.probeRound(t.Context(), false)
	p.member("a").checks.factor.Store(math.Float64bits(0.3))
	n := 0
	for range 2000 {
		if r, ok := p.Pick(nil); ok && r.Name == "a" {
			n++
		}
	}
	if share := float64(n) / 2000; share < 0.25 || share > 0.35 {
		t.Fatalf("the node took %.2f of the picks at factor 0.3", share)
	}
}
