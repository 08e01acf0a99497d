package verify

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// txIndexOfType is the index in p of its first transaction of type ty.
func txIndexOfType(t *testing.T, p *provenBlock, ty uint8) int {
	t.Helper()
	for i, tx := range p.txs {
		if tx.Type() == ty {
			return i
		}
	}
	t.Fatalf("no transaction of type %d", ty)
	return -1
}

// TestBodiesMembersTheDecoderSkips: go-ethereum's transaction decoder
// reads only its type's members; a member of another type (or one it
// ignores, such as a legacy transaction's chainId or yParity) hashes to
// nothing, so a lie in it survives the root. Such an answer must never be
// marked proved whole: a lie where the proven transaction says otherwise
// is a lie; a member it has no value for leaves the answer sampled.
func TestBodiesMembersTheDecoderSkips(t *testing.T) {
	d := newDevBlock(t)
	p, why := decodeBody(d.chainID, d.header, d.hash, d.full)
	if why != "" {
		t.Fatal(why)
	}
	if why := proveReceipts(d.chainID, p, d.receipts); why != "" {
		t.Fatal(why)
	}
	legacy := strconv.Itoa(txIndexOfType(t, p, types.LegacyTxType))
	dyn := strconv.Itoa(txIndexOfType(t, p, types.DynamicFeeTxType))
	h32 := `"0x0100000000000000000000000000000000000000000000000000000000000001"`
	li, _ := strconv.Atoi(legacy)
	v, _, _ := p.txs[li].RawSignatureValues()
	parity := (v.Uint64() - 35 - 2*d.chainID) & 1
	wrongParity := `"0x` + strconv.FormatUint(parity^1, 16) + `"`
	rightParity := `"0x` + strconv.FormatUint(parity, 16) + `"`
	for _, c := range []struct {
		name, tx, member, value string
		lie                     bool // a value the proven transaction contradicts
	}{
		{"legacy chainId", legacy, "chainId", `"0x5"`, true},
		{"legacy maxFeePerGas", legacy, "maxFeePerGas", `"0x1"`, false},
		{"legacy maxPriorityFeePerGas", legacy, "maxPriorityFeePerGas", `"0x1"`, false},
		{"legacy accessList", legacy, "accessList", `[{"address":"0x000000000000000000000000000000000000f0f0","storageKeys":[]}]`, true},
		{"legacy yParity", legacy, "yParity", wrongParity, true},
		{"legacy blobVersionedHashes", legacy, "blobVersionedHashes", `[` + h32 + `]`, true},
		{"1559 maxFeePerBlobGas", dyn, "maxFeePerBlobGas", `"0x1"`, false},
		{"1559 blobVersionedHashes", dyn, "blobVersionedHashes", `[` + h32 + `]`, true},
		{"1559 authorizationList", dyn, "authorizationList", `[{"chainId":"0x1","address":"0x000000000000000000000000000000000000f0f0","nonce":"0x0","yParity":"0x0","r":"0x1","s":"0x1"}]`, true},
		{"1559 data beside input", dyn, "data", `"0x1234"`, false},
		{"1559 l1Fee", dyn, "l1Fee", `"0x1234"`, false},
	} {
		bad := edit(t, d.full, []string{"transactions", c.tx, c.member}, set(c.value))
		why, full := checkBlockBody(bad, p)
		if full {
			t.Errorf("%s: a lying %s delivered as proved whole (why %q)", c.name, c.member, why)
		}
		if c.lie && why == "" {
			t.Errorf("%s: not a lie", c.name)
		}
	}
	// Other clients' spellings of the same legacy transaction: proved
	// whole, not lies.
	gp := `"` + hexutil.EncodeBig(p.txs[li].GasPrice()) + `"`
	for _, c := range []struct{ member, value string }{
		{"yParity", rightParity}, {"accessList", `[]`}, {"authorizationList", `[]`}, {"blobVersionedHashes", `[]`},
		{"maxFeePerGas", gp}, {"maxPriorityFeePerGas", gp}, {"chainId", `"0x` + strconv.FormatUint(d.chainID, 16) + `"`},
	} {
		ok := edit(t, d.full, []string{"transactions", legacy, c.member}, set(c.value))
		if why, full := checkBlockBody(ok, p); why != "" || !full {
			t.Errorf("a legacy transaction with %s %s: %q full %v, want proved whole", c.member, c.value, why, full)
		}
	}
	// Receipts: a blob price on a receipt without blob gas, a log's
	// blockTimestamp of zero where the block has a time.
	var rs []json.RawMessage
	_ = json.Unmarshal(d.receipts, &rs)
	logIdx := -1
	for i, r := range p.receipts {
		if len(r.Logs) > 0 {
			logIdx = i
			break
		}
	}
	bad := edit(t, rs[logIdx], []string{"blobGasPrice"}, set(`"0x77"`))
	if why, full := checkReceipt(bad, p, logIdx); full {
		t.Errorf("a non-blob receipt with a blobGasPrice delivered as proved whole (why %q)", why)
	}
	bad = edit(t, rs[logIdx], []string{"logs", "0", "blockTimestamp"}, set(`"0x0"`))
	if why, full := checkReceipt(bad, p, logIdx); why == "" {
		t.Errorf("a log with blockTimestamp 0x0 in a block of time %d proved (full %v)", p.header.Time, full)
	}
}

