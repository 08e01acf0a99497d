package meter_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	rdb    *redis.Client
	prefix string
	shards int
	clk    *clock
	m      *meter.Meter
}

// fixtureShards is the shard count of the fixtures' meters: 1, or more
// while TestShardedSuite re-runs tests (no test here runs in parallel).
var fixtureShards = 1

// layout is the fixture's key layout.
func (f *fixture) layout() balances.Layout {
	return balances.Layout{Prefix: f.prefix, Shards: f.shards}
}

// newFixture returns a meter on the real Redis, its keys under a prefix of
// this test; cfg's Prefix and Now are filled in.
func newFixture(t *testing.T, cfg meter.Config) *fixture {
	t.Helper()
	rdb := testenv.Redis(t)
	f := &fixture{rdb: rdb, prefix: testenv.KeyPrefix(t), clk: &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}}
	if cfg.Shards == 0 && !balances.HasHashTag(cfg.Prefix) {
		cfg.Shards = fixtureShards
	}
	f.shards = cfg.Shards
	if cfg.Prefix == "" {
		cfg.Prefix = f.prefix
	} else {
		cfg.Prefix = f.prefix + cfg.Prefix
		f.prefix = cfg.Prefix
	}
	cfg.Now = f.clk.Now
	m, err := meter.New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	// A healthy deployment: settlementd has written the generation marker
	// (TestRecovering* delete it to play a Redis that lost its data).
	testenv.MarkRebuiltLayout(t, rdb, f.layout())
	return f
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func (f *fixture) authorize(t *testing.T, req meter.Request) meter.Decision {
	t.Helper()
	if req.ChainID == 0 {
		req.ChainID = 137
	}
	d, err := f.m.Authorize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *fixture) newKey(t *testing.T) (secret, id string) {
	t.Helper()
	k, err := f.m.CreateKey(context.Background(), meter.NewKeyRequest{Kind: events.KeyAPI, Label: "test", IP: ip("10.9.9.9")})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret, k.ID
}

func (f *fixture) credit(t *testing.T, id string, units money.Units) {
	t.Helper()
	applied, _, err := balances.CreditAt(context.Background(), f.rdb, f.layout(), id, units, fmt.Sprintf("0xdeposit:%d:%d", units, time.Now().UnixNano()))
	if err != nil || !applied {
		t.Fatalf("credit: applied %v err %v", applied, err)
	}
}

func (f *fixture) balance(t *testing.T, id string) money.Units {
	t.Helper()
	b, err := balances.BalanceAt(context.Background(), f.rdb, f.layout(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stream decodes every entry of the event streams (every shard's, in the
// order of their entry ids).
func (f *fixture) stream(t *testing.T) []events.Event {
	t.Helper()
	var msgs []redis.XMessage
	for _, s := range f.layout().Streams() {
		m, err := f.rdb.XRange(context.Background(), s, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m...)
	}
	sort.SliceStable(msgs, func(i, j int) bool { return streamIDLess(msgs[i].ID, msgs[j].ID) })
	out := make([]events.Event, 0, len(msgs))
	for _, m := range msgs {
		evs, err := events.DecodeEntry(m.Values)
		if err != nil {
			t.Fatalf("entry %s does not decode: %v (%v)", m.ID, err, m.Values)
		}
		out = append(out, evs...)
	}
	return out
}

// streamIDLess orders stream entry ids ("<ms>-<seq>") numerically.
func streamIDLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	if len(am) != len(bm) {
		return len(am) < len(bm)
	}
	if am != bm {
		return am < bm
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return as < bs
}

func TestDateOfRollsAtUTCMidnight(t *testing.T) {
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 11, 21, 23, 59, 59, 999_999_999, time.UTC), "2026-11-21"},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), "2026-11-22"},
		// A local time is counted by its UTC day.
		{time.Date(2026, 11, 22, 1, 30, 0, 0, time.FixedZone("CET", 3600)), "2026-11-22"},
		{time.Date(2026, 11, 22, 0, 30, 0, 0, time.FixedZone("CET", 3600)), "2026-11-21"},
		{time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), "2028-02-29"},
	}
	for _, c := range cases {
		if got := balances.DateOf(c.t); got != c.want {
			t.Errorf("DateOf(%s) = %s, want %s", c.t, got, c.want)
		}
	}
	if got := meter.NextReset(time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("NextReset = %s", got)
	}
}

