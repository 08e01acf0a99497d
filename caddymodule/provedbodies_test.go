package caddymodule_test

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// bodiesOpts: provedOpts with block bodies proved on chain 137. The dev
// chain is go-ethereum's (Ethereum's transaction types) under Polygon's
// id, whose family default is sampled: the configuration turns it on.
func bodiesOpts() meterOpts {
	o := provedOpts()
	o.chain137 = "prove_bodies on"
	return o
}

// txFeed sends TestUSDT transfers (each with a Transfer log) from
// developer-1 straight to the dev chain every few tens of milliseconds, so
// the latest blocks hold transactions and every receipt asked about is a
// new one (the edge cache has never seen it).
type txFeed struct {
	mu     sync.Mutex
	hashes []sentTx
	used   int
}

type sentTx struct {
	hash string
	at   time.Time
}

func (e *meterEnv) startTxFeed(t *testing.T) *txFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dev, _ := e.net.Manifest.Account("developer-1")
	key, err := dev.Key()
	if err != nil {
		t.Fatal(err)
	}
	client, err := ethclient.DialContext(ctx, e.net.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	chainID, _ := client.ChainID(ctx)
	opts := bind.NewKeyedTransactor(key, chainID)
	nonce, err := client.PendingNonceAt(ctx, opts.From)
	if err != nil {
		t.Fatal(err)
	}
	usdt := testusdt.NewTestUSDT()
	c := bind.NewBoundContract(common.HexToAddress(e.net.Manifest.Polygon.USDT), usdt.GetABI(), client, client, client)
	f := &txFeed{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			opts.Context, opts.Nonce, opts.GasLimit = ctx, new(big.Int).SetUint64(nonce), 100_000
			tx, err := c.RawTransact(opts, usdt.PackTransfer(common.BigToAddress(big.NewInt(int64(0x2000+i%50))), big.NewInt(1)))
			if err == nil {
				nonce++
				f.mu.Lock()
				f.hashes = append(f.hashes, sentTx{tx.Hash().Hex(), time.Now()})
				f.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(40 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; client.Close() })
	return f
}

// next is a transaction sent long enough ago to be in a block, never
// handed out before.
func (f *txFeed) next(t *testing.T) string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		f.mu.Lock()
		if f.used < len(f.hashes) && time.Since(f.hashes[f.used].at) > 600*time.Millisecond {
			h := f.hashes[f.used].hash
			f.used++
			f.mu.Unlock()
			return h
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the transfer feed made no transaction in 20 s")
		}
		time.Sleep(20 * time.Millisecond) // waiting for the feed's next transfer to be mined
	}
}

// chainRPC asks the dev chain itself (the truth a delivered answer is
// compared with).
func (e *meterEnv) chainRPC(t *testing.T, method, params string) json.RawMessage {
	t.Helper()
	resp, err := http.Post(e.net.Manifest.Polygon.RPCURL, "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(b, &r)
	return r.Result
}

func resultOf(body []byte) json.RawMessage {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Result
}

// bodyCall is one body call of the traffic and how to tell whether a
// delivered answer to it is the chain's.
type bodyCall struct {
	method, body string
	truth        func(res json.RawMessage) json.RawMessage // the chain's answer to what res is about (nil: no answer to compare)
}

func (e *meterEnv) bodyCallOf(t *testing.T, method string, feed *txFeed) bodyCall {
	req := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	}
	switch method {
	case "eth_getTransactionReceipt", "eth_getTransactionByHash":
		params := `["` + feed.next(t) + `"]`
		return bodyCall{method, req(params), func(json.RawMessage) json.RawMessage { return e.chainRPC(t, method, params) }}
	case "eth_getBlockReceipts":
		// By the hash of a fresh transfer's block (a tag is the
		// providers': only final or hash-named blocks go to nodes).
		params := `["` + e.blockOf(t, feed.next(t)).hash + `"]`
		return bodyCall{method, req(params), func(json.RawMessage) json.RawMessage { return e.chainRPC(t, method, params) }}
	case "eth_getBlockByNumber", "eth_getBlockByNumber/full":
		full := method == "eth_getBlockByNumber/full"
		flag := map[bool]string{true: "true", false: "false"}[full]
		body := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",` + flag + `]}`
		return bodyCall{"eth_getBlockByNumber", body, func(res json.RawMessage) json.RawMessage {
			var b struct {
				Hash string `json:"hash"`
			}
			if json.Unmarshal(res, &b) != nil || b.Hash == "" {
				return nil
			}
			return e.chainRPC(t, "eth_getBlockByHash", `["`+b.Hash+`",`+flag+`]`)
		}}
	case "eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionByBlockHashAndIndex":
		b := e.blockOf(t, feed.next(t))
		params := `["` + b.number + `","` + b.index + `"]`
		if method == "eth_getTransactionByBlockHashAndIndex" {
			params = `["` + b.hash + `","` + b.index + `"]`
		}
		return bodyCall{method, req(params), func(json.RawMessage) json.RawMessage { return e.chainRPC(t, method, params) }}
	case "eth_getLogs":
		params := `[{"blockHash":"` + e.blockOf(t, feed.next(t)).hash + `"}]`
		return bodyCall{method, req(params), func(json.RawMessage) json.RawMessage { return e.chainRPC(t, method, params) }}
	}
	t.Fatalf("no traffic for %s", method)
	return bodyCall{}
}

