package meter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sharded decisions (balances/shard.go has the layout). A request's payer
// (its API key's account, a wallet, a channel) and its address (free tier,
// request rate) may be on different shards, that is on different Redis
// Cluster masters, and a script runs on one shard only. So:
//
//   - An anonymous call runs meterScript on the address's shard (mode all),
//     one script, atomic as before.
//   - A keyed call whose key and address share a shard (always, with one
//     shard) runs the whole decision there (mode all).
//   - Otherwise the key's shard runs the payer's part (mode payer). When this
//     gateway has seen the key's account short of funds (keyHint.free), the
//     address's part (mode ip: the free tier, booked under its own request
//     id) is sent in the same round trip, to the other master in parallel.
//     The two outcomes combine so the batch is decided once for its payer:
//     the payer paid ⇒ the free draw is refunded (refundScript, as a failed
//     call's is, with its own Refund event) and the request is Paid; the
//     payer could not pay ⇒ the free tier's answer stands; a key refused
//     (unknown, revoked, rate-limited, recovering) ⇒ the free draw is
//     refunded and the refusal stands. The address's refusal never undoes a
//     payment. Without the hint, a key found short of funds costs a second
//     round trip to the address's shard, once, until its account pays again.
//   - A bad key (unknown or revoked) is charged to the address's rate on the
//     address's shard after the key's shard answered: a second round trip,
//     on a refused request only (like a refund).
//   - A key migrated from an unsharded layout whose lookup points to another
//     shard (balances.KeyPointer) is asked there; the gateway remembers the
//     shard, so that costs a second round trip once per key and process.
//
// SIWX and batch-settlement calls draw on the wallet's or the channel's
// shard and check the address's rate (gateScript) on its shard in the same
// round trip: a draw the payer's shard booked is served even when the
// address's rate is exhausted (it is paid, as a key's paid call ignores the
// address's rate); a refused draw from a limited address answers 429.

// run is one script call of a round trip.
type run struct {
	script *redis.Script
	keys   []string
	args   []any
	// wait: the script may book money; with Config.ReplicaWait it is
	// followed by WAIT 1 on the same connection (failover.go).
	wait bool
	// shard+1 of a script that checks the ledger floor (seqLua; 0: none),
	// and id, ms: the request and its time, held for a void when the
	// reply is lost (ledger.go).
	seqShard int
	id       string
	ms       int64
	cmd      *redis.Cmd
	res      []any
	code     int64
	err      error
}

// exec sends runs (nil ones skipped) in one round trip: one script alone
// with EVALSHA (EVAL on NOSCRIPT); several, on an auto-pipelined client,
// each into its own master's next batch, concurrently, otherwise in one
// pipeline, which a ClusterClient splits by master and sends to them in
// parallel. A script a master does not know yet (NOSCRIPT) is sent again
// with EVAL: that only happens the first time after a master (re)starts.
// With ReplicaWait, a run that may book money goes in its own pipeline to
// its master, followed by WAIT, concurrently with the others (failover.go).
func (m *Meter) exec(ctx context.Context, runs ...*run) {
	var live, plain []*run
	var wg sync.WaitGroup
	for _, r := range runs {
		if r == nil {
			continue
		}
		live = append(live, r)
		if r.wait && m.cfg.ReplicaWait > 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.execWait(ctx, r)
			}()
		} else {
			plain = append(plain, r)
		}
	}
	switch _, batched := m.rdb.(autoPipelined); {
	case len(plain) == 0:
	case len(plain) == 1 || batched:
		// Several runs on an auto-pipelined client each join their
		// master's next batch, sent at once: still one round trip, shared
		// with other requests' calls.
		for _, r := range plain[1:] {
			wg.Go(func() { r.cmd = r.script.Run(ctx, m.rdb, r.keys, r.args...) })
		}
		r := plain[0]
		r.cmd = r.script.Run(ctx, m.rdb, r.keys, r.args...)
	default:
		_, _ = m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, r := range plain {
				r.cmd = r.script.EvalSha(ctx, p, r.keys, r.args...)
			}
			return nil
		})
		for _, r := range plain {
			if err := r.cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
				r.cmd = r.script.Run(ctx, m.rdb, r.keys, r.args...)
			}
		}
	}
	wg.Wait()
	for _, r := range live {
		r.res, r.err = r.cmd.Slice()
		if r.err != nil {
			// Wrapped: MaybeBooked tells a dial failure from a lost reply.
			r.err = fmt.Errorf("%w: %w", ErrUnavailable, r.err)
			if r.seqShard > 0 && MaybeBooked(r.err) {
				m.cfg.Retain.holdVoid(r.seqShard-1, r.id, r.ms-voidBefore.Milliseconds())
			}
			continue
		}
		if len(r.res) == 0 {
			r.err = fmt.Errorf("%w: empty script reply", ErrUnavailable)
			continue
		}
		r.code, _ = r.res[0].(int64)
		if r.code == 8 && r.seqShard > 0 && len(r.res) > 1 && toInt(r.res[1]) == 2 {
			m.olderThanLedger(r.seqShard - 1)
		}
	}
}

