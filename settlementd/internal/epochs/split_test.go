package epochs

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// checkSplit asserts every invariant of one epoch's split; withhold are
// the nodes caught lying in it.
func checkSplit(t *testing.T, s Split, weights []Weight, withhold ...string) {
	t.Helper()
	if s.Operators+s.Platform+s.Pool != s.Total+s.Withheld {
		t.Fatalf("50/30/20 parts %d+%d+%d != total %d + withheld %d", s.Operators, s.Platform, s.Pool, s.Total, s.Withheld)
	}
	var sum, withheld money.Units
	for _, sh := range s.Shares {
		if sh.Units < 0 || sh.Withheld < 0 || sh.Weight <= 0 {
			t.Fatalf("negative share or empty weight: %+v", sh)
		}
		sum += sh.Units
		withheld += sh.Withheld
		// floor(pot·w/W), checked with arbitrary precision: credited, or
		// withheld whole when the node lied (and only then).
		want := new(big.Int).Mul(big.NewInt(int64(s.Pot())), big.NewInt(int64(sh.Weight)))
		want.Quo(want, big.NewInt(int64(s.NodeUnits)))
		got := sh.Units
		if slices.Contains(withhold, sh.NodeID) {
			got = sh.Withheld
			if sh.Units != 0 {
				t.Fatalf("liar %s credited %d", sh.NodeID, sh.Units)
			}
		} else if sh.Withheld != 0 {
			t.Fatalf("honest %s withheld %d", sh.NodeID, sh.Withheld)
		}
		if want.Int64() != int64(got) {
			t.Fatalf("share of %s = %d, want %s", sh.NodeID, got, want)
		}
	}
	if sum != s.Distributed || withheld != s.Withheld {
		t.Fatalf("distributed %d != Σ shares %d or withheld %d != Σ withheld %d", s.Distributed, sum, s.Withheld, withheld)
	}
	// The conservation law: nothing created, nothing lost (the pool holds
	// what was withheld).
	if sum+s.Platform+s.PlatformOperators+s.Pool+s.CarryOut != s.Total+s.CarryIn {
		t.Fatalf("Σshares %d + platform %d + platform's operators' part %d + pool %d + carry %d != total %d + carry in %d",
			sum, s.Platform, s.PlatformOperators, s.Pool, s.CarryOut, s.Total, s.CarryIn)
	}
	if s.Distributed+s.CarryOut+s.PlatformOperators+s.Withheld != s.Operators+s.CarryIn {
		t.Fatalf("operators' half not accounted for: %+v", s)
	}
	// The fair share: nodes divide only the operators' half of what they
	// served (plus the carried rounding); the rest of the half is the
	// platform's. Nothing providers earned reaches a node.
	nodesHalf, _, _ := money.Split(s.NodeUnits)
	if s.PlatformOperators != s.Operators-nodesHalf || sum+withheld > nodesHalf+s.CarryIn {
		t.Fatalf("platform's operators' part %d, Σshares %d; want %d and at most %d", s.PlatformOperators, sum,
			s.Operators-nodesHalf, nodesHalf+s.CarryIn)
	}
	for _, v := range []money.Units{s.Operators, s.Platform, s.Pool, s.CarryOut, s.Distributed, s.NodeUnits, s.PlatformOperators, s.Withheld} {
		if v < 0 {
			t.Fatalf("negative amount in %+v", s)
		}
	}
	if s.NodeUnits == 0 {
		if s.CarryOut != s.CarryIn || s.PlatformOperators != s.Operators || len(s.Shares) != 0 || s.Withheld != 0 {
			t.Fatalf("no node served: the carry must pass on and the operators' half be the platform's: %+v", s)
		}
	} else if s.CarryOut >= money.Units(len(s.Shares)) {
		// Each floor loses less than one unit.
		t.Fatalf("carry %d not below the number of nodes %d", s.CarryOut, len(s.Shares))
	}
	var w money.Units
	for _, x := range weights {
		w += x.Units
	}
	if w != s.NodeUnits {
		t.Fatalf("W %d != Σ weights %d", s.NodeUnits, w)
	}
	// A node that served more never would have got less.
	for i := range s.Shares {
		for j := range s.Shares {
			a, b := s.Shares[i], s.Shares[j]
			if a.Weight < b.Weight && a.Units+a.Withheld > b.Units+b.Withheld {
				t.Fatalf("not monotone: %+v vs %+v", a, b)
			}
		}
	}
}

// liars draws a subset of the weights' nodes (often none) to withhold.
func liars(r *rand.Rand, weights []Weight) []string {
	var out []string
	if r.IntN(3) == 0 {
		return nil
	}
	for _, w := range weights {
		if r.IntN(3) == 0 {
			out = append(out, w.NodeID)
		}
	}
	if r.IntN(5) == 0 {
		out = append(out, "NODE-NEVER-SERVED") // evidence for a node without revenue in the epoch
	}
	return out
}

// genEpoch draws one epoch from r: realistic sizes most of the time, huge
// values (near the int64 range) sometimes, empty or node-less epochs too.
func genEpoch(r *rand.Rand) (other money.Units, weights []Weight) {
	scale := int64(1_000_000)
	switch r.IntN(10) {
	case 0:
		scale = 1 << 58 // product pot·w far beyond int64
	case 1:
		scale = 3
	}
	n := r.IntN(6)
	if r.IntN(8) == 0 {
		n = 0
	}
	for i := range n {
		weights = append(weights, Weight{NodeID: fmt.Sprintf("NODE-%d", r.IntN(4)), Units: money.Units(r.Int64N(scale)), Calls: int64(i + 1)})
	}
	if r.IntN(3) > 0 {
		other = money.Units(r.Int64N(scale))
	}
	return other, weights
}

