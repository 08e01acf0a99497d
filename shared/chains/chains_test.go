package chains

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLookup(t *testing.T) {
	b := Builtin()
	for in, want := range map[string]uint64{"137": 137, "polygon": 137, "1": 1, "Ethereum": 1, "42161": 42161,
		"arbitrum": 42161, "8453": 8453, "base": 8453, "80002": 80002, "amoy": 80002} {
		c, err := b.Lookup(in)
		if err != nil || c.ID != want {
			t.Errorf("Lookup(%q) = %d, %v; want %d", in, c.ID, err, want)
		}
	}
	for _, in := range []string{"", "56", "0137x", "-1", "bsc", "18446744073709551616"} {
		if _, err := b.Lookup(in); err == nil {
			t.Errorf("Lookup(%q) accepted", in)
		}
	}
}

func TestTable(t *testing.T) {
	b := Builtin()
	if b.Len() != 5 || b.All()[0].ID != Default || b.Default().ID != Default {
		t.Fatalf("table = %+v", b.All())
	}
	if b.IDs() != "137, 1, 42161, 8453, 80002" || b.Names() != "polygon, ethereum, arbitrum, base, amoy" {
		t.Fatalf("ids %q names %q", b.IDs(), b.Names())
	}
	c, _ := b.ByID(8453)
	if c.Network() != "eip155:8453" || c.HexID() != "0x2105" {
		t.Fatalf("base = %s %s", c.Network(), c.HexID())
	}
	p, _ := b.ByID(137)
	if p.HexID() != "0x89" || p.Currency.Symbol != "POL" || p.Finality.Depth != DefaultFinalityDepth {
		t.Fatalf("polygon = %+v", p)
	}
}

// TestLookupAllocatesNothing: the request path resolves /rpc/{chain} with
// the table; a hit must not allocate.
func TestLookupAllocatesNothing(t *testing.T) {
	b := Builtin()
	for _, s := range []string{"8453", "base"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = b.Lookup(s) }); n != 0 {
			t.Errorf("Lookup(%q) allocates %v times", s, n)
		}
	}
}

func finality(s string) *FinalitySpec {
	f, err := ParseFinality(s)
	if err != nil {
		panic(err)
	}
	v := FinalitySpec(f)
	return &v
}

