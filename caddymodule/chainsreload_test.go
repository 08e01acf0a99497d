package caddymodule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// reloadChainsCaddyfile serves chain 137 from one provider and, where
// @CHAIN@ says so, chain 31337 from another.
const reloadChainsCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			request_timeout 10s
			upstreams {
				timeout 5s
				probe_interval 100ms
			}
			chain 137 {
				provider alpha @POLY@
			}
			@CHAIN@
		}
		respond 404
	}
}
`

const devChainBlock = `chain 31337 {
				name devchain
				block_time 100ms
				finality 2
				provider dev @DEV@
			}`

// TestReloadAddsAndRemovesAChain: a config reload adds chain 31337 (its
// finality reaching its cache), others make it the default of plain /rpc
// and back, another removes it, under
// steady load on chain 137; no request fails, and requests to 31337 in
// flight when it is removed finish on the old config.
func TestReloadAddsAndRemovesAChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond, ExtraChains: []uint64{31337}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	poly, dev := faultproxy.New(d.Manifest.Polygon.RPCURL), faultproxy.New(d.Manifest.Extra[0].RPCURL)
	t.Cleanup(poly.Close)
	t.Cleanup(dev.Close)
	config := func(withDev, devDefault bool) string {
		block := ""
		if withDev {
			block = strings.ReplaceAll(devChainBlock, "@DEV@", dev.URL())
		}
		if devDefault {
			block = strings.Replace(block, "name devchain", "name devchain\n\t\t\t\tdefault", 1)
		}
		return strings.NewReplacer("@POLY@", poly.URL(), "@CHAIN@", block).Replace(reloadChainsCaddyfile)
	}
	gw := caddyrun.Start(t, config(false, false))
	if r := post(t, gw.URL()+"/rpc/31337", getBalance); r.status != http.StatusNotFound {
		t.Fatalf("chain 31337 before it is configured: %d %s", r.status, r.body)
	}

	// Steady load on chain 137 (by name) for the whole test: 4 clients, back to back.
	// A reload — of any config, chains or not; plain Caddy with a respond
	// site does the same — hands the listener to the new server, and a
	// connection caught in the handover is reset or closed before a byte of
	// its request is read: no HTTP answer at all, which clients retry (Go's
	// transport does for idempotent requests). Such a read is retried (up to
	// three times: on a busy machine a retry can land in the same handover)
	// and counted; a request the gateway read must be answered, and any HTTP
	// answer but 200 with a result, or a fourth transport error in a row,
	// fails.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var resets atomic.Int64
	postNew := func(url, body string) rpcResp {
		for try := 0; ; try++ {
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				if try < 3 {
					resets.Add(1)
					continue
				}
				return rpcResp{status: -1, body: []byte(err.Error())}
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return rpcResp{resp.StatusCode, resp.Header, b}
		}
	}
	var served, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var load sync.WaitGroup
	for range 4 {
		load.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := postNew(gw.URL()+"/rpc/polygon", getBalance)
				if r.status != http.StatusOK || !strings.Contains(string(r.body), `"result"`) {
					failed.Add(1)
					failures.Store(fmt.Sprintf("%d %s", r.status, r.body), true)
					continue
				}
				served.Add(1)
			}
		})
	}

	// Add the chain: it is served without a restart.
	gw.Reload(config(true, false))
	deadline := time.Now().Add(readyWithin)
	for {
		r := postNew(gw.URL()+"/rpc/devchain", getBalance)
		if r.status == http.StatusOK && strings.Contains(string(r.body), `"result"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chain 31337 never served after the reload: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond) // polling until the new pool's provider is probed healthy
	}

	// Its finality (2 blocks, not the default 64) reaches its cache: a block
	// 5 below the head is final, and its second read is the cache's.
	for deadline := time.Now().Add(readyWithin); ; {
		var head struct {
			Result hexutil.Uint64 `json:"result"`
		}
		_ = json.Unmarshal(postNew(gw.URL()+"/rpc/31337", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`).body, &head)
		if head.Result > 5 {
			block := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["%s",false]}`, hexutil.Uint64(head.Result-5))
			postNew(gw.URL()+"/rpc/31337", block)
			if r := postNew(gw.URL()+"/rpc/31337", block); r.header.Get("X-Tollgate-Upstream") == "cache" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("a block 5 below chain 31337's head was never served from the cache: its finality of 2 blocks is not in force")
		}
		time.Sleep(50 * time.Millisecond) // polling until the pool's head is probed
	}

	// Made the default, the chain answers plain /rpc.
	const chainID = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
	if r := postNew(gw.URL()+"/rpc", chainID); !strings.Contains(string(r.body), `"result":"0x89"`) {
		t.Fatalf("/rpc before the default changes: %d %s", r.status, r.body)
	}
	gw.Reload(config(true, true))
	if r := postNew(gw.URL()+"/rpc", chainID); !strings.Contains(string(r.body), `"result":"0x7a69"`) {
		t.Fatalf("/rpc with chain 31337 the default: %d %s", r.status, r.body)
	}
	gw.Reload(config(true, false))

	// Requests to 31337 in flight while a reload removes it.
	dev.SetDelay(time.Second)
	seen := dev.Calls("eth_getBalance")
	const inflight = 8
	var wg sync.WaitGroup
	answers := make([]rpcResp, inflight)
	for i := range inflight {
		wg.Go(func() { answers[i] = postNew(gw.URL()+"/rpc/31337", getBalance) })
	}
	for deadline := time.Now().Add(30 * time.Second); dev.Calls("eth_getBalance") < seen+inflight; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests reached chain 31337's provider", dev.Calls("eth_getBalance")-seen, inflight)
		}
		time.Sleep(5 * time.Millisecond) // polling the proxy's counter
	}
	gw.Reload(config(false, false))
	wg.Wait()
	for i, a := range answers {
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Errorf("in-flight request %d to the removed chain: %d %s", i, a.status, a.body)
		}
	}
	if r := postNew(gw.URL()+"/rpc/31337", getBalance); r.status != http.StatusNotFound ||
		!strings.Contains(string(r.body), "(supported: 137, 1, 42161, 8453, 80002)") {
		t.Fatalf("chain 31337 after its removal: %d %s", r.status, r.body)
	}
	time.Sleep(200 * time.Millisecond) // a little more load on the final config
	close(stop)
	load.Wait()
	if failed.Load() != 0 || served.Load() == 0 {
		var list []string
		failures.Range(func(k, _ any) bool { list = append(list, k.(string)); return true })
		t.Fatalf("load on chain 137: %d served, %d failed: %v", served.Load(), failed.Load(), list)
	}
	t.Logf("chain 137 served %d calls across the reloads, none failed (%d connections reset in the listener handover, retried); %d in-flight calls to the removed chain all answered",
		served.Load(), resets.Load(), inflight)
}
