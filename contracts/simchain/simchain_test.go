package simchain

import (
	"context"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

func TestChainConfigIsPragueOnly(t *testing.T) {
	cfg := ChainConfig(137)
	if cfg.ChainID.Int64() != 137 {
		t.Fatalf("chain ID %v", cfg.ChainID)
	}
	zero := big.NewInt(0)
	if !cfg.IsCancun(zero, 0) || !cfg.IsPrague(zero, 0) {
		t.Fatal("Cancun/Prague not active at genesis")
	}
	if cfg.IsOsaka(zero, 0) || cfg.IsAmsterdam(zero, 0) {
		t.Fatal("forks after Prague are active")
	}
	if cfg == ChainConfig(137) {
		t.Fatal("ChainConfig must return a fresh copy")
	}
}

func TestHTTPAndAutoCommit(t *testing.T) {
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	chain, err := New(Config{
		ChainID:  8453,
		Alloc:    types.GenesisAlloc{from: {Balance: big.NewInt(1e18)}},
		HTTPPort: port,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go chain.AutoCommit(ctx, 20*time.Millisecond)

	client, err := ethclient.DialContext(ctx, chain.HTTPURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	id, err := client.ChainID(ctx)
	if err != nil {
		t.Fatalf("eth_chainId over HTTP: %v", err)
	}
	if id.Int64() != 8453 {
		t.Fatalf("eth_chainId %v, want 8453", id)
	}
	var netVersion string
	if err := client.Client().CallContext(ctx, &netVersion, "net_version"); err != nil || netVersion != "8453" {
		t.Fatalf("net_version %q, %v", netVersion, err)
	}

	// A transaction sent over HTTP is mined by the AutoCommit loop.
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: new(big.Int).Add(head.BaseFee, big.NewInt(2e9)),
		Gas: 21000, To: &to, Value: big.NewInt(12345),
	})
	if err := client.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := client.TransactionReceipt(ctx, tx.Hash())
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				t.Fatalf("status %d", r.Status)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("transaction not mined by AutoCommit")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if bal, _ := client.BalanceAt(ctx, to, nil); bal.Int64() != 12345 {
		t.Fatalf("recipient balance %v", bal)
	}
}

func TestHTTPRejectsForeignHost(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	chain, err := New(Config{ChainID: 137, HTTPPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	post := func(host string) int {
		body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)
		req, err := http.NewRequest(http.MethodPost, chain.HTTPURL(), body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("localhost"); code != http.StatusOK {
		t.Fatalf("Host localhost: HTTP %d", code)
	}
	if code := post("evil.example"); code == http.StatusOK {
		t.Fatal("request with a foreign Host header was accepted")
	}
}

func TestNewFailsOnBusyPort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	first, err := New(Config{ChainID: 137, HTTPPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if second, err := New(Config{ChainID: 137, HTTPPort: port}); err == nil {
		second.Close()
		t.Fatal("second chain on the same port started")
	}
}

func TestInProcRPCAvailable(t *testing.T) {
	chain, err := New(Config{ChainID: 137})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if chain.rpc == nil {
		t.Fatal("in-process RPC not found; AutoCommit falls back to the lagging pending block")
	}
	if n, err := chain.pendingTxs(context.Background()); err != nil || n != 0 {
		t.Fatalf("pendingTxs = %d, %v", n, err)
	}
}

// TestWebSocketSubscriptions: the HTTP port also answers WebSocket, and eth_subscribe newHeads and
// logs deliver a notification for every sealed block and every emitted log.
func TestWebSocketSubscriptions(t *testing.T) {
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	chain, err := New(Config{ChainID: 137, Alloc: types.GenesisAlloc{from: {Balance: big.NewInt(1e18)}}, HTTPPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if chain.WSURL() != "ws://127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("WSURL %q", chain.WSURL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, err := ethclient.DialContext(ctx, chain.WSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	heads := make(chan *types.Header, 16)
	hsub, err := client.SubscribeNewHead(ctx, heads)
	if err != nil {
		t.Fatalf("eth_subscribe newHeads: %v", err)
	}
	defer hsub.Unsubscribe()
	logs := make(chan types.Log, 16)
	lsub, err := client.SubscribeFilterLogs(ctx, ethereum.FilterQuery{}, logs)
	if err != nil {
		t.Fatalf("eth_subscribe logs: %v", err)
	}
	defer lsub.Unsubscribe()

	for want := uint64(1); want <= 3; want++ {
		hash := chain.Commit()
		select {
		case h := <-heads:
			if h.Number.Uint64() != want || h.Hash() != hash {
				t.Fatalf("head %d %s, want %d %s", h.Number, h.Hash(), want, hash)
			}
		case err := <-hsub.Err():
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("no newHeads notification for block %d", want)
		}
	}
	// A creation transaction whose init code is LOG0 of nothing: one log, no contract needed.
	id := chain.ChainID()
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: new(big.Int).Add(head.BaseFee, big.NewInt(2e9)),
		Gas: 100_000, Data: common.FromHex("0x60006000a000"),
	})
	if err := client.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	block := chain.Commit()
	select {
	case l := <-logs:
		if l.TxHash != tx.Hash() || l.BlockHash != block || l.BlockNumber != 4 {
			t.Fatalf("log %+v, want tx %s in block 4 %s", l, tx.Hash(), block)
		}
	case err := <-lsub.Err():
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("no logs notification")
	}
}
