package ingest

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// ErrNoGroup is returned when the stream or its consumer group does not exist.
var ErrNoGroup = errors.New("ingest: stream or consumer group missing")

// Watermark describes how far a consumer group has committed a stream.
type Watermark struct {
	// LowMs: every stream entry whose id time is below LowMs has been
	// committed to Postgres and acknowledged. It holds for any number of
	// consumers, because it comes from the group (lowest pending entry, last
	// delivered id), not from one consumer's progress.
	LowMs int64
	// Pending counts entries delivered but not yet acknowledged.
	Pending int64
	// Undelivered reports entries the group has not read yet.
	Undelivered bool
}

// Drained reports whether every entry in the stream is committed.
func (w Watermark) Drained() bool { return w.Pending == 0 && !w.Undelivered }

// GroupWatermark reads the group's state in one MULTI/EXEC, so no consumer's
// read or acknowledgement can fall between the commands and make the answer
// optimistic. It assumes stream ids are auto-generated (XADD *), as the
// gateway writes them: then no entry can later appear below Redis' clock.
func GroupWatermark(ctx context.Context, rdb redis.UniversalClient, stream, group string) (Watermark, error) {
	var (
		infos *redis.XInfoGroupsCmd
		pend  *redis.XPendingCmd
		last  *redis.XMessageSliceCmd
		now   *redis.TimeCmd
	)
	_, _ = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		infos = p.XInfoGroups(ctx, stream)
		pend = p.XPending(ctx, stream, group)
		last = p.XRevRangeN(ctx, stream, "+", "-", 1)
		now = p.Time(ctx)
		return nil
	})
	if err := infos.Err(); err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return Watermark{}, ErrNoGroup
		}
		return Watermark{}, err
	}
	var lastDelivered string
	found := false
	for _, g := range infos.Val() {
		if g.Name == group {
			lastDelivered, found = g.LastDeliveredID, true
		}
	}
	if !found {
		return Watermark{}, ErrNoGroup
	}
	for _, c := range []redis.Cmder{pend, last, now} {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return Watermark{}, err
		}
	}
	w := Watermark{Pending: pend.Val().Count}
	lastID := "0-0"
	if msgs := last.Val(); len(msgs) > 0 {
		lastID = msgs[0].ID
	}
	w.Undelivered = compareIDs(lastID, lastDelivered) > 0
	switch {
	case w.Pending > 0:
		w.LowMs = idMs(pend.Val().Lower)
	case w.Undelivered:
		// Entries in the last delivered id's millisecond may follow it.
		w.LowMs = idMs(lastDelivered)
	default:
		// Everything written is committed; anything written from now on
		// gets an id at or above Redis' clock and the last id.
		w.LowMs = max(now.Val().UnixMilli(), idMs(lastID))
	}
	return w, nil
}

// RecordWatermark stores w (and the newest event time and stream id of the
// batches committed since the last record) in ingest_watermark. Every field
// only moves forward, so records from several consumers, arriving in any
// order, never move it back.
func RecordWatermark(ctx context.Context, pool *pgxpool.Pool, stream string, w Watermark, maxEventMs int64, lastID string) error {
	_, err := pool.Exec(ctx, `
INSERT INTO ingest_watermark (stream, low_ms, max_event_ms, last_id, updated_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (stream) DO UPDATE SET
    low_ms       = GREATEST(ingest_watermark.low_ms, EXCLUDED.low_ms),
    max_event_ms = GREATEST(ingest_watermark.max_event_ms, EXCLUDED.max_event_ms),
    last_id      = CASE WHEN string_to_array(NULLIF(EXCLUDED.last_id, ''), '-')::numeric[]
                             > string_to_array(COALESCE(NULLIF(ingest_watermark.last_id, ''), '0-0'), '-')::numeric[]
                        THEN EXCLUDED.last_id ELSE ingest_watermark.last_id END,
    updated_at   = now()`, stream, w.LowMs, maxEventMs, lastID)
	return err
}

// idMs is the millisecond part of a stream id ("1700000000000-3").
func idMs(id string) int64 {
	ms, _, _ := strings.Cut(id, "-")
	v, _ := strconv.ParseInt(ms, 10, 64)
	return v
}

// compareIDs orders stream ids numerically (-1, 0, +1).
func compareIDs(a, b string) int {
	pa, pb := parseID(a), parseID(b)
	for i := range 2 {
		switch {
		case pa[i] < pb[i]:
			return -1
		case pa[i] > pb[i]:
			return 1
		}
	}
	return 0
}

func parseID(id string) [2]uint64 {
	ms, seq, _ := strings.Cut(id, "-")
	a, _ := strconv.ParseUint(ms, 10, 64)
	b, _ := strconv.ParseUint(seq, 10, 64)
	return [2]uint64{a, b}
}

// maxID returns the larger of two stream ids ("" counts as lowest).
func maxID(a, b string) string {
	if a == "" || (b != "" && compareIDs(b, a) > 0) {
		return b
	}
	return a
}
