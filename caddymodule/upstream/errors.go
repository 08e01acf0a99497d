package upstream

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is matched (errors.Is) by every error Forward returns: no
// upstream could serve the call. The caller answers HTTP 503 with JSON-RPC
// -32603 and refunds the call.
var ErrUnavailable = errors.New("upstream: no upstream could serve the request")

// ErrReplyTooLarge is the Cause when a reply exceeded Config.MaxReplyBytes.
// It is not retried: another upstream would send the same reply.
var ErrReplyTooLarge = errors.New("upstream: reply exceeds the size limit")

// Attempt is one upstream Forward tried without success.
type Attempt struct {
	Upstream Ref `json:"upstream"`
	// Err says what went wrong; it never contains URLs or credentials.
	Err string `json:"error"`
	// Sent is false when the request provably never reached the upstream
	// (the connection could not be set up).
	Sent bool `json:"sent"`
}

// UnavailableError is what Forward returns when nothing served the call.
type UnavailableError struct {
	ChainID  uint64
	Attempts []Attempt
	// LastReply is the body of the last attempt that got a well-formed
	// JSON-RPC reply (say a -32603 error), and LastUpstream who sent it.
	// A caller may relay it instead of a generic error; for a call that
	// must not be replayed it is the upstream's own word on the outcome.
	LastReply    []byte
	LastUpstream Ref
	// LastVerdict is what LastReply said about its upstream: VerdictSkip
	// (the call's own outcome, e.g. an unknown block everywhere: the caller
	// is answered with it as served), VerdictFault or VerdictRateLimited
	// (the upstream failed: relayed, but not charged).
	LastVerdict Verdict
	// Cause is set when the call ended for a reason other than running
	// out of upstreams or attempts: the caller's context (canceled or its
	// deadline passed) or ErrReplyTooLarge.
	Cause error
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v (chain %d)", ErrUnavailable, e.ChainID)
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	if len(e.Attempts) == 0 {
		b.WriteString(": no upstream available")
	}
	for i, a := range e.Attempts {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s: %s", sep, a.Upstream.Name, a.Err)
	}
	return b.String()
}

// Unwrap lets errors.Is match ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrUnavailable, e.Cause}
	}
	return []error{ErrUnavailable}
}
