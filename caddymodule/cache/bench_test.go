package cache

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

const benchCall = `[{"to":"0x00000000219ab540356cBB839Cbe05303d7705Fa","data":"0x70a08231000000000000000000000000ab5801a7d398351b8be11c439e05c5b3259aec9b"},"0x1234"]`

func BenchmarkGetHit(b *testing.B) {
	c := New(1, Config{})
	for i := range 10000 {
		c.Put(keyN(i), json.RawMessage(`"0x1bc16d674ec80000"`))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := c.Get(keyN(i % 10000)); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	c := New(1, Config{})
	for i := range 10000 {
		c.Put(keyN(i), json.RawMessage(`"0x1bc16d674ec80000"`))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(keyN(i % 10000))
			i++
		}
	})
}

// BenchmarkPut inserts into a full cache, so every Put also evicts.
func BenchmarkPut(b *testing.B) {
	c := New(1, Config{MaxEntries: 4096})
	v := json.RawMessage(`{"blockNumber":"0x1234","status":"0x1","gasUsed":"0x5208","logs":[]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	i := 0
	for b.Loop() {
		c.Put(keyN(i), v)
		i++
	}
}

// BenchmarkCacheable is the per-call cost of the rules and the key for a
// typical eth_call (parse, normalise, SHA-256).
func BenchmarkCacheable(b *testing.B) {
	it := &jsonrpc.Item{Method: "eth_call", Params: json.RawMessage(benchCall)}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Cacheable(1, it, 0x2000); !ok {
			b.Fatal("not cacheable")
		}
	}
}

// BenchmarkLookupHit is what a cached single call costs end to end.
func BenchmarkLookupHit(b *testing.B) {
	c := New(1, Config{})
	it := &jsonrpc.Item{Method: "eth_call", Params: json.RawMessage(benchCall)}
	c.Store(it, &jsonrpc.Response{Result: json.RawMessage(`"0x01"`)}, 0x2000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Lookup(it, 0x2000); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkSplit100(b *testing.B) {
	c := New(1, Config{})
	items := make([]jsonrpc.Item, 100)
	for i := range items {
		items[i] = jsonrpc.Item{ID: json.RawMessage(fmt.Sprint(i)), Method: "eth_getBlockByNumber",
			Params: json.RawMessage(fmt.Sprintf(`["0x%x",false]`, i))}
		if i%2 == 0 {
			c.Store(&items[i], &jsonrpc.Response{Result: json.RawMessage(`{"number":"0x1"}`)}, 1000)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Split(items, 1000)
	}
}
