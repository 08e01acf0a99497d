package meter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// An operator's runtime limits replace the configured ones from the next
// decision on, field by field, for the 402 answer, the statistics and the
// usage endpoint too; clearing them restores the configuration.
func TestRuntimeFreeLimits(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 2, FreeSubnetLimit: 100})
	ctx := context.Background()
	caller := meter.Request{IP: ip("198.51.100.7"), Calls: 1}
	for range 2 {
		if d := f.authorize(t, caller); d.Outcome != meter.Free || d.Limits != (meter.FreeLimits{DailyPerIP: 2, Subnet: 100}) {
			t.Fatalf("configured limits: %+v", d)
		}
	}
	if d := f.authorize(t, caller); d.Outcome != meter.PaymentRequired || d.Limits.DailyPerIP != 2 {
		t.Fatalf("third call: %+v", d)
	}
	if l, override, err := f.m.FreeLimits(ctx); err != nil || override || l.DailyPerIP != 2 {
		t.Fatalf("limits before override: %+v %v %v", l, override, err)
	}

	if err := f.m.SetFreeLimits(ctx, meter.FreeLimits{DailyPerIP: 5, Subnet: 4}); err != nil {
		t.Fatal(err)
	}
	if l, override, err := f.m.FreeLimits(ctx); err != nil || !override || l != (meter.FreeLimits{DailyPerIP: 5, Subnet: 4}) {
		t.Fatalf("limits after override: %+v %v %v", l, override, err)
	}
	// The IP may now make 5; the /24 is capped at 4 and 2 are used.
	for i := range 2 {
		d := f.authorize(t, caller)
		if d.Outcome != meter.Free || d.FreeLeft != int64(5-3-i) || d.Limits != (meter.FreeLimits{DailyPerIP: 5, Subnet: 4}) {
			t.Fatalf("call %d under the override: %+v", i, d)
		}
	}
	if d := f.authorize(t, caller); d.Outcome != meter.PaymentRequired || d.Reason != "subnet" || d.Limits.Subnet != 4 {
		t.Fatalf("subnet cap under the override: %+v", d)
	}
	st, err := f.m.Stats(ctx)
	if err != nil || st.Limits.DailyPerIP != 5 || st.NearThreshold != 4 || st.Calls != 4 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	secret, _ := f.newKey(t)
	if u, _, err := f.m.Usage(ctx, meter.HashKey(secret)); err != nil || u.DailyLimit != 5 {
		t.Fatalf("usage daily limit %+v %v", u, err)
	}

	// One field set by hand: the other comes from the configuration.
	if err := f.m.ClearFreeLimits(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range f.layout().N() {
		if err := f.rdb.HSet(ctx, f.layout().Shard(i).FreeConfig(), balances.FreeConfigIP, 50).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if d := f.authorize(t, meter.Request{IP: ip("203.0.113.1"), Calls: 1}); d.Outcome != meter.Free || d.Limits != (meter.FreeLimits{DailyPerIP: 50, Subnet: 100}) {
		t.Fatalf("partial override: %+v", d)
	}
	if err := f.m.ClearFreeLimits(ctx); err != nil {
		t.Fatal(err)
	}
	if d := f.authorize(t, caller); d.Outcome != meter.PaymentRequired || d.Limits.DailyPerIP != 2 {
		t.Fatalf("after clearing: %+v", d)
	}
	if u, _, _ := f.m.Usage(ctx, meter.HashKey(secret)); u.DailyLimit != 2 {
		t.Fatalf("usage daily limit after clearing %d", u.DailyLimit)
	}
	for _, bad := range []meter.FreeLimits{{DailyPerIP: -1}, {Subnet: meter.MaxFreeLimit + 1}} {
		if err := f.m.SetFreeLimits(ctx, bad); err == nil {
			t.Fatalf("limits %+v accepted", bad)
		}
	}
}

// A refund under an override gives the allowance back and keeps the
// near-limit statistic consistent with the limit the call was booked under.
func TestRefundUnderRuntimeLimits(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 100, FreeSubnetLimit: 100})
	ctx := context.Background()
	if err := f.m.SetFreeLimits(ctx, meter.FreeLimits{DailyPerIP: 10, Subnet: 100}); err != nil {
		t.Fatal(err)
	}
	d := f.authorize(t, meter.Request{IP: ip("192.0.2.9"), Calls: 8}) // crosses 80 % of 10
	if st, _ := f.m.Stats(ctx); st.NearLimitIPs != 1 {
		t.Fatalf("near after 8 of 10: %+v", st)
	}
	if err := f.m.Refund(ctx, &d, 8); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.m.Stats(ctx); st.NearLimitIPs != 0 || st.Calls != 0 || st.ActiveIPs != 0 {
		t.Fatalf("stats after the refund: %+v", st)
	}
}

