package meter_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A voucher draw whose reply was lost is voided once: the channel's charged
// total goes back down by its price (so no claim includes it) while the
// signed voucher stays, the client's retry at the same cumulative amount is
// drawn, and one Refund of payer "channel" books it against the Debit.
func TestVoidVoucherLowersTheChargedTotal(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	f.clk.Add(time.Since(f.clk.Now())) // the stream's ids are Redis's clock
	ctx := context.Background()
	req := meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	price := money.BundleCallRevenue
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: "{}", TxHash: "0xd1", Balance: 10 * price}); err != nil {
		t.Fatal(err)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(price)); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("voucher 1: %v %v", d.Outcome, err)
	}
	d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(2*price))
	if err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("voucher 2: %v %v", d.Outcome, err)
	}
	lost := meter.AsUnanswered(d)
	for run := range 2 {
		found, err := f.m.VoidVoucherIfBooked(ctx, &lost, channelID)
		st, _, _ := f.m.Channel(ctx, channelID)
		if err != nil || !found || st.Charged != price || st.Signed != 2*price {
			t.Fatalf("void run %d: found %v err %v state %+v", run, found, err, st)
		}
	}
	refunds := 0
	for _, e := range f.stream(t) {
		if r, ok := e.(*events.Refund); ok && r.ID == d.ID {
			if r.Payer != events.PayerChannel || r.Amount != price || r.Calls != 1 || r.Account != wallet {
				t.Fatalf("refund %+v", r)
			}
			refunds++
		}
	}
	if refunds != 1 {
		t.Fatalf("%d refunds of the voided draw, want 1", refunds)
	}
	// The client never saw its second call served: it sends that voucher again.
	if d, st, err := f.m.AuthorizeVoucher(ctx, req, voucher(2*price)); err != nil || d.Outcome != meter.Bundle || st.Charged != 2*price {
		t.Fatalf("the retried voucher: %v %q %+v %v", d.Outcome, d.Reason, st, err)
	}
	// A draw never booked is not found; the charged total never falls below
	// what the chain has claimed.
	if err := f.m.MarkClaimed(ctx, channelID, 2*price); err != nil {
		t.Fatal(err)
	}
	d3, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(3*price))
	if err != nil || d3.Outcome != meter.Bundle {
		t.Fatal(err)
	}
	if err := f.m.MarkClaimed(ctx, channelID, 3*price); err != nil {
		t.Fatal(err)
	}
	l3 := meter.AsUnanswered(d3)
	if found, err := f.m.VoidVoucherIfBooked(ctx, &l3, channelID); err != nil || !found {
		t.Fatalf("void of a claimed draw: %v %v", found, err)
	}
	if st, _, _ := f.m.Channel(ctx, channelID); st.Charged != 3*price {
		t.Fatalf("charged %d after voiding a claimed draw, want it held at the claim %d", st.Charged, 3*price)
	}
	// Claimed on chain, it cannot be unclaimed: the call comes back as a
	// bundle call of the wallet (once, however often the void runs).
	if found, err := f.m.VoidVoucherIfBooked(ctx, &l3, channelID); err != nil || !found {
		t.Fatalf("second void of a claimed draw: %v %v", found, err)
	}
	bundleRefunds := 0
	for _, e := range f.stream(t) {
		if r, ok := e.(*events.Refund); ok && r.ID == d3.ID {
			if r.Payer != events.PayerBundle || r.Amount != price || r.Account != wallet {
				t.Fatalf("refund of the claimed draw %+v", r)
			}
			bundleRefunds++
		}
	}
	if bundleRefunds != 1 {
		t.Fatalf("%d refunds of the claimed draw, want 1 bundle call", bundleRefunds)
	}
	if last, err := f.m.ChannelLastDraw(ctx, channelID); err != nil || time.Since(last) > time.Minute {
		t.Fatalf("last draw %v %v", last, err)
	}
}

// FollowChain only lowers the known balance (and raises totalClaimed): a
// voucher above what a payer's withdrawal leaves is refused at once; a
// channel this Redis does not know is left alone. ChannelClosed tells a
// channel the gateway closed for a refund.
func TestFollowChainLowersTheBalance(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	price := money.BundleCallRevenue
	if _, ok, err := f.m.FollowChain(ctx, channelID, 0, 0); err != nil || ok {
		t.Fatalf("unknown channel: %v %v", ok, err)
	}
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: "{}", TxHash: "0xd1", Balance: 10 * price}); err != nil {
		t.Fatal(err)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(price)); err != nil || d.Outcome != meter.Bundle {
		t.Fatal(err)
	}
	st, ok, err := f.m.FollowChain(ctx, channelID, 2*price, 0)
	if err != nil || !ok || st.Balance != 2*price {
		t.Fatalf("lowered: %+v %v %v", st, ok, err)
	}
	if st, _, _ = f.m.FollowChain(ctx, channelID, 9*price, price); st.Balance != 2*price || st.Claimed != price {
		t.Fatalf("raised? %+v", st)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(2*price)); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("within what remains: %v %v", d.Outcome, err)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(3*price)); err != nil || d.Reason != meter.ReasonOverDeposit {
		t.Fatalf("above what remains: %v %q %v", d.Outcome, d.Reason, err)
	}
	if closed, err := f.m.ChannelClosed(ctx, channelID); err != nil || closed {
		t.Fatalf("open channel reads closed: %v %v", closed, err)
	}
	if _, reason, err := f.m.CloseChannel(ctx, channelID, wallet, 2*price); err != nil || reason != "" {
		t.Fatal(reason, err)
	}
	if closed, err := f.m.ChannelClosed(ctx, channelID); err != nil || !closed {
		t.Fatalf("closed channel reads open: %v %v", closed, err)
	}
}
