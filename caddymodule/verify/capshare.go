package verify

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The cap on the checks' provider calls (Config.ProviderQPS) is one
// bucket for the whole gateway, but it must not be one pot that the
// busiest node empties: a caller flooding one node's calls (or one chain,
// whose nodes the flood cannot even reach) would otherwise get every other
// node's checks dropped at the same rate — their lies checked at r·(1−d)
// with d near 1, and their traffic cut for drops they did not cause.
//
// So every node checked lately is owed an equal share of the cap (max-min
// fair): a check within its node's share always goes on, and takes its
// token from the gateway's bucket even into debt; a check beyond it goes
// on only while the gateway's bucket has a token left over. The debt is
// paid back by the nodes over their share (their checks are dropped until
// the bucket refills), so the provider still sees about the cap: the
// shares sum to it, and the bucket's burst is exceeded at most by the sum
// of the shares' bursts (the gateway's burst). A node that floods is
// dropped and loses traffic; the others keep their checks and their share.
const capShareWindow = 10 * time.Second // a node that had no check for this long no longer counts

type capShares struct {
	total     *rate.Limiter
	qps       float64
	burst     int
	mu        sync.Mutex
	nodes     map[string]*capShare
	n         int // nodes counted at the last recount
	recountAt time.Time
}

type capShare struct {
	lim  *rate.Limiter
	last time.Time
}

func newCapShares(qps float64, burst int) *capShares {
	return &capShares{total: rate.NewLimiter(rate.Limit(qps), burst), qps: qps, burst: burst, nodes: map[string]*capShare{}}
}

// allow reports whether a check of node (a queue key: chain and node) may
// call a provider now.
func (c *capShares) allow(node string, now time.Time) bool {
	c.mu.Lock()
	s := c.nodes[node]
	if s == nil {
		s = &capShare{}
		c.nodes[node] = s
		c.recountAt = time.Time{} // a newcomer: every share shrinks now
	}
	s.last = now
	if now.Sub(c.recountAt) >= time.Second {
		c.recount(now)
	}
	mine := s.lim.AllowN(now, 1)
	c.mu.Unlock()
	if mine {
		c.total.ReserveN(now, 1) // its token, taken from the others' leftover even into debt
		return true
	}
	return c.total.AllowN(now, 1)
}

// recount drops the nodes not checked lately and sets every share to the
// cap over the nodes left; c.mu held.
func (c *capShares) recount(now time.Time) {
	for k, s := range c.nodes {
		if now.Sub(s.last) > capShareWindow {
			delete(c.nodes, k)
		}
	}
	n := len(c.nodes)
	c.recountAt = now
	per, burst := rate.Limit(c.qps/float64(n)), max(1, c.burst/n)
	for _, s := range c.nodes {
		if s.lim == nil {
			s.lim = rate.NewLimiter(per, burst)
		} else if n != c.n {
			s.lim.SetLimitAt(now, per)
			s.lim.SetBurstAt(now, burst)
		}
	}
	c.n = n
}
