package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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
	// Exclude names upstreams not to try (a second opinion on some items
	// of a batch goes to another upstream than the first answer's).
	Exclude []string
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
	// NoHedge: never send this read to a second upstream while the first
	// is slow (the method table's no_hedge; writes are never hedged).
	NoHedge bool
	// Validate, when set, checks that a well-formed JSON-RPC reply answers
	// the request sent (every call once, by its id). A reply it refuses is
	// the upstream's fault (blame) and is tried elsewhere.
	Validate func(reply []byte) error
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
// error, per-attempt timeout, HTTP 5xx, not JSON, a reply opts.Validate
// refuses, rate limiting) or answers with an error another upstream may not
// share, it tries another upstream, never the same one twice, while attempts
// remain and ctx allows; see ForwardOptions.NoRetry for calls that must not
// be replayed. Upstreams whose breaker refuses the call are skipped without
// using an attempt. Whether an attempt counts against its upstream is
// blame's decision, made once the call's outcome is known.
//
// A well-formed JSON-RPC error answer is an answer: when no upstream serves
// the call cleanly, the last such answer is returned as served (its
// upstream did the work). Every error returned matches ErrUnavailable and
// is an *UnavailableError.
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
	for _, name := range opts.Exclude {
		exclude[name] = true
	}
	// pending are attempts whose blame waits for evidence: a timeout or an
	// error answer counts against its upstream only if a provider serves
	// the same request cleanly (blame).
	var pending []tried
	var held *tried // the latest error answer, served if nothing better comes
	answers := 0    // error answers another upstream may not share
	hedge := !opts.NoRetry && !opts.NoHedge && opts.Only == "" && !p.cfg.Hedge.Off
	if hedge {
		p.hedges.reads.Add(1)
		p.hedgeBudget.earn(p.cfg.Hedge.MaxShare)
	}
attempts:
	for n := 1; n <= maxAttempts; n++ {
		if err := ctx.Err(); err != nil {
			uerr.Cause = err
			break
		}
		m, done := p.acquire(exclude, opts, false)
		if m == nil {
			break
		}
		exclude[m.up.Name] = true
		var ts []tried
		// A hedge needs a second upstream: in a pool of one (a single
		// provider, no node) no hedge can be sent, and the race would only
		// cost every read a goroutine, a timer and a cancelable context.
		if hedge && n == 1 && n < maxAttempts && len(p.list()) > 1 {
			ts = p.hedged(ctx, m, done, body, timeout, opts, exclude)
			n = ts[len(ts)-1].n
		} else {
			o := p.attempt(ctx, m, body, timeout, opts.Validate)
			p.finish(m, done, o)
			ts = []tried{{m: m, o: o, n: n}}
		}
		for _, t := range ts {
			m, o := t.m, t.o
			if o.served {
				if m.ref.Kind == KindProvider {
					for _, q := range pending {
						// An error answer (a fault code, or a 5xx carrying
						// the node's error) is evidence of nothing when the
						// provider answered with errors too: the call errs
						// (a caller's unknown method, a revert), and a
						// caller who repeats it must not open a breaker.
						// Only a result shows the upstream should have
						// served it.
						if blame(q.o, true) && !(q.o.jsonRPC && q.o.errorsOnly && o.errorsOnly) {
							p.countAgainst(q.m, q.o.reason)
						}
					}
				}
				return t.result(), nil
			}
			uerr.Attempts = append(uerr.Attempts, Attempt{Upstream: m.ref, Err: o.reason, Sent: o.x.sent})
			if o.answer() {
				held = &t
				answers++
			} else if o.jsonRPC {
				uerr.LastReply, uerr.LastUpstream, uerr.LastVerdict = o.x.body, m.ref, o.verdict
			}
			if !blame(o, false) {
				pending = append(pending, t)
			}
			if o.cause != nil {
				uerr.Cause = o.cause
				break attempts
			}
			if opts.NoRetry && o.x.sent {
				break attempts
			}
		}
		// One second opinion is evidence enough: an error two upstreams
		// both give is the call's own outcome, and asking a third would let
		// a poisoned call (or a crafted message, see DefaultClassifier)
		// multiply upstream load.
		if answers >= 2 {
			break
		}
	}
	if held != nil && uerr.Cause == nil {
		return held.result(), nil
	}
	return Result{}, uerr
}

// finish tells m's breaker and statistics how an attempt went.
func (p *Pool) finish(m *member, done func(error), o outcome) {
	now := blame(o, false)
	switch {
	case o.served:
		done(nil)
	case now:
		done(errors.New(o.reason))
	default:
		done(errNotCounted)
	}
	p.record(m, o, now)
}

