package meter

import (
	"context"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Finished is the state of a request's books after Finish.
type Finished struct {
	// Revenue is the revenue event of the served calls; nil when none was
	// served. The caller queues it (EventWriter.Enqueue).
	Revenue *events.Revenue
	// Refunded is true when the failed calls were given back.
	Refunded bool
	// Balance (Paid) and BundleLeft (Bundle) after the refund.
	Balance    money.Units
	BundleLeft int64
}

// Finish closes the books of a served request: failed of its calls got no
// usable answer and are refunded (synchronously, so the answer and the
// balance agree), the rest earn revenue for by. A refund that fails is
// returned as the error, with Finished still holding the revenue event and
// the balances as booked (the Debit event and the error are on record;
// reconciliation repays it). Prices come from the decision: what a call was
// charged is what is refunded and what is earned.
func (m *Meter) Finish(ctx context.Context, d *Decision, failed int, by events.ServedBy, now time.Time) (Finished, error) {
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
	if ev, ok := d.Revenue(failed, by.Upstream, by.NodeID, now); ok {
		f.Revenue = ev
	}
	return f, err
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
