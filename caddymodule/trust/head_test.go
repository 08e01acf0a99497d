package trust

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// providerChain is a provider (JSON-RPC over HTTP, the real wire format)
// whose chain the test sets: blocks 1…head, each hash made from its number
// and the branch it is on; a reorg moves the heights from a fork point up
// to another branch.
type providerChain struct {
	mu     sync.Mutex
	head   uint64
	branch map[uint64]int // height → branch (0 unless a reorg moved it)
}

func (c *providerChain) hash(n uint64) string {
	return fmt.Sprintf("0x%02x%062x", c.branch[n], n)
}

func (c *providerChain) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, rej := jsonrpc.Parse(body, jsonrpc.Options{})
		if rej != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for _, it := range msg.Items {
			var params []any
			_ = json.Unmarshal(it.Params, &params)
			var n uint64
			switch tag, _ := params[0].(string); {
			case it.Method == "eth_chainId":
				out = append(out, `{"jsonrpc":"2.0","id":`+string(it.ID)+`,"result":"0x89"}`)
				continue
			case it.Method == "eth_blockNumber":
				out = append(out, `{"jsonrpc":"2.0","id":`+string(it.ID)+`,"result":"`+hexutil.EncodeUint64(c.head)+`"}`)
				continue
			case tag == "latest":
				n = c.head
			default:
				n, _ = hexutil.DecodeUint64(tag)
			}
			if n == 0 || n > c.head {
				out = append(out, `{"jsonrpc":"2.0","id":`+string(it.ID)+`,"result":null}`)
				continue
			}
			out = append(out, `{"jsonrpc":"2.0","id":`+string(it.ID)+`,"result":{"number":"`+hexutil.EncodeUint64(n)+
				`","hash":"`+c.hash(n)+`","parentHash":"`+c.hash(n-1)+`"}}`)
		}
		w.Header().Set("Content-Type", "application/json")
		if msg.Batch {
			io.WriteString(w, "["+strings.Join(out, ",")+"]")
		} else {
			io.WriteString(w, out[0])
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHeadAfterAReorgDeeperThanItsFill: the head poll refills at most
// gapFill blocks below the head when the parent link breaks (a reorg).
// After a reorg deeper than that, the heights below the refill hold the
// replaced branch's hashes — which the proofs take as the providers'
// block there (a receipt from a replaced block delivered as proved) and
// the screen as the truth. The ring must not say a replaced hash: each
// height it holds is the providers' hash now, or not known.
func TestHeadAfterAReorgDeeperThanItsFill(t *testing.T) {
	c := &providerChain{head: 100, branch: map[uint64]int{}}
	pool, err := upstream.New(upstream.Config{ChainID: 137, ProbeInterval: -1, Trust: upstream.TrustConfig{Off: true},
		Providers: []upstream.Upstream{{Name: "prov", URL: c.serve(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Destruct() })
	h := NewHead(pool, 0, nil)
	for ; c.head <= 200; c.head++ { // a block a poll: the ring holds 99…200
		h.Poll(context.Background())
	}
	c.mu.Lock()
	c.head = 201
	for n := uint64(200 - gapFill - 20); n <= c.head; n++ { // a reorg of gapFill+20 blocks
		c.branch[n] = 1
	}
	c.mu.Unlock()
	h.Poll(context.Background())
	for n := uint64(99); n <= 201; n++ {
		got, known := h.HashAt(n)
		if known && !strings.EqualFold(got, c.hash(n)) {
			t.Fatalf("after a reorg of %d blocks the ring holds %s at %d, the providers' is %s", gapFill+20, got, n, c.hash(n))
		}
	}
	if got, known := h.HashAt(200); !known || got != c.hash(200) {
		t.Fatalf("the refill: %s %v at 200, want %s", got, known, c.hash(200))
	}
}
