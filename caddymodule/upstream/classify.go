package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Verdict is what one reply says about the upstream that sent it.
type Verdict int

const (
	// VerdictOK: the upstream did its job. A JSON-RPC error in the reply,
	// if any, belongs to the caller (bad params, reverted call, nonce too
	// low) and is relayed as is.
	VerdictOK Verdict = iota
	// VerdictSkip: this upstream did not serve this call but is not shown
	// to be broken: a full node asked for pruned state, an unknown block
	// (a lagging node, or one the caller made up), a timeout (a heavy call,
	// or a hung node that its probes will find). Try another upstream; an
	// answer of this kind is never counted against its upstream (a timeout
	// only with evidence, see blame). When every upstream skips, the caller
	// gets the last upstream's own answer, as served.
	VerdictSkip
	// VerdictRateLimited: the upstream throttles us (HTTP 429), or says so
	// in an error code (429, -32005) — a claim the gateway's own probe call
	// must reproduce before it is believed (Forward turns an unconfirmed
	// claim into the caller's answer). Back off from it for a while and try
	// another upstream, but do not count it as a failure: it is healthy,
	// only busy, and opening its breaker would keep it out for the whole
	// open timeout.
	VerdictRateLimited
	// VerdictFault: the upstream may have failed. Without a JSON-RPC body
	// (transport error, bare 5xx, not JSON) it counts against the breaker
	// at once. An error answer of this kind (-32603, a node's own -32000
	// condition) is only suspect: the call is asked once more elsewhere,
	// and the answer counts against its upstream only if a provider then
	// serves the call cleanly (blame). Otherwise it is the call's own
	// outcome, relayed and billed.
	VerdictFault
)

