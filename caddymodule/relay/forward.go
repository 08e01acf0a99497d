package relay

import (
	"context"
	"errors"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Forwarded is the outcome of serving a set of calls.
type Forwarded struct {
	Replies  []jsonrpc.Response // one per call, in order
	Failed   []bool             // call k got no usable answer (refund, no revenue)
	Source   []string           // "cache" or "upstream" per call
	ServedBy events.ServedBy    // who served most of the forwarded part (the cache if nothing was forwarded): a header
	By       []events.ServedBy  // who served call k: the cache, its upstream, or nobody (failed)
	Relayed  bool               // an upstream's answer relayed though it was not served (an error it owns)
}

// Forward serves calls (valid JSON-RPC calls of one chain, already paid
// for): what the edge cache holds from it, the rest upstream
// (forwardCalls), every reply at its call's position.
func (h *Relay) Forward(ctx context.Context, cs *Chain, calls []jsonrpc.Item) Forwarded {
	out := Forwarded{Replies: make([]jsonrpc.Response, len(calls)), Failed: make([]bool, len(calls)), Source: make([]string, len(calls)),
		By: make([]events.ServedBy, len(calls))}
	if len(calls) == 0 {
		return out
	}
	finalized := cs.finalized()
	split := cs.cache.Split(calls, finalized)
	for k := range calls {
		out.Source[k] = "upstream"
		if split.Cached(k) {
			out.Source[k] = "cache"
		}
	}
	if n := len(split.Hits); n > 0 {
		cs.metrics.cacheHits.Add(float64(n))
	}
	if n := len(split.Forward); n > 0 {
		cs.metrics.cacheMiss.Add(float64(n))
	}
	var replies []jsonrpc.Reply
	var refs []upstream.Ref
	if len(split.Upstream) == 0 {
		out.ServedBy = events.ServedByCache
	} else {
		replies, refs, out.Relayed = h.forwardCalls(ctx, cs, split.Upstream)
		out.ServedBy = mainRef(refs).ServedBy()
	}
	for k, rep := range split.Merge(replies, cs.finalized()) {
		out.Replies[k] = rep.Response
		out.Failed[k] = rep.Err != nil
		if split.Cached(k) && !out.Failed[k] {
			out.By[k] = events.ServedByCache
		}
	}
	for j, k := range split.Forward {
		switch {
		case out.Failed[k]:
		case j < len(refs) && refs[j] != (upstream.Ref{}):
			out.By[k] = refs[j].ServedBy()
		default:
			// Answered here without an upstream (a filter id no upstream
			// made): the gateway's, like a cached answer.
			out.By[k] = events.ServedByCache
		}
	}
	return out
}

// mainRef is the upstream that served the most of refs (a header, and the
// upstream the rest of a split batch prefers); none if none served.
func mainRef(refs []upstream.Ref) upstream.Ref {
	if len(refs) > 0 && !slices.ContainsFunc(refs[1:], func(r upstream.Ref) bool { return r != refs[0] }) {
		return refs[0] // one server (or none): the usual case, no map
	}
	n := map[upstream.Ref]int{}
	best := upstream.Ref{}
	for _, r := range refs {
		if r == (upstream.Ref{}) {
			continue
		}
		n[r]++
		if best == (upstream.Ref{}) || n[r] > n[best] {
			best = r
		}
	}
	return best
}

// forwardUpstream sends the calls the cache could not answer upstream, in
// sub-batches of at most upstream_max_batch calls: the first alone, the
// rest in parallel preferring the upstream the first went to, so one
// upstream serves the caller's batch unless it fails. It returns one reply
// per call in order, who served each (the zero Ref for a call no upstream
// served), and whether any part is an upstream's answer relayed although
// it did not count as served.
func (h *Relay) forwardUpstream(ctx context.Context, cs *Chain, calls []jsonrpc.Item) ([]jsonrpc.Reply, []upstream.Ref, bool) {
	size := h.Upstreams.MaxBatch
	if size <= 0 || len(calls) <= size {
		return h.forwardPart(ctx, cs, calls, "", "")
	}
	replies := make([]jsonrpc.Reply, 0, len(calls))
	refs := make([]upstream.Ref, 0, len(calls))
	first, firstRefs, relayed := h.forwardPart(ctx, cs, calls[:size], "", "")
	replies, refs = append(replies, first...), append(refs, firstRefs...)
	prefer := mainRef(firstRefs).Name
	type part struct {
		replies []jsonrpc.Reply
		refs    []upstream.Ref
		relayed bool
	}
	rest := calls[size:]
	parts := make([]part, (len(rest)+size-1)/size)
	sem := make(chan struct{}, subBatchConcurrency)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			chunk := rest[i*size : min((i+1)*size, len(rest))]
			r, f, rel := h.forwardPart(ctx, cs, chunk, prefer, "")
			parts[i] = part{r, f, rel}
		}()
	}
	wg.Wait()
	for _, p := range parts {
		replies, refs = append(replies, p.replies...), append(refs, p.refs...)
		relayed = relayed || p.relayed
	}
	return replies, refs, relayed
}