type txPlace struct{ hash, number, index string }

// blockOf is where the chain holds a transaction (asked of the dev chain
// itself, until it is mined).
func (e *meterEnv) blockOf(t *testing.T, tx string) txPlace {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var x struct {
			BlockHash        string `json:"blockHash"`
			BlockNumber      string `json:"blockNumber"`
			TransactionIndex string `json:"transactionIndex"`
		}
		_ = json.Unmarshal(e.chainRPC(t, "eth_getTransactionReceipt", `["`+tx+`"]`), &x)
		if x.BlockHash != "" {
			return txPlace{x.BlockHash, x.BlockNumber, x.TransactionIndex}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s not mined in 10 s", tx)
		}
		time.Sleep(20 * time.Millisecond) // polling the dev chain for the receipt
	}
}

// TestProvedBodiesLiarsDeliverNothing: on a chain whose bodies are proved,
// nodes that, serving callers, alter 1 in 5 answers by one field of a
// block body — a receipt's status, a log's data, a dropped or an added
// log, cumulativeGasUsed, gasUsed or contractAddress (derived fields), a
// transaction's value in a hydrated block, a transaction hash in a
// hash-only block — deliver 0 wrong answers and are quarantined at their
// first lie (the part goes to a provider; the evidence is on the stream,
// shown against the block's roots).
func TestProvedBodiesLiarsDeliverNothing(t *testing.T) {
	e := startMetered(t, bodiesOpts())
	feed := e.startTxFeed(t)
	for _, c := range []struct {
		name    string
		id      string
		lie     faultproxy.BodyLie
		traffic string
		by      string
	}{
		{"receipt status", "NODE-EU-BODYSTAT", faultproxy.BodyStatus, "eth_getTransactionReceipt", "receiptsRoot"},
		{"a log's data", "NODE-EU-BODYLOGD", faultproxy.BodyLogData, "eth_getTransactionReceipt", "receiptsRoot"},
		{"a dropped log", "NODE-EU-BODYDROP", faultproxy.BodyDropLog, "eth_getTransactionReceipt", "receiptsRoot"},
		{"an added log", "NODE-EU-BODYADDL", faultproxy.BodyAddLog, "eth_getTransactionReceipt", "receiptsRoot"},
		{"cumulativeGasUsed", "NODE-EU-BODYCUMU", faultproxy.BodyCumulative, "eth_getBlockReceipts", "receiptsRoot"},
		{"gasUsed", "NODE-EU-BODYGASU", faultproxy.BodyGasUsed, "eth_getTransactionReceipt", "receiptsRoot"},
		{"contractAddress", "NODE-EU-BODYCONT", faultproxy.BodyContractAddress, "eth_getTransactionReceipt", "receiptsRoot"},
		{"a transaction's value in a hydrated block", "NODE-EU-BODYTXFD", faultproxy.BodyTxField, "eth_getBlockByNumber/full", "transactionsRoot"},
		{"a swapped hash in a hash-only block", "NODE-EU-BODYSWAP", faultproxy.BodySwapHash, "eth_getBlockByNumber", "transactionsRoot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			liar := e.provedLiar(t, c.id, func(p *faultproxy.Proxy) {
				p.SetShape(faultproxy.ShapeBody)
				p.SetBodyLie(c.lie)
			})
			got := e.askUntilQuarantined(t, c.id, liar, 60*time.Second, func() (answer, bool) {
				bc := e.bodyCallOf(t, c.traffic, feed)
				a := e.rpc(t, bc.body)
				res := resultOf(a.body)
				truth := bc.truth(res)
				wrong := truth != nil && !sameJSON(res, truth)
				if wrong {
					t.Logf("delivered %s unlike the chain's: %s", bc.method, res)
				}
				return a, wrong
			})
			t.Logf("quarantined after %d calls (%d served by the node); it told %d lies in %d answers; %d wrong answers delivered",
				got.calls, got.byNode, liar.Lies.Load(), liar.Answered.Load(), got.delivered)
			if got.delivered != 0 {
				t.Errorf("%d wrong answers delivered, want 0", got.delivered)
			}
			if liar.Lies.Load() != 1 {
				t.Errorf("quarantined after %d lies, want at its first", liar.Lies.Load())
			}
			ev := waitEvidence(t, e, c.id)
			if ev.Method != faultproxy.BodyMethod(c.lie) || ev.TrustedBy != c.by {
				t.Errorf("evidence about %s by %s, want %s by %s", ev.Method, ev.TrustedBy, faultproxy.BodyMethod(c.lie), c.by)
			}
			liar.SetMode(faultproxy.Fail502) // out of the way of the next liar
		})
	}
}

