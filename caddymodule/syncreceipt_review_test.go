package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// TestScreenedSyncReceiptIsJudged: a node passes a sync send on and
// answers with the true receipt's status flipped, in a receipt that also
// names a block number far ahead of every provider's head (the true block
// hash), or another block hash at its true height. trust.Screen turns such
// an answer away ("a block the providers have not seen yet", "a block the
// providers do not have at that height"), and a send is never sent twice:
// the screened path once delivered the node's receipt as it was, flipped
// status and all. It must be judged like any sync receipt before delivery:
// the caller gets the provider's receipt, never the node's, and the node
// is quarantined (a receipt naming a block the provider never saw proves
// no lie on its own, a reorg looks the same: the provider's receipt is
// delivered, and the node's status flip convicts it in the background).
func TestScreenedSyncReceiptIsJudged(t *testing.T) {
	for _, c := range []struct {
		name, nodeID string
		set          func(*faultproxy.Proxy)
		// convicted: the lie is proven before delivery (the receipt's own
		// block, as the provider has it); else the node's receipt names a
		// block no provider saw, which an orphan does too.
		convicted bool
	}{
		{"future block", "NODE-EU-AHEADSNC", func(p *faultproxy.Proxy) { p.SyncReceiptAhead.Store(true) }, true},
		{"another block hash", "NODE-EU-OTHERSNC", func(p *faultproxy.Proxy) { p.SyncReceiptOtherBlock.Store(true) }, false},
	} {
		t.Run(c.name, func(t *testing.T) { screenedSyncReceipt(t, c.nodeID, c.set, c.convicted) })
	}
}

func screenedSyncReceipt(t *testing.T, nodeID string, set func(*faultproxy.Proxy), convicted bool) {
	e := startMetered(t, noProbationOpts())
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	node.FlipSyncStatus.Store(true)
	set(node)
	e.registerNode(t, nodeID, node.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	e.waitForNodeOn(t, nodeID, func() string { return headNumber }, "X-API-Key: "+key)

	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(k.PublicKey)
	to := common.HexToAddress("0x00000000000000000000000000000000000000e6")
	delivered, reached := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		nonce, err := client.PendingNonceAt(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		tx, raw := transfer(t, k, nonce, to)
		before := node.Calls("eth_sendRawTransactionSync")
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransactionSync","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if node.Calls("eth_sendRawTransactionSync") > before {
			reached++
		}
		if strings.Contains(string(a.body), `"status":"0x0"`) || strings.Contains(string(a.body), `"0xfffffff"`) ||
			strings.Contains(string(a.body), faultproxy.LieHash) {
			delivered++ // a transfer of 1 wei from a funded account succeeds, in a block the chain has
			t.Logf("wrong receipt %d delivered by %s: %s", delivered, a.header.Get("X-Tollgate-Upstream"), a.body)
		}
		if _, err := waitReceipt(t, e, tx.Hash()); err != nil {
			t.Fatalf("%v: %s", err, a.body)
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Logf("quarantined after %d sync sends reached it: %v", reached, st["quarantine_reason"])
			break
		}
		if !convicted && reached >= 5 {
			t.Logf("%d sync sends reached the node, not yet convicted; checks %v", reached, e.verifications(t))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a node answering flipped sync receipts in future blocks is not caught (%d delivered, %d reached it); checks %v",
				delivered, reached, e.verifications(t))
		}
	}
	if delivered > 0 {
		t.Fatalf("%d wrong receipts delivered; a sync receipt is judged before delivery, screened or not", delivered)
	}
}

// TestManySyncSendsInABatchHoldTheCallerOnce: a node that keeps every
// sync send and answers fabricated receipts no provider will ever have.
// Each receipt is waited for (syncReceiptWait block intervals) before
// delivery; a batch of many such sends once waited that long for each in
// turn (10 sends: 10 × 2 × 2 s), holding the request and asking the
// providers ~9 times per send. The wait is the batch's, once.
func TestManySyncSendsInABatchHoldTheCallerOnce(t *testing.T) {
	o := noProbationOpts()
	o.extra += "\nrequest_timeout 60s" // production's is 15 s; 60 s here so that the gateway's own wait shows
	e := startMetered(t, o)
	const nodeID = "NODE-EU-FAKESYNC"
	node, key := e.servingNode(t, nodeID, nil)
	node.FakeSyncReceipts.Store(true)

	const sends = 10
	const blockTime = 2 * time.Second // Polygon's, as the gateway knows it
	receiptAsks := func() int {
		return e.alpha.Calls("eth_getTransactionReceipt") + e.beta.Calls("eth_getTransactionReceipt")
	}
	for attempt := range 40 {
		items := make([]string, sends)
		for i := range items {
			// Junk bytes no provider would take: the fabricated receipt is
			// of their keccak256 (the hash check passes), and no provider
			// ever has one.
			items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransactionSync","params":["0x%032x%032x"]}`, i+1, attempt, i)
		}
		before, asksBefore := node.Calls("eth_sendRawTransactionSync"), receiptAsks()
		start := time.Now()
		a := e.rpc(t, "["+strings.Join(items, ",")+"]", "X-API-Key: "+key)
		took, asks := time.Since(start), receiptAsks()-asksBefore
		if node.Calls("eth_sendRawTransactionSync") == before {
			continue // a provider served this batch: try again
		}
		t.Logf("a batch of %d fabricated sync receipts answered in %v (status %d), %d receipt asks to providers: %.300s", sends, took, a.status, asks, a.body)
		// 2 block intervals of waiting, once, plus generous slack for a
		// busy machine; per send it would be at least 40 s.
		if limit := 4*blockTime + 8*time.Second; took > limit {
			t.Fatalf("a batch of %d sync sends held the caller %v (more than %v): the receipt wait is per batch", sends, took, limit)
		}
		// One wait: a poll every quarter interval for 2 intervals (9),
		// then one ask per further send (9), and the background checks
		// that may start as the answer goes out; a provider's null may be
		// asked of the other provider too. Per send it was ~160 (40 s).
		if asks > 4*sends+10 {
			t.Fatalf("a batch of %d sync sends cost %d provider receipt asks", sends, asks)
		}
		// No fabricated receipt reaches the caller: each send gets
		// EIP-7966's timeout (code 4) with its own hash to poll by.
		var got []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(a.body, &got); err != nil || len(got) != sends {
			t.Fatalf("batch answer: %v %.300s", err, a.body)
		}
		for _, g := range got {
			i := g.ID - 1
			if len(g.Result) > 0 && string(g.Result) != "null" {
				t.Fatalf("send %d: a receipt no provider confirmed was delivered: %s", i, g.Result)
			}
			want := fmt.Sprintf(`"%s"`, crypto.Keccak256Hash(hexutil.MustDecode(fmt.Sprintf("0x%032x%032x", attempt, i))).Hex())
			if g.Error == nil || g.Error.Code != 4 || string(g.Error.Data) != want {
				t.Fatalf("send %d: want EIP-7966's timeout naming %s, got %.300s", i, want, a.body)
			}
		}
		return
	}
	t.Fatalf("no batch of sync sends reached the node")
}