func TestFreeTierExhaustsAndResetsAtMidnight(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 5, FreeSubnetLimit: 100})
	f.clk.t = time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	a := ip("198.51.100.7")
	for i := range 5 {
		d := f.authorize(t, meter.Request{IP: a, Calls: 1})
		if d.Outcome != meter.Free || d.FreeLeft != int64(4-i) {
			t.Fatalf("call %d: %+v", i+1, d)
		}
	}
	d := f.authorize(t, meter.Request{IP: a, Calls: 1})
	if d.Outcome != meter.PaymentRequired || d.Reason != "ip" {
		t.Fatalf("6th call: %+v", d)
	}
	// One minute later it is a new UTC day: a fresh allowance.
	f.clk.Add(time.Minute)
	if d := f.authorize(t, meter.Request{IP: a, Calls: 1}); d.Outcome != meter.Free || d.FreeLeft != 4 {
		t.Fatalf("after midnight: %+v", d)
	}
	// Yesterday's counters expire by themselves.
	ttl, err := f.rdb.TTL(context.Background(), f.layout().FreeIP("2026-11-21", "198.51.100.7/32")).Result()
	if err != nil || ttl <= 0 || ttl > 48*time.Hour {
		t.Fatalf("yesterday's counter TTL %s, %v", ttl, err)
	}
}

