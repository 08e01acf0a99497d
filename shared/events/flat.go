package events

import (
	"strconv"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// decodeFlat decodes the payloads settlementd ingests by the hundred
// thousand per second (revenue, debit, refund) without reflection: about
// half of ingest's CPU was encoding/json. It accepts only the
// shape json.Marshal gives these structs — one flat object, no whitespace,
// each known key at most once, strings of printable ASCII without escapes,
// integers without fraction or exponent — and reports false for anything
// else, which Decode then hands to encoding/json. Where it accepts, the
// result is what encoding/json gives (FuzzDecodeFlat compares the two).
func decodeFlat(data string, e Event) bool {
	switch e := e.(type) {
	case *Revenue:
		epoch := false
		ok := scanFlat(data, func(key, s string, num bool) bool {
			switch key {
			case "id":
				return str(s, num, &e.ID)
			case "ts":
				return int64Of(s, num, &e.TimeMs)
			case "epoch_id":
				epoch = true
				return int64Of(s, num, &e.EpochID)
			case "chain_id":
				return uint64Of(s, num, &e.ChainID)
			case "method":
				return str(s, num, &e.Method)
			case "payer":
				return str(s, num, (*string)(&e.Payer))
			case "account":
				return str(s, num, &e.Account)
			case "asset":
				return str(s, num, &e.Asset)
			case "amount_units":
				return quotedUnits(s, num, &e.Amount)
			case "calls":
				return intOf(s, num, &e.Calls)
			case "upstream":
				return str(s, num, &e.Upstream)
			case "node_id":
				return str(s, num, &e.NodeID)
			}
			return false
		})
		if ok && !epoch && e.TimeMs > 0 {
			e.EpochID = EpochOf(e.Time()) // as UnmarshalJSON does
		}
		return ok
	case *Debit:
		return scanFlat(data, func(key, s string, num bool) bool {
			switch key {
			case "id":
				return str(s, num, &e.ID)
			case "ts":
				return int64Of(s, num, &e.TimeMs)
			case "chain_id":
				return uint64Of(s, num, &e.ChainID)
			case "payer":
				return str(s, num, (*string)(&e.Payer))
			case "account":
				return str(s, num, &e.Account)
			case "asset":
				return str(s, num, &e.Asset)
			case "amount_units":
				return quotedUnits(s, num, &e.Amount)
			case "calls":
				return intOf(s, num, &e.Calls)
			}
			return false
		})
	case *Refund:
		return scanFlat(data, func(key, s string, num bool) bool {
			switch key {
			case "id":
				return str(s, num, &e.ID)
			case "ts":
				return int64Of(s, num, &e.TimeMs)
			case "payer":
				return str(s, num, (*string)(&e.Payer))
			case "account":
				return str(s, num, &e.Account)
			case "amount_units":
				return quotedUnits(s, num, &e.Amount)
			case "calls":
				return intOf(s, num, &e.Calls)
			}
			return false
		})
	}
	return false
}

// scanFlat walks {"key":value,...} and calls set for each member with the
// raw string content or number text (num). It fails on anything outside
// the accepted shape, on a repeated key, or when set fails.
func scanFlat(d string, set func(key, s string, num bool) bool) bool {
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return false
	}
	var seen [16]string // the structs have at most 12 fields
	n, i := 0, 1
	for {
		key, j, ok := flatString(d, i)
		if !ok || j >= len(d) || d[j] != ':' {
			return false
		}
		for _, k := range seen[:n] {
			if k == key {
				return false
			}
		}
		if n == len(seen) {
			return false
		}
		seen[n] = key
		n++
		i = j + 1
		var (
			val string
			num bool
		)
		if i < len(d) && d[i] == '"' {
			val, i, ok = flatString(d, i)
		} else {
			val, i, ok = flatNumber(d, i)
			num = true
		}
		if !ok || i >= len(d) || !set(key, val, num) {
			return false
		}
		switch d[i] {
		case ',':
			i++
		case '}':
			return i == len(d)-1
		default:
			return false
		}
	}
}

// flatString reads a string at d[i] (its opening quote): printable ASCII,
// no escapes. It returns the content and the index after the closing quote.
func flatString(d string, i int) (string, int, bool) {
	if i >= len(d) || d[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return d[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", j, false
		}
	}
	return "", len(d), false
}

// flatNumber reads an integer at d[i]: -?(0|[1-9][0-9]*).
func flatNumber(d string, i int) (string, int, bool) {
	j := i
	if j < len(d) && d[j] == '-' {
		j++
	}
	k := j
	for k < len(d) && '0' <= d[k] && d[k] <= '9' {
		k++
	}
	if k == j || (d[j] == '0' && k > j+1) {
		return "", i, false
	}
	return d[i:k], k, true
}

func str(s string, num bool, out *string) bool {
	if num {
		return false
	}
	*out = s
	return true
}

func int64Of(s string, num bool, out *int64) bool {
	if !num {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*out = n
	return err == nil
}

func intOf(s string, num bool, out *int) bool {
	if !num {
		return false
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	*out = int(n)
	return err == nil
}

func uint64Of(s string, num bool, out *uint64) bool {
	if !num || s[0] == '-' {
		return false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	*out = n
	return err == nil
}

// quotedUnits reads a `json:",string"` integer: a string holding exactly
// an integer literal.
func quotedUnits(s string, num bool, out *money.Units) bool {
	if num {
		return false
	}
	if n, end, ok := flatNumber(s, 0); !ok || end != len(s) || n == "-0" {
		return false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*out = money.Units(v)
	return err == nil
}
