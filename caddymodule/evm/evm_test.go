package evm

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, m := range []string{"admin_nodeInfo", "admin_addPeer", "personal_unlockAccount", "miner_start", "engine_newPayloadV3",
		"clique_propose", "testing_buildBlockV1", "eth_sign", "eth_sendTransaction", "eth_subscribe", "debug_setHead"} {
		if Lookup(m).Denied == "" {
			t.Errorf("%s is served", m)
		}
	}
	for _, m := range []string{"eth_call", "eth_getLogs", "debug_traceTransaction", "trace_block", "administrator", "eth_adminish", "web3_clientVersion"} {
		if Lookup(m).Denied != "" {
			t.Errorf("%s is denied", m)
		}
	}
	if !Lookup("eth_sendRawTransactionSync").NoRetry || !Lookup("eth_sendRawTransaction").NoRetry || Lookup("eth_call").NoRetry {
		t.Error("retry rules")
	}
	if got := string(Lookup("eth_chainId").Local(137)); got != `"0x89"` {
		t.Errorf("eth_chainId %s", got)
	}
	if got := string(Lookup("net_version").Local(8453)); got != `"8453"` {
		t.Errorf("net_version %s", got)
	}
}

func TestLogsSpan(t *testing.T) {
	for _, c := range []struct {
		params string
		head   uint64
		span   uint64
		ok     bool
	}{
		{`[{"fromBlock":"0x1","toBlock":"0x10"}]`, 0, 16, true},
		{`[{"fromBlock":"earliest","toBlock":"latest"}]`, 5_000_000, 5_000_001, true},
		{`[{"fromBlock":"earliest"}]`, 100, 101, true},
		{`[{}]`, 100, 1, true},
		{`[{"fromBlock":"earliest","toBlock":"latest"}]`, 0, 0, false}, // head unknown
		{`[{"blockHash":"0xabc"}]`, 100, 0, false},
		{`[{"fromBlock":"0x10","toBlock":"0x1"}]`, 100, 0, false}, // the node's to refuse
		{`[{"fromBlock":"nope"}]`, 100, 0, false},
		{`{}`, 100, 0, false},
	} {
		span, ok := LogsSpan(json.RawMessage(c.params), c.head)
		if span != c.span || ok != c.ok {
			t.Errorf("%s head %d: %d %v, want %d %v", c.params, c.head, span, ok, c.span, c.ok)
		}
	}
}

func TestNeedsArchive(t *testing.T) {
	const head = 1000
	for _, c := range []struct {
		method, params string
		want           bool
	}{
		{"eth_getBalance", `["0x01","0x1"]`, true},
		{"eth_getBalance", `["0x01","0x358"]`, true},  // 856: 144 behind
		{"eth_getBalance", `["0x01","0x368"]`, false}, // 872: 128 behind, a full node has it
		{"eth_getBalance", `["0x01","latest"]`, false},
		{"eth_getBalance", `["0x01",{"blockNumber":"0x1"}]`, true},
		{"eth_getBalance", `["0x01",{"blockHash":"0xab"}]`, false},
		{"eth_getStorageAt", `["0x01","0x0","0x1"]`, true},
		{"eth_call", `[{"to":"0x01"},"0x10"]`, true},
		{"eth_getBlockByNumber", `["0x1",false]`, false}, // blocks are not state
		{"eth_getBalance", `["0x01"]`, false},
		{"eth_getBalance", `not json`, false},
	} {
		if got := NeedsArchive(c.method, json.RawMessage(c.params), head, 0); got != c.want {
			t.Errorf("NeedsArchive(%s, %s) = %v", c.method, c.params, got)
		}
	}
	if NeedsArchive("eth_getBalance", json.RawMessage(`["0x01","0x1"]`), 0, 0) {
		t.Error("judged with the head unknown")
	}
	if !NeedsArchive("eth_getBalance", json.RawMessage(`["0x01","0x3d7"]`), head, 16) || NeedsArchive("eth_getBalance", json.RawMessage(`["0x01","0x3e0"]`), head, 16) {
		t.Error("a chain's own window is not honoured")
	}
}

// TestWeights: an operator's weight applies to its method on its chain only,
// is listed by Weights, and cannot be set on a refused method or beyond
// MaxWeight; every other method counts as one call.
func TestWeights(t *testing.T) {
	tb, err := NewTable([]Override{{Method: "eth_getLogs", Weight: 10, MaxResponseBytes: 1 << 20}, {Method: "eth_call", NoRetry: true}})
	if err != nil {
		t.Fatal(err)
	}
	if u := tb.Lookup("eth_getLogs").Units(); u != 10 {
		t.Fatalf("eth_getLogs weighs %d", u)
	}
	if m := tb.Lookup("eth_getLogs"); m.MaxBlockRange != DefaultMaxLogsRange || m.MaxResponseBytes != 1<<20 {
		t.Fatalf("eth_getLogs lost its range or got no cap: %+v", m)
	}
	for _, m := range []string{"eth_call", "eth_blockNumber", "no_such_method"} {
		if u := tb.Lookup(m).Units(); u != 1 {
			t.Fatalf("%s weighs %d", m, u)
		}
	}
	if w := tb.Weights(); len(w) != 1 || w["eth_getLogs"] != 10 {
		t.Fatalf("Weights() = %v", w)
	}
	var shared *Table
	if shared.Weights() != nil || shared.Lookup("eth_getLogs").Units() != 1 {
		t.Fatal("the shared table weights something")
	}
	for _, bad := range [][]Override{
		{{Method: "eth_call", Weight: MaxWeight + 1}},
		{{Method: "admin_peers", Weight: 2}},
		{{Method: "eth_call", Deny: "no", Weight: 2}},
		{{Method: "eth_call", MaxResponseBytes: -1}},
	} {
		if _, err := NewTable(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Every method a node may answer has a judge; fee methods, filters and
// unknown methods have none (providers answer them).
func TestJudgeColumn(t *testing.T) {
	for m, want := range map[string]Judge{
		"eth_getBalance": JudgeState, "eth_call": JudgeState, "eth_getProof": JudgeState,
		"eth_getBlockByNumber": JudgeBlock, "eth_blockNumber": JudgeHead,
		"eth_sendRawTransaction": JudgeSend, "eth_getTransactionReceipt": JudgeFinal, "eth_getLogs": JudgeFinal,
		"eth_gasPrice": JudgeNone, "eth_maxPriorityFeePerGas": JudgeNone, "eth_feeHistory": JudgeNone,
		"eth_newFilter": JudgeNone, "eth_getFilterChanges": JudgeNone, "eth_simulateV1": JudgeNone,
		"debug_traceTransaction": JudgeNone, "web3_clientVersion": JudgeNone, "eth_fooBar": JudgeNone,
	} {
		if got := Lookup(m).Judge; got != want {
			t.Errorf("%s: judge %v, want %v", m, got, want)
		}
	}
}
