package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ForwardOptions tune one Forward call. Zero values take the pool's config.
type ForwardOptions struct {
	// NoRetry: the body must not be replayed on another upstream once an
	// upstream may have received it. Set it for eth_sendRawTransaction:
	// after a timeout or a 5xx we cannot know whether the transaction was
	// accepted, and resending it elsewhere turns one ambiguous answer into
	// several ("already known", "nonce too low") for the client to untangle.
	//
	// A failure before the request headers were written (DNS, connect,
	// TLS handshake, or the breaker/back-off refusing the upstream) still
	// fails over: nothing left this process, so nothing can be replayed.
	NoRetry bool
	// MaxAttempts overrides Config.MaxAttempts for this call.
	MaxAttempts int
	// AttemptTimeout overrides Config.AttemptTimeout for this call.
	AttemptTimeout time.Duration
	// Prefer names the upstream to try first when it is among the best
	// candidates (the parts of one caller's batch go to one upstream, so
	// one upstream is credited with serving it).
	Prefer string
	// Only names the one upstream the call may go to (a filter lives on the
	// upstream that created it); none other is tried.
	Only string
	// ProvidersOnly keeps the call to the configured providers (the
	// answer verifier asks them, never another stranger's node).
	ProvidersOnly bool
	// NeedArchive: the call reads state older than a full node keeps; it
	// goes to upstreams whose probe found archive state, while any does.
	NeedArchive bool
	// Need: other capabilities the call needs (CapDebug, CapTrace), with
	// the same rule.
	Need []Capability
	// LogsSpan is the widest eth_getLogs range in the call (0: none): it
	// goes to upstreams whose probe found they serve it, while any does.
	LogsSpan uint64
}

// needs is every capability opts asks for.
func (opts ForwardOptions) needs() []Capability {
	if !opts.NeedArchive {
		return opts.Need
	}
	return append([]Capability{CapArchive}, opts.Need...)
}

// Result is a served call.
type Result struct {
	// Body is the upstream's reply, unchanged.
	Body []byte
	// Upstream is who served it (for the revenue event: Upstream.EventName).
	Upstream Ref
	// Status is the upstream's HTTP status (normally 200).
	Status int
	// Attempts counts the upstreams tried, the serving one included.
	Attempts int
	// Latency is the serving attempt's round trip.
	Latency time.Duration
}

// Forward sends body (a JSON-RPC request or batch, passed through as is) to
// the best upstream and returns its reply. When the attempt fails (transport
// error, per-attempt timeout, HTTP 5xx, not JSON, a JSON-RPC error the
// classifier blames on the upstream, rate limiting) it tries another
// upstream, never the same one twice, while attempts remain and ctx allows;
// see ForwardOptions.NoRetry for calls that must not be replayed. Upstreams
// whose breaker refuses the call are skipped without using an attempt.
//
// Every error returned matches ErrUnavailable and is an *UnavailableError.
func (p *Pool) Forward(ctx context.Context, body []byte, opts ForwardOptions) (Result, error) {
	maxAttempts := opts.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = p.cfg.MaxAttempts
	}
	timeout := opts.AttemptTimeout
	if timeout <= 0 {
		timeout = p.cfg.AttemptTimeout
	}
	uerr := &UnavailableError{ChainID: p.cfg.ChainID}
	exclude := map[string]bool{}
	for n := 1; n <= maxAttempts; n++ {
		if err := ctx.Err(); err != nil {
			uerr.Cause = err
			break
		}
		m, done := p.acquire(exclude, opts)
		if m == nil {
			break
		}
		exclude[m.up.Name] = true
		o := p.attempt(ctx, m, body, timeout)
		done(o.breakerErr())
		p.record(m, o)
		if o.served {
			return Result{Body: o.x.body, Upstream: m.ref, Status: o.x.status, Attempts: n, Latency: o.x.latency}, nil
		}
		uerr.Attempts = append(uerr.Attempts, Attempt{Upstream: m.ref, Err: o.reason, Sent: o.x.sent})
		if o.jsonRPC {
			uerr.LastReply, uerr.LastUpstream, uerr.LastVerdict = o.x.body, m.ref, o.verdict
		}
		if o.cause != nil {
			uerr.Cause = o.cause
			break
		}
		if opts.NoRetry && o.x.sent {
			break
		}
	}
	return Result{}, uerr
}

