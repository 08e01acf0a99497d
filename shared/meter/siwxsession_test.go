package meter_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// A connection signed in with SIWX (a socket): its first draw spends the
// message's nonce, marked with the connection's session, so a POST
// (AuthorizeSIWX) and another connection are refused it while the same
// connection may take it again (its first reply was lost); every later draw
// carries no nonce and draws the bundle in one script like the first, the
// debit naming the wallet; the bundle running out refuses with
// ReasonBundleExhausted and books nothing; concurrent draws never overdraw.
func TestSignedInDrawsSpendTheNonceOnce(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 137, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	const session, other = "ws:aaaa", "ws:bbbb"
	issued := f.clk.Now()

	// No bundle: refused, the nonce stays unused (a POST may still use it).
	d, err := f.m.SignInSIWX(ctx, req, wallet, "nonceS001", session, issued, time.Minute)
	if err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonBundleExhausted {
		t.Fatalf("sign-in without a bundle: %v %+v", err, d)
	}
	pg, err := f.m.PrepareGrant(req, grant("0xccc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.GrantBundle(ctx, pg); err != nil {
		t.Fatal(err)
	}
	d, err = f.m.SignInSIWX(ctx, req, wallet, "nonceS001", session, issued, time.Minute)
	if err != nil || d.Outcome != meter.Bundle || d.BundleLeft != 998 {
		t.Fatalf("first draw: %v %+v", err, d)
	}
	// The same connection again (its reply lost): served, nothing refused.
	if d, err = f.m.SignInSIWX(ctx, req, wallet, "nonceS001", session, issued, time.Minute); err != nil || d.Outcome != meter.Bundle || d.BundleLeft != 997 {
		t.Fatalf("the same session's retry: %v %+v", err, d)
	}
	// Everyone else: the nonce is used.
	if d, err = f.m.SignInSIWX(ctx, req, wallet, "nonceS001", other, issued, time.Minute); err != nil || d.Reason != meter.ReasonNonceUsed {
		t.Fatalf("another connection: %v %+v", err, d)
	}
	if d, err = f.m.AuthorizeSIWX(ctx, req, wallet, "nonceS001", time.Minute); err != nil || d.Reason != meter.ReasonNonceUsed {
		t.Fatalf("a POST of the same message: %v %+v", err, d)
	}
	// And a nonce a POST used is refused to a connection.
	if d, err = f.m.AuthorizeSIWX(ctx, req, wallet, "nonceP001", time.Minute); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("a POST's draw: %v %+v", err, d)
	}
	if d, err = f.m.SignInSIWX(ctx, req, wallet, "nonceP001", session, issued, time.Minute); err != nil || d.Reason != meter.ReasonNonceUsed {
		t.Fatalf("a connection with a POST's message: %v %+v", err, d)
	}
	if _, err := f.m.SignInSIWX(ctx, req, wallet, "nonceS002", "", issued, time.Minute); err == nil {
		t.Fatal("a sign-in without a session was drawn")
	}

	// Signed in: 20 draws of 3 calls, no nonce, each a debit naming the wallet.
	for i := range 20 {
		d, err := f.m.DrawSignedIn(ctx, meter.Request{ChainID: 137, IP: req.IP, Calls: 3, Method: "batch"}, wallet)
		if err != nil || d.Outcome != meter.Bundle || d.BundleLeft != int64(996-3*(i+1)) {
			t.Fatalf("signed-in draw %d: %v %+v", i, err, d)
		}
	}
	if c, _, u := f.bundleHash(t); c != 936 || u != 64 {
		t.Fatalf("calls/used = %d/%d, want 936/64", c, u)
	}
	debits := 0
	for _, e := range f.stream(t) {
		if db, ok := e.(*events.Debit); ok {
			if db.Account != wallet || db.Payer != events.PayerBundle {
				t.Fatalf("debit %+v does not name the wallet's bundle", db)
			}
			debits++
		}
	}
	if debits != 24 {
		t.Fatalf("%d debits, want 24 (the grant's, 2 sign-ins, a POST, 20 signed-in draws)", debits)
	}

	// Concurrent draws of 1 from 936 calls: exactly 936 served.
	var wg sync.WaitGroup
	var mu sync.Mutex
	served := 0
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.m.DrawSignedIn(ctx, meter.Request{ChainID: 137, IP: ip("198.51.100." + strconv.Itoa(i%200)), Calls: 1, Method: "eth_blockNumber"}, wallet)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Outcome == meter.Bundle {
				mu.Lock()
				served++
				mu.Unlock()
			} else if d.Reason != meter.ReasonBundleExhausted || d.BundleLeft != 0 {
				t.Errorf("refused draw: %+v", d)
			}
		}()
	}
	wg.Wait()
	if c, _, u := f.bundleHash(t); served != 936 || c != 0 || u != 1000 {
		t.Fatalf("served %d of 936; calls/used = %d/%d", served, c, u)
	}

	// A Redis that lost its data (no generation marker, no bundle): a
	// signed-in draw is Recovering and books nothing; once rebuilt it draws.
	const rebuilt = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
	f.lose(t)
	booked := len(f.stream(t))
	if d, err := f.m.DrawSignedIn(ctx, req, rebuilt); err != nil || d.Outcome != meter.Recovering || d.RetryAfter != meter.RecoveryRetryAfter {
		t.Fatalf("signed-in draw while recovering: %v %+v", err, d)
	}
	if n := len(f.stream(t)); n != booked {
		t.Fatalf("a recovering draw booked %d events", n-booked)
	}
	testenv.MarkRebuiltLayout(t, f.rdb, f.layout())
	if d, err := f.m.DrawSignedIn(ctx, req, rebuilt); err != nil || d.Reason != meter.ReasonBundleExhausted {
		t.Fatalf("signed-in draw once rebuilt, without a bundle: %v %+v", err, d)
	}
}