func TestBatchCountsEveryCall(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 5, FreeSubnetLimit: 100})
	a := ip("198.51.100.8")
	if d := f.authorize(t, meter.Request{IP: a, Calls: 3}); d.Outcome != meter.Free || d.FreeLeft != 2 {
		t.Fatalf("batch of 3: %+v", d)
	}
	// A batch that does not fit is refused whole and takes nothing.
	if d := f.authorize(t, meter.Request{IP: a, Calls: 3}); d.Outcome != meter.PaymentRequired {
		t.Fatalf("batch of 3 with 2 left: %+v", d)
	}
	if d := f.authorize(t, meter.Request{IP: a, Calls: 2}); d.Outcome != meter.Free || d.FreeLeft != 0 {
		t.Fatalf("batch of 2 with 2 left: %+v", d)
	}
	st, err := f.m.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Calls != 5 || st.ActiveIPs != 1 || st.NearLimitIPs != 1 || st.NearThreshold != 4 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSubnetCap(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 5, FreeSubnetLimit: 8})
	for range 5 {
		if d := f.authorize(t, meter.Request{IP: ip("203.0.113.1"), Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("%+v", d)
		}
	}
	for i := range 3 {
		if d := f.authorize(t, meter.Request{IP: ip("203.0.113.2"), Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("neighbour call %d: %+v", i+1, d)
		}
	}
	// The neighbour still has 2 calls of its own, but the /24 is at its cap.
	if d := f.authorize(t, meter.Request{IP: ip("203.0.113.2"), Calls: 1}); d.Outcome != meter.PaymentRequired || d.Reason != "subnet" {
		t.Fatalf("neighbour past the subnet cap: %+v", d)
	}
	if d := f.authorize(t, meter.Request{IP: ip("203.0.114.2"), Calls: 1}); d.Outcome != meter.Free {
		t.Fatalf("another /24: %+v", d)
	}
	st, _ := f.m.Stats(context.Background())
	if st.ActiveIPs != 3 || st.Calls != 9 || st.NearLimitIPs != 1 {
		t.Fatalf("stats %+v", st)
	}

	// IPv6: one /64 is one caller; /64s of one /48 share the subnet cap.
	for i := range 5 {
		a := fmt.Sprintf("2001:db8:1:2::%x", i+1)
		if d := f.authorize(t, meter.Request{IP: ip(a), Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("%s: %+v", a, d)
		}
	}
	if d := f.authorize(t, meter.Request{IP: ip("2001:db8:1:2:ffff::1"), Calls: 1}); d.Outcome != meter.PaymentRequired || d.Reason != "ip" {
		t.Fatalf("same /64: %+v", d)
	}
	for range 3 {
		if d := f.authorize(t, meter.Request{IP: ip("2001:db8:1:3::1"), Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("other /64: %+v", d)
		}
	}
	if d := f.authorize(t, meter.Request{IP: ip("2001:db8:1:4::1"), Calls: 1}); d.Outcome != meter.PaymentRequired || d.Reason != "subnet" {
		t.Fatalf("third /64 of the /48: %+v", d)
	}
	// An IPv4-mapped address is its IPv4 address.
	if d := f.authorize(t, meter.Request{IP: ip("::ffff:203.0.113.1"), Calls: 1}); d.Outcome != meter.PaymentRequired || d.Reason != "ip" {
		t.Fatalf("mapped address: %+v", d)
	}
}

func TestSubjects(t *testing.T) {
	cases := []struct{ in, ip, net string }{
		{"192.0.2.55", "192.0.2.55/32", "192.0.2.0/24"},
		{"::ffff:192.0.2.55", "192.0.2.55/32", "192.0.2.0/24"},
		{"2001:db8:aa:bb:cc::1", "2001:db8:aa:bb::/64", "2001:db8:aa::/48"},
		{"fe80::1%eth0", "fe80::/64", "fe80::/48"},
	}
	for _, c := range cases {
		i, n := meter.Subjects(netip.MustParseAddr(c.in))
		if i != c.ip || n != c.net {
			t.Errorf("Subjects(%s) = %s, %s; want %s, %s", c.in, i, n, c.ip, c.net)
		}
	}
	if i, n := meter.Subjects(netip.Addr{}); i != "invalid" || n != "invalid" {
		t.Errorf("invalid address: %s %s", i, n)
	}
}

func TestCreditsDebitFallbackAnd402(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 2, FreeSubnetLimit: 100})
	secret, id := f.newKey(t)
	h := meter.HashKey(secret)
	a := ip("192.0.2.10")
	f.credit(t, id, 330)

	d := f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 1})
	if d.Outcome != meter.Paid || d.Account != id || d.Balance != 300 || d.Amount() != 30 {
		t.Fatalf("single call: %+v", d)
	}
	// A batch of 10 costs 300 at once.
	d = f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 10})
	if d.Outcome != meter.Paid || d.Balance != 0 || d.Amount() != 300 {
		t.Fatalf("batch of 10: %+v", d)
	}
	// No credits left: the key draws on its IP's free allowance…
	for i := range 2 {
		d = f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 1})
		if d.Outcome != meter.Free || d.Account != id {
			t.Fatalf("fallback call %d: %+v", i+1, d)
		}
	}
	// …and then pays or gets 402.
	d = f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 1})
	if d.Outcome != meter.PaymentRequired || d.Account != id {
		t.Fatalf("after the free allowance: %+v", d)
	}
	if got := f.balance(t, id); got != 0 {
		t.Fatalf("balance %d", got)
	}
	// A balance too small for a batch leaves the batch to the free tier (or
	// 402) and the balance untouched.
	f.credit(t, id, 60)
	if d = f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 3}); d.Outcome != meter.PaymentRequired {
		t.Fatalf("batch of 3 with 60 units: %+v", d)
	}
	if got := f.balance(t, id); got != 60 {
		t.Fatalf("balance %d after a refused batch", got)
	}

	u, st, err := f.m.Usage(context.Background(), h)
	if err != nil || st != meter.KeyActive {
		t.Fatal(st, err)
	}
	if u.KeyID != id || u.Tier != "free" || u.Spent != 330 || u.Balance != 60 || u.RequestsToday != 13 {
		t.Fatalf("usage %+v", u)
	}

	// The stream holds the key and every debit, each decoding with shared/events.
	var debited money.Units
	var created, credits, free int
	for _, e := range f.stream(t) {
		switch e := e.(type) {
		case *events.KeyCreated:
			created++
			if e.KeyID != id || e.KeyHash != h || e.Kind != events.KeyAPI {
				t.Errorf("key event %+v", e)
			}
		case *events.Debit:
			if e.Account != id {
				t.Errorf("debit for %q, want %s", e.Account, id)
			}
			debited += e.Amount
			if e.Payer == events.PayerCredits {
				credits++
				if e.Amount != 30*money.Units(e.Calls) {
					t.Errorf("credit debit %+v", e)
				}
			} else if e.Amount != 0 {
				t.Errorf("free debit with an amount: %+v", e)
			} else {
				free++
			}
		}
	}
	if created != 1 || credits != 2 || free != 2 || debited != 330 {
		t.Fatalf("stream: %d created, %d credit debits, %d free debits, %d units", created, credits, free, debited)
	}
}