// TestBodiesHonestSpellings: answers of honest clients that go-ethereum's
// strict decoder refuses (a quantity with leading zeros, as clients that
// write r and s as 32 bytes do) or a chain whose transactions it does not
// know (an OP-stack deposit, Polygon's unsigned state-sync transaction, on
// a chain configured prove_bodies on by mistake) are not lies: they are
// not provable here, and are sampled.
func TestBodiesHonestSpellings(t *testing.T) {
	d := newDevBlock(t)
	p, why := decodeBody(d.chainID, d.header, d.hash, d.full)
	if why != "" {
		t.Fatal(why)
	}
	// r padded to 32 bytes (a leading zero digit).
	padded := edit(t, d.full, []string{"transactions", "0", "r"}, func(raw json.RawMessage) json.RawMessage {
		var s string
		_ = json.Unmarshal(raw, &s)
		return json.RawMessage(`"0x` + strings.Repeat("0", 66-len(s)) + "0" + s[2:] + `"`)
	})
	if _, why := decodeBody(d.chainID, d.header, d.hash, padded); why != "" && why != errNotProvable.Error() {
		t.Errorf("a hydrated block with an r of leading zeros, as the node's proof: convicted: %s", why)
	}
	if why, _ := checkBlockBody(padded, p); why != "" && why != errNotProvable.Error() {
		t.Errorf("a hydrated block with an r of leading zeros, as an answer: convicted: %s", why)
	}
	foreign := map[string]string{
		"OP-stack deposit":   `{"type":"0x7e","sourceHash":"0x0100000000000000000000000000000000000000000000000000000000000001","from":"0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001","to":"0x4200000000000000000000000000000000000015","mint":"0x0","value":"0x0","gas":"0xf4240","isSystemTx":false,"input":"0x","nonce":"0x0","hash":"0x0100000000000000000000000000000000000000000000000000000000000002"}`,
		"Polygon state-sync": `{"type":"0x0","from":"0x0000000000000000000000000000000000000000","to":"0x0000000000000000000000000000000000000000","gas":"0x0","gasPrice":"0x0","value":"0x0","input":"0x","nonce":"0x0","v":"0x0","r":"0x0","s":"0x0","hash":"0x0100000000000000000000000000000000000000000000000000000000000003"}`,
	}
	for name, tx := range foreign {
		withIt := edit(t, d.full, []string{"transactions"}, func(raw json.RawMessage) json.RawMessage {
			var a []json.RawMessage
			_ = json.Unmarshal(raw, &a)
			b, _ := json.Marshal(append(a, json.RawMessage(tx)))
			return b
		})
		if _, why := decodeBody(d.chainID, d.header, d.hash, withIt); why != errNotProvable.Error() {
			t.Errorf("%s: a block holding one: %q, want not provable (sampled)", name, why)
		}
	}
}

