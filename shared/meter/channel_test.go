package meter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const channelID = "0x67fbb0303ffc45d512915ac4de5035f0707d477a85152c4c023b182f4cbc401b"

func voucher(cum money.Units) meter.Voucher {
	return meter.Voucher{ChannelID: channelID, Wallet: wallet, Cumulative: cum, Signature: "0xsig"}
}

// Vouchers draw exactly one call's flat price each, in order: the same or a
// lower cumulative amount is refused, so is one past the deposit; a deposit
// is recorded once per transaction; each served voucher is one Debit event
// of the wallet's, as a bundle draw.
func TestVouchersDrawInOrderWithinTheDeposit(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	price := money.BundleCallRevenue

	d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(price))
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonChannelUnknown {
		t.Fatalf("voucher before any deposit: %v %q %v", d.Outcome, d.Reason, err)
	}

	dep := meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: `{"payer":"x"}`, TxHash: "0xd1", Balance: 3 * price}
	st, err := f.m.RecordDeposit(ctx, dep)
	if err != nil || st.Balance != 3*price || st.Charged != 0 || st.Wallet != wallet {
		t.Fatalf("deposit: %+v %v", st, err)
	}
	// The same deposit recorded again (a retried settle) changes nothing.
	dep.Balance = 6 * price // even if the chain says more by now, a tx counts once
	if st, err = f.m.RecordDeposit(ctx, dep); err != nil || st.Balance != 3*price {
		t.Fatalf("recorded twice: %+v %v", st, err)
	}

	for i := money.Units(1); i <= 3; i++ {
		d, st, err := f.m.AuthorizeVoucher(ctx, req, voucher(i*price))
		if err != nil || d.Outcome != meter.Bundle || st.Charged != i*price || d.Wallet != wallet {
			t.Fatalf("voucher %d: %v %q charged %d err %v", i, d.Outcome, d.Reason, st.Charged, err)
		}
		if d.BundleLeft != int64(3-i) {
			t.Fatalf("voucher %d: %d calls left, want %d", i, d.BundleLeft, 3-i)
		}
	}
	// Replayed (same cumulative), older, skipping ahead: all a cumulative mismatch, with the state
	// the corrective 402 shows.
	for _, cum := range []money.Units{3 * price, price, 5 * price} {
		d, st, err := f.m.AuthorizeVoucher(ctx, req, voucher(cum))
		if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonCumulativeMismatch || st.Charged != 3*price || st.Signed != 3*price {
			t.Fatalf("voucher %d after 3 draws: %v %q %+v %v", cum, d.Outcome, d.Reason, st, err)
		}
	}
	// The next one in order is past the deposit.
	d, _, err = f.m.AuthorizeVoucher(ctx, req, voucher(4*price))
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonOverDeposit {
		t.Fatalf("over the deposit: %v %q %v", d.Outcome, d.Reason, err)
	}
	// A top-up (another transaction) lets it through; a batch of 2 calls costs two prices.
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: "{}", TxHash: "0xd2", Balance: 10 * price}); err != nil {
		t.Fatal(err)
	}
	req2 := req
	req2.Calls = 2
	if d, st, err := f.m.AuthorizeVoucher(ctx, req2, voucher(5*price)); err != nil || d.Outcome != meter.Bundle || st.Charged != 5*price {
		t.Fatalf("2-call voucher: %v %q %+v %v", d.Outcome, d.Reason, st, err)
	}
	var debits, calls int
	var amount money.Units
	for _, e := range f.stream(t) {
		if db, ok := e.(*events.Debit); ok {
			if db.Payer != events.PayerChannel || db.Account != wallet {
				t.Fatalf("debit %+v", db)
			}
			debits++
			calls += db.Calls
			amount += db.Amount
		}
	}
	if debits != 4 || calls != 5 || amount != 5*price {
		t.Fatalf("%d debits of %d calls for %d units, want 4, 5, %d", debits, calls, amount, 5*price)
	}
	st, ok, err := f.m.Channel(ctx, channelID)
	if err != nil || !ok || st.Charged != 5*price || st.Balance != 10*price || st.Signature != "0xsig" {
		t.Fatalf("channel %+v %v %v", st, ok, err)
	}
}

