package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestLostReplyVoidsBundleDraws: Redis runs a Sign-In-With-X draw, and an
// x402 bundle reuse, and then stalls mid-reply past the metering timeout
// (faultproxy.Stall holds the reply of the connection that carried the
// wallet's keys; the script has run and booked). Each payer gets 503 with
// its request id, and ends with its charge given back: the wallet's bundle
// is what it was, PostgreSQL holds exactly one debit and one refund of the
// same calls and amount under that id, and the stream one Refund. The
// signed nonce stays spent (payment/payers.go, voidLater): the same SIWX
// message again is a 402 siwx_nonce_used, the same x402 authorization a 402
// that is never settled on chain — a fresh one of each is served. Also:
// Redis busy rather than its reply held, and a new payment whose grant's
// reply is lost on every attempt (the grant stays, the draw is given back)
// or on the first only (the retry serves it from one draw).
func TestLostReplyVoidsBundleDraws(t *testing.T) {
	e := startX402Env(t)
	opts, err := redis.ParseURL(os.Getenv("REDIS_URL"))
	if err != nil {
		t.Fatal(err)
	}
	stall := faultproxy.NewStall(t, opts.Addr)
	u, err := url.Parse(os.Getenv("REDIS_URL"))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = stall.Addr()
	pe := *e
	pe.redisURL = u.String()
	gw := pe.startGateway(e.api + "/x402") // this gateway reaches Redis through the stall

	l := balances.Layout{Prefix: e.prefix}
	key := e.wallet("void", 1_000_000)
	payer := crypto.PubkeyToAddress(key.PublicKey)
	wallet := strings.ToLower(payer.Hex())
	resource, acc := e.issued(gw)
	a := e.auth(key)
	e.expectPaid(e.rpc(gw, "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc)), false, payer)
	calls := func() string { return e.bundle(payer)[balances.BundleCalls] }
	if got := calls(); got != "999" {
		t.Fatalf("bundle calls after the payment: %s, want 999", got)
	}

	// lost sends the request with the replies of Redis connections that
	// carry pattern (the wallet's keys, a script's argument) stalled, and
	// checks the 503 (its body says says); it returns the request id.
	lost := func(t *testing.T, pattern, says string, headers ...string) string {
		t.Helper()
		stall.Arm([]byte(pattern))
		defer stall.Release()
		held := stall.Stalled.Load()
		began := time.Now()
		ans := e.at(t).rpc(gw, headers...)
		id := ans.header.Get("X-Tollgate-Request-Id")
		if ans.status != http.StatusServiceUnavailable || ans.header.Get("Retry-After") == "" || id == "" ||
			!strings.Contains(string(ans.body), says) {
			t.Fatalf("a draw whose reply stalled: want 503 %q with Retry-After and a request id, got %s", says, ans)
		}
		if stall.Stalled.Load() == held {
			t.Fatal("no connection carried the wallet's draw: the stall did not happen")
		}
		t.Logf("503 after %v (request %s); %d connections stalled", time.Since(began).Round(time.Millisecond), id, stall.Stalled.Load()-held)
		return id
	}
	// voided waits for the books of request id: one debit of payer bundle
	// on the wallet, one refund of the same calls and amount, in PostgreSQL
	// and one Refund in the stream; and the bundle back at want calls.
	voided := func(t *testing.T, who common.Address, id, want string) {
		t.Helper()
		wallet := strings.ToLower(who.Hex())
		settletest.Eventually(t, 60*time.Second, "the lost draw "+id+" refunded in Redis and PostgreSQL", func() (bool, error) {
			if e.bundle(who)[balances.BundleCalls] != want {
				return false, nil
			}
			var n int
			err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM refunds WHERE id = $1`, id).Scan(&n)
			return err == nil && n == 1, err
		})
		var dPayer, dAccount, rPayer, rAccount string
		var dUnits, dCalls, rUnits, rCalls int64
		if err := e.pool.QueryRow(e.ctx, `SELECT payer, account, amount_units, calls FROM debits WHERE id = $1`, id).
			Scan(&dPayer, &dAccount, &dUnits, &dCalls); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				t.Fatalf("request %s was refunded without a debit", id)
			}
			t.Fatal(err)
		}
		if err := e.pool.QueryRow(e.ctx, `SELECT payer, account, amount_units, calls FROM refunds WHERE id = $1`, id).
			Scan(&rPayer, &rAccount, &rUnits, &rCalls); err != nil {
			t.Fatal(err)
		}
		if dPayer != "bundle" || dAccount != wallet || dCalls != 1 || dUnits <= 0 ||
			rPayer != dPayer || rAccount != dAccount || rCalls != dCalls || rUnits != dUnits {
			t.Fatalf("request %s: debit %s %s %d units %d calls, refund %s %s %d units %d calls: want the same, payer bundle, 1 call",
				id, dPayer, dAccount, dUnits, dCalls, rPayer, rAccount, rUnits, rCalls)
		}
		msgs, err := e.rdb.XRange(e.ctx, l.Stream(0), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		refunds := 0
		for _, m := range msgs {
			if ev, err := events.Decode(m.Values); err == nil {
				if r, ok := ev.(*events.Refund); ok && r.ID == id {
					refunds++
				}
			}
		}
		if refunds != 1 {
			t.Fatalf("request %s: %d Refund events in the stream, want exactly 1", id, refunds)
		}
		// Every call granted is either left or used: the void took back
		// the draw's use too.
		if b := e.bundle(who); b[balances.BundleGranted] != "1000" || len(b[balances.BundleUsed]) == 0 ||
			atoi(b[balances.BundleCalls])+atoi(b[balances.BundleUsed]) != 1000 {
			t.Fatalf("bundle %v: calls left + used ≠ granted", b)
		}
	}

	t.Run("SIWX", func(t *testing.T) {
		hdr := e.siwx(t, gw, key, nil)
		id := lost(t, wallet, "metering unavailable", "SIGN-IN-WITH-X", hdr)
		voided(t, payer, id, "999")
		// The message's nonce stays spent: the same message is refused and
		// draws nothing; a fresh one is served.
		e.at(t).expectRefused(e.rpc(gw, "SIGN-IN-WITH-X", hdr), reasonSIWXNonceUsed)
		if got := calls(); got != "999" {
			t.Fatalf("a refused replay drew: %s calls left", got)
		}
		ok := e.rpc(gw, "SIGN-IN-WITH-X", e.siwx(t, gw, key, nil))
		if ok.status != http.StatusOK || ok.header.Get("X-Tollgate-Bundle-Remaining") != "998" {
			t.Fatalf("a fresh sign-in after the void: %s", ok)
		}
		voided(t, payer, id, "998") // still one refund, now 998 left after the fresh call
	})

	// Redis itself stops answering (a long script holds it, as a slow
	// command or a fork can): the draw waits in its socket past the
	// metering timeout, the gateway answers 503, and Redis runs the draw
	// when it is free again — in the same turn as the void's first look,
	// in either order. The charge is given back all the same.
	t.Run("SIWX, Redis busy", func(t *testing.T) {
		left := calls()
		hdr := e.siwx(t, gw, key, nil)
		done := busyRedis(t, opts, 3*time.Second)
		ans := e.at(t).rpc(gw, "SIGN-IN-WITH-X", hdr)
		id := ans.header.Get("X-Tollgate-Request-Id")
		if ans.status != http.StatusServiceUnavailable || id == "" {
			t.Fatalf("a draw while Redis is busy: want 503 with a request id, got %s", ans)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		voided(t, payer, id, left)
		e.at(t).expectRefused(e.rpc(gw, "SIGN-IN-WITH-X", hdr), reasonSIWXNonceUsed)
	})

	// Redis stalls for longer than the void's old search window (5 s
	// after the decision): a fsync on a slow disk, a paused VM or a
	// SIGSTOP hold its event loop as long as they last, and the draw
	// queued in its socket runs when it is free — 8 s after the decision
	// here. Its stream entry is stamped with Redis's clock then, so a
	// void that only looked up to 5 s after the decision never found it
	// and the 503 stayed charged. Redis's busy-reply threshold is raised
	// so the Lua loop can hold it that long (past it, Redis would answer
	// the queued draw BUSY instead of running it).
	t.Run("SIWX, Redis stalled past 5 s", func(t *testing.T) {
		admin := redis.NewClient(opts)
		defer admin.Close()
		prev, err := admin.ConfigGet(e.ctx, "busy-reply-threshold").Result()
		if err != nil || prev["busy-reply-threshold"] == "" {
			t.Fatalf("busy-reply-threshold: %v %v", prev, err)
		}
		if err := admin.ConfigSet(e.ctx, "busy-reply-threshold", "30000").Err(); err != nil {
			t.Fatal(err)
		}
		defer admin.ConfigSet(context.Background(), "busy-reply-threshold", prev["busy-reply-threshold"])
		left := calls()
		hdr := e.siwx(t, gw, key, nil)
		done := busyRedis(t, opts, 8*time.Second)
		ans := e.at(t).rpc(gw, "SIGN-IN-WITH-X", hdr)
		id := ans.header.Get("X-Tollgate-Request-Id")
		if ans.status != http.StatusServiceUnavailable || id == "" {
			t.Fatalf("a draw while Redis is stalled: want 503 with a request id, got %s", ans)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		voided(t, payer, id, left)
		e.at(t).expectRefused(e.rpc(gw, "SIGN-IN-WITH-X", hdr), reasonSIWXNonceUsed)
	})

	// A new payment settles, and its grant's reply (the grant, the bundle
	// key and this request's draw, one script) is lost on every attempt:
	// 503, the grant stays (the money moved on chain), the draw is given
	// back. The wallet signs in and draws from its bundle.
	t.Run("grant", func(t *testing.T) {
		key := e.wallet("void grant", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		id := lost(t, "x402 bundle", "may not have been recorded", "PAYMENT-SIGNATURE", hdr)
		voided(t, payer, id, "1000")
		if !e.authUsed(payer, a.nonce) || e.balance(payer) != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price {
			t.Fatalf("the payment did not settle once: used %v, payer %d → %d, payTo %d → %d",
				e.authUsed(payer, a.nonce), before, e.balance(payer), payToBefore, e.balance(e.payTo))
		}
		var granted int
		if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM bundle_grants WHERE wallet = $1`, strings.ToLower(payer.Hex())).Scan(&granted); err != nil {
			t.Fatal(err)
		}
		if granted != 1 {
			t.Fatalf("%d bundle grants in PostgreSQL for the wallet, want 1", granted)
		}
		// The same payment again buys nothing twice.
		e.at(t).expectRefused(e.rpc(gw, "PAYMENT-SIGNATURE", hdr), "invalid_exact_evm_payload_authorization_nonce_used")
		if e.balance(payer) != before-x402Price {
			t.Fatal("the replayed payment moved money again")
		}
		ok := e.rpc(gw, "SIGN-IN-WITH-X", e.siwx(t, gw, key, nil))
		if ok.status != http.StatusOK || ok.header.Get("X-Tollgate-Bundle-Remaining") != "999" {
			t.Fatalf("signing in with the paying wallet after the lost grant: %s", ok)
		}
	})

	// Only the grant's first attempt is lost (it booked the grant and the
	// draw): the retry finds the grant its own and draws nothing more, so
	// the request is served from one draw and nothing is given back.
	t.Run("grant retried", func(t *testing.T) {
		key := e.wallet("void grant retried", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		a := e.auth(key)
		stall.ArmFirst([]byte("x402 bundle"))
		defer stall.Release()
		held := stall.Stalled.Load()
		ans := e.at(t).rpc(gw, "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc))
		if stall.Stalled.Load() != held+1 {
			t.Fatalf("%d connections stalled, want the first attempt's", stall.Stalled.Load()-held)
		}
		e.at(t).expectPaid(ans, false, payer)
		id := ans.header.Get("X-Tollgate-Request-Id")
		settletest.Eventually(t, 60*time.Second, "the served grant's debit ingested", func() (bool, error) {
			var n int
			err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM debits WHERE id = $1`, id).Scan(&n)
			return err == nil && n == 1, err
		})
		var refunds int
		if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM refunds WHERE id = $1`, id).Scan(&refunds); err != nil || refunds != 0 {
			t.Fatalf("a served request has %d refunds (%v)", refunds, err)
		}
		if b := e.bundle(payer); b[balances.BundleCalls] != "999" || b[balances.BundleUsed] != "1" || b[balances.BundleGranted] != "1000" {
			t.Fatalf("bundle %v after a retried grant: want 999 left, 1 used, 1000 granted", b)
		}
	})

	t.Run("bundle reuse", func(t *testing.T) {
		left := calls()
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		id := lost(t, wallet, "metering unavailable", "PAYMENT-SIGNATURE", hdr)
		voided(t, payer, id, left)
		// The authorization stays used and is never settled: the same
		// header again is a 402, and no money moves.
		e.at(t).expectRefused(e.rpc(gw, "PAYMENT-SIGNATURE", hdr), "invalid_exact_evm_payload_authorization_nonce_used")
		if e.authUsed(payer, a.nonce) || e.balance(payer) != before || e.balance(e.payTo) != payToBefore {
			t.Fatalf("the voided authorization moved money: used %v, payer %d → %d, payTo %d → %d",
				e.authUsed(payer, a.nonce), before, e.balance(payer), payToBefore, e.balance(e.payTo))
		}
		if got := calls(); got != left {
			t.Fatalf("a refused replay drew: %s calls left, want %s", got, left)
		}
		a2 := e.auth(key)
		ok := e.rpc(gw, "PAYMENT-SIGNATURE", v2Header(a2, a2.sign(8453, e.asset), resource, acc))
		if ok.status != http.StatusOK || ok.header.Get("X-Tollgate-Payer") != "bundle" || e.authUsed(payer, a2.nonce) {
			t.Fatalf("a fresh authorization after the void: want 200 from the bundle, not settled; got %s", ok)
		}
	})
}

// busyRedis holds the Redis at opts busy for d with a Lua loop (Redis
// answers no one meanwhile) and returns once it is; the channel gets the
// loop's outcome when Redis is free again. d must stay under Redis's
// busy-reply threshold (busy-reply-threshold, 5 s by default).
func busyRedis(t *testing.T, opts *redis.Options, d time.Duration) <-chan error {
	t.Helper()
	o := *opts
	o.ReadTimeout = d + 10*time.Second
	long := redis.NewClient(&o)
	p := *opts
	p.ReadTimeout, p.MaxRetries = 200*time.Millisecond, -1
	probe := redis.NewClient(&p)
	t.Cleanup(func() { _ = long.Close(); _ = probe.Close() })
	done := make(chan error, 1)
	go func() {
		done <- long.Eval(context.Background(), `
local t = redis.call('TIME')
local start = tonumber(t[1]) * 1000000 + tonumber(t[2])
while true do
  local n = redis.call('TIME')
  if tonumber(n[1]) * 1000000 + tonumber(n[2]) - start >= tonumber(ARGV[1]) then return 1 end
end`, nil, d.Microseconds()).Err()
	}()
	// Busy once a PING goes unanswered.
	deadline := time.Now().Add(30 * time.Second)
	for probe.Ping(context.Background()).Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Redis never became busy")
		}
		time.Sleep(10 * time.Millisecond) // polling until the loop runs
	}
	return done
}
