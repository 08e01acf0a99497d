package upstream

import (
	"slices"
	"sync"
	"time"
)

// ewmaAlpha weighs a new latency sample in the moving average selection
// uses. 0.2 follows a change within ~10 samples but does not jump on one
// slow call.
const ewmaAlpha = 0.2

// stats holds an upstream's latency and outcome counters.
//
// Latency has two views: a bounded ring of recent samples for p50/p99 in
// snapshots (sorting a copy is fine there, it is rare), and an exponentially
// weighted moving average for selection, which runs on every call and must
// be O(1). Only successful exchanges are sampled (calls and probes): a
// timeout's "latency" is just the timeout and would hide how fast the
// upstream is when it works; failures are counted separately.
type stats struct {
	mu        sync.Mutex
	ring      []time.Duration
	next      int
	filled    int
	ewma      float64 // nanoseconds; 0 = no sample yet
	successes uint64
	failures  uint64
	limited   uint64
	lastErr   string
	lastErrAt time.Time
}

func newStats(samples int) *stats {
	return &stats{ring: make([]time.Duration, samples)}
}

func (s *stats) observe(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observeLocked(d)
}

func (s *stats) observeLocked(d time.Duration) {
	s.ring[s.next] = d
	s.next = (s.next + 1) % len(s.ring)
	if s.filled < len(s.ring) {
		s.filled++
	}
	if s.ewma == 0 {
		s.ewma = float64(d)
	} else {
		s.ewma += ewmaAlpha * (float64(d) - s.ewma)
	}
}

// success records a call the upstream served.
func (s *stats) success(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.successes++
	s.observeLocked(d)
}

// failure records a call the upstream failed; msg must be redacted.
func (s *stats) failure(msg string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	s.lastErr, s.lastErrAt = msg, at
}

// rateLimited records a call the upstream throttled; msg must be redacted.
func (s *stats) rateLimited(msg string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited++
	s.lastErr, s.lastErrAt = msg, at
}

// noteError keeps msg as the last error without counting a call (probe
// failures: they are not traffic).
func (s *stats) noteError(msg string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr, s.lastErrAt = msg, at
}

// latency is the moving average used by selection; ok is false before the
// first sample.
func (s *stats) latency() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.ewma), s.ewma > 0
}

type statsView struct {
	successes, failures, limited uint64
	samples                      int
	p50, p99                     time.Duration
	lastErr                      string
	lastErrAt                    time.Time
}

func (s *stats) view() statsView {
	s.mu.Lock()
	v := statsView{
		successes: s.successes, failures: s.failures, limited: s.limited,
		samples: s.filled, lastErr: s.lastErr, lastErrAt: s.lastErrAt,
	}
	sorted := slices.Clone(s.ring[:s.filled])
	s.mu.Unlock()
	slices.Sort(sorted)
	v.p50 = percentile(sorted, 50)
	v.p99 = percentile(sorted, 99)
	return v
}

// percentile uses the nearest-rank method on sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}
