package meter

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Retention keeps every money fact this gateway booked — a paid call's
// Debit (credits or an x402 bundle), a Refund of one, the revenue entries
// its event writer wrote — until settlementd's
// acknowledgement (balances.Layout.Ingested) shows it stored in PostgreSQL,
// so that a Redis that lost it (restarted empty, flushed, a replica
// promoted without the last writes) gets it again (Replayer). The metering
// scripts append the facts to the stream themselves, atomically with the
// balance change, and return the entry's id; the gateway keeps the payload
// it sent the script and that id. Nothing here is on a Redis round trip.
//
// Bounded: past MaxFacts facts or MaxBytes bytes (payloads plus a fixed
// overhead per fact) the oldest fact is let go and counted (Dropped): the
// gateway serves on with the guarantee it had without a retention (a fact
// is then lost only if Redis loses it before settlementd ingests it too).
// docs/decisions.md, "A Redis that loses its data loses no paid call",
// has the figures.
type Retention struct {
	maxFacts int
	maxBytes int64
	shards   []*factRing
	facts    atomic.Int64 // kept now, every shard
	bytes    atomic.Int64
	dropped  atomic.Uint64 // let go at the bound, unstored
	kept     atomic.Uint64 // ever kept
	ledger   ledgerState
}

// Default bounds of a Retention: ~750,000 paid calls (75 s at 10,000 paid
// calls/s, an ingest outage of that long) in 256 MiB.
const (
	DefaultRetainFacts = 1 << 20
	DefaultRetainBytes = 256 << 20
)

// factOverhead is what a fact costs beyond its strings: the fact struct in
// its ring slot and the strings' headers (measured by BenchmarkRetention).
const factOverhead = 96

// keepEntry keeps a revenue entry the event writer wrote (xid its id): a
// revenue event, or a pack of them. Other entries the writer may carry are
// not money facts.
func (r *Retention) keepEntry(q queued, xid string) {
	if r == nil || len(q.vals) < 6 || q.vals[1] != events.TypeRevenue {
		return
	}
	f := fact{xid: xid, typ: events.TypeRevenue}
	for i := 0; i+1 < len(q.vals); i += 2 {
		switch q.vals[i] {
		case "d":
			f.data, _ = q.vals[i+1].(string)
		case "n":
			f.count, _ = q.vals[i+1].(string)
		}
	}
	r.keep(q.shard, f)
}

// fact kinds: what replaying the fact onto a Redis that lost it changes
// besides appending it (Replayer, replayScript).
const (
	factCreditsDebit  uint8 = iota + 1 // bal −n, spent +n of account payer
	factBundleDebit                    // calls −n, used +n of wallet payer's bundle
	factCreditsRefund                  // bal +n, spent −n
	factBundleRefund                   // calls +n, used −n
	factChannelState                   // the channel hash becomes the state, unless it holds a newer one (seq)
)

// fact is one money fact as the gateway booked it. data is the payload the
// gateway encoded (sub, when set, replaces the first ph in it: the account
// id the script filled in), so keeping a fact costs no copy of it.
type fact struct {
	xid   string // the stream entry's id on the Redis it was booked on
	ms    int64  // the id's millisecond part
	data  string
	ph    string
	sub   string
	typ   string // event type
	payer string // account id (credits) or wallet (bundle)
	n     int64  // units (credits) or calls (bundle)
	kind  uint8  // 0: no balance change (a revenue entry)
	count string // a revenue pack's event count (its n field; "" one event)
}

// payload is the entry's d field as the script wrote it.
func (f *fact) payload() string {
	if f.sub == "" || f.ph == "" {
		return f.data
	}
	return strings.Replace(f.data, f.ph, f.sub, 1)
}

func (f *fact) size() int64 {
	return int64(factOverhead + len(f.xid) + len(f.data) + len(f.sub) + len(f.payer))
}

// factRing is one shard's facts in booking order: a deque addressed by a
// sequence number, so a replay can write new ids back to the facts it read
// while new facts arrive.
type factRing struct {
	mu    sync.Mutex
	buf   []fact
	head  int    // index of the oldest fact in buf
	n     int    // facts held
	first uint64 // sequence number of the oldest fact
}

// NewRetention returns a retention for shards shards, bounded by maxFacts
// and maxBytes (0: the defaults).
func NewRetention(shards, maxFacts int, maxBytes int64) *Retention {
	if shards < 1 {
		shards = 1
	}
	if maxFacts <= 0 {
		maxFacts = DefaultRetainFacts
	}
	if maxBytes <= 0 {
		maxBytes = DefaultRetainBytes
	}
	r := &Retention{maxFacts: maxFacts, maxBytes: maxBytes, shards: make([]*factRing, shards)}
	r.ledger.floors = make([]atomic.Int64, shards)
	for i := range r.shards {
		r.shards[i] = &factRing{}
	}
	return r
}

// RetentionStats is what a Retention holds and has done.
type RetentionStats struct {
	Facts   int64  // kept now
	Bytes   int64  // their accounted size
	Kept    uint64 // ever kept
	Dropped uint64 // let go at the bound before settlementd acknowledged them
}

// Stats reads the counters.
func (r *Retention) Stats() RetentionStats {
	return RetentionStats{Facts: r.facts.Load(), Bytes: r.bytes.Load(), Kept: r.kept.Load(), Dropped: r.dropped.Load()}
}