// TestBodiesRepeatedAnswerIsCheap: the same node answer about a proven
// block, asked again and again, is compared once; a different answer
// (a lie) still takes the whole proof.
func TestBodiesRepeatedAnswerIsCheap(t *testing.T) {
	d := newDevBlock(t)
	v := &Verifier{}
	job := func(ans json.RawMessage) *Job {
		return &Job{ChainID: d.chainID, Calls: []jsonrpc.Item{{Method: "eth_getBlockByHash", Params: json.RawMessage(`["` + d.hash.Hex() + `",true]`)}},
			Replies: []jsonrpc.Reply{{Response: jsonrpc.Response{Result: ans}}}}
	}
	first := time.Now()
	if vd := v.proveBlockBody(t.Context(), job(d.full), nil, 0); vd.outcome != ProofProved || !vd.full {
		t.Fatalf("honest: %+v", vd)
	}
	t.Logf("first answer: %v", time.Since(first))
	p, ok := v.bodiesOf(d.chainID).Get(d.hash)
	if !ok {
		t.Fatal("the proven block is not kept")
	}
	if m, ok := v.blockMemosOf(d.chainID).get(sha256.Sum256(d.full)); !ok || !m.body || !m.full {
		t.Fatalf("a proven answer is not remembered: %+v", m)
	}
	const n = 200
	start := time.Now()
	for range n {
		if vd := v.proveBlockBody(t.Context(), job(d.full), nil, 0); vd.outcome != ProofProved || !vd.full {
			t.Fatalf("honest again: %+v", vd)
		}
	}
	t.Logf("a repeated answer: %v each (%d transactions)", time.Since(start)/n, len(p.txs))
	bad := edit(t, d.full, []string{"transactions", "1", "from"}, set(`"0x000000000000000000000000000000000000f0f0"`))
	if vd := v.proveBlockBody(t.Context(), job(bad), nil, 0); vd.outcome != ProofLie {
		t.Fatalf("a lie after the honest answer was remembered: %+v", vd)
	}
	// Receipts: the same call and answer remembered; the same answer to
	// another call (another index) is not.
	if why := proveReceipts(d.chainID, p, d.receipts); why != "" {
		t.Fatal(why)
	}
	rj := &Job{ChainID: d.chainID, Calls: []jsonrpc.Item{{Method: "eth_getBlockReceipts", Params: json.RawMessage(`["` + d.hash.Hex() + `"]`)}},
		Replies: []jsonrpc.Reply{{Response: jsonrpc.Response{Result: d.receipts}}}}
	if vd := v.proveBodyAnswer(t.Context(), rj, nil, 0); vd.outcome != ProofProved {
		t.Fatalf("honest receipts: %+v", vd)
	}
	if !p.remembered(answerKey(rj.Calls[0].Method, rj.Calls[0].Params, d.receipts)) {
		t.Fatal("proven receipts are not remembered")
	}
	if p.remembered(answerKey(rj.Calls[0].Method, json.RawMessage(`["0x00"]`), d.receipts)) {
		t.Fatal("an answer remembered for another call")
	}
}

