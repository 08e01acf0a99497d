package core

import (
	"hash/maphash"
	"net/netip"
	"sync"

	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Concurrency caps the requests one caller (IP, IPv6 /64) has in flight on
// this instance. It is in-process on purpose: a Redis counter would cost a
// round trip per request and leak slots whenever an instance dies mid-request.
type Concurrency struct {
	max    int
	seed   maphash.Seed
	shards [64]concShard
}

type concShard struct {
	mu sync.Mutex
	n  map[string]int
}

// NewConcurrency caps each caller at max requests in flight (0: no cap).
func NewConcurrency(max int) *Concurrency {
	c := &Concurrency{max: max, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].n = map[string]int{}
	}
	return c
}

// Acquire takes a slot for ip; ok is false when the caller is at its cap.
// release must be called exactly once when ok.
func (c *Concurrency) Acquire(ip netip.Addr) (release func(), ok bool) {
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
