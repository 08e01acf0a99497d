package jsonrpc

import (
	"encoding/json"
	"unicode/utf8"
)

// nullJSON is the id of responses whose request id is unknown (parse error,
// unreadable id) as the JSON-RPC 2.0 spec prescribes.
var nullJSON = json.RawMessage("null")

// Response is one JSON-RPC 2.0 response object.
//
// ID is the request's raw id (nil encodes as null). Exactly one of Result and
// Error is sent: Error when non-nil, otherwise Result, where a nil Result
// encodes as null (a legitimate answer, e.g. an unknown transaction receipt).
type Response struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// ResultResponse answers id with a raw JSON result.
func ResultResponse(id, result json.RawMessage) Response {
	return Response{ID: id, Result: result}
}

// ErrorResponse answers id with err.
func ErrorResponse(id json.RawMessage, err *Error) Response {
	return Response{ID: id, Error: err}
}

// MarshalJSON makes Response usable with encoding/json; the gateway's hot
// path calls AppendJSON directly to avoid the reflection and copy.
func (r Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends the response object to dst. The member order is fixed
// (jsonrpc, id, then result or error) so answers are byte-for-byte
// reproducible, which keeps cache entries and tests stable.
func (r *Response) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, r.ID)
	if r.Error != nil {
		dst = append(dst, `,"error":`...)
		dst = r.Error.appendJSON(dst)
	} else {
		dst = append(dst, `,"result":`...)
		if len(r.Result) == 0 {
			dst = append(dst, nullJSON...)
		} else {
			dst = append(dst, r.Result...)
		}
	}
	return append(dst, '}')
}

// appendID writes a raw id. Ids reach here from Parse, which admits only
// strings, numbers and null; the first-byte check is a cheap guard so that a
// programming error elsewhere degrades to "id": null instead of emitting an
// object or array id, which JSON-RPC forbids.
func appendID(dst []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(dst, nullJSON...)
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', c == 'n':
		return append(dst, id...)
	}
	return append(dst, nullJSON...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Unlike encoding/json it does not
// HTML-escape (<, >, & are harmless in an application/json body), which
// keeps gateway messages readable; invalid UTF-8 becomes U+FFFD so the output
// is always valid UTF-8 JSON, and U+2028/U+2029 are escaped for the benefit
// of JavaScript clients that eval or embed responses.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
