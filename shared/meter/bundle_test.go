package meter_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const wallet = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"

func (f *fixture) bundleHash(t *testing.T) (calls, granted, used int64) {
	t.Helper()
	v, err := f.rdb.HMGet(context.Background(), f.layout().Bundle(wallet), "calls", "granted", "used").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := func(x any) int64 { s, _ := x.(string); i, _ := strconv.ParseInt(s, 10, 64); return i }
	return n(v[0]), n(v[1]), n(v[2])
}

func grant(tx string) meter.Grant {
	return meter.Grant{TxHash: tx, Wallet: wallet, Network: "eip155:8453", Amount: money.BundlePrice, Calls: money.BundleCalls}
}

// A settled payment grants 1,000 calls once per transaction, creates one
// bundle key, records the grant, key and debit events, and draws the paying
// request's calls.
func TestGrantBundleOncePerTransaction(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 137, IP: ip("198.51.100.7"), Calls: 1, Method: "eth_blockNumber"}
	pg, err := f.m.PrepareGrant(req, grant("0xaaa"))
	if err != nil {
		t.Fatal(err)
	}
	d, key, err := f.m.GrantBundle(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != meter.Bundle || d.BundleLeft != 999 || key == nil || !meter.WellFormedKey(key.Secret) {
		t.Fatalf("grant: outcome %v left %d key %v", d.Outcome, d.BundleLeft, key)
	}
	if c, g, u := f.bundleHash(t); c != 999 || g != 1000 || u != 1 {
		t.Fatalf("bundle hash calls/granted/used = %d/%d/%d, want 999/1000/1", c, g, u)
	}
	// A retry of the same request (its answer was lost) recognises its own
	// grant: the same key, nothing granted or drawn again.
	d1, key1, err := f.m.GrantBundle(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if key1 == nil || key1.Secret != key.Secret || d1.Outcome != meter.Bundle || d1.BundleLeft != 999 {
		t.Fatalf("retried grant: key %v outcome %v left %d", key1, d1.Outcome, d1.BundleLeft)
	}
	// Another request presenting the same transaction (a replayed payment)
	// gets nothing: no grant, no key, no draw.
	pg2, err := f.m.PrepareGrant(req, grant("0xaaa"))
	if err != nil {
		t.Fatal(err)
	}
	d2, key2, err := f.m.GrantBundle(ctx, pg2)
	if err != nil {
		t.Fatal(err)
	}
	if key2 != nil || d2.Outcome != meter.PaymentRequired || d2.Reason != meter.ReasonPaymentUsed || d2.BundleLeft != 999 {
		t.Fatalf("replayed grant: key %v outcome %v %q left %d", key2, d2.Outcome, d2.Reason, d2.BundleLeft)
	}
	if c, g, u := f.bundleHash(t); c != 999 || g != 1000 || u != 1 {
		t.Fatalf("after retry and replay calls/granted/used = %d/%d/%d, want 999/1000/1", c, g, u)
	}
	var grants, keys, debits int
	for _, e := range f.stream(t) {
		switch ev := e.(type) {
		case *events.BundleGranted:
			grants++
			if ev.ID != "0xaaa" || ev.Wallet != wallet || ev.Calls != 1000 || ev.Amount != 100_000 || ev.KeyID != key.ID {
				t.Errorf("grant event %+v", ev)
			}
		case *events.KeyCreated:
			keys++
			if ev.Kind != events.KeyBundle || ev.Wallet != wallet || ev.KeyID != key.ID || ev.KeyHash != meter.HashKey(key.Secret) {
				t.Errorf("key event %+v", ev)
			}
		case *events.Debit:
			debits++
			if ev.Payer != events.PayerBundle || ev.Account != wallet || ev.Asset != events.AssetUSDC || ev.Amount != 100 || ev.Calls != 1 {
				t.Errorf("debit event %+v", ev)
			}
		}
	}
	if grants != 1 || keys != 1 || debits != 1 {
		t.Fatalf("events: %d grants, %d keys, %d debits; want 1, 1, 1", grants, keys, debits)
	}

	// The bundle key draws on the same bundle; its revenue is USDC at 100 units a call.
	kd := f.authorize(t, meter.Request{ChainID: 137, IP: ip("203.0.113.9"), KeyHash: meter.HashKey(key.Secret), Calls: 3, Method: "batch"})
	if kd.Outcome != meter.Bundle || kd.Wallet != wallet || kd.Account != key.ID || kd.BundleLeft != 996 {
		t.Fatalf("bundle key: %+v", kd)
	}
	rev, ok := kd.Revenue(1, "alpha", "", f.clk.Now())
	if !ok || rev.Payer != events.PayerBundle || rev.Account != wallet || rev.Asset != events.AssetUSDC || rev.Amount != 200 || rev.Calls != 2 {
		t.Fatalf("revenue %+v", rev)
	}
	if err := f.m.Refund(ctx, &kd, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Refund(ctx, &kd, 1); err != nil { // idempotent
		t.Fatal(err)
	}
	if c, _, u := f.bundleHash(t); c != 997 || u != 3 {
		t.Fatalf("after refund calls/used = %d/%d, want 997/3", c, u)
	}
}

// SIWX draws need an unused nonce and enough calls; a used nonce or an
// exhausted bundle is a 402 that books nothing.
func TestSIWXDrawsNonceOnceAndStopsAtZero(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 137, IP: ip("198.51.100.7"), Calls: 1, Method: "eth_blockNumber"}
	d, err := f.m.AuthorizeSIWX(ctx, req, wallet, "nonce0001", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonBundleExhausted {
		t.Fatalf("no bundle yet: %v %q", d.Outcome, d.Reason)
	}
	// A refused draw did not burn the nonce.
	pg, err := f.m.PrepareGrant(req, grant("0xbbb"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.GrantBundle(ctx, pg); err != nil {
		t.Fatal(err)
	}
	d, err = f.m.AuthorizeSIWX(ctx, meter.Request{ChainID: 137, IP: ip("198.51.100.7"), Calls: 100, Method: "batch"}, wallet, "nonce0001", time.Minute)
	if err != nil || d.Outcome != meter.Bundle || d.BundleLeft != 899 {
		t.Fatalf("first draw: %v %+v", err, d)
	}
	d, err = f.m.AuthorizeSIWX(ctx, req, wallet, "nonce0001", time.Minute)
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonNonceUsed {
		t.Fatalf("replayed nonce: %v %+v", err, d)
	}
	// 899 left: concurrent single-call draws with fresh nonces take exactly 899.
	var wg sync.WaitGroup
	var mu sync.Mutex
	served := 0
	for i := range 950 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.m.AuthorizeSIWX(ctx, meter.Request{ChainID: 137, IP: ip("198.51.100." + strconv.Itoa(i%200)), Calls: 1, Method: "eth_blockNumber"},
				wallet, "n"+strconv.Itoa(100000+i), time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Outcome == meter.Bundle {
				mu.Lock()
				served++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if served != 899 {
		t.Fatalf("served %d draws from 899 calls", served)
	}
	if c, g, u := f.bundleHash(t); c != 0 || g != 1000 || u != 1000 {
		t.Fatalf("calls/granted/used = %d/%d/%d, want 0/1000/1000", c, g, u)
	}
	if _, err := f.m.AuthorizeSIWX(ctx, req, "0xNOTLOWER", "nonce0002", time.Minute); err == nil {
		t.Fatal("a non-canonical wallet was accepted")
	}
}

// The payment gate applies the IP rate before any facilitator is asked.
func TestPaymentGate(t *testing.T) {
	f := newFixture(t, meter.Config{IPRate: meter.Rate{Rate: 1, Per: time.Hour, Burst: 2}})
	ctx := context.Background()
	for i := range 2 {
		d, err := f.m.PaymentGate(ctx, ip("198.51.100.7"))
		if err != nil || d.Outcome != 0 {
			t.Fatalf("attempt %d: %v %v", i, err, d.Outcome)
		}
	}
	d, err := f.m.PaymentGate(ctx, ip("198.51.100.7"))
	if err != nil || d.Outcome != meter.RateLimited || d.RetryAfter <= 0 {
		t.Fatalf("third attempt in the burst of 2: %v %+v", err, d)
	}
}
