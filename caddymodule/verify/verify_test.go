package verify

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestSameWhole: a node's answer is compared whole with the provider's.
// Key order, hex case, whitespace and small fields of the node's own do not
// make two answers differ; a changed value, an omitted field, extra
// precision (leading zeros), a missing element, another type or a large
// field of the node's own does.
func TestSameWhole(t *testing.T) {
	big := `"` + strings.Repeat("a", 2000) + `"`
	for _, c := range []struct {
		node, truth string
		same        bool
	}{
		{`{"hash":"0xAB","number":"0x1"}`, `{"number":"0x1","hash":"0xab"}`, true},
		{`{"hash":"0xab","clientExtra":"0x1"}`, `{"hash":"0xab"}`, true},
		{`{"hash":"0xab"}`, `{"hash":"0xab","totalDifficulty":"0x0"}`, true}, // geth dropped it
		{`{"hash":"0xab"}`, `{"hash":"0xab","status":"0x1"}`, false},         // an omitted field
		{`{"hash":"0xab"}`, `{"hash":"0xac"}`, false},
		{`{"hash":"0xab","pad":` + big + `}`, `{"hash":"0xab"}`, false}, // padding by a field of its own
		{`["0x1","0x2"]`, `["0x1"]`, false},
		{`"0x2a"`, `"0x2A"`, true},
		{`"0x002a"`, `"0x2a"`, false}, // extra precision is another value
		{`"0x2a"`, `"0x2b"`, false},
		{"  \n\"0x2a\"\t", `"0x2a"`, true},
		{`{"logs":[{"data":"0x00"}]}`, `{"logs":[{"data":"0x01"}]}`, false},
		{`true`, `false`, false},
		{`1`, `1`, true},
		{`1.0`, `1`, false},
		{`{"a":"x"}`, `["x"]`, false},
		{`"name"`, `"NAME"`, false},
		{`null`, `{"a":1}`, false},
		{`[{"data":"0x01"}]`, `[{"data":"0x01","blockTimestamp":"0x5"}]`, true}, // an older client's log
		{`{"hash":"0xab"}`, `{"hash":"0xab","to":null}`, true},                  // absent and null say the same
		{`{"hash":"0xab"}`, `{"hash":"0xab","to":"0x01"}`, false},
		// A small field of a newer client on each of 1,000 logs: more than a
		// fixed 8 KiB together, a fraction of the answer.
		{manyLogs(1000, `,"blockTimestamp":"0x6748a1b2"`), manyLogs(1000, ""), true},
		// The same budget does not let a field of 1 KiB on each through.
		{manyLogs(400, `,"pad":"`+strings.Repeat("0", 1100)+`"`), manyLogs(400, ""), false},
		// Nor fields that together outgrow a quarter of the answer.
		{manyLogs(400, `,"pad":"`+strings.Repeat("0", 300)+`"`), manyLogs(400, ""), false},
	} {
		if got, why := sameWholeRaw(json.RawMessage(c.node), json.RawMessage(c.truth)); got != c.same {
			t.Errorf("sameWholeRaw(%.60s, %.80s) = %v (%s)", c.node, c.truth, got, why)
		}
	}
}

// manyLogs is a list of n logs, each with extra (members of its own).
func manyLogs(n int, extra string) string {
	l := `{"address":"0x00000000000000000000000000000000000000e6","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],"data":"0x01","blockNumber":"0x10","transactionHash":"0x` +
		strings.Repeat("ab", 32) + `","logIndex":"0x0","removed":false` + extra + `}`
	return "[" + strings.TrimSuffix(strings.Repeat(l+",", n), ",") + "]"
}

func reply(result string) jsonrpc.Reply {
	return jsonrpc.Reply{Response: jsonrpc.Response{ID: json.RawMessage("1"), Result: json.RawMessage(result)}}
}

func refusal(code int) jsonrpc.Reply {
	return jsonrpc.Reply{Response: jsonrpc.Response{ID: json.RawMessage("1"), Error: &jsonrpc.Error{Code: code, Message: "no"}}}
}

