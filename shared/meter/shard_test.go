package meter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// testShards is the shard count the sharded runs use: a single Redis
// accepts every slot, so the layout, the scripts and the split decisions
// are exactly a cluster's.
const testShards = 5

// The meter's tests, re-run with payers and addresses spread over several
// shards: the same code on one Redis and on many shards.
func TestShardedSuite(t *testing.T) {
	defer func(n int) { fixtureShards = n }(fixtureShards)
	fixtureShards = testShards
	for name, fn := range map[string]func(*testing.T){
		"FreeTierExhaustsAndResetsAtMidnight": TestFreeTierExhaustsAndResetsAtMidnight,
		"BatchCountsEveryCall":                TestBatchCountsEveryCall,
		"SubnetCap":                           TestSubnetCap,
		"CreditsDebitFallbackAnd402":          TestCreditsDebitFallbackAnd402,
		"RefundRestoresExactlyOnce":           TestRefundRestoresExactlyOnce,
		"ConcurrentSpend":                     TestConcurrentSpend,
		"RateLimits":                          TestRateLimits,
		"UnknownAndRevokedKeys":               TestUnknownAndRevokedKeys,
		"KeyCreationLimitAndHashOnlyStorage":  TestKeyCreationLimitAndHashOnlyStorage,
		"RuntimeFreeLimits":                   TestRuntimeFreeLimits,
		"RefundUnderRuntimeLimits":            TestRefundUnderRuntimeLimits,
		"Revoke":                              TestRevoke,
		"Adjust":                              TestAdjust,
		"GrantBundleOncePerTransaction":       TestGrantBundleOncePerTransaction,
		"SIWXDrawsNonceOnceAndStopsAtZero":    TestSIWXDrawsNonceOnceAndStopsAtZero,
		"SignedInDrawsSpendTheNonceOnce":      TestSignedInDrawsSpendTheNonceOnce,
		"SignInAfterARedisLoss":               TestSignInAfterARedisLossNeedsAMessageFromAfterTheRebuild,
		"PaymentGate":                         TestPaymentGate,
		"VouchersDrawInOrderWithinTheDeposit": TestVouchersDrawInOrderWithinTheDeposit,
		"RefundClosesTheChannel":              TestRefundClosesTheChannel,
		"AuthorizeMetricAtItsPrice":           TestAuthorizeMetricAtItsPrice,
		"RecoveringWithoutGenerationMarker":   TestRecoveringWithoutGenerationMarker,
		"VoidIfBooked":                        TestVoidIfBooked,
	} {
		t.Run(name, fn)
	}
}

// ipOnOtherShard is an address whose shard is not shard.
func ipOnOtherShard(t *testing.T, l balances.Layout, shard int) string {
	t.Helper()
	for i := 1; i < 250; i++ {
		a := fmt.Sprintf("10.%d.7.9", i)
		_, net := meter.Subjects(ip(a))
		if l.ShardOfIP(net) != shard {
			return a
		}
	}
	t.Fatal("no address on another shard")
	return ""
}

