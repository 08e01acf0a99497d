package devnet

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// TestReorg reorganises chain 137 at depths 1, 2 and 3 while the empty-block
// sealer runs and a sender keeps transactions flowing, and checks what a
// client sees over HTTP and WebSocket.
func TestReorg(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.Manifest
	hc, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	wc, err := ethclient.DialContext(ctx, m.Polygon.WSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	heads := newHeadLog(t, ctx, wc)

	// Traffic: self-transfers from developer-2, sent back to back without
	// waiting for receipts, so some are pending whenever a reorg starts.
	traffic, stopTraffic := context.WithCancel(ctx)
	var (
		wg   sync.WaitGroup
		sent []common.Hash
	)
	wg.Go(func() { sent = sendLoop(t, traffic, hc, DevKey("developer-2")) })

	for _, depth := range []int{1, 2, 3} {
		waitHead(t, ctx, hc, 3) // the sealer and the sender at work on the current branch
		before, err := hc.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := d.Reorg(ctx, 137, depth)
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		t.Logf("depth %d: fork point %d, head %d -> %d, %d txs re-included, took %s",
			depth, res.ForkPoint, before, res.ForkPoint+uint64(len(res.New)), len(res.Reincluded), time.Since(start).Round(time.Microsecond))
		if res.ChainID != 137 || res.Depth != depth || len(res.Old) != depth || len(res.New) != depth+1 || len(res.Dropped) != 0 {
			t.Fatalf("depth %d: result %+v", depth, res)
		}
		// Every replaced height now holds a different block, and the new branch
		// hangs together from one block below the fork point up to the new head.
		hdr := map[uint64]*types.Header{}
		for n := res.ForkPoint - 1; n <= res.ForkPoint+uint64(depth)+1; n++ {
			if hdr[n], err = hc.HeaderByNumber(ctx, new(big.Int).SetUint64(n)); err != nil {
				t.Fatalf("depth %d: block %d: %v", depth, n, err)
			}
			if n >= res.ForkPoint && hdr[n].ParentHash != hdr[n-1].Hash() {
				t.Fatalf("depth %d: block %d's parent %s is not block %d (%s)", depth, n, hdr[n].ParentHash, n-1, hdr[n-1].Hash())
			}
		}
		for i, h := range res.New {
			n := res.ForkPoint + 1 + uint64(i)
			if hdr[n].Hash() != h {
				t.Fatalf("depth %d: eth_getBlockByNumber(%d) = %s, want the new branch's %s", depth, n, hdr[n].Hash(), h)
			}
			if i < depth {
				if h == res.Old[i] {
					t.Fatalf("depth %d: block %d kept its hash %s", depth, n, h)
				}
				// The replaced block is still there by hash (a side block, as on a real node), and older.
				o, err := hc.HeaderByHash(ctx, res.Old[i])
				if err != nil || o.Number.Uint64() != n || o.Time >= hdr[n].Time {
					t.Fatalf("depth %d: replaced block %s: %v (%v); new one at time %d", depth, res.Old[i], o, err, hdr[n].Time)
				}
			}
		}
		after, err := hc.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after < before || after < res.ForkPoint+uint64(depth)+1 {
			t.Fatalf("depth %d: head %d before, %d after (new branch up to %d)", depth, before, after, res.ForkPoint+uint64(depth)+1)
		}
		// WebSocket newHeads subscribers are sent every block of the new branch.
		heads.waitFor(t, res.New)
	}
	stopTraffic()
	wg.Wait()

	// No transaction sent during the reorgs was lost: each has a receipt on the canonical chain.
	if len(sent) == 0 {
		t.Fatal("no traffic was sent")
	}
	for _, h := range sent {
		r := receipt(t, ctx, hc, h)
		if b, err := hc.HeaderByNumber(ctx, r.BlockNumber); err != nil || b.Hash() != r.BlockHash {
			t.Fatalf("tx %s: receipt in block %s, not canonical (%v)", h, r.BlockHash, err)
		}
	}
	t.Logf("%d transactions sent during the reorgs, all mined", len(sent))

	t.Run("a mined transaction moves to the new branch", func(t *testing.T) {
		for try := 0; ; try++ {
			tx := selfTransfer(t, ctx, hc, DevKey("developer-1"), nil)
			r := receipt(t, ctx, hc, tx.Hash())
			res, err := d.Reorg(ctx, 137, 3)
			if err != nil {
				t.Fatal(err)
			}
			if r.BlockNumber.Uint64() <= res.ForkPoint { // sealed over by empty blocks first; again
				if try == 5 {
					t.Fatalf("transaction in block %d, always below the fork point (%d)", r.BlockNumber, res.ForkPoint)
				}
				continue
			}
			if !slices.Contains(res.Reincluded, tx.Hash()) {
				t.Fatalf("tx %s not reported re-included: %+v", tx.Hash(), res)
			}
			r2 := receipt(t, ctx, hc, tx.Hash())
			if r2.BlockHash == r.BlockHash || r2.BlockHash != res.New[0] || r2.Status != types.ReceiptStatusSuccessful {
				t.Fatalf("receipt before %d/%s, after %d/%s status %d; new branch %v", r.BlockNumber, r.BlockHash, r2.BlockNumber, r2.BlockHash, r2.Status, res.New)
			}
			return
		}
	})

	t.Run("out-of-range depths and unknown chains are refused", func(t *testing.T) {
		head, err := hc.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, depth := range []int{-1, 0, MaxReorgDepth + 1, 64} {
			if _, err := d.Reorg(ctx, 137, depth); err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("depth %d: %v", depth, err)
			}
		}
		if _, err := d.Reorg(ctx, 1, 1); err == nil || !strings.Contains(err.Error(), "no chain 1") {
			t.Fatalf("chain 1: %v", err)
		}
		// Nothing was rewritten: the block at the head then is still there.
		h, err := hc.HeaderByNumber(ctx, new(big.Int).SetUint64(head))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // let the sealer add blocks on top
		h2, err := hc.HeaderByNumber(ctx, new(big.Int).SetUint64(head))
		if err != nil || h2.Hash() != h.Hash() {
			t.Fatalf("block %d changed: %s -> %v (%v)", head, h.Hash(), h2, err)
		}
	})

	t.Run("the deepest reorg", func(t *testing.T) {
		res, err := d.Reorg(ctx, 137, MaxReorgDepth)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Old) != MaxReorgDepth || len(res.New) != MaxReorgDepth+1 {
			t.Fatalf("%+v", res)
		}
		fin, err := hc.HeaderByNumber(ctx, big.NewInt(-3)) // "finalized"
		if err != nil {
			t.Fatal(err)
		}
		if fin.Number.Uint64() > res.ForkPoint+uint64(MaxReorgDepth)+1 || (fin.Number.Uint64() > res.ForkPoint && !slices.Contains(res.New, fin.Hash())) {
			t.Fatalf("finalized block %d %s replaced (fork point %d)", fin.Number, fin.Hash(), res.ForkPoint)
		}
	})

	t.Run("admin JSON-RPC devchain_reorg", func(t *testing.T) {
		url, err := d.ServeAdmin(0)
		if err != nil {
			t.Fatal(err)
		}
		if d.Manifest.AdminURL != url {
			t.Fatalf("manifest admin_url %q, served at %q", d.Manifest.AdminURL, url)
		}
		bc, err := ethclient.DialContext(ctx, m.Base.RPCURL)
		if err != nil {
			t.Fatal(err)
		}
		defer bc.Close()
		var res ReorgResult
		if e := adminCall(t, url, "devchain_reorg", &res, "0x2105", 2); e != "" {
			t.Fatal(e)
		}
		if res.ChainID != 8453 || len(res.Old) != 2 || len(res.New) != 3 {
			t.Fatalf("%+v", res)
		}
		for i, h := range res.New {
			got, err := bc.HeaderByNumber(ctx, new(big.Int).SetUint64(res.ForkPoint+1+uint64(i)))
			if err != nil || got.Hash() != h {
				t.Fatalf("chain 8453 block %d: %v %v, want %s", res.ForkPoint+1+uint64(i), got, err, h)
			}
		}
		if e := adminCall(t, url, "devchain_reorg", nil, 137, 17); !strings.Contains(e, "out of range") {
			t.Fatalf("depth 17 over JSON-RPC: %q", e)
		}
		if e := adminCall(t, url, "devchain_reorg", nil, 137, -1); e == "" {
			t.Fatal("depth -1 over JSON-RPC accepted")
		}
	})
}

