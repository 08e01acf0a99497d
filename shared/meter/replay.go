package meter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Replayer gives a Redis that lost money facts the ones this gateway keeps
// (Retention), and lets go of those settlementd has stored. It runs off the
// request path, every Interval, per shard:
//
//   - It reads the shard's generation marker, settlementd's acknowledgement
//     (balances.Layout.Ingested), whether this gateway has replayed to this
//     Redis (balances.Layout.Replayed), and the run id of the Redis process
//     holding the shard (INFO server); it heartbeats in
//     balances.Layout.Gateways.
//   - Marker missing (Redis restarted empty or was flushed, and settlementd
//     has not rebuilt it): it appends every fact it keeps to the stream, as
//     it was, and adds itself to Replayed. settlementd's rebuild waits for
//     the gateways alive to have replayed and for the stream to be ingested
//     (recovery), so the balances it rebuilds from PostgreSQL include every
//     replayed debit and refund: nothing is applied to Redis balances
//     twice, or left out. Ingest stores each event id once.
//   - Marker present, but on another Redis process than before with the
//     same marker (a replica promoted, a restart from an AOF that lacked the
//     last second): the data came back with the last writes missing, and a
//     missing entry took its balance change with it (both are one script's
//     writes, replicated together). For each fact kept, replayScript looks
//     for its entry; one that is missing is booked again — its balance
//     change and its entry, atomically. PostgreSQL may have stored it before
//     (ingested from the old master): ingest stores it once.
//   - Marker changed without this gateway having seen it missing (it could
//     not reach Redis during the whole recovery, or settlementd gave up
//     waiting for it): the facts missing from the stream are appended, with
//     no balance change (the rebuilt balances may include them already);
//     logged, and counted, since such a balance may be off until
//     `settlementd reconcile`.
//   - An acknowledgement made on the Redis process this gateway knows lets
//     go of the facts below it. One from another process (a promoted
//     replica whose stream lacks what this gateway booked) is ignored until
//     the facts were checked against it.
type Replayer struct {
	rdb      redis.UniversalClient
	layout   balances.Layout
	ret      *Retention
	id       string
	interval time.Duration
	log      *zap.Logger
	hold     time.Duration // AckHold
	state    []shardState

	replayed atomic.Uint64 // facts appended again
	rebooked atomic.Uint64 // of them, with their balance change (same marker)
	late     atomic.Uint64 // appended after a rebuild this gateway did not replay for
}

// shardState is what the Replayer last saw of a shard.
type shardState struct {
	run         string // Redis run id
	gen         string // generation marker ("" missing)
	missingSeen bool   // replayed to run while its marker was missing
}

// AckHold is how long a fact is kept even once settlementd has stored it:
// a Redis restarted from an AOF written with appendfsync everysec has lost
// up to about the last second (two in the worst case) of writes, balance
// changes included, though PostgreSQL may hold their events; kept this long,
// such facts are booked again (the same marker on a new process). On a
// replicated master settlementd's acknowledgement already waits for the
// replicas (ingest), so this covers the AOF. ~20,000 facts at 10,000 paid
// calls/s.
const AckHold = 2 * time.Second

// DefaultReplayInterval is how often a Replayer looks: the acknowledgement
// lag it adds to the retention, and how soon it replays after a loss
// (settlementd waits at least its own watch interval, 1 s, before a
// rebuild).
const DefaultReplayInterval = 200 * time.Millisecond