var bodyMethods = []string{"eth_getTransactionReceipt", "eth_getTransactionByHash", "eth_getBlockReceipts", "eth_getBlockByNumber",
	"eth_getBlockByNumber/full", "eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionByBlockHashAndIndex", "eth_getLogs"}

// TestProvedBodiesOfAnHonestNode: an honest node's body answers — receipts
// by transaction and by block, transactions by hash and by block and
// index, blocks hydrated and by hashes, a block's logs — are proved before
// delivery, every one the node served with a value (the counter's
// "proved" equals them, method by method); it is never convicted; no
// provider is asked a body question again (the providers got exactly the
// body calls they served callers), and the providers were asked at most
// one header by hash per block.
func TestProvedBodiesOfAnHonestNode(t *testing.T) {
	e := startMetered(t, bodiesOpts())
	feed := e.startTxFeed(t)
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-BODIESOK"
	e.registerNode(t, nodeID, honest.URL())
	e.waitForNode(t, nodeID)
	// The body methods on the wire (eth_getBlockByNumber aside: the
	// providers' head poll asks it all the time).
	wire := []string{"eth_getTransactionReceipt", "eth_getTransactionByHash", "eth_getBlockReceipts",
		"eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionByBlockHashAndIndex", "eth_getLogs"}
	headBefore := e.chainHead(t)
	before := e.provedCounts(t)
	provBefore := e.providerCalls(wire...)
	headersBefore := e.providerCalls("eth_getBlockByHash")
	fetchesBefore := e.proofHeaderFetches(t)
	byNode := map[string]int{} // answers with a value the node served, by method
	byProvider := 0            // body calls the providers served callers
	const calls = 240
	for i := range calls {
		bc := e.bodyCallOf(t, bodyMethods[i%len(bodyMethods)], feed)
		a := e.rpc(t, bc.body)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("%s: %d %s", bc.method, a.status, a.body)
		}
		res := resultOf(a.body)
		if truth := bc.truth(res); truth != nil && !sameJSON(res, truth) {
			t.Errorf("%s: delivered unlike the chain's: %s", bc.method, res)
		}
		nothing := string(res) == "null" || string(res) == "[]"
		switch up := a.header.Get("X-Tollgate-Upstream"); {
		case up == nodeID && !nothing:
			byNode[bc.method]++
		case (up == "alpha" || up == "beta") && bc.method != "eth_getBlockByNumber":
			byProvider++
		}
	}
	after := e.provedCounts(t)
	blocks := int(e.chainHead(t)-headBefore) + 3
	e.allProved(t, nodeID, calls, byNode, before, after)
	if got := e.providerCalls(wire...) - provBefore; got != byProvider {
		t.Errorf("providers got %d body calls, served %d to callers: %d replays", got, byProvider, got-byProvider)
	}
	headers := e.providerCalls("eth_getBlockByHash") - headersBefore
	if headers > blocks {
		t.Errorf("providers were asked %d headers by hash over %d blocks", headers, blocks)
	}
	// The proofs' own header fetches, by hash (a block's roots) and by
	// number (the providers' block at the height a transaction or receipt
	// by hash names; the head poll's eth_getBlockByNumber is not in
	// them): at most one of each per block.
	fetches := e.proofHeaderFetches(t)
	for _, by := range []string{"hash", "number"} {
		if d := fetches[by] - fetchesBefore[by]; d > blocks {
			t.Errorf("the proofs fetched %d headers by %s over %d blocks", d, by, blocks)
		}
	}
	t.Logf("node served %v (all proved); providers served %d body calls with no replay, %d headers by hash over %d blocks (the proofs fetched %d by hash, %d by number); the node was asked %d full blocks and %d block receipts for proofs",
		byNode, byProvider, headers, blocks, fetches["hash"]-fetchesBefore["hash"], fetches["number"]-fetchesBefore["number"],
		honest.Calls("eth_getBlockByHash"), honest.Calls("eth_getBlockReceipts"))
}

