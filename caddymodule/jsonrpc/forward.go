package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Forwarding. Upstreams are other people's servers: they may answer a batch
// in any order, drop entries, repeat ids, or answer a batch with one error
// object. Callers' ids are arbitrary too (strings, floats, duplicates across
// a batch, null). So the gateway never forwards callers' ids: the k-th
// forwarded call gets the internal id k, and replies are matched back by that
// integer only. This is what lets a reply be attributed exactly once, and the
// caller's raw id is then restored from the item.
//
// Notifications are forwarded as ordinary requests with an internal id too.
// The gateway has debited them (every call is metered), so it must
// learn whether the upstream served them in order to refund failures, and
// which upstream served them for the revenue event; a real notification would
// tell it nothing. The reply is simply not passed to the caller.

// Errors reported per call (Reply.Err) and, for the whole body, by MatchReplies.
var (
	ErrNoReply        = errors.New("jsonrpc: upstream sent no reply for this call")
	ErrDuplicateReply = errors.New("jsonrpc: upstream sent more than one reply for this call")
	ErrMalformedReply = errors.New("jsonrpc: upstream reply is not a valid JSON-RPC 2.0 response")
	ErrReplyNotJSON   = errors.New("jsonrpc: upstream body is not JSON")
	ErrNothingToSend  = errors.New("jsonrpc: no calls to forward")
	ErrForwardInvalid = errors.New("jsonrpc: cannot forward an invalid item")
)

// UpstreamError is returned (and set on every call) when the upstream
// answered the whole request with a single error object that belongs to no
// call (id null or absent), e.g. "rate limited" or "batch too large".
// Err is the upstream's error object (upstream.DefaultClassifier judges
// whose fault it is).
type UpstreamError struct{ Err *Error }

func (e *UpstreamError) Error() string {
	return "jsonrpc: upstream rejected the request: " + e.Err.Error()
}

// EncodeUpstream builds the body to send upstream for items, which must all
// be valid. items[k] is sent with id k. One item is sent as a single object,
// not a batch of one: every upstream supports single requests, not all
// support batches, and MatchReplies accepts either shape back. Method names
// are re-encoded and params copied verbatim, so the upstream sees exactly the
// call the gateway metered (see the duplicate-member rule on Parse).
func EncodeUpstream(items []Item) ([]byte, error) {
	if len(items) == 0 {
		return nil, ErrNothingToSend
	}
	size := 2
	for i := range items {
		if items[i].Err != nil {
			return nil, ErrForwardInvalid
		}
		size += 48 + len(items[i].Method) + len(items[i].Params)
	}
	out := make([]byte, 0, size)
	if len(items) == 1 {
		return appendUpstreamCall(out, 0, &items[0]), nil
	}
	out = append(out, '[')
	for k := range items {
		if k > 0 {
			out = append(out, ',')
		}
		out = appendUpstreamCall(out, k, &items[k])
	}
	return append(out, ']'), nil
}

func appendUpstreamCall(dst []byte, k int, it *Item) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, int64(k), 10)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, it.Method)
	if len(it.Params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, it.Params...)
	}
	return append(dst, '}')
}

// Reply is the outcome of one forwarded call.
type Reply struct {
	// Response is ready to go to the caller: the caller's raw id (nil for a
	// notification), and the upstream's result or error. When Err is set it
	// is a -32603 error instead.
	Response

	// Err is nil when the upstream answered this call with a well-formed
	// response (a JSON-RPC error included: that is an answer). Otherwise it
	// says why there is none: ErrNoReply, ErrDuplicateReply,
	// ErrMalformedReply, ErrReplyNotJSON or an *UpstreamError. Any non-nil
	// Err means the upstream misbehaved: refund the call, and count it
	// against the upstream.
	Err error

	// Untrusted marks an answer of a registered node: a stranger's word is
	// relayed to the caller who asked, but never kept in the edge cache,
	// where it would be served to everyone else.
	Untrusted bool
}

// MatchReplies maps an upstream body answering EncodeUpstream(items) back to
// the items. The result has one Reply per item, in items' order, always. The
// error is nil when every call got a well-formed reply; otherwise it is the
// first problem found (the body-level one if the body as a whole was
// unusable), so "did this upstream behave" is a single check.
//
// Matching rules: a reply belongs to call k when its id is the JSON integer k
// written plainly (0, 1, … — not "1", 1.0 or 01); replies with other ids are
// ignored. A call with two or more replies gets ErrDuplicateReply, since
// there is no telling which one is true. A reply must have "jsonrpc":"2.0",
// and a result, or an error object with an integer code and a string message
// (a null error next to a result counts as absent; a non-null error next to
// a non-null result is malformed).
//
// The Replies alias body.
func MatchReplies(items []Item, body []byte) ([]Reply, error) {
	n := len(items)
	replies := make([]Reply, n)
	if !validJSON(body) {
		return failAll(items, replies, ErrReplyNotJSON)
	}
	state := make([]replyState, n)
	i := skipWS(body, 0)
	switch body[i] {
	case '{':
		k, resp, err := parseReply(body[i:], n)
		switch {
		case k >= 0:
			state[k].add(resp, err)
		case err == nil && resp.Error != nil:
			// A lone error with no usable id answers the whole request.
			return failAll(items, replies, &UpstreamError{Err: resp.Error})
		default:
			return failAll(items, replies, ErrMalformedReply)
		}
	case '[':
		for ai := newArrayIter(body, i); ; {
			v, ok := ai.next()
			if !ok {
				break
			}
			if k, resp, err := parseReply(v, n); k >= 0 {
				state[k].add(resp, err)
			}
		}
	default:
		return failAll(items, replies, ErrMalformedReply)
	}

	var first error
	for k := range items {
		s := &state[k]
		switch {
		case s.count == 0:
			s.err = ErrNoReply
		case s.count > 1:
			s.err = ErrDuplicateReply
		}
		if s.err != nil {
			replies[k] = failedReply(&items[k], s.err)
			if first == nil {
				first = s.err
			}
			continue
		}
		s.resp.ID = items[k].ID
		replies[k] = Reply{Response: s.resp}
	}
	return replies, first
}