// requestIDKey carries the metered request's id down to the parts that
// forward it, so the verifier's evidence names the caller's request.
type requestIDKey struct{}

// WithRequestID is ctx carrying the metered request's id (requestIDKey).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// maxHedgedCalls is the largest part hedged: a hedge of a big batch would
// double a big chunk of work to save the wait of its slowest call.
const maxHedgedCalls = 16

// subBatchConcurrency bounds the sub-batches of one caller's batch in
// flight at once.
const subBatchConcurrency = 4

// forwardPart serves calls as one upstream request (preferring the
// upstream named prefer, or only to the one named only, if any), on one
// path every read takes: plan (the method table decides pins, retry, hedge
// and who may answer: plan.go), forward (upstream.Pool.Forward picks,
// hedges and retries as planned), judge (what the caller gets and who is
// paid). It returns the replies, who served each call (the zero Ref: none
// did, refunded) and whether an unserved upstream answer was relayed.
func (h *Relay) forwardPart(ctx context.Context, cs *Chain, calls []jsonrpc.Item, prefer, only string) ([]jsonrpc.Reply, []upstream.Ref, bool) {
	p := h.plan(cs, calls, prefer, only)
	calls = p.trust.Calls
	body, err := jsonrpc.EncodeUpstream(calls)
	if err != nil { // cannot happen for valid items; answer rather than panic
		return failAll(calls, jsonrpc.InternalError("could not encode the upstream request"), err), make([]upstream.Ref, len(calls)), false
	}
	// The reply each attempt got is matched to the calls once: a reply that
	// does not answer them counts against its upstream (upstream.blame),
	// and the served one is used as matched.
	var matched []jsonrpc.Reply
	var matchedBody []byte
	p.opts.Validate = func(reply []byte) error {
		r, err := jsonrpc.MatchReplies(calls, reply)
		if err != nil && !errors.As(err, new(*jsonrpc.UpstreamError)) {
			return err
		}
		matched, matchedBody = r, reply
		return nil
	}
	res, err := cs.pool.Forward(ctx, body, p.opts)
	if err != nil {
		return h.unserved(cs, calls, err)
	}
	// Served: a result, or an upstream's error answer, which is its work
	// and is charged like a result (its revenue goes to that upstream).
	replies := matched
	if !sameBytes(matchedBody, res.Body) {
		replies, _ = jsonrpc.MatchReplies(calls, res.Body)
	}
	untrusted(replies, res.Upstream)
	return h.judge(ctx, cs, p, calls, body, res, replies)
}

// failAll answers every call with e (cause: why, for the books).
func failAll(calls []jsonrpc.Item, e *jsonrpc.Error, cause error) []jsonrpc.Reply {
	out := make([]jsonrpc.Reply, len(calls))
	for k := range out {
		out[k] = jsonrpc.Reply{Response: jsonrpc.ErrorResponse(calls[k].ResponseID(), e), Err: cause}
	}
	return out
}

