package caddymodule_test

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// noProbationOpts: a node serves callers as soon as it is registered
// (probation off), so what is tested is what reaches a caller from it.
func noProbationOpts() meterOpts {
	return meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\ttimeout 2s\n\t\t\t}"}
}

// TestSwappedSendHashNeverReachesTheCaller: a node that keeps a caller's
// transaction and answers a send with another hash. The hash is
// keccak256 of the raw transaction, known before delivery: the caller
// never gets the node's hash, the transaction reaches a provider (the
// same signed bytes: it cannot be made twice) and is mined, and the node
// is quarantined.
func TestSwappedSendHashNeverReachesTheCaller(t *testing.T) {
	e := startMetered(t, noProbationOpts())
	const nodeID = "NODE-EU-SWAPHASH"
	node, key := e.servingNode(t, nodeID, func(p *faultproxy.Proxy) {
		p.SwapSendHash.Store(true)
	})

	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(k.PublicKey)
	to := common.HexToAddress("0x00000000000000000000000000000000000000e8")
	deadline := time.Now().Add(30 * time.Second)
	for {
		nonce, err := client.PendingNonceAt(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		tx, raw := transfer(t, k, nonce, to)
		before := node.Calls("eth_sendRawTransaction")
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if strings.Contains(strings.ToLower(string(a.body)), strings.ToLower(faultproxy.LieHash)) {
			t.Fatalf("the node's hash reached the caller (by %s): %s", a.header.Get("X-Tollgate-Upstream"), a.body)
		}
		if node.Calls("eth_sendRawTransaction") == before {
			// A provider took it: wait for it to be mined, then try again.
			if _, err := waitReceipt(t, e, tx.Hash()); err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatal("no send reached the node")
			}
			continue
		}
		if !strings.Contains(strings.ToLower(string(a.body)), strings.ToLower(tx.Hash().Hex())) {
			t.Fatalf("the caller did not get its transaction's hash: %s", a.body)
		}
		if by := a.header.Get("X-Tollgate-Upstream"); by == nodeID {
			t.Fatalf("a swapped send booked to the node")
		}
		if _, err := waitReceipt(t, e, tx.Hash()); err != nil {
			t.Fatalf("the caller's transaction, kept by the node, was never mined: %v", err)
		}
		break
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Logf("quarantined: %v", st["quarantine_reason"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a node that swapped a send's hash is not quarantined: %v; checks %v", e.upstreamState(t, nodeID), e.verifications(t))
		}
		time.Sleep(50 * time.Millisecond) // the verifier judges in the background
	}
}

func waitReceipt(t *testing.T, e *meterEnv, h common.Hash) (*types.Receipt, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := e.net.Polygon.Client().TransactionReceipt(t.Context(), h); err == nil {
			return r, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no receipt for %s", h.Hex())
		}
		time.Sleep(20 * time.Millisecond) // polling the dev chain for the receipt
	}
}

