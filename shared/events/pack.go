package events

import (
	"fmt"
	"strconv"
	"strings"
)

// A packed entry holds several events of one type. The
// gateway's event writer packs the revenue events it has queued into one
// XADD, so what Redis and settlementd pay per stream entry (the XADD, the
// consumer group's pending-list entry, its read and its XACK) is paid once
// for many events. Its fields are a single event's plus "n", the number of
// events, and "d" holds their payloads one per line. No payload holds a raw
// newline: json.Marshal escapes control characters and adds no whitespace,
// and encodeFlat writes printable ASCII only. An entry without "n" is one
// event, written exactly as before packing.
//
// A settlementd from before packing cannot read a packed entry ("d" is not
// one JSON value) and parks it as a dead letter, whole: upgrade settlementd
// before the gateways.

// MaxPack is the most events a packed entry may hold; a reader refuses more
// (the entry is parked), so a broken writer cannot make one entry cost
// unbounded memory.
const MaxPack = 1024

// EncodePack returns the XADD field/value list of one entry holding events
// of type typ, given their payloads (Payload). One payload makes an
// ordinary single-event entry.
func EncodePack(typ string, payloads []string) []any {
	if len(payloads) == 1 {
		return []any{"t", typ, "v", Version, "d", payloads[0]}
	}
	return []any{"t", typ, "v", Version, "n", strconv.Itoa(len(payloads)), "d", strings.Join(payloads, "\n")}
}

// AppendDecoded appends the events of one stream entry to dst, given its
// "t", "v", "n" and "d" fields (empty when absent): one event when n is
// empty, n events otherwise. An entry is decoded whole or not at all: on an
// error dst is returned as it was given.
func AppendDecoded(dst []Event, typ, ver, n, data string) ([]Event, error) {
	if n == "" {
		e, err := DecodeFields(typ, ver, data)
		if err != nil {
			return dst, err
		}
		return append(dst, e), nil
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > MaxPack || strconv.Itoa(k) != n {
		return dst, fmt.Errorf("packed entry: event count %q is not 1 to %d", n, MaxPack)
	}
	if lines := strings.Count(data, "\n") + 1; lines != k {
		return dst, fmt.Errorf("packed entry: %d payloads, its count says %d", lines, k)
	}
	start := len(dst)
	for i := range k {
		line, rest, _ := strings.Cut(data, "\n")
		e, err := DecodeFields(typ, ver, line)
		if err != nil {
			clear(dst[start:])
			return dst[:start], fmt.Errorf("packed entry, event %d of %d: %w", i+1, k, err)
		}
		dst, data = append(dst, e), rest
	}
	return dst, nil
}