// unserved answers a part no upstream served: none is charged.
func (h *Relay) unserved(cs *Chain, calls []jsonrpc.Item, err error) ([]jsonrpc.Reply, []upstream.Ref, bool) {
	var uerr *upstream.UnavailableError
	if errors.As(err, &uerr) && uerr.LastReply != nil {
		// An upstream replied but did not serve the call (it throttles
		// us, or its reply does not answer the request): the caller
		// gets its words rather than a made-up 503, and is not charged.
		// Only its error objects are relayed: a result in an unserved
		// reply (an HTTP 5xx carrying the node's answers) would be
		// service the caller does not pay for.
		replies, _ := jsonrpc.MatchReplies(calls, uerr.LastReply)
		untrusted(replies, uerr.LastUpstream)
		relayed := false
		for k := range replies {
			if replies[k].Err == nil {
				replies[k].Err = err
			}
			if replies[k].Error == nil {
				replies[k].Response = jsonrpc.ErrorResponse(calls[k].ResponseID(),
					jsonrpc.UpstreamUnavailable("the upstream failed the call; not charged"))
			} else {
				relayed = true
			}
		}
		return replies, make([]upstream.Ref, len(calls)), relayed
	}
	h.logger.Debug("no upstream could serve", zap.Uint64("chain_id", cs.chain.ID), zap.Error(err))
	return failAll(calls, jsonrpc.UpstreamUnavailable("no upstream available for chain "+cs.chain.HexID()), err), make([]upstream.Ref, len(calls)), false
}

// judge decides, once an upstream served the part, what the caller gets
// and who is paid: a node's answer is screened, proved where proof is
// cheap, its sync receipts judged, and offered to the background checks;
// a provider's answer is shadow material for nodes in probation; a batch's
// items get second opinions.
func (h *Relay) judge(ctx context.Context, cs *Chain, p readPlan, calls []jsonrpc.Item, body []byte, res upstream.Result,
	replies []jsonrpc.Reply) ([]jsonrpc.Reply, []upstream.Ref, bool) {
	var gatewayCapped []bool // replies capResponses replaced: the caller's answer, not an upstream's claim
	if p.capped {            // else no reply can be over a cap: no second lookup per call
		gatewayCapped = capResponses(cs.methods, calls, replies)
	}
	rid, _ := ctx.Value(requestIDKey{}).(string)
	switch {
	case res.Upstream.Kind == upstream.KindNode:
		job := verify.Job{Pool: cs.pool, ChainID: cs.chain.ID, RequestID: rid, Node: res.Upstream, Calls: calls, Replies: replies,
			Finalized: cs.finalized(), Pins: p.trust.Pins, BlockTime: cs.chain.BlockTime}
		if h.verifier != nil {
			if why := trust.Screen(calls, replies, p.trust.Pins, cs.head); why != "" {
				// Each item is booked to whoever gave the caller its
				// answer: the provider that answered instead, or withheld.
				sr, by, relayed := h.screened(ctx, cs, job, body, p.opts, p.capped, why)
				return sr, servedBy(sr, by), relayed
			}
			// Provable answers (state reads, block headers and, where the
			// chain's bodies are proved, transactions, receipts and a
			// block's logs) are proved before delivery (verify.Prove):
			// node round trips, no provider replay.
			job.NoReroute = p.opts.NoRetry
			if why := h.verifier.Prove(ctx, &job, cs.head); why != "" {
				sr, by, relayed := h.screened(ctx, cs, job, body, p.opts, p.capped, why)
				return sr, servedBy(sr, by), relayed
			}
			replies = job.Replies
			if hasSend(p.trust.Pins) {
				// A sync send's receipt is judged before the caller sees
				// it: a lie is replaced by the provider's receipt, and the
				// part earns the node nothing.
				if judged, replaced, convicted := h.verifier.JudgeSyncReceipts(ctx, job); replaced {
					if !convicted {
						h.verifier.Offer(job) // unlike, unproven: the background check may prove it later
					}
					return judged, servedBy(judged, withheld), false
				}
			}
			if job.Withhold { // a send's part with answers Prove could not prove
				h.verifier.Offer(job)
				return replies, servedBy(replies, withheld), false
			}
		}
		h.verifier.Offer(job)
	case p.trust.Shadow:
		// A provider answered the caller: a node in probation may be asked
		// the same, and judged by that answer.
		cs.probation.noteShadow()
		h.shadower.Offer(cs.pool, cs.chain.ID, cs.chain.BlockTime, rid, res.Upstream.Name, calls, p.trust.Pins, replies)
	}
	refs := servedBy(replies, res.Upstream)
	if len(calls) > 1 && p.opts.Only == "" {
		// The verifier and the shadow keep the first upstream's own
		// answers; the caller's may change below.
		replies = slices.Clone(replies)
		h.secondOpinions(ctx, cs, calls, replies, refs, res.Upstream, p.capped, gatewayCapped)
	}
	return replies, refs, false
}

