package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// rpcCounter passes JSON-RPC to the dev chain and counts the methods called
// (single calls and batches).
type rpcCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *rpcCounter) count(m string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[m]
}

func (c *rpcCounter) proxy(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var one struct{ Method string }
		var many []struct{ Method string }
		c.mu.Lock()
		if json.Unmarshal(b, &one) == nil && one.Method != "" {
			c.calls[one.Method]++
		} else if json.Unmarshal(b, &many) == nil {
			for _, m := range many {
				c.calls[m.Method]++
			}
		}
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The chain-137 RPC is dialled once: with the chain jobs and the claim
// signer both configured, the one client (its chain id checked once, the
// only eth_chainId settlementd sends) serves the API's signer-role check at
// start and the deposit listener and claim watcher afterwards. Before the
// daemon shared its client, the jobs and the API each dialled their own.
func TestOneChainClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	testenv.Redis(t)
	dsn, _ := settletest.DB(t)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	acct := func(name string) devnet.Account {
		a, err := m.Account(name)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	rpc := &rpcCounter{calls: map[string]int{}}
	rpcURL := rpc.proxy(t, m.Polygon.RPCURL)
	api := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
	runInProcess(t, map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": testenv.KeyPrefix(t), "TOLLGATE_HTTP_ADDR": api,
		"TOLLGATE_CHAIN_RPC_URL": rpcURL, "TOLLGATE_DEV": "1", "TOLLGATE_USDT_ADDRESS": m.Polygon.USDT, "TOLLGATE_VAULT_ADDRESS": m.Polygon.RevenueVault,
		"TOLLGATE_CLAIMS_ADDRESS": m.Polygon.ClaimsContract, "TOLLGATE_DEPOSIT_SCHEDULE": "* * * * * *",
		"TOLLGATE_CLAIM_SIGNER_KEY": acct("claim-signer").PrivateKey, "TOLLGATE_CLAIM_WATCH_SCHEDULE": "* * * * * *",
		"TOLLGATE_JWT_SECRET": "one-client-jwt-secret-0123456789abcdef", "TOLLGATE_AUTH_DOMAIN": api,
	}, "http://"+api+"/health")
	if n := rpc.count("eth_chainId"); n != 1 {
		t.Fatalf("eth_chainId sent %d times at start, want one dial", n)
	}
	if rpc.count("eth_call") == 0 {
		t.Fatal("the signer's CLAIM_CREATOR_ROLE was not read at start")
	}
	// The leader's jobs (deposits, claim watcher) read logs over the same client.
	settletest.Eventually(t, 20*time.Second, "the chain jobs to read logs", func() (bool, error) {
		return rpc.count("eth_getLogs") > 0, nil
	})
	if n := rpc.count("eth_chainId"); n != 1 {
		t.Fatalf("eth_chainId sent %d times, want one dial", n)
	}
}
