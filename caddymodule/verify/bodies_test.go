package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/crypto/kzg4844"
	"github.com/holiman/uint256"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
)

// logEmitter's runtime stores 42 at memory 0 and logs those 32 bytes
// under topic 7 (LOG1); its init code returns the runtime. A creation
// whose receipt has a contractAddress, and calls whose receipts have logs.
var logEmitter = common.FromHex("600d600c600039600d6000f3" + "602a6000526007602060" + "00a100")

// devBlock is a block of a simulated go-ethereum chain (Prague rules)
// holding every transaction type go-ethereum makes: legacy, EIP-2930,
// EIP-1559 (a contract creation and calls that log), EIP-4844 (a blob)
// and EIP-7702 (a set-code authorization); its raw JSON-RPC answers as a
// node gives them.
type devBlock struct {
	chainID        uint64
	full, hashOnly json.RawMessage
	receipts       json.RawMessage
	header         *types.Header
	hash           common.Hash
	contract       common.Address
	blobIncluded   bool
}

func rawCall(t testing.TB, url, method, params string) json.RawMessage {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &r) != nil || len(r.Error) > 0 {
		t.Fatalf("%s: %s", method, b)
	}
	return r.Result
}

func newDevBlock(t testing.TB) devBlock {
	t.Helper()
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	authKey, _ := crypto.GenerateKey()
	// Blobs come from their own sender: the blob pool does not see the
	// other pool's pending nonces.
	blobKey, _ := crypto.GenerateKey()
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const id = 1337
	c, err := simchain.New(simchain.Config{ChainID: id, HTTPPort: port,
		Alloc: types.GenesisAlloc{from: {Balance: new(big.Int).Mul(big.NewInt(1e18), big.NewInt(1000))},
			crypto.PubkeyToAddress(blobKey.PublicKey): {Balance: new(big.Int).Mul(big.NewInt(1e18), big.NewInt(1000))}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := c.Client()
	chainID := big.NewInt(id)
	signer := types.LatestSignerForChainID(chainID)
	head, _ := cl.HeaderByNumber(ctx, nil)
	tip, feeCap := big.NewInt(1e9), new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), big.NewInt(1e9))
	nonce := uint64(0)
	send := func(inner types.TxData) *types.Transaction {
		tx, err := types.SignNewTx(key, signer, inner)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.SendTransaction(ctx, tx); err != nil {
			t.Fatalf("send type %d: %v", tx.Type(), err)
		}
		nonce++
		return tx
	}
	// The contract first, in its own block (later calls need its code).
	create := send(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 200_000, Data: logEmitter})
	c.Commit()
	rc, err := cl.TransactionReceipt(ctx, create.Hash())
	if err != nil || rc.Status != 1 {
		t.Fatalf("creation: %v %+v", err, rc)
	}
	contract := rc.ContractAddress
	to := common.HexToAddress("0x00000000000000000000000000000000000b0b0b")
	send(&types.LegacyTx{Nonce: nonce, GasPrice: feeCap, Gas: 21_000, To: &to, Value: big.NewInt(7)})
	send(&types.AccessListTx{ChainID: chainID, Nonce: nonce, GasPrice: feeCap, Gas: 60_000, To: &contract,
		AccessList: types.AccessList{{Address: contract, StorageKeys: []common.Hash{{}}}}})
	send(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 60_000, To: &contract})
	send(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 200_000, Data: logEmitter})
	var blob kzg4844.Blob
	blob[0] = 1
	commit, err := kzg4844.BlobToCommitment(&blob)
	if err != nil {
		t.Fatal(err)
	}
	// The simulated pool takes cell proofs (sidecar version 1) only.
	proofs, err := kzg4844.ComputeCellProofs(&blob)
	if err != nil {
		t.Fatal(err)
	}
	sidecar := types.NewBlobTxSidecar(types.BlobSidecarVersion1, []kzg4844.Blob{blob}, []kzg4844.Commitment{commit}, proofs)
	blobTx, err := types.SignNewTx(blobKey, signer, &types.BlobTx{ChainID: uint256.NewInt(id), Nonce: 0, GasTipCap: uint256.MustFromBig(tip), GasFeeCap: uint256.MustFromBig(feeCap),
		Gas: 21_000, To: to, BlobFeeCap: uint256.NewInt(1e10), BlobHashes: sidecar.BlobHashes(), Sidecar: sidecar})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.SendTransaction(ctx, blobTx); err != nil {
		t.Fatalf("send the blob: %v", err)
	}
	auth, err := types.SignSetCode(authKey, types.SetCodeAuthorization{ChainID: *uint256.NewInt(id), Address: contract})
	if err != nil {
		t.Fatal(err)
	}
	authority := crypto.PubkeyToAddress(authKey.PublicKey)
	send(&types.SetCodeTx{ChainID: uint256.NewInt(id), Nonce: nonce, GasTipCap: uint256.MustFromBig(tip), GasFeeCap: uint256.MustFromBig(feeCap),
		Gas: 100_000, To: authority, AuthList: []types.SetCodeAuthorization{auth}})
	hash := c.Commit()
	// go-ethereum 1.17's simulated chain takes a blob transaction into
	// its pool only with cell proofs (sidecar version 1, Osaka's) but
	// builds Prague blocks, which take version 0 only: the blob never
	// makes a block here. It is sent all the same, so the test notices
	// the day it does.
	_, blobErr := cl.TransactionReceipt(ctx, blobTx.Hash())
	d := devBlock{chainID: id, hash: hash, contract: contract, blobIncluded: blobErr == nil}
	d.full = rawCall(t, c.HTTPURL(), "eth_getBlockByHash", `["`+hash.Hex()+`",true]`)
	d.hashOnly = rawCall(t, c.HTTPURL(), "eth_getBlockByHash", `["`+hash.Hex()+`",false]`)
	d.receipts = rawCall(t, c.HTTPURL(), "eth_getBlockReceipts", `["`+hash.Hex()+`"]`)
	var h types.Header
	if err := json.Unmarshal(d.full, &h); err != nil || h.Hash() != hash {
		t.Fatalf("header: %v", err)
	}
	d.header = &h
	return d
}

