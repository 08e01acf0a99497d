package cache

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical params.
//
// Two calls may share a cache entry only if every upstream would give them
// the same answer, so the canonical form merges spellings that JSON or the
// Ethereum JSON-RPC encoding define as equal, and nothing else:
//
//   - insignificant whitespace is dropped;
//   - object members are sorted by key (JSON objects are unordered, and
//     clients serialise eth_call/eth_getLogs objects in any order);
//   - strings are re-escaped one fixed way ("\u0041" and "A" are the same
//     string);
//   - strings that are hex data ("0x…"/"0X…" followed by hex digits only) are
//     lowercased, object keys included (state-override addresses). Every
//     string parameter of the cacheable methods is hex data, an address, a
//     hash or a block tag, and all of those are case-insensitive: EIP-55
//     checksums are presentation only and nodes do not check them;
//   - block numbers and indexes (quantities) lose leading zeros, but only at
//     the positions the rules know are quantities (see rules.go): elsewhere
//     leading zeros are significant (0x00ab is two bytes of calldata).
//
// Everything else is kept as written, notably number literals (1, 1.0 and
// 1e0 stay distinct) and array order (an address list of eth_getLogs is a
// set to geth, but no need to bet on every client agreeing). The form is
// sound, not complete: equal calls may occasionally get different keys,
// different calls never share one.
//
// Inputs the canonical form cannot represent faithfully are refused
// (errNotCanonical), which makes the call uncacheable: duplicate object
// keys (parsers disagree on which one wins), invalid UTF-8 and lone
// surrogates (decoders replace them differently), and nesting beyond
// maxDepth.

// maxDepth bounds params nesting. Real params nest at most 4 deep (eth_call
// state overrides); the bound keeps the recursive parser's stack small
// whatever a caller sends.
const maxDepth = 32

var errNotCanonical = errors.New("cache: params have no canonical form")

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a parsed JSON value. Params are small, so a tree is cheap, and it
// lets the rules inspect and rewrite positions before the canonical form is
// emitted.
type node struct {
	kind    kind
	text    string   // literal for null/bool/number, decoded value for string
	elems   []node   // array elements
	members []member // object members, sorted by key after parsing
}

type member struct {
	key string
	val node
}

// parseCanonical parses raw JSON into a normalised tree.
func parseCanonical(raw []byte) (node, error) {
	p := parser{b: raw}
	p.ws()
	n, err := p.value(0)
	if err != nil {
		return node{}, err
	}
	p.ws()
	if p.i != len(p.b) {
		return node{}, errNotCanonical
	}
	return n, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (node, error) {
	if depth > maxDepth || p.i >= len(p.b) {
		return node{}, errNotCanonical
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return node{}, err
		}
		return node{kind: kindString, text: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range [...]string{"null", "true", "false"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				k := kindBool
				if lit == "null" {
					k = kindNull
				}
				return node{kind: k, text: lit}, nil
			}
		}
		return node{}, errNotCanonical
	}
}

func (p *parser) array(depth int) (node, error) {
	p.i++ // [
	n := node{kind: kindArray}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return n, nil
	}
	for {
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		if n.elems == nil {
			n.elems = make([]node, 0, 4) // params: 1 to 3 arguments, nearly always
		}
		n.elems = append(n.elems, v)
		p.ws()
		if p.i >= len(p.b) {
			return node{}, errNotCanonical
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return n, nil
		default:
			return node{}, errNotCanonical
		}
	}
}

func (p *parser) object(depth int) (node, error) {
	p.i++ // {
	n := node{kind: kindObject}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return n, nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return node{}, errNotCanonical
		}
		k, err := p.str()
		if err != nil {
			return node{}, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return node{}, errNotCanonical
		}
		p.i++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		if n.members == nil {
			n.members = make([]member, 0, 4) // filters and call objects: a few members
		}
		n.members = append(n.members, member{key: k, val: v})
		p.ws()
		if p.i >= len(p.b) {
			return node{}, errNotCanonical
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
		default:
			return node{}, errNotCanonical
		}
		slices.SortFunc(n.members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for j := 1; j < len(n.members); j++ {
			if n.members[j].key == n.members[j-1].key {
				return node{}, errNotCanonical
			}
		}
		return n, nil
	}
}

