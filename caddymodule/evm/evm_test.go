package evm

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	pad := "0x" + strings.Repeat("0", 30) + "1"
	for _, c := range []struct {
		params string
		head   uint64
		span   uint64
		ok     bool
		bad    bool // refused: not judged, not sent on
	}{
		{`[{"fromBlock":"0x1","toBlock":"0x10"}]`, 0, 16, true, false},
		{`[{"fromBlock":"earliest","toBlock":"latest"}]`, 5_000_000, 5_000_001, true, false},
		{`[{"fromBlock":"earliest"}]`, 100, 101, true, false},
		{`[{}]`, 100, 1, true, false},
		{`[{"fromBlock":null,"toBlock":"0x64"}]`, 100, 1, true, false},
		{`[{"fromBlock":"earliest","toBlock":"latest"}]`, 0, 0, false, false}, // head unknown
		{`[{"blockHash":"0xabc"}]`, 100, 0, false, false},
		{`[{"fromBlock":"0x10","toBlock":"0x1"}]`, 100, 0, false, false}, // the node's to refuse
		// The padded-fromBlock bypass: read, not skipped.
		{`[{"fromBlock":"` + pad + `","toBlock":"0x2710"}]`, 20_000, 10_000, true, false},
		{`[{"fromBlock":"0x0000000000000000000000001","toBlock":"latest"}]`, 20_000, 20_000, true, false},
		// What the gateway cannot read is refused, never sent on unjudged.
		{`[{"fromBlock":"nope"}]`, 100, 0, false, true},
		{`[{"fromBlock":1,"toBlock":100000}]`, 100, 0, false, true},
		{`[{"fromBlock":"1","toBlock":"100000"}]`, 100, 0, false, true},
		{`[{"fromBlock":"0x10000000000000000"}]`, 100, 0, false, true},
		{`[{"fromBlock":"0x0","FROMBLOCK":"0x63"}]`, 100, 0, false, true},
		{`[{"fromBlock":"0x0","fromBlock":"0x63"}]`, 100, 0, false, true},
		{`[{"blockHash":"0xabc","fromBlock":"0x0"}]`, 100, 0, false, true},
		{`[{"fromBlock":"0x1"},{"fromBlock":"0x2"}]`, 100, 0, false, true},
		{`{}`, 100, 0, false, true},
		{`[[]]`, 100, 0, false, true},
		{`[{"fromBlock":"0x0","toBlock":"0xffffffffffffffff"}]`, 100, math.MaxUint64, true, false}, // never wraps to 0
	} {
		span, ok, err := LogsSpan(json.RawMessage(c.params), c.head)
		if span != c.span || ok != c.ok || (err != nil) != c.bad {
			t.Errorf("%s head %d: %d %v %v, want %d %v refused=%v", c.params, c.head, span, ok, err, c.span, c.ok, c.bad)
		}
	}
}

// FuzzLogsSpan: however a range is spelled (zero padding, 0X, case of the
// digits), LogsSpan either refuses it or judges the span the upstream will
// read — the canonical spelling's. It never judges it "unknown" while the
// canonical spelling of the same range is judged (the padded-fromBlock
// bypass of max_block_range).
func FuzzLogsSpan(f *testing.F) {
	f.Add(uint64(1), uint64(20_000), uint8(30), uint8(0), true)
	f.Add(uint64(0), uint64(1<<63), uint8(0), uint8(40), false)
	f.Fuzz(func(t *testing.T, from, to uint64, padFrom, padTo uint8, upper bool) {
		spell := func(v uint64, pad uint8) string {
			d := strconv.FormatUint(v, 16)
			if upper {
				d = strings.ToUpper(d)
			}
			return "0x" + strings.Repeat("0", int(pad)) + d
		}
		params := `[{"fromBlock":"` + spell(from, padFrom) + `","toBlock":"` + spell(to, padTo) + `"}]`
		canon := fmt.Sprintf(`[{"fromBlock":"0x%x","toBlock":"0x%x"}]`, from, to)
		span, ok, err := LogsSpan(json.RawMessage(params), 1000)
		cspan, cok, cerr := LogsSpan(json.RawMessage(canon), 1000)
		if cerr != nil || err != nil {
			t.Fatalf("%s: %v / canonical %v", params, err, cerr)
		}
		if span != cspan || ok != cok {
			t.Fatalf("%s: %d %v, canonical %d %v", params, span, ok, cspan, cok)
		}
		want := to - from + 1
		if want == 0 { // the whole 64-bit range: saturated, never 0
			want = math.MaxUint64
		}
		if to >= from && (!ok || span != want) {
			t.Fatalf("%s: %d %v, want %d", params, span, ok, want)
		}
	})
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