// TestCallerCannotConvictAnHonestNodeWithCostlyCalls: an honest node of
// another client has a lower eth_call gas cap (or EVM timeout) than the
// provider; a caller who asks for more gas than that, about a block well
// below the head, gets an error from the node where the provider has a
// result. Which client refuses a call whose cost the caller chooses is no
// lie: the answer is screened (the caller gets the provider's result, the
// node earns nothing), and the node is never quarantined.
func TestCallerCannotConvictAnHonestNodeWithCostlyCalls(t *testing.T) {
	e := startMetered(t, noProbationOpts())
	const nodeID = "NODE-EU-GASCAPAA"
	node, key := e.servingNode(t, nodeID, func(p *faultproxy.Proxy) {
		p.CallGasCap.Store(1_000_000)
	})

	// Well below the head: a block any node keeps state for. Each call to
	// another address (the same call again would come from the cache).
	deadline := time.Now().Add(30 * time.Second)
	var head uint64
	for head < 20 {
		n, err := e.net.Polygon.Client().BlockNumber(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		head = n
		if time.Now().After(deadline) {
			t.Fatal("the dev chain makes no blocks")
		}
	}
	block := hexutil.EncodeUint64(head - 10)
	unjudged := e.verifications(t)["unjudged"]
	reached := 0
	for i := 0; reached < 5; i++ {
		before := node.Calls("eth_call")
		a := e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x%040x","gas":"0x2faf080"},"%s"]}`, 0xe900+i, block), "X-API-Key: "+key)
		if !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("the caller got %s (by %s), where the provider has a result", a.body, a.header.Get("X-Tollgate-Upstream"))
		}
		if node.Calls("eth_call") > before {
			reached++
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Fatalf("an honest node convicted for refusing a call costlier than its cap (%d reached it): %v", reached, st)
		}
		if i > 300 {
			t.Fatalf("only %d costly calls reached the node", reached)
		}
	}
	// The screened answers are judged in the background, each always
	// (verify.Job.Trusted): until every one is, the node must stand.
	deadline = time.Now().Add(20 * time.Second)
	for e.verifications(t)["unjudged"]-unjudged < reached {
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Fatalf("an honest node convicted for refusing a call costlier than its cap: %v", st)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's refusals were never judged: checks %v", e.verifications(t))
		}
		time.Sleep(50 * time.Millisecond) // the verifier judges in the background
	}
	if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
		t.Fatalf("an honest node convicted for refusing a call costlier than its cap: %v", st)
	}
	t.Logf("%d costly calls reached the node; checks %v", reached, e.verifications(t))
}