func (e *meterEnv) chainHead(t *testing.T) uint64 {
	var s string
	_ = json.Unmarshal(e.chainRPC(t, "eth_blockNumber", `[]`), &s)
	n, _ := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if n == nil {
		t.Fatalf("eth_blockNumber: %q", s)
	}
	return n.Uint64()
}

// TestSampledBodiesOnAChainThatDoesNotProveThem: chain 137 at its family's
// default (Polygon PoS: bodies sampled). A node's receipts there are never
// counted proved, and a liar flipping 1 in 5 receipt statuses is still
// caught, by the sampled check (a new node's first answers are all
// checked).
func TestSampledBodiesOnAChainThatDoesNotProveThem(t *testing.T) {
	e := startMetered(t, provedOpts())
	feed := e.startTxFeed(t)
	const nodeID = "NODE-EU-BODYSAMP"
	liar := e.provedLiar(t, nodeID, func(p *faultproxy.Proxy) {
		p.SetShape(faultproxy.ShapeBody)
		p.SetBodyLie(faultproxy.BodyStatus)
	})
	before := e.provedCounts(t)["eth_getTransactionReceipt"]
	// A receipt liar on a sampled chain, caught within 60 s.
	got := e.askUntilQuarantined(t, nodeID, liar, 60*time.Second, func() (answer, bool) {
		return e.rpc(t, e.bodyCallOf(t, "eth_getTransactionReceipt", feed).body), false
	})
	byNode := got.byNode
	after := e.provedCounts(t)["eth_getTransactionReceipt"]
	t.Logf("caught by sampling after %d calls (%d served by the node, %d lies told); receipts proved %d", got.calls, byNode, liar.Lies.Load(),
		after["proved"]-before["proved"])
	if d := after["proved"] - before["proved"] + after["lie"] - before["lie"]; d != 0 {
		t.Errorf("%d receipts judged by proof on a chain whose bodies are sampled", d)
	}
	if byNode == 0 {
		t.Errorf("the node served no receipt: the test did not exercise sampling")
	}
	if ev := waitEvidence(t, e, nodeID); ev.Method != "eth_getTransactionReceipt" {
		t.Errorf("evidence about %s, want eth_getTransactionReceipt", ev.Method)
	}
}