type replyState struct {
	count int
	resp  Response
	err   error
}

func (s *replyState) add(resp Response, err error) {
	s.count++
	s.resp, s.err = resp, err
}

func failAll(items []Item, replies []Reply, err error) ([]Reply, error) {
	for k := range items {
		replies[k] = failedReply(&items[k], err)
	}
	return replies, err
}

func failedReply(it *Item, err error) Reply {
	detail := "upstream sent no usable answer"
	switch {
	case errors.Is(err, ErrNoReply):
		detail = "upstream sent no answer for this call"
	case errors.Is(err, ErrDuplicateReply):
		detail = "upstream sent conflicting answers for this call"
	}
	return Reply{Response: ErrorResponse(it.ID, InternalError(detail)), Err: err}
}

// Bits for the members parseReply tracks.
const (
	repJSONRPC uint8 = 1 << iota
	repID
	repResult
	repError
)

// parseReply reads one reply value. k is the call it belongs to, or -1. When
// err is nil, resp holds the upstream's result or error (without an id).
func parseReply(v []byte, n int) (k int, resp Response, err error) {
	k = -1
	if len(v) == 0 || v[0] != '{' {
		return k, resp, ErrMalformedReply
	}
	var (
		jsonrpc, id, result, errv []byte
		seen                      uint8
		dup                       bool
	)
	for oi := newObjectIter(v, 0); ; {
		m, ok := oi.next()
		if !ok {
			break
		}
		var bit uint8
		switch {
		case m.keyIs("jsonrpc"):
			bit, jsonrpc = repJSONRPC, m.val
		case m.keyIs("id"):
			bit, id = repID, m.val
		case m.keyIs("result"):
			bit, result = repResult, m.val
		case m.keyIs("error"):
			bit, errv = repError, m.val
		default:
			continue
		}
		dup = dup || seen&bit != 0
		seen |= bit
	}
	if seen&repID != 0 && !dup {
		k = internalID(id, n)
	}
	if dup || seen&repJSONRPC == 0 || !stringIs(jsonrpc, "2.0") {
		return k, resp, ErrMalformedReply
	}
	hasErr := seen&repError != 0 && !isNull(errv)
	hasResult := seen&repResult != 0
	switch {
	case hasErr && hasResult && !isNull(result):
		return k, resp, ErrMalformedReply
	case hasErr:
		e, ok := parseErrorObject(errv)
		if !ok {
			return k, resp, ErrMalformedReply
		}
		resp.Error = e
	case hasResult:
		resp.Result = result
	default:
		return k, resp, ErrMalformedReply
	}
	return k, resp, nil
}

func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

// internalID returns k when id is the plain JSON integer k in [0, n), else -1.
func internalID(id []byte, n int) int {
	if len(id) == 0 || len(id) > 10 || (id[0] == '0' && len(id) > 1) {
		return -1
	}
	k := 0
	for _, c := range id {
		if c < '0' || c > '9' {
			return -1
		}
		k = k*10 + int(c-'0')
	}
	if k >= n {
		return -1
	}
	return k
}

// parseErrorObject reads an upstream error object: an integer code and a
// string message are required, data is kept raw.
func parseErrorObject(v []byte) (*Error, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	var (
		code, msg, data []byte
		seen            uint8
	)
	const (
		eCode uint8 = 1 << iota
		eMsg
		eData
	)
	for oi := newObjectIter(v, 0); ; {
		m, ok := oi.next()
		if !ok {
			break
		}
		var bit uint8
		switch {
		case m.keyIs("code"):
			bit, code = eCode, m.val
		case m.keyIs("message"):
			bit, msg = eMsg, m.val
		case m.keyIs("data"):
			bit, data = eData, m.val
		default:
			continue
		}
		if seen&bit != 0 {
			return nil, false
		}
		seen |= bit
	}
	if seen&eCode == 0 || seen&eMsg == 0 || len(msg) == 0 || msg[0] != '"' {
		return nil, false
	}
	// Integer only: JSON-RPC says "MUST be an integer"; a fraction or an
	// exponent would also not survive re-encoding unchanged.
	c, err := strconv.ParseInt(string(code), 10, 32)
	if err != nil {
		return nil, false
	}
	text, ok := decodeString(msg, bytes.IndexByte(msg, '\\') >= 0)
	if !ok {
		return nil, false
	}
	e := &Error{Code: int(c), Message: text, Raw: json.RawMessage(v)}
	if seen&eData != 0 {
		e.Data = json.RawMessage(data)
	}
	return e, true
}
