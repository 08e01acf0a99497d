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
	// VerdictSkip: this upstream cannot serve this call but is not broken,
	// e.g. a full node asked for pruned state. Try another upstream; the
	// breaker is not told, so callers asking for old state cannot open the
	// breakers of every full node.
	VerdictSkip
	// VerdictRateLimited: the upstream throttles us (HTTP 429, -32005).
	// Back off from it for a while and try another upstream, but do not
	// count it as a failure: it is healthy, only busy, and opening its
	// breaker would keep it out for the whole open timeout.
	VerdictRateLimited
	// VerdictFault: the upstream failed (transport error, timeout, 5xx,
	// not JSON, internal/server error). Counts against the breaker; the
	// call is retried elsewhere.
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

// ErrorClassifier decides whose fault a JSON-RPC error object in a reply is.
// It is called for every error object of a reply (each item of a batch);
// the reply's verdict is the worst of them. It must be safe for concurrent
// use.
type ErrorClassifier func(e RPCError) Verdict

// DefaultClassifier is used when Config.Classifier is nil:
//
//   - code 429, or a message about rate limits or too many requests:
//     VerdictRateLimited;
//   - -32005 (limit exceeded): VerdictRateLimited, unless the message is
//     about a result or block-range size (Infura's "query returned more
//     than 10000 results"), which is the caller's query being too big:
//     VerdictOK;
//   - -32603 and -32000..-32099: VerdictFault, except
//   - messages naming pruned or missing state ("missing trie node",
//     "header not found"): VerdictSkip, and
//   - messages naming a condition the caller caused (reverts, nonce, fee,
//     funds, gas, "already known"): VerdictOK. Geth reports those with
//     -32000 too; counting them would let any client open our breakers by
//     sending reverting calls, and retrying them elsewhere gives the same
//     answer;
//   - anything else (-32600, -32601, -32602, 3 = execution reverted...):
//     VerdictOK.
func DefaultClassifier(e RPCError) Verdict {
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == http.StatusTooManyRequests || containsAny(msg, rateLimitHints):
		return VerdictRateLimited
	case e.Code == -32005:
		if containsAny(msg, resultLimitHints) {
			return VerdictOK
		}
		return VerdictRateLimited
	case e.Code == -32603 || (e.Code <= -32000 && e.Code >= -32099):
		switch {
		case containsAny(msg, missingStateHints):
			return VerdictSkip
		case containsAny(msg, callerFaultHints):
			return VerdictOK
		}
		return VerdictFault
	}
	return VerdictOK
}

var (
	rateLimitHints    = []string{"rate limit", "rate-limit", "ratelimit", "rate exceeded", "too many requests", "request limit", "quota", "capacity exceeded"}
	resultLimitHints  = []string{"result", "range", "response size", "too large", "more than"}
	missingStateHints = []string{"missing trie node", "header not found", "unknown block", "pruned", "historical state", "not available in this node"}
	callerFaultHints  = []string{
		"revert", "nonce too", "insufficient funds", "already known", "underpriced",
		"gas too low", "intrinsic gas", "gas limit", "gas required exceeds", "out of gas",
		"fee cap", "base fee", "exceeds the configured cap", "invalid sender", "invalid opcode",
		"invalid jump", "stack underflow", "stack overflow", "invalid argument", "invalid transaction",
	}
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
}

// classifyReply judges an HTTP status and body. It parses only the top-level
// envelope: whether the body is JSON, and each reply's "error" object.
func classifyReply(status int, body []byte, cls ErrorClassifier) judgement {
	switch {
	case status == http.StatusTooManyRequests:
		return judgement{verdict: VerdictRateLimited, reason: "HTTP 429"}
	case status >= 500:
		return judgement{verdict: VerdictFault, reason: fmt.Sprintf("HTTP %d", status)}
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
