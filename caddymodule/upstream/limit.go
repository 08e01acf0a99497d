package upstream

import (
	"context"
	"sync"
	"time"
)

// A rate limit an upstream states in a reply's error code (429, -32005) is
// a claim, not a fact: -32005 is also "query too large" at some providers,
// which is the caller's answer to a call the caller chose, and an item of a
// caller's batch is the caller's to shape. So the claim is believed only when
// the gateway's own call — a plain eth_blockNumber no caller writes — is
// limited too (HTTP 429, or a 429/-32005 error code). Then the upstream is
// backed off and the call is the platform's to serve elsewhere or refund;
// otherwise the answer is the caller's, served and billed.
//
// One check runs per upstream at a time and its verdict is kept for
// limitCheckFresh, so claims a caller provokes at will cost each upstream at
// most one extra call per limitCheckFresh, whatever the traffic.

// limitCheckFresh is how long a check's verdict answers later claims.
const limitCheckFresh = time.Second

// limitCheckBody is the gateway's own call.
var limitCheckBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)

// limitCheck is an upstream's latest rate-limit check.
type limitCheck struct {
	mu         sync.Mutex
	at         time.Time     // when the latest check ended
	limited    bool          // its verdict
	retryAfter time.Duration // the back-off it asked for
	running    chan struct{} // closed when the check in flight ends; nil if none
	checks     int64         // checks run (tests: the cost of claims is bounded)
}

// confirmLimited checks whether m really limits the gateway, with its own
// call (at most one in flight per upstream; a verdict younger than
// limitCheckFresh is reused). A confirmed limit backs m off at once.
func (p *Pool) confirmLimited(ctx context.Context, m *member, timeout time.Duration) (bool, time.Duration) {
	lc := &m.limitCheck
	for {
		lc.mu.Lock()
		if !lc.at.IsZero() && time.Since(lc.at) < limitCheckFresh {
			limited, ra := lc.limited, lc.retryAfter
			lc.mu.Unlock()
			return limited, ra
		}
		if wait := lc.running; wait != nil {
			lc.mu.Unlock()
			select {
			case <-wait:
				continue // its verdict is fresh now
			case <-ctx.Done():
				return false, 0 // the caller is gone; nothing is billed either way
			}
		}
		done := make(chan struct{})
		lc.running = done
		lc.checks++
		lc.mu.Unlock()

		// Detached from the caller: others wait for this verdict.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(timeout, p.cfg.ProbeTimeout))
		x := m.post(cctx, limitCheckBody, probeMaxBytes)
		r, items, _ := p.probeExchange(cctx, m, x)
		cancel()
		limited, ra := r.limited, r.retryAfter
		for _, it := range items {
			if it.Error != nil && (it.Error.Code == -32005 || it.Error.Code == 429) {
				limited, ra = true, p.cfg.RateLimitBackoff
			}
		}
		if limited {
			m.backOff(ra, time.Now())
		}
		lc.mu.Lock()
		lc.at, lc.limited, lc.retryAfter, lc.running = time.Now(), limited, ra, nil
		lc.mu.Unlock()
		close(done)
		return limited, ra
	}
}

// Classify is the pool's verdict on one error object (its classifier): for
// judging the items of a batch one by one.
func (p *Pool) Classify(e RPCError) Verdict { return p.cfg.Classifier(e) }

// ConfirmLimited reports whether the upstream named name really limits the
// gateway (confirmLimited): an item of a batch it served claimed a limit.
// A confirmed limit backs it off and shows in its statistics; an
// unconfirmed claim changes nothing.
func (p *Pool) ConfirmLimited(ctx context.Context, name string) bool {
	m := p.member(name)
	if m == nil {
		return false
	}
	limited, _ := p.confirmLimited(ctx, m, p.cfg.AttemptTimeout)
	if limited {
		m.stats.rateLimited("rate limit claimed in a reply, confirmed by the gateway's own call", time.Now())
	}
	return limited
}
