package verify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// rootView is a ChainView that knows one block's state root.
type rootView struct {
	block, root common.Hash
}

func (v rootView) HashAt(uint64) (string, bool) { return "", false }
func (v rootView) StateRoot(h string) (common.Hash, bool) {
	return v.root, strings.EqualFold(h, v.block.Hex())
}
func (v rootView) HeadersRehash() (bool, bool) { return true, true }

// rpcDouble is a JSON-RPC server (closed with the test) whose answer to
// the i-th call of a request is reply's: a "result":… or "error":… member.
func rpcDouble(t testing.TB, reply func(i int, c jsonrpc.Item) string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, rej := jsonrpc.Parse(body, jsonrpc.Options{})
		if rej != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		var out []string
		for i, c := range msg.Items {
			out = append(out, `{"jsonrpc":"2.0","id":`+string(c.ID)+`,`+reply(i, c)+`}`)
		}
		w.Header().Set("Content-Type", "application/json")
		if msg.Batch {
			io.WriteString(w, "["+strings.Join(out, ",")+"]")
		} else {
			io.WriteString(w, out[0])
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// provedPool is a chain-137 pool (trust off, no probes) of the provider at
// prov and node "n" (NODE-N) at node, destroyed with the test.
func provedPool(t testing.TB, prov, node string) *upstream.Pool {
	pool, err := upstream.New(upstream.Config{ChainID: 137, ProbeInterval: -1, Trust: upstream.TrustConfig{Off: true},
		Providers: []upstream.Upstream{{Name: "prov", URL: prov}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Destruct() })
	if err := pool.SetNodes([]upstream.Upstream{{Name: "n", URL: node, NodeID: "NODE-N"}}); err != nil {
		t.Fatal(err)
	}
	return pool
}

// TestProvedCountsOnlyDeliveredAnswers: in a part with a balance the node
// proves and a balance it cannot prove (its eth_getProof is refused:
// pruned state), the whole part goes to a provider, so neither of the
// node's answers is delivered: node_answers_proved_total counts both as
// rerouted and none as proved. A part whose answers are all proved counts
// them proved.
func TestProvedCountsOnlyDeliveredAnswers(t *testing.T) {
	s := newProofState(t, 200)
	a, b := common.BigToAddress(common.Big1), common.BigToAddress(common.Big1)
	a[0], b[0] = 42, 43 // accounts 42 and 43: balances 42e9 and 43e9
	block := common.HexToHash("0x" + strings.Repeat("ab", 32))
	proofA := s.proof(t, a, false)
	var refuseSecond bool
	node := rpcDouble(t, func(i int, _ jsonrpc.Item) string {
		if i == 1 && refuseSecond {
			return `"error":{"code":-32000,"message":"missing trie node"}`
		}
		return `"result":` + string(proofA)
	})
	pool := provedPool(t, "http://127.0.0.1:1", node.URL)
	v := New(Config{ProviderQPS: -1})
	defer v.Close()
	balance := func(addr common.Address) jsonrpc.Item {
		return jsonrpc.Item{Method: "eth_getBalance", ID: json.RawMessage("1"),
			Params: json.RawMessage(`["` + strings.ToLower(addr.Hex()) + `",{"blockHash":"` + block.Hex() + `"}]`)}
	}
	job := func(addrs ...common.Address) *Job {
		j := &Job{Pool: pool, ChainID: 137, Node: upstream.Ref{Name: "n", Kind: upstream.KindNode}}
		for _, ad := range addrs {
			j.Calls = append(j.Calls, balance(ad))
			// Both answers are the account's true balance: A's is proved by
			// its proof; B's proof is refused.
			bal := uint64(ad[0]) * 1e9
			j.Replies = append(j.Replies, reply(`"`+hexutil.EncodeUint64(bal)+`"`))
			j.Pins = append(j.Pins, Pin{Judge: evm.JudgeState})
		}
		return j
	}
	view := rootView{block: block, root: s.root}
	count := func(o string) float64 { return testutil.ToFloat64(metrics.Proofs.WithLabelValues("eth_getBalance", o)) }

	// All proved: counted proved, delivered.
	p0, r0 := count(ProofProved), count(ProofRerouted)
	if why := v.Prove(context.Background(), job(a), view); why != "" {
		t.Fatalf("an honest proved balance: %q", why)
	}
	if count(ProofProved)-p0 != 1 || count(ProofRerouted)-r0 != 0 {
		t.Fatalf("a proved part counted %v proved, %v rerouted", count(ProofProved)-p0, count(ProofRerouted)-r0)
	}
	// Mixed: one proved, one unproven: the part is rerouted, nothing of it
	// delivered, nothing counted proved.
	refuseSecond = true
	p0, r0 = count(ProofProved), count(ProofRerouted)
	j := job(a, b)
	if why := v.Prove(context.Background(), j, view); why != WhyUnproven {
		t.Fatalf("a part with an unproven answer: %q", why)
	}
	if count(ProofProved)-p0 != 0 || count(ProofRerouted)-r0 != 2 {
		t.Fatalf("a rerouted part counted %v proved, %v rerouted; want 0 and 2", count(ProofProved)-p0, count(ProofRerouted)-r0)
	}
}

// TestHeaderFetchesPerPartAreBounded: a part of balance reads at 20
// distinct blocks whose state roots no head poll saw asks the providers
// for at most maxHeaderFetchesPerPart headers, not 20 at once; the reads
// it could not prove send the part to a provider (not proved, no
// conviction).
func TestHeaderFetchesPerPartAreBounded(t *testing.T) {
	s := newProofState(t, 200)
	a := common.BigToAddress(common.Big1)
	a[0] = 42
	proofA := s.proof(t, a, false)
	var fetches atomic.Int64
	node := rpcDouble(t, func(int, jsonrpc.Item) string { return `"result":` + string(proofA) })
	prov := rpcDouble(t, func(_ int, c jsonrpc.Item) string {
		fetches.Add(1)
		var params []string
		_ = json.Unmarshal(c.Params, &params)
		return `"result":{"hash":"` + params[0] + `","stateRoot":"` + s.root.Hex() + `","number":"0x10"}`
	})
	pool := provedPool(t, prov.URL, node.URL)
	v := New(Config{ProviderQPS: -1})
	defer v.Close()
	j := &Job{Pool: pool, ChainID: 137, Node: upstream.Ref{Name: "n", Kind: upstream.KindNode}}
	for i := range 20 {
		block := common.BigToHash(common.Big256)
		block[0] = byte(i + 1)
		j.Calls = append(j.Calls, jsonrpc.Item{Method: "eth_getBalance", ID: json.RawMessage("1"),
			Params: json.RawMessage(`["` + strings.ToLower(a.Hex()) + `",{"blockHash":"` + block.Hex() + `"}]`)})
		j.Replies = append(j.Replies, reply(`"`+hexutil.EncodeUint64(42e9)+`"`))
		j.Pins = append(j.Pins, Pin{Judge: evm.JudgeState})
	}
	why := v.Prove(context.Background(), j, rootView{})
	if got := fetches.Load(); got != maxHeaderFetchesPerPart || v.HeaderFetches(137) != maxHeaderFetchesPerPart {
		t.Fatalf("20 distinct blocks in one part: %d header fetches (verifier counted %d), want %d", got, v.HeaderFetches(137), maxHeaderFetchesPerPart)
	}
	if why != WhyUnproven {
		t.Fatalf("a part with reads past the header budget: %q, want rerouted", why)
	}
	// The headers fetched are cached: the same part again proves the
	// blocks already known without fetching them again, and fetches at
	// most the budget anew.
	before := fetches.Load()
	v.Prove(context.Background(), j, rootView{})
	if got := fetches.Load() - before; got > maxHeaderFetchesPerPart {
		t.Fatalf("the second part fetched %d headers", got)
	}
}

// TestNamedBlockOnTheProvidersChain: the block a transaction or receipt by
// hash names must be the providers' at its height. With no head poll's
// view, the providers' hash there is one header by number: the named
// block is then proved (no verdict), another block is rerouted above
// finality and a lie at a final height (reorgMargin below the finalized
// head), and the height is asked once — kept for good when final, for
// recentHeaderTTL otherwise.
func TestNamedBlockOnTheProvidersChain(t *testing.T) {
	canonical := common.HexToHash("0x" + strings.Repeat("c1", 32))
	orphan := common.HexToHash("0x" + strings.Repeat("0f", 32))
	var fetches atomic.Int64
	prov := rpcDouble(t, func(_ int, c jsonrpc.Item) string {
		fetches.Add(1)
		var params []any
		_ = json.Unmarshal(c.Params, &params)
		n, _ := params[0].(string)
		return `"result":{"hash":"` + canonical.Hex() + `","stateRoot":"` + canonical.Hex() + `","number":"` + n + `"}`
	})
	v := New(Config{ProviderQPS: -1})
	defer v.Close()
	j := &Job{Pool: provedPool(t, prov.URL, "http://127.0.0.1:1"), ChainID: 137, Finalized: 100}
	for _, c := range []struct {
		n       uint64
		hash    common.Hash
		outcome string
	}{
		{50, canonical, ""},
		{50, orphan, ProofLie}, // 50 + 3 ≤ 100: final
		{99, canonical, ""},
		{99, orphan, ProofRerouted}, // not final: a reorg, unpaid
	} {
		vd := v.onProvidersChain(context.Background(), j, rootView{}, c.n, c.hash, "test")
		if vd.outcome != c.outcome {
			t.Fatalf("block %s at %d: %q, want %q", c.hash, c.n, vd.outcome, c.outcome)
		}
	}
	if got := fetches.Load(); got != 2 {
		t.Fatalf("two heights, each asked twice within a second: %d header fetches, want 2", got)
	}
	// Past recentHeaderTTL the height that is not final is asked again;
	// the final one is not.
	hs := v.headersOf(137)
	hs.mu.Lock()
	r := hs.recent[99]
	r.at = r.at.Add(-recentHeaderTTL)
	hs.recent[99] = r
	hs.mu.Unlock()
	v.onProvidersChain(context.Background(), j, rootView{}, 99, canonical, "test")
	v.onProvidersChain(context.Background(), j, rootView{}, 50, canonical, "test")
	if got := fetches.Load(); got != 3 {
		t.Fatalf("after the TTL: %d header fetches, want 3 (the height that is not final again)", got)
	}
}

// TestAHashLearntBeforeItsHeightWasFinal: the providers' hash at a height
// that is not final yet (with the judge's margin, reorgMargin below the
// finalized head) may still change — a reorg — and is never what convicts
// a node once the height is final. Learnt by a receipt's canonical check
// (kept recentHeaderTTL) or by a state read pinned final (the pin's rule
// has no margin), the providers' hash there is asked again when the height
// has become final: the honest node answering from the block that replaced
// it is not convicted, and the one still answering from the replaced block
// is.
func TestAHashLearntBeforeItsHeightWasFinal(t *testing.T) {
	before := common.HexToHash("0x" + strings.Repeat("b0", 32))
	after := common.HexToHash("0x" + strings.Repeat("a1", 32))
	var canonical atomic.Value
	prov := rpcDouble(t, func(_ int, c jsonrpc.Item) string {
		var params []any
		_ = json.Unmarshal(c.Params, &params)
		n, _ := params[0].(string)
		h := canonical.Load().(common.Hash)
		return `"result":{"hash":"` + h.Hex() + `","stateRoot":"` + h.Hex() + `","number":"` + n + `"}`
	})
	for _, learnt := range []string{"by a receipt's check", "by a state read pinned final"} {
		t.Run(learnt, func(t *testing.T) {
			canonical.Store(before)
			v := New(Config{ProviderQPS: -1})
			defer v.Close()
			j := &Job{Pool: provedPool(t, prov.URL, "http://127.0.0.1:1"), ChainID: 137, Finalized: 99}
			if learnt == "by a receipt's check" {
				if vd := v.onProvidersChain(context.Background(), j, rootView{}, 99, before, "test"); vd.outcome != "" {
					t.Fatalf("the providers' block at 99 (not final): %q", vd.outcome)
				}
			} else {
				acct := common.BigToAddress(common.Big1)
				j.Calls = []jsonrpc.Item{{Method: "eth_getBalance", Params: json.RawMessage(`["` + acct.Hex() + `","0x63"]`), ID: json.RawMessage("1")}}
				j.Pins = []Pin{{Judge: evm.JudgeFinal, Block: 99}} // 99 ≤ the finalized head: final by the pin's rule
				q, ok := v.question(context.Background(), j, rootView{}, v.headersOf(137), 0)
				if !ok || q.block != before {
					t.Fatalf("the state read's block: %s %v", q.block, ok)
				}
			}
			canonical.Store(after) // a reorg at 99, above finality with the margin: honest
			j.Finalized = 110      // 99 + 3 ≤ 110: final now
			if vd := v.onProvidersChain(context.Background(), j, rootView{}, 99, after, "test"); vd.outcome != "" {
				t.Fatalf("an honest answer from the block now at 99, final: %q (%s), want no verdict", vd.outcome, vd.why)
			}
			if vd := v.onProvidersChain(context.Background(), j, rootView{}, 99, before, "test"); vd.outcome != ProofLie {
				t.Fatalf("an answer from the block a reorg replaced at 99, final: %q, want a lie", vd.outcome)
			}
		})
	}
}