// edit rewrites member name of the i-th object in the JSON array raw (or
// of raw itself when i < 0), through f.
func edit(t *testing.T, raw json.RawMessage, path []string, f func(json.RawMessage) json.RawMessage) json.RawMessage {
	t.Helper()
	if len(path) == 0 {
		return f(raw)
	}
	if i, err := strconv.Atoi(path[0]); err == nil {
		var a []json.RawMessage
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		if i < 0 {
			a = append(a[:len(a)+i], a[len(a)+i+1:]...)
			b, _ := json.Marshal(a)
			return b
		}
		a[i] = edit(t, a[i], path[1:], f)
		b, _ := json.Marshal(a)
		return b
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m[path[0]] = edit(t, m[path[0]], path[1:], f)
	b, _ := json.Marshal(m)
	return b
}

func set(v string) func(json.RawMessage) json.RawMessage {
	return func(json.RawMessage) json.RawMessage { return json.RawMessage(v) }
}

// TestBodiesOfADevBlock: a block of every transaction type go-ethereum
// makes is proved — its transactions by transactionsRoot (hydrated and
// hash-only), its receipts by receiptsRoot with every derived field as
// go-ethereum derives it, its logs by filter — and each one-field lie in
// it is caught, by the root or by the derivation.
func TestBodiesOfADevBlock(t *testing.T) {
	d := newDevBlock(t)
	p, why := decodeBody(d.chainID, d.header, d.hash, d.full)
	if why != "" {
		t.Fatalf("an honest block's body: %s", why)
	}
	types_ := map[uint8]int{}
	for _, tx := range p.txs {
		types_[tx.Type()]++
	}
	want := []uint8{types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType, types.SetCodeTxType}
	if d.blobIncluded {
		want = append(want, types.BlobTxType)
	} else {
		t.Logf("no blob transaction in the block: the simulated chain does not include one (see newDevBlock)")
	}
	for _, want := range want {
		if types_[want] == 0 {
			t.Errorf("the block holds no transaction of type %d: %v", want, types_)
		}
	}
	if why, full := checkBlockBody(d.full, p); why != "" || !full {
		t.Fatalf("the hydrated block: %q full=%v", why, full)
	}
	if why, full := checkBlockBody(d.hashOnly, p); why != "" || !full {
		t.Fatalf("the hash-only block: %q full=%v", why, full)
	}
	if why := proveReceipts(d.chainID, p, d.receipts); why != "" {
		t.Fatalf("honest receipts: %s", why)
	}
	var rs []json.RawMessage
	_ = json.Unmarshal(d.receipts, &rs)
	created, logs := 0, 0
	for i, r := range rs {
		if why, full := checkReceipt(r, p, i); why != "" || !full {
			t.Fatalf("receipt %d: %q full=%v: %s", i, why, full, r)
		}
		if p.receipts[i].ContractAddress != (common.Address{}) {
			created++
		}
		logs += len(p.receipts[i].Logs)
	}
	if created != 1 || logs < 2 {
		t.Fatalf("the block has %d creations and %d logs: want 1 and at least 2", created, logs)
	}
	_, match, ok := blockHashFilter(json.RawMessage(`[{"blockHash":"` + d.hash.Hex() + `"}]`))
	if !ok {
		t.Fatal("a blockHash filter not read")
	}
	// By address: the contract's own logs, not the set-code authority's
	// (its delegated code logs under its own address).
	_, byAddr, _ := blockHashFilter(json.RawMessage(`[{"blockHash":"` + d.hash.Hex() + `","address":["` + d.contract.Hex() + `"],"topics":[["0x0000000000000000000000000000000000000000000000000000000000000007"]]}]`))
	if why, _ := checkLogs(json.RawMessage(`[]`), p, byAddr); why == "" {
		t.Errorf("no logs of the contract proved where the block has some")
	}
	var allLogs []json.RawMessage
	for _, r := range rs {
		var x struct {
			Logs []json.RawMessage `json:"logs"`
		}
		_ = json.Unmarshal(r, &x)
		allLogs = append(allLogs, x.Logs...)
	}
	logsAns, _ := json.Marshal(allLogs)
	if why, _ := checkLogs(logsAns, p, match); why != "" {
		t.Fatalf("honest logs: %s", why)
	}

	// Lies. i: the index of a receipt with a log (the 2930 call), c: the
	// creation's.
	logIdx, creation := -1, -1
	for i, r := range p.receipts {
		if len(r.Logs) > 0 && logIdx < 0 {
			logIdx = i
		}
		if r.ContractAddress != (common.Address{}) {
			creation = i
		}
	}
	li, ci := strconv.Itoa(logIdx), strconv.Itoa(creation)
	for _, c := range []struct {
		name string
		path []string
		f    func(json.RawMessage) json.RawMessage
	}{
		{"status", []string{li, "status"}, set(`"0x0"`)},
		{"cumulativeGasUsed", []string{li, "cumulativeGasUsed"}, set(`"0x1"`)},
		{"a log's data", []string{li, "logs", "0", "data"}, set(`"0x2b"`)},
		{"a dropped log", []string{li, "logs", "-1"}, nil},
		{"gasUsed", []string{li, "gasUsed"}, set(`"0x5208"`)},
		{"contractAddress", []string{ci, "contractAddress"}, set(`"0x000000000000000000000000000000000000f0f0"`)},
		{"from", []string{li, "from"}, set(`"0x000000000000000000000000000000000000f0f0"`)},
		{"effectiveGasPrice", []string{li, "effectiveGasPrice"}, set(`"0x1"`)},
		{"a log's index", []string{li, "logs", "0", "logIndex"}, set(`"0x9"`)},
		{"transactionHash", []string{li, "transactionHash"}, set(`"0x1111111111111111111111111111111111111111111111111111111111111111"`)},
	} {
		f := c.f
		path := c.path
		if f == nil { // drop the last element of the array at path[:-1]
			path, f = path[:len(path)-1], func(raw json.RawMessage) json.RawMessage {
				var a []json.RawMessage
				_ = json.Unmarshal(raw, &a)
				b, _ := json.Marshal(a[:len(a)-1])
				return b
			}
		}
		bad := edit(t, d.receipts, path, f)
		// As the node's whole-block receipts (proved by the root) …
		q := &provenBlock{header: p.header, hash: p.hash, txs: p.txs, senders: p.senders}
		rootWhy := proveReceipts(d.chainID, q, bad)
		// … and as the answer compared with the proven receipts.
		var badRs []json.RawMessage
		_ = json.Unmarshal(bad, &badRs)
		i := logIdx
		if c.name == "contractAddress" {
			i = creation
		}
		ansWhy, _ := checkReceipt(badRs[i], p, i)
		if ansWhy == "" {
			t.Errorf("%s: a receipt with it altered was proved", c.name)
		}
		consensus := c.name == "status" || c.name == "cumulativeGasUsed" || c.name == "a log's data" || c.name == "a dropped log"
		if consensus && rootWhy == "" {
			t.Errorf("%s: receipts with it altered match the receiptsRoot", c.name)
		}
		t.Logf("%s: root %q; answer %q", c.name, rootWhy, ansWhy)
	}
	// An added log: the logs answer and the receipt both.
	var one []json.RawMessage
	_ = json.Unmarshal(logsAns, &one)
	added, _ := json.Marshal(append(one, one[0]))
	if why, _ := checkLogs(added, p, match); why == "" {
		t.Errorf("an added log was proved")
	}
	// A transaction field in a hydrated block: its root does not match.
	for _, field := range []string{"value", "nonce", "input", "gas"} {
		bad := edit(t, d.full, []string{"transactions", "1", field}, set(`"0x3"`))
		if _, why := decodeBody(d.chainID, d.header, d.hash, bad); why == "" {
			t.Errorf("a hydrated block with transaction 1's %s altered was proved", field)
		}
	}
	// Derived fields of a transaction: the root holds, the derivation fails.
	for _, field := range []string{"from", "hash", "blockNumber", "transactionIndex", "gasPrice", "blockHash"} {
		v := `"0x000000000000000000000000000000000000f0f0"`
		if field == "hash" || field == "blockHash" {
			v = `"0x1111111111111111111111111111111111111111111111111111111111111111"`
		} else if field != "from" {
			v = `"0x7"`
		}
		bad := edit(t, d.full, []string{"transactions", "2", field}, set(v))
		if why, _ := checkBlockBody(bad, p); why == "" {
			t.Errorf("a hydrated block with transaction 2's %s altered was proved", field)
		}
	}
	// A swapped hash in a hash-only block.
	swapped := edit(t, d.hashOnly, []string{"transactions", "0"}, set(`"0x1111111111111111111111111111111111111111111111111111111111111111"`))
	if why, _ := checkBlockBody(swapped, p); why == "" {
		t.Errorf("a hash-only block with a swapped hash was proved")
	}
	// A member the proof does not cover is not proved whole.
	extra := edit(t, d.full, []string{"totalDifficulty"}, set(`"0x0"`))
	if why, full := checkBlockBody(extra, p); why != "" || full {
		t.Errorf("a block with totalDifficulty: %q full=%v, want proved, not whole", why, full)
	}
	if !bytes.Contains(d.full, []byte(`"yParity"`)) {
		t.Logf("note: no yParity in go-ethereum's transactions")
	}
}

// TestBodiesPerChain: Ethereum's chains prove bodies by default, OP-stack,
// Arbitrum, Polygon PoS and unknown chains do not; configuration decides
// either way.
func TestBodiesPerChain(t *testing.T) {
	v := &Verifier{cfg: Config{ProveBodies: map[uint64]bool{137: true, 1: false}}}
	for id, want := range map[uint64]bool{137: true, 1: false, 11155111: true, 8453: false, 10: false, 42161: false, 80002: false, 999: false, 1337: true} {
		if got := v.ProvesBodies(id); got != want {
			t.Errorf("chain %d: proves bodies %v, want %v", id, got, want)
		}
	}
	for _, id := range []uint64{8453, 42161, 137} {
		if KnownForeignBodies(id) == "" || BodiesProvableByDefault(id) {
			t.Errorf("chain %d: not known as a family of its own transactions", id)
		}
	}
	var nilV *Verifier
	if nilV.ProvesBodies(1) {
		t.Error("no verifier proves bodies")
	}
}

// BenchmarkBodyProofs: the CPU of proving a dev block's body (every
// transaction type go-ethereum makes, senders recovered) and receipts
// (root and derived fields), and of comparing answers with a proven
// block, per transaction.
func BenchmarkBodyProofs(b *testing.B) {
	d := newDevBlock(b)
	p, why := decodeBody(d.chainID, d.header, d.hash, d.full)
	if why != "" {
		b.Fatal(why)
	}
	n := len(p.txs)
	var rs []json.RawMessage
	_ = json.Unmarshal(d.receipts, &rs)
	b.Run("prove body (decode, root, senders)", func(b *testing.B) {
		for range b.N {
			if _, why := decodeBody(d.chainID, d.header, d.hash, d.full); why != "" {
				b.Fatal(why)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tx")
	})
	b.Run("prove receipts (root, DeriveFields)", func(b *testing.B) {
		for range b.N {
			q := &provenBlock{header: p.header, hash: p.hash, txs: p.txs, senders: p.senders}
			if why := proveReceipts(d.chainID, q, d.receipts); why != "" {
				b.Fatal(why)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tx")
	})
	_ = proveReceipts(d.chainID, p, d.receipts)
	b.Run("compare a hydrated block with a proven one", func(b *testing.B) {
		for range b.N {
			if why, _ := checkBlockBody(d.full, p); why != "" {
				b.Fatal(why)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tx")
	})
	// A caller asking the same hydrated block again: the node's identical
	// answer is recalled (a sha256 of it), not compared again.
	v := &Verifier{}
	again := &Job{ChainID: d.chainID, Calls: []jsonrpc.Item{{Method: "eth_getBlockByHash", Params: json.RawMessage(`["` + d.hash.Hex() + `",true]`)}},
		Replies: []jsonrpc.Reply{{Response: jsonrpc.Response{Result: d.full}}}}
	if vd := v.proveBlockBody(b.Context(), again, nil, 0); vd.outcome != ProofProved {
		b.Fatalf("%+v", vd)
	}
	b.Run("a hydrated block answered again (remembered)", func(b *testing.B) {
		for range b.N {
			if vd := v.proveBlockBody(b.Context(), again, nil, 0); vd.outcome != ProofProved {
				b.Fatalf("%+v", vd)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tx")
	})
	b.Run("compare a receipt with a proven one", func(b *testing.B) {
		for i := range b.N {
			if why, _ := checkReceipt(rs[i%n], p, i%n); why != "" {
				b.Fatal(why)
			}
		}
	})
}
