package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Rejection is the answer to a request body the gateway refuses as a whole:
// no call is served or metered, and the caller gets one error object (never
// an array, even for a batch, since there is no per-item answer to give)
// with a non-200 HTTP status.
type Rejection struct {
	Status   int      // HTTP status
	Response Response // the single error response object to send
}

// Error makes a Rejection loggable as an error.
func (r *Rejection) Error() string {
	return "jsonrpc: rejected with HTTP " + strconv.Itoa(r.Status) + ": " + r.Response.Error.Message
}

// Body is the encoded error response object.
func (r *Rejection) Body() []byte { return r.Response.AppendJSON(nil) }

func reject(status int, id json.RawMessage, err *Error) *Rejection {
	return &Rejection{Status: status, Response: ErrorResponse(id, err)}
}

// BodyTooLarge is the rejection for a body over the byte limit the caller
// enforces while reading (HTTP 413, -32600 naming the limit, so a
// client can tell a size problem from a malformed request and split it).
func BodyTooLarge(limit int64) *Rejection {
	return reject(http.StatusRequestEntityTooLarge, nil,
		InvalidRequest("request body exceeds the limit of "+strconv.FormatInt(limit, 10)+" bytes"))
}

// Parse turns a request body (already cut to the size limit) into a Message,
// or into a Rejection answering the whole body. Outcomes:
//
//	body                                     HTTP  code    id
//	not JSON, truncated, trailing garbage,   400   -32700  null
//	  invalid UTF-8, empty
//	single value that is not an object       400   -32600  null
//	single invalid request object            400   -32600  its id if readable, else null
//	empty batch []                           400   -32600  null (one object, not an array)
//	batch over opts.MaxBatch items           413   -32600  null (message names the limit)
//	valid single request / any other batch   Message (batch items may be invalid: each
//	                                         is answered with its own -32600, HTTP 200)
//
// A request object is valid when: "jsonrpc" is exactly the string "2.0";
// "method" is a non-empty string of at most opts.MaxMethodLen bytes; "id", if
// present, is a string, a number or null; "params", if present, is an array
// or an object (null included in "anything else", as the JSON-RPC 2.0 spec words it); and
// none of these four members appears twice. Other members are ignored, as
// most servers do. Duplicates are refused rather than resolved because
// parsers disagree on which copy wins, and a request that the gateway meters
// as one method while an upstream runs another is a billing hole.
//
// The Message aliases body (see the package comment).
func Parse(body []byte, opts Options) (*Message, *Rejection) {
	if !validJSON(body) {
		if utf8.Valid(body) && deepValid(body) { // valid, but deeper than encoding/json goes
			return nil, tooDeep(body)
		}
		return nil, reject(http.StatusBadRequest, nil, ParseError())
	}
	i := skipWS(body, 0) // valid JSON: a value starts at i
	maxMethod := opts.maxMethodLen()
	switch body[i] {
	case '{':
		m := &Message{}
		m.Items = m.one[:]
		it := &m.Items[0]
		parseItem(body[i:], maxMethod, it)
		if it.Err != nil {
			return nil, reject(http.StatusBadRequest, it.ID, it.Err)
		}
		return m, nil
	case '[':
		// Count first, without decoding anything: an oversized batch is
		// refused before any per-item work, and the Items slice is then
		// allocated once at its exact size.
		maxBatch := opts.maxBatch()
		n := 0
		for ai := newArrayIter(body, i); ; n++ {
			if _, ok := ai.next(); !ok {
				break
			}
			if n >= maxBatch {
				return nil, reject(http.StatusRequestEntityTooLarge, nil,
					InvalidRequest("batch exceeds the limit of "+strconv.Itoa(maxBatch)+" calls"))
			}
		}
		if n == 0 {
			return nil, reject(http.StatusBadRequest, nil, InvalidRequest("empty batch"))
		}
		m := &Message{Batch: true, Items: make([]Item, n)}
		ai := newArrayIter(body, i)
		for k := range m.Items {
			v, _ := ai.next()
			parseItem(v, maxMethod, &m.Items[k])
		}
		return m, nil
	default:
		return nil, reject(http.StatusBadRequest, nil,
			InvalidRequest("expected a request object or a batch array"))
	}
}

// Bits for the four members parseItem tracks.
const (
	memJSONRPC uint8 = 1 << iota
	memID
	memMethod
	memParams
)

// parseItem fills it from one validated JSON value. It never fails: problems
// become it.Err, because inside a batch an invalid item is an answer, not an
// error.
func parseItem(v []byte, maxMethod int, it *Item) {
	if len(v) == 0 || v[0] != '{' {
		it.Err = InvalidRequest("expected a request object")
		return
	}
	var (
		jsonrpc, id, method, params []byte
		seen                        uint8
		dup                         string
	)
	for oi := newObjectIter(v, 0); ; {
		m, ok := oi.next()
		if !ok {
			break
		}
		var bit uint8
		var name string
		switch {
		case m.keyIs("jsonrpc"):
			bit, name, jsonrpc = memJSONRPC, "jsonrpc", m.val
		case m.keyIs("id"):
			bit, name, id = memID, "id", m.val
		case m.keyIs("method"):
			bit, name, method = memMethod, "method", m.val
		case m.keyIs("params"):
			bit, name, params = memParams, "params", m.val
		default:
			continue
		}
		if seen&bit != 0 && dup == "" {
			dup = name
		}
		seen |= bit
	}

	// The id is echoed even on an invalid item when it can be read without
	// guessing, so a client can still match the error to its call.
	idOK := seen&memID != 0 && validIDToken(id)
	if idOK && dup != "id" {
		it.ID = id
	}

	switch {
	case dup != "":
		it.Err = InvalidRequest(`duplicate "` + dup + `" member`)
		return
	case seen&memID != 0 && !idOK:
		it.Err = InvalidRequest(`"id" must be a string, a number or null`)
		return
	case seen&memJSONRPC == 0 || !stringIs(jsonrpc, "2.0"):
		it.Err = InvalidRequest(`"jsonrpc" must be "2.0"`)
		return
	case seen&memMethod == 0 || len(method) < 2 || method[0] != '"':
		it.Err = InvalidRequest(`"method" must be a non-empty string`)
		return
	case seen&memParams != 0 && params[0] != '[' && params[0] != '{':
		it.Err = InvalidRequest(`"params" must be an array or an object`)
		return
	}

	name, ok := methodName(method, maxMethod)
	if !ok {
		it.Err = InvalidRequest(`"method" must be a non-empty string of at most ` + strconv.Itoa(maxMethod) + " bytes")
		return
	}
	it.Method = name
	if seen&memParams != 0 {
		it.Params = params
	}
}

// validIDToken: JSON-RPC 2.0 ids are strings, numbers or null. Booleans,
// objects and arrays are refused. Numbers with fractions or exponents are
// kept (JSON-RPC 2.0 only says they SHOULD NOT be used) and echoed verbatim.
func validIDToken(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	case c == 'n': // null; validated JSON admits no other literal starting with n
		return true
	}
	return false
}

// methodName decodes and bounds a raw method string token.
func methodName(raw []byte, maxLen int) (string, bool) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if len(inner) == 0 || len(inner) > maxLen {
			return "", false
		}
		return internMethod(inner), true
	}
	if len(inner) > 6*maxLen { // even all-\uXXXX escapes could not fit: skip decoding
		return "", false
	}
	s, ok := decodeString(raw, true)
	if !ok || len(s) == 0 || len(s) > maxLen {
		return "", false
	}
	return s, true
}