func TestRefundRestoresExactlyOnce(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 100})
	secret, id := f.newKey(t)
	f.credit(t, id, 1000)
	d := f.authorize(t, meter.Request{IP: ip("192.0.2.20"), KeyHash: meter.HashKey(secret), Calls: 10, Method: "eth_getLogs"})
	if d.Outcome != meter.Paid || d.Balance != 700 {
		t.Fatalf("%+v", d)
	}
	ctx := context.Background()
	if err := f.m.Refund(ctx, &d, 4); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Refund(ctx, &d, 4); err != nil { // a repeated refund is a no-op
		t.Fatal(err)
	}
	if got := f.balance(t, id); got != 820 {
		t.Fatalf("balance %d after refunding 4 of 10 calls, want 820", got)
	}
	u, _, _ := f.m.Usage(ctx, meter.HashKey(secret))
	if u.Spent != 180 {
		t.Fatalf("spent %d, want 180", u.Spent)
	}
	// Free calls give their allowance back.
	fd := f.authorize(t, meter.Request{IP: ip("192.0.2.21"), Calls: 9})
	if err := f.m.Refund(ctx, &fd, 9); err != nil {
		t.Fatal(err)
	}
	if d := f.authorize(t, meter.Request{IP: ip("192.0.2.21"), Calls: 10}); d.Outcome != meter.Free || d.FreeLeft != 0 {
		t.Fatalf("after a full free refund: %+v", d)
	}
	st, _ := f.m.Stats(ctx)
	if st.Calls != 10 || st.ActiveIPs != 1 || st.NearLimitIPs != 1 {
		t.Fatalf("stats after refund %+v", st)
	}

	var refunds []*events.Refund
	for _, e := range f.stream(t) {
		if r, ok := e.(*events.Refund); ok {
			refunds = append(refunds, r)
		}
	}
	// Sharded, the two refunds are on the account's and the address's
	// streams, read in shard order: order them by payer.
	sort.Slice(refunds, func(i, j int) bool { return refunds[i].Payer < refunds[j].Payer })
	if len(refunds) != 2 || refunds[0].ID != d.ID || refunds[0].Amount != 120 || refunds[0].Calls != 4 ||
		refunds[0].Payer != events.PayerCredits || refunds[0].Account != id || refunds[1].Payer != events.PayerFree || refunds[1].Amount != 0 {
		t.Fatalf("refund events %+v", refunds)
	}
	served := time.UnixMilli(1_763_700_059_999)
	rev, ok := d.Revenue(4, "alpha", "", served)
	if !ok || rev.Amount != 180 || rev.Calls != 6 || rev.Method != "eth_getLogs" || rev.EpochID != 29_395_000 || rev.Validate() != nil {
		t.Fatalf("revenue %+v", rev)
	}
	if _, ok := d.Revenue(10, "alpha", "", time.Now()); ok {
		t.Fatal("a request with every call failed recorded revenue")
	}
	// Split by server: each earns its own calls; the parts sum to the
	// served calls and amount; the largest keeps the request id.
	node := events.ServedBy{Upstream: "NODE-EU-AAAAAAAA", NodeID: "NODE-EU-AAAAAAAA"}
	parts := d.RevenueParts(4, []meter.Served{{By: events.ServedByCache, Units: 5}, {By: node, Units: 1}}, served)
	if len(parts) != 2 || parts[0].ID != d.ID || parts[0].Upstream != "cache" || parts[0].Calls != 5 || parts[0].Amount != 150 ||
		parts[1].ID != d.ID+"/1" || parts[1].NodeID != node.NodeID || parts[1].Calls != 1 || parts[1].Amount != 30 ||
		parts[0].Validate() != nil || parts[1].Validate() != nil {
		t.Fatalf("revenue parts %+v %+v", parts[0], parts[len(parts)-1])
	}
	// Parts that do not add up are not trusted: one event for what was served.
	if bad := d.RevenueParts(4, []meter.Served{{By: node, Units: 9}}, served); len(bad) != 1 || bad[0].Calls != 6 || bad[0].Amount != 180 {
		t.Fatalf("parts over the served calls: %+v", bad)
	}
}