// A voucher for another wallet's channel id never draws (the id binds the payer; this guards the key).
func TestVoucherWrongWalletIsUnknown(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, TxHash: "0xd", Balance: 1000}); err != nil {
		t.Fatal(err)
	}
	v := voucher(money.BundleCallRevenue)
	v.Wallet = "0x0000000000000000000000000000000000000001"
	d, _, err := f.m.AuthorizeVoucher(ctx, meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1}, v)
	if err != nil || d.Reason != meter.ReasonChannelUnknown {
		t.Fatalf("%v %q %v", d.Outcome, d.Reason, err)
	}
}

// A cooperative refund closes the channel: only a refund voucher at exactly
// the charged total closes it (an unknown channel or a stale voucher does
// not), no voucher draws while it is closed, a partial refund or a failed
// one reopens it at the balance the chain reported, and a new deposit
// reopens a fully refunded channel.
func TestRefundClosesTheChannel(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	price := money.BundleCallRevenue
	if _, reason, err := f.m.CloseChannel(ctx, channelID, wallet, 0); err != nil || reason != meter.ReasonChannelUnknown {
		t.Fatalf("close before any deposit: %q %v", reason, err)
	}
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: "{}", TxHash: "0xd1", Balance: 10 * price}); err != nil {
		t.Fatal(err)
	}
	for i := money.Units(1); i <= 2; i++ {
		if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(i*price)); err != nil || d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %q %v", i, d.Outcome, d.Reason, err)
		}
	}
	if st, reason, err := f.m.CloseChannel(ctx, channelID, wallet, price); err != nil || reason != meter.ReasonCumulativeMismatch || st.Charged != 2*price {
		t.Fatalf("stale refund voucher: %q %+v %v", reason, st, err)
	}
	if _, reason, err := f.m.CloseChannel(ctx, channelID, "0x0000000000000000000000000000000000000001", 2*price); err != nil || reason != meter.ReasonChannelUnknown {
		t.Fatalf("another wallet's refund: %q %v", reason, err)
	}
	// The vouchers still draw: nothing closed it yet.
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(3*price)); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("voucher 3: %v %q %v", d.Outcome, d.Reason, err)
	}
	st, reason, err := f.m.CloseChannel(ctx, channelID, wallet, 3*price)
	if err != nil || reason != "" || st.Charged != 3*price {
		t.Fatalf("close: %q %+v %v", reason, st, err)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(4*price)); err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonChannelRefunded {
		t.Fatalf("voucher on a closed channel: %v %q %v", d.Outcome, d.Reason, err)
	}
	// A partial refund (balance 8 prices left, 3 claimed) reopens it at the new balance.
	if err := f.m.RefundDone(ctx, channelID, 8*price, 3*price, true); err != nil {
		t.Fatal(err)
	}
	if d, st, err := f.m.AuthorizeVoucher(ctx, req, voucher(4*price)); err != nil || d.Outcome != meter.Bundle || st.Balance != 8*price || st.Claimed != 3*price {
		t.Fatalf("voucher after a partial refund: %v %q %+v %v", d.Outcome, d.Reason, st, err)
	}
	// A full refund leaves it closed, also to the next voucher in order.
	if _, reason, err := f.m.CloseChannel(ctx, channelID, wallet, 4*price); err != nil || reason != "" {
		t.Fatalf("close: %q %v", reason, err)
	}
	if err := f.m.RefundDone(ctx, channelID, 4*price, 4*price, false); err != nil {
		t.Fatal(err)
	}
	for _, cum := range []money.Units{5 * price, 4 * price} {
		if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(cum)); err != nil || d.Reason != meter.ReasonChannelRefunded {
			t.Fatalf("voucher %d after the refund: %v %q %v", cum, d.Outcome, d.Reason, err)
		}
	}
	// A new deposit opens it again.
	if _, err := f.m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: "{}", TxHash: "0xd2", Balance: 14 * price, Claimed: 4 * price}); err != nil {
		t.Fatal(err)
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(5*price)); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("voucher after a new deposit: %v %q %v", d.Outcome, d.Reason, err)
	}
}

