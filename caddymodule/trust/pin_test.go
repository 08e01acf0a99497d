package trust

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// headAt is a Head holding blocks 90..100 (hash 0x…<n>), head 100.
func headAt() *Head {
	h := &Head{hashes: map[uint64]string{}}
	for n := uint64(90); n <= 100; n++ {
		h.hashes[n] = "0x" + strings.Repeat("0", 62) + string(rune('a'+n-90)) + "f"
	}
	h.head = 100
	return h
}

func call(method, params string) jsonrpc.Item {
	return jsonrpc.Item{Method: method, Params: json.RawMessage(params), ID: json.RawMessage("1")}
}

// The pin table: what a node may answer, and the call it then gets.
func TestPinCalls(t *testing.T) {
	h := headAt()
	hash100, _ := h.HashAt(100)
	hash98, _ := h.HashAt(98)
	const addr = `"0x00000000000000000000000000000000000000e1"`
	for _, c := range []struct {
		name, method, params string
		nodeOK               bool
		want                 string // the params sent ("" unchanged)
		judge                evm.Judge
	}{
		{"balance at latest", "eth_getBalance", `[` + addr + `,"latest"]`, true, `[` + addr + `,{"blockHash":"` + hash100 + `"}]`, evm.JudgeState},
		{"call with the block omitted", "eth_call", `[{"to":` + addr + `}]`, true, `[{"to":` + addr + `},{"blockHash":"` + hash100 + `"}]`, evm.JudgeState},
		{"balance at a recent number", "eth_getBalance", `[` + addr + `,"0x62"]`, true, `[` + addr + `,{"blockHash":"` + hash98 + `"}]`, evm.JudgeState},
		// A caller's number is read as an upstream reads it (ethparse.Quantity):
		// padded past 16 digits, or 0X, it is the same block, pinned by hash.
		{"balance at a padded recent number", "eth_getBalance", `[` + addr + `,"0x` + strings.Repeat("0", 17) + `62"]`, true, `[` + addr + `,{"blockHash":"` + hash98 + `"}]`, evm.JudgeState},
		{"balance at a 0X recent number", "eth_getBalance", `[` + addr + `,"0X62"]`, true, `[` + addr + `,{"blockHash":"` + hash98 + `"}]`, evm.JudgeState},
		{"balance at a number over 64 bits", "eth_getBalance", `[` + addr + `,"0x1` + strings.Repeat("0", 16) + `"]`, false, "", 0},
		{"balance at a final number", "eth_getBalance", `[` + addr + `,"0x10"]`, true, "", evm.JudgeFinal},
		{"balance at an unknown recent number", "eth_getBalance", `[` + addr + `,"0x65"]`, false, "", 0},
		{"balance at pending", "eth_getBalance", `[` + addr + `,"pending"]`, false, "", 0},
		{"balance at safe", "eth_getBalance", `[` + addr + `,"safe"]`, false, "", 0},
		{"block at latest", "eth_getBlockByNumber", `["latest",false]`, true, `["0x64",false]`, evm.JudgeBlock},
		// A padded or 0X spelling goes out in the canonical one: clients
		// read padding differently, and a node's refusal is judged, so the
		// spelling alone must not make an honest node refuse.
		{"balance at a padded final number", "eth_getBalance", `[` + addr + `,"0x0010"]`, true, `[` + addr + `,"0x10"]`, evm.JudgeFinal},
		{"block at a padded number", "eth_getBlockByNumber", `["0X0063",false]`, true, `["0x63",false]`, evm.JudgeBlock},
		{"block at finalized", "eth_getBlockByNumber", `["finalized",false]`, false, "", 0},
		{"head", "eth_blockNumber", `[]`, true, "", evm.JudgeHead},
		{"gas price", "eth_gasPrice", `[]`, false, "", 0},
		{"fee history", "eth_feeHistory", `["0x4","latest",[]]`, false, "", 0},
		{"receipt by hash", "eth_getTransactionReceipt", `["0x` + strings.Repeat("1", 64) + `"]`, true, "", evm.JudgeFinal},
		{"logs at latest", "eth_getLogs", `[{"fromBlock":"latest"}]`, false, "", 0},
		{"malformed params", "eth_getBalance", `{"x":1}`, false, "", 0},
	} {
		p := PinCalls([]jsonrpc.Item{call(c.method, c.params)}, nil, h, 50, 137)
		if p.NodeOK != c.nodeOK {
			t.Errorf("%s: nodeOK %v, want %v", c.name, p.NodeOK, c.nodeOK)
			continue
		}
		if !c.nodeOK {
			continue
		}
		want := c.want
		if want == "" {
			want = c.params
		}
		if got := string(p.Calls[0].Params); got != want || p.Pins[0].Judge != c.judge {
			t.Errorf("%s: params %s judge %v, want %s %v", c.name, got, p.Pins[0].Judge, want, c.judge)
		}
	}
	// One call a node may not answer sends the whole part to providers,
	// unchanged.
	p := PinCalls([]jsonrpc.Item{call("eth_getBalance", `[`+addr+`,"latest"]`), call("eth_gasPrice", `[]`)}, nil, h, 50, 137)
	if p.NodeOK || p.Shadow || string(p.Calls[0].Params) != `[`+addr+`,"latest"]` {
		t.Fatalf("mixed part: %+v", p)
	}
	// Sends may go to a node, but are never shadowed.
	p = PinCalls([]jsonrpc.Item{call("eth_sendRawTransaction", `["0x02"]`)}, nil, h, 50, 137)
	if !p.NodeOK || p.Shadow {
		t.Fatalf("send: %+v", p)
	}
	// No head yet: nothing at the head can be pinned.
	p = PinCalls([]jsonrpc.Item{call("eth_getBalance", `[`+addr+`,"latest"]`)}, nil, &Head{hashes: map[uint64]string{}}, 50, 137)
	if p.NodeOK {
		t.Fatal("pinned without a head")
	}
}

// FuzzPinCalls: any params give a plan without a panic, and pinned params
// are a JSON array.
func FuzzPinCalls(f *testing.F) {
	for _, s := range []string{`["0x1","latest"]`, `[{"to":"0x1"}]`, `["latest",false]`, `[1,{"blockHash":"0x1"}]`, `{"a":[`, `[null]`, ``} {
		f.Add("eth_getBalance", s)
		f.Add("eth_getBlockByNumber", s)
		f.Add("eth_call", s)
	}
	h := headAt()
	f.Fuzz(func(t *testing.T, method, params string) {
		p := PinCalls([]jsonrpc.Item{call(method, params)}, nil, h, 50, 137)
		if !p.NodeOK || string(p.Calls[0].Params) == params {
			return
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(p.Calls[0].Params, &arr); err != nil {
			t.Fatalf("%s %q pinned to invalid params %q: %v", method, params, p.Calls[0].Params, err)
		}
	})
}
