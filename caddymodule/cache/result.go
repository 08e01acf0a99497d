package cache

// Result inspection. Upstream results can be large (a block with full
// transactions, a receipt with hundreds of logs) and only one member is
// needed, so they are scanned, not parsed into a tree. The scanner assumes
// nothing about its input: results reaching here were validated by the
// codec, but a malformed one must yield "not storable", never a panic.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a quote),
// or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// Containers are skipped by bracket counting (strings skipped whole), which
// is enough to find member boundaries in well-formed input and stays in
// bounds on any input.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // number, true, false, null
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
}

// topMember returns the raw value of the member named name of the JSON
// object obj (not of nested objects). Keys are compared as written: a key
// spelled with escapes does not match, which only makes a result look
// unstorable.
func topMember(obj []byte, name string) ([]byte, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil, false
		}
		kEnd := skipString(obj, i)
		if kEnd < 0 {
			return nil, false
		}
		key := obj[i+1 : kEnd-1]
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		if vEnd < 0 {
			return nil, false
		}
		if string(key) == name {
			return obj[i:vEnd], true
		}
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return nil, false
		}
		i++
	}
}

// resultBlockNumber reads the blockNumber of a transaction or receipt
// object. ok is false when it is absent, null (pending) or not a quantity.
func resultBlockNumber(result []byte) (uint64, bool) {
	v, ok := topMember(result, "blockNumber")
	if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	return parseQuantity(string(v[1 : len(v)-1]))
}
