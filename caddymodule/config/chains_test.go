package config

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// TestChainBlock: the chain block's description lines become the chain's
// chains.Spec, which Caddy stores as JSON with the names settlementd's
// chains file uses, and the table has the chain.
func TestChainBlock(t *testing.T) {
	g, err := parse(t, `tollgate {
	default_chain optimism
	chain 10 {
		name         optimism
		display_name OP Mainnet
		block_time   2s
		finality     tag
		explorer     https://optimistic.etherscan.io
		currency     ETH 18
		provider op https://mainnet.optimism.io
	}
	chain 11155111 {
		name       sepolia
		testnet
		block_time 12s
		finality   64
	}
	chain 137 {
		finality 128
	}
}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(g.Chains[0])
	want := `{"id":10,"name":"optimism","display_name":"OP Mainnet","block_time":"2s","finality":"tag","explorer":"https://optimistic.etherscan.io","currency":{"symbol":"ETH","decimals":18},"providers":[{"name":"op","url":"https://mainnet.optimism.io"}]}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back ChainConfig
	if err := json.Unmarshal(b, &back); err != nil || back.Finality == nil || !back.Finality.Tag || time.Duration(back.BlockTime) != 2*time.Second {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	tb, err := g.ChainTable()
	if err != nil {
		t.Fatal(err)
	}
	if tb.Default().ID != 10 || tb.IDs() != "10, 137, 1, 42161, 8453, 80002, 11155111" {
		t.Fatalf("table %s", tb.IDs())
	}
	s, _ := tb.Lookup("sepolia")
	if !s.Testnet || s.Display != "sepolia" || s.Finality != (chains.Finality{Depth: 64}) || s.Currency.Symbol != "ETH" {
		t.Fatalf("sepolia %+v", s)
	}
	if p, _ := tb.ByID(137); p.Finality.Depth != 128 || p.Name != "polygon" {
		t.Fatalf("polygon %+v", p)
	}
	// A chain block with providers only keeps the built-in chain as it is.
	g, err = parse(t, "tollgate {\n chain 8453 {\n provider a https://a.example\n }\n}")
	if err != nil {
		t.Fatal(err)
	}
	if tb, err := g.ChainTable(); err != nil || tb.IDs() != chains.Builtin().IDs() {
		t.Fatalf("%v %v", tb, err)
	}
}

// TestChainBlockRefusesBadLines: lines the Caddyfile cannot read are
// refused with the chain named.
func TestChainBlockRefusesBadLines(t *testing.T) {
	for line, want := range map[string]string{
		"finality soon":                      `chain 10: finality "soon": want a depth in blocks (a positive integer) or tag`,
		"finality 0":                         `chain 10: finality "0": want a depth`,
		"finality":                           "chain 10: finality: want one value",
		"block_time two":                     `chain 10: block_time: want a duration such as 2s, got "two"`,
		"block_time -1s":                     `chain 10: block_time: want a duration such as 2s, got "-1s"`,
		"currency ETH":                       "chain 10: currency: want <symbol> <decimals>",
		"currency ETH 300":                   `chain 10: currency decimals: want 0 to 36, got "300"`,
		"testnet yes":                        "chain 10: testnet takes no value",
		"default 10":                         "chain 10: default takes no value",
		"name":                               "chain 10: name: want one value",
		"explorer a b":                       "chain 10: explorer: want one value",
		"display_name":                       "chain 10: display_name: want a name",
		"rpc https://x.example":              `chain 10: unrecognized option "rpc"`,
		"prove_bodies maybe":                 `chain 10: prove_bodies "maybe": want on or off`,
		"prove_bodies":                       "wrong argument count",
		"prove_bodies on\n prove_bodies off": "chain 10: prove_bodies given twice",
	} {
		_, err := parse(t, "tollgate {\n chain 10 {\n "+line+"\n }\n}")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", line, err, want)
		}
	}
	if _, err := parse(t, "tollgate {\n default_chain\n}"); err == nil || !strings.Contains(err.Error(), "default_chain: want one chain id or name") {
		t.Errorf("default_chain without a value: %v", err)
	}
}

// TestFinalityDepthReachesBuiltinChains: finality_depth is the built-in
// chains' finality unless their chain block says otherwise; an added chain
// keeps its own.
func TestFinalityDepthReachesBuiltinChains(t *testing.T) {
	g, err := parse(t, "tollgate {\n finality_depth 2\n chain 137 {\n provider a https://a.example\n }\n chain 1 {\n finality tag\n }\n chain 10 {\n name optimism\n block_time 2s\n finality 7\n }\n}")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := g.ChainTable()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint64]chains.Finality{137: {Depth: 2}, 8453: {Depth: 2}, 1: {Tag: true}, 10: {Depth: 7}} {
		if c, _ := tb.ByID(id); c.Finality != want {
			t.Errorf("chain %d finality %+v, want %+v", id, c.Finality, want)
		}
	}
	if tb.IDs() != "137, 1, 42161, 8453, 80002, 10" {
		t.Fatalf("order %s", tb.IDs())
	}
}

// TestProveBodiesPerChain: prove_bodies on/off is kept per chain; a chain
// without it has none (the family default applies, verify.ProvesBodies).
func TestProveBodiesPerChain(t *testing.T) {
	g, err := parse(t, "tollgate {\n chain 137 {\n prove_bodies on\n }\n chain 1 {\n prove_bodies off\n }\n chain 8453 {\n provider a https://a.example\n }\n}")
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]string{}
	for _, c := range g.Chains {
		got[c.ID] = "unset"
		if c.ProveBodies != nil {
			got[c.ID] = map[bool]string{true: "on", false: "off"}[*c.ProveBodies]
		}
	}
	if want := map[uint64]string{137: "on", 1: "off", 8453: "unset"}; !maps.Equal(got, want) {
		t.Fatalf("prove_bodies %v, want %v", got, want)
	}
}
