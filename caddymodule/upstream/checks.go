package upstream

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Capacity of the checks. The ladder promises that a share
// of a node's answers (its check rate) is checked against a provider; the
// verifier (caddymodule/verify) does that in the background with bounded
// queues, and a check it cannot take is dropped. A node whose answers
// cannot be checked at its rate must not keep its share on the strength
// of checks that never ran: the verifier books the fate of every sampled
// answer here (NoteCheck), and the node's share is multiplied by a
// capacity factor that follows it.
//
// The factor is a controller, not a ratio: every checkPeriod in which some
// of the node's sampled answers were dropped it is multiplied by the square
// of the share of them that were checked (at most halved per period), and
// every period without a drop (idle ones too) it grows by 0.05, up to 1
// (from the floor back to 1 in 20 s). A plain
// "share × checked fraction" settles where drops go on (the traffic that is
// still too much for the checks); this one settles where the node's
// traffic is what the checks can take, so drops stop and the rate a node
// is checked at is the ladder's. A node with a healthy verifier never
// drops and keeps factor 1.
//
// What a stranger can do: the drops are counted per node and the
// verifier's queue gives every node its own slots and its turn, so a flood
// routed to one node (a caller cannot choose the node, only pay for more
// calls) fills that node's slots and lowers that node's factor, never
// another's. A flood beyond what the gateway can check lowers every busy
// node's factor toward what can be checked and sends the rest to
// providers: the gateway's capacity, paid for call by call, never a node's
// conviction. Checks no provider answered (CheckFailed) are counted and
// shown but do not lower the factor: a provider's outage is not the
// node's, and a caller must not be able to pick calls that cost a node
// its share.
const (
	checkPeriod    = time.Second
	checkWindowLen = 60 // periods the recent figures cover (a minute)
	capacityFloor  = 0.02
	capacityStep   = 0.05 // added per clean period
	capacityMaxCut = 0.5  // the most one period takes away (a factor)
)

// CheckOutcome is what became of one of a node's sampled answers.
type CheckOutcome int

const (
	CheckOffered CheckOutcome = iota // sampled and handed to the verifier's queue
	CheckDone                        // a worker judged it (or found nothing to judge)
	CheckDropped                     // never checked: the node's queue slots were full, or it was evicted
	CheckFailed                      // taken, but no provider answered the check
	// CheckDroppedCap: taken, but the gateway's cap on the checks'
	// provider calls (verify.Config.ProviderQPS) had no room for it. It
	// counts as dropped (the factor falls as for any drop) and also on its
	// own, so the counters say why.
	CheckDroppedCap
)

// CheckView is a node's check accounting on this gateway: totals since it
// joined the pool, the last minute's checked and dropped answers, and the
// capacity factor its share is multiplied by.
type CheckView struct {
	Offered uint64 `json:"offered"`
	Checked uint64 `json:"checked"`
	Dropped uint64 `json:"dropped"`
	// DroppedCap is the part of Dropped that the gateway's cap on the
	// checks' provider calls turned away (the rest found the node's queue
	// slots full).
	DroppedCap uint64 `json:"dropped_cap"`
	Failed     uint64 `json:"failed"`
	// RecentChecked and RecentDropped cover the last minute; Coverage is
	// RecentChecked / (RecentChecked + RecentDropped), 1 without either.
	RecentChecked  uint64  `json:"recent_checked"`
	RecentDropped  uint64  `json:"recent_dropped"`
	Coverage       float64 `json:"coverage"`
	CapacityFactor float64 `json:"capacity_factor"`
}

// checkBook is one node's check accounting (on its member).
type checkBook struct {
	offered, checked, dropped, failed atomic.Uint64
	droppedCap                        atomic.Uint64
	factor                            atomic.Uint64 // math.Float64bits; read lock-free by selection

	mu     sync.Mutex
	period int64 // the current period's number (unix time / checkPeriod)
	cur    [2]uint64
	ring   [checkWindowLen][2]uint64 // closed periods: checked, dropped; index period % len
	ringAt [checkWindowLen]int64     // which period each slot holds
}

func (b *checkBook) init() { b.factor.Store(math.Float64bits(1)) }

// capacity is the factor the node's share is multiplied by.
func (b *checkBook) capacity() float64 {
	f := math.Float64frombits(b.factor.Load())
	if f == 0 {
		return 1 // a book never initialised (a provider): no factor
	}
	return f
}

// roll closes the periods before now's and moves the factor; b.mu held.
func (b *checkBook) roll(now time.Time) {
	p := now.UnixNano() / int64(checkPeriod)
	if b.period == 0 {
		b.period = p
		return
	}
	if p <= b.period {
		return
	}
	c, d := b.cur[0], b.cur[1]
	slot := b.period % checkWindowLen
	b.ring[slot], b.ringAt[slot] = b.cur, b.period
	b.cur = [2]uint64{}
	f := b.capacity()
	if d > 0 {
		r := float64(c) / float64(c+d)
		f *= max(capacityMaxCut, r*r)
	} else {
		f += capacityStep
	}
	// The periods after it, up to now's, saw nothing: clean.
	f += capacityStep * float64(min(p-b.period-1, int64(1/capacityStep)+1))
	b.factor.Store(math.Float64bits(min(1, max(capacityFloor, f))))
	b.period = p
}

func (b *checkBook) note(o CheckOutcome, now time.Time) {
	switch o {
	case CheckOffered:
		b.offered.Add(1)
		return
	case CheckFailed:
		b.failed.Add(1)
		return
	case CheckDone:
		b.checked.Add(1)
	case CheckDropped:
		b.dropped.Add(1)
	case CheckDroppedCap:
		b.dropped.Add(1)
		b.droppedCap.Add(1)
	}
	b.mu.Lock()
	b.roll(now)
	if o == CheckDone {
		b.cur[0]++
	} else {
		b.cur[1]++
	}
	b.mu.Unlock()
}

func (b *checkBook) view(now time.Time) CheckView {
	b.mu.Lock()
	b.roll(now)
	v := CheckView{RecentChecked: b.cur[0], RecentDropped: b.cur[1]}
	p := now.UnixNano() / int64(checkPeriod)
	for i := range b.ring {
		if b.ringAt[i] > p-checkWindowLen {
			v.RecentChecked += b.ring[i][0]
			v.RecentDropped += b.ring[i][1]
		}
	}
	b.mu.Unlock()
	v.Offered, v.Checked, v.Dropped, v.Failed = b.offered.Load(), b.checked.Load(), b.dropped.Load(), b.failed.Load()
	v.DroppedCap = b.droppedCap.Load()
	v.Coverage = 1
	if n := v.RecentChecked + v.RecentDropped; n > 0 {
		v.Coverage = float64(v.RecentChecked) / float64(n)
	}
	v.CapacityFactor = b.capacity()
	return v
}

// NoteCheck books what became of one of the named node's sampled answers
// (the verifier calls it; unknown names and providers are ignored).
func (p *Pool) NoteCheck(name string, o CheckOutcome) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return
	}
	m.checks.note(o, time.Now())
}

// Checks is the named node's check accounting (ok false for providers and
// unknown names).
func (p *Pool) Checks(name string) (CheckView, bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return CheckView{}, false
	}
	return m.checks.view(time.Now()), true
}

// refreshChecks moves every node's capacity factor on (clean periods
// raise it even when the node is given no traffic to book).
func (p *Pool) refreshChecks(now time.Time) {
	for _, m := range p.list() {
		if m.up.Kind == KindNode {
			m.checks.mu.Lock()
			m.checks.roll(now)
			m.checks.mu.Unlock()
		}
	}
}
