package cache

import "sync"

// The store: a fixed number of shards, each an LRU list plus a map under
// its own mutex. A key's shard is picked by its first byte (keys are
// SHA-256 outputs, so uniformly spread). LRU needs a write to the list on
// every hit, so a single lock would serialise all readers; shards spread
// that contention while keeping every operation O(1) and the code simple.
// The price is that LRU order is per shard, not global, which does not
// matter for a cache of this size.
//
// Budgets are split evenly between shards, so the whole cache never holds
// more than MaxBytes / MaxEntries.

// entryOverhead is the memory an entry costs besides its result bytes: the
// entry struct (key, slice header, list links, size) and its map slot. It
// is charged against MaxBytes so that many tiny answers ("0x1") cannot make
// the real footprint exceed the byte budget several times over.
const entryOverhead = 128

type entry struct {
	key        Key
	val        []byte
	size       int64 // len(val) + entryOverhead
	prev, next *entry
}

type shard struct {
	mu         sync.Mutex
	m          map[Key]*entry
	root       entry // sentinel: root.next is the most recently used, root.prev the least
	bytes      int64
	maxBytes   int64
	maxEntries int

	// Counters, guarded by mu (which every operation holds anyway, so they
	// cost no extra atomic traffic).
	hits, misses, stores, evictions uint64

	_ [64]byte // keep neighbouring shards' hot fields off this cache line
}

func (s *shard) init(maxBytes int64, maxEntries int) {
	s.m = make(map[Key]*entry)
	s.root.next, s.root.prev = &s.root, &s.root
	s.maxBytes, s.maxEntries = maxBytes, maxEntries
}

func (s *shard) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (s *shard) pushFront(e *entry) {
	e.prev, e.next = &s.root, s.root.next
	s.root.next.prev = e
	s.root.next = e
}

func (s *shard) get(k Key) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[k]
	if !ok {
		s.misses++
		return nil, false
	}
	s.hits++
	if s.root.next != e {
		s.unlink(e)
		s.pushFront(e)
	}
	return e.val, true
}

// put inserts val (owned by the shard from now on), evicting least recently
// used entries until it fits. An existing entry is kept (answers are
// immutable, so it holds the same bytes) and only refreshed.
func (s *shard) put(k Key, val []byte) {
	size := int64(len(val)) + entryOverhead
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[k]; ok {
		s.unlink(e)
		s.pushFront(e)
		return
	}
	for len(s.m) > 0 && (s.bytes+size > s.maxBytes || len(s.m)+1 > s.maxEntries) {
		lru := s.root.prev
		s.unlink(lru)
		delete(s.m, lru.key)
		s.bytes -= lru.size
		s.evictions++
	}
	e := &entry{key: k, val: val, size: size}
	s.m[k] = e
	s.pushFront(e)
	s.bytes += size
	s.stores++
}

func (s *shard) purge() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.m)
	s.root.next, s.root.prev = &s.root, &s.root
	s.bytes = 0
}