// Payers land on different shards, and each paid call's Debit is on its
// payer's shard's stream.
func TestPayersLandOnDifferentShards(t *testing.T) {
	f := newFixture(t, meter.Config{Shards: testShards, FreeDailyLimit: 5, FreeSubnetLimit: 50})
	ctx := context.Background()
	l := f.layout()
	seen := map[int]int{}
	for i := range 30 {
		secret, id := f.newKey(t)
		f.credit(t, id, 10*money.PricePerCall)
		d := f.authorize(t, meter.Request{IP: ip(fmt.Sprintf("192.0.2.%d", i+1)), KeyHash: meter.HashKey(secret), Calls: 1})
		if d.Outcome != meter.Paid || d.Account != id {
			t.Fatalf("key %d: %+v", i, d)
		}
		home := l.ShardOfPayer(id)
		if d.Shard() != home || l.ShardOfKey(meter.HashKey(secret)) != home {
			t.Fatalf("key %d: booked on %d, account on %d, key on %d", i, d.Shard(), home, l.ShardOfKey(meter.HashKey(secret)))
		}
		msgs, err := f.rdb.XRange(ctx, l.Stream(home), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range msgs {
			if ev, err := events.Decode(m.Values); err == nil {
				if deb, ok := ev.(*events.Debit); ok && deb.ID == d.ID {
					found = true
				}
			}
		}
		if !found {
			t.Fatalf("key %d: debit %s not on shard %d's stream", i, d.ID, home)
		}
		seen[home]++
	}
	if len(seen) < 4 {
		t.Fatalf("30 payers on %d of %d shards: %v", len(seen), testShards, seen)
	}
	// Every key of the run is on some shard's slot: none under the bare prefix.
	keys, err := f.rdb.Keys(ctx, f.prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for i := range testShards {
		tags[l.Shard(i).Prefix] = true
	}
	for _, k := range keys {
		ok := false
		for p := range tags {
			if len(k) >= len(p) && k[:len(p)] == p {
				ok = true
			}
		}
		if !ok && k != l.LayoutRecord() {
			t.Fatalf("%s is on no shard", k)
		}
	}
}

// A keyed call whose key and address are on different shards is decided
// once for its payer: short of funds, the free tier serves it (first by a
// second round trip, then sent along in parallel); when the account can
// pay again the parallel free draw is refunded and only the credits are
// charged; when the key is refused the free draw is refunded too. The
// books (free counter, balance, events) match the outcomes exactly.
func TestKeyedCallAcrossShardsIsAtomicForItsPayer(t *testing.T) {
	f := newFixture(t, meter.Config{Shards: testShards, FreeDailyLimit: 10, FreeSubnetLimit: 100})
	ctx := context.Background()
	l := f.layout()
	secret, id := f.newKey(t)
	h := meter.HashKey(secret)
	addr := ipOnOtherShard(t, l, l.ShardOfKey(h))
	req := meter.Request{ChainID: 137, IP: ip(addr), KeyHash: h, Calls: 2}
	ipKey, _ := meter.Subjects(ip(addr))
	freeUsed := func() int64 {
		n, _ := f.rdb.Get(ctx, l.FreeIP("2026-11-21", ipKey)).Int64()
		return n
	}

	// No credits: the free tier, on the address's shard, with the account.
	for i, left := range []int64{8, 6} {
		d := f.authorize(t, req)
		if d.Outcome != meter.Free || d.Account != id || d.FreeLeft != left || d.Shard() == l.ShardOfKey(h) {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	// Credits arrive: the call is paid; the free draw sent along is given back.
	f.credit(t, id, 10*money.PricePerCall)
	d := f.authorize(t, req)
	if d.Outcome != meter.Paid || d.Balance != 8*money.PricePerCall || f.balance(t, id) != 8*money.PricePerCall {
		t.Fatalf("after the deposit: %+v", d)
	}
	if got := freeUsed(); got != 4 {
		t.Fatalf("free calls used %d, want 4 (the parallel draw refunded)", got)
	}
	// Paid again: only the payer's script runs, nothing drawn for free.
	if d := f.authorize(t, req); d.Outcome != meter.Paid || freeUsed() != 4 {
		t.Fatalf("second paid call: %+v, free used %d", d, freeUsed())
	}
	// Spend the rest, fall back to free (hint set again), then revoke: the
	// key is refused and the free draw sent along is refunded.
	for f.balance(t, id) >= 2*money.PricePerCall {
		f.authorize(t, req)
	}
	if d := f.authorize(t, req); d.Outcome != meter.Free || freeUsed() != 6 {
		t.Fatalf("fallback: %+v, free used %d", d, freeUsed())
	}
	if _, err := f.m.Revoke(ctx, id, "test"); err != nil {
		t.Fatal(err)
	}
	if d := f.authorize(t, req); d.Outcome != meter.Unauthorized || d.Reason != "revoked_key" || freeUsed() != 6 {
		t.Fatalf("revoked: %+v, free used %d", d, freeUsed())
	}

	// The books: free calls debited minus refunded = the free calls served
	// (3 × 2); credits debited = 10 calls' worth; every refund names a debit.
	var freeCalls, paidUnits int64
	debits := map[string]*events.Debit{}
	for _, e := range f.stream(t) {
		switch ev := e.(type) {
		case *events.Debit:
			debits[ev.ID] = ev
			if ev.Payer == events.PayerFree {
				freeCalls += int64(ev.Calls)
				if ev.Account != id {
					t.Fatalf("free debit without the account: %+v", ev)
				}
			} else {
				paidUnits += int64(ev.Amount)
			}
		case *events.Refund:
			deb := debits[ev.ID]
			if deb == nil || deb.Payer != events.PayerFree {
				t.Fatalf("refund %s of no free debit", ev.ID)
			}
			freeCalls -= int64(ev.Calls)
		}
	}
	if freeCalls != 6 || paidUnits != int64(10*money.PricePerCall) {
		t.Fatalf("books: %d free calls, %d units paid", freeCalls, paidUnits)
	}
}

// A key created before sharding whose hash falls on another shard than its
// account: its lookup there points to the account's home shard, and the
// gateway asks there (then remembers it).
func TestMigratedKeyPointsToItsHome(t *testing.T) {
	f := newFixture(t, meter.Config{Shards: testShards, FreeDailyLimit: 5, FreeSubnetLimit: 50})
	ctx := context.Background()
	l := f.layout()
	secret, err := meter.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	h := meter.HashKey(secret)
	id := accounts.NewID()
	for l.ShardOfPayer(id) == l.ShardOfKey(h) {
		id = accounts.NewID()
	}
	for k, v := range l.KeyRecords(h, id, "") {
		if err := f.rdb.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.rdb.HSet(ctx, l.Account(id), balances.FieldStatus, balances.StatusActive, balances.FieldKind, "api").Err(); err != nil {
		t.Fatal(err)
	}
	f.credit(t, id, 3*money.PricePerCall)
	for i := range 3 {
		d := f.authorize(t, meter.Request{IP: ip("192.0.2.7"), KeyHash: h, Calls: 1})
		if d.Outcome != meter.Paid || d.Account != id || d.Shard() != l.ShardOfPayer(id) {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	if f.balance(t, id) != 0 {
		t.Fatalf("balance %d", f.balance(t, id))
	}
	if u, st, err := f.m.Usage(ctx, h); err != nil || st != meter.KeyActive || u.KeyID != id || u.RequestsToday != 3 {
		t.Fatalf("usage %+v %v %v", u, st, err)
	}
}

// With ReplicaWait every decision that books money is followed by WAIT 1;
// the test Redis has no replica, so each such decision is counted as
// unreplicated (what a failover could lose) and still served, and calls
// that book no money (the free tier) are not counted.
func TestReplicaWaitCountsUnacknowledgedDebits(t *testing.T) {
	for _, shards := range []int{1, testShards} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			f := newFixture(t, meter.Config{Shards: shards, FreeDailyLimit: 5, FreeSubnetLimit: 50, ReplicaWait: 5 * time.Millisecond})
			secret, id := f.newKey(t)
			f.credit(t, id, 3*money.PricePerCall)
			for i := range 3 {
				if d := f.authorize(t, meter.Request{IP: ip("192.0.2.8"), KeyHash: meter.HashKey(secret), Calls: 1}); d.Outcome != meter.Paid {
					t.Fatalf("call %d: %+v", i, d)
				}
			}
			if d := f.authorize(t, meter.Request{IP: ip("192.0.2.9"), Calls: 1}); d.Outcome != meter.Free {
				t.Fatalf("free call: %+v", d)
			}
			if n := f.m.Unreplicated(); n != 3 {
				t.Fatalf("unreplicated %d, want 3 (the paid calls)", n)
			}
			if f.balance(t, id) != 0 {
				t.Fatalf("balance %d", f.balance(t, id))
			}
		})
	}
}