// A Redis that lost its data forgot the nonces its sign-ins used, and a
// sign-in lasts a connection's life: until the shard is rebuilt a sign-in
// is Recovering (even with a bundle granted since the loss) and books
// nothing; once rebuilt, a message issued before the rebuild's time or in
// its second (the generation marker's, balances.GenerationValue) is refused
// as used (whatever its nonce, another connection's or none), one issued
// in a later second signs in, and a signed-in connection draws on.
// POST (AuthorizeSIWX) keeps its rule: a message buys one request.
func TestSignInAfterARedisLossNeedsAMessageFromAfterTheRebuild(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0})
	ctx := context.Background()
	req := meter.Request{ChainID: 137, IP: ip("198.51.100.9"), Calls: 1, Method: "eth_blockNumber"}
	pg, err := f.m.PrepareGrant(req, grant("0xd01"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.GrantBundle(ctx, pg); err != nil {
		t.Fatal(err)
	}
	before := f.clk.Now().Add(-time.Minute)
	if d, err := f.m.SignInSIWX(ctx, req, wallet, "nonceL001", "ws:aaaa", before, time.Minute); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("sign-in before the loss: %v %+v", err, d)
	}

	// The loss: every key of the deployment gone, the used nonce with it;
	// a bundle granted again before the rebuild.
	lose := func() {
		var cursor uint64
		for {
			keys, next, err := f.rdb.Scan(ctx, cursor, f.prefix+"*", 500).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) > 0 {
				if err := f.rdb.Unlink(ctx, keys...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if cursor = next; cursor == 0 {
				return
			}
		}
	}
	lose()
	pg, err = f.m.PrepareGrant(req, grant("0xd02"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.GrantBundle(ctx, pg); err != nil {
		t.Fatal(err)
	}
	booked := len(f.stream(t))
	for _, s := range []string{"ws:aaaa", "ws:bbbb"} {
		if d, err := f.m.SignInSIWX(ctx, req, wallet, "nonceL001", s, before, time.Minute); err != nil || d.Outcome != meter.Recovering {
			t.Fatalf("the used message (session %s) before the rebuild: %v %+v", s, err, d)
		}
	}
	if d, err := f.m.DrawSignedIn(ctx, req, wallet); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("a signed-in connection before the rebuild, its bundle there: %v %+v", err, d)
	}

	// Rebuilt at the clock's second: a message issued before is refused as
	// used, by every connection, and draws nothing.
	rebuilt := f.clk.Now().Add(500 * time.Millisecond)
	for i := range f.layout().N() {
		if err := f.rdb.Set(ctx, f.layout().Shard(i).Generation(), balances.GenerationValue(rebuilt, "01TEST"), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		nonce, session string
		issued         time.Time
	}{
		{"nonceL001", "ws:bbbb", before},                    // the used message, another connection
		{"nonceL001", "ws:aaaa", before},                    // and the one that used it
		{"nonceL002", "ws:cccc", rebuilt.Add(-time.Second)}, // never seen, issued before the rebuild
		{"nonceL003", "ws:cccc", rebuilt.Truncate(time.Second).Add(-time.Nanosecond)},
		{"nonceL004", "ws:cccc", rebuilt.Truncate(time.Second).Add(999 * time.Millisecond)}, // the rebuild's second
	} {
		if d, err := f.m.SignInSIWX(ctx, req, wallet, c.nonce, c.session, c.issued, time.Minute); err != nil || d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonNonceUsed {
			t.Fatalf("%s issued %s after the rebuild: %v %+v", c.nonce, c.issued, err, d)
		}
	}
	if n := len(f.stream(t)); n != booked+1 {
		t.Fatalf("%d events booked since the loss, want 1 (the signed-in draw)", n-booked)
	}
	// Issued in a later second: signed in; the refused nonces stay unused.
	for i, at := range []time.Time{rebuilt.Truncate(time.Second).Add(time.Second), rebuilt.Add(time.Minute)} {
		if d, err := f.m.SignInSIWX(ctx, req, wallet, "nonceL10"+strconv.Itoa(i), "ws:dddd", at, time.Minute); err != nil || d.Outcome != meter.Bundle {
			t.Fatalf("a message issued %s after a rebuild at %s: %v %+v", at, rebuilt, err, d)
		}
	}
	if n, err := f.rdb.Exists(ctx, f.layout().Shard(f.layout().ShardOfPayer(wallet)).SIWXNonce("nonceL002")).Result(); err != nil || n != 0 {
		t.Fatalf("a refused sign-in marked its nonce: %d %v", n, err)
	}
	if d, err := f.m.DrawSignedIn(ctx, req, wallet); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("a signed-in connection after the rebuild: %v %+v", err, d)
	}
	// POST is unchanged: a message buys one request.
	if d, err := f.m.AuthorizeSIWX(ctx, req, wallet, "nonceL200", time.Minute); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("a POST after the rebuild: %v %+v", err, d)
	}
}
