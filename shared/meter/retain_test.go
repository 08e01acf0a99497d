package meter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestRetentionReplaysWhatRedisLost books paid calls and a refund with a
// retention, then plays the three ways a Redis loses money facts, on the
// real Redis: the last writes missing on the same marker (a promoted
// replica: the facts are booked again, balance change and entry), an empty
// Redis (the facts are appended as they were, once per loss, for the
// rebuild to read from PostgreSQL), and settlementd's acknowledgement,
// which lets them go only when it names the Redis process they are on.
func TestRetentionReplaysWhatRedisLost(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, meter.Config{Shards: 1})
	ret := meter.NewRetention(1, 0, 0)
	f.m.SetRetention(ret)
	l := f.layout()
	rep := meter.NewReplayer(f.rdb, l, ret, "gw-test", 0, nil)
	rep.SetHold(-time.Minute) // no hold, whatever the clocks say
	secret, id := f.newKey(t)
	f.credit(t, id, 100*money.PricePerCall)
	req := meter.Request{IP: ip("10.1.1.1"), KeyHash: meter.HashKey(secret), Calls: 1, Method: "eth_blockNumber"}
	var last meter.Decision
	for range 5 {
		last = f.authorize(t, req)
		if last.Outcome != meter.Paid {
			t.Fatalf("outcome %v", last.Outcome)
		}
	}
	if err := f.m.Refund(ctx, &last, 1); err != nil {
		t.Fatal(err)
	}
	if n := ret.Facts(0); n != 6 {
		t.Fatalf("kept %d facts, want 5 debits and a refund", n)
	}
	if err := rep.Tick(ctx, 0); err != nil { // first look: nothing to do
		t.Fatal(err)
	}
	stream := l.Stream(0)
	entries := func() []string {
		msgs, err := f.rdb.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			if m.Values["t"] == events.TypeDebit || m.Values["t"] == events.TypeRefund {
				out = append(out, m.Values["d"].(string))
			}
		}
		return out
	}
	before := entries()
	if len(before) != 6 {
		t.Fatalf("%d money entries in the stream", len(before))
	}

	// A replica promoted without the last two writes (the refund and the
	// last debit): their entries and balance changes are gone.
	msgs, _ := f.rdb.XRevRangeN(ctx, stream, "+", "-", 2).Result()
	for _, m := range msgs {
		f.rdb.XDel(ctx, stream, m.ID)
	}
	// The debit (−30) and its refund (+30) cancel out; a third write lost,
	// the debit before them, takes its −30 with it.
	f.credit(t, id, money.PricePerCall)
	msgs, _ = f.rdb.XRevRangeN(ctx, stream, "+", "-", 2).Result()
	for _, m := range msgs {
		if m.Values["t"] == events.TypeDebit {
			f.rdb.XDel(ctx, stream, m.ID)
			break
		}
	}
	rep.SeenRun(0, "another-process")
	if err := rep.Tick(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := rep.Stats().Rebooked; got != 3 {
		t.Fatalf("rebooked %d facts, want the 3 missing", got)
	}
	if bal := f.balance(t, id); bal != 100*money.PricePerCall-5*money.PricePerCall+money.PricePerCall {
		t.Fatalf("balance %d after the rebook, want deposits − 5 debits + 1 refund", bal)
	}
	if after := entries(); len(after) != 6 {
		t.Fatalf("%d money entries after the rebook, want 6", len(after))
	}

	// Empty: every key of this layout gone, the marker too. The facts are
	// appended once, as they were, and the gateway is in Replayed.
	keys, _ := f.rdb.Keys(ctx, f.prefix+"*").Result()
	f.rdb.Del(ctx, keys...)
	for range 2 {
		if err := rep.Tick(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	after := entries()
	if strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("appended to the empty Redis:\n%s\nwant what was booked:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if ok, _ := f.rdb.SIsMember(ctx, l.Replayed(), "gw-test").Result(); !ok {
		t.Fatal("the gateway is not in the replayed set")
	}

	// settlementd's acknowledgement: one naming another process is not
	// used; one naming this one lets go of every fact below it.
	testenv.MarkRebuiltLayout(t, f.rdb, l)
	run, err := meter.RunID(ctx, f.rdb, stream)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ = f.rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
	var low int64
	if _, err := fmt.Sscanf(msgs[0].ID, "%d-", &low); err != nil {
		t.Fatal(err)
	}
	f.rdb.Set(ctx, l.Ingested(), meter.FormatAck(low+1, "not-this-process"), 0)
	_ = rep.Tick(ctx, 0)
	if n := ret.Facts(0); n != 6 {
		t.Fatalf("an acknowledgement of another process let go of facts: %d left", n)
	}
	f.rdb.Set(ctx, l.Ingested(), meter.FormatAck(low+1, run), 0)
	_ = rep.Tick(ctx, 0)
	if n := ret.Facts(0); n != 0 {
		t.Fatalf("%d facts kept after their acknowledgement", n)
	}
}

// TestRetentionKeepsAGrant: an x402 payment's grant, its bundle key and the
// paying call's draw are kept, and appended again as they were to a Redis
// that lost them (the rebuild then finds the grant in PostgreSQL: the
// wallet paid on chain and keeps its calls).
func TestRetentionKeepsAGrant(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, meter.Config{Shards: 1})
	ret := meter.NewRetention(1, 0, 0)
	f.m.SetRetention(ret)
	rep := meter.NewReplayer(f.rdb, f.layout(), ret, "gw-grant", 0, nil)
	if err := rep.Tick(ctx, 0); err != nil {
		t.Fatal(err)
	}
	req := meter.Request{ChainID: 8453, IP: ip("10.2.2.2"), Calls: 1, Method: "eth_blockNumber"}
	pg, err := f.m.PrepareGrant(req, grant("0xbbb"))
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := f.m.GrantBundle(ctx, pg); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("grant: %v %v", d.Outcome, err)
	}
	if n := ret.Facts(0); n != 3 {
		t.Fatalf("kept %d facts, want the grant, its key and the draw", n)
	}
	keys, _ := f.rdb.Keys(ctx, f.prefix+"*").Result()
	f.rdb.Del(ctx, keys...)
	if err := rep.Tick(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range f.stream(t) {
		types = append(types, e.EventType())
	}
	if got := strings.Join(types, ","); got != events.TypeBundleGrant+","+events.TypeKeyCreated+","+events.TypeDebit {
		t.Fatalf("appended to the empty Redis: %s", got)
	}
}
