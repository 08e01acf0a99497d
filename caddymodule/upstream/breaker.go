package upstream

import (
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
)

// BreakerConfig tunes the circuit breaker each upstream has.
//
// The breaker is gobreaker's TwoStepCircuitBreaker: Forward asks Allow before
// sending and reports the outcome only after the reply body has been judged,
// because most JSON-RPC failures arrive as HTTP 200 with an error object.
// Breakers are local to the gateway instance: a shared breaker
// would cost Redis round trips on every call.
type BreakerConfig struct {
	// FailuresToOpen is how many consecutive failures open the breaker
	// (default 5). Consecutive, not a rate: one success in between means
	// the upstream still works for some calls.
	FailuresToOpen uint32
	// OpenTimeout is how long an open breaker keeps the upstream out
	// before letting trial calls through (default 30 s).
	OpenTimeout time.Duration
	// HalfOpenMaxRequests is how many trial calls may be in flight while
	// half-open; that many consecutive successes close the breaker
	// (default 1).
	HalfOpenMaxRequests uint32
}

func (bc BreakerConfig) withDefaults() BreakerConfig {
	if bc.FailuresToOpen == 0 {
		bc.FailuresToOpen = 5
	}
	if bc.OpenTimeout <= 0 {
		bc.OpenTimeout = 30 * time.Second
	}
	if bc.HalfOpenMaxRequests == 0 {
		bc.HalfOpenMaxRequests = 1
	}
	return bc
}

// BreakerState is a breaker state as shown in snapshots.
type BreakerState string

const (
	BreakerClosed   BreakerState = "closed"
	BreakerHalfOpen BreakerState = "half-open"
	BreakerOpen     BreakerState = "open"
)

func breakerState(s gobreaker.State) BreakerState {
	switch s {
	case gobreaker.StateOpen:
		return BreakerOpen
	case gobreaker.StateHalfOpen:
		return BreakerHalfOpen
	}
	return BreakerClosed
}

type breaker = gobreaker.TwoStepCircuitBreaker[struct{}]

// errNotCounted is reported to the breaker for outcomes that say nothing
// about the upstream: rate limiting, a caller that went away, a reply too
// big for us, pruned state. gobreaker's IsExcluded drops them from the
// counts, which also frees the half-open trial slot they held.
var errNotCounted = errors.New("outcome not counted by the breaker")

func newBreaker(name string, bc BreakerConfig, onChange func(from, to BreakerState)) *breaker {
	n := bc.FailuresToOpen
	return gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: bc.HalfOpenMaxRequests,
		// Interval 0: closed-state counts are never reset by time; only
		// a success resets the consecutive-failure count.
		Timeout: bc.OpenTimeout,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= n
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errNotCounted) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if onChange != nil {
				onChange(breakerState(from), breakerState(to))
			}
		},
	})
}

// trialSlotFree reports whether a half-open breaker would let one more trial
// call through. Selection uses it to steer one call to a recovering upstream
// without picking it again and again while its trial is in flight.
func trialSlotFree(b *breaker, max uint32) bool {
	c := b.Counts()
	valid := c.Requests - min(c.Requests, c.TotalExclusions)
	return valid < max
}
