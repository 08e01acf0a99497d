package meter

import (
	"sync"
	"sync/atomic"
	"time"
)

// ledgerState is what a Retention knows of the ledger besides the facts it
// keeps: per shard, the highest state count (balances.Layout.Seq) that
// settlementd acknowledged as stored in PostgreSQL (the floor every
// metering script is sent, seqLua), and the requests whose metering reply
// was lost and which the gateway may still void (their debit must stay in
// the stream until then: balances.Layout.Keep).
type ledgerState struct {
	floors []atomic.Int64
	mu     sync.Mutex
	holds  map[holdKey]voidHold
}

// holdKey is a request id on a shard (a request's runs may be on two).
type holdKey struct {
	id    string
	shard int
}

// voidHold is a request that may still be voided: the stream from ms on,
// on shard, until expires.
type voidHold struct {
	shard   int
	ms      int64
	expires time.Time
}

// voidHoldTTL is how long a hold lasts when nobody releases it: the
// gateway's void retries for 10 minutes (payment.voidPatience).
const voidHoldTTL = 11 * time.Minute

// keepMargin is how far below the oldest fact kept the stream is kept: the
// facts of one shard are in booking order up to the requests in flight
// together, whose entry times differ by a metering timeout at most.
const keepMargin = 5 * time.Second

// Floor is the ledger floor of shard: the state count settlementd has
// acknowledged as stored in PostgreSQL (0: none known). A nil Retention has
// none.
func (r *Retention) Floor(shard int) int64 {
	if r == nil || shard < 0 || shard >= len(r.ledger.floors) {
		return 0
	}
	return r.ledger.floors[shard].Load()
}

// RaiseFloor raises shard's floor to v (never lowers it: an older
// acknowledgement, or one read from a Redis restored from the past, is
// below what was already seen).
func (r *Retention) RaiseFloor(shard int, v int64) {
	if r == nil || shard < 0 || shard >= len(r.ledger.floors) {
		return
	}
	f := &r.ledger.floors[shard]
	for {
		old := f.Load()
		if v <= old || f.CompareAndSwap(old, v) {
			return
		}
	}
}

// holdVoid keeps the stream of shard from ms on for request id, whose
// metering reply was lost, until releaseVoid or voidHoldTTL.
func (r *Retention) holdVoid(shard int, id string, ms int64) {
	if r == nil || id == "" {
		return
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	if r.ledger.holds == nil {
		r.ledger.holds = map[holdKey]voidHold{}
	}
	k := holdKey{id, shard}
	if h, ok := r.ledger.holds[k]; ok && h.ms <= ms {
		return
	}
	r.ledger.holds[k] = voidHold{shard: shard, ms: ms, expires: time.UnixMilli(ms).Add(voidBefore + voidHoldTTL)}
}

// releaseVoid lets go of request id's hold: its void is settled.
func (r *Retention) releaseVoid(id string) {
	if r == nil {
		return
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	for k := range r.ledger.holds {
		if k.id == id {
			delete(r.ledger.holds, k)
		}
	}
}

// KeepFrom is the oldest stream entry time (unix ms) of shard this gateway
// may still look up: its oldest money fact kept for replay (less
// keepMargin), the oldest request it may still void, and now less
// keepMargin when it holds neither.
func (r *Retention) KeepFrom(shard int, now time.Time) int64 {
	keep := now.Add(-keepMargin).UnixMilli()
	if r == nil {
		return keep
	}
	if shard >= 0 && shard < len(r.shards) {
		ring := r.shards[shard]
		ring.mu.Lock()
		if ring.n > 0 {
			keep = min(keep, ring.buf[ring.head].ms-keepMargin.Milliseconds())
		}
		ring.mu.Unlock()
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	for k, h := range r.ledger.holds {
		if now.After(h.expires) {
			delete(r.ledger.holds, k)
			continue
		}
		if h.shard == shard {
			keep = min(keep, h.ms)
		}
	}
	return keep
}

// olderThanLedger reports a shard whose Redis a script found older than the
// ledger (seqLua's reply 2).
func (m *Meter) olderThanLedger(shard int) {
	if m.cfg.OnOlderThanLedger != nil {
		m.cfg.OnOlderThanLedger(shard)
	}
}
