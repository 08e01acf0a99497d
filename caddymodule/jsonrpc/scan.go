package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The functions below walk JSON that has already passed validJSON. Doing the
// strict validation once with the standard library, then walking the
// validated bytes with these tiny helpers, gives the exact acceptance
// rules of encoding/json without its per-value allocations (no
// map[string]any, no reflection), and the walk never recurses, so deep
// nesting cannot exhaust the stack. Every helper still bounds its index by
// len(b), so a bug elsewhere cannot turn into an out-of-range panic.

// validJSON reports whether b is exactly one JSON value (surrounding
// whitespace allowed) in valid UTF-8. RFC 8259 requires UTF-8 for JSON
// exchanged between systems; rejecting anything else up front means every
// byte the gateway echoes or forwards is valid UTF-8 too.
func validJSON(b []byte) bool {
	return utf8.Valid(b) && json.Valid(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString expects b[i] == '"' and returns the index just past the closing
// quote, and whether the string contains escapes (so that callers can take
// the raw bytes as the value when it does not).
func skipString(b []byte, i int) (end int, escaped bool) {
	i++
	for i < len(b) {
		// Two vectorised scans (next quote, then a backslash before it) beat a
		// byte loop on the long hex strings EVM params are made of.
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b), escaped
		}
		bs := bytes.IndexByte(b[i:i+q], '\\')
		if bs < 0 {
			return i + q + 1, escaped
		}
		escaped = true
		i += bs + 2 // a backslash escapes exactly the next byte (\uXXXX's hex digits are plain)
	}
	return len(b), escaped
}

// skipValue expects b[i] to start a value and returns the index just past it.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default: // number, true, false, null: runs to the next delimiter
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return len(b)
	}
}

// member is one "key": value pair of an object.
type member struct {
	key        []byte // raw key token including its quotes
	keyEscaped bool
	val        []byte // raw value
}

// objectIter walks the members of a validated object.
type objectIter struct {
	b []byte
	i int
}

// newObjectIter expects b[start] == '{'.
func newObjectIter(b []byte, start int) objectIter {
	return objectIter{b: b, i: skipWS(b, start+1)}
}

// next returns the next member, or ok=false at the closing brace; end is then
// the index just past the object.
func (it *objectIter) next() (m member, ok bool) {
	b := it.b
	if it.i >= len(b) || b[it.i] != '"' {
		it.i = min(it.i+1, len(b)) // past '}'
		return m, false
	}
	kEnd, esc := skipString(b, it.i)
	m.key, m.keyEscaped = b[it.i:kEnd], esc
	i := skipWS(b, kEnd)
	i = skipWS(b, i+1) // past ':'
	vEnd := skipValue(b, i)
	m.val = b[i:min(vEnd, len(b))]
	i = skipWS(b, vEnd)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	it.i = i
	return m, true
}

// keyIs reports whether the member's key equals name after unescaping.
// Unescaping matters: {"\u006dethod": …} is a "method" member to every JSON
// parser, so treating it otherwise would let a caller's request mean one
// thing to the gateway and another to the upstream.
func (m *member) keyIs(name string) bool {
	if !m.keyEscaped {
		return len(m.key) == len(name)+2 && string(m.key[1:len(m.key)-1]) == name
	}
	s, ok := decodeString(m.key, true)
	return ok && s == name
}

// decodeString returns the value of a raw JSON string token. Strings without
// escapes are the raw bytes (one allocation for the conversion); escaped ones
// go through encoding/json, which knows every escape and surrogate rule.
func decodeString(raw []byte, escaped bool) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if !escaped {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// stringIs reports whether raw is a JSON string whose value is want, without
// allocating in the common unescaped case.
func stringIs(raw []byte, want string) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	if len(raw) == len(want)+2 && string(raw[1:len(raw)-1]) == want {
		return true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	s, ok := decodeString(raw, true)
	return ok && s == want
}

// arrayIter walks the elements of a validated array.
type arrayIter struct {
	b []byte
	i int
}

// newArrayIter expects b[start] == '['.
func newArrayIter(b []byte, start int) arrayIter {
	return arrayIter{b: b, i: skipWS(b, start+1)}
}

// next returns the next element's raw bytes, or ok=false at the closing bracket.
func (it *arrayIter) next() (val []byte, ok bool) {
	b := it.b
	if it.i >= len(b) || b[it.i] == ']' {
		return nil, false
	}
	end := min(skipValue(b, it.i), len(b))
	val = b[it.i:end]
	i := skipWS(b, end)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	if i == it.i { // cannot happen on valid JSON; guarantees progress regardless
		i = len(b)
	}
	it.i = i
	return val, true
}
