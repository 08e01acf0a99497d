package meter_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

func revenue(i int) *events.Revenue {
	now := time.Now()
	return &events.Revenue{ID: meter.NewRequestID(), TimeMs: now.UnixMilli(), EpochID: events.EpochOf(now), ChainID: 137, Method: "eth_call",
		Payer: events.PayerFree, Asset: events.AssetUSDT, Calls: 1 + i%3, Upstream: "alpha"}
}

func TestEventWriterWritesEverythingAndFlushesOnClose(t *testing.T) {
	rdb := testenv.Redis(t)
	stream := balances.Layout{Prefix: testenv.KeyPrefix(t)}.Stream(0)
	w := meter.NewEventWriter(rdb, meter.WriterConfig{Stream: stream, MaxBatch: 64})
	const n = 5000
	for i := range n {
		if !w.Enqueue(revenue(i)) {
			t.Fatalf("event %d dropped", i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Enqueued this fast, the events fill their packs (32 by default).
	if got := rdb.XLen(ctx, stream).Val(); got < (n+31)/32 || got > n/8 {
		t.Fatalf("stream has %d entries for %d events, want them packed", got, n)
	}
	if written, dropped, _, pending := w.Stats(); written != n || dropped != 0 || pending != 0 {
		t.Fatalf("stats written %d dropped %d pending %d", written, dropped, pending)
	}
	if w.Enqueue(revenue(0)) {
		t.Fatal("a closed writer accepted an event")
	}
	ids := map[string]int{}
	for _, evs := range entriesIn(t, rdb, stream) {
		for _, e := range evs {
			ids[e.EventID()]++
		}
	}
	if len(ids) != n {
		t.Fatalf("%d distinct events in the stream, want %d", len(ids), n)
	}
	for id, c := range ids {
		if c != 1 {
			t.Fatalf("event %s written %d times", id, c)
		}
	}
}

func TestEventWriterIsBoundedAndNeverBlocks(t *testing.T) {
	// Nothing listens: every write fails and is retried, the queue fills,
	// and Enqueue drops instead of blocking the request path.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	defer rdb.Close()
	w := meter.NewEventWriter(rdb, meter.WriterConfig{Stream: "x", Capacity: 10, MaxBatch: 5})
	start := time.Now()
	accepted := 0
	for i := range 1000 {
		if w.Enqueue(revenue(i)) {
			accepted++
		}
	}
	if el := time.Since(start); el > 3*time.Second { // never blocks; a busy machine's room
		t.Fatalf("enqueueing took %s", el)
	}
	if accepted > 15 { // the queue plus one batch in flight
		t.Fatalf("%d events accepted by a queue of 10", accepted)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); err == nil {
		t.Fatal("Close reported success with Redis down")
	}
	written, dropped, retries, _ := w.Stats()
	if written != 0 || dropped != 1000 || retries == 0 {
		t.Fatalf("written %d dropped %d retries %d", written, dropped, retries)
	}
	if w.Enqueue(&events.Revenue{}) {
		t.Fatal("an invalid event was accepted")
	}
}

// Sharded, each shard's stream has its own queue: while one stream's writes
// fail (here its key holds a string, as a failed master would refuse them),
// the other shards' events are written at once, and the failed shard's are
// written once it recovers.
func TestEventWriterShardsDoNotWaitForEachOther(t *testing.T) {
	rdb := testenv.Redis(t)
	layout := balances.Layout{Prefix: testenv.KeyPrefix(t), Shards: 4}
	ctx := context.Background()
	bad := layout.Stream(0)
	if err := rdb.Set(ctx, bad, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	w := meter.NewEventWriter(rdb, meter.WriterConfig{Stream: layout.Stream(0), Layout: layout, MaxBatch: 8})
	var onBad, onGood int
	for i := 0; onBad < 20 || onGood < 200; i++ {
		e := revenue(i)
		if layout.ShardOfPayer(e.ID) == 0 {
			if onBad >= 20 {
				continue
			}
			onBad++
		} else {
			if onGood >= 200 {
				continue
			}
			onGood++
		}
		if !w.Enqueue(e) {
			t.Fatalf("event %d dropped", i)
		}
	}
	waitWritten(t, w, uint64(onGood))
	// The failing stream's first write may still be in flight when the
	// others are done: wait for its first failure.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, _, retries, pending := w.Stats()
		if retries > 0 && pending > 0 {
			break
		}
		if time.Now().After(deadline) || pending == 0 {
			t.Fatalf("retries %d pending %d: the failing stream should be retrying", retries, pending)
		}
	}
	if err := rdb.Del(ctx, bad).Err(); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, w, uint64(onGood+onBad))
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Close(cctx); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range layout.Streams() {
		for _, evs := range entriesIn(t, rdb, s) {
			total += len(evs)
		}
	}
	if total != onGood+onBad {
		t.Fatalf("%d events in the streams, want %d", total, onGood+onBad)
	}
}

// Revenue events enqueued together go packed, up to MaxPack per stream
// entry; a lone one goes on its own once its pack window ends (no Close
// needed); MaxPack 1 writes one entry per event.
func TestEventWriterPacksRevenueEvents(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	entries := func(stream string) (sizes []int) {
		t.Helper()
		for _, evs := range entriesIn(t, rdb, stream) {
			sizes = append(sizes, len(evs))
		}
		return sizes
	}
	for _, c := range []struct {
		pack int
		want []int
	}{{4, []int{4, 4, 2}}, {1, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}} {
		stream := balances.Layout{Prefix: testenv.KeyPrefix(t) + strconv.Itoa(c.pack) + ":"}.Stream(0)
		// A window no test machine outlasts between two Enqueues.
		w := meter.NewEventWriter(rdb, meter.WriterConfig{Stream: stream, MaxPack: c.pack, PackWindow: 10 * time.Second})
		for i := range 10 {
			if !w.Enqueue(revenue(i)) {
				t.Fatalf("event %d dropped", i)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := w.Close(cctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if got := entries(stream); !slices.Equal(got, c.want) {
			t.Fatalf("MaxPack %d: entries of %v events, want %v", c.pack, got, c.want)
		}
	}

	stream := balances.Layout{Prefix: testenv.KeyPrefix(t) + "lone:"}.Stream(0)
	w := meter.NewEventWriter(rdb, meter.WriterConfig{Stream: stream, PackWindow: 20 * time.Millisecond})
	defer w.Close(ctx)
	if !w.Enqueue(revenue(0)) {
		t.Fatal("event dropped")
	}
	waitWritten(t, w, 1)
	if got := entries(stream); !slices.Equal(got, []int{1}) {
		t.Fatalf("a lone event: entries of %v events", got)
	}
}

// entriesIn reads a stream: each entry's events, in stream order (a packed
// entry holds several).
func entriesIn(t *testing.T, rdb redis.Cmdable, stream string) [][]events.Event {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]events.Event, len(msgs))
	for i, m := range msgs {
		if out[i], err = events.DecodeEntry(m.Values); err != nil {
			t.Fatalf("entry %s: %v", m.ID, err)
		}
	}
	return out
}
