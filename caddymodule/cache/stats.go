package cache

// Stats is a snapshot of one cache's counters, shaped for the JSON of
// /rpc/stats/{chain}. Counters are totals since the cache was created.
type Stats struct {
	Chain uint64 `json:"chain_id"`

	Hits   uint64 `json:"hits"`   // lookups answered from the cache
	Misses uint64 `json:"misses"` // lookups of cacheable calls that were not stored
	// HitRate is Hits / (Hits + Misses), 0 when there were no lookups.
	// Uncacheable calls are not lookups, so this is the cache's own
	// efficiency, not the share of all traffic it answered.
	HitRate float64 `json:"hit_rate"`

	Stores    uint64 `json:"stores"`    // results added
	Evictions uint64 `json:"evictions"` // entries dropped to make room
	Oversize  uint64 `json:"oversize"`  // results refused as larger than MaxEntryBytes

	Entries    int   `json:"entries"`
	Bytes      int64 `json:"bytes"` // result bytes + per-entry overhead, as budgeted
	MaxEntries int   `json:"max_entries"`
	MaxBytes   int64 `json:"max_bytes"`
}

// Stats returns the current counters. Shards are read one at a time, so
// under concurrent traffic the snapshot is approximate across shards (each
// shard's numbers are consistent).
func (c *Cache) Stats() Stats {
	st := Stats{
		Chain:      c.chain,
		Oversize:   c.oversize.Load(),
		MaxEntries: c.maxEntries,
		MaxBytes:   c.maxBytes,
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Hits += s.hits
		st.Misses += s.misses
		st.Stores += s.stores
		st.Evictions += s.evictions
		st.Entries += len(s.m)
		st.Bytes += s.bytes
		s.mu.Unlock()
	}
	if n := st.Hits + st.Misses; n > 0 {
		st.HitRate = float64(st.Hits) / float64(n)
	}
	return st
}