// TestHonestNodeOfAnOlderClientIsNotConvictedOverLogFields: logs carry
// blockTimestamp since go-ethereum 1.16 (the providers here); an honest
// node of an older version, or of a client that does not add it, answers
// the same logs without it. A field derived from the block, which honest
// clients give or not, is no lie: the node is never convicted. Asked for
// the logs of 300 token transfers.
func TestHonestNodeOfAnOlderClientIsNotConvictedOverLogFields(t *testing.T) {
	o := noProbationOpts()
	o.extra = strings.Replace(o.extra, "probation off", "probation off\n\t\t\t\tverify 1", 1)
	e := startMetered(t, o)
	const nodeID = "NODE-EU-OLDLOGSA"
	_, key := e.servingNode(t, nodeID, func(p *faultproxy.Proxy) {
		p.OlderLogs.Store(true)
	})

	// 300 TestUSDT transfers, sent to the provider directly.
	const transfers = 300
	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(k.PublicKey)
	usdt := common.HexToAddress(e.net.Manifest.Polygon.USDT)
	data := testusdt.NewTestUSDT().PackTransfer(common.HexToAddress("0x00000000000000000000000000000000000000e6"), big.NewInt(1))
	nonce, err := client.PendingNonceAt(t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	var first, last common.Hash
	for i := range transfers {
		tx, err := types.SignNewTx(k, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137), Nonce: nonce + uint64(i),
			GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 100_000, To: &usdt, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if err := client.SendTransaction(t.Context(), tx); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = tx.Hash()
		}
		last = tx.Hash()
	}
	r0, err := waitReceipt(t, e, first)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := waitReceipt(t, e, last)
	if err != nil {
		t.Fatal(err)
	}
	from0, to1 := r0.BlockNumber.Uint64(), r1.BlockNumber.Uint64()
	// Final blocks only reach nodes: wait until the range is well below
	// the head.
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := client.BlockNumber(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n > to1+70 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dev chain stopped")
		}
		time.Sleep(50 * time.Millisecond) // polling the dev chain's head
	}
	matches := e.verifications(t)["match"]
	served := 0
	for i := 0; served < 3; i++ {
		// Each range one block longer (the same question again would come
		// from the cache).
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"address":"%s","fromBlock":"%s","toBlock":"%s"}]}`,
			usdt.Hex(), hexutil.EncodeUint64(from0), hexutil.EncodeUint64(to1+uint64(i)))
		a := e.rpc(t, body, "X-API-Key: "+key)
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			if n := strings.Count(string(a.body), `"transactionHash"`); n < transfers {
				t.Fatalf("%d logs, want %d: %.300s", n, transfers, a.body)
			}
			served++
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Fatalf("an honest node convicted for logs without blockTimestamp: %v", st["quarantine_reason"])
		}
		if i > 200 {
			t.Fatalf("only %d logs calls were served by the node", served)
		}
	}
	// Every node answer is checked (verify 1): wait for the checks.
	deadline = time.Now().Add(30 * time.Second)
	for e.verifications(t)["match"]-matches < served {
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Fatalf("an honest node convicted for logs without blockTimestamp: %v", st["quarantine_reason"])
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's logs were never judged: checks %v", e.verifications(t))
		}
		time.Sleep(50 * time.Millisecond) // the verifier judges in the background
	}
	t.Logf("%d logs answers of %d logs served by the node, all judged; checks %v", served, transfers, e.verifications(t))
}

// TestFlippedSyncReceiptIsCaught: eth_sendRawTransactionSync answers with
// the transaction's receipt. A node that passes the send on and flips the
// receipt's status (the hash is right) is judged by the provider's receipt
// of that transaction before the caller sees it (verify.JudgeSyncReceipts):
// quarantined at its first lie, which is replaced by the provider's
// receipt, so no wrong receipt is delivered — even when the background
// checks are slow (CI once delivered two while the first was queued).
func TestFlippedSyncReceiptIsCaught(t *testing.T) {
	e := startMetered(t, noProbationOpts())
	const nodeID = "NODE-EU-FLIPSYNC"
	node, key := e.servingNode(t, nodeID, func(p *faultproxy.Proxy) {
		p.FlipSyncStatus.Store(true)
	})

	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(k.PublicKey)
	to := common.HexToAddress("0x00000000000000000000000000000000000000e5")
	delivered := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		nonce, err := client.PendingNonceAt(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		tx, raw := transfer(t, k, nonce, to)
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransactionSync","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if strings.Contains(string(a.body), `"status":"0x0"`) {
			delivered++ // a transfer of 1 wei from a funded account succeeds
			t.Logf("wrong receipt %d delivered by %s", delivered, a.header.Get("X-Tollgate-Upstream"))
		}
		if _, err := waitReceipt(t, e, tx.Hash()); err != nil {
			t.Fatalf("%v: %s", err, a.body)
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Logf("quarantined: %v", st["quarantine_reason"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a node flipping its sync receipts is not caught (%d delivered, %d sync sends reached it); checks %v; node %v",
				delivered, node.Calls("eth_sendRawTransactionSync"), e.verifications(t), e.upstreamState(t, nodeID))
		}
	}
	if delivered > 0 {
		t.Fatalf("%d wrong receipts delivered; a sync receipt is judged before delivery", delivered)
	}
}

// TestSendChecksCannotBeCrowdedOut: a node that answers every send with
// its hash and passes none on, helped by a caller who floods it with sends
// no provider would take (junk: never proven dropped). Their inclusion
// checks fill the queue; a real caller's send then must not reach the node
// unchecked: either a provider takes it (it is mined) or, taken by the
// node, the node is caught dropping it.
func TestSendChecksCannotBeCrowdedOut(t *testing.T) {
	o := noProbationOpts()
	o.extra = strings.Replace(o.extra, "probation off", "probation off\n\t\t\t\tsend_grace 10s", 1) // a short grace: the flood fills the queue within it
	e := startMetered(t, o)
	const nodeID = "NODE-EU-CROWDEDA"
	node, key := e.servingNode(t, nodeID, func(p *faultproxy.Proxy) {
		p.SetMode(faultproxy.DropSends)
	})

	// The flood: 1,500 junk sends (8 callers at once), well within the
	// grace: more than the queue of inclusion checks holds, if the node
	// gets them all (before the fix it did: 180 checks dropped).
	var wg sync.WaitGroup
	var n atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n.Add(1); i <= 1500; i = n.Add(1) {
				e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x%064x"]}`, i), "X-API-Key: "+key)
			}
		}()
	}
	wg.Wait()
	t.Logf("junk sends reached the node: %d; checks %v", node.Calls("eth_sendRawTransaction"), e.verifications(t))

	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(k.PublicKey)
	to := common.HexToAddress("0x00000000000000000000000000000000000000e4")
	for attempt := range 20 {
		nonce, err := client.PendingNonceAt(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		tx, raw := transfer(t, k, nonce, to)
		before := node.Calls("eth_sendRawTransaction")
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if node.Calls("eth_sendRawTransaction") == before {
			if _, err := waitReceipt(t, e, tx.Hash()); err != nil {
				t.Fatalf("a send a provider took (%s) was not mined: %v", a.body, err)
			}
			continue
		}
		// The node took it, and dropped it: it must be caught.
		deadline := time.Now().Add(90 * time.Second)
		for {
			if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
				t.Logf("attempt %d: the node took the send and was caught: %v", attempt, st["quarantine_reason"])
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("a caller's send dropped by the node went unchecked: checks %v", e.verifications(t))
			}
			time.Sleep(100 * time.Millisecond) // the inclusion check runs after the grace
		}
	}
	t.Logf("while the send checks were crowded, 20 real sends went to providers; checks %v", e.verifications(t))
}

