package meter_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestAuthorizeMetricAtItsPrice: a metric call is debited at its own price
// by the metering script, never drawn from the free tier, refunded exactly
// once; plain calls keep the flat RPC price.
func TestAuthorizeMetricAtItsPrice(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 100, FreeSubnetLimit: 1000})
	ctx := context.Background()
	const price money.Units = 1_000
	secret, id := f.newKey(t)
	req := meter.Request{IP: ip("192.0.2.7"), KeyHash: meter.HashKey(secret), Method: "funding_rate_heatmap"}

	// No credits: 402 although the IP has its whole free allowance.
	d, err := f.m.AuthorizeMetric(ctx, req, price)
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonCredits || d.Account != id {
		t.Fatalf("no credits: %+v %v", d, err)
	}
	if d, _ = f.m.AuthorizeMetric(ctx, meter.Request{IP: ip("192.0.2.7")}, price); d.Outcome != meter.PaymentRequired {
		t.Fatalf("anonymous: %+v", d)
	}

	f.credit(t, id, 2_500)
	d, err = f.m.AuthorizeMetric(ctx, req, price)
	if err != nil || d.Outcome != meter.Paid || d.Amount() != price || d.Balance != 1_500 || f.balance(t, id) != 1_500 {
		t.Fatalf("paid: %+v %v, balance %d", d, err, f.balance(t, id))
	}
	ev, ok := d.Revenue(0, "intelligence", "", f.clk.Now())
	if !ok || ev.ChainID != 137 || ev.Method != "funding_rate_heatmap" || ev.Validate() != nil {
		t.Fatalf("revenue %+v", ev)
	}
	// Refund gives back the metric's price, once.
	for range 2 {
		if err := f.m.RefundMetric(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	if f.balance(t, id) != 2_500 {
		t.Fatalf("after refund %d", f.balance(t, id))
	}
	var debit *events.Debit
	var refunds int
	for _, e := range f.stream(t) {
		switch e := e.(type) {
		case *events.Debit:
			if e.ID == d.ID {
				debit = e
			}
		case *events.Refund:
			if e.ID == d.ID && e.Amount == price {
				refunds++
			}
		}
	}
	if debit == nil || debit.Amount != price || debit.Account != id || debit.ChainID != 137 || refunds != 1 {
		t.Fatalf("events: debit %+v, refunds %d", debit, refunds)
	}
	// Two calls fit, the third does not; RPC calls still cost 30 units.
	for _, want := range []meter.Outcome{meter.Paid, meter.Paid, meter.PaymentRequired} {
		if d, _ = f.m.AuthorizeMetric(ctx, req, price); d.Outcome != want {
			t.Fatalf("%v, want %v", d.Outcome, want)
		}
	}
	f.clk.Add(time.Millisecond)
	if d = f.authorize(t, meter.Request{IP: ip("192.0.2.7"), KeyHash: meter.HashKey(secret), Calls: 1}); d.Outcome != meter.Paid || d.Amount() != money.PricePerCall || f.balance(t, id) != 470 {
		t.Fatalf("rpc after metrics: %+v, balance %d", d, f.balance(t, id))
	}
	if _, err := f.m.AuthorizeMetric(ctx, req, 0); err == nil {
		t.Fatal("a zero price was accepted")
	}
}