func (v Verdict) String() string {
	switch v {
	case VerdictOK:
		return "ok"
	case VerdictSkip:
		return "skip"
	case VerdictRateLimited:
		return "rate-limited"
	case VerdictFault:
		return "fault"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// RPCError is a JSON-RPC error object as found in a reply.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ErrorClassifier decides what a JSON-RPC error object in a reply suggests:
// the caller's outcome, the upstream's suspected fault (worth a second
// opinion), missing state, or a claimed rate limit. It never decides alone
// that an upstream failed: evidence does (blame). A claimed rate limit is
// held against the upstream only when the gateway's own probe call
// reproduces it (confirmLimited).
// It is called for the error object of a single reply; a batch's items are
// judged one by one by whoever serves the batch (Pool.Classify), never
// folded into one verdict for the whole batch. It must be safe for
// concurrent use.
type ErrorClassifier func(e RPCError) Verdict

// DefaultClassifier says which error answers deserve a second opinion from
// another upstream. It decides cost (which errors are asked twice), never
// money and never health. Billing and blame are decided by codes, HTTP
// status and evidence only: an error message is the upstream's text, and
// upstreams echo the caller's input in it ("the method quota_x does not
// exist", "invalid argument 0: …"), so any word list that decided a refund
// or a back-off would be a lever every stranger holds. Text may only turn a
// code's verdict into "ask another upstream" (VerdictSkip, never counted
// against anyone) or spare a second opinion (VerdictOK). The cost of the
// first is bounded: Forward stops after a second error answer, so a crafted
// message buys at most one extra upstream call per call the caller pays
// for.
//
//	error                                              verdict
//	code 429 or -32005                                 VerdictRateLimited: a claimed limit; the
//	                                                     gateway's own probe call decides (Forward,
//	                                                     confirmLimited): limited too, the upstream is
//	                                                     backed off and the call tried elsewhere
//	                                                     (refunded if none serves it); else the answer
//	                                                     is the caller's (-32005 is also "query too
//	                                                     large"), billed
//	-32002, -32011, -32012, -32014, -32016, and        VerdictFault: suspect (resource unavailable,
//	  HTTP-style codes 401 402 403 500 502 503 504       no healthy backend, our key, billing or
//	                                                     capacity): counted only with evidence
//	-32603 naming a caller condition (revert, timeout  VerdictOK (text only spares a second opinion)
//	  of the call, invalid input)
//	-32603 otherwise                                   VerdictFault: suspect
//	-32000..-32099 naming missing or pruned state,     VerdictSkip: asked once more elsewhere (another
//	  an unknown block, or the node's own condition      upstream may hold the state, see the block or
//	  (database, syncing, busy)                          be well); never counted, billed as any answer
//	-32000..-32099 otherwise (reverts, nonce, fees,    VerdictOK: relayed as is
//	  funds, gas, malformed or known transactions,
//	  execution timeouts of the caller's call, …)
//	anything else (-32700, -32600, -32601, -32602,     VerdictOK
//	  3 = execution reverted, -32001, -32003, …)
//
// No message makes a call free or an upstream rate-limited: "quota",
// "rate limit", "too many requests" or "capacity" in a message mean
// nothing unless the code says the same (and for a limit, our own probe
// confirms it).
//
// Transport outcomes are judged in classifyReply and Forward: a connection
// that cannot be made, a 5xx, or a reply that is not JSON-RPC is not an
// answer (refunded, never credited); a bare one is a fault at once; a
// timeout (the attempt's own, or a 504 from the provider's proxy) counts
// only with evidence, because a heavy call makes any node time out — a node
// that really hangs is found by its probes.
func DefaultClassifier(e RPCError) Verdict {
	switch {
	case e.Code == http.StatusTooManyRequests || e.Code == -32005:
		return VerdictRateLimited
	case upstreamCodes[e.Code]:
		return VerdictFault
	case e.Code == -32603:
		if containsAny(strings.ToLower(e.Message), callerConditionHints) {
			return VerdictOK
		}
		return VerdictFault
	case e.Code <= -32000 && e.Code >= -32099:
		if containsAny(strings.ToLower(e.Message), askElsewhereHints) {
			return VerdictSkip
		}
		return VerdictOK
	}
	return VerdictOK
}

// upstreamCodes are codes that only describe the upstream (its capacity,
// our credentials or billing with it), whatever the message.
var upstreamCodes = map[int]bool{
	-32002: true, -32011: true, -32012: true, -32014: true, -32016: true,
	401: true, 402: true, 403: true, 500: true, 502: true, 503: true, 504: true,
}

var (
	// askElsewhereHints: a -32000 range error another upstream may not
	// share (missing or pruned state, an unknown block, the node's own
	// trouble). Only a second opinion at our cost; never blame, never a
	// refund.
	askElsewhereHints = []string{
		"missing trie node", "pruned", "historical state", "not available in this node", "state is not available",
		"state not available", "required historical state",
		"header not found", "header for hash not found", "unknown block", "block not found",
		"internal error", "database", "leveldb", "pebble", "no suitable peers", "no peers available",
		"node is syncing", "service unavailable", "server is busy", "server busy", "overloaded", "connection refused",
		"resource unavailable", "out of memory"}
	// callerConditionHints: a -32603 some clients use for the caller's call
	// (a revert, the call's execution timeout, bad input): not worth a
	// second opinion.
	callerConditionHints = []string{"revert", "execution aborted", "execution timeout", "timeout", "timed out", "invalid argument",
		"invalid params", "out of gas", "gas required exceeds", "insufficient funds", "nonce too"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// present records that a JSON member exists without copying its value, so
// checking a multi-megabyte eth_getLogs result for an error costs a scan but
// no allocation of the result.
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

type replyEnvelope struct {
	Result present   `json:"result"`
	Error  *RPCError `json:"error"`
}

// judgement is the outcome of classifying one HTTP reply.
type judgement struct {
	verdict Verdict
	reason  string // why, for the last error and logs (no secrets in it)
	jsonRPC bool   // the body is a well-formed JSON-RPC reply
	timeout bool   // the upstream's proxy timed the call out (HTTP 504)
	// platform: an HTTP 5xx. Whatever its body says, the upstream did not
	// serve the call: it is never an answer to bill or credit, only relayed
	// (refunded) when nothing better comes.
	platform bool
	// claimed: the verdict is a rate limit stated in the reply's error
	// code, not by HTTP 429; Forward believes it only when its own probe
	// call reproduces it.
	claimed bool
	// provoked: a 4xx refusal without a JSON-RPC answer (413 body too
	// large, 400, 414, 431…) that the caller's request may have provoked
	// (its size, its shape): not served (refunded), and counted against the
	// upstream only with evidence, like a timeout.
	provoked bool
	// batch: the reply is a JSON array. Its items' errors are not folded
	// into the verdict: each item is judged on its own (Pool.Classify) by
	// whoever bills it, so one item never decides for the others.
	batch bool
	// errorsOnly: the JSON-RPC reply answers with error objects only (a
	// single error, or a batch with no result). Another upstream's reply
	// like it is no evidence against this one (Forward).
	errorsOnly bool
}

// classifyReply judges an HTTP status and body. It parses only the top-level
// envelope: whether the body is JSON, and each reply's "error" object.
func classifyReply(status int, body []byte, cls ErrorClassifier) judgement {
	switch {
	case status == http.StatusTooManyRequests:
		return judgement{verdict: VerdictRateLimited, reason: "HTTP 429"}
	case status == http.StatusGatewayTimeout:
		// The provider's own proxy timed the call out: a heavy call does
		// that anywhere (see DefaultClassifier).
		return judgement{verdict: VerdictSkip, reason: "HTTP 504 (timeout)", timeout: true}
	case status >= 500:
		// A 5xx is the upstream (or the platform behind it) failing, with
		// or without a JSON-RPC body: never served, never billed, never
		// credited. A bare one counts against the upstream at once; one
		// carrying a JSON-RPC reply only with evidence (blame), since a
		// caller's call might provoke it. Its body's codes and words
		// decide nothing.
		j := judgement{verdict: VerdictFault, reason: fmt.Sprintf("HTTP %d", status), platform: true}
		if inner := classifyBody(status, body, cls); inner.jsonRPC {
			j.jsonRPC, j.errorsOnly = true, inner.errorsOnly
		}
		return j
	case status >= 300 && status < 400:
		return judgement{verdict: VerdictFault, reason: fmt.Sprintf("HTTP %d: %v", status, errRedirect)}
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		// Our credentials or URL are wrong: this upstream can serve no
		// one until an operator fixes the config.
		return judgement{verdict: VerdictFault, reason: fmt.Sprintf("HTTP %d", status)}
	}
	// 2xx, or another 4xx that may carry the upstream's JSON-RPC answer
	// to the caller's request (some servers send errors with 400).
	j := classifyBody(status, body, cls)
	if status >= 400 && !j.jsonRPC {
		// A refusal of the request itself (too large, malformed for this
		// server): a caller who can provoke it must not be able to open
		// an upstream's breaker with it.
		j.provoked = true
	}
	return j
}

// classifyBody judges a reply body: whether it is a JSON-RPC reply and, for
// a single reply, the verdict of its error object. A batch reply is judged
// as a reply only (well-formed or not): its items are judged one by one
// where they are billed.
func classifyBody(status int, body []byte, cls ErrorClassifier) judgement {
	notJSON := func(why string) judgement {
		if status >= 400 {
			why = fmt.Sprintf("HTTP %d, %s", status, why)
		}
		return judgement{verdict: VerdictFault, reason: why}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return notJSON("empty reply")
	}
	switch trimmed[0] {
	case '{':
		var env replyEnvelope
		if err := json.Unmarshal(trimmed, &env); err != nil {
			return notJSON("reply is not valid JSON")
		}
		if !bool(env.Result) && env.Error == nil {
			return notJSON("reply is not a JSON-RPC response")
		}
		j := judgement{verdict: VerdictOK, jsonRPC: true, errorsOnly: env.Error != nil}
		if e := env.Error; e != nil {
			if j.verdict = cls(*e); j.verdict != VerdictOK {
				j.reason = fmt.Sprintf("JSON-RPC error %d: %s", e.Code, truncate(e.Message, 200))
			}
			j.claimed = j.verdict == VerdictRateLimited
		}
		return j
	case '[':
		var envs []replyEnvelope
		if err := json.Unmarshal(trimmed, &envs); err != nil {
			return notJSON("reply is not valid JSON")
		}
		for i := range envs {
			if !bool(envs[i].Result) && envs[i].Error == nil {
				return notJSON("reply is not a JSON-RPC response")
			}
		}
		errorsOnly := true
		for i := range envs {
			errorsOnly = errorsOnly && envs[i].Error != nil
		}
		return judgement{verdict: VerdictOK, jsonRPC: true, batch: true, errorsOnly: errorsOnly}
	}
	return notJSON("reply is not JSON")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