// TestConcurrentSpend races many goroutines for one balance: the balance
// never goes below zero, every call that was served was paid for exactly
// once, and the stream's debits add up to what left the balance.
func TestConcurrentSpend(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 0, FreeSubnetLimit: 0})
	secret, id := f.newKey(t)
	h := meter.HashKey(secret)
	const initial money.Units = 30*5000 + 29
	f.credit(t, id, initial)

	var paidCalls, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls := 1 + g%3 // singles and batches of 2 and 3 race each other
			for {
				d, err := f.m.Authorize(context.Background(), meter.Request{ChainID: 137, IP: ip("192.0.2.30"), KeyHash: h, Calls: calls})
				if err != nil {
					t.Error(err)
					return
				}
				switch d.Outcome {
				case meter.Paid:
					if d.Balance < 0 {
						t.Errorf("balance went negative: %d", d.Balance)
					}
					paidCalls.Add(int64(calls))
				case meter.PaymentRequired:
					refused.Add(1)
					return
				default:
					t.Errorf("unexpected %+v", d)
					return
				}
			}
		}()
	}
	wg.Wait()
	final := f.balance(t, id)
	if final < 0 {
		t.Fatalf("final balance %d", final)
	}
	if spent := initial - final; spent != money.Units(paidCalls.Load())*30 {
		t.Fatalf("balance fell by %d but %d calls were served (= %d units)", spent, paidCalls.Load(), paidCalls.Load()*30)
	}
	// Every goroutine stopped only when even a single call could not be paid
	// for its batch size; the singles guarantee the rest is below one call.
	if final >= 30 {
		t.Fatalf("final balance %d: a single call was refused while it could be paid", final)
	}
	var debited money.Units
	var debitCalls int
	for _, e := range f.stream(t) {
		if d, ok := e.(*events.Debit); ok {
			debited += d.Amount
			debitCalls += d.Calls
		}
	}
	if debited != initial-final || int64(debitCalls) != paidCalls.Load() {
		t.Fatalf("stream debits %d units / %d calls, balance change %d / served %d", debited, debitCalls, initial-final, paidCalls.Load())
	}
	t.Logf("%d calls paid by 48 goroutines, %d units left", paidCalls.Load(), final)
}

func TestRateLimits(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 1000, FreeSubnetLimit: 1000,
		IPRate: meter.Rate{Rate: 5, Per: time.Second, Burst: 5}, KeyRate: meter.Rate{Rate: 2, Per: time.Second, Burst: 2}})
	a := ip("192.0.2.40")
	for i := range 5 {
		if d := f.authorize(t, meter.Request{IP: a, Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("call %d: %+v", i+1, d)
		}
	}
	d := f.authorize(t, meter.Request{IP: a, Calls: 1})
	if d.Outcome != meter.RateLimited || d.RetryAfter != 200*time.Millisecond {
		t.Fatalf("6th call in the same instant: %+v", d)
	}
	// A refused request is neither counted nor charged.
	if st, _ := f.m.Stats(context.Background()); st.Calls != 5 {
		t.Fatalf("stats %+v", st)
	}
	f.clk.Add(200 * time.Millisecond)
	if d := f.authorize(t, meter.Request{IP: a, Calls: 1}); d.Outcome != meter.Free {
		t.Fatalf("after Retry-After: %+v", d)
	}
	// Another address has its own budget.
	if d := f.authorize(t, meter.Request{IP: ip("192.0.2.41"), Calls: 1}); d.Outcome != meter.Free {
		t.Fatalf("other IP: %+v", d)
	}
	// A valid key is limited on its own rate, whatever its IP.
	secret, _ := f.newKey(t)
	h := meter.HashKey(secret)
	for range 2 {
		if d := f.authorize(t, meter.Request{IP: a, KeyHash: h, Calls: 1}); d.Outcome != meter.Free {
			t.Fatalf("%+v", d)
		}
	}
	if d := f.authorize(t, meter.Request{IP: ip("192.0.2.99"), KeyHash: h, Calls: 1}); d.Outcome != meter.RateLimited || d.RetryAfter != 500*time.Millisecond {
		t.Fatalf("key over its rate: %+v", d)
	}
	if got := meter.RetrySeconds(200 * time.Millisecond); got != 1 {
		t.Fatalf("RetrySeconds = %d", got)
	}
}