// Every change of a channel is a ChannelState event on the channel's
// shard's stream, in the same script: the whole state after it and a
// change counter, so settlementd can keep the newest in PostgreSQL and
// rebuild the channel after a Redis loss. Without the generation marker a
// voucher is "recovering" (not "missing channel") and a deposit is not
// recorded.
func TestChannelChangesAreStreamed(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 8453, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	p := money.BundleCallRevenue
	dep := meter.ChannelDeposit{ChannelID: channelID, Wallet: wallet, Config: `{"payer":"x"}`, TxHash: "0xd1", Balance: 3 * p}
	if _, err := f.m.RecordDeposit(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.RecordDeposit(ctx, dep); err != nil { // the same deposit again: no change, no event
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if d, _, err := f.m.AuthorizeVoucher(ctx, req, meter.Voucher{ChannelID: channelID, Wallet: wallet, Cumulative: money.Units(i) * p,
			Signature: "0xsig" + string(rune('0'+i))}); err != nil || d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %q %v", i, d.Outcome, d.Reason, err)
		}
	}
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(p)); err != nil || d.Reason != meter.ReasonCumulativeMismatch { // refused: no event
		t.Fatalf("replay: %v %q %v", d.Outcome, d.Reason, err)
	}
	if err := f.m.MarkClaimed(ctx, channelID, p); err != nil {
		t.Fatal(err)
	}
	if _, reason, err := f.m.CloseChannel(ctx, channelID, wallet, 2*p); err != nil || reason != "" {
		t.Fatalf("close: %q %v", reason, err)
	}
	if err := f.m.RefundDone(ctx, channelID, 2*p, 2*p, false); err != nil {
		t.Fatal(err)
	}
	var got []events.ChannelState
	for _, e := range f.stream(t) {
		if c, ok := e.(*events.ChannelState); ok {
			got = append(got, *c)
		}
	}
	want := []events.ChannelState{
		{Balance: 3 * p, DepositTx: "0xd1"},
		{Balance: 3 * p, Charged: p, Signed: p, Signature: "0xsig1"},
		{Balance: 3 * p, Charged: 2 * p, Signed: 2 * p, Signature: "0xsig2"},
		{Balance: 3 * p, Claimed: p, Charged: 2 * p, Signed: 2 * p, Signature: "0xsig2"},
		{Balance: 3 * p, Claimed: p, Charged: 2 * p, Signed: 2 * p, Signature: "0xsig2", Closed: true},
		{Balance: 2 * p, Claimed: 2 * p, Charged: 2 * p, Signed: 2 * p, Signature: "0xsig2", Closed: true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d channel states on the stream, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		w := want[i]
		w.Channel, w.Seq, w.TimeMs, w.Wallet, w.Config = channelID, int64(i+1), f.clk.Now().UnixMilli(), wallet, `{"payer":"x"}`
		if got[i] != w {
			t.Errorf("state %d: %+v, want %+v", i+1, got[i], w)
		}
	}

	f.lose(t)
	if d, _, err := f.m.AuthorizeVoucher(ctx, req, voucher(3*p)); err != nil || d.Outcome != meter.Recovering {
		t.Fatalf("voucher without the marker: %v %q %v", d.Outcome, d.Reason, err)
	}
	dep.TxHash, dep.Balance = "0xd2", 9*p
	if _, err := f.m.RecordDeposit(ctx, dep); !errors.Is(err, meter.ErrUnavailable) {
		t.Fatalf("deposit without the marker: %v", err)
	}
	if st, _, _ := f.m.Channel(ctx, channelID); st.Balance != 2*p || st.Charged != 2*p {
		t.Fatalf("channel changed without the marker: %+v", st)
	}
}
