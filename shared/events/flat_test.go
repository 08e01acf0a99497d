package events

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func flatSamples() []Event {
	return []Event{
		sample(),
		&Revenue{ID: "r2", TimeMs: 60_000, EpochID: 1, ChainID: 1, Method: "batch", Payer: PayerFree, Asset: AssetUSDT, Calls: 1, Upstream: "cache"},
		&Debit{ID: "r1", TimeMs: 1, ChainID: 137, Payer: PayerCredits, Account: "key_x", Asset: AssetUSDT, Amount: 90, Calls: 3},
		&Debit{ID: "r3", TimeMs: 7, ChainID: 8453, Payer: PayerFree, Asset: AssetUSDT, Calls: 1},
		&Refund{ID: "r1", TimeMs: 2, Payer: PayerBundle, Account: "0x00000000000000000000000000000000a11e7000", Amount: 300, Calls: 3},
	}
}

// The fast path takes what Encode writes (otherwise it would be dead code
// that only looks fast), and gives what encoding/json gives.
func TestDecodeFlatTakesEncoderOutput(t *testing.T) {
	for _, e := range flatSamples() {
		f, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		data := toValues(f)["d"].(string)
		fast := decoders[e.EventType()]()
		if !decodeFlat(data, fast) {
			t.Fatalf("%s: fast path refused %s", e.EventType(), data)
		}
		if !reflect.DeepEqual(fast, e) {
			t.Fatalf("%s: fast path gave %+v, want %+v", e.EventType(), fast, e)
		}
		back, err := Decode(toValues(f))
		if err != nil || !reflect.DeepEqual(back, e) {
			t.Fatalf("%s: Decode gave %+v %v", e.EventType(), back, err)
		}
	}
}

// What the fast path does not take still decodes, through encoding/json.
func TestDecodeFlatFallsBack(t *testing.T) {
	base := `{"id":"r1","ts":1,"chain_id":137,"payer":"credits","account":"key_x","asset":"USDT","amount_units":"90","calls":3}`
	for _, d := range []string{
		strings.Replace(base, `"key_x"`, `"key_\u0078"`, 1),          // escape
		strings.Replace(base, `"ts":1,`, `"ts": 1,`, 1),              // whitespace
		strings.Replace(base, `"calls":3`, `"calls":3,"x":1`, 1),     // unknown key
		strings.Replace(base, `"ts":1,`, `"TS":1,`, 1),               // json matches keys case-insensitively
		strings.Replace(base, `"calls":3`, `"calls":3,"calls":3`, 1), // repeated key
		strings.Replace(base, `"amount_units":"90"`, `"amount_units":"+90"`, 1),
	} {
		if decodeFlat(d, new(Debit)) {
			t.Errorf("fast path took %s", d)
		}
		var want Debit
		jerr := json.Unmarshal([]byte(d), &want)
		got, err := Decode(map[string]any{"t": TypeDebit, "v": Version, "d": d})
		if jerr == nil && (err != nil || !reflect.DeepEqual(got, &want)) {
			t.Errorf("%s: Decode gave %+v %v, want %+v", d, got, err, want)
		}
	}
}

// FuzzDecodeFlat: wherever the fast path accepts a payload, encoding/json
// accepts it too and fills the struct identically.
func FuzzDecodeFlat(f *testing.F) {
	for _, e := range flatSamples() {
		fields, _ := Encode(e)
		f.Add(toValues(fields)["d"].(string))
	}
	f.Add(`{"id":"a","ts":-0,"epoch_id":-5,"chain_id":0,"amount_units":"0","calls":0}`)
	f.Add(`{"ts":9223372036854775808}`)
	f.Fuzz(func(t *testing.T, d string) {
		for _, mk := range []func() Event{
			func() Event { return new(Revenue) }, func() Event { return new(Debit) }, func() Event { return new(Refund) },
		} {
			fast := mk()
			if !decodeFlat(d, fast) {
				continue
			}
			slow := mk()
			if err := json.Unmarshal([]byte(d), slow); err != nil {
				t.Fatalf("fast path took %q, encoding/json refuses it: %v", d, err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: fast %+v, encoding/json %+v", d, fast, slow)
			}
		}
	})
}
