package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// counts is how many revenue events, debits and refunds evs holds.
func counts(evs []events.Event) (rev, deb, ref int64) {
	for _, ev := range evs {
		switch ev.(type) {
		case *events.Revenue:
			rev++
		case *events.Debit:
			deb++
		case *events.Refund:
			ref++
		}
	}
	return rev, deb, ref
}

// Packed entries (events.EncodePack, as the gateway's event writer writes
// revenue events) are booked event by event, each once, also when a
// retrying writer XADDs a pack twice; a pack that is not readable whole
// (one bad event, a count that does not match its payloads) is parked
// whole, and none of its events is booked.
func TestPackedEntriesAreBookedOrParkedWhole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	good := settletest.Traffic(4, 400, now.Add(-time.Minute), now)
	settletest.XAddPacked(t, e.rdb, e.stream, 7, good...)
	settletest.XAddPacked(t, e.rdb, e.stream, 5, good...) // every event again, packed differently
	if entries := e.rdb.XLen(ctx, e.stream).Val(); entries >= int64(2*len(good)) {
		t.Fatalf("%d entries for %d events: nothing was packed", entries, 2*len(good))
	}

	ok := func(id string) string {
		d, err := events.Payload(&events.Revenue{ID: id, TimeMs: now.UnixMilli(), EpochID: events.EpochOf(now), ChainID: 137, Method: "eth_call",
			Payer: events.PayerFree, Asset: events.AssetUSDT, Calls: 1, Upstream: "alpha"})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	bad := []map[string]any{
		// The second event is invalid: the first and third are not booked either.
		{"t": "revenue", "v": "1", "n": "3", "d": ok("p1-a") + "\n" + `{"id":"x"}` + "\n" + ok("p1-c")},
		{"t": "revenue", "v": "1", "n": "3", "d": ok("p2-a") + "\n" + ok("p2-b")}, // two payloads, count 3
		{"t": "revenue", "v": "1", "n": "2", "d": ok("p3-a") + "\n" + ok("p3-b") + "\n" + ok("p3-c")},
		{"t": "revenue", "v": "1", "n": "0", "d": ok("p4-a")},
		{"t": "revenue", "v": "1", "n": "02", "d": ok("p5-a") + "\n" + ok("p5-b")},
		{"t": "revenue", "v": "1", "n": "x", "d": ok("p6-a")},
		{"t": "revenue", "v": "1", "n": "2000", "d": ok("p7-a")},
		{"t": "mystery", "v": "1", "n": "2", "d": "{}\n{}"},
	}
	for _, v := range bad {
		if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A dead letter replayed (status, POST /admin/dead-letters/replay)
	// carries replay_of beside its own fields: it is booked like any entry.
	replayed := map[string]any{"t": "revenue", "v": "1", "n": "2", "d": ok("r1-a") + "\n" + ok("r1-b"), "replay_of": "7"}
	if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: replayed}).Err(); err != nil {
		t.Fatal(err)
	}
	e.start(t, Config{Batch: 64})
	e.drained(t)

	nRev, nDeb, nRef := counts(good)
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != nRev+2 {
		t.Errorf("revenue rows %d, want %d", got, nRev+2)
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events WHERE id LIKE 'r1-_'`); got != 2 {
		t.Errorf("the replayed pack: %d of its 2 events booked", got)
	}
	if got := e.count(t, `SELECT count(*) FROM debits`); got != nDeb {
		t.Errorf("debit rows %d, want %d", got, nDeb)
	}
	if got := e.count(t, `SELECT count(*) FROM refunds`); got != nRef {
		t.Errorf("refund rows %d, want %d", got, nRef)
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events WHERE id LIKE 'p%-%'`); got != 0 {
		t.Errorf("%d events of parked packs were booked", got)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != int64(len(bad)) {
		t.Errorf("dead letters %d, want %d", got, len(bad))
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters WHERE reason LIKE 'packed entry, event 2 of 3:%'`); got != 1 {
		t.Errorf("the pack with a bad second event: %d dead letters that say so", got)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters WHERE reason LIKE '%unknown event type%'`); got != 1 {
		t.Errorf("the pack of an unknown type: %d dead letters that say so", got)
	}
}

// A consumer that dies holding packed entries leaves them pending; the
// survivor claims them (XAUTOCLAIM, a different read path) and every event
// in them is stored once.
func TestPackedEntriesClaimedAfterCrashAreStoredOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(5, 300, now.Add(-time.Minute), now)
	settletest.XAddPacked(t, e.rdb, e.stream, 8, evs...)
	crashed := e.grouped(t, Config{Consumer: "dead", Batch: 100_000})
	read, err := (&worker{in: crashed, name: "dead-1"}).read(ctx, ">")
	if n := e.rdb.XLen(ctx, e.stream).Val(); err != nil || int64(len(read)) != n || n >= int64(len(evs)) {
		t.Fatalf("the dead consumer read %d of %d entries (%d events): %v", len(read), n, len(evs), err)
	}

	e.start(t, Config{Consumer: "survivor", ClaimMinIdle: 50 * time.Millisecond, ClaimEvery: 50 * time.Millisecond})
	e.drained(t)
	nRev, nDeb, nRef := counts(evs)
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != nRev {
		t.Errorf("revenue rows %d, want %d", got, nRev)
	}
	if got := e.count(t, `SELECT count(*) FROM debits`) + e.count(t, `SELECT count(*) FROM refunds`); got != nDeb+nRef {
		t.Errorf("debit and refund rows %d, want %d", got, nDeb+nRef)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != 0 {
		t.Errorf("dead letters %d", got)
	}
}
