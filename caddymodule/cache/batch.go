package cache

import (
	"encoding/json"
	"slices"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// Batches. A batch mixes cacheable and uncacheable calls; answering the
// cached ones locally and forwarding only the rest (as proxyd does) saves
// upstream work and keeps the forwarded batch small. Split does the first
// half, Merge puts the upstream's replies back in the caller's order and
// stores what may be stored.

// Split is a batch divided into calls answered from the cache and calls to
// forward. Positions are indexes into the items given to Cache.Split.
type Split struct {
	// Hits are the positions answered from the cache, ascending; Results[k]
	// is the answer to items[Hits[k]] (shared: do not modify).
	Hits    []int
	Results []json.RawMessage

	// Forward are the positions to send upstream, ascending, and Upstream
	// the corresponding items, ready for jsonrpc.EncodeUpstream (which
	// numbers them 0..len-1, as Merge expects the replies).
	Forward  []int
	Upstream []jsonrpc.Item

	c     *Cache
	items []jsonrpc.Item
	// misses[k] is about Forward[k]: the plan and key of a cacheable call
	// (a miss), so Merge can store the answer without re-running the rules.
	misses []miss
}

type miss struct {
	plan      plan
	key       Key
	cacheable bool
}

// Split looks every item up. Invalid items (Err set) are put in Forward
// like any other uncacheable call; callers normally pass the valid calls
// (jsonrpc.Message.Calls). Notifications are answered from the cache too:
// the caller sends nothing back for them, and the upstream is spared.
func (c *Cache) Split(items []jsonrpc.Item, finalized uint64) *Split {
	s := &Split{c: c, items: items}
	for i := range items {
		it := &items[i]
		p, params, ok := analyze(it)
		if ok && p.admits(finalized) {
			k := makeKey(c.chain, it.Method, &params)
			if res, hit := c.Get(k); hit {
				s.Hits = append(s.Hits, i)
				s.Results = append(s.Results, res)
				continue
			}
			s.misses = append(s.misses, miss{plan: p, key: k, cacheable: true})
		} else {
			s.misses = append(s.misses, miss{})
		}
		s.Forward = append(s.Forward, i)
		s.Upstream = append(s.Upstream, *it)
	}
	return s
}

// Merge takes the replies to Upstream (replies[k] answers Upstream[k], as
// jsonrpc.MatchReplies returns them), stores the storable ones, and returns
// one reply per original item in the original order, cached answers
// included (with the caller's id). A missing reply (len(replies) too short)
// becomes a failed reply with jsonrpc.ErrNoReply, so the result always has
// len(items) entries. finalized is the head now, which may have moved since
// Split.
func (s *Split) Merge(replies []jsonrpc.Reply, finalized uint64) []jsonrpc.Reply {
	out := make([]jsonrpc.Reply, len(s.items))
	for k, i := range s.Hits {
		out[i] = jsonrpc.Reply{Response: jsonrpc.ResultResponse(s.items[i].ID, s.Results[k])}
	}
	for k, i := range s.Forward {
		if k >= len(replies) {
			out[i] = jsonrpc.Reply{
				Response: jsonrpc.ErrorResponse(s.items[i].ID, jsonrpc.InternalError("upstream sent no answer for this call")),
				Err:      jsonrpc.ErrNoReply,
			}
			continue
		}
		r := replies[k]
		if m := &s.misses[k]; m.cacheable && r.Err == nil && !r.Untrusted && m.plan.storable(&r.Response, finalized) {
			s.c.Put(m.key, r.Result)
		}
		out[i] = r
	}
	return out
}

// Cached reports whether position i was answered from the cache (its
// revenue event names upstream "cache").
func (s *Split) Cached(i int) bool {
	_, found := slices.BinarySearch(s.Hits, i) // Hits is ascending
	return found
}
