package meter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// lose plays a Redis that lost its data: the generation marker is gone.
func (f *fixture) lose(t *testing.T) {
	t.Helper()
	for i := range f.layout().N() {
		if err := f.rdb.Del(context.Background(), f.layout().Shard(i).Generation()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// Without the generation marker, a key the meter cannot find is "retry
// shortly" (Recovering), never "unknown" (401), on every path that looks a
// key or a bundle up; nothing is booked for it. What Redis still knows is
// served as before (an active key pays, a revoked key is refused, anonymous
// calls draw the free tier), and once the marker is back an unknown key is
// unknown again.
func TestRecoveringWithoutGenerationMarker(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10})
	ctx := context.Background()
	secret, id := f.newKey(t)
	f.credit(t, id, 10*money.PricePerCall)
	revoked, rid := f.newKey(t)
	if err := f.rdb.HSet(ctx, f.layout().Account(rid), balances.FieldStatus, balances.StatusRevoked).Err(); err != nil {
		t.Fatal(err)
	}
	// A bundle key whose wallet's bundle is then lost.
	pg, err := f.m.PrepareGrant(meter.Request{ChainID: 137, IP: ip("198.51.100.7"), Calls: 1}, grant("0xccc"))
	if err != nil {
		t.Fatal(err)
	}
	_, bkey, err := f.m.GrantBundle(ctx, pg)
	if err != nil || bkey == nil {
		t.Fatalf("grant: %v %v", err, bkey)
	}
	if err := f.rdb.Del(ctx, f.layout().Bundle(wallet)).Err(); err != nil {
		t.Fatal(err)
	}
	before := len(f.stream(t))
	f.lose(t)

	unknown, _ := meter.NewKey()
	req := func(key string) meter.Request {
		r := meter.Request{ChainID: 137, IP: ip("192.0.2.60"), Calls: 1}
		if key != "" {
			r.KeyHash = meter.HashKey(key)
		}
		return r
	}
	wantRecovering := func(what string, d meter.Decision) {
		t.Helper()
		if d.Outcome != meter.Recovering || d.Reason != meter.ReasonRecovering || d.RetryAfter != meter.RecoveryRetryAfter {
			t.Fatalf("%s: %+v, want recovering", what, d)
		}
	}
	wantRecovering("unknown key", f.authorize(t, req(unknown)))
	wantRecovering("bundle key without its bundle", f.authorize(t, req(bkey.Secret)))
	d, err := f.m.AuthorizeMetric(ctx, req(unknown), money.PricePerCall)
	if err != nil {
		t.Fatal(err)
	}
	wantRecovering("metric with an unknown key", d)
	d, err = f.m.AuthorizeSIWX(ctx, req(""), wallet, "nonce-r1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wantRecovering("SIWX without a bundle", d)
	d, err = f.m.PaymentGate(ctx, ip("192.0.2.60"))
	if err != nil {
		t.Fatal(err)
	}
	wantRecovering("payment gate", d)
	if _, st, err := f.m.Usage(ctx, meter.HashKey(unknown)); err != nil || st != meter.KeyRecovering {
		t.Fatalf("usage of an unknown key: %v %v", st, err)
	}
	if st, err := f.m.AccountStatus(ctx, accounts.NewID()); err != nil || st != meter.KeyRecovering {
		t.Fatalf("status of an unknown account: %v %v", st, err)
	}
	if n := len(f.stream(t)); n != before {
		t.Fatalf("recovering answers booked %d events", n-before)
	}

	// What Redis knows is served unchanged.
	if d := f.authorize(t, req(secret)); d.Outcome != meter.Paid || d.Balance != 9*money.PricePerCall {
		t.Fatalf("active key: %+v", d)
	}
	if d := f.authorize(t, req(revoked)); d.Outcome != meter.Unauthorized || d.Reason != "revoked_key" {
		t.Fatalf("revoked key: %+v", d)
	}
	if d := f.authorize(t, req("")); d.Outcome != meter.Free {
		t.Fatalf("anonymous: %+v", d)
	}
	if _, st, err := f.m.Usage(ctx, meter.HashKey(revoked)); err != nil || st != meter.KeyRevoked {
		t.Fatalf("usage of a revoked key: %v %v", st, err)
	}

	// The marker back: unknown is unknown, the refused SIWX nonce is unused.
	testenv.MarkRebuiltLayout(t, f.rdb, f.layout())
	if d := f.authorize(t, req(unknown)); d.Outcome != meter.Unauthorized || d.Reason != "unknown_key" {
		t.Fatalf("unknown key with the marker: %+v", d)
	}
	if _, st, err := f.m.Usage(ctx, meter.HashKey(unknown)); err != nil || st != meter.KeyUnknown {
		t.Fatalf("usage with the marker: %v %v", st, err)
	}
	if st, err := f.m.AccountStatus(ctx, accounts.NewID()); err != nil || st != meter.KeyUnknown {
		t.Fatalf("account status with the marker: %v %v", st, err)
	}
	d, err = f.m.AuthorizeSIWX(ctx, req(""), wallet, "nonce-r1", time.Minute)
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonBundleExhausted {
		t.Fatalf("SIWX with the marker: %v %+v (the nonce must still be unused)", err, d)
	}
	if d, err := f.m.PaymentGate(ctx, ip("192.0.2.61")); err != nil || d.Outcome != 0 {
		t.Fatalf("payment gate with the marker: %v %+v", err, d)
	}
}

// A metering call whose reply was lost (Redis killed after the script ran)
// was answered 503; VoidIfBooked finds its Debit and gives the charge back,
// once however often it runs; a request that was never booked finds none.
// MaybeBooked tells such a failure from a connection never made.
func TestVoidIfBooked(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10})
	// The stream's ids are Redis's clock: the search window is the
	// decision's time, so the meter's clock must be the real one here.
	f.clk.Add(time.Since(f.clk.Now()))
	ctx := context.Background()
	secret, id := f.newKey(t)
	f.credit(t, id, 10*money.PricePerCall)
	d := f.authorize(t, meter.Request{ChainID: 137, IP: ip("192.0.2.70"), KeyHash: meter.HashKey(secret), Calls: 2})
	if d.Outcome != meter.Paid || f.balance(t, id) != 8*money.PricePerCall {
		t.Fatalf("paid: %+v", d)
	}
	lost := meter.AsUnanswered(d) // what the gateway holds when the reply was lost
	for run := range 2 {
		found, err := f.m.VoidIfBooked(ctx, &lost)
		if err != nil || !found || f.balance(t, id) != 10*money.PricePerCall {
			t.Fatalf("void run %d: found %v err %v balance %d", run, found, err, f.balance(t, id))
		}
	}
	refunds := 0
	for _, e := range f.stream(t) {
		if r, ok := e.(*events.Refund); ok && r.ID == d.ID && r.Amount == 2*money.PricePerCall && r.Calls == 2 {
			refunds++
		}
	}
	if refunds != 1 {
		t.Fatalf("%d refund events for the voided request", refunds)
	}
	// A free call voided gives the IP its allowance back.
	free := f.authorize(t, meter.Request{ChainID: 137, IP: ip("192.0.2.71"), Calls: 3})
	if free.Outcome != meter.Free || free.FreeLeft != 7 {
		t.Fatalf("free: %+v", free)
	}
	if found, err := f.m.VoidIfBooked(ctx, &free); err != nil || !found {
		t.Fatalf("void free: %v %v", found, err)
	}
	if again := f.authorize(t, meter.Request{ChainID: 137, IP: ip("192.0.2.71"), Calls: 1}); again.FreeLeft != 9 {
		t.Fatalf("free allowance after the void: %+v", again)
	}
	// A script Redis ran long after the decision (a Redis stalled past
	// the timeout by a slow fsync, a paused VM, a SIGSTOP runs what waits in
	// its sockets when it resumes): its Debit is stamped with Redis's clock
	// then, a minute after the decision here, and is still found.
	f.clk.Add(-time.Minute)
	late := f.authorize(t, meter.Request{ChainID: 137, IP: ip("192.0.2.73"), KeyHash: meter.HashKey(secret), Calls: 1})
	f.clk.Add(time.Minute)
	if late.Outcome != meter.Paid || f.balance(t, id) != 9*money.PricePerCall {
		t.Fatalf("late: %+v", late)
	}
	lostLate := meter.AsUnanswered(late)
	if found, err := f.m.VoidIfBooked(ctx, &lostLate); err != nil || !found || f.balance(t, id) != 10*money.PricePerCall {
		t.Fatalf("void of a script run a minute after its decision: found %v err %v balance %d", found, err, f.balance(t, id))
	}
	// Refused (not booked): nothing to find.
	unknown, _ := meter.NewKey()
	f.lose(t)
	r := f.authorize(t, meter.Request{ChainID: 137, IP: ip("192.0.2.72"), KeyHash: meter.HashKey(unknown), Calls: 1})
	if found, err := f.m.VoidIfBooked(ctx, &r); err != nil || found {
		t.Fatalf("void of a request never booked: %v %v", found, err)
	}

	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer down.Close()
	m, err := meter.New(down, meter.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip("192.0.2.1"), Calls: 1}); !errors.Is(err, meter.ErrUnavailable) || meter.MaybeBooked(err) {
		t.Fatalf("a refused connection: %v, MaybeBooked %v", err, meter.MaybeBooked(err))
	}
	if !meter.MaybeBooked(fmt.Errorf("%w: %w", meter.ErrUnavailable, io.EOF)) {
		t.Fatal("a connection lost mid-call is not treated as maybe booked")
	}
	if meter.MaybeBooked(fmt.Errorf("%w: %w", meter.ErrUnavailable, redis.ErrPoolTimeout)) {
		t.Fatal("a call that never got a connection is treated as maybe booked")
	}
}
