package events

import (
	"strings"
	"testing"
)

func TestAdjustmentRoundTripAndValidate(t *testing.T) {
	good := func() *Adjustment {
		return &Adjustment{ID: "adj_01JABCDEFGHJKMNPQRSTVWXYZ0", Account: "key_01JABCDEFGHJKMNPQRSTVWXYZ0", Units: -1_500_000,
			Reason: "chargeback", TimeMs: 1_763_700_000_123}
	}
	fields, err := Encode(good())
	if err != nil {
		t.Fatal(err)
	}
	if d := toValues(fields)["d"].(string); !strings.Contains(d, `"units":"-1500000"`) {
		t.Fatalf("units not a signed decimal string: %s", d)
	}
	out, err := Decode(toValues(fields))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*Adjustment); *got != *good() || got.EventID() != "adjust:"+good().ID {
		t.Fatalf("round trip: %+v", got)
	}
	for i, mut := range []func(*Adjustment){
		func(a *Adjustment) { a.ID = "" },
		func(a *Adjustment) { a.ID = strings.Repeat("x", 65) },
		func(a *Adjustment) { a.Account = "0xwallet" },
		func(a *Adjustment) { a.Units = 0 },
		func(a *Adjustment) { a.TimeMs = 0 },
		func(a *Adjustment) { a.Reason = "  " },
		func(a *Adjustment) { a.Reason = "line\nbreak" },
		func(a *Adjustment) { a.Reason = strings.Repeat("é", MaxReasonLen+1) },
	} {
		a := good()
		mut(a)
		if _, err := Encode(a); err == nil {
			t.Errorf("case %d: invalid adjustment encoded", i)
		}
	}
	if a := good(); ValidReason(strings.Repeat("é", MaxReasonLen)) != nil || a.Validate() != nil {
		t.Fatal("a 200-character reason is valid")
	}
}