// servedBy names by as the server of every reply that was served (no
// transport error), and no one for the others.
func servedBy(replies []jsonrpc.Reply, by upstream.Ref) []upstream.Ref {
	refs := make([]upstream.Ref, len(replies))
	for k := range refs {
		if replies[k].Err == nil {
			refs[k] = by
		}
	}
	return refs
}

// hasSend: the part holds a send.
func hasSend(pins []verify.Pin) bool {
	for _, p := range pins {
		if p.Judge == evm.JudgeSend {
			return true
		}
	}
	return false
}

// refusedSend: a send of the part the node refused (never sent again).
func refusedSend(job verify.Job) bool {
	for k, p := range job.Pins {
		if p.Judge == evm.JudgeSend && k < len(job.Replies) && (job.Replies[k].Err != nil || job.Replies[k].Response.Error != nil) {
			return true
		}
	}
	return false
}

// swappedReply replaces a node's send answer whose hash is not its
// transaction's: whether the node passed the transaction on is unknown.
func swappedReply(r jsonrpc.Reply) jsonrpc.Reply {
	r.Result = nil
	r.Response.Error = &jsonrpc.Error{Code: -32603, Message: "the node's answer was not this transaction's hash; it may not have been sent"}
	return r
}

// withheld is who a request is booked to when a node answered it with
// something it is not paid for before it is judged (a refused send, or an
// answer the providers could not give instead): no node, so the node's
// share of the revenue is the house's and the epoch's sums stay exact.
var withheld = upstream.Ref{Name: "withheld", Kind: upstream.KindProvider}

