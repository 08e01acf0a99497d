package cache

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

func keyN(n int) Key {
	var k Key
	binary.BigEndian.PutUint64(k[8:], uint64(n))
	k[0] = byte(n) // spread over shards
	return k
}

func val(size int, fill byte) json.RawMessage {
	return json.RawMessage(`"` + strings.Repeat(string(rune(fill)), size-2) + `"`)
}

// checkInvariants walks every shard: list and map agree, byte accounting is
// exact, and budgets hold.
func checkInvariants(t *testing.T, c *Cache) {
	t.Helper()
	var total int64
	var entries int
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n, bytes := 0, int64(0)
		for e := s.root.next; e != &s.root; e = e.next {
			if s.m[e.key] != e {
				t.Errorf("shard %d: list entry not in map", i)
			}
			if e.next.prev != e {
				t.Errorf("shard %d: broken links", i)
			}
			n++
			bytes += e.size
		}
		if n != len(s.m) || bytes != s.bytes {
			t.Errorf("shard %d: list %d/%d bytes, map %d/%d bytes", i, n, bytes, len(s.m), s.bytes)
		}
		if s.bytes > s.maxBytes || len(s.m) > s.maxEntries {
			t.Errorf("shard %d over budget: %d/%d bytes, %d/%d entries", i, s.bytes, s.maxBytes, len(s.m), s.maxEntries)
		}
		total += s.bytes
		entries += len(s.m)
		s.mu.Unlock()
	}
	if total > c.maxBytes || entries > c.maxEntries {
		t.Errorf("over budget: %d/%d bytes, %d/%d entries", total, c.maxBytes, entries, c.maxEntries)
	}
}

func TestDefaults(t *testing.T) {
	c := New(137, Config{})
	if c.maxBytes != DefaultMaxBytes || c.maxEntries != DefaultMaxEntries || c.maxEntryBytes != DefaultMaxEntryBytes {
		t.Fatalf("defaults: %d %d %d", c.maxBytes, c.maxEntries, c.maxEntryBytes)
	}
	if len(c.shards) != maxShards {
		t.Fatalf("shards = %d", len(c.shards))
	}
	if c.Chain() != 137 {
		t.Fatal("chain")
	}
	// Budgets too small to split get one shard; an entry limit above the
	// byte budget is clamped so an entry always fits.
	c = New(1, Config{MaxBytes: 1000, MaxEntries: 10})
	if len(c.shards) != 1 || c.maxEntryBytes != 1000-entryOverhead {
		t.Fatalf("small: %d shards, max entry %d", len(c.shards), c.maxEntryBytes)
	}
	if !c.Put(keyN(1), val(1000-entryOverhead, 'a')) || c.Put(keyN(2), val(1001-entryOverhead, 'a')) {
		t.Fatal("clamped entry limit not applied")
	}
	checkInvariants(t, c)
}

func TestEvictByBytes(t *testing.T) {
	const size = 100
	// Room for exactly 10 entries of 100 result bytes; MaxEntries < 128
	// keeps a single shard, so LRU order is exact.
	c := New(1, Config{MaxBytes: 10 * (size + entryOverhead), MaxEntries: 100, MaxEntryBytes: size})
	for i := range 10 {
		c.Put(keyN(i), val(size, 'a'))
	}
	if st := c.Stats(); st.Entries != 10 || st.Evictions != 0 || st.Bytes != 10*(size+entryOverhead) {
		t.Fatalf("after fill: %+v", st)
	}
	c.Get(keyN(0)) // 0 becomes most recent: 1 is now the oldest
	c.Put(keyN(10), val(size, 'b'))
	if _, ok := c.Get(keyN(1)); ok {
		t.Fatal("least recently used entry 1 not evicted")
	}
	for _, i := range []int{0, 2, 9, 10} {
		if _, ok := c.Get(keyN(i)); !ok {
			t.Fatalf("entry %d evicted", i)
		}
	}
	// A small entry needs no eviction when there is room, a big one may
	// evict several.
	c2 := New(1, Config{MaxBytes: 4 * (size + entryOverhead), MaxEntries: 100, MaxEntryBytes: 3*size + 2*entryOverhead})
	for i := range 4 {
		c2.Put(keyN(i), val(size, 'a'))
	}
	c2.Put(keyN(9), val(3*size+2*entryOverhead, 'z'))
	if st := c2.Stats(); st.Entries != 2 || st.Evictions != 3 {
		t.Fatalf("big entry: %+v", st)
	}
	if _, ok := c2.Get(keyN(3)); !ok {
		t.Fatal("newest small entry evicted")
	}
	checkInvariants(t, c)
	checkInvariants(t, c2)
}