// hedged runs a read's first attempt on m and, if m has not answered after
// its hedge delay and the hedge budget allows, the same read on a second
// upstream; the first answer served wins and the other attempt is
// cancelled (its connection is kept for reuse when it can be). It returns
// the attempts made, the served one last. The second upstream is picked as
// any attempt is (so a node in probation, or any node for a call only
// providers may answer, is never a hedge).
func (p *Pool) hedged(ctx context.Context, m *member, done func(error), body []byte, timeout time.Duration, opts ForwardOptions, exclude map[string]bool) []tried {
	type res struct {
		m     *member
		o     outcome
		hedge bool
		n     int // 1 for the first attempt, 2 for the hedge
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan res, 2)
	var lost atomic.Bool // a winner was found: the other attempt's end is not its fault
	launch := func(m *member, done func(error), hedge bool) {
		n := 1
		if hedge {
			n = 2
		}
		go func() {
			o := p.attempt(hctx, m, body, timeout, opts.Validate)
			if lost.Load() && o.cause != nil && !o.served {
				// Cancelled because the other answered first: it was at
				// least this slow, which selection must see ("slowness
				// counts"), though nothing failed.
				m.stats.observe(o.x.latency)
			}
			p.finish(m, done, o)
			results <- res{m, o, hedge, n}
		}()
	}
	launch(m, done, false)
	timer := time.NewTimer(p.hedgeDelay(m))
	defer timer.Stop()
	inFlight, sent := 1, false
	var out []tried
	for inFlight > 0 {
		select {
		case r := <-results:
			inFlight--
			if r.o.served {
				lost.Store(true)
				cancel()
				if r.hedge {
					p.hedges.won.Add(1)
				}
				return append(out, tried{m: r.m, o: r.o, n: r.n})
			}
			out = append(out, tried{m: r.m, o: r.o, n: r.n})
		case <-timer.C:
			if sent || !p.hedgeBudget.take() {
				continue
			}
			m2, done2 := p.acquire(exclude, opts, true)
			if m2 == nil {
				continue
			}
			exclude[m2.up.Name] = true
			sent = true
			p.hedges.sent.Add(1)
			inFlight++
			launch(m2, done2, true)
		}
	}
	return out
}

// tried is one attempt of a Forward and its outcome.
type tried struct {
	m *member
	o outcome
	n int // its number within the Forward
}

func (t tried) result() Result {
	return Result{Body: t.o.x.body, Upstream: t.m.ref, Status: t.o.x.status, Attempts: t.n, Latency: t.o.x.latency}
}

// blame is the gateway's one rule for "does this attempt count against its
// upstream" (the breaker and the failure count). The principle: anything a
// caller can provoke at will — an error answer to a crafted call, a heavy
// call timing out — counts only with evidence the caller cannot forge: a
// configured provider serving the same request cleanly in the same Forward.
// What no caller can provoke counts at once. The table (docs/decisions.md,
// "Upstream errors are judged by evidence"):
//
//	outcome                                         counts against the upstream
//	served (a result, or an error of the caller's)  never
//	caller left, reply over the size limit          never
//	rate limited (HTTP 429, -32005 about limits)    never (backed off instead)
//	error answer naming missing state or an         never (another upstream may hold the
//	  unknown block (VerdictSkip)                     state or the block: tried elsewhere)
//	any other error answer (VerdictFault: -32603,   only with evidence
//	  server-side -32000, 5xx with a JSON-RPC body)
//	timeout (the attempt's own, or HTTP 504)        only with evidence
//	a 4xx refusal without a JSON-RPC answer (413,   only with evidence (the caller's request
//	  400, 414, 431…)                                 may have provoked it: its size, its shape)
//	transport failure, bare 5xx, redirect, our      always
//	  credentials refused, not JSON, not JSON-RPC,
//	  a reply that does not match the request
func blame(o outcome, evidence bool) bool {
	switch {
	case o.served, o.cause != nil, o.verdict == VerdictRateLimited:
		return false
	case o.timeout, o.provoked:
		return evidence
	case !o.jsonRPC:
		return o.verdict == VerdictFault
	case o.verdict == VerdictFault:
		return evidence
	}
	return false
}

// countAgainst records a failure of m found after its attempt ended (on
// evidence): in its statistics and in its breaker, as a call that failed.
func (p *Pool) countAgainst(m *member, reason string) {
	m.stats.failure(reason+" (another upstream served the same request)", time.Now())
	if done, err := m.br.Load().Allow(); err == nil {
		done(errors.New(reason))
	}
}

