package events

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

func encodeSamples() []Event {
	return []Event{
		&Debit{ID: "01JABCDEFGHJKMNPQRSTVWXYZ0", TimeMs: 1764000000000, ChainID: 137, Payer: PayerCredits, Account: "key_00000000000000000000000000",
			Asset: AssetUSDT, Amount: 30, Calls: 1},
		&Debit{ID: "x", TimeMs: -1, ChainID: math.MaxUint64, Payer: PayerFree, Asset: AssetUSDT, Amount: 0, Calls: 0},
		&Debit{ID: "y", Payer: PayerBundle, Account: "0x0000000000000000000000000000000000000000", Asset: AssetUSDC, Amount: money.Units(math.MinInt64), Calls: math.MaxInt},
		&Revenue{ID: "01JABCDEFGHJKMNPQRSTVWXYZ0", TimeMs: 1764000000000, EpochID: 490000, ChainID: 137, Method: "eth_blockNumber", Payer: PayerCredits,
			Account: "key_01JABCDEFGHJKMNPQRSTVWXYZ0", Asset: AssetUSDT, Amount: 30, Calls: 1, Upstream: "bench"},
		&Revenue{ID: "r", Method: "batch", Payer: PayerFree, Asset: AssetUSDT, Upstream: "NODE-EU-BENCHABC", NodeID: "NODE-EU-BENCHABC"},
		&Revenue{ID: "", TimeMs: math.MinInt64, EpochID: math.MaxInt64, Amount: money.Units(math.MaxInt64), Calls: -3},
	}
}

// The fast encoder writes exactly json.Marshal's bytes, and Encode's
// payload is json.Marshal's whichever path it took.
func TestEncodeFlatIsMarshal(t *testing.T) {
	for _, e := range encodeSamples() {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeFlat(e)
		if !ok || got != string(want) {
			t.Fatalf("encodeFlat(%+v) = %q, %v; json.Marshal = %s", e, got, ok, want)
		}
	}
	// Strings json.Marshal escapes go to json.Marshal.
	for _, s := range []string{`a"b`, `a\b`, "<", ">", "&", "\x00", "\x7f", "é", "\u2028", "\xff"} {
		for _, e := range []Event{&Revenue{ID: "r", Upstream: s}, &Revenue{ID: "r", NodeID: s}, &Debit{ID: s}, &Debit{ID: "d", Account: s}} {
			if got, ok := encodeFlat(e); ok {
				t.Fatalf("encodeFlat took %+v: %q", e, got)
			}
		}
	}
	// Encode uses it for valid events and still writes json.Marshal's bytes.
	d := &Debit{ID: "01JABCDEFGHJKMNPQRSTVWXYZ0", TimeMs: 1764000000000, ChainID: 137, Payer: PayerCredits,
		Account: "key_00000000000000000000000000", Asset: AssetUSDT, Amount: 30, Calls: 1}
	fields, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(d)
	if fields[5] != string(want) {
		t.Fatalf("Encode payload %q, want %s", fields[5], want)
	}
}

// Whatever the fields hold, the fast encoder either declines or writes
// json.Marshal's bytes.
func FuzzEncodeFlat(f *testing.F) {
	f.Add("01JABCDEFGHJKMNPQRSTVWXYZ0", "eth_call", "key_x", "bench", "", int64(1764000000000), uint64(137), int64(30), 1)
	f.Add("a\"<>&\\", "\u2028", "é", "\xff", "n", int64(-1), uint64(math.MaxUint64), int64(math.MinInt64), -1)
	f.Fuzz(func(t *testing.T, id, method, account, upstream, node string, ts int64, chain uint64, amount int64, calls int) {
		for _, e := range []Event{
			&Revenue{ID: id, TimeMs: ts, EpochID: ts / 7, ChainID: chain, Method: method, Payer: Payer(account), Account: account,
				Asset: upstream, Amount: money.Units(amount), Calls: calls, Upstream: upstream, NodeID: node},
			&Debit{ID: id, TimeMs: ts, ChainID: chain, Payer: Payer(method), Account: account, Asset: node, Amount: money.Units(amount), Calls: calls},
		} {
			got, ok := encodeFlat(e)
			if !ok {
				continue
			}
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("encodeFlat %q, json.Marshal %s", got, want)
			}
		}
	})
}

// BenchmarkEncodeDebit is one of the three Debit payloads a keyed request
// encodes (and the Revenue event costs about as much).
func BenchmarkEncodeDebit(b *testing.B) {
	d := encodeSamples()[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDebitMarshal is the same through json.Marshal (the path
// before encodeFlat), for comparison.
func BenchmarkEncodeDebitMarshal(b *testing.B) {
	d := encodeSamples()[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
		m, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		_ = []any{"t", d.EventType(), "v", Version, "d", string(m)}
	}
}