// acquire picks an upstream and reserves it with its breaker. An upstream
// the breaker refuses (it opened since the pick, or its half-open trial
// slots are taken) is excluded and the next one picked.
func (p *Pool) acquire(exclude map[string]bool, opts ForwardOptions) (*member, func(error)) {
	if only := opts.Only; only != "" {
		if exclude[only] {
			return nil, nil
		}
		for _, m := range p.list() {
			if _, q := p.quarantined.of(only); m.up.Name == only && !m.retired.Load() && !q {
				if done, err := m.br.Load().Allow(); err == nil {
					return m, done
				}
			}
		}
		return nil, nil
	}
	for {
		need := opts.needs()
		m := p.pick(exclude, opts.NoRetry, opts.Prefer, filter{providersOnly: opts.ProvidersOnly, need: need, logsSpan: opts.LogsSpan})
		if m == nil && (len(need) > 0 || opts.LogsSpan > 0) {
			// No capable upstream left: another may still answer (a young
			// chain's full node has block 1) or says it cannot.
			m = p.pick(exclude, opts.NoRetry, opts.Prefer, filter{providersOnly: opts.ProvidersOnly})
		}
		if m == nil {
			return nil, nil
		}
		done, err := m.br.Load().Allow()
		if err == nil {
			return m, done
		}
		exclude[m.up.Name] = true
	}
}

// outcome is one attempt, judged.
type outcome struct {
	x          exchange
	verdict    Verdict
	reason     string // redacted
	jsonRPC    bool   // x.body is a well-formed JSON-RPC reply
	served     bool
	cause      error // ends the Forward: the caller's context, ErrReplyTooLarge
	retryAfter time.Duration
}

func (p *Pool) attempt(ctx context.Context, m *member, body []byte, timeout time.Duration) outcome {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	x := m.post(actx, body, p.cfg.MaxReplyBytes)
	o := outcome{x: x}
	switch {
	case x.err != nil && ctx.Err() != nil:
		// The caller gave up (client gone, or the request deadline
		// passed before our own attempt timeout). That says nothing
		// reliable about the upstream, and counting it would let
		// clients with short deadlines open breakers.
		o.cause = ctx.Err()
		o.reason = "request ended: " + ctx.Err().Error()
	case x.err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		// A heavy call times out on any node: not held against this one
		// (DefaultClassifier's table); a node that hangs fails its probes.
		o.verdict, o.reason = VerdictSkip, "timeout after "+timeout.String()
	case x.err != nil:
		o.verdict, o.reason = VerdictFault, m.describe(x.err)
	case x.tooLarge:
		o.cause = ErrReplyTooLarge
		o.reason = fmt.Sprintf("reply larger than %d bytes", p.cfg.MaxReplyBytes)
	default:
		j := classifyReply(x.status, x.body, p.cfg.Classifier)
		o.verdict, o.reason, o.jsonRPC = j.verdict, m.red.redact(j.reason), j.jsonRPC
		o.served = j.verdict == VerdictOK
		if j.verdict == VerdictRateLimited {
			o.retryAfter = p.backoffFor(x.header)
		}
	}
	return o
}

// breakerErr is what the breaker is told: nil for success, an error for a
// fault, errNotCounted for outcomes that are not the upstream failing
// (rate limiting, pruned state, the caller leaving, an oversized reply).
func (o outcome) breakerErr() error {
	switch {
	case o.served:
		return nil
	case o.cause == nil && o.verdict == VerdictFault:
		return errors.New(o.reason)
	}
	return errNotCounted
}

func (p *Pool) record(m *member, o outcome) {
	now := time.Now()
	switch {
	case o.served:
		m.stats.success(o.x.latency)
	case o.cause != nil:
		// Not the upstream's doing; nothing to hold against it.
	case o.verdict == VerdictRateLimited:
		m.stats.rateLimited(o.reason, now)
		m.backOff(o.retryAfter, now)
	case o.verdict == VerdictSkip:
		// Shown as the last error, never counted as a failure.
		m.stats.noteError(o.reason, now)
	default:
		m.stats.failure(o.reason, now)
	}
	if m.retired.Load() {
		// Removed by SetNodes while this call was in flight: do not
		// leave its connection idling in a transport no one will use.
		m.tr.CloseIdleConnections()
	}
}