// headLog records the hashes of the newHeads notifications of a subscription.
type headLog struct {
	mu   sync.Mutex
	seen map[common.Hash]bool
	ch   chan struct{} // signalled on every notification
}

func newHeadLog(t *testing.T, ctx context.Context, c *ethclient.Client) *headLog {
	t.Helper()
	l := &headLog{seen: map[common.Hash]bool{}, ch: make(chan struct{}, 1)}
	in := make(chan *types.Header, 64)
	sub, err := c.SubscribeNewHead(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Unsubscribe)
	go func() {
		for {
			select {
			case h := <-in:
				l.mu.Lock()
				l.seen[h.Hash()] = true
				l.mu.Unlock()
				select {
				case l.ch <- struct{}{}:
				default:
				}
			case <-sub.Err():
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return l
}

func (l *headLog) waitFor(t *testing.T, hashes []common.Hash) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		missing := slices.DeleteFunc(slices.Clone(hashes), func(h common.Hash) bool { return l.seen[h] })
		l.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		select {
		case <-l.ch:
		case <-deadline:
			t.Fatalf("newHeads never announced %v", missing)
		}
	}
}

// sendLoop sends self-transfers from key until ctx is done and returns their hashes.
func sendLoop(t *testing.T, ctx context.Context, c *ethclient.Client, k *ecdsa.PrivateKey) []common.Hash {
	nonce, err := c.PendingNonceAt(ctx, crypto.PubkeyToAddress(k.PublicKey))
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []common.Hash
	for ctx.Err() == nil {
		n := nonce
		tx := selfTransfer(t, ctx, c, k, &n)
		if tx == nil {
			break
		}
		out = append(out, tx.Hash())
		nonce++
		time.Sleep(15 * time.Millisecond) // pacing the sender, not synchronising
	}
	return out
}

// selfTransfer sends 1 wei from key to itself, with the given nonce or the
// pending one. It returns nil if ctx ended first.
func selfTransfer(t *testing.T, ctx context.Context, c *ethclient.Client, key *ecdsa.PrivateKey, nonce *uint64) *types.Transaction {
	from := crypto.PubkeyToAddress(key.PublicKey)
	if nonce == nil {
		n, err := c.PendingNonceAt(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		nonce = &n
	}
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{
		ChainID: big.NewInt(137), Nonce: *nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9),
		Gas: 21000, To: &from, Value: big.NewInt(1),
	})
	if err := c.SendTransaction(ctx, tx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		t.Errorf("send nonce %d: %v", *nonce, err)
		return nil
	}
	return tx
}

// waitHead waits until the head is k blocks above what it is now.
func waitHead(t *testing.T, ctx context.Context, c *ethclient.Client, k uint64) {
	t.Helper()
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
		if n >= start+k {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("head stuck at %d", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the chain head
	}
}

func receipt(t *testing.T, ctx context.Context, c *ethclient.Client, h common.Hash) *types.Receipt {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := c.TransactionReceipt(ctx, h)
		if err == nil {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no receipt for %s: %v", h, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the receipt
	}
}

// adminCall posts one JSON-RPC request to the admin endpoint; it returns the
// error message, "" on success (with the result decoded into out).
func adminCall(t *testing.T, url, method string, out any, params ...any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: HTTP %d: %v", method, resp.StatusCode, err)
	}
	if r.Error != nil {
		return r.Error.Message
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			t.Fatalf("%s: decode %s: %v", method, r.Result, err)
		}
	}
	return ""
}