// screened serves a part whose node answer trust.Screen turned away (an
// error, null or [], a block the providers do not have at that height):
// the same calls go to a provider, whose answer the caller gets and which
// earns the revenue; the node's answer is judged by it (always, at no
// further provider call). A send is never sent twice: its refusal is
// delivered and withheld. If no provider answers, the node's answer goes
// out, withheld too — unless it was proven wrong (verify.WhyDisproved):
// then the caller gets an error, not charged.
func (h *Relay) screened(ctx context.Context, cs *Chain, job verify.Job, body []byte, opts upstream.ForwardOptions,
	capped bool, why string) ([]jsonrpc.Reply, upstream.Ref, bool) {
	metrics.Verifications.WithLabelValues("screened").Inc()
	h.logger.Debug("node answer screened out: rerouted to a provider", zap.Uint64("chain_id", cs.chain.ID),
		zap.String("node", job.Node.Name), zap.String("why", why))
	if opts.NoRetry && !(why == trust.SwappedSend && !refusedSend(job)) {
		// A sync send's receipt goes out here unrerouted, so it is judged
		// before delivery as on the unscreened path: a receipt naming a
		// block the providers have not seen yet (or another block at a
		// height) was screened and once went out as the node gave it,
		// flipped status and all.
		judged, _, convicted := h.verifier.JudgeSyncReceipts(ctx, job)
		if !convicted {
			h.verifier.Offer(job) // judged by the node's own answers
		}
		replies := judged
		if why == trust.SwappedSend {
			// Another send of this part was refused by the node and may
			// not be sent again: the swapped hashes are replaced by an
			// error (the node's hash must never reach the caller).
			replies = append([]jsonrpc.Reply(nil), judged...)
			for _, k := range trust.SwappedSends(job.Calls, job.Replies, job.Pins) {
				replies[k] = swappedReply(replies[k])
			}
		}
		return replies, withheld, false
	}
	// A part with a swapped send (and no refused one) goes to a provider
	// whole: the same signed bytes, which cannot be made twice.
	opts.ProvidersOnly, opts.Validate, opts.Prefer = true, nil, ""
	res, err := cs.pool.Forward(ctx, body, opts)
	var trusted []jsonrpc.Reply
	if err == nil {
		trusted, err = jsonrpc.MatchReplies(job.Calls, res.Body)
		if err != nil && errors.As(err, new(*jsonrpc.UpstreamError)) {
			err = nil
		}
	}
	if err != nil {
		h.verifier.Offer(job)
		if why == verify.WhyDisproved {
			// No provider took the part of an answer proven false here
			// (by the node's own proof against a header the gateway held):
			// no answer of the convicted node's part goes out, and the
			// caller is not charged for it.
			return failAll(job.Calls, jsonrpc.UpstreamUnavailable("the node's answer was proven wrong and no provider answered; not charged"), err),
				upstream.Ref{}, false
		}
		// No provider took the part: a swapped send's hash is still not
		// its transaction's and must not reach the caller.
		replies := job.Replies
		if swapped := trust.SwappedSends(job.Calls, job.Replies, job.Pins); len(swapped) > 0 {
			replies = append([]jsonrpc.Reply(nil), job.Replies...)
			for _, k := range swapped {
				replies[k] = swappedReply(replies[k])
			}
		}
		return replies, withheld, false
	}
	job.Trusted, job.TrustedBy = trusted, res.Upstream.Name
	h.verifier.Offer(job)
	replies := append([]jsonrpc.Reply(nil), trusted...)
	if capped {
		capResponses(cs.methods, job.Calls, replies)
	}
	return replies, res.Upstream, false
}

// errClaimedLimit marks a batch item whose upstream claimed a rate limit the
// gateway's own call confirmed: not served, unless another upstream serves it.
var errClaimedLimit = errors.New("the upstream rate-limits the gateway (confirmed by the gateway's own call)")

