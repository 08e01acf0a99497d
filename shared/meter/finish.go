package meter

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Finished is the state of a request's books after Finish.
type Finished struct {
	// Revenue is the revenue event of the served calls (the first of
	// Revenues); nil when none was served. The caller queues every event
	// of Revenues (EventWriter.Enqueue).
	Revenue *events.Revenue
	// Revenues are the revenue events of the served calls, one per server
	// (RevenueParts).
	Revenues []*events.Revenue
	// Refunded is true when the failed calls were given back.
	Refunded bool
	// Balance (Paid) and BundleLeft (Bundle) after the refund.
	Balance    money.Units
	BundleLeft int64
}

// Served is one server's share of a request: the calls it served, in the
// units the request was booked in.
type Served struct {
	By    events.ServedBy
	Units int
}

// Finish closes the books of a served request: failed of its calls got no
// usable answer and are refunded (synchronously, so the answer and the
// balance agree), the rest earn revenue for by. A refund that fails is
// returned as the error, with Finished still holding the revenue event and
// the balances as booked (the Debit event and the error are on record;
// reconciliation repays it). Prices come from the decision: what a call was
// charged is what is refunded and what is earned.
func (m *Meter) Finish(ctx context.Context, d *Decision, failed int, by events.ServedBy, now time.Time) (Finished, error) {
	return m.FinishServed(ctx, d, failed, []Served{{By: by, Units: d.calls - failed}}, now)
}

// FinishServed is Finish for a request whose calls several servers served
// (the edge cache, one upstream or several): each server earns the revenue
// of its own calls (RevenueParts).
func (m *Meter) FinishServed(ctx context.Context, d *Decision, failed int, served []Served, now time.Time) (Finished, error) {
	f := Finished{Balance: d.Balance, BundleLeft: d.BundleLeft}
	var err error
	if failed > 0 {
		if err = m.Refund(ctx, d, failed); err == nil {
			f.Refunded = true
			switch d.Outcome {
			case Paid:
				f.Balance += d.price(failed)
			case Bundle:
				f.BundleLeft += int64(failed)
			}
		}
	}
	f.Revenues = d.RevenueParts(failed, served, now)
	if len(f.Revenues) > 0 {
		f.Revenue = f.Revenues[0]
	}
	return f, err
}

// RevenueParts is the revenue of a request's served calls split by who
// served them: one event per server, each with its own calls and their
// price, so a node earns for exactly the calls it answered (never for the
// cache's, or another upstream's share of a split batch). The parts' calls
// and amounts sum to the request's (Revenue with failed). The largest part
// keeps the request id; the others are "<id>/<n>" (a revenue event's id is
// its idempotency key). Parts that do not add up to the served calls (a
// caller's bug) are not trusted: the whole goes to the largest part's
// server, never more or less than was served.
func (d *Decision) RevenueParts(failed int, served []Served, now time.Time) []*events.Revenue {
	total := d.calls - failed
	if total <= 0 || !d.served() {
		return nil
	}
	merged := map[events.ServedBy]int{}
	sum := 0
	for _, s := range served {
		if s.Units > 0 {
			merged[s.By] += s.Units
			sum += s.Units
		}
	}
	parts := make([]Served, 0, len(merged))
	for by, n := range merged {
		parts = append(parts, Served{By: by, Units: n})
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].Units != parts[j].Units {
			return parts[i].Units > parts[j].Units
		}
		return parts[i].By.Upstream+"\x00"+parts[i].By.NodeID < parts[j].By.Upstream+"\x00"+parts[j].By.NodeID
	})
	if sum != total {
		by := events.ServedBy{}
		if len(parts) > 0 {
			by = parts[0].By
		}
		parts = []Served{{By: by, Units: total}}
	}
	out := make([]*events.Revenue, 0, len(parts))
	for i, p := range parts {
		ev, ok := d.Revenue(d.calls-p.Units, p.By.Upstream, p.By.NodeID, now)
		if !ok {
			continue
		}
		if i > 0 {
			ev.ID = d.ID + "/" + strconv.Itoa(i)
		}
		out = append(out, ev)
	}
	return out
}

// price is what n of the decision's calls cost its payer: credits and
// metrics at the price they were booked at, a bundle's calls at their share
// of the bundle price, free calls nothing.
func (d *Decision) price(n int) money.Units {
	switch d.Outcome {
	case Paid:
		if d.calls == 0 {
			return 0
		}
		return d.amount / money.Units(d.calls) * money.Units(n)
	case Bundle:
		return money.BundleCallRevenue * money.Units(n)
	}
	return 0
}
