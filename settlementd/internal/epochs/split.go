// Package epochs closes settlement epochs: it sums an epoch's revenue, applies
// the 50/30/20 split, divides the operators' half of what nodes served between
// those nodes and books the rest of that half (what providers and the cache
// served) to the platform, withholds the share of a node caught lying in the
// epoch (booked to the pool), all in one Postgres transaction. The
// same close withholds the liar's share of the earlier, not yet settled
// epochs within the evidence's lookback (window.go).
package epochs

import (
	"math/bits"
	"slices"
	"sort"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Weight is the revenue one node served in an epoch: its w_i.
type Weight struct {
	NodeID string
	Units  money.Units
	Calls  int64
}

// Share is what one node is credited for an epoch. A node with evidence
// of a lie in the epoch is credited nothing: Withheld is its would-be share
// floor(pot·w_i/W), booked to the pool instead, and Units is 0.
type Share struct {
	NodeID   string
	Weight   money.Units
	Calls    int64
	Units    money.Units
	Withheld money.Units
}

// Split is the outcome of closing one epoch.
type Split struct {
	Total     money.Units // all revenue booked into the epoch
	CarryIn   money.Units // the previous epoch's carry out (rounding only)
	Operators money.Units // 50% of Total: the operators' half
	Platform  money.Units // 30% of Total
	Pool      money.Units // the rest of Total (20% plus rounding), plus Withheld
	// PlatformOperators is the part of the operators' half earned by
	// revenue no registered node served (configured providers, the edge
	// cache): the platform's own infrastructure served it, so it is the
	// platform's, booked each epoch.
	PlatformOperators money.Units
	NodeUnits         money.Units // W = Σ w_i
	Distributed       money.Units // Σ shares credited
	// Withheld is the sum of the would-be shares of nodes caught lying in
	// the epoch (Compute's withhold): booked to the pool, so
	// Operators+Platform+Pool = Total+Withheld and
	// Distributed+CarryOut+PlatformOperators+Withheld = Operators+CarryIn.
	Withheld money.Units
	CarryOut money.Units // pot − Σ would-be shares: rounding, or the whole pot when no node served
	Shares   []Share     // sorted by node id; only nodes with w_i > 0
}

// NodesOperators is the operators' half of the revenue nodes served.
func (s Split) NodesOperators() money.Units { return s.Operators - s.PlatformOperators }

// Pot is what the nodes divide: the operators' half of what they served,
// plus the carried rounding.
func (s Split) Pot() money.Units { return s.NodesOperators() + s.CarryIn }

// Compute applies the 50/30/20 split to one epoch. total is every unit of revenue
// booked into the epoch (cache hits and provider-served calls included);
// weights are the units each registered node served (entries with no units
// are ignored, a node listed twice is summed). The operators' half of the
// nodes' revenue W (floor(W·50/100)) plus the carry is the nodes' pot, and
// node i gets floor(pot·w_i/W); the rest of the operators' half — earned by
// providers and the cache — is the platform's. What the floors leave, or
// the carry when no node served, is carried out: only rounding ever carries,
// so one call served by a fresh node can never collect what providers
// earned. A node named in withhold (evidence that it answered unlike a
// trusted provider was booked into the epoch) is credited nothing: its
// would-be share is computed exactly as above and booked to the pool, so
// every other node's share and the carry are what they would have been.
// Negative inputs are a caller bug and panic: money never goes below zero.
func Compute(total, carryIn money.Units, weights []Weight, withhold ...string) Split {
	if total < 0 || carryIn < 0 {
		panic("epochs: negative total or carry")
	}
	s := Split{Total: total, CarryIn: carryIn}
	s.Operators, s.Platform, s.Pool = money.Split(total)

	byNode := map[string]*Share{}
	for _, w := range weights {
		if w.Units < 0 {
			panic("epochs: negative node weight")
		}
		if w.Units == 0 {
			continue
		}
		sh := byNode[w.NodeID]
		if sh == nil {
			sh = &Share{NodeID: w.NodeID}
			byNode[w.NodeID] = sh
		}
		sh.Weight += w.Units
		sh.Calls += w.Calls
		s.NodeUnits += w.Units
	}
	nodesOps, _, _ := money.Split(s.NodeUnits)
	// floor(T/2) ≥ floor(W/2) whenever W ≤ T, which the revenue rows make
	// true; the min keeps the platform's part non-negative regardless.
	nodesOps = min(nodesOps, s.Operators)
	s.PlatformOperators = s.Operators - nodesOps
	pot := s.Pot()
	if s.NodeUnits > 0 {
		s.Shares = make([]Share, 0, len(byNode))
		for _, sh := range byNode {
			sh.Units = mulDiv(pot, sh.Weight, s.NodeUnits)
			if slices.Contains(withhold, sh.NodeID) {
				sh.Withheld, sh.Units = sh.Units, 0
				s.Withheld += sh.Withheld
			}
			s.Distributed += sh.Units
			s.Shares = append(s.Shares, *sh)
		}
		sort.Slice(s.Shares, func(i, j int) bool { return s.Shares[i].NodeID < s.Shares[j].NodeID })
	}
	s.CarryOut = pot - s.Distributed - s.Withheld
	s.Pool += s.Withheld
	return s
}

// mulDiv returns floor(a·b/c) for 0 ≤ a, 0 ≤ b ≤ c, c > 0 without overflow:
// the 128-bit product is divided exactly, and b ≤ c keeps the quotient ≤ a.
func mulDiv(a, b, c money.Units) money.Units {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return money.Units(q)
}
