// Package epochs closes settlement epochs: it sums an epoch's revenue, applies
// the 50/30/20 split and divides the operators' pot between the nodes that
// served the traffic, all in one Postgres transaction (DESIGN §2, §6).
package epochs

import (
	"math/bits"
	"sort"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Weight is the revenue one node served in an epoch: its w_i.
type Weight struct {
	NodeID string
	Units  money.Units
	Calls  int64
}

// Share is what one node is credited for an epoch.
type Share struct {
	NodeID string
	Weight money.Units
	Calls  int64
	Units  money.Units
}

// Split is the outcome of closing one epoch.
type Split struct {
	Total       money.Units // all revenue booked into the epoch
	CarryIn     money.Units // the previous epoch's carry out
	Operators   money.Units // 50% of Total
	Platform    money.Units // 30% of Total
	Pool        money.Units // the rest of Total (20% plus rounding)
	NodeUnits   money.Units // W = Σ w_i
	Distributed money.Units // Σ shares
	CarryOut    money.Units // pot − Σ shares: rounding, or the whole pot when no node served
	Shares      []Share     // sorted by node id; only nodes with w_i > 0
}

// Pot is what the nodes divide: the operators' half plus the carried pot.
func (s Split) Pot() money.Units { return s.Operators + s.CarryIn }

// Compute applies DESIGN §2 to one epoch. total is every unit of revenue
// booked into the epoch (cache hits and provider-served calls included);
// weights are the units each registered node served (entries with no units
// are ignored, a node listed twice is summed). Node i gets floor(pot·w_i/W);
// what the floors leave, or the whole pot when W = 0, is carried out.
// Negative inputs are a caller bug and panic: money never goes below zero.
func Compute(total, carryIn money.Units, weights []Weight) Split {
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
	pot := s.Pot()
	if s.NodeUnits > 0 {
		s.Shares = make([]Share, 0, len(byNode))
		for _, sh := range byNode {
			sh.Units = mulDiv(pot, sh.Weight, s.NodeUnits)
			s.Distributed += sh.Units
			s.Shares = append(s.Shares, *sh)
		}
		sort.Slice(s.Shares, func(i, j int) bool { return s.Shares[i].NodeID < s.Shares[j].NodeID })
	}
	s.CarryOut = pot - s.Distributed
	return s
}

// mulDiv returns floor(a·b/c) for 0 ≤ a, 0 ≤ b ≤ c, c > 0 without overflow:
// the 128-bit product is divided exactly, and b ≤ c keeps the quotient ≤ a.
func mulDiv(a, b, c money.Units) money.Units {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return money.Units(q)
}