// keyHint is what this gateway learned of a key: the shard its account is
// on (a migrated key's pointer), and whether its account was last found
// short of funds (free: the next call sends the free tier's script along).
type keyHint struct {
	home int // -1: the key's own shard
	id   string
	free bool
}

// hintCap bounds the hints kept; past it they are forgotten at once (a
// forgotten hint costs one extra round trip for that key, nothing else).
const hintCap = 1 << 17

type hints struct {
	m sync.Map // key hash → keyHint
	n atomic.Int64
}

func (h *hints) get(hash string) (keyHint, bool) {
	v, ok := h.m.Load(hash)
	if !ok {
		return keyHint{home: -1}, false
	}
	return v.(keyHint), true
}

func (h *hints) set(hash string, k keyHint) {
	if _, loaded := h.m.Swap(hash, k); !loaded && h.n.Add(1) > hintCap {
		h.m.Clear()
		h.n.Store(0)
	}
}

// payerShard is the shard to ask about a key.
func (m *Meter) payerShard(hash string) int {
	if k, ok := m.hints.get(hash); ok && k.home >= 0 {
		return k.home
	}
	return m.layout.ShardOfKey(hash)
}

// encodeFunc encodes a scriptCall's debit payloads under request id: the
// free payload's account is freeAccount (placeholder: the script fills it
// in; "": anonymous; "-": no free payload is needed).
type encodeFunc func(c *scriptCall, id, freeAccount string) error

// decodeFunc turns a reply of code 1, 2, 3 or 6 into the decision.
type decodeFunc func(d *Decision, res []any, code int64) error

// authorize runs the metering decision of a request on the shards its key
// and address are on (see the top of this file) and decodes it.
func (m *Meter) authorize(ctx context.Context, d *Decision, c scriptCall, enc encodeFunc, decode decodeFunc) (Decision, error) {
	if c.keyHash == "" {
		if err := enc(&c, d.ID, ""); err != nil {
			return *d, err
		}
		d.shard = d.ipShard
		r := m.meterRun(d, &c, d.ipShard, modeAll, true)
		m.exec(ctx, r)
		return m.decide(d, r, decode)
	}
	for hop := 0; ; hop++ {
		ps := m.payerShard(c.keyHash)
		if ps == d.ipShard {
			if err := enc(&c, d.ID, placeholder); err != nil {
				return *d, err
			}
			d.shard = ps
			r := m.meterRun(d, &c, ps, modeAll, true)
			m.exec(ctx, r)
			if r.err == nil && r.code == 10 && hop == 0 {
				m.hints.set(c.keyHash, keyHint{home: int(toInt(r.res[1]))})
				continue
			}
			return m.decide(d, r, decode)
		}
		again, err := m.authorizeSplit(ctx, d, c, ps, enc, decode)
		if again && hop == 0 {
			continue
		}
		if again {
			return *d, fmt.Errorf("%w: key lookup points from shard to shard", ErrUnavailable)
		}
		return *d, err
	}
}