func TestRevoke(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10})
	ctx := context.Background()
	secret, id := f.newKey(t)
	f.credit(t, id, 300)
	key := meter.Request{IP: ip("192.0.2.60"), KeyHash: meter.HashKey(secret), Calls: 1}
	if d := f.authorize(t, key); d.Outcome != meter.Paid {
		t.Fatalf("before: %+v", d)
	}
	if changed, err := f.m.Revoke(ctx, id, "leaked on a forum"); err != nil || !changed {
		t.Fatalf("revoke: %v %v", changed, err)
	}
	if d := f.authorize(t, key); d.Outcome != meter.Unauthorized || d.Reason != "revoked_key" {
		t.Fatalf("after: %+v", d)
	}
	if changed, err := f.m.Revoke(ctx, id, "again"); err != nil || changed {
		t.Fatalf("second revoke: %v %v", changed, err)
	}
	if _, err := f.m.Revoke(ctx, accounts.NewID(), "x"); !errors.Is(err, meter.ErrUnknownAccount) {
		t.Fatalf("unknown account: %v", err)
	}
	var revokes []*events.KeyRevoked
	for _, e := range f.stream(t) {
		if r, ok := e.(*events.KeyRevoked); ok {
			revokes = append(revokes, r)
		}
	}
	if len(revokes) != 1 || revokes[0].KeyID != id || revokes[0].Reason != "leaked on a forum" || revokes[0].TimeMs != f.clk.Now().UnixMilli() {
		t.Fatalf("revocation events: %+v", revokes)
	}
	if f.balance(t, id) != 270 {
		t.Fatalf("a revocation touched the balance: %d", f.balance(t, id))
	}
}