func TestUnknownAndRevokedKeys(t *testing.T) {
	f := newFixture(t, meter.Config{FreeDailyLimit: 10, FreeSubnetLimit: 10})
	unknown, _ := meter.NewKey()
	if d := f.authorize(t, meter.Request{IP: ip("192.0.2.50"), KeyHash: meter.HashKey(unknown), Calls: 1}); d.Outcome != meter.Unauthorized || d.Reason != "unknown_key" {
		t.Fatalf("unknown key: %+v", d)
	}
	secret, id := f.newKey(t)
	if err := f.rdb.HSet(context.Background(), f.layout().Account(id), balances.FieldStatus, balances.StatusRevoked).Err(); err != nil {
		t.Fatal(err)
	}
	if d := f.authorize(t, meter.Request{IP: ip("192.0.2.50"), KeyHash: meter.HashKey(secret), Calls: 1}); d.Outcome != meter.Unauthorized || d.Reason != "revoked_key" {
		t.Fatalf("revoked key: %+v", d)
	}
	if _, st, err := f.m.Usage(context.Background(), meter.HashKey(secret)); err != nil || st != meter.KeyRevoked {
		t.Fatalf("usage of a revoked key: %v %v", st, err)
	}
	if st, err := f.m.AccountStatus(context.Background(), id); err != nil || st != meter.KeyRevoked {
		t.Fatalf("account status %v %v", st, err)
	}
	if st, _ := f.m.AccountStatus(context.Background(), accounts.NewID()); st != meter.KeyUnknown {
		t.Fatalf("unknown account status %v", st)
	}
}

func TestKeyCreationLimitAndHashOnlyStorage(t *testing.T) {
	f := newFixture(t, meter.Config{CreateLimit: 3, CreateWindow: time.Hour})
	ctx := context.Background()
	var secrets []string
	for i := range 3 {
		k, err := f.m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyMachine, Label: fmt.Sprint("agent ", i), IP: ip("192.0.2.60")})
		if err != nil {
			t.Fatal(err)
		}
		if !meter.WellFormedKey(k.Secret) || accounts.Validate(k.ID) != nil {
			t.Fatalf("key %q id %q", k.Secret, k.ID)
		}
		secrets = append(secrets, k.Secret)
		f.clk.Add(time.Minute)
	}
	_, err := f.m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyMachine, Label: "x", IP: ip("192.0.2.60")})
	var lim *meter.ErrCreateLimited
	if !errors.As(err, &lim) || lim.RetryAfter != 57*time.Minute {
		t.Fatalf("4th creation: %v", err)
	}
	// Another address is not affected; after the window the first may again.
	if _, err := f.m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyMachine, Label: "x", IP: ip("192.0.2.61")}); err != nil {
		t.Fatal(err)
	}
	f.clk.Add(57 * time.Minute)
	if _, err := f.m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyMachine, Label: "x", IP: ip("192.0.2.60")}); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	for _, s := range secrets {
		if where := findInRedis(t, f.rdb, f.prefix, s); where != "" {
			t.Fatalf("plaintext key found in Redis at %s", where)
		}
		if where := findInRedis(t, f.rdb, f.prefix, meter.HashKey(s)); where == "" {
			t.Fatal("the key's hash is not stored")
		}
	}
}