// authorizeSplit decides a keyed request whose key is on shard ps and whose
// address is on another. again is true when the key's lookup pointed to
// another shard (now remembered): the caller asks again.
func (m *Meter) authorizeSplit(ctx context.Context, d *Decision, c scriptCall, ps int, enc encodeFunc, decode decodeFunc) (again bool, err error) {
	hint, _ := m.hints.get(c.keyHash)
	noFree := c.freeDaily == 0 && c.freeSubnet == 0
	payerID := d.ID
	var ipRun *run
	if hint.free && hint.id != "" && !noFree {
		// Expected: the account cannot pay and the free tier serves. The
		// free draw gets the decision's id; the payer's, were it to pay
		// after all (a deposit landed), a fresh one.
		payerID = NewRequestID()
		cf := c
		if err := enc(&cf, d.ID, hint.id); err != nil {
			return false, err
		}
		ipRun = m.meterRun(d, &cf, d.ipShard, modeIP, false)
	}
	cp := c
	if err := enc(&cp, payerID, "-"); err != nil {
		return false, err
	}
	pr := m.meterRun(d, &cp, ps, modePayer, false)
	m.exec(ctx, pr, ipRun)
	freeDrawn := ipRun != nil && ipRun.err == nil && ipRun.code == 2
	undoFree := func() {
		if freeDrawn {
			m.undoFreeDraw(ctx, d, hint.id, ipRun.res)
		}
	}
	if pr.err != nil {
		undoFree()
		// Whatever the payer's script may have booked is under its id and
		// on its shard (VoidIfBooked looks there).
		d.ID, d.shard = payerID, ps
		return false, pr.err
	}
	switch pr.code {
	case 10:
		undoFree()
		m.hints.set(c.keyHash, keyHint{home: int(toInt(pr.res[1]))})
		return true, nil
	case 9: // no funds: the free tier decides
		id, _ := pr.res[1].(string)
		d.Account = id
		if noFree {
			_, err := m.decide(d, &run{res: []any{int64(3), int64(1), id}, code: 3}, decode)
			return false, err
		}
		m.hints.set(c.keyHash, keyHint{home: hint.home, id: id, free: true})
		if ipRun == nil || hint.id != id {
			undoFree()
			cf := c
			if err := enc(&cf, d.ID, id); err != nil {
				return false, err
			}
			ipRun = m.meterRun(d, &cf, d.ipShard, modeIP, false)
			m.exec(ctx, ipRun)
		}
		d.shard = d.ipShard
		_, err := m.decide(d, ipRun, decode)
		if err != nil || d.Outcome != Free {
			// The payer's script counted the call in the key's day; it
			// was not served (a refused request's second round trip).
			day := m.layout.Shard(ps).AccountPrefix() + id + "}:day:" + d.date
			_ = m.cmd.DecrBy(ctx, day, int64(c.calls)).Err()
		}
		return false, err
	case 5, 8:
		undoFree()
		// A bad key is charged to the address's rate (guessing keys is
		// throttled like anonymous traffic): a second round trip, on a
		// refused request only.
		r := m.gateRun(d.ipShard, d.ipKey, c.ms)
		m.exec(ctx, r)
		if r.err == nil && r.code == 4 {
			d.Outcome, d.RetryAfter = RateLimited, time.Duration(toInt(r.res[1]))*time.Millisecond
			return false, nil
		}
	default:
		undoFree()
		if pr.code == 1 || pr.code == 6 {
			if hint.free || hint.id != "" {
				m.hints.set(c.keyHash, keyHint{home: hint.home})
			}
			d.ID = payerID
		}
	}
	d.shard = ps
	_, err = m.decide(d, pr, decode)
	return false, err
}

// decide turns a finished run into the decision: the outcomes every mode
// shares here, the rest by decode.
func (m *Meter) decide(d *Decision, r *run, decode decodeFunc) (Decision, error) {
	if r.err != nil {
		return *d, r.err
	}
	res := r.res
	switch r.code {
	case 4:
		d.Outcome = RateLimited
		d.RetryAfter = time.Duration(toInt(res[1])) * time.Millisecond
	case 5:
		d.Outcome = Unauthorized
		d.Reason = map[int64]string{1: "unknown_key", 2: "revoked_key"}[toInt(res[1])]
	case 8:
		d.Outcome, d.Reason, d.RetryAfter = Recovering, ReasonRecovering, RecoveryRetryAfter
	default:
		if err := decode(d, res, r.code); err != nil {
			return *d, err
		}
		m.keepDecision(d, r)
	}
	return *d, nil
}

// undoFreeDraw refunds the free-tier draw booked alongside a payer's
// script whose own outcome won (res is the free tier's reply), like a
// failed call's refund: the counters back, a Refund event for its Debit.
// A failure is returned to nobody: the caller is not charged by it, the
// address keeps fewer free calls today, and the Debit with no Refund is on
// record.
func (m *Meter) undoFreeDraw(ctx context.Context, d *Decision, account string, res []any) {
	fd := Decision{Outcome: Free, ID: d.ID, Account: account, calls: d.calls, time: d.time, chain: d.chain, date: d.date,
		ipKey: d.ipKey, netKey: d.netKey, shard: d.ipShard, ipShard: d.ipShard, Limits: m.limitsOf(res[3:])}
	_ = m.Refund(ctx, &fd, d.calls)
}

// gateRun is gateScript on an address's shard: its request rate (and that
// shard's generation marker).
func (m *Meter) gateRun(shard int, ipKey string, ms int64) *run {
	l := m.layout.Shard(shard)
	return &run{script: gateScript, keys: []string{l.IPRate(ipKey), l.Generation()},
		args: []any{ms, m.cfg.IPRate.interval(), m.cfg.IPRate.burst()}}
}
