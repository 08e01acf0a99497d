package cache

import (
	"strings"
	"testing"
)

func mustKey(t *testing.T, chain uint64, method, params string) Key {
	t.Helper()
	k, ok := Cacheable(chain, item(method, params), fin)
	if !ok {
		t.Fatalf("%s %s: not cacheable", method, params)
	}
	return k
}

func TestKeySame(t *testing.T) {
	upper := strings.ToUpper(addrA[2:])
	groups := []struct {
		method string
		params []string
	}{
		{"eth_getBlockByNumber", []string{
			`["0xa",false]`, `[ "0xa" , false ]`, "\n[\t\"0xA\",false]\r\n", `["0x0A",false]`, `["0X0a",false]`,
			`["0x000000000a",false]`, `["\u0030x0a",false]`,
		}},
		{"eth_call", []string{
			`[{"to":"` + addrA + `","data":"0x70a08231"},"0x10"]`,
			`[{"data":"0x70A08231","to":"0x` + upper + `"},"0x10"]`,
			`[ { "data" : "0x70a08231" , "to" : "` + addrA + `" } , "0x0010" ]`,
		}},
		{"eth_call", []string{
			`[{"to":"` + addrA + `"},{"blockNumber":"0x0A"}]`,
			`[{"to":"` + addrA + `"},{"blockNumber":"0xa"}]`,
		}},
		{"eth_call", []string{
			`[{"to":"` + addrA + `"},"0x10",{"0x` + upper + `":{"stateDiff":{"0xAB":"0xCD"}}}]`,
			`[{"to":"` + addrA + `"},"0x10",{"` + addrA + `":{"stateDiff":{"0xab":"0xcd"}}}]`,
		}},
		{"eth_getTransactionReceipt", []string{
			`["` + hashA + `"]`, `["` + strings.ToUpper(hashA) + `"]`, `["0x` + strings.ToUpper(hashA[2:]) + `"]`,
		}},
		{"eth_getTransactionByBlockNumberAndIndex", []string{`["0x10","0x1"]`, `["0x10","0x01"]`, `["0x10","0X1"]`}},
		{"eth_getTransactionByBlockHashAndIndex", []string{`["` + hashA + `","0x1"]`, `["` + hashA + `","0x0001"]`}},
		{"eth_getLogs", []string{
			`[{"fromBlock":"0x1","toBlock":"0x10","address":"` + addrA + `","topics":["` + hashA + `"]}]`,
			`[{"topics":["` + strings.ToUpper(hashA) + `"],"address":"0x` + upper + `","toBlock":"0x010","fromBlock":"0x01"}]`,
		}},
		{"eth_chainId", []string{``, `null`, `[]`, ` [ ] `}},
		{"eth_getBalance", []string{`["` + addrA + `","0x10"]`, `["` + addrA + `", "0x10"]`}},
	}
	for _, g := range groups {
		want := mustKey(t, 1, g.method, g.params[0])
		for _, p := range g.params[1:] {
			if got := mustKey(t, 1, g.method, p); got != want {
				t.Errorf("%s: %s and %s have different keys", g.method, g.params[0], p)
			}
		}
	}
}

func TestKeyDifferent(t *testing.T) {
	type call struct {
		chain          uint64
		method, params string
	}
	calls := []call{
		{1, "eth_getBlockByNumber", `["0xa",false]`},
		{137, "eth_getBlockByNumber", `["0xa",false]`}, // other chain
		{1, "eth_getBlockByNumber", `["0xa",true]`},    // full transactions
		{1, "eth_getBlockByNumber", `["0xb",false]`},
		{1, "eth_getBlockByNumber", `["0x0",false]`},
		{1, "eth_getBlockByNumber", `["earliest",false]`}, // kept apart from 0x0
		{1, "eth_getBlockReceipts", `["0xa"]`},            // other method
		{1, "eth_getBlockTransactionCountByNumber", `["0xa"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0x00ab"},"0x10"]`}, // calldata zeros matter
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab"},"0x10"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab"},"0x11"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab","gas":1},"0x10"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab","gas":1.0},"0x10"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab"},"` + hashA + `"]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab"},{"blockHash":"` + hashA + `"}]`},
		{1, "eth_call", `[{"to":"` + addrA + `","data":"0xab"},"0x10",{}]`},
		{1, "eth_getBalance", `["` + addrA + `","0x10"]`},
		{1, "eth_getBalance", `["0x00000000219ab540356cbb839cbe05303d7705fb","0x10"]`},
		{1, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10"}]`},
		{1, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10","address":"` + addrA + `"}]`},
		{1, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10","topics":["` + hashA + `"]}]`},
		{1, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10","topics":[null,"` + hashA + `"]}]`},
		{1, "eth_getLogs", `[{"fromBlock":"0x2","toBlock":"0x10"}]`},
		{1, "eth_getTransactionReceipt", `["` + hashA + `"]`},
		{1, "eth_getTransactionByHash", `["` + hashA + `"]`},
		{1, "eth_getTransactionByHash", `["` + hashB + `"]`},
		{1, "eth_chainId", ``},
		{1, "net_version", ``},
	}
	seen := map[Key]call{}
	for _, c := range calls {
		k := mustKey(t, c.chain, c.method, c.params)
		if prev, dup := seen[k]; dup {
			t.Errorf("%v and %v share a key", prev, c)
		}
		seen[k] = c
	}
}

func TestCanonicalForm(t *testing.T) {
	cases := map[string]string{
		` { "b" : 1 , "a" : [ true , null , -1.5e+3 ] } `: `{"a":[true,null,-1.5e+3],"b":1}`,
		`"\u0041\n\"\\\/\t\u00e9\ud83e\udd8a"`:            "\"A\\u000a\\\"\\\\/\\u0009é🦊\"",
		`"0xABcd"`:                                        `"0xabcd"`,
		`"0XAB"`:                                          `"0xab"`,
		`"Latest"`:                                        `"Latest"`, // not hex: untouched
		`"0xABG"`:                                         `"0xABG"`,
		`{"0xAB":"x","0xaa":"y"}`:                         `{"0xaa":"y","0xab":"x"}`,
		`[]`:                                              `[]`,
		`{}`:                                              `{}`,
	}
	for in, want := range cases {
		n, err := parseCanonical([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := string(appendCanonical(nil, &n)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{
		``, `[`, `]`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `1e`, `tru`, `nul`, `"\x"`, `"\u12"`,
		`"\ud800"`, `"\ud800\u0041"`, `"\udc00"`, "\"\xff\"", "\"a\x01\"", `{"a":1,"a":2}`, `[1] 2`, `"abc`,
		strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2),
	} {
		if _, err := parseCanonical([]byte(in)); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
}