// TestSwappedSendWithoutProvidersNeverReachesTheCaller: the same node, at
// a moment when no provider answers calls (they pass their health probes,
// so the pool still holds them). The screened part goes to the providers
// whole and none answers: the node's answer once went out as it gave it,
// the swapped hash included. The caller gets an error instead, and the
// part is booked to no node.
func TestSwappedSendWithoutProvidersNeverReachesTheCaller(t *testing.T) {
	e := startMetered(t, noProbationOpts())
	const nodeID = "NODE-EU-SWAPNOPR"
	node, key := e.servingNode(t, nodeID, nil)
	node.SwapSendHash.Store(true)
	e.alpha.SetMode(faultproxy.Fail502Calls)
	e.beta.SetMode(faultproxy.Fail502Calls)

	k := devnet.DevKey("developer-2")
	to := common.HexToAddress("0x00000000000000000000000000000000000000e8")
	deadline := time.Now().Add(60 * time.Second)
	for nonce := uint64(1_000); ; nonce++ { // never mined: the node keeps it and no provider takes it
		_, raw := transfer(t, k, nonce, to)
		before := node.Calls("eth_sendRawTransaction")
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if strings.Contains(strings.ToLower(string(a.body)), strings.ToLower(faultproxy.LieHash)) {
			t.Fatalf("the node's hash reached the caller (by %s): %s", a.header.Get("X-Tollgate-Upstream"), a.body)
		}
		if node.Calls("eth_sendRawTransaction") == before {
			if time.Now().After(deadline) {
				t.Fatal("no send reached the node")
			}
			continue // the route picked a provider, which failed it
		}
		var got struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(a.body, &got); err != nil || got.Error == nil || len(got.Result) > 0 {
			t.Fatalf("a swapped send with no provider to take it: want an error, got %d %s", a.status, a.body)
		}
		if by := a.header.Get("X-Tollgate-Upstream"); by == nodeID {
			t.Fatalf("a swapped send booked to the node")
		}
		return
	}
}

// servingNode puts a faultproxy in front of the dev chain's node, lets set
// (if any) shape it, registers it as nodeID and returns it with a funded
// API key once the node serves that key's calls.
func (e *meterEnv) servingNode(t *testing.T, nodeID string, set func(*faultproxy.Proxy)) (*faultproxy.Proxy, string) {
	t.Helper()
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	if set != nil {
		set(node)
	}
	e.registerNode(t, nodeID, node.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	e.waitForNodeOn(t, nodeID, func() string { return headNumber }, "X-API-Key: "+key)
	return node, key
}

// transfer is a signed transfer of 1 wei to to on the dev chain 137 (an
// EIP-1559 transaction at nonce) and its raw bytes.
func transfer(t *testing.T, k *ecdsa.PrivateKey, nonce uint64, to common.Address) (*types.Transaction, []byte) {
	t.Helper()
	tx, err := types.SignNewTx(k, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137), Nonce: nonce,
		GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return tx, raw
}
