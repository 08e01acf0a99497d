package recovery

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// A Redis older than the ledger (restored from a snapshot or an older
// RDB/AOF, or a replica missing writes PostgreSQL already has) still holds
// its generation marker and its key records, so it looks whole: its
// balances, bundles, vouchers and nonces are those of the past, and the
// money spent since would be spendable again. Each shard's state counter
// (balances.Layout.Seq) tells it: ingest publishes the count PostgreSQL has
// caught up with (balances.Layout.LedgerSeq), every gateway holds its
// metering scripts to it and the first one to find a lower count marks the
// shard (count -1, marker deleted; meter's seqLua), and this watcher does
// the same each tick against the highest count it has seen published (for
// a shard no gateway meters on). A marked shard serves no money; the
// watcher alerts, deletes the shard's keys but the stream and the
// bookkeeping below (so it is exactly a Redis that lost its data), and the
// rebuild from PostgreSQL follows as after a loss.

// keptOnWipe are the keys of a shard a wipe leaves: the stream (its
// entries not yet stored, and the consumer group), the state counter
// (restarted last, by clearScript), the gateways' heartbeats and what they
// keep, the ledger's count, the layout record and ingest's fence.
func keptOnWipe(l balances.Layout) map[string]bool {
	return map[string]bool{l.Stream(0): true, l.Seq(): true, l.Gateways(): true, l.Keep(): true,
		l.LedgerSeq(): true, l.LayoutRecord(): true, l.Prefix + "ingest-fence": true}
}

// markOlderScript marks a shard older than the ledger unless its count
// moved up to the floor meanwhile. KEYS: 1 seq, 2 generation marker.
// ARGV: 1 floor. Reply: 1 marked (or already marked), 0 not older.
var markOlderScript = redis.NewScript(`
local s = tonumber(redis.call('GET', KEYS[1]) or '0')
if s < 0 then return 1 end
if s == 0 or s >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], '-1')
redis.call('DEL', KEYS[2])
return 1
`)

// clearScript ends a wipe: the counter starts again above the floor (at
// Redis's clock in microseconds, as for an empty Redis, or past the floor
// if that clock is behind, a Redis restored onto another host), so the
// shard is a Redis that lost its data and no floor takes it for older
// again. KEYS: 1 seq. ARGV: 1 floor.
var clearScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= '-1' then return 0 end
local t = redis.call('TIME')
local v = math.max(tonumber(t[1]) * 1000000 + tonumber(t[2]), tonumber(ARGV[1]) + 1)
redis.call('SET', KEYS[1], string.format('%d', v))
return 1
`)

// checkLedger finds shards older than the ledger and wipes them. It
// reports whether any shard was wiped this tick.
func (w *Watcher) checkLedger(ctx context.Context) (bool, error) {
	layout := balances.Layout{Prefix: w.Prefix, Shards: w.Shards}
	if len(w.floors) != layout.N() {
		w.floors = make([]int64, layout.N())
	}
	// The floors PostgreSQL keeps (ingest.StoreLedgerSeq): a settlementd
	// restarted onto a Redis restored from a snapshot has no other memory
	// of them (the restored Redis holds the snapshot's). Unreadable: the
	// floors seen so far still hold.
	if w.Pool != nil {
		streams := layout.Streams()
		rows, err := w.Pool.Query(ctx, `SELECT stream, ledger_seq FROM ingest_watermark WHERE stream = ANY($1)`, streams)
		if err == nil {
			idx := make(map[string]int, len(streams))
			for i, s := range streams {
				idx[s] = i
			}
			var (
				stream string
				v      int64
			)
			_, err = pgx.ForEachRow(rows, []any{&stream, &v}, func() error {
				if i, ok := idx[stream]; ok {
					w.floors[i] = max(w.floors[i], v)
				}
				return nil
			})
		}
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("reading the ledger floors from PostgreSQL", zap.Error(err))
		}
	}
	wiped := false
	for i := range layout.N() {
		l := layout.Shard(i)
		var seq, ledger *redis.StringCmd
		// Two GETs of one slot: one round trip.
		_, err := w.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
			seq = p.Get(ctx, l.Seq())
			ledger = p.Get(ctx, l.LedgerSeq())
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return wiped, err
		}
		if v, err := strconv.ParseInt(ledger.Val(), 10, 64); err == nil {
			w.floors[i] = max(w.floors[i], v)
		}
		s, _ := strconv.ParseInt(seq.Val(), 10, 64)
		older := s < 0
		if !older && s > 0 && s < w.floors[i] {
			n, err := markOlderScript.Run(ctx, w.Redis, []string{l.Seq(), l.Generation()}, w.floors[i]).Int()
			if err != nil {
				return wiped, err
			}
			older = n == 1
		}
		if !older {
			continue
		}
		w.olderTotal.Inc()
		w.older.Set(1)
		w.Log.Error("ALERT: Redis is older than the ledger (restored from a snapshot or an older RDB/AOF, or a replica missing acknowledged writes): "+
			"its balances, bundles, vouchers and nonces are from the past; it serves no money, and its keys are deleted and rebuilt from PostgreSQL",
			zap.Int("shard", i), zap.Int64("state_count", s), zap.Int64("ledger_count", w.floors[i]))
		n, err := w.wipe(ctx, l)
		if err != nil {
			return wiped, err
		}
		if _, err := clearScript.Run(ctx, w.Redis, []string{l.Seq()}, w.floors[i]).Result(); err != nil {
			return wiped, err
		}
		w.Log.Warn("shard older than the ledger wiped: rebuilding it from PostgreSQL as after a loss", zap.Int("shard", i), zap.Int("keys_deleted", n))
		wiped = true
	}
	return wiped, nil
}

// wipe deletes every key of shard l but keptOnWipe, on every master.
func (w *Watcher) wipe(ctx context.Context, l balances.Layout) (int, error) {
	keep := keptOnWipe(l)
	match := globEscape(l.Prefix) + "*"
	var deleted atomic.Int64
	one := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			var del []string
			for _, k := range keys {
				if !keep[k] {
					del = append(del, k)
				}
			}
			if len(del) > 0 {
				// One UNLINK per key: on a Redis Cluster the keys of a
				// shard share a slot, but a prefix without a hash tag
				// does not.
				_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, k := range del {
						p.Unlink(ctx, k)
					}
					return nil
				})
				if err != nil {
					return err
				}
				deleted.Add(int64(len(del)))
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	switch c := w.Redis.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, c)
	default:
		err = errors.New("recovery: unknown Redis client")
	}
	return int(deleted.Load()), err
}

// globEscape escapes SCAN MATCH's special characters in a key prefix.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
