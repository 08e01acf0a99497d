package events

import "strconv"

// encodeFlat writes the payload of the events the gateway writes on every
// paid request (the Debit the metering script books — three variants per
// keyed request — and the Revenue event) without reflection: encoding/json
// was most of what encoding them cost (make bench profile). It
// writes exactly the bytes json.Marshal would (TestEncodeFlatIsMarshal,
// FuzzEncodeFlat) and reports false — Encode then uses json.Marshal — for
// any other event or any string json.Marshal would escape.
func encodeFlat(e Event) (string, bool) {
	var b []byte
	ok := true
	switch e := e.(type) {
	case *Debit:
		b = make([]byte, 0, 192)
		b, ok = appendStr(b, `{"id":`, e.ID, ok)
		b = strconv.AppendInt(append(b, `,"ts":`...), e.TimeMs, 10)
		b = strconv.AppendUint(append(b, `,"chain_id":`...), e.ChainID, 10)
		b, ok = appendStr(b, `,"payer":`, string(e.Payer), ok)
		if e.Account != "" {
			b, ok = appendStr(b, `,"account":`, e.Account, ok)
		}
		b, ok = appendStr(b, `,"asset":`, e.Asset, ok)
		b = append(strconv.AppendInt(append(b, `,"amount_units":"`...), int64(e.Amount), 10), '"')
		b = strconv.AppendInt(append(b, `,"calls":`...), int64(e.Calls), 10)
	case *Revenue:
		b = make([]byte, 0, 256)
		b, ok = appendStr(b, `{"id":`, e.ID, ok)
		b = strconv.AppendInt(append(b, `,"ts":`...), e.TimeMs, 10)
		b = strconv.AppendInt(append(b, `,"epoch_id":`...), e.EpochID, 10)
		b = strconv.AppendUint(append(b, `,"chain_id":`...), e.ChainID, 10)
		b, ok = appendStr(b, `,"method":`, e.Method, ok)
		b, ok = appendStr(b, `,"payer":`, string(e.Payer), ok)
		if e.Account != "" {
			b, ok = appendStr(b, `,"account":`, e.Account, ok)
		}
		b, ok = appendStr(b, `,"asset":`, e.Asset, ok)
		b = append(strconv.AppendInt(append(b, `,"amount_units":"`...), int64(e.Amount), 10), '"')
		b = strconv.AppendInt(append(b, `,"calls":`...), int64(e.Calls), 10)
		b, ok = appendStr(b, `,"upstream":`, e.Upstream, ok)
		if e.NodeID != "" {
			b, ok = appendStr(b, `,"node_id":`, e.NodeID, ok)
		}
	default:
		return "", false
	}
	if !ok {
		return "", false
	}
	return string(append(b, '}')), true
}

// appendStr appends a string field; ok turns false (and stays so) when s
// holds a byte json.Marshal would escape: printable ASCII is written as it
// is except the quote, the backslash and (HTML-safe) <, > and &.
func appendStr(b []byte, key, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(append(b, key...), '"')
	return append(append(b, s...), '"'), ok
}