func TestEvictByCount(t *testing.T) {
	c := New(1, Config{MaxEntries: 3})
	for i := range 5 {
		c.Put(keyN(i), json.RawMessage(`"0x1"`))
	}
	st := c.Stats()
	if st.Entries != 3 || st.Evictions != 2 || st.Stores != 5 {
		t.Fatalf("%+v", st)
	}
	for i := range 5 {
		if _, ok := c.Get(keyN(i)); ok != (i >= 2) {
			t.Fatalf("entry %d present=%v", i, ok)
		}
	}
	checkInvariants(t, c)
}

func TestPutSemantics(t *testing.T) {
	c := New(1, Config{MaxEntryBytes: 10})
	buf := []byte(` "0x1234" `)
	if !c.Put(keyN(1), buf) {
		t.Fatal("put failed")
	}
	copy(buf, "XXXXXXXXXX") // the upstream body buffer gets reused
	if v, _ := c.Get(keyN(1)); string(v) != `"0x1234"` {
		t.Fatalf("stored value aliases the caller's buffer or was not trimmed: %s", v)
	}
	// Re-putting an existing key keeps one entry.
	c.Put(keyN(1), json.RawMessage(`"0x1234"`))
	if st := c.Stats(); st.Entries != 1 || st.Stores != 1 {
		t.Fatalf("re-put: %+v", st)
	}
	if c.Put(keyN(4), json.RawMessage(" ")) {
		t.Fatal("empty result stored")
	}
	if c.Put(keyN(2), json.RawMessage(`"0x123456789"`)) {
		t.Fatal("oversize result stored")
	}
	if st := c.Stats(); st.Oversize != 1 || st.Entries != 1 {
		t.Fatalf("oversize: %+v", st)
	}
	c.Purge()
	if _, ok := c.Get(keyN(1)); ok {
		t.Fatal("purge left an entry")
	}
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after purge: %+v", st)
	}
	checkInvariants(t, c)
	c.Put(keyN(3), json.RawMessage(`1`))
	checkInvariants(t, c)
}

func TestLookupStore(t *testing.T) {
	c := New(137, Config{})
	blk := item("eth_getBlockByNumber", `["0x10",false]`)
	if _, hit := c.Lookup(blk, fin); hit {
		t.Fatal("hit on empty cache")
	}
	if c.Store(blk, ok(`null`), fin) {
		t.Fatal("null stored")
	}
	if !c.Store(blk, ok(`{"number":"0x10"}`), fin) {
		t.Fatal("not stored")
	}
	// Another spelling of the same call hits.
	if v, hit := c.Lookup(item("eth_getBlockByNumber", ` [ "0x0010" , false ] `), fin); !hit || string(v) != `{"number":"0x10"}` {
		t.Fatalf("lookup: %s %v", v, hit)
	}
	// Uncacheable calls are neither stored nor counted.
	latest := item("eth_getBlockByNumber", `["latest",false]`)
	if c.Store(latest, ok(`{"number":"0x99"}`), fin) {
		t.Fatal("latest stored")
	}
	if _, hit := c.Lookup(latest, fin); hit {
		t.Fatal("latest hit")
	}
	// Same call on another chain's cache: a different key.
	other := New(1, Config{})
	other.Store(blk, ok(`{"number":"0x10","chain":1}`), fin)
	if v, _ := c.Lookup(blk, fin); string(v) != `{"number":"0x10"}` {
		t.Fatal("chains mixed")
	}
	st := c.Stats()
	if st.Hits != 2 || st.Misses != 1 || st.Stores != 1 {
		t.Fatalf("%+v", st)
	}
}

