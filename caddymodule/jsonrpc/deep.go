package jsonrpc

import (
	"encoding/json"
	"net/http"
)

// encoding/json refuses values nested deeper than 10,000 levels, so a request
// whose params are nested that deep is "not JSON" to validJSON although its
// id is plain to read. deepValid checks JSON syntax with an explicit stack
// (no recursion, no depth limit; RFC 8259 grammar, the same as json.Valid
// below its depth limit — the fuzz target compares them) so Parse can tell
// "too deep" from "broken" and keep the caller's id for the former.

// deepValid reports whether b is one well-formed JSON value. UTF-8 validity
// is checked separately by the caller.
func deepValid(b []byte) bool {
	var stack []byte // '{' or '['
	i := skipWS(b, 0)
	// expectValue: a value must come next (start, after ':' or ',' in an
	// array, after '[').
	expectValue := true
	for {
		if expectValue {
			if i >= len(b) {
				return false
			}
			switch c := b[i]; {
			case c == '{':
				stack = append(stack, '{')
				i = skipWS(b, i+1)
				if i < len(b) && b[i] == '}' {
					stack = stack[:len(stack)-1]
					i++
					expectValue = false
					break
				}
				var ok bool
				if i, ok = objectKey(b, i); !ok {
					return false
				}
				continue // expecting the member's value
			case c == '[':
				stack = append(stack, '[')
				i = skipWS(b, i+1)
				if i < len(b) && b[i] == ']' {
					stack = stack[:len(stack)-1]
					i++
					expectValue = false
				}
				continue
			case c == '"':
				end, ok := stringEnd(b, i)
				if !ok {
					return false
				}
				i, expectValue = end, false
			default:
				end := scalarEnd(b, i)
				if end == i || !json.Valid(b[i:end]) {
					return false
				}
				i, expectValue = end, false
			}
		}
		// After a value: close containers or take the next member/element.
		i = skipWS(b, i)
		if len(stack) == 0 {
			return i == len(b)
		}
		if i >= len(b) {
			return false
		}
		top := stack[len(stack)-1]
		switch {
		case b[i] == ',' && top == '{':
			var ok bool
			if i, ok = objectKey(b, skipWS(b, i+1)); !ok {
				return false
			}
			expectValue = true
		case b[i] == ',' && top == '[':
			i, expectValue = skipWS(b, i+1), true
		case (b[i] == '}' && top == '{') || (b[i] == ']' && top == '['):
			stack = stack[:len(stack)-1]
			i++
		default:
			return false
		}
	}
}

// objectKey expects a "key": at i and returns the index of the value after
// the colon.
func objectKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	end, ok := stringEnd(b, i)
	if !ok {
		return 0, false
	}
	i = skipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipWS(b, i+1), true
}

// stringEnd validates the string token starting at b[i] == '"' (escapes and
// control characters included) and returns the index past it.
func stringEnd(b []byte, i int) (int, bool) {
	end, _ := skipString(b, i)
	if end > len(b) || end-i < 2 || b[end-1] != '"' {
		return 0, false
	}
	return end, json.Valid(b[i:end])
}

// scalarEnd is the end of a number or literal starting at i.
func scalarEnd(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
			return i
		}
		i++
	}
	return i
}

// tooDeep answers a body that is well-formed JSON nested beyond what the
// gateway parses: a parse error, with the caller's id when the body is a
// single request object whose id can be read at the top level.
func tooDeep(body []byte) *Rejection {
	err := &Error{Code: CodeParseError, Message: "Parse error: nested deeper than 10000 levels"}
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return reject(http.StatusBadRequest, nil, err)
	}
	var id json.RawMessage
	n := 0
	for oi := newObjectIter(body, i); ; {
		m, ok := oi.next()
		if !ok {
			break
		}
		if m.keyIs("id") {
			id, n = m.val, n+1
		}
	}
	if n != 1 || !validIDToken(id) {
		id = nil
	}
	return reject(http.StatusBadRequest, id, err)
}
