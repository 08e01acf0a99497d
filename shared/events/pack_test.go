package events

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// A pack decodes to its events in order; a pack of one is an ordinary
// entry, byte for byte.
func TestPackRoundTrip(t *testing.T) {
	var evs []Event
	var payloads []string
	for _, e := range flatSamples() {
		if _, ok := e.(*Revenue); !ok {
			continue
		}
		d, err := Payload(e)
		if err != nil {
			t.Fatal(err)
		}
		evs, payloads = append(evs, e), append(payloads, d)
	}
	if len(evs) < 2 {
		t.Fatalf("%d revenue samples", len(evs))
	}
	single, err := Encode(evs[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := EncodePack(TypeRevenue, payloads[:1]); !reflect.DeepEqual(got, single) {
		t.Fatalf("a pack of one is %v, the event alone %v", got, single)
	}
	v := toValues(EncodePack(TypeRevenue, payloads))
	if v["n"] != strconv.Itoa(len(evs)) {
		t.Fatalf("count %v for %d events", v["n"], len(evs))
	}
	got, err := DecodeEntry(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, evs) {
		t.Fatalf("decoded %+v, packed %+v", got, evs)
	}
	if _, err := Decode(v); err == nil {
		t.Fatal("Decode read a packed entry as one event")
	}
	// Whole or nothing: a bad payload anywhere leaves dst as it was.
	prefix := []Event{evs[0]}
	bad := append(append([]string{}, payloads...), `{"id":"x"}`)
	out, err := AppendDecoded(prefix, TypeRevenue, Version, strconv.Itoa(len(bad)), strings.Join(bad, "\n"))
	if err == nil || len(out) != 1 || out[0] != evs[0] {
		t.Fatalf("a pack with a bad event: %d events, %v", len(out), err)
	}
}

// FuzzAppendDecoded: whatever a stream entry holds, reading it never
// panics, and it is read whole or not at all: on success exactly n events
// (one without a count), each what the same payload decodes to alone.
func FuzzAppendDecoded(f *testing.F) {
	var payloads []string
	for _, e := range flatSamples() {
		if _, ok := e.(*Revenue); ok {
			d, _ := Payload(e)
			payloads = append(payloads, d)
		}
	}
	f.Add("", strings.Join(payloads, "\n"))
	f.Add(strconv.Itoa(len(payloads)), strings.Join(payloads, "\n"))
	f.Add("2", payloads[0]+"\n"+`{"id":"x"}`)
	f.Add("1", "\n")
	f.Fuzz(func(t *testing.T, n, data string) {
		sentinel := &Revenue{ID: "before"}
		out, err := AppendDecoded([]Event{sentinel}, TypeRevenue, Version, n, data)
		if len(out) == 0 || out[0] != sentinel {
			t.Fatal("dst's own events were lost")
		}
		if err != nil {
			if len(out) != 1 {
				t.Fatalf("error %v, yet %d events appended", err, len(out)-1)
			}
			return
		}
		lines := strings.Split(data, "\n")
		want := 1
		if n != "" {
			want = len(lines)
			if strconv.Itoa(want) != n {
				t.Fatalf("count %q accepted for %d payloads", n, want)
			}
		}
		if len(out)-1 != want {
			t.Fatalf("%d events from %d payloads", len(out)-1, want)
		}
		if n != "" {
			for i, line := range lines {
				alone, err := DecodeFields(TypeRevenue, Version, line)
				if err != nil || !reflect.DeepEqual(alone, out[1+i]) {
					t.Fatalf("payload %d decodes alone to %+v (%v), in the pack to %+v", i, alone, err, out[1+i])
				}
			}
		}
	})
}