// TestBodyCacheBoundedByBytes: the proven blocks kept per chain are
// bounded by their bytes, not only their number: 64 blocks of 16 MiB
// would be a GiB a chain.
func TestBodyCacheBoundedByBytes(t *testing.T) {
	c := newBodyCache(bodyCacheBytes)
	big := int64(bodyCacheBytes / 4)
	for i := range 64 {
		h := common.BigToHash(common.Big1)
		h[0] = byte(i)
		c.Add(h, weighed(h, big))
		if c.Bytes() > bodyCacheBytes {
			t.Fatalf("after %d blocks of %d bytes: %d bytes kept, bound %d", i+1, big, c.Bytes(), bodyCacheBytes)
		}
	}
	if c.Len() != 4 {
		t.Errorf("%d blocks of a quarter of the bound kept, want 4", c.Len())
	}
	// A block over the bound is not kept (and evicts nothing).
	huge := common.Hash{0xff}
	c.Add(huge, weighed(huge, bodyCacheBytes+1))
	if _, ok := c.Get(huge); ok || c.Len() != 4 {
		t.Errorf("a block over the bound kept (%d blocks)", c.Len())
	}
	// Receipts proven later grow a kept block: added again, reweighed.
	small := newBodyCache(1000)
	a, b := common.Hash{1}, common.Hash{2}
	pa := weighed(a, 400)
	small.Add(a, pa)
	small.Add(b, weighed(b, 400))
	pa.weight.Store(700)
	small.Add(a, pa)
	if small.Bytes() > 1000 {
		t.Errorf("a block reweighed: %d bytes kept, bound 1000", small.Bytes())
	}
	if _, ok := small.Get(a); !ok {
		t.Errorf("the block just added again was evicted")
	}
	// Many small blocks: the count bound still holds.
	many := newBodyCache(bodyCacheBytes)
	for i := range 1000 {
		h := common.Hash{byte(i), byte(i >> 8)}
		many.Add(h, weighed(h, 1))
	}
	if many.Len() > bodyCacheSize {
		t.Errorf("%d small blocks kept, count bound %d", many.Len(), bodyCacheSize)
	}
}

// TestBodiesEmptyReceipts: an empty block's receipts ([]) are an answer,
// not a node that has nothing.
func TestBodiesEmptyReceipts(t *testing.T) {
	if nodeHasNothing("eth_getBlockReceipts", json.RawMessage(`[]`)) {
		t.Error("an empty block's receipts taken for a node that has none")
	}
	if !nodeHasNothing("eth_getBlockReceipts", json.RawMessage(`null`)) || !nodeHasNothing("eth_getBlockByHash", json.RawMessage(`null`)) {
		t.Error("null taken for an answer")
	}
}

func weighed(h common.Hash, w int64) *provenBlock {
	p := &provenBlock{hash: h}
	p.weight.Store(w)
	return p
}

// TestBodyFetchesBoundedPerPart: a part's body fetches from its node are
// bounded (many distinct old blocks in one batch): past the bound, a body
// answer is sampled, not fetched.
func TestBodyFetchesBoundedPerPart(t *testing.T) {
	v := &Verifier{}
	b := new(fetchBudget)
	ctx := context.WithValue(t.Context(), bodyFetchBudgetKey{}, b) // none left
	j := &Job{ChainID: 1337}
	p, vd := v.provenBlockOf(ctx, j, nil, common.Hash{1}, true)
	if p != nil || vd.outcome != "" {
		t.Fatalf("a body fetched past the part's bound: %+v", vd)
	}
}

// TestBodiesMoreTransactionsThanGas: a body of more transactions than its
// header's gasUsed can hold is not read (no decoding, no sender recovered):
// a node cannot make the gateway spend the CPU of a made-up 16 MiB body.
func TestBodiesMoreTransactionsThanGas(t *testing.T) {
	d := newDevBlock(t)
	p, why := decodeBody(d.chainID, d.header, d.hash, d.full)
	if why != "" {
		t.Fatal(why)
	}
	limit := maxTxsFor(d.header)
	if uint64(len(p.txs)) > limit {
		t.Fatalf("an honest block of %d transactions over its bound %d (gasUsed %d)", len(p.txs), limit, d.header.GasUsed)
	}
	padded := edit(t, d.full, []string{"transactions"}, func(raw json.RawMessage) json.RawMessage {
		var a []json.RawMessage
		_ = json.Unmarshal(raw, &a)
		for uint64(len(a)) <= limit {
			a = append(a, a[0])
		}
		b, _ := json.Marshal(a)
		return b
	})
	if _, why := decodeBody(d.chainID, d.header, d.hash, padded); why != whyOversize {
		t.Errorf("a body of more transactions than its gas holds: %q, want not read", why)
	}
}
