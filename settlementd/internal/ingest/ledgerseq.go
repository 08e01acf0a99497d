package ingest

import (
	"context"
	"errors"
	"strconv"
	"sync"

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
