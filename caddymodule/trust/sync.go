package trust

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// Trust state is shared by every gateway and survives restarts: on each
// registry tick (registry_refresh, off the request path —
// a request never waits for it) the gateway
//
//   - adds the matches it verified since the last tick to each wallet's
//     standing in Redis (<prefix>trust:standing:<chain>:<wallet>, one hash
//     per wallet and chain: matches, the methods seen, when the wallet began
//     to serve, its penalty, its generation) and reads the whole back, so a
//     standing is every gateway's verified answers, and a restarted gateway
//     starts where the others are;
//   - publishes its quarantines (<prefix>trust:quarantined, node id →
//     reason) and applies everyone else's, so a node convicted on one
//     gateway is out of every gateway within a tick, before settlementd has
//     ingested the evidence and rewritten the registry; a lift after review
//     deletes the record.
//
// A quarantine bumps the wallet's generation: the record of a later
// generation replaces a gateway's history of the wallet (all its nodes go
// back to a penalised probation), and matches booked against an older one
// are dropped. PostgreSQL stays the ledger of evidence and quarantines
// (settlementd); Redis is the hot shared copy the gateways read.
const (
	standingKey    = "trust:standing:"
	quarantinedKey = "trust:quarantined"
)

// standingScript adds a gateway's news to a wallet's standing and returns
// the whole. ARGV: generation, matches to add, serving since (unix ms, 0:
// not yet), penalty (0/1), then the methods seen.
var standingScript = redis.NewScript(`
local g = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
local gen = tonumber(ARGV[1])
if gen < g then
	return redis.call('HGETALL', KEYS[1])
end
if gen > g then
	redis.call('DEL', KEYS[1])
	redis.call('HSET', KEYS[1], 'gen', gen)
end
redis.call('HINCRBY', KEYS[1], 'matches', ARGV[2])
local since = tonumber(ARGV[3])
if since > 0 then
	local s = tonumber(redis.call('HGET', KEYS[1], 'serving_ms') or '0')
	if s == 0 or since < s then
		redis.call('HSET', KEYS[1], 'serving_ms', since)
	end
end
if ARGV[4] == '1' then
	redis.call('HSET', KEYS[1], 'penalty', '1')
end
for i = 5, #ARGV do
	redis.call('HSET', KEYS[1], 'm:' .. ARGV[i], '1')
end
return redis.call('HGETALL', KEYS[1])
`)

// quarantineRecord is a shared quarantine.
type quarantineRecord struct {
	Reason  string `json:"reason"`
	ChainID uint64 `json:"chain_id"`
	AtMs    int64  `json:"at_ms"`
}

// Sync exchanges a gateway's trust state with Redis (the registry
// goroutine's: it is not safe for concurrent use).
type Sync struct {
	redis  redis.UniversalClient
	prefix string // the deployment's key prefix
	logger *zap.Logger
	// shared: the quarantines this gateway has shared or applied through
	// Redis.
	shared map[string]bool
	// reviewed: nodes the registry has shown quarantined, so their return
	// to online is read as a review's lift (followReview).
	reviewed map[string]bool
}

// NewSync exchanges trust state on rdb under the key prefix.
func NewSync(rdb redis.UniversalClient, prefix string, log *zap.Logger) *Sync {
	return &Sync{redis: rdb, prefix: prefix, logger: log, shared: map[string]bool{}}
}

// Forget drops node's quarantine from what was shared or applied: a lift
// after review, so a later conviction is shared again.
func (h *Sync) Forget(node string) {
	if h != nil {
		delete(h.shared, node)
	}
}

// Run exchanges trust state with Redis for every chain's pool.
func (h *Sync) Run(ctx context.Context, pools []*upstream.Pool) {
	if h == nil || h.redis == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	h.syncQuarantines(rctx, pools)
	for _, pool := range pools {
		h.syncStandings(rctx, pool)
	}
}

