package recovery

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// The trim deletes what settlementd has stored and no live gateway keeps:
// not below a live gateway's keep, nothing at all while a live gateway has
// not said what it keeps, nothing while entries are pending, and a dead
// gateway's keep is forgotten.
func TestTrimKeepsWhatGatewaysAndIngestNeed(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	stream := l.Stream(0)
	tr := NewTrimmer(rdb, prefix, 1, nil)
	// 300 entries one millisecond apart, from 10 minutes ago.
	base := time.Now().Add(-10 * time.Minute).UnixMilli()
	for i := range 300 {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: strconv.FormatInt(base+int64(i), 10) + "-0", Values: []any{"t", "x"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	xlen := func() int64 {
		n, err := rdb.XLen(ctx, stream).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// No consumer group: nothing is known stored.
	if err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if xlen() != 300 {
		t.Fatalf("trimmed without a consumer group: %d left", xlen())
	}
	// The group has read and acknowledged the first 200 entries; the rest
	// is pending (read, not acknowledged).
	if err := rdb.XGroupCreate(ctx, stream, "settlementd", "0").Err(); err != nil {
		t.Fatal(err)
	}
	msgs, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "settlementd", Consumer: "c", Streams: []string{stream, ">"}, Count: 300}).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[0].Messages[:200] {
		rdb.XAck(ctx, stream, "settlementd", m.ID)
	}
	now := time.Now().UnixMilli()
	// A live gateway keeping from entry 50 on.
	rdb.ZAdd(ctx, l.Gateways(), redis.Z{Score: float64(now), Member: "gw-a"})
	rdb.HSet(ctx, l.Keep(), "gw-a", base+50)
	// A dead gateway's keep (no heartbeat in the last minute).
	rdb.ZAdd(ctx, l.Gateways(), redis.Z{Score: float64(now - 2*time.Minute.Milliseconds()), Member: "gw-dead"})
	rdb.HSet(ctx, l.Keep(), "gw-dead", base)
	if err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Approximate trimming deletes whole nodes (100 entries by default):
	// nothing below entry 50 can go, so the first node stays.
	if n := xlen(); n != 300 {
		t.Fatalf("trimmed below a live gateway's keep: %d left", n)
	}
	if v, _ := rdb.HExists(ctx, l.Keep(), "gw-dead").Result(); v {
		t.Fatal("a dead gateway's keep is still there")
	}
	// The gateway moves on: entries below the pending ones may go.
	rdb.HSet(ctx, l.Keep(), "gw-a", now)
	if err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := xlen(); n < 100 || n > 200 {
		t.Fatalf("%d left, want the 100 pending entries and at most one node below them", n)
	}
	pending, err := rdb.XPending(ctx, stream, "settlementd").Result()
	if err != nil || pending.Count != 100 {
		t.Fatalf("pending %v %v", pending, err)
	}
	if first, _ := rdb.XRangeN(ctx, stream, "-", "+", 1).Result(); len(first) == 0 || first[0].ID > pending.Lower {
		t.Fatalf("a pending entry was trimmed: oldest %v, lowest pending %s", first, pending.Lower)
	}
	// A live gateway that has not said what it keeps holds the trim back.
	for _, m := range msgs[0].Messages[200:] {
		rdb.XAck(ctx, stream, "settlementd", m.ID)
	}
	rdb.ZAdd(ctx, l.Gateways(), redis.Z{Score: float64(now), Member: "gw-old"})
	before := xlen()
	if err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if xlen() != before {
		t.Fatal("trimmed while a live gateway had not said what it keeps")
	}
	rdb.HSet(ctx, l.Keep(), "gw-old", now)
	if err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := xlen(); n > 100 {
		t.Fatalf("%d left once everything is stored and kept by nobody", n)
	}
}