// NewReplayer returns the replayer of ret's facts on rdb (the gateway's
// plain client: its replays are not metering decisions). id names this
// gateway process in the heartbeats.
func NewReplayer(rdb redis.UniversalClient, layout balances.Layout, ret *Retention, id string, interval time.Duration, log *zap.Logger) *Replayer {
	if interval <= 0 {
		interval = DefaultReplayInterval
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Replayer{rdb: rdb, layout: layout, ret: ret, id: id, interval: interval, log: log, hold: AckHold,
		state: make([]shardState, layout.N())}
}

// ReplayStats counts what a Replayer did.
type ReplayStats struct {
	Replayed uint64 // facts appended again
	Rebooked uint64 // of them, with their balance change
	Late     uint64 // appended after a rebuild that did not wait for them
}

// Stats reads the counters.
func (p *Replayer) Stats() ReplayStats {
	return ReplayStats{Replayed: p.replayed.Load(), Rebooked: p.rebooked.Load(), Late: p.late.Load()}
}

// Run ticks until ctx ends.
func (p *Replayer) Run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		for s := range p.state {
			if err := p.Tick(ctx, s); err != nil && ctx.Err() == nil {
				p.log.Debug("money fact replay: Redis not answering", zap.Int("shard", s), zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick is one look at shard s.
func (p *Replayer) Tick(ctx context.Context, s int) error {
	l := p.layout.Shard(s)
	now := time.Now().UnixMilli()
	var gen, ack, ledger *redis.StringCmd
	var member *redis.BoolCmd
	keep := p.ret.KeepFrom(s, time.UnixMilli(now))
	_, err := p.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		gen = pl.Get(ctx, l.Generation())
		ack = pl.Get(ctx, l.Ingested())
		ledger = pl.Get(ctx, l.LedgerSeq())
		member = pl.SIsMember(ctx, l.Replayed(), p.id)
		pl.ZAdd(ctx, l.Gateways(), redis.Z{Score: float64(now), Member: p.id})
		pl.ZRemRangeByScore(ctx, l.Gateways(), "-inf", strconv.FormatInt(now-time.Minute.Milliseconds(), 10))
		// What this gateway may still look up in the stream: settlementd
		// trims below the lowest of these (balances.Layout.Keep).
		pl.HSet(ctx, l.Keep(), p.id, keep)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	// The count PostgreSQL has caught up with: the floor this gateway's
	// scripts hold this shard's Redis to (seqLua). Never lowered, so a
	// Redis restored from the past cannot lower it either.
	if v, err := strconv.ParseInt(ledger.Val(), 10, 64); err == nil {
		p.ret.RaiseFloor(s, v)
	}
	run, err := runID(ctx, p.rdb, p.layout.Stream(s))
	if err != nil {
		return err
	}
	st := &p.state[s]
	marker := gen.Val()
	if marker == "" {
		if !member.Val() {
			n, err := p.replay(ctx, s, replayAppend)
			if err != nil {
				return err
			}
			if err := p.rdb.SAdd(ctx, l.Replayed(), p.id).Err(); err != nil {
				return err
			}
			if n > 0 {
				p.log.Info("Redis lost its data: money facts not yet stored appended again", zap.Int("shard", s), zap.Int("facts", n))
			}
		}
		st.run, st.gen, st.missingSeen = run, "", true
		return nil
	}
	switch {
	case st.run == "":
		// The first look: whatever this process kept was booked here.
	case st.missingSeen && st.run == run:
		// Replayed while the marker was missing; the rebuild that set it
		// waited for that.
	case run != st.run || marker != st.gen:
		mode := replayRebook
		if marker != st.gen {
			mode = replayLate
		}
		n, err := p.replay(ctx, s, mode)
		if err != nil {
			return err
		}
		if n > 0 {
			if mode == replayLate {
				p.log.Warn("Redis was rebuilt without this gateway's money facts: the missing ones are appended now; "+
					"their balances may differ from PostgreSQL's until `settlementd reconcile`", zap.Int("shard", s), zap.Int("facts", n))
			} else {
				p.log.Info("Redis came back without its last writes: money facts booked again", zap.Int("shard", s), zap.Int("facts", n))
			}
		}
	}
	st.run, st.gen, st.missingSeen = run, marker, false
	if ms, on, ok := parseAck(ack.Val()); ok && on == run {
		p.ret.acknowledge(s, min(ms, now-p.hold.Milliseconds()))
	}
	return nil
}

// parseAck reads balances.Layout.Ingested's value.
func parseAck(v string) (lowMs int64, run string, ok bool) {
	a, b, found := strings.Cut(v, " ")
	ms, err := strconv.ParseInt(a, 10, 64)
	return ms, b, found && err == nil && b != ""
}

// FormatAck is balances.Layout.Ingested's value.
func FormatAck(lowMs int64, run string) string { return strconv.FormatInt(lowMs, 10) + " " + run }

// runID is the run id of the Redis process holding key (a Redis Cluster
// master, or the one Redis): it changes when the process restarts and when
// a replica takes over.
func runID(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	var c redis.Cmdable = rdb
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		n, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return "", err
		}
		c = n
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("meter: INFO server has no run_id")
}

// RunID is the run id of the Redis process holding key (settlementd's
// acknowledgements name it).
func RunID(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	return runID(ctx, rdb, key)
}

// Replay modes (replayScript ARGV[1]).
const (
	replayAppend = "append" // marker missing: append every fact as it was
	replayRebook = "rebook" // a fact whose entry is missing: its balance change and its entry again
	replayLate   = "late"   // a fact whose entry is missing: its entry again
)

// replayBatch is how many facts go in one pipeline.
const replayBatch = 256

// replay runs replayScript for every fact of shard s, in booking order, and
// records the entries appended. It returns how many were appended.
func (p *Replayer) replay(ctx context.Context, s int, mode string) (int, error) {
	l := p.layout.Shard(s)
	stream := l.Stream(0)
	appended := 0
	for next := uint64(0); ; {
		facts, from := p.ret.read(s, next, replayBatch)
		if len(facts) == 0 {
			break
		}
		cmds := make([]*redis.Cmd, len(facts))
		_, err := p.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
			for i := range facts {
				f := &facts[i]
				target := l.AccountPrefix() + f.payer + "}"
				switch f.kind {
				case factBundleDebit, factBundleRefund:
					target = l.BundlePrefix() + f.payer + "}"
				case factChannelState:
					target = l.Channel(f.payer)
				case 0:
					if f.typ == events.TypeDebit && f.payer != "" {
						target = l.Channel(f.payer) // a voucher draw's Debit: on its channel's shard
					}
				}
				// EVAL, not EVALSHA after a SCRIPT LOAD: on a Redis Cluster
				// the load goes to every node the client knows, and fails
				// while the master that just died is still among them.
				cmds[i] = replayScript.Eval(ctx, pl, []string{stream, target}, mode, f.xid, f.typ, events.Version,
					f.payload(), f.kind, f.n, f.count)
			}
			return nil
		})
		if err != nil {
			return appended, fmt.Errorf("meter: replaying money facts: %w", err)
		}
		for i, c := range cmds {
			res, err := c.Slice()
			if err != nil || len(res) < 2 {
				return appended, fmt.Errorf("meter: replaying money facts: %v", err)
			}
			if toInt(res[0]) == 1 {
				xid, _ := res[1].(string)
				p.ret.rebook(s, from+uint64(i), xid)
				appended++
				p.replayed.Add(1)
				switch mode {
				case replayRebook:
					p.rebooked.Add(1)
				case replayLate:
					p.late.Add(1)
				}
			}
		}
		next = from + uint64(len(facts))
	}
	return appended, nil
}

// replayScript appends one kept money fact to the stream unless the stream
// holds its entry (same id, same payload); in mode "rebook" it also makes
// the fact's balance change again, atomically with the entry, since the
// Redis that lost the entry lost the change with it. A balance record the
// Redis does not hold is left alone (the fact's entry still goes: PostgreSQL
// has the record).
//
// KEYS: 1 stream, 2 the account hash (credits) or the wallet's bundle hash.
// ARGV: 1 mode (append | rebook | late), 2 the entry's id when booked,
// 3 event type, 4 event version, 5 payload, 6 fact kind (1 credits debit,
// 2 bundle debit, 3 credits refund, 4 bundle refund, 5 a voucher draw's
// channel state, 0 none: revenue, a voucher draw's Debit),
// 7 units or calls, 8 a revenue pack's event count ("": one event).
// Reply: {0, id} the entry is there, {1, new id} appended.
var replayScript = redis.NewScript(`
if ARGV[1] ~= 'append' then
  local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
  if #e > 0 then
    local f = e[1][2]
    for i = 1, #f, 2 do
      if f[i] == 'd' and f[i + 1] == ARGV[5] then return {0, ARGV[2]} end
    end
  end
end
if ARGV[1] == 'rebook' and redis.call('EXISTS', KEYS[2]) == 1 then
  local k, n = ARGV[6], tonumber(ARGV[7])
  if k == '1' then
    redis.call('HINCRBY', KEYS[2], 'bal', -n)
    redis.call('HINCRBY', KEYS[2], 'spent', n)
  elseif k == '2' then
    redis.call('HINCRBY', KEYS[2], 'calls', -n)
    redis.call('HINCRBY', KEYS[2], 'used', n)
  elseif k == '3' then
    redis.call('HINCRBY', KEYS[2], 'bal', n)
    redis.call('HINCRBY', KEYS[2], 'spent', -n)
  elseif k == '4' then
    redis.call('HINCRBY', KEYS[2], 'calls', n)
    redis.call('HINCRBY', KEYS[2], 'used', -n)
  elseif k == '5' then
    -- A voucher draw's channel state: the hash takes it unless it holds
    -- a newer one (its change counter).
    local ev = cjson.decode(ARGV[5])
    if tonumber(ev.seq) > tonumber(redis.call('HGET', KEYS[2], 'seq') or '0') then
      redis.call('HSET', KEYS[2], 'w', ev.w, 'bal', ev.bal, 'claimed', ev.claimed, 'charged', ev.charged,
        'signed', ev.signed, 'sig', ev.sig, 'cfg', ev.cfg, 'seq', ev.seq)
      if ev.closed then redis.call('HSET', KEYS[2], 'closed', '1') else redis.call('HDEL', KEYS[2], 'closed') end
    end
  end
end
if ARGV[8] ~= '' then
  return {1, redis.call('XADD', KEYS[1], '*', 't', ARGV[3], 'v', ARGV[4], 'n', ARGV[8], 'd', ARGV[5])}
end
return {1, redis.call('XADD', KEYS[1], '*', 't', ARGV[3], 'v', ARGV[4], 'd', ARGV[5])}
`)