func TestAdjust(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0, FreeSubnetLimit: 0})
	ctx := context.Background()
	secret, id := f.newKey(t)
	key := meter.Request{IP: ip("192.0.2.70"), KeyHash: meter.HashKey(secret), Calls: 1}
	if d := f.authorize(t, key); d.Outcome != meter.PaymentRequired {
		t.Fatalf("unfunded: %+v", d)
	}
	res, err := f.m.Adjust(ctx, meter.Adjustment{ID: "ticket-42", Account: id, Units: 90, Reason: "goodwill"})
	if err != nil || !res.Applied || res.Balance != 90 || res.ID != "ticket-42" || res.Revoked {
		t.Fatalf("credit: %+v %v", res, err)
	}
	if d := f.authorize(t, key); d.Outcome != meter.Paid || d.Balance != 60 {
		t.Fatalf("credited key: %+v", d)
	}
	// A retry of the same adjustment applies nothing; the id used for
	// another amount or account is a conflict.
	if res, err := f.m.Adjust(ctx, meter.Adjustment{ID: "ticket-42", Account: id, Units: 90, Reason: "goodwill"}); err != nil || res.Applied || res.Balance != 60 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if _, err := f.m.Adjust(ctx, meter.Adjustment{ID: "ticket-42", Account: id, Units: 91, Reason: "goodwill"}); !errors.Is(err, meter.ErrAdjustmentConflict) {
		t.Fatalf("conflict: %v", err)
	}
	_, other := f.newKey(t)
	if _, err := f.m.Adjust(ctx, meter.Adjustment{ID: "ticket-42", Account: other, Units: 90, Reason: "goodwill"}); !errors.Is(err, meter.ErrAdjustmentConflict) {
		t.Fatalf("conflict across accounts: %v", err)
	}
	// A debit may not go below zero; refused, it changes nothing.
	var low *meter.ErrInsufficientBalance
	if _, err := f.m.Adjust(ctx, meter.Adjustment{Account: id, Units: -61, Reason: "chargeback"}); !errors.As(err, &low) || low.Balance != 60 {
		t.Fatalf("debit below zero: %v", err)
	}
	res, err = f.m.Adjust(ctx, meter.Adjustment{Account: id, Units: -60, Reason: "chargeback"})
	if err != nil || !res.Applied || res.Balance != 0 || !meter.ValidAdjustmentID(res.ID) || res.ID == "ticket-42" {
		t.Fatalf("debit to zero: %+v %v", res, err)
	}
	if _, err := f.m.Adjust(ctx, meter.Adjustment{Account: accounts.NewID(), Units: 5, Reason: "x"}); !errors.Is(err, meter.ErrUnknownAccount) {
		t.Fatalf("unknown account: %v", err)
	}
	for _, bad := range []meter.Adjustment{
		{Account: id, Units: 0, Reason: "zero"},
		{Account: id, Units: 5, Reason: ""},
		{Account: id, Units: 5, Reason: "x", ID: "has space"},
		{Account: "key_nope", Units: 5, Reason: "x"},
	} {
		if _, err := f.m.Adjust(ctx, bad); err == nil || errors.Is(err, meter.ErrUnavailable) {
			t.Fatalf("invalid adjustment %+v: %v", bad, err)
		}
	}
	// Adjustments apply to a revoked key's account too (its balance may
	// have to be settled by hand) and say so.
	if _, err := f.m.Revoke(ctx, id, "closed"); err != nil {
		t.Fatal(err)
	}
	if res, err := f.m.Adjust(ctx, meter.Adjustment{Account: id, Units: 1, Reason: "final"}); err != nil || !res.Revoked || res.Balance != 1 {
		t.Fatalf("revoked account: %+v %v", res, err)
	}

	// The stream holds exactly the three applied adjustments; with the
	// debit they account for the balance.
	var sum money.Units
	var n int
	for _, e := range f.stream(t) {
		switch e := e.(type) {
		case *events.Adjustment:
			n++
			sum += e.Units
			if e.Account != id || e.Reason == "" {
				t.Fatalf("adjustment event %+v", e)
			}
		case *events.Debit:
			if e.Payer == events.PayerCredits {
				sum -= e.Amount
			}
		}
	}
	if n != 3 || sum != f.balance(t, id) {
		t.Fatalf("%d adjustment events summing with debits to %d, balance %d", n, sum, f.balance(t, id))
	}
}

// Concurrent debits and paid calls never take a balance below zero.
func TestConcurrentAdjustAndSpend(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0, FreeSubnetLimit: 0})
	ctx := context.Background()
	secret, id := f.newKey(t)
	f.credit(t, id, 3000)
	var wg sync.WaitGroup
	var debited, paid atomic.Int64
	for i := range 40 {
		wg.Go(func() {
			if i%2 == 0 {
				if _, err := f.m.Adjust(ctx, meter.Adjustment{Account: id, Units: -150, Reason: "load"}); err == nil {
					debited.Add(150)
				}
				return
			}
			d, err := f.m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip("192.0.2.80"), KeyHash: meter.HashKey(secret), Calls: 5})
			if err == nil && d.Outcome == meter.Paid {
				paid.Add(150)
			}
		})
	}
	wg.Wait()
	if bal := f.balance(t, id); bal < 0 || int64(bal)+debited.Load()+paid.Load() != 3000 {
		t.Fatalf("balance %d, debited %d, paid %d", bal, debited.Load(), paid.Load())
	}
}

// The admin keys share the tagged prefix's slot with the rest, so the
// metering and admin scripts stay single-slot on Redis Cluster.
func TestAdminKeysShareTheSlot(t *testing.T) {
	l := balances.Layout{Prefix: "{tg}:"}
	id := accounts.NewID()
	for _, k := range []string{l.FreeConfig(), l.Adjustments(), l.Account(id)} {
		if slot(k) != slot(l.Stream(0)) {
			t.Fatalf("%s is in slot %d, the stream in %d", k, slot(k), slot(l.Stream(0)))
		}
	}
}
