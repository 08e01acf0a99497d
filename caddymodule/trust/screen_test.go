package trust

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
)

// TestScreen: what turns a node's answer away before delivery — an error,
// null, [], a block (or a receipt or log naming one) the providers hold
// another hash for at that height, a block of another height than pinned —
// or above the providers' head — and what does not: true answers, blocks
// older than the providers' ring, pending transactions.
func TestScreen(t *testing.T) {
	h := headAt()
	h98, _ := h.HashAt(98)
	h99, _ := h.HashAt(99)
	h100, _ := h.HashAt(100)
	other := "0x" + "ee" + h98[4:]
	blockPin := verify.Pin{Judge: evm.JudgeBlock, Block: 100}
	final := verify.Pin{Judge: evm.JudgeFinal}
	for _, c := range []struct {
		name, method, result string
		errCode              int
		pin                  verify.Pin
		out                  bool
	}{
		{"a balance", "eth_getBalance", `"0x10"`, 0, verify.Pin{Judge: evm.JudgeState}, false},
		{"a refusal", "eth_getBalance", ``, -32602, verify.Pin{Judge: evm.JudgeState}, true},
		{"null", "eth_getTransactionReceipt", `null`, 0, final, true},
		{"[]", "eth_getLogs", `[ ]`, 0, final, true},
		{"the head block", "eth_getBlockByNumber", `{"number":"0x64","hash":"` + h100 + `"}`, 0, blockPin, false},
		{"the parent's hash as the head", "eth_getBlockByNumber", `{"number":"0x64","hash":"` + h99 + `"}`, 0, blockPin, true},
		{"the parent itself for the head", "eth_getBlockByNumber", `{"number":"0x63","hash":"` + h99 + `"}`, 0, blockPin, true},
		{"a receipt in a known block", "eth_getTransactionReceipt", `{"blockNumber":"0x62","blockHash":"` + h98 + `","status":"0x1"}`, 0, final, false},
		{"a receipt in a block nobody has", "eth_getTransactionReceipt", `{"blockNumber":"0x62","blockHash":"` + other + `","status":"0x1"}`, 0, final, true},
		{"a receipt a block ahead of the providers", "eth_getTransactionReceipt", `{"blockNumber":"0x65","blockHash":"` + other + `","status":"0x1"}`, 0, final, true},
		// A node's block number is read in its canonical spelling only (as
		// verify judges it): padded, it no longer skips the check.
		{"a receipt in a block nobody has, its number padded", "eth_getTransactionReceipt", `{"blockNumber":"0x` + strings.Repeat("0", 17) + `62","blockHash":"` + other + `","status":"0x1"}`, 0, final, true},
		{"a receipt in a known block, its number padded", "eth_getTransactionReceipt", `{"blockNumber":"0x062","blockHash":"` + h98 + `","status":"0x1"}`, 0, final, true},
		{"the head block, its number padded", "eth_getBlockByNumber", `{"number":"0x064","hash":"` + h100 + `"}`, 0, blockPin, true},
		{"a receipt below the ring", "eth_getTransactionReceipt", `{"blockNumber":"0x10","blockHash":"` + other + `","status":"0x1"}`, 0, final, false},
		{"a pending transaction", "eth_getTransactionByHash", `{"blockNumber":null,"blockHash":null,"hash":"0x01"}`, 0, final, false},
		{"logs, one in a block nobody has", "eth_getLogs", `[{"blockNumber":"0x62","blockHash":"` + h98 + `"},{"blockNumber":"0x62","blockHash":"` + other + `"}]`, 0, final, true},
		{"a list of hashes", "eth_getFilterChanges", `["0x01"]`, 0, final, false},
	} {
		r := jsonrpc.Reply{Response: jsonrpc.Response{ID: json.RawMessage("1"), Result: json.RawMessage(c.result)}}
		if c.errCode != 0 {
			r.Result, r.Error = nil, &jsonrpc.Error{Code: c.errCode, Message: "x"}
		}
		why := Screen([]jsonrpc.Item{call(c.method, `[]`)}, []jsonrpc.Reply{r}, []verify.Pin{c.pin}, h)
		if (why != "") != c.out {
			t.Errorf("%s: screened %q, want screened %v", c.name, why, c.out)
		}
	}
	if Screen([]jsonrpc.Item{call("eth_getBalance", `[]`)}, []jsonrpc.Reply{{}}, nil, h) != "" {
		t.Error("a part without pins (no nodes, or a sticky call) is screened")
	}
}

// BenchmarkScreen: the screen's cost per node answer on the hot path — a
// balance, and a block with 200 transaction hashes (no provider call).
func BenchmarkScreen(b *testing.B) {
	h := headAt()
	h100, _ := h.HashAt(100)
	txs := make([]string, 200)
	for i := range txs {
		txs[i] = `"0x` + strings.Repeat("ab", 32) + `"`
	}
	block := `{"number":"0x64","hash":"` + h100 + `","parentHash":"0x01","transactions":[` + strings.Join(txs, ",") + `]}`
	for _, c := range []struct{ name, method, result string }{
		{"balance", "eth_getBalance", `"0x10"`},
		{"block of 200 transactions", "eth_getBlockByNumber", block},
	} {
		calls := []jsonrpc.Item{call(c.method, `[]`)}
		replies := []jsonrpc.Reply{{Response: jsonrpc.Response{ID: json.RawMessage("1"), Result: json.RawMessage(c.result)}}}
		pins := []verify.Pin{{Judge: evm.JudgeBlock, Block: 100}}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if why := Screen(calls, replies, pins, h); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