// secondOpinions judges a served batch's items one by one, as a single
// call's reply is judged in upstream.Forward: an item whose error another
// upstream may not share (the pool's classifier: a fault code, missing
// state, or words that only ever buy a second opinion) is asked once more
// of another provider, at the gateway's cost, and a better answer (a
// result, or an error the classifier calls the caller's) replaces it,
// credited to that provider. An item claiming a rate limit in its code is
// believed only if the gateway's own call to the upstream is limited too
// (upstream.Pool.ConfirmLimited, which then backs the upstream off): then
// it is not served unless the second opinion serves it, and refunded. An
// unconfirmed claim is the caller's answer, billed. Nothing here counts
// against an upstream or backs one off on the item's word: a caller's batch
// is the caller's to shape. Every flagged item is asked at most once more,
// in one request, so a batch of crafted items costs at most twice its calls
// upstream, and the caller pays for every call served. Calls that must not
// be replayed (sends) are never asked twice.
func (h *Relay) secondOpinions(ctx context.Context, cs *Chain, calls []jsonrpc.Item, replies []jsonrpc.Reply, refs []upstream.Ref,
	first upstream.Ref, capped bool, gatewayCapped []bool) {
	var ask []int
	// A send is never asked twice (it may have gone out), but the other
	// items of its batch are judged like any batch's: a limit the gateway's
	// own call confirms is refunded beside a send too.
	noRetry := func(k int) bool { return cs.methods.Lookup(calls[k].Method).NoRetry }
	confirmed := 0 // 0: not checked, 1: limited, -1: not
	for k := range replies {
		e := replies[k].Error
		if replies[k].Err != nil || e == nil || (gatewayCapped != nil && gatewayCapped[k]) {
			// No error, or the gateway's own cap on a served answer
			// (capResponses): the caller's, charged, never asked again.
			continue
		}
		switch cs.pool.Classify(upstream.RPCError{Code: e.Code, Message: e.Message}) {
		case upstream.VerdictRateLimited:
			if confirmed == 0 {
				confirmed = -1
				if cs.pool.ConfirmLimited(ctx, first.Name) {
					confirmed = 1
				}
			}
			if confirmed == 1 {
				replies[k].Err, refs[k] = errClaimedLimit, upstream.Ref{}
				if !noRetry(k) {
					ask = append(ask, k)
				}
			}
		case upstream.VerdictSkip, upstream.VerdictFault:
			if !noRetry(k) {
				ask = append(ask, k)
			}
		}
	}
	if len(ask) == 0 {
		return
	}
	sub := make([]jsonrpc.Item, len(ask))
	for i, k := range ask {
		sub[i] = calls[k]
	}
	body, err := jsonrpc.EncodeUpstream(sub)
	if err != nil {
		return
	}
	// To a configured provider only: a node's answer is verified against
	// the request it was sent, and this one is not offered to the verifier.
	res, err := cs.pool.Forward(ctx, body, upstream.ForwardOptions{Exclude: []string{first.Name}, MaxAttempts: 1, ProvidersOnly: true, NoHedge: true,
		Validate: func(reply []byte) error {
			_, err := jsonrpc.MatchReplies(sub, reply)
			if err != nil && !errors.As(err, new(*jsonrpc.UpstreamError)) {
				return err
			}
			return nil
		}})
	if err != nil {
		return
	}
	second, _ := jsonrpc.MatchReplies(sub, res.Body)
	if capped {
		capResponses(cs.methods, sub, second)
	}
	for i, k := range ask {
		r := second[i]
		if r.Err != nil {
			continue
		}
		if r.Error != nil && cs.pool.Classify(upstream.RPCError{Code: r.Error.Code, Message: r.Error.Message}) != upstream.VerdictOK {
			// No better: the first answer stands (served and billed,
			// unless it was a confirmed limit: refunded).
			continue
		}
		replies[k], refs[k] = r, res.Upstream
	}
}

// capResponses replaces a result larger than its method's cap
// (max_response_bytes) with a CodeAnswerTooLarge error naming the cap (a
// code no default client retries: it is charged). The call stays
// served and charged: the upstream did the work the caller asked for, and
// a free oversized answer would let a stranger make nodes work unpaid at
// will. It runs before the verifier and the cache see the replies.
//
// It returns which replies it capped (nil if none): their -32005 is the
// gateway's own, never an upstream's limit claim (secondOpinions).
func capResponses(t *evm.Table, calls []jsonrpc.Item, replies []jsonrpc.Reply) []bool {
	var capped []bool
	for k := range replies {
		r := &replies[k]
		if r.Err != nil || r.Error != nil {
			continue
		}
		limit := t.Lookup(calls[k].Method).MaxResponseBytes
		if limit <= 0 || int64(len(r.Result)) <= limit {
			continue
		}
		r.Response = jsonrpc.ErrorResponse(r.ID, jsonrpc.AnswerTooLarge(calls[k].Method, len(r.Result), limit))
		if capped == nil {
			capped = make([]bool, len(replies))
		}
		capped[k] = true
	}
	return capped
}

// sameBytes reports whether a and b are the same slice (not equal content:
// the same memory), so a reply matched during Forward is not matched again.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

func appendOnce(s []upstream.Capability, c upstream.Capability) []upstream.Capability {
	if slices.Contains(s, c) {
		return s
	}
	return append(s, c)
}

// untrusted marks the replies of a registered node: only the configured
// providers' answers are kept in the edge cache (a node's lie about a final
// block would otherwise be served to every later caller, after the node
// has gone).
func untrusted(replies []jsonrpc.Reply, by upstream.Ref) {
	if by.Kind != upstream.KindNode {
		return
	}
	for k := range replies {
		replies[k].Untrusted = true
	}
}