// TestProvedCountsOnlyDeliveredAnswers: in a batch part whose block answer
// is a lie (one header field altered), the node's balance in the same
// part is proved but not delivered (the part goes to a provider): the
// counter's "proved" counts answers delivered as the node's, so it does
// not move, while "lie" counts the block.
func TestProvedCountsOnlyDeliveredAnswers(t *testing.T) {
	e := startMetered(t, provedOpts())
	const nodeID = "NODE-EU-MIXEDLIE"
	liar := e.provedLiar(t, nodeID, func(p *faultproxy.Proxy) {
		p.SetShape(faultproxy.ShapeHeaderField)
		p.LieEvery.Store(1) // every block it answers
	})
	acct, _ := e.net.Manifest.Account("deployer")
	batch := `[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",false]}]`
	before := e.provedCounts(t)
	deadline := time.Now().Add(30 * time.Second)
	for liar.Lies.Load() == 0 {
		a := e.rpc(t, batch)
		if a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if time.Now().After(deadline) {
			t.Fatal("the node served no batch in 30 s")
		}
	}
	after := e.provedCounts(t)
	if d := after["eth_getBlockByNumber"]["lie"] - before["eth_getBlockByNumber"]["lie"]; d != 1 {
		t.Errorf("%d block lies counted, want 1", d)
	}
	if d := after["eth_getBalance"]["proved"] - before["eth_getBalance"]["proved"]; d != 0 {
		t.Errorf("%d balances counted proved in a part that went to a provider, want 0", d)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != true {
		t.Errorf("the liar was not convicted: %v", st)
	}
}

// TestProvedBodiesANodeThatCannotProve: an honest node whose
// eth_getBlockReceipts fails (a client without it, or one that errs) cannot
// prove its receipts: each receipt it answers goes to a provider instead
// (the caller gets the chain's receipt, the counter says rerouted), and it
// is never convicted for it.
func TestProvedBodiesANodeThatCannotProve(t *testing.T) {
	e := startMetered(t, bodiesOpts())
	feed := e.startTxFeed(t)
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	node.SetErrorFor("eth_getBlockReceipts", `{"code":-32601,"message":"the method eth_getBlockReceipts does not exist/is not available"}`)
	const nodeID = "NODE-EU-NORCPTSX"
	e.registerNode(t, nodeID, node.URL())
	e.waitForNode(t, nodeID)
	before := e.provedCounts(t)["eth_getTransactionReceipt"]
	asked := node.Calls("eth_getTransactionReceipt")
	for range 20 {
		bc := e.bodyCallOf(t, "eth_getTransactionReceipt", feed)
		a := e.rpc(t, bc.body)
		res := resultOf(a.body)
		if a.status != http.StatusOK || !sameJSON(res, bc.truth(res)) {
			t.Fatalf("receipt: %d %s", a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			t.Fatalf("a receipt the node could not prove was delivered as its: %s", a.body)
		}
	}
	after := e.provedCounts(t)["eth_getTransactionReceipt"]
	served := node.Calls("eth_getTransactionReceipt") - asked
	t.Logf("the node answered %d receipts: %d rerouted, %d proved", served, after["rerouted"]-before["rerouted"], after["proved"]-before["proved"])
	if served == 0 {
		t.Fatal("the node was asked no receipt: nothing shown")
	}
	if d := after["rerouted"] - before["rerouted"]; d < served {
		t.Errorf("%d of the node's %d receipts rerouted, want each", d, served)
	}
	if d := after["proved"] + after["lie"] - before["proved"] - before["lie"]; d != 0 {
		t.Errorf("%d receipts proved or convicted without the block's receipts", d)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("a node that could not prove was convicted: %v", st)
	}
}

// orphanedTxs reorganises the dev chain (depth 8, as often as needed, at
// most 12 times) until at least want transactions of the transfer feed
// were in a replaced block and are in another block now, and returns
// them: transaction hash → the replaced (orphan) block that held it.
// Orphans the dev chain keeps and serves by hash, as geth does; so do the
// providers in front of it.
func (e *meterEnv) orphanedTxs(t *testing.T, feed *txFeed, want int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for range 12 {
		feed.next(t) // transfers in the blocks about to be replaced
		res, err := e.net.Reorg(t.Context(), 137, 8)
		if err != nil {
			t.Fatal(err)
		}
		again := map[common.Hash]bool{}
		for _, h := range res.Reincluded {
			again[h] = true
		}
		for _, old := range res.Old {
			var b struct {
				Transactions []string `json:"transactions"`
			}
			_ = json.Unmarshal(e.chainRPC(t, "eth_getBlockByHash", `["`+old.Hex()+`",false]`), &b)
			for _, tx := range b.Transactions {
				if again[common.HexToHash(tx)] {
					out[tx] = old.Hex()
				}
			}
		}
		if len(out) >= want {
			return out
		}
	}
	t.Fatalf("12 reorgs orphaned %d transactions, want %d", len(out), want)
	return nil
}

// waitBlocksPast waits until the dev chain's head is past block n + 64 +
// 3: a gateway's head poll that starts then fills no height at or below n
// (its first poll keeps the head and its parent; one that misses the
// parent link fills the 64 blocks below the head).
func (e *meterEnv) waitBlocksPast(t *testing.T, n uint64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for e.chainHead(t) <= n+64+3 {
		if time.Now().After(deadline) {
			t.Fatalf("the dev chain did not pass block %d in a minute", n+67)
		}
		time.Sleep(100 * time.Millisecond) // the dev chain makes a block every 100 ms
	}
}

// TestProvedAnswersFromAnOrphanedBlock: on a chain whose bodies are
// proved, a node still on a branch a reorg replaced answers receipts and
// transactions by hash from the replaced block — each true of that block,
// which the providers know by its hash (they keep it), while the chain
// holds the transaction in another block now. None is delivered as the
// node's verified answer: the block a by-hash answer names must be the
// providers' at its height. Above the finalized head (the chain's
// finality set far beyond the test's blocks) each such answer goes to a
// provider, unpaid, and the node is never convicted (a reorg is honest);
// at a final height (finality_depth 2) the first is a lie and convicts
// the node, shown against the providers' hash at that height. The
// orphans' heights are below any the gateway's head poll holds (the nodes
// register after the reorgs, and the poll starts with the first node), so
// the proof's own canonical check is what turns them away, not the
// screen. The headers it asks by number are counted: at most one per
// orphaned block.
func TestProvedAnswersFromAnOrphanedBlock(t *testing.T) {
	t.Run("above finality: rerouted unpaid", func(t *testing.T) {
		o := bodiesOpts()
		o.chain137 += "\n\t\t\t\tfinality 1000000"
		e := startMetered(t, o)
		feed := e.startTxFeed(t)
		orphaned := e.orphanedTxs(t, feed, 4)
		e.waitBlocksPast(t, e.chainHead(t))
		const nodeID = "NODE-EU-ORPHANRR"
		node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
		t.Cleanup(node.Close)
		blocks := map[string]bool{}
		for tx, block := range orphaned {
			node.OrphanTx(tx, block)
			blocks[block] = true
		}
		e.registerNode(t, nodeID, node.URL())
		e.waitForNodeOn(t, nodeID, func() string { return headNumber })
		before := e.provedCounts(t)
		fetchesBefore := e.proofHeaderFetches(t)
		began := time.Now()
		answered := map[string]int{} // the node's orphan answers, by method
		deadline := time.Now().Add(60 * time.Second)
		for calls := 0; answered["eth_getTransactionReceipt"] < 5 || answered["eth_getTransactionByHash"] < 5; calls++ {
			for tx := range orphaned {
				for _, m := range []string{"eth_getTransactionReceipt", "eth_getTransactionByHash"} {
					n0 := node.OrphanAnswers.Load()
					params := `["` + tx + `"]`
					a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":`+params+`}`)
					res := resultOf(a.body)
					if a.status != http.StatusOK || !sameJSON(res, e.chainRPC(t, m, params)) {
						t.Fatalf("%s of an orphaned transaction: %d %s, the chain's is %s", m, a.status, a.body, e.chainRPC(t, m, params))
					}
					if node.OrphanAnswers.Load() > n0 {
						answered[m]++
						if a.header.Get("X-Tollgate-Upstream") == nodeID {
							t.Fatalf("%s from an orphaned block delivered as the node's: %s", m, a.body)
						}
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the node gave %v orphan answers in 60 s (%d rounds)", answered, calls)
			}
		}
		after := e.provedCounts(t)
		for m, n := range answered {
			if d := after[m]["rerouted"] - before[m]["rerouted"]; d < n {
				t.Errorf("%s: %d of the node's %d orphan answers counted rerouted", m, d, n)
			}
			if d := after[m]["proved"] + after[m]["lie"] - before[m]["proved"] - before[m]["lie"]; d != 0 {
				t.Errorf("%s: %d orphan answers proved or convicted above finality", m, d)
			}
		}
		if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
			t.Fatalf("a node answering from a block a reorg replaced, above finality, was convicted: %v", st)
		}
		// Headers: one by hash per orphaned block (its roots, kept), and by
		// number one a second per orphaned height at most (a height that is
		// not final is asked again after recentHeaderTTL).
		fetches := e.proofHeaderFetches(t)
		byHash, byNumber := fetches["hash"]-fetchesBefore["hash"], fetches["number"]-fetchesBefore["number"]
		if byHash > len(blocks) {
			t.Errorf("the proofs fetched %d headers by hash for %d orphaned blocks", byHash, len(blocks))
		}
		if bound := len(blocks) * (int(time.Since(began)/time.Second) + 1); byNumber > bound {
			t.Errorf("the proofs fetched %d headers by number for %d orphaned heights in %v (bound %d)", byNumber, len(blocks), time.Since(began), bound)
		}
		t.Logf("the node answered %v from %d orphaned blocks: all rerouted unpaid; the proofs fetched %d headers by hash and %d by number in %v",
			answered, len(blocks), byHash, byNumber, time.Since(began).Round(time.Millisecond))
	})
	t.Run("at a final height: convicted", func(t *testing.T) {
		e := startMetered(t, bodiesOpts()) // finality_depth 2
		feed := e.startTxFeed(t)
		orphaned := e.orphanedTxs(t, feed, 12)
		e.waitBlocksPast(t, e.chainHead(t))
		var fetchesBefore map[string]int
		for i, m := range []string{"eth_getTransactionReceipt", "eth_getTransactionByHash"} {
			id := []string{"NODE-EU-ORPHANFR", "NODE-EU-ORPHANFT"}[i]
			node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
			t.Cleanup(node.Close)
			for tx, block := range orphaned {
				node.OrphanTx(tx, block)
			}
			e.registerNode(t, id, node.URL())
			e.waitForNodeOn(t, id, func() string { return headNumber })
			if fetchesBefore == nil {
				fetchesBefore = e.proofHeaderFetches(t)
			}
			before := e.provedCounts(t)[m]
			delivered, calls := 0, 0
			// Each transaction once: the caller's answer, final, is kept
			// by the edge cache.
			for tx := range orphaned {
				calls++
				params := `["` + tx + `"]`
				a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":`+params+`}`)
				if res := resultOf(a.body); a.status != http.StatusOK || !sameJSON(res, e.chainRPC(t, m, params)) {
					delivered++
					t.Errorf("%s of an orphaned transaction delivered unlike the chain's: %d %s", m, a.status, a.body)
				}
				delete(orphaned, tx) // the next node asks the others
				if st := e.upstreamState(t, id); st == nil || st["quarantined"] == true {
					break
				}
			}
			after := e.provedCounts(t)[m]
			t.Logf("%s: %d calls, the node answered %d from an orphaned block, %d delivered unlike the chain's; proofs %v → %v",
				m, calls, node.OrphanAnswers.Load(), delivered, before, after)
			if st := e.upstreamState(t, id); st["quarantined"] != true {
				t.Fatalf("%s: a node answering from a block a reorg replaced at a final height was not convicted (%d orphan answers)", m, node.OrphanAnswers.Load())
			}
			if node.OrphanAnswers.Load() != 1 {
				t.Errorf("%s: convicted after %d orphan answers, want at its first", m, node.OrphanAnswers.Load())
			}
			if after["lie"]-before["lie"] != 1 || after["proved"] != before["proved"] {
				t.Errorf("%s: proofs %v → %v, want one lie and nothing proved", m, before, after)
			}
			ev := waitEvidence(t, e, id)
			if ev.Method != m || ev.TrustedBy != "header hash" {
				t.Errorf("evidence about %s by %s, want %s by header hash", ev.Method, ev.TrustedBy, m)
			}
			node.SetMode(faultproxy.Fail502) // out of the way of the next node
		}
		// One orphaned block asked per node: a header by hash and one by
		// number (final: kept) each at most.
		fetches := e.proofHeaderFetches(t)
		for _, by := range []string{"hash", "number"} {
			if d := fetches[by] - fetchesBefore[by]; d > 2 {
				t.Errorf("the proofs fetched %d headers by %s for 2 orphan answers", d, by)
			}
		}
	})
}

// TestOrphanAnswersTheScreenCatchesAtAFinalHeight: the same lie as
// TestProvedAnswersFromAnOrphanedBlock's final case, but at heights the
// gateway's head poll holds (the node registers before the reorgs, the
// poll follows them): trust.Screen turns the answer away first (the
// providers' recent chain has another hash at that height), and the judge
// decides the node's verdict from the provider's answer. A receipt or
// transaction the node takes from a block a reorg replaced, at a final
// height, is then a lie there too — the node is convicted at its first
// such answer, as the proof convicts it outside the poll's window — while
// above finality the same answer is only rerouted (the reorg subtests of
// TestProvedBodiesOfAnHonestNodeThroughReorgs and the above-finality case
// of TestProvedAnswersFromAnOrphanedBlock).
func TestOrphanAnswersTheScreenCatchesAtAFinalHeight(t *testing.T) {
	e := startMetered(t, bodiesOpts()) // finality_depth 2
	feed := e.startTxFeed(t)
	const nodeID = "NODE-EU-ORPHANSC"
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	e.registerNode(t, nodeID, node.URL())
	e.waitForNodeOn(t, nodeID, func() string { return headNumber })
	orphaned := e.orphanedTxs(t, feed, 4)
	var top uint64
	for tx, block := range orphaned {
		var b struct {
			Number string `json:"number"`
		}
		_ = json.Unmarshal(e.chainRPC(t, "eth_getBlockByHash", `["`+block+`",false]`), &b)
		n, err := hexutil.DecodeUint64(b.Number)
		if err != nil {
			t.Fatalf("the orphan %s of %s: number %q", block, tx, b.Number)
		}
		top = max(top, n)
		node.OrphanTx(tx, block)
	}
	// Final with the gateway's margin (reorgMargin 3 below the finalized
	// head, finality_depth 2) and well within the head poll's 256 blocks.
	deadline := time.Now().Add(time.Minute)
	for e.chainHead(t) < top+12 {
		if time.Now().After(deadline) {
			t.Fatalf("the dev chain did not pass block %d in a minute", top+12)
		}
		time.Sleep(100 * time.Millisecond) // the dev chain makes a block every 100 ms
	}
	m := "eth_getTransactionReceipt"
	calls := 0
	for tx := range orphaned {
		calls++
		params := `["` + tx + `"]`
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":`+params+`}`)
		if res := resultOf(a.body); a.status != http.StatusOK || !sameJSON(res, e.chainRPC(t, m, params)) {
			t.Errorf("%s of an orphaned transaction delivered unlike the chain's: %d %s", m, a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			t.Fatalf("%s from an orphaned block delivered as the node's: %s", m, a.body)
		}
		if node.OrphanAnswers.Load() > 0 {
			break
		}
	}
	if node.OrphanAnswers.Load() != 1 {
		t.Fatalf("the node answered %d calls from an orphaned block in %d calls, want 1", node.OrphanAnswers.Load(), calls)
	}
	ev := waitEvidence(t, e, nodeID)
	if ev.Method != m {
		t.Errorf("evidence about %s, want %s", ev.Method, m)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != true {
		t.Fatalf("a node answering from a block a reorg replaced at a final height the screen caught was not convicted: %v", st)
	}
	t.Logf("convicted at its first orphan answer (%d calls), shown by %s", calls, ev.TrustedBy)
}

// TestProvedBodiesOfAnHonestNodeThroughReorgs: an honest node serving
// every body method on a chain that proves bodies, through three reorgs
// of the dev chain (depth 1, 2 and 3) — receipts and transactions by hash
// of transactions a reorg moves to another block among them — is never
// convicted: no answer of it counts as a lie, and it is not quarantined.
// (An answer about a block a reorg replaced while it was being proved is
// rerouted unpaid, never a conviction: the suite's finality is 2 blocks,
// and the check's margin keeps a block 3 below that from being final.)
func TestProvedBodiesOfAnHonestNodeThroughReorgs(t *testing.T) {
	e := startMetered(t, bodiesOpts())
	feed := e.startTxFeed(t)
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-BODYREOR"
	e.registerNode(t, nodeID, honest.URL())
	e.waitForNode(t, nodeID)
	before := e.provedCounts(t)
	byNode := 0
	var reorgs []string
	const calls = 320
	for i := range calls {
		if i%100 == 50 {
			reorgs = append(reorgs, reorg(t, e, len(reorgs)+1))
		}
		bc := e.bodyCallOf(t, bodyMethods[i%len(bodyMethods)], feed)
		a := e.rpc(t, bc.body)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("%s: %d %s", bc.method, a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			byNode++
		}
		if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
			t.Fatalf("an honest node convicted after %d calls, %v: %v", i+1, reorgs, st)
		}
	}
	after := e.provedCounts(t)
	outcomes := map[string]int{}
	for _, m := range bodyMethods {
		for _, o := range []string{"proved", "rerouted", "lie"} {
			outcomes[o] += after[m][o] - before[m][o]
		}
	}
	t.Logf("%d calls through %v: %d served by the honest node; its body answers %v", calls, reorgs, byNode, outcomes)
	if len(reorgs) != 3 {
		t.Fatalf("reorgs made: %v", reorgs)
	}
	if outcomes["lie"] != 0 {
		t.Errorf("%d answers of an honest node counted lies", outcomes["lie"])
	}
	if outcomes["proved"] < calls/10 {
		t.Errorf("%d of %d answers proved: too few to show anything", outcomes["proved"], calls)
	}
}