// Thousands of seeded epochs, chained so each carry feeds the next: the
// invariants hold for every one, and over the whole chain every unit of
// revenue ends in a share, the platform, the pool or the final carry.
func TestSplitPropertiesSeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(20261121, 1))
	for chain := range 200 {
		var carry money.Units
		revenue, out := new(big.Int), new(big.Int) // chain sums exceed int64 with the huge draws
		for range 25 {
			other, weights := genEpoch(r)
			total := other
			for _, w := range weights {
				total += w.Units
			}
			withhold := liars(r, weights)
			s := Compute(total, carry, weights, withhold...)
			checkSplit(t, s, weights, withhold...)
			revenue.Add(revenue, big.NewInt(int64(total)))
			out.Add(out, big.NewInt(int64(s.Distributed+s.Platform+s.PlatformOperators+s.Pool)))
			carry = s.CarryOut
		}
		if out.Add(out, big.NewInt(int64(carry))).Cmp(revenue) != 0 {
			t.Fatalf("chain %d: paid + carry %s != revenue %s", chain, out, revenue)
		}
	}
}

// testing/quick over arbitrary small inputs (including zero everything).
func TestSplitPropertiesQuick(t *testing.T) {
	f := func(other uint32, carry uint32, ws []uint16, lied uint8) bool {
		var weights []Weight
		total := money.Units(other)
		for i, w := range ws {
			weights = append(weights, Weight{NodeID: fmt.Sprintf("N%d", i%5), Units: money.Units(w)})
			total += money.Units(w)
		}
		var withhold []string // lied's low 5 bits pick the liars among N0..N4
		for i := range 5 {
			if lied&(1<<i) != 0 {
				withhold = append(withhold, fmt.Sprintf("N%d", i))
			}
		}
		s := Compute(total, money.Units(carry), weights, withhold...)
		ok := true
		t.Run("", func(t *testing.T) { checkSplit(t, s, weights, withhold...); ok = !t.Failed() })
		return ok
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

func TestSplitHandExample(t *testing.T) {
	// Total 340 (A 100, B 210, 30 served by the cache or a provider):
	// operators 170, platform 102, pool 68. The nodes' pot is the
	// operators' half of what they served, floor(310/2) = 155, + carry 0:
	// A floor(155·100/310) = 50, B floor(155·210/310) = 105; the other 15 of
	// the operators' half is the platform's.
	s := Compute(340, 0, []Weight{{NodeID: "B", Units: 210}, {NodeID: "A", Units: 100}})
	want := Split{Total: 340, Operators: 170, Platform: 102, Pool: 68, PlatformOperators: 15, NodeUnits: 310, Distributed: 155, CarryOut: 0,
		Shares: []Share{{NodeID: "A", Weight: 100, Units: 50}, {NodeID: "B", Weight: 210, Units: 105}}}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	// Rounding: W = 3 over three nodes, pot floor(3/2) + carry 2 = 3, each 1.
	if s := Compute(3, 2, []Weight{{NodeID: "A", Units: 1}, {NodeID: "B", Units: 1}, {NodeID: "C", Units: 1}}); s.Distributed != 3 ||
		s.CarryOut != 0 || s.PlatformOperators != 0 {
		t.Fatalf("rounding: %+v", s)
	}
	// No node served: the operators' half (45) is the platform's; only the
	// carried rounding (1) carries on.
	if s := Compute(90, 1, nil); s.CarryOut != 1 || s.PlatformOperators != 45 || s.Platform != 27 || s.Pool != 18 {
		t.Fatalf("node-less epoch: %+v", s)
	}
	// The reported case: 70 calls served by a fresh node (1,050 units of
	// share at 30 a call: W = 2,100) in an epoch whose providers earned
	// 200,000: the node gets 1,050, not half of everything.
	if s := Compute(202_100, 0, []Weight{{NodeID: "N", Units: 2_100}}); s.Distributed != 1_050 || s.PlatformOperators != 100_000 {
		t.Fatalf("fresh node: %+v", s)
	}
	// A liar: total 331 (A 100, L 201, 30 by a provider), carry 1. Operators
	// 165, platform 99, pool 67; pot floor(301/2) + 1 = 151: A floor(151·100/301)
	// = 50, L floor(151·201/301) = 100, withheld and booked to the pool
	// (67 + 100 = 167); carry 151 − 150 = 1, as without the lie.
	s = Compute(331, 1, []Weight{{NodeID: "A", Units: 100}, {NodeID: "L", Units: 201}}, "L")
	want = Split{Total: 331, CarryIn: 1, Operators: 165, Platform: 99, Pool: 167, PlatformOperators: 15, NodeUnits: 301, Distributed: 50,
		Withheld: 100, CarryOut: 1, Shares: []Share{{NodeID: "A", Weight: 100, Units: 50}, {NodeID: "L", Weight: 201, Withheld: 100}}}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("liar: got %+v\nwant %+v", s, want)
	}
}
