package devnet

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// rpc sends one raw JSON-RPC request over HTTP, as any external client would.
func rpc(t *testing.T, url, method string, params ...any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": append([]any{}, params...)})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result string `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: decode: %v", method, err)
	}
	return out.Result
}

func TestDevnet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Manifest
	path := filepath.Join(t.TempDir(), "devchain.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	m, err = ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}

	if got := rpc(t, m.Polygon.RPCURL, "eth_chainId"); got != "0x89" {
		t.Fatalf("chain 137 eth_chainId = %q", got)
	}
	if got := rpc(t, m.Base.RPCURL, "eth_chainId"); got != "0x2105" {
		t.Fatalf("chain 8453 eth_chainId = %q", got)
	}
	// Both chains answer over WebSocket too, and the empty-block miner feeds newHeads subscriptions.
	for _, c := range []struct {
		url string
		id  int64
	}{{m.Polygon.WSURL, 137}, {m.Base.WSURL, 8453}} {
		wc, err := ethclient.DialContext(ctx, c.url)
		if err != nil {
			t.Fatalf("dial %s: %v", c.url, err)
		}
		if id, err := wc.ChainID(ctx); err != nil || id.Int64() != c.id {
			t.Fatalf("eth_chainId over %s = %v, %v", c.url, id, err)
		}
		heads := make(chan *types.Header, 4)
		sub, err := wc.SubscribeNewHead(ctx, heads)
		if err != nil {
			t.Fatalf("eth_subscribe newHeads on chain %d: %v", c.id, err)
		}
		select {
		case h := <-heads:
			if h.Number.Sign() <= 0 {
				t.Fatalf("chain %d: head %v", c.id, h.Number)
			}
		case err := <-sub.Err():
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("chain %d: no newHeads notification", c.id)
		}
		sub.Unsubscribe()
		wc.Close()
	}

	// The official x402 batch-settlement client talks to fixed addresses: our contracts are there.
	for _, a := range []string{m.Base.BatchSettlement, m.Base.DepositCollector} {
		c := rpc(t, m.Base.RPCURL, "eth_getCode", a, "latest")
		if len(c) < 100 {
			t.Fatalf("chain 8453 has no code at %s: %q", a, c)
		}
	}

	t.Run("deposit over HTTP emits Deposited", func(t *testing.T) {
		account := accounts.NewID()
		res, err := Deposit(ctx, m, "developer-1", 5*money.Scale, account)
		if err != nil {
			t.Fatal(err)
		}
		dev, _ := m.Account("developer-1")
		if res.Account != account || res.From != dev.Addr() || res.Amount != 5*money.Scale {
			t.Fatalf("event = %+v", res)
		}
		if res.TreasuryAfter-res.TreasuryBefore != 5*money.Scale {
			t.Fatalf("treasury moved %d", res.TreasuryAfter-res.TreasuryBefore)
		}
	})

	t.Run("deposit below the minimum reverts with the decoded error", func(t *testing.T) {
		_, err := Deposit(ctx, m, "developer-2", money.Scale-1, accounts.NewID())
		if err == nil {
			t.Fatal("deposit below minimum succeeded")
		}
		if !bytes.Contains([]byte(err.Error()), []byte("DepositBelowMinimum")) {
			t.Fatalf("error does not name the custom error: %v", err)
		}
	})

	t.Run("empty blocks accumulate confirmations", func(t *testing.T) {
		c, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start, err := c.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := c.BlockNumber(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n >= start+3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("head stuck at %d (start %d) with no transactions pending", n, start)
			}
			time.Sleep(20 * time.Millisecond) // polling the chain head, not synchronising
		}
	})

	t.Run("addresses are deterministic", func(t *testing.T) {
		d2, err := Start(ctx, Config{BlockInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer d2.Close()
		if d2.Manifest.Polygon.RevenueVault != m.Polygon.RevenueVault || d2.Manifest.Base.USDC != m.Base.USDC {
			t.Fatalf("addresses differ between starts: %+v vs %+v", d2.Manifest.Polygon, m.Polygon)
		}
	})

	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// After Close the HTTP port is released.
	u, _ := url.Parse(m.Polygon.RPCURL)
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatalf("port still held after Close: %v", err)
	}
	l.Close()
}

// TokensOnly: the tokens and funded accounts, no RevenueVault or
// ClaimsContract — neither in the manifest nor at the addresses a full
// start deploys them to.
func TestDevnetTokensOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full, err := Start(ctx, Config{BlockInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	fullVault, fullClaims := full.Manifest.Polygon.RevenueVault, full.Manifest.Polygon.ClaimsContract
	_ = full.Close()
	d, err := Start(ctx, Config{BlockInterval: -1, TokensOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.Manifest
	if m.Polygon.RevenueVault != "" || m.Polygon.ClaimsContract != "" || m.Polygon.USDT == "" || m.Base.USDC == "" {
		t.Fatalf("manifest %+v %+v", m.Polygon, m.Base)
	}
	c, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, a := range []string{fullVault, fullClaims} {
		if code, err := c.CodeAt(ctx, common.HexToAddress(a), nil); err != nil || len(code) != 0 {
			t.Fatalf("code at %s on a tokens-only chain (%v)", a, err)
		}
	}
	if code, err := c.CodeAt(ctx, common.HexToAddress(m.Polygon.USDT), nil); err != nil || len(code) == 0 {
		t.Fatalf("no TestUSDT at %s (%v)", m.Polygon.USDT, err)
	}
	dev, _ := m.Account("developer-1")
	usdt := testusdt.NewTestUSDT()
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: ptr(common.HexToAddress(m.Polygon.USDT)), Data: usdt.PackBalanceOf(dev.Addr())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := usdt.UnpackBalanceOf(out); err != nil || b.Cmp(devUSDT.Big()) != 0 {
		t.Fatalf("developer-1 holds %v USDT units (%v), want %s", b, err, devUSDT)
	}
}

func ptr[T any](v T) *T { return &v }

// TestExtraChain: a chain id the devnet does not know starts as a plain
// EVM chain with the dev accounts funded, served over HTTP and WebSocket.
func TestExtraChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Start(ctx, Config{BlockInterval: 50 * time.Millisecond, ExtraChains: []uint64{31337}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Manifest.Extra) != 1 || d.Manifest.Extra[0].ChainID != 31337 || d.Manifest.Extra[0].WSURL == "" {
		t.Fatalf("manifest %+v", d.Manifest.Extra)
	}
	c, err := ethclient.DialContext(ctx, d.Manifest.Extra[0].RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id, err := c.ChainID(ctx); err != nil || id.Uint64() != 31337 {
		t.Fatalf("chain id %v %v", id, err)
	}
	dev, _ := d.Manifest.Account("developer-1")
	if bal, err := c.BalanceAt(ctx, common.HexToAddress(dev.Address), nil); err != nil || bal.Sign() <= 0 {
		t.Fatalf("developer-1 balance %v %v", bal, err)
	}
}
