package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"testing/quick"
)

func TestParse(t *testing.T) {
	ok := map[string]Units{
		"0": 0, "0.00003": 30, "1": 1_000_000, "1.5": 1_500_000, "0.1": 100_000,
		"33333.000001": 33_333_000_001, "000.000001": 1, "9223372036854": 9_223_372_036_854_000_000,
	}
	for in, want := range ok {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := []string{"", "-1", "+1", "1e6", "1E-3", "NaN", "Inf", "inf", "0x10", " 1", "1 ", "1.", ".5",
		"1.0000001", "1,5", "1..2", "9223372036855", "99999999999999999999", "١", "0.00000000000000000000000000001"}
	for _, in := range bad {
		if got, err := Parse(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %d, %v; want ErrInvalid", in, got, err)
		}
	}
}

func TestParseUnits(t *testing.T) {
	if u, err := ParseUnits("30"); err != nil || u != 30 {
		t.Fatalf("ParseUnits(30) = %d, %v", u, err)
	}
	for _, in := range []string{"", "-30", "3.0", "1e3", "9223372036854775808", " 30"} {
		if _, err := ParseUnits(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseUnits(%q) err = %v; want ErrInvalid", in, err)
		}
	}
}

func TestDecimal(t *testing.T) {
	cases := map[Units]string{0: "0", 30: "0.00003", 1: "0.000001", 1_000_000: "1", 1_500_000: "1.5",
		33_333_000_010: "33333.00001", -30: "-0.00003", math.MaxInt64: "9223372036854.775807"}
	for in, want := range cases {
		if got := in.Decimal(); got != want {
			t.Errorf("(%d).Decimal() = %q; want %q", in, got, want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	f := func(v int64) bool {
		if v < 0 {
			v = -(v + 1)
		}
		u := Units(v)
		back, err := Parse(u.Decimal())
		return err == nil && back == u
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

func TestUSDTJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		A USDT `json:"claimable_usdt"`
	}{USDT(30)})
	if err != nil || string(b) != `{"claimable_usdt":0.00003}` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var v struct {
		A USDT `json:"a"`
	}
	if err := json.Unmarshal([]byte(`{"a":1.25}`), &v); err != nil || v.A != 1_250_000 {
		t.Fatalf("unmarshal = %d, %v", v.A, err)
	}
	if err := json.Unmarshal([]byte(`{"a":1e3}`), &v); err == nil {
		t.Fatal("exponent accepted")
	}
}

func TestFromBig(t *testing.T) {
	if u, err := FromBig(big.NewInt(42)); err != nil || u != 42 {
		t.Fatalf("FromBig(42) = %d, %v", u, err)
	}
	huge, _ := new(big.Int).SetString("1"+strings.Repeat("0", 30), 10)
	for _, b := range []*big.Int{nil, big.NewInt(-1), huge} {
		if _, err := FromBig(b); err == nil {
			t.Errorf("FromBig(%v) accepted", b)
		}
	}
}

func TestSplitSumsExactly(t *testing.T) {
	cases := map[Units][3]Units{0: {}, 1: {0, 0, 1}, 7: {3, 2, 2}, 10: {5, 3, 2}, 30: {15, 9, 6}, 99: {49, 29, 21}}
	for total, want := range cases {
		o, p, q := Split(total)
		if [3]Units{o, p, q} != want {
			t.Errorf("Split(%d) = %d/%d/%d; want %v", total, o, p, q, want)
		}
	}
	f := func(v int64) bool {
		if v < 0 {
			v = -(v + 1)
		}
		T := Units(v)
		o, p, q := Split(T)
		// floor(T*30/100) computed in big ints to check the overflow-free formula.
		wantP := new(big.Int).Div(new(big.Int).Mul(big.NewInt(v), big.NewInt(30)), big.NewInt(100))
		return o+p+q == T && o == T/2 && p.Big().Cmp(wantP) == 0 && q >= 0
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

// FuzzParse feeds arbitrary text from the network: Parse must never panic, and
// whatever it accepts must print back to an equal value with at most 6 decimals.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "0.00003", "1.5", "-1", "1e3", "NaN", ".5", "1.", "9223372036854.775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if u < 0 {
			t.Fatalf("Parse(%q) = %d < 0", s, u)
		}
		back, err := Parse(u.Decimal())
		if err != nil || back != u {
			t.Fatalf("round trip of %q: %q -> %d, %v", s, u.Decimal(), back, err)
		}
	})
}