func (h *Sync) syncQuarantines(ctx context.Context, pools []*upstream.Pool) {
	key := h.prefix + quarantinedKey
	for _, pool := range pools {
		for _, name := range pool.TakeLifted() {
			if err := h.redis.HDel(ctx, key, name).Err(); err != nil {
				h.logger.Warn("could not delete a lifted quarantine's shared record", zap.String("node", name), zap.Error(err))
			}
			delete(h.shared, name) // convicted again, it is shared again
		}
		for name, reason := range pool.QuarantinedNodes() {
			if h.shared[name] {
				continue
			}
			rec, _ := json.Marshal(quarantineRecord{Reason: reason, ChainID: pool.ChainID(), AtMs: time.Now().UnixMilli()})
			if err := h.redis.HSetNX(ctx, key, name, rec).Err(); err != nil {
				h.logger.Warn("could not share a quarantine", zap.String("node", name), zap.Error(err))
				continue
			}
			h.shared[name] = true
		}
	}
	all, err := h.redis.HGetAll(ctx, key).Result()
	if err != nil {
		return
	}
	// A record deleted elsewhere (a lift there) does not lift it here:
	// each gateway follows settlementd's review (Forget) or its own
	// operator, and never shares again what it already shared or applied.
	for name, raw := range all {
		var rec quarantineRecord
		if json.Unmarshal([]byte(raw), &rec) != nil {
			continue
		}
		for _, pool := range pools {
			if pool.Quarantine(name, rec.Reason) {
				h.shared[name] = true
				h.logger.Warn("node quarantined by another gateway's evidence", zap.Uint64("chain_id", pool.ChainID()), zap.String("node", name),
					zap.String("reason", rec.Reason))
			}
		}
	}
}

func (h *Sync) syncStandings(ctx context.Context, pool *upstream.Pool) {
	pool.RefreshTrust()
	prefix := h.prefix + standingKey + strconv.FormatUint(pool.ChainID(), 10) + ":"
	flushed := map[string]bool{}
	for _, s := range pool.Standings() {
		since := int64(0)
		if !s.ServingSince.IsZero() {
			since = s.ServingSince.UnixMilli()
		}
		pen := "0"
		if s.Penalty {
			pen = "1"
		}
		args := append([]any{s.Gen, s.Delta, since, pen}, anySlice(s.Methods)...)
		res, err := standingScript.Run(ctx, h.redis, []string{prefix + s.Key}, args...).StringSlice()
		if err != nil {
			h.logger.Warn("could not share a node standing", zap.String("standing", s.Key), zap.Error(err))
			continue
		}
		flushed[s.Key] = true
		pool.Restore(decodeStanding(s.Key, pairs(res)))
		// What the operator sees (settlementd's GET /api/nodes): the
		// phase, share and check rate this gateway computes from it.
		if v, ok := pool.StandingView(s.Key); ok {
			_ = h.redis.HSet(ctx, prefix+s.Key, "phase", v.Phase, "share", strconv.FormatFloat(v.Share, 'f', 4, 64),
				"check_rate", strconv.FormatFloat(v.CheckRate, 'f', 4, 64), "probation_matches", v.ProbationMatches,
				"view_ms", time.Now().UnixMilli()).Err()
		}
	}
	var keys []string
	for _, k := range pool.Keys() {
		if !flushed[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	pipe := h.redis.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HGetAll(ctx, prefix+k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return
	}
	for i, k := range keys {
		if m, err := cmds[i].Result(); err == nil && len(m) > 0 {
			pool.Restore(decodeStanding(k, m))
		}
	}
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// pairs turns HGETALL's flat reply into a map.
func pairs(flat []string) map[string]string {
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[flat[i]] = flat[i+1]
	}
	return m
}

func decodeStanding(key string, m map[string]string) upstream.Standing {
	s := upstream.Standing{Key: key}
	s.Gen, _ = strconv.ParseInt(m["gen"], 10, 64)
	s.Matches, _ = strconv.ParseInt(m["matches"], 10, 64)
	if ms, _ := strconv.ParseInt(m["serving_ms"], 10, 64); ms > 0 {
		s.ServingSince = time.UnixMilli(ms)
	}
	s.Penalty = m["penalty"] == "1"
	for f := range m {
		if method, ok := strings.CutPrefix(f, "m:"); ok {
			s.Methods = append(s.Methods, method)
		}
	}
	return s
}