// TestJudgeWithoutFacts: the rules that need no second provider question
// and no fact about the node. Without the pool's view of the node's head,
// an empty answer is never a lie (the node could not be expected to know);
// with it, see the e2e tests (caddymodule/judge_test.go).
func TestJudgeWithoutFacts(t *testing.T) {
	balance := &jsonrpc.Item{Method: "eth_getBalance", Params: json.RawMessage(`["0x00000000000000000000000000000000000000e1",{"blockHash":"0x01"}]`)}
	head := &jsonrpc.Item{Method: "eth_blockNumber", Params: json.RawMessage(`[]`)}
	logs := &jsonrpc.Item{Method: "eth_getLogs", Params: json.RawMessage(`[{"fromBlock":"0x1","toBlock":"0x2"}]`)}
	state := Pin{Judge: evm.JudgeState, Block: 90}
	for _, c := range []struct {
		name          string
		call          *jsonrpc.Item
		pin           Pin
		node, trusted jsonrpc.Reply
		bt            time.Duration
		want          Outcome
	}{
		{"same balance", balance, state, reply(`"0x10"`), reply(`"0x10"`), 0, Match},
		{"another balance", balance, state, reply(`"0x11"`), reply(`"0x10"`), 0, Mismatch},
		{"a padded balance", balance, state, reply(`"0x0010"`), reply(`"0x10"`), 0, Mismatch},
		{"whitespace past the slack", balance, state, reply(`"0x10"` + strings.Repeat(" ", paddingSlack+1)), reply(`"0x10"`), 0, Mismatch},
		{"null, no facts about the node", balance, state, reply(`null`), reply(`"0x10"`), 0, Unjudged},
		{"a refusal, no facts", balance, state, refusal(-32602), reply(`"0x10"`), 0, Unjudged},
		{"both refuse alike", balance, state, refusal(3), refusal(3), 0, Match},
		{"both refuse unlike", balance, state, refusal(-32000), refusal(3), 0, Unjudged},
		{"the provider refuses", balance, state, reply(`"0x10"`), refusal(-32000), 0, Unjudged},
		{"both say nothing", logs, Pin{Judge: evm.JudgeFinal}, reply(`[]`), reply(`null`), 0, Match},
		{"logs where the provider has none", logs, Pin{Judge: evm.JudgeFinal}, reply(`[{"blockNumber":"0x1","blockHash":"0x01"}]`), reply(`[]`), 0, Mismatch},
		{"head equal", head, Pin{Judge: evm.JudgeHead}, reply(`"0x64"`), reply(`"0x64"`), 2 * time.Second, Match},
		{"head 3 ahead on 2 s blocks", head, Pin{Judge: evm.JudgeHead}, reply(`"0x67"`), reply(`"0x64"`), 2 * time.Second, Match},
		{"head 4 ahead on 2 s blocks", head, Pin{Judge: evm.JudgeHead}, reply(`"0x68"`), reply(`"0x64"`), 2 * time.Second, Mismatch},
		{"head 9 ahead on Arbitrum", head, Pin{Judge: evm.JudgeHead}, reply(`"0x6d"`), reply(`"0x64"`), 250 * time.Millisecond, Match},
		{"head behind", head, Pin{Judge: evm.JudgeHead}, reply(`"0x60"`), reply(`"0x64"`), 0, Match},
		{"head far behind", head, Pin{Judge: evm.JudgeHead}, reply(`"0x1"`), reply(`"0x64"`), 0, Unjudged},
		{"no answer from the node", balance, state, jsonrpc.Reply{Err: jsonrpc.ErrNoReply}, reply(`"0x10"`), 0, Unjudged},
	} {
		got := Judge(context.Background(), Case{Call: c.call, Pin: c.pin, Answer: c.node, Trusted: c.trusted, BlockTime: c.bt})
		if got.Outcome != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, got.Outcome, got.Why, c.want)
		}
	}
}

// TestHeadAhead: the tolerance follows the chain's block time.
func TestHeadAhead(t *testing.T) {
	for bt, want := range map[time.Duration]uint64{0: 3, 12 * time.Second: 3, 2 * time.Second: 3, time.Second: 4, 250 * time.Millisecond: 10} {
		if got := HeadAhead(bt); got != want {
			t.Errorf("HeadAhead(%v) = %d, want %d", bt, got, want)
		}
	}
}

// TestEvidenceOfLargeAnswers: an answer past events.MaxEvidenceBytes is
// kept as its digest, length and an excerpt — valid evidence, never
// dropped.
func TestEvidenceOfLargeAnswers(t *testing.T) {
	small := json.RawMessage(`{"hash":"0xab"}`)
	if string(Evidence(small)) != string(small) {
		t.Fatal("a small answer is kept whole")
	}
	large := json.RawMessage(`"0x` + strings.Repeat("ab", events.MaxEvidenceBytes) + `"`)
	ev := Evidence(large)
	var d struct {
		SHA256  string `json:"sha256"`
		Bytes   int    `json:"bytes"`
		Excerpt string `json:"excerpt"`
	}
	if err := json.Unmarshal(ev, &d); err != nil || len(ev) > events.MaxEvidenceBytes || d.Bytes != len(large) || len(d.SHA256) != 66 || !strings.HasPrefix(string(large), d.Excerpt) {
		t.Fatalf("evidence of a large answer: %.200s (%v)", ev, err)
	}
	m := &events.NodeMismatch{ID: "x", TimeMs: 1, ChainID: 137, NodeID: "NODE-A", RequestID: "r", Method: "eth_getBlockByNumber",
		Params: json.RawMessage(`["0x1",false]`), Block: 1, NodeAnswer: ev, TrustedAnswer: Evidence(large), TrustedBy: "alpha"}
	if err := m.Validate(); err != nil {
		t.Fatalf("evidence with digests does not validate: %v", err)
	}
}

// TestHeaderHashes: a block whose hash is keccak256 of its header verifies;
// the same block with another hash does not; a block go-ethereum cannot
// read is unknown (never a lie by this rule).
func TestHeaderHashes(t *testing.T) {
	h := &types.Header{ParentHash: common.HexToHash("0x01"), Number: big.NewInt(100), GasLimit: 30_000_000, Time: 1_700_000_000,
		Difficulty: big.NewInt(0), BaseFee: big.NewInt(7), Extra: []byte{}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if got := headerHashes(b); got != headerTrue {
		t.Fatalf("a true header: %v (%s)", got, b)
	}
	forged := strings.Replace(string(b), h.Hash().Hex(), h.ParentHash.Hex(), 1)
	if got := headerHashes(json.RawMessage(forged)); got != headerFalse {
		t.Fatalf("a header with its parent's hash: %v", got)
	}
	if got := headerHashes(json.RawMessage(`{"hash":"0x01","number":"0x1"}`)); got != headerUnknown {
		t.Fatalf("an unreadable header: %v", got)
	}
}
