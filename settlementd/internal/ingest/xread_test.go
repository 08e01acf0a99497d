package ingest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// TestParseXRead: both reply shapes, entries deleted from the stream (no
// fields), empty replies and error replies.
func TestParseXRead(t *testing.T) {
	resp2 := "*1\r\n*2\r\n$6\r\nevents\r\n*3\r\n" +
		"*2\r\n$3\r\n1-0\r\n*6\r\n$1\r\nt\r\n$7\r\nrevenue\r\n$1\r\nv\r\n$1\r\n1\r\n$1\r\nd\r\n$8\r\n{\"a\":\"\"}\r\n" +
		"*2\r\n$3\r\n2-0\r\n*-1\r\n" +
		"*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nx\r\n$0\r\n\r\n"
	resp3 := "%1\r\n$6\r\nevents\r\n*3\r\n" +
		"*2\r\n$3\r\n1-0\r\n*6\r\n$1\r\nt\r\n$7\r\nrevenue\r\n$1\r\nv\r\n$1\r\n1\r\n$1\r\nd\r\n$8\r\n{\"a\":\"\"}\r\n" +
		"*2\r\n$3\r\n2-0\r\n_\r\n" +
		"*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nx\r\n$0\r\n\r\n"
	want := []entry{
		{id: "1-0", fields: []string{"t", "revenue", "v", "1", "d", `{"a":""}`}},
		{id: "2-0"},
		{id: "3-0", fields: []string{"x", ""}},
	}
	for name, s := range map[string]string{"resp2": resp2, "resp3": resp3} {
		got, err := parseXRead(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %#v", name, got)
		}
		if !got[1].deleted() || got[0].deleted() || got[2].deleted() {
			t.Fatalf("%s: deleted %v %v %v", name, got[0].deleted(), got[1].deleted(), got[2].deleted())
		}
		if got[0].field("t") != "revenue" || got[2].field("t") != "" {
			t.Fatalf("%s: fields", name)
		}
		// Every prefix of the reply is refused, never half read.
		for i := range len(s) - 1 {
			if _, err := parseXRead(s[:i]); err == nil && i > 0 {
				t.Fatalf("%s: truncated at %d accepted", name, i)
			}
		}
	}
	for _, s := range []string{"*-1\r\n", "_\r\n", "*0\r\n", "%0\r\n"} {
		if got, err := parseXRead(s); err != nil || len(got) != 0 {
			t.Fatalf("%q: %v, %v", s, got, err)
		}
	}
	if _, err := parseXRead("-NOGROUP No such key 'x' or consumer group 'g'\r\n"); err == nil || !isNoGroup(err) {
		t.Fatalf("error reply: %v", err)
	}
}

// TestXReadGroupRaw reads the same entries with the raw reader and with
// go-redis's XReadGroup, over RESP2 and RESP3: the same ids and fields.
func TestXReadGroupRaw(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		opt := *e.rdb.Options()
		opt.Protocol = proto
		rdb := redis.NewClient(&opt)
		defer rdb.Close()
		stream := fmt.Sprintf("%s-%d", e.stream, proto)
		for i := range 5 {
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"t", "revenue", "v", "1", "d", fmt.Sprintf(`{"n":%d}`, i)}})
		}
		rdb.XGroupCreate(ctx, stream, "g", "0")
		got, err := xreadgroup(ctx, rdb, "g", "raw", stream, ">", 3, -1)
		if err != nil || len(got) != 3 {
			t.Fatalf("RESP%d: %d entries, %v", proto, len(got), err)
		}
		// The same entries, now pending under "raw", read again by go-redis.
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "raw", Streams: []string{stream, "0"}, Count: 3, Block: -1}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range res[0].Messages {
			if got[i].id != m.ID || !reflect.DeepEqual(got[i].valueMap(), m.Values) {
				t.Fatalf("RESP%d: entry %d: %v %v, go-redis %v %v", proto, i, got[i].id, got[i].valueMap(), m.ID, m.Values)
			}
		}
		// Nothing new within the block: no entries, no error.
		rest, err := xreadgroup(ctx, rdb, "g", "raw", stream, ">", 10, -1)
		if err != nil || len(rest) != 2 {
			t.Fatalf("RESP%d: rest %d, %v", proto, len(rest), err)
		}
		none, err := xreadgroup(ctx, rdb, "g", "raw", stream, ">", 10, 10e6)
		if err != nil || len(none) != 0 {
			t.Fatalf("RESP%d: after the end %d, %v", proto, len(none), err)
		}
		if _, err := xreadgroup(ctx, rdb, "nogroup", "raw", stream, ">", 10, -1); !isNoGroup(err) {
			t.Fatalf("RESP%d: unknown group: %v", proto, err)
		}
	}
}

// BenchmarkReadDecode: one op reads 4000 pending entries (settletest.Traffic)
// and decodes them into a batch, by go-redis's XReadGroup (the map per
// entry) or by the raw reader. Go CPU and allocations of the ingester's
// read side alone; Redis serves the same bytes either way.
func BenchmarkReadDecode(b *testing.B) {
	const n = 4000
	e := newEnv(b)
	ctx := context.Background()
	now := time.Now()
	settletest.XAdd(b, e.rdb, e.stream, settletest.Traffic(1, n, now.Add(-time.Hour), now)[:n]...)
	e.rdb.XGroupCreate(ctx, e.stream, "g", "0")
	if got, err := xreadgroup(ctx, e.rdb, "g", "c", e.stream, ">", n, -1); err != nil || len(got) != n {
		b.Fatalf("%d, %v", len(got), err)
	}
	b.Run("goredis", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := e.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{e.stream, "0"}, Count: n, Block: -1}).Result()
			if err != nil || len(res[0].Messages) != n {
				b.Fatal(err)
			}
			newBatch(res[0].Messages).release()
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			es, err := xreadgroup(ctx, e.rdb, "g", "c", e.stream, "0", n, -1)
			if err != nil || len(es) != n {
				b.Fatal(err)
			}
			batchOf(es).release()
		}
	})
}
