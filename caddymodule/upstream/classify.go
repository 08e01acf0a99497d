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
	// VerdictRateLimited: the upstream throttles us (HTTP 429, -32005).
	// Back off from it for a while and try another upstream, but do not
	// count it as a failure: it is healthy, only busy, and opening its
	// breaker would keep it out for the whole open timeout.
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
// opinion), missing state, or rate limiting. It never decides alone that an
// upstream failed: evidence does (blame).
// It is called for every error object of a reply (each item of a batch);
// the reply's verdict is the worst of them. It must be safe for concurrent
// use.
type ErrorClassifier func(e RPCError) Verdict

// DefaultClassifier says which error answers deserve a second opinion from
// another upstream. Its list decides cost (which errors are asked twice),
// never blame: an error a caller can provoke at will must never count
// against an upstream, and a list of "caller errors" always misses one, so
// an error answer counts only with evidence (blame: a provider serving the
// same call cleanly). An unknown or ambiguous error is the caller's
// outcome, relayed at once:
//
//	error                                              verdict
//	429, or a message about rate limits / quotas       VerdictRateLimited
//	-32005 about the query's size (results, range)     VerdictOK (caller's query)
//	-32005 otherwise                                   VerdictRateLimited
//	-32002, -32011, -32012, -32014, -32016, and        VerdictFault: suspect (resource unavailable,
//	  HTTP-style codes 401 402 403 500 502 503 504       no healthy backend, our key,
//	                                                     billing or capacity)
//	-32603 naming a caller condition (revert, timeout  VerdictOK
//	  of the call, invalid input)
//	-32603 otherwise                                   VerdictFault: suspect
//	-32000..-32099 naming missing or pruned state      VerdictSkip (another upstream may
//	  ("missing trie node", "historical state")          hold it; never counted)
//	-32000..-32099 naming an unknown block or header   VerdictSkip (ambiguous: a lagging
//	  ("header not found", "unknown block")              node, or a block that does not
//	                                                     exist — which any caller can ask
//	                                                     for; tried elsewhere, never counted)
//	-32000..-32099 naming the node's own condition     VerdictFault: suspect
//	  (database, syncing, no peers, busy, internal)
//	-32000..-32099 otherwise (reverts, nonce, fees,    VerdictOK: relayed as is
//	  funds, gas, malformed or known transactions,
//	  execution timeouts of the caller's call, …)
//	anything else (-32700, -32600, -32601, -32602,     VerdictOK
//	  3 = execution reverted, -32001, -32003, …)
//
// Transport outcomes are judged in classifyReply and Forward: a connection
// that cannot be made, a bare 5xx other than 504, or a reply that is not
// JSON-RPC is a fault; a timeout (the attempt's own, or a 504 from the
// provider's proxy) counts only with evidence, because a heavy call makes
// any node time out — a node that really hangs is found by its probes.
func DefaultClassifier(e RPCError) Verdict {
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == http.StatusTooManyRequests || containsAny(msg, rateLimitHints):
		return VerdictRateLimited
	case e.Code == -32005:
		if containsAny(msg, querySizeHints) {
			return VerdictOK
		}
		return VerdictRateLimited
	case upstreamCodes[e.Code]:
		return VerdictFault
	case e.Code == -32603:
		if containsAny(msg, callerConditionHints) {
			return VerdictOK
		}
		return VerdictFault
	case e.Code <= -32000 && e.Code >= -32099:
		switch {
		case containsAny(msg, missingStateHints), containsAny(msg, unknownBlockHints):
			return VerdictSkip
		case containsAny(msg, serverSideHints):
			return VerdictFault
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
	rateLimitHints = []string{"rate limit", "rate-limit", "ratelimit", "rate exceeded", "too many requests", "request limit",
		"quota", "capacity exceeded", "daily request count exceeded"}
	// querySizeHints: a -32005 about the caller's query (eth_getLogs ranges,
	// result counts, response sizes), which the caller can shrink.
	querySizeHints = []string{"query returned more than", "block range", "range is too large", "range too large",
		"too many blocks", "too many results", "response size", "response is too big", "logs matched by query exceeds",
		"more than"}
	missingStateHints = []string{"missing trie node", "pruned", "historical state", "not available in this node",
		"state is not available", "state not available", "required historical state"}
	unknownBlockHints = []string{"header not found", "header for hash not found", "unknown block", "block not found"}
	// serverSideHints: a -32000 range error that describes the node itself,
	// which another upstream would not share.
	serverSideHints = []string{"internal error", "database", "leveldb", "pebble", "no suitable peers", "no peers available",
		"node is syncing", "service unavailable", "server is busy", "server busy", "overloaded", "connection refused",
		"resource unavailable", "out of memory"}
	// callerConditionHints: a -32603 some clients use for the caller's call
	// (a revert, the call's execution timeout, bad input).
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
		// A bare 5xx is the upstream failing. One carrying a JSON-RPC
		// reply is its answer to the call, judged like any other (blame),
		// but never better than an error answer.
		j := judgement{verdict: VerdictFault, reason: fmt.Sprintf("HTTP %d", status)}
		if inner := classifyBody(status, body, cls); inner.jsonRPC {
			j.jsonRPC = true
			if inner.verdict == VerdictRateLimited {
				j.verdict = inner.verdict
			}
			if inner.reason != "" {
				j.reason += ", " + inner.reason
			}
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
	return classifyBody(status, body, cls)
}

// classifyBody judges a reply body: whether it is a JSON-RPC reply, and the
// worst verdict of its error objects.
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
	var errs []*RPCError
	switch trimmed[0] {
	case '{':
		var env replyEnvelope
		if err := json.Unmarshal(trimmed, &env); err != nil {
			return notJSON("reply is not valid JSON")
		}
		if !bool(env.Result) && env.Error == nil {
			return notJSON("reply is not a JSON-RPC response")
		}
		errs = append(errs, env.Error)
	case '[':
		var envs []replyEnvelope
		if err := json.Unmarshal(trimmed, &envs); err != nil {
			return notJSON("reply is not valid JSON")
		}
		for i := range envs {
			if !bool(envs[i].Result) && envs[i].Error == nil {
				return notJSON("reply is not a JSON-RPC response")
			}
			errs = append(errs, envs[i].Error)
		}
	default:
		return notJSON("reply is not JSON")
	}
	j := judgement{verdict: VerdictOK, jsonRPC: true}
	for _, e := range errs {
		if e == nil {
			continue
		}
		if v := cls(*e); v > j.verdict {
			j.verdict = v
			j.reason = fmt.Sprintf("JSON-RPC error %d: %s", e.Code, truncate(e.Message, 200))
		}
	}
	return j
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
