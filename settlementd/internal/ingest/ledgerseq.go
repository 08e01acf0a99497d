package ingest

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// ledgerSeq follows how far PostgreSQL has caught up with the shard's state
// counter (balances.Layout.Seq): at each acknowledgement it samples the
// counter and Redis's clock; once the watermark passes a sample's time,
// every decision counted up to the sample has its events stored, and the
// sample's count is published as balances.Layout.LedgerSeq. The gateways
// hold every metering script to it (meter seqLua): a Redis whose counter is
// lower is older than the ledger.
//
// Samples are of one Redis process (run id): a sample of a process that is
// gone says nothing about what its successor (a promoted replica, a
// restart) holds, and is dropped.
type ledgerSeq struct {
	mu      sync.Mutex
	run     string
	samples []seqSample
	high    int64 // highest count published
	loaded  bool  // high starts from PostgreSQL's (LoadLedgerSeq)
	stored  int64 // highest count stored in PostgreSQL by this process
}

type seqSample struct {
	ms  int64
	seq int64
}

// maxSeqSamples bounds the samples kept while the watermark stands still
// (an ingest outage): past it new samples are not taken, which only delays
// the floor.
const maxSeqSamples = 4096

// advance takes a sample on node (the stream's master, process run) and
// returns the highest count PostgreSQL has caught up with (0: none known
// yet). It is published every time: a gateway started since, or a Redis
// restored since, learns it at once.
func (s *ledgerSeq) advance(ctx context.Context, node redis.Cmdable, prefix, run string, lowMs int64) int64 {
	var seq *redis.StringCmd
	var now *redis.TimeCmd
	_, err := node.TxPipelined(ctx, func(p redis.Pipeliner) error {
		seq = p.Get(ctx, prefix+"seq")
		now = p.Time(ctx)
		return nil
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if run != s.run {
		s.run, s.samples = run, nil
	}
	var out int64
	n := 0
	for _, sm := range s.samples {
		if sm.ms < lowMs {
			out = max(out, sm.seq)
			n++
			continue
		}
		break
	}
	s.samples = s.samples[n:]
	if err == nil || errors.Is(err, redis.Nil) {
		if v, perr := strconv.ParseInt(seq.Val(), 10, 64); perr == nil && v > 0 && now.Err() == nil && len(s.samples) < maxSeqSamples {
			s.samples = append(s.samples, seqSample{ms: now.Val().UnixMilli(), seq: v})
		}
	}
	s.high = max(s.high, out)
	return s.high
}

// LoadLedgerSeq is the ledger floor of stream's shard kept in PostgreSQL
// (ingest_watermark.ledger_seq; 0 none). The floor lives in the memory of
// the gateways and of settlementd, and in Redis itself; a Redis restored
// from a snapshot while all of them restart has it nowhere else, so
// settlementd starts from this: its ingest publishes it to that Redis at
// the first acknowledgement, and the recovery watcher holds the shard to it
// at its first tick.
func LoadLedgerSeq(ctx context.Context, pool *pgxpool.Pool, stream string) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, `SELECT ledger_seq FROM ingest_watermark WHERE stream = $1`, stream).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// StoreLedgerSeq raises the floor PostgreSQL keeps for stream to v (never
// lowers it). It updates the stream's watermark row only (RecordWatermark
// makes it): a row of its own would read as a stream stored up to time 0 to
// whatever reads the watermarks. ok is false while there is no row.
func StoreLedgerSeq(ctx context.Context, pool *pgxpool.Pool, stream string, v int64) (ok bool, err error) {
	tag, err := pool.Exec(ctx, `UPDATE ingest_watermark SET ledger_seq = GREATEST(ledger_seq, $2) WHERE stream = $1`, stream, v)
	return err == nil && tag.RowsAffected() == 1, err
}

// load starts high from PostgreSQL's floor, once it could be read.
func (s *ledgerSeq) load(ctx context.Context, pool *pgxpool.Pool, stream string) error {
	s.mu.Lock()
	done := s.loaded
	s.mu.Unlock()
	if done || pool == nil {
		return nil
	}
	v, err := LoadLedgerSeq(ctx, pool, stream)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.high, s.stored, s.loaded = max(s.high, v), max(s.stored, v), true
	s.mu.Unlock()
	return nil
}

// store keeps v in PostgreSQL when it is above what this process stored.
func (s *ledgerSeq) store(ctx context.Context, pool *pgxpool.Pool, stream string, v int64) error {
	s.mu.Lock()
	skip := v <= s.stored
	s.mu.Unlock()
	if skip || pool == nil {
		return nil
	}
	if ok, err := StoreLedgerSeq(ctx, pool, stream, v); err != nil || !ok {
		return err // no row yet: the next acknowledgement stores it
	}
	s.mu.Lock()
	s.stored = max(s.stored, v)
	s.mu.Unlock()
	return nil
}