func TestStats(t *testing.T) {
	c := New(8453, Config{MaxEntries: 2})
	if st := c.Stats(); st.HitRate != 0 || st.Hits != 0 || st.Misses != 0 {
		t.Fatalf("empty: %+v", st)
	}
	c.Get(keyN(1))                         // miss
	c.Put(keyN(1), json.RawMessage(`"a"`)) // store
	c.Get(keyN(1))                         // hit
	c.Get(keyN(1))                         // hit
	c.Put(keyN(2), json.RawMessage(`"bb"`))
	c.Put(keyN(3), json.RawMessage(`"ccc"`)) // evicts 1
	c.Get(keyN(1))                           // miss
	st := c.Stats()
	want := Stats{
		Chain: 8453, Hits: 2, Misses: 2, HitRate: 0.5, Stores: 3, Evictions: 1,
		Entries: 2, Bytes: 4 + 5 + 2*entryOverhead, MaxEntries: 2, MaxBytes: DefaultMaxBytes,
	}
	if st != want {
		t.Fatalf("got  %+v\nwant %+v", st, want)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"chain_id", "hits", "misses", "hit_rate", "stores", "evictions", "oversize", "entries", "bytes", "max_entries", "max_bytes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if m["hit_rate"] != 0.5 {
		t.Errorf("hit_rate = %v", m["hit_rate"])
	}
}

// Many goroutines hammer one cache with gets, puts, lookups, stores,
// splits and stats; the race detector checks the locking, and the
// counters and budgets must come out exact.
func TestConcurrent(t *testing.T) {
	for _, cfg := range []Config{
		{}, // defaults: 16 shards, no eviction
		{MaxBytes: 16 * 4 * (64 + entryOverhead) * 2, MaxEntries: 16 * 64, MaxEntryBytes: 64}, // 16 small shards, constant eviction
		{MaxBytes: 4096, MaxEntries: 20, MaxEntryBytes: 200},                                  // one shard
	} {
		t.Run(fmt.Sprint(cfg), func(t *testing.T) {
			c := New(1, cfg)
			const workers, ops = 32, 2000
			var gets atomic.Uint64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 7))
					for range ops {
						n := r.IntN(3000)
						switch r.IntN(10) {
						case 0, 1, 2, 3:
							if v, ok := c.Get(keyN(n)); ok && v[0] != '"' {
								t.Error("corrupt value")
							}
							gets.Add(1)
						case 4, 5, 6:
							c.Put(keyN(n), val(2+r.IntN(60), 'a'+byte(n%26)))
						case 7:
							it := item("eth_getBlockByNumber", fmt.Sprintf(`["0x%x",false]`, n%200))
							if _, hit := c.Lookup(it, fin); !hit {
								c.Store(it, ok(`{"n":1}`), fin)
							}
						case 8:
							items := []jsonrpc.Item{*item("eth_chainId", ""), *item("eth_getBlockByNumber", `["latest",false]`)}
							s := c.Split(items, fin)
							s.Merge(nil, fin)
						case 9:
							st := c.Stats()
							if st.Bytes > c.maxBytes || st.Entries > c.maxEntries {
								t.Errorf("over budget: %+v", st)
							}
						}
					}
				})
			}
			wg.Wait()
			checkInvariants(t, c)
			st := c.Stats()
			if st.Stores-st.Evictions != uint64(st.Entries) {
				t.Errorf("stores %d - evictions %d != entries %d", st.Stores, st.Evictions, st.Entries)
			}
			if st.Hits+st.Misses < gets.Load() {
				t.Errorf("lookups %d < gets %d", st.Hits+st.Misses, gets.Load())
			}
		})
	}
}
