package chains

import "testing"

func TestLookup(t *testing.T) {
	for in, want := range map[string]uint64{"137": 137, "polygon": 137, "1": 1, "Ethereum": 1, "42161": 42161,
		"arbitrum": 42161, "8453": 8453, "base": 8453, "80002": 80002, "amoy": 80002} {
		c, err := Lookup(in)
		if err != nil || c.ID != want {
			t.Errorf("Lookup(%q) = %d, %v; want %d", in, c.ID, err, want)
		}
	}
	for _, in := range []string{"", "56", "0137x", "-1", "bsc", "18446744073709551616"} {
		if _, err := Lookup(in); err == nil {
			t.Errorf("Lookup(%q) accepted", in)
		}
	}
}

func TestTable(t *testing.T) {
	if len(All()) != 5 || All()[0].ID != Default {
		t.Fatalf("table = %+v", All())
	}
	c, _ := ByID(8453)
	if c.Network() != "eip155:8453" || c.HexID() != "0x2105" {
		t.Fatalf("base = %s %s", c.Network(), c.HexID())
	}
	p, _ := ByID(137)
	if p.HexID() != "0x89" {
		t.Fatalf("polygon hex = %s", p.HexID())
	}
}