// acquire picks an upstream and reserves it with its breaker. An upstream
// the breaker refuses (it opened since the pick, or its half-open trial
// slots are taken) is excluded and the next one picked. A hedge takes only
// an upstream as good as a first choice — in the ideal tier, with every
// capability the read needs: a retry after a failure may fall back to an
// incapable or lagging upstream, a hedge racing a working one must not.
func (p *Pool) acquire(exclude map[string]bool, opts ForwardOptions, hedge bool) (*member, func(error)) {
	if only := opts.Only; only != "" {
		if exclude[only] {
			return nil, nil
		}
		for _, m := range p.list() {
			if m.up.Name == only && !m.retired.Load() && !p.isQuarantined(m) {
				if done, err := m.br.Load().Allow(); err == nil {
					return m, done
				}
			}
		}
		return nil, nil
	}
	prefer := opts.Prefer
	if hedge {
		prefer = "" // the fastest of the rest, not the first part's upstream
	}
	for {
		need := opts.needs()
		m := p.pick(exclude, opts.NoRetry, prefer, filter{providersOnly: opts.ProvidersOnly, need: need, logsSpan: opts.LogsSpan, idealOnly: hedge})
		if m == nil && !hedge && (len(need) > 0 || opts.LogsSpan > 0) {
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
	jsonRPC    bool   // x.body is a well-formed JSON-RPC reply matching the request
	timeout    bool   // no reply in time (the attempt's own deadline, or HTTP 504)
	served     bool
	platform   bool  // an HTTP 5xx: never an answer, whatever its body
	provoked   bool  // a 4xx refusal without a JSON-RPC answer: counted only with evidence
	errorsOnly bool  // the JSON-RPC reply holds error objects only
	cause      error // ends the Forward: the caller's context, ErrReplyTooLarge
	retryAfter time.Duration
}

// answer reports whether the attempt is an error answer that another
// upstream may not share: relayable as the upstream's own word (and billed
// as its work), worth a second opinion.
func (o outcome) answer() bool {
	return !o.served && o.jsonRPC && !o.platform && (o.verdict == VerdictFault || o.verdict == VerdictSkip)
}

func (p *Pool) attempt(ctx context.Context, m *member, body []byte, timeout time.Duration, validate func([]byte) error) outcome {
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
		// A heavy call times out on any node: counted only when another
		// upstream answers it (blame); a node that hangs fails its probes.
		o.verdict, o.reason, o.timeout = VerdictSkip, "timeout after "+timeout.String(), true
	case x.err != nil:
		o.verdict, o.reason = VerdictFault, m.describe(x.err)
	case x.tooLarge:
		o.cause = ErrReplyTooLarge
		o.reason = fmt.Sprintf("reply larger than %d bytes", p.cfg.MaxReplyBytes)
	default:
		j := classifyReply(x.status, x.body, p.cfg.Classifier)
		o.verdict, o.reason, o.jsonRPC, o.timeout, o.platform, o.provoked, o.errorsOnly = j.verdict, m.red.redact(j.reason), j.jsonRPC, j.timeout, j.platform, j.provoked, j.errorsOnly
		if o.jsonRPC && validate != nil {
			if err := validate(x.body); err != nil {
				// Well-formed, but not an answer to what we asked (ids
				// missing, duplicated or foreign): no caller can make an
				// upstream do that.
				o.verdict, o.jsonRPC = VerdictFault, false
				o.reason = m.red.redact("reply does not match the request: " + err.Error())
			}
		}
		switch {
		case o.verdict != VerdictRateLimited:
		case !j.claimed:
			// HTTP 429: this request was not served (tried elsewhere,
			// refunded if nowhere). The upstream is held rate-limited only
			// if the gateway's own call is limited too: a caller's big
			// batch may draw a 429 an ordinary call would not, and a
			// caller's batch never backs a provider off.
			if limited, retryAfter := p.confirmLimited(ctx, m, timeout); limited {
				o.retryAfter = max(retryAfter, p.backoffFor(x.header))
			}
		default:
			// A limit claimed in the reply's error code: the code is also
			// "query too large" at some providers, so only the gateway's
			// own call, limited too, makes it the upstream's. Otherwise the
			// answer is the caller's, served and billed.
			if limited, retryAfter := p.confirmLimited(ctx, m, timeout); limited {
				o.retryAfter = retryAfter
			} else {
				o.verdict = VerdictOK
			}
		}
		o.served = o.verdict == VerdictOK
	}
	return o
}

// record keeps the attempt in m's statistics; counted says whether blame
// held it against m at once (an attempt waiting for evidence shows as the
// last error until countAgainst counts it).
func (p *Pool) record(m *member, o outcome, counted bool) {
	now := time.Now()
	switch {
	case o.served:
		m.stats.success(o.x.latency)
	case o.cause != nil:
		// Not the upstream's doing; nothing to hold against it.
	case o.verdict == VerdictRateLimited && o.retryAfter == 0:
		// An HTTP 429 to this request that the gateway's own call did not
		// reproduce: not served, but not a limit on the upstream.
		m.stats.noteError(o.reason+" (not reproduced by the gateway's own call)", now)
	case o.verdict == VerdictRateLimited:
		m.stats.rateLimited(o.reason, now)
		m.backOff(o.retryAfter, now)
	case counted:
		m.stats.failure(o.reason, now)
	default:
		m.stats.noteError(o.reason, now)
	}
	if m.retired.Load() {
		// Removed by SetNodes while this call was in flight: do not
		// leave its connection idling in a transport no one will use.
		m.tr.CloseIdleConnections()
	}
}
