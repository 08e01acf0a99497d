package intel

import "testing"

func TestParseRate(t *testing.T) {
	ok := map[string]int64{"0.00010000": 100_000, "-0.001212": -1_212_000, "0": 0, "0.000000001": 1,
		"0.0000000010": 1, "+0.01": 10_000_000, "1": 1_000_000_000}
	for s, want := range ok {
		got, err := ParseRate(s)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, err, want)
		}
		if err == nil && FormatRate(got) != map[string]string{"0.00010000": "0.0001", "-0.001212": "-0.001212", "0": "0",
			"0.000000001": "0.000000001", "0.0000000010": "0.000000001", "+0.01": "0.01", "1": "1"}[s] {
			t.Errorf("FormatRate(%d) = %q", got, FormatRate(got))
		}
	}
	for _, s := range []string{"", "1e-4", " 0.1", "0.1 ", ".1", "1.", "0.0000000001", "NaN", "abc", "--1", "1001", "0x10"} {
		if _, err := ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q) accepted", s)
		}
	}
}
