package status

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// Dead letters are stream entries the ingest could not book: parked in
// dead_letters, whole, never dropped (ingest). An operator lists them and,
// once settlementd can read them (an upgrade: a gateway that packed events
// before its settlementd knew packs, a new event type; a fixed bug),
// replays them: each entry's fields are appended to the stream again and
// ingested like any other entry. Events are stored once by their own ids,
// so a replay, or two, never books anything twice; an entry that still
// cannot be booked is parked again, under its new stream id.

// maxReplay bounds one replay call (each entry is one XADD and one UPDATE).
const maxReplay = 1000

// deadLetters lists parked entries, newest first (cursor: the last id).
func (s *Service) deadLetters(w http.ResponseWriter, r *http.Request) {
	limit, cur, ok := page(w, r, "cursor", 50, 500)
	if !ok {
		return
	}
	rows, err := s.query(r.Context(), `SELECT id, stream_id, reason, consumer, created_at, replayed_at, replayed_as
		FROM dead_letters WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, cur, limit)
	if err != nil {
		unavailable(w, "dead letters")
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"dead_letters": rows, "next_cursor": nextCursor(rows, limit)})
}

// replayDeadLetters appends parked entries to the stream again: those named
// in {"ids": […]}, or every one not replayed yet (oldest first, at most
// maxReplay a call) that is not itself a failed replay. A replayed entry
// carries the field replay_of (the dead letter's id; the ingest reads only
// its own fields), so one that is parked again is not picked by the next
// replay of everything, round after round; named, it is. Entries whose content is gone (trimmed from the
// stream before they were read) or was not a field map are skipped and
// listed. The rows are locked while they are replayed, so two calls at
// once do not replay one entry twice; a crash between the XADD and the
// commit replays it again on the next call, which the event ids make
// harmless.
func (s *Service) replayDeadLetters(w http.ResponseWriter, r *http.Request) {
	var req struct {
		IDs []int64 `json:"ids"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpx.MaxBody))
	if err != nil {
		httpx.Error(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is too large")
		return
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &req); err != nil || len(req.IDs) > maxReplay {
			httpx.Error(w, http.StatusBadRequest, "invalid_body", `the body is {"ids": [dead letter ids]} (at most 1000), or empty for every one not replayed yet`)
			return
		}
	}
	stream := balances.Layout{Prefix: s.cfg.Prefix, Shards: s.cfg.Shards}.Stream(0) // settlementd reads every shard's stream
	type skip struct {
		ID     int64  `json:"id"`
		Reason string `json:"reason"`
	}
	var replayed []int64
	var skipped []skip
	ctx := r.Context()
	err = pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		replayed, skipped = nil, nil
		rows, err := tx.Query(ctx, `SELECT id, fields FROM dead_letters
			WHERE replayed_at IS NULL AND (coalesce(cardinality($1::bigint[]), 0) = 0 OR id = ANY($1))
			-- Only a field map can be replayed: a row without one (content gone)
			-- would otherwise be picked, and skipped, by every call.
			AND (cardinality($1::bigint[]) > 0 OR substring(fields FROM 1 FOR 1) = '\x7b'::bytea)
			AND (cardinality($1::bigint[]) > 0 OR position(convert_to('"`+replayOf+`"', 'UTF8') IN fields) = 0)
			ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`, req.IDs, maxReplay)
		if err != nil {
			return err
		}
		type parked struct {
			ID     int64
			Fields []byte
		}
		all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[parked])
		if err != nil {
			return err
		}
		for _, p := range all {
			values, ok := fieldsOf(p.Fields)
			values = append(values, replayOf, strconv.FormatInt(p.ID, 10))
			if !ok {
				skipped = append(skipped, skip{p.ID, "its content is gone or was not a stream entry's fields"})
				continue
			}
			newID, err := s.cfg.Redis.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: values}).Result()
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE dead_letters SET replayed_at = now(), replayed_as = $2 WHERE id = $1`, p.ID, newID); err != nil {
				return err
			}
			replayed = append(replayed, p.ID)
		}
		return nil
	})
	if err != nil {
		s.cfg.Log.Warn("replaying dead letters", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "unavailable", "the dead letters could not be replayed; try again (an entry replayed twice is stored once)")
		return
	}
	// Named ids that were not replayed: unknown, replayed already, or being
	// replayed by another call.
	for _, id := range req.IDs {
		if !slices.Contains(replayed, id) && !slices.ContainsFunc(skipped, func(k skip) bool { return k.ID == id }) {
			skipped = append(skipped, skip{id, "no such dead letter, or it was replayed already"})
		}
	}
	if replayed == nil {
		replayed = []int64{}
	}
	if skipped == nil {
		skipped = []skip{}
	}
	s.cfg.Log.Info("dead letters replayed", zap.Int("replayed", len(replayed)), zap.Int("skipped", len(skipped)), zap.String("stream", stream))
	httpx.JSON(w, http.StatusOK, map[string]any{"replayed": replayed, "skipped": skipped, "stream": stream})
}

// replayOf is the field a replayed entry carries: the dead letter's id.
const replayOf = "replay_of"

// fieldsOf is a dead letter's stored fields (JSON of the entry's field map,
// ingest's park) as XADD values, field names in order; false when there is
// nothing to replay.
func fieldsOf(raw []byte) ([]any, bool) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return nil, false
	}
	names := make([]string, 0, len(m))
	for k := range m {
		if k != replayOf { // a replay of a replay names the newest
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := make([]any, 0, 2*len(m))
	for _, k := range names {
		v, ok := m[k].(string) // a stream entry's values are strings
		if !ok {
			return nil, false
		}
		out = append(out, k, v)
	}
	return out, true
}