// number validates a JSON number and keeps its literal.
func (p *parser) number() (node, error) {
	start := p.i
	b := p.b
	if p.i < len(b) && b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(b) && b[p.i] == '0':
		p.i++
	case p.i < len(b) && b[p.i] >= '1' && b[p.i] <= '9':
		p.digits()
	default:
		return node{}, errNotCanonical
	}
	if p.i < len(b) && b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return node{}, errNotCanonical
		}
	}
	if p.i < len(b) && (b[p.i] == 'e' || b[p.i] == 'E') {
		p.i++
		if p.i < len(b) && (b[p.i] == '+' || b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return node{}, errNotCanonical
		}
	}
	return node{kind: kindNumber, text: string(b[start:p.i])}, nil
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// str decodes the JSON string at p.i, hex data lowercased. The common case
// (no escapes) is a single copy.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", errNotCanonical
			}
			return hexString(s), nil
		case c == '\\':
			return p.strSlow(start)
		case c < 0x20:
			return "", errNotCanonical
		}
		p.i++
	}
	return "", errNotCanonical
}

func (p *parser) strSlow(start int) (string, error) {
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", errNotCanonical
			}
			return hexString(buf), nil
		case c < 0x20:
			return "", errNotCanonical
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++ // backslash
		if p.i >= len(p.b) {
			return "", errNotCanonical
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errNotCanonical
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by an escaped low one is a
				// character; anything else is a lone surrogate.
				if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return "", errNotCanonical
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return "", errNotCanonical
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", errNotCanonical
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", errNotCanonical
		}
	}
	return "", errNotCanonical
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		d, ok := hexVal(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// isHex reports whether s is "0x"/"0X" followed by hex digits only (possibly
// none: "0x" is empty data).
func isHex[T string | []byte](s T) bool {
	if len(s) < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for i := 2; i < len(s); i++ {
		if _, ok := hexVal(s[i]); !ok {
			return false
		}
	}
	return true
}

// commonStrings are member names and tags that recur in nearly every
// cacheable call; returning the constant saves an allocation each.
var commonStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"to", "from", "data", "input", "gas", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas", "value",
		"nonce", "fromBlock", "toBlock", "address", "topics", "blockHash", "blockNumber", "requireCanonical",
		"latest", "pending", "safe", "finalized", "earliest", "0x", "0x0", "0x1",
	} {
		m[s] = s
	}
	return m
}()

// hexString is s as a string, lowercased if it is hex data, in one copy.
func hexString(s []byte) string {
	if len(s) <= len("maxPriorityFeePerGas") {
		if c, ok := commonStrings[string(s)]; ok { // no allocation for the lookup
			return c
		}
	}
	if !isHex(s) {
		return string(s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			var b strings.Builder
			b.Grow(len(s))
			for _, c := range s {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b.WriteByte(c)
			}
			return b.String()
		}
	}
	return string(s)
}

// appendCanonical emits n in canonical form.
func appendCanonical(dst []byte, n *node) []byte {
	switch n.kind {
	case kindString:
		return appendQuoted(dst, n.text)
	case kindArray:
		dst = append(dst, '[')
		for i := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, &n.elems[i])
		}
		return append(dst, ']')
	case kindObject:
		dst = append(dst, '{')
		for i := range n.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, n.members[i].key)
			dst = append(dst, ':')
			dst = appendCanonical(dst, &n.members[i].val)
		}
		return append(dst, '}')
	default:
		return append(dst, n.text...)
	}
}

// appendQuoted writes s (valid UTF-8, checked by the parser) as a JSON
// string: only '"', '\\' and control characters are escaped, always as
// \" \\ and \u00XX, so each string has exactly one spelling.
func appendQuoted(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		if c == '"' || c == '\\' {
			dst = append(dst, '\\', c)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
