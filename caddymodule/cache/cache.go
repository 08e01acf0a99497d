package cache

import (
	"encoding/json"
	"sync/atomic"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// Defaults for Config's zero values.
const (
	// DefaultMaxBytes is the byte budget of one chain's cache. Finalized
	// blocks, receipts and logs are what fills it; 64 MiB holds a few
	// thousand full blocks or tens of thousands of receipts, which covers
	// the hot set (recent finalized history, popular contracts' eth_call
	// at pinned blocks) without making five chains a memory problem.
	DefaultMaxBytes = 64 << 20

	// DefaultMaxEntries bounds the entry count, i.e. map and list size,
	// independently of bytes (entryOverhead already charges small entries,
	// so this rarely binds before MaxBytes does).
	DefaultMaxEntries = 1 << 17

	// DefaultMaxEntryBytes is the largest result stored. Bigger answers
	// (blocks with full transactions on busy chains, wide eth_getLogs
	// ranges) would evict hundreds of small, hot entries each, and are
	// cheap to miss relative to their transfer time anyway.
	DefaultMaxEntryBytes = 256 << 10

	// maxShards is the shard count when budgets allow (see New).
	maxShards = 16
)

// Config sizes a Cache. Zero or negative fields take the defaults above.
type Config struct {
	MaxBytes      int64 // total budget: result bytes + entryOverhead (128) per entry
	MaxEntries    int   // total entry count
	MaxEntryBytes int   // largest result stored
}

// Cache is one chain's edge cache. It is safe for concurrent use; every
// operation is O(1) (plus hashing the params) and no goroutines are
// started.
type Cache struct {
	chain         uint64
	maxBytes      int64
	maxEntries    int
	maxEntryBytes int
	shards        []shard
	mask          uint8
	oversize      atomic.Uint64 // results refused for size (no shard lock taken)
}

// New returns an empty cache for chain.
//
// The shard count is 16 unless the budgets are too small to split: each
// shard must hold at least four maximum-size entries and 64 entries, so
// that sharding never makes an entry unstorable or turns LRU into
// thrashing. Small test configurations therefore get one shard and exact
// LRU order.
func New(chain uint64, cfg Config) *Cache {
	c := &Cache{
		chain:         chain,
		maxBytes:      cfg.MaxBytes,
		maxEntries:    cfg.MaxEntries,
		maxEntryBytes: cfg.MaxEntryBytes,
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.maxEntries <= 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.maxEntryBytes <= 0 {
		c.maxEntryBytes = DefaultMaxEntryBytes
	}
	n := maxShards
	for n > 1 && (c.maxBytes/int64(n) < 4*(int64(c.maxEntryBytes)+entryOverhead) || c.maxEntries/n < 64) {
		n /= 2
	}
	perBytes, perEntries := c.maxBytes/int64(n), max(1, c.maxEntries/n)
	// An entry must fit its shard, or storing it would empty the shard and
	// still overshoot the budget.
	if int64(c.maxEntryBytes)+entryOverhead > perBytes {
		c.maxEntryBytes = int(max(0, perBytes-entryOverhead))
	}
	c.shards = make([]shard, n)
	for i := range c.shards {
		c.shards[i].init(perBytes, perEntries)
	}
	c.mask = uint8(n - 1)
	return c
}

// Chain is the chain id the cache serves.
func (c *Cache) Chain() uint64 { return c.chain }

func (c *Cache) shard(k Key) *shard { return &c.shards[k[0]&c.mask] }

// Get returns the result stored under k, counting a hit or a miss. The
// slice is shared: do not modify it.
func (c *Cache) Get(k Key) (json.RawMessage, bool) {
	v, ok := c.shard(k).get(k)
	return v, ok
}

// Put stores result under k without applying the rules: k must come from
// Cacheable and result must have passed Storable (Store does both). It
// copies result, which usually aliases an upstream body. It reports
// whether the result is in the cache afterwards; false means it was empty
// or exceeded the entry size limit.
func (c *Cache) Put(k Key, result json.RawMessage) bool {
	result = trimSpace(result)
	if len(result) == 0 {
		return false
	}
	if len(result) > c.maxEntryBytes {
		c.oversize.Add(1)
		return false
	}
	c.shard(k).put(k, append(make([]byte, 0, len(result)), result...))
	return true
}

// Lookup answers it from the cache if it is cacheable at the finalized head
// and stored. Uncacheable calls are not counted as lookups.
func (c *Cache) Lookup(it *jsonrpc.Item, finalized uint64) (json.RawMessage, bool) {
	k, ok := Cacheable(c.chain, it, finalized)
	if !ok {
		return nil, false
	}
	return c.Get(k)
}

// Store keeps resp, the upstream's answer to it, if the rules allow (see
// Storable) and it fits. It reports whether it was stored.
func (c *Cache) Store(it *jsonrpc.Item, resp *jsonrpc.Response, finalized uint64) bool {
	p, params, ok := analyze(it)
	if !ok || !p.storable(resp, finalized) {
		return false
	}
	return c.Put(makeKey(c.chain, it.Method, &params), resp.Result)
}

// Purge drops every entry (counters are kept). Finalized answers never go
// stale, so this is for operators and tests, e.g. after a chain halt and a
// finality violation.
func (c *Cache) Purge() {
	for i := range c.shards {
		c.shards[i].purge()
	}
}