// findInRedis scans every key under prefix, and every value of every type,
// for needle; it returns where it was found, or "".
func findInRedis(t *testing.T, rdb *redis.Client, prefix, needle string) string {
	t.Helper()
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if strings.Contains(k, needle) {
			return "key name " + k
		}
		typ, _ := rdb.Type(ctx, k).Result()
		var blob string
		switch typ {
		case "string":
			blob, _ = rdb.Get(ctx, k).Result()
		case "hash":
			m, _ := rdb.HGetAll(ctx, k).Result()
			blob = fmt.Sprint(m)
		case "set":
			m, _ := rdb.SMembers(ctx, k).Result()
			blob = fmt.Sprint(m)
		case "zset":
			m, _ := rdb.ZRange(ctx, k, 0, -1).Result()
			blob = fmt.Sprint(m)
		case "stream":
			m, _ := rdb.XRange(ctx, k, "-", "+").Result()
			blob = fmt.Sprint(m)
		default:
			t.Fatalf("unexpected type %s of %s", typ, k)
		}
		if strings.Contains(blob, needle) {
			return typ + " " + k
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return ""
}

func TestKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		k, err := meter.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 46 || !strings.HasPrefix(k, "tg_") || !meter.WellFormedKey(k) || seen[k] {
			t.Fatalf("bad or repeated key %q", k)
		}
		seen[k] = true
	}
	for _, bad := range []string{"", "tg_", "tg_" + strings.Repeat("a", 42), "tg_" + strings.Repeat("a", 44),
		"xx_" + strings.Repeat("a", 43), "tg_" + strings.Repeat("a", 42) + "-"} {
		if meter.WellFormedKey(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRedisDownFailsClosed(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	m, err := meter.New(rdb, meter.Config{FreeDailyLimit: 5, FreeSubnetLimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip("192.0.2.1"), Calls: 1}); !errors.Is(err, meter.ErrUnavailable) {
		t.Fatalf("Authorize: %v", err)
	}
	if _, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "x", IP: ip("192.0.2.1")}); !errors.Is(err, meter.ErrUnavailable) {
		t.Fatalf("CreateKey: %v", err)
	}
	if _, _, err := m.Usage(ctx, meter.HashKey("x")); !errors.Is(err, meter.ErrUnavailable) {
		t.Fatalf("Usage: %v", err)
	}
	if _, err := m.Stats(ctx); !errors.Is(err, meter.ErrUnavailable) {
		t.Fatalf("Stats: %v", err)
	}
}

// crc16 is Redis Cluster's key slot hash (CRC16-CCITT/XMODEM).
func crc16(b string) uint16 {
	var crc uint16
	for i := 0; i < len(b); i++ {
		crc ^= uint16(b[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// TestClusterLayoutIsSingleSlot: with a hash tag in the prefix, every key a
// request's script touches (the derived account keys included) is in one
// slot, as Redis Cluster requires; without one, an account's keys still
// share their own slot.
func TestClusterLayoutIsSingleSlot(t *testing.T) {
	if crc16("123456789") != 0x31C3 {
		t.Fatal("crc16 check value")
	}
	f := newFixture(t, meter.Config{Prefix: "{tg}:", FreeDailyLimit: 5, FreeSubnetLimit: 5, CreateLimit: 5})
	secret, id := f.newKey(t)
	f.credit(t, id, 90)
	f.authorize(t, meter.Request{IP: ip("2001:db8::1"), KeyHash: meter.HashKey(secret), Calls: 2})
	f.authorize(t, meter.Request{IP: ip("192.0.2.1"), Calls: 1})
	keys, err := f.rdb.Keys(context.Background(), f.prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 10 {
		t.Fatalf("only %d keys: %v", len(keys), keys)
	}
	want := slot(keys[0])
	for _, k := range keys {
		if slot(k) != want {
			t.Fatalf("%s is in slot %d, %s in %d", k, slot(k), keys[0], want)
		}
	}
	l := balances.Layout{Prefix: "tollgate:"}
	if slot(l.Account(id)) != slot(l.Deposits(id)) || slot(l.Account(id)) != slot(l.AccountDay(id, "2026-01-01")) || slot(l.Account(id)) != slot(l.AccountRate(id)) {
		t.Fatal("an account's keys span slots")
	}
	if l.Stream(0) != events.Stream {
		t.Fatalf("default stream %q, events.Stream %q", l.Stream(0), events.Stream)
	}
	if !balances.HasHashTag("{tg}:") || balances.HasHashTag("tollgate:") || balances.HasHashTag("{}:") {
		t.Fatal("HasHashTag")
	}
}

func TestClusterClientNeedsTaggedPrefix(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	if _, err := meter.New(c, meter.Config{Prefix: "tollgate:"}); err == nil {
		t.Fatal("a cluster client with an untagged prefix was accepted")
	}
	if _, err := meter.New(c, meter.Config{Prefix: "{tollgate}:"}); err != nil {
		t.Fatal(err)
	}
	// Sharded: a plain prefix, each shard its own tag; a tagged one would
	// put every shard in one slot.
	if _, err := meter.New(c, meter.Config{Prefix: "tollgate:", Shards: 12}); err != nil {
		t.Fatal(err)
	}
	if _, err := meter.New(c, meter.Config{Prefix: "{tollgate}:", Shards: 12}); err == nil {
		t.Fatal("12 shards under a tagged prefix were accepted")
	}
}