// keep adds a fact booked on shard (its stream entry xid).
func (r *Retention) keep(shard int, f fact) {
	if r == nil || f.xid == "" || shard < 0 || shard >= len(r.shards) {
		return
	}
	f.ms = idMillis(f.xid)
	size := f.size()
	ring := r.shards[shard]
	ring.mu.Lock()
	ring.push(f)
	ring.mu.Unlock()
	r.kept.Add(1)
	facts, bytes := r.facts.Add(1), r.bytes.Add(size)
	for facts > int64(r.maxFacts) || bytes > r.maxBytes {
		// The bound: the oldest fact of the fullest ring goes. Rare, so
		// finding it may cost a scan of the shards.
		if !r.dropOldest() {
			break
		}
		r.dropped.Add(1)
		facts, bytes = r.facts.Load(), r.bytes.Load()
	}
}

// dropOldest lets go of the oldest fact of the largest ring.
func (r *Retention) dropOldest() bool {
	var big *factRing
	most := 0
	for _, ring := range r.shards {
		ring.mu.Lock()
		if ring.n > most {
			big, most = ring, ring.n
		}
		ring.mu.Unlock()
	}
	if big == nil {
		return false
	}
	big.mu.Lock()
	defer big.mu.Unlock()
	if big.n == 0 {
		return false
	}
	r.release(big.pop())
	return true
}

func (r *Retention) release(f fact) {
	r.facts.Add(-1)
	r.bytes.Add(-f.size())
}

// acknowledge lets go of shard's facts whose entries are below lowMs: the
// consumer group has stored them. Facts are in booking order, which on one
// Redis is the stream's order up to the few requests in flight together; a
// fact just above lowMs ahead of one below holds that one until the next
// acknowledgement.
func (r *Retention) acknowledge(shard int, lowMs int64) (released int) {
	ring := r.shards[shard]
	ring.mu.Lock()
	defer ring.mu.Unlock()
	for ring.n > 0 && ring.buf[ring.head].ms < lowMs {
		r.release(ring.pop())
		released++
	}
	return released
}

// Facts reports how many facts shard holds.
func (r *Retention) Facts(shard int) int {
	ring := r.shards[shard]
	ring.mu.Lock()
	defer ring.mu.Unlock()
	return ring.n
}

// read copies up to max facts of shard from sequence number from on (or
// the oldest, if from is older), with the sequence number of the first.
func (r *Retention) read(shard int, from uint64, max int) ([]fact, uint64) {
	ring := r.shards[shard]
	ring.mu.Lock()
	defer ring.mu.Unlock()
	from = maxU64(from, ring.first)
	var out []fact
	for s := from; s < ring.first+uint64(ring.n) && len(out) < max; s++ {
		out = append(out, ring.buf[(ring.head+int(s-ring.first))%len(ring.buf)])
	}
	return out, from
}

// rebook records that the fact with sequence number seq now has the stream
// entry xid (a replay appended it again); a fact let go meanwhile is left.
func (r *Retention) rebook(shard int, seq uint64, xid string) {
	ring := r.shards[shard]
	ring.mu.Lock()
	defer ring.mu.Unlock()
	if seq < ring.first || seq >= ring.first+uint64(ring.n) {
		return
	}
	f := &ring.buf[(ring.head+int(seq-ring.first))%len(ring.buf)]
	r.bytes.Add(int64(len(xid) - len(f.xid)))
	f.xid, f.ms = xid, idMillis(xid)
}

func (q *factRing) push(f fact) {
	if q.n == len(q.buf) {
		// Grow by doubling: amortised, and the ring keeps its memory
		// afterwards (no allocation per fact in a steady state).
		nb := make([]fact, max(64, 2*len(q.buf)))
		for i := range q.n {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = f
	q.n++
}

func (q *factRing) pop() fact {
	f := q.buf[q.head]
	q.buf[q.head] = fact{} // let the strings go
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.first++
	return f
}

// idMillis is the millisecond part of a stream id ("1700000000000-3").
func idMillis(id string) int64 {
	ms, _, _ := strings.Cut(id, "-")
	v, _ := strconv.ParseInt(ms, 10, 64)
	return v
}

func maxU64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// SetRetention makes m keep the money facts it books in r (nil: none).
// It is set once, before m meters its first request.
func (m *Meter) SetRetention(r *Retention) { m.cfg.Retain = r }

// keepDecision keeps the Debit of a paid decision booked by meterScript
// (run r): the payload the gateway encoded, with the account or wallet the
// script filled in, and the entry id the script returned last.
func (m *Meter) keepDecision(d *Decision, r *run) {
	if m.cfg.Retain == nil || r.script != meterScript || len(r.res) == 0 {
		return
	}
	xid, _ := r.res[len(r.res)-1].(string)
	switch d.Outcome {
	case Paid:
		data, _ := r.args[argPaid].(string)
		m.cfg.Retain.keep(d.shard, fact{xid: xid, data: data, ph: placeholder, sub: d.Account, typ: events.TypeDebit,
			kind: factCreditsDebit, payer: d.Account, n: int64(d.amount)})
	case Bundle:
		data, _ := r.args[argBundle].(string)
		m.cfg.Retain.keep(d.shard, fact{xid: xid, data: data, ph: walletPlaceholder, sub: d.Wallet, typ: events.TypeDebit,
			kind: factBundleDebit, payer: d.Wallet, n: int64(d.calls)})
	}
}

// The positions of the credits and the bundle debit payloads in
// meterScript's arguments (ARGV 16 and 20; meterRun).
const argPaid, argBundle = 15, 19

// keepRefund keeps a Refund booked by refundScript (xid its entry, "" or
// 0 when the request had been refunded before).
func (m *Meter) keepRefund(shard int, xid any, data string, kind uint8, payer string, n int64) {
	id, _ := xid.(string)
	m.cfg.Retain.keep(shard, fact{xid: id, data: data, typ: events.TypeRefund, kind: kind, payer: payer, n: n})
}