func TestBuildAddsAndOverrides(t *testing.T) {
	tb, err := Build([]Spec{
		{ID: 137, Finality: finality("tag")}, // a built-in, one field changed
		{ID: 8453},                           // providers only: unchanged
		{ID: 10, Name: "optimism", DisplayName: "OP Mainnet", BlockTime: Duration(2 * time.Second), Finality: finality("tag"),
			Explorer: "https://optimistic.etherscan.io/", Currency: &Currency{"ETH", 18}},
		{ID: 31337, Name: "devchain", Testnet: true, BlockTime: Duration(time.Second), Finality: finality("2"), Default: true},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if tb.IDs() != "31337, 137, 1, 42161, 8453, 80002, 10" {
		t.Fatalf("ids %s", tb.IDs())
	}
	d := tb.Default()
	if d.ID != 31337 || d.Display != "devchain" || !d.Testnet || d.Finality.Depth != 2 || d.Currency != (Currency{"ETH", 18}) {
		t.Fatalf("default %+v", d)
	}
	op, _ := tb.Lookup("Optimism")
	if op.ID != 10 || op.Display != "OP Mainnet" || op.Explorer != "https://optimistic.etherscan.io" || !op.Finality.Tag {
		t.Fatalf("optimism %+v", op)
	}
	p, _ := tb.ByID(137)
	if !p.Finality.Tag || p.Name != "polygon" || p.BlockTime != 2*time.Second {
		t.Fatalf("polygon %+v", p)
	}
	b, _ := tb.ByID(8453)
	if bb, _ := Builtin().ByID(8453); b != bb {
		t.Fatalf("base changed: %+v", b)
	}
	// A default named by the top-level option.
	tb, err = Build([]Spec{{ID: 10, Name: "optimism", BlockTime: Duration(time.Second), Finality: finality("tag")}}, "optimism")
	if err != nil || tb.Default().ID != 10 {
		t.Fatalf("default by name: %v %v", tb, err)
	}
}

// TestBuildRefusesBadChains: each bad configuration is refused with an
// error that names the chain.
func TestBuildRefusesBadChains(t *testing.T) {
	ok := func(id uint64, name string) Spec {
		return Spec{ID: id, Name: name, BlockTime: Duration(time.Second), Finality: finality("10")}
	}
	for _, c := range []struct {
		name  string
		specs []Spec
		def   string
		want  string
	}{
		{"duplicate id", []Spec{ok(10, "optimism"), ok(10, "op")}, "", "chain 10 (op): configured twice (duplicate id 10)"},
		{"duplicate name with a built-in", []Spec{ok(10, "base")}, "", `chain 10 (base): name "base" is already chain 8453's (duplicate name)`},
		{"duplicate name", []Spec{ok(10, "op"), ok(11, "op")}, "", `chain 11 (op): name "op" is already chain 10's (duplicate name)`},
		{"unknown default", []Spec{ok(10, "optimism")}, "bsc", `default chain "bsc" is not configured (unknown default; configured: polygon, ethereum, arbitrum, base, amoy, optimism)`},
		{"unknown default id", nil, "56", `default chain "56" is not configured`},
		{"two defaults", []Spec{{ID: 1, Default: true}, {ID: 8453, Default: true}}, "", "chain 8453: default, but chain 1 is already the default"},
		{"default flag and option disagree", []Spec{{ID: 1, Default: true}}, "base", `default chain "base", but chain 1 says default too`},
		{"missing block time", []Spec{{ID: 10, Name: "optimism", Finality: finality("tag")}}, "", "chain 10 (optimism): block_time is missing"},
		{"missing finality", []Spec{{ID: 10, Name: "optimism", BlockTime: Duration(time.Second)}}, "", "chain 10 (optimism): finality is missing"},
		{"missing both", []Spec{{ID: 10, Name: "optimism"}}, "", "chain 10 (optimism): block_time and finality are missing"},
		{"missing name", []Spec{{ID: 56, BlockTime: Duration(time.Second), Finality: finality("15")}}, "", "chain 56: name is missing"},
		{"explorer http", []Spec{func() Spec { s := ok(10, "optimism"); s.Explorer = "http://optimistic.etherscan.io"; return s }()}, "",
			`chain 10 (optimism): explorer "http://optimistic.etherscan.io" must be an https:// URL`},
		{"explorer not a URL", []Spec{{ID: 137, Explorer: "polygonscan.com"}}, "", `chain 137: explorer "polygonscan.com" must be an https:// URL`},
		{"bad name", []Spec{ok(10, "Optimism")}, "", `chain 10 (Optimism): name "Optimism" must be lower case`},
		{"numeric name", []Spec{ok(10, "10")}, "", `chain 10 (10): name "10" must be lower case letters`},
		{"zero id", []Spec{ok(0, "zero")}, "", "chain 0 (zero): id is required"},
		{"block time too long", []Spec{func() Spec { s := ok(10, "optimism"); s.BlockTime = Duration(2 * time.Hour); return s }()}, "",
			"chain 10 (optimism): block_time 2h0m0s: want a positive duration up to 1h0m0s"},
		{"bad currency", []Spec{func() Spec { s := ok(10, "optimism"); s.Currency = &Currency{"E TH", 18}; return s }()}, "",
			`chain 10 (optimism): currency symbol "E TH"`},
	} {
		_, err := Build(c.specs, c.def)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestSpecJSON(t *testing.T) {
	var s Spec
	if err := json.Unmarshal([]byte(`{"id":10,"name":"optimism","block_time":"2s","finality":"tag","currency":{"symbol":"ETH","decimals":18}}`), &s); err != nil {
		t.Fatal(err)
	}
	if time.Duration(s.BlockTime) != 2*time.Second || !s.Finality.Tag || s.Currency.Decimals != 18 {
		t.Fatalf("%+v", s)
	}
	if err := json.Unmarshal([]byte(`{"id":10,"block_time":2000000000,"finality":12}`), &s); err != nil || s.Finality.Depth != 12 || time.Duration(s.BlockTime) != 2*time.Second {
		t.Fatalf("%+v %v", s, err)
	}
	b, _ := json.Marshal(s)
	if !strings.Contains(string(b), `"block_time":"2s","finality":12`) {
		t.Fatalf("marshalled %s", b)
	}
	for _, bad := range []string{`{"finality":"soon"}`, `{"finality":0}`, `{"block_time":"2 s"}`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "chains.json")
	os.WriteFile(good, []byte(`{"default_chain":"polygon","chains":[{"id":10,"name":"optimism","block_time":"2s","finality":"tag","explorer":"https://optimistic.etherscan.io"}]}`), 0o600)
	tb, err := LoadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := tb.ByID(10); !ok || c.Name != "optimism" || tb.Default().ID != 137 {
		t.Fatalf("%+v", tb.All())
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"chains":[{"id":10,"name":"optimism","blocktime":"2s"}]}`), 0o600)
	if _, err := LoadFile(bad); err == nil || !strings.Contains(err.Error(), `unknown field "blocktime"`) {
		t.Fatalf("misspelt key: %v", err)
	}
	os.WriteFile(bad, []byte(`{"chains":[{"id":10,"name":"optimism","block_time":"2s"}]}`), 0o600)
	if _, err := LoadFile(bad); err == nil || !strings.Contains(err.Error(), "chain 10 (optimism): finality is missing") {
		t.Fatalf("missing finality: %v", err)
	}
	l := NewLive(nil)
	if l.Load() != Builtin() {
		t.Fatal("NewLive(nil) is not the built-in table")
	}
	l.Store(tb)
	if _, ok := l.Load().ByID(10); !ok {
		t.Fatal("Store did not take")
	}
}
