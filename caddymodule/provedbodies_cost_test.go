package caddymodule_test

import (
	"encoding/json"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// TestProvedBodiesRepeatedAnswerCost: a caller paying one call's price
// asks the same recent (not final: no edge cache) hydrated block again
// and again. Each answer the node serves is proved before delivery (the
// counter's "proved" counts each one), and the gateway's own CPU per call
// is measured through Caddy (/proc): a node's identical answer is recalled
// by a hash of it, not compared transaction by transaction again.
func TestProvedBodiesRepeatedAnswerCost(t *testing.T) {
	e := startMetered(t, bodiesOpts())
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	const nodeID = "NODE-EU-BODYCOST"
	e.registerNode(t, nodeID, node.URL())
	e.waitForNode(t, nodeID)
	b := e.burstBlock(t, 200)
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":["` + b.hash + `",true]}`
	truth := e.chainRPC(t, "eth_getBlockByHash", `["`+b.hash+`",true]`)
	var blk struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	_ = json.Unmarshal(truth, &blk)
	before := e.provedCounts(t)["eth_getBlockByHash"]
	cpu0, err := e.gw.CPU()
	if err != nil {
		t.Fatal(err)
	}
	const calls = 300
	byNode := 0
	start := time.Now()
	for range calls {
		a := e.rpc(t, body)
		if a.status != http.StatusOK || !sameJSON(resultOf(a.body), truth) {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			byNode++
		}
	}
	wall := time.Since(start)
	cpu1, _ := e.gw.CPU()
	after := e.provedCounts(t)["eth_getBlockByHash"]
	t.Logf("a block of %d transactions asked %d times: %d served by the node (%d proved, %d rerouted, %d lies); gateway CPU %v per call (%v in all, %v wall)",
		len(blk.Transactions), calls, byNode, after["proved"]-before["proved"], after["rerouted"]-before["rerouted"], after["lie"]-before["lie"],
		(cpu1-cpu0)/calls, cpu1-cpu0, wall)
	if byNode == 0 {
		t.Fatal("the node served none: nothing shown")
	}
	if d := after["proved"] - before["proved"]; d != byNode {
		t.Errorf("the node served %d answers, %d were proved before delivery (want each)", byNode, d)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("an honest node was convicted: %v", st)
	}
}

type burst struct {
	hash string
	txs  int
}

// burstBlock sends n TestUSDT transfers (each with a Transfer log) from
// developer-2 in one JSON-RPC batch, so the dev chain's sealer puts many
// of them in one block, and returns the block holding the most.
func (e *meterEnv) burstBlock(t *testing.T, n int) burst {
	t.Helper()
	ctx := t.Context()
	dev, _ := e.net.Manifest.Account("developer-2")
	key, err := dev.Key()
	if err != nil {
		t.Fatal(err)
	}
	c, err := rpc.DialContext(ctx, e.net.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var nonce hexutil.Uint64
	if err := c.CallContext(ctx, &nonce, "eth_getTransactionCount", dev.Address, "pending"); err != nil {
		t.Fatal(err)
	}
	var gp hexutil.Big
	if err := c.CallContext(ctx, &gp, "eth_gasPrice"); err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(big.NewInt(137))
	usdt := testusdt.NewTestUSDT()
	to := common.HexToAddress(e.net.Manifest.Polygon.USDT)
	batch := make([]rpc.BatchElem, n)
	hashes := make([]common.Hash, n)
	for i := range n {
		tx, err := types.SignNewTx(key, signer, &types.LegacyTx{Nonce: uint64(nonce) + uint64(i), GasPrice: new(big.Int).Mul(gp.ToInt(), big.NewInt(2)),
			Gas: 100_000, To: &to, Data: usdt.PackTransfer(common.BigToAddress(big.NewInt(int64(0x3000+i))), big.NewInt(1))})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := tx.MarshalBinary()
		hashes[i] = tx.Hash()
		batch[i] = rpc.BatchElem{Method: "eth_sendRawTransaction", Args: []any{hexutil.Encode(raw)}, Result: new(common.Hash)}
	}
	if err := c.BatchCallContext(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i, el := range batch {
		if el.Error != nil {
			t.Fatalf("transfer %d: %v", i, el.Error)
		}
	}
	count := map[string]int{}
	for _, h := range hashes {
		count[e.blockOf(t, h.Hex()).hash]++
	}
	var best burst
	for h, k := range count {
		if k > best.txs {
			best = burst{h, k}
		}
	}
	return best
}
