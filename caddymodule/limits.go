package caddymodule

import (
	"hash/maphash"
	"net/netip"
	"sync"

	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// concurrency caps the requests one caller (IP, IPv6 /64) has in flight on
// this instance. It is in-process on purpose: a Redis counter would cost a
// round trip per request and leak slots whenever an instance dies mid-request.
type concurrency struct {
	max    int
	seed   maphash.Seed
	shards [64]concShard
}

type concShard struct {
	mu sync.Mutex
	n  map[string]int
}

func newConcurrency(max int) *concurrency {
	c := &concurrency{max: max, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].n = map[string]int{}
	}
	return c
}

// acquire takes a slot for ip; ok is false when the caller is at its cap.
// release must be called exactly once when ok.
func (c *concurrency) acquire(ip netip.Addr) (release func(), ok bool) {
	if c == nil || c.max <= 0 {
		return func() {}, true
	}
	key, _ := meter.Subjects(ip)
	s := &c.shards[maphash.String(c.seed, key)%uint64(len(c.shards))]
	s.mu.Lock()
	if s.n[key] >= c.max {
		s.mu.Unlock()
		return nil, false
	}
	s.n[key]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.n[key]--; s.n[key] <= 0 {
			delete(s.n, key)
		}
		s.mu.Unlock()
	}, true
}
