package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// chainCaddyfile adds chain 31337 by configuration only: the gateway knows
// it from this block alone. Its provider's HTTP always fails, so a served
// call is the registered node's; its WebSocket is the dev chain's.
const chainCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			admin_token {env.TG_ADMIN_TOKEN}
			key_prefix @PREFIX@
			request_timeout 5s
			upstream_timeout 2s
			max_attempts 2
			probe_interval 100ms
			registry_refresh 200ms
			allow_private_nodes
			upstreams {
				probation off # a test of chains by configuration (caddymodule's trust_test.go is about probation)
			}
			free_daily_limit 3
			free_subnet_limit 100
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			min_deposit 1
			max_deposit 1000
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			chain 31337 {
				name         devchain
				display_name Dev Chain
				testnet
				block_time   200ms
				finality     2
				explorer     https://explorer.devchain.example
				currency     DEV 18
				method eth_getLogs max_block_range 100
				provider broken @BROKEN@ {
					ws @WS@
				}
			}
		}
		respond 404
	}
}
`

// TestConfiguredChainEndToEnd: a third dev chain, id 31337, added by
// configuration only (the gateway's chain block, settlementd's chains
// file), is served end to end through our Caddy: listed by service.json,
// x402 discovery, stats and health; a node registers for it once
// settlementd's chains file lists it (re-read on SIGHUP, no restart) and
// serves its calls; keys and credits and the free tier pay for them; a
// WebSocket subscription delivers its heads; its revenue reaches the usage
// history. The chain block's method line applies to it.
func TestConfiguredChainEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway, settlementd and the dev chains")
	}
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, _ := settletest.DB(t)
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 200 * time.Millisecond, ExtraChains: []uint64{31337}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	dev := m.Extra[0]

	node := faultproxy.New(dev.RPCURL)
	t.Cleanup(node.Close)
	broken := faultproxy.New(dev.RPCURL)
	broken.SetMode(faultproxy.Fail502)
	t.Cleanup(broken.Close)
	treasury, _ := m.Account("treasury")
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", treasury.Address, "@BROKEN@", broken.URL(), "@WS@", dev.WSURL).Replace(chainCaddyfile)
	const adminToken = "e2e-admin-token-0123456789"
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+adminToken)

	// settlementd starts with a chains file that does not list 31337 yet.
	chainsFile := filepath.Join(t.TempDir(), "chains.json")
	writeChains := func(body string) {
		if err := os.WriteFile(chainsFile, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeChains(`{"chains": []}`)
	api := fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(api, "http://"), "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_JWT_SECRET": "e2e-jwt-secret-0123456789abcdef0123456789", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_NODE_PROBE_SCHEDULE": "* * * * * *", "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(api, "http://"),
		"TOLLGATE_CHAINS_FILE": chainsFile,
	}
	runInProcess(t, env, api+"/health")

	// --- Discovery, stats and health list the chain.
	var sj struct {
		Services []map[string]any `json:"services"`
	}
	if err := json.Unmarshal(e2eDo(t, http.MethodGet, gw.URL()+"/.well-known/service.json", "").body, &sj); err != nil {
		t.Fatal(err)
	}
	var svc map[string]any
	for _, s := range sj.Services {
		if s["chain_id"] == float64(31337) {
			svc = s
		}
	}
	if svc == nil || svc["id"] != "rpc-devchain" || svc["name"] != "Dev Chain" || svc["testnet"] != true || svc["network"] != "eip155:31337" ||
		svc["url"] != gw.URL()+"/rpc/31337" || svc["stats"] != gw.URL()+"/rpc/stats/devchain" || svc["finality"] != "2" ||
		svc["block_time_ms"] != float64(200) || svc["explorer"] != "https://explorer.devchain.example" ||
		fmt.Sprint(svc["native_currency"]) != "map[decimals:18 symbol:DEV]" || svc["websocket"] == nil {
		t.Fatalf("service.json's chain 31337: %v", svc)
	}
	if a := e2eDo(t, http.MethodGet, gw.URL()+"/.well-known/x402", ""); !strings.Contains(string(a.body), `"`+gw.URL()+`/rpc/31337"`) {
		t.Fatalf("/.well-known/x402 lacks /rpc/31337: %s", a.body)
	}
	if a := e2eDo(t, http.MethodGet, gw.URL()+"/llms.txt", ""); !strings.Contains(string(a.body), "JSON-RPC 2.0 on another supported chain (1, 42161, 8453, 80002, 31337, 137)") {
		t.Fatalf("llms.txt does not name chain 31337: %s", a.body)
	}
	if a := e2eDo(t, http.MethodGet, gw.URL()+"/openapi.yaml", ""); !strings.Contains(string(a.body),
		"chain id (137, 1, 42161, 8453, 80002, 31337) or, for stats, its name (polygon, ethereum, arbitrum, base, amoy, devchain)") ||
		!strings.Contains(string(a.body), "JSON-RPC 2.0 on another supported chain (1, 42161, 8453, 80002, 31337, 137)") {
		t.Fatalf("openapi.yaml does not name chain 31337")
	}
	for _, which := range []string{"devchain", "31337", "DevChain"} {
		if a := e2eDo(t, http.MethodGet, gw.URL()+"/rpc/stats/"+which, ""); a.status != 200 || a.obj(t)["chain_id"] != float64(31337) {
			t.Fatalf("/rpc/stats/%s: %d %s", which, a.status, a.body)
		}
	}
	if a := e2eDo(t, http.MethodGet, gw.URL()+"/rpc/health", ""); !strings.Contains(string(a.body), `"chain_id":31337,"name":"devchain"`) {
		t.Fatalf("/rpc/health lacks chain 31337: %s", a.body)
	}
	if a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31338", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`); a.status != 404 ||
		!strings.Contains(string(a.body), "(supported: 137, 1, 42161, 8453, 80002, 31337)") {
		t.Fatalf("unknown chain: %d %s", a.status, a.body)
	}

	// --- A node registers for the chain once settlementd's table has it.
	op := devnet.DevKey("operator-1")
	auth := login(t, api, op)
	regBody := mustJSON(map[string]any{"region": "eu-west", "rpc_url": node.URL(), "ws_url": dev.WSURL, "chain_ids": []uint64{31337}, "label": "devchain node"})
	if a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, auth); a.status != 400 || a.code() != "unsupported_chain" {
		t.Fatalf("register before the chains file lists 31337: %d %s", a.status, a.body)
	}
	writeChains(`{"chains": [{"id": 31337, "name": "devchain", "display_name": "Dev Chain", "testnet": true,
		"block_time": "200ms", "finality": 2, "explorer": "https://explorer.devchain.example", "currency": {"symbol": "DEV", "decimals": 18}}]}`)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil { // settlementd's reload, as an operator sends it
		t.Fatal(err)
	}
	var nodeID string
	settletest.Eventually(t, 10*time.Second, "settlementd accepts chain 31337 after SIGHUP", func() (bool, error) {
		a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, auth)
		if a.status == http.StatusCreated {
			nodeID = a.obj(t)["node_id"].(string)
		}
		return a.status == http.StatusCreated, nil
	})

	// --- Keys and credits: paid calls on the chain are the node's.
	key := e2eDo(t, http.MethodPost, gw.URL()+"/api/keys", `{"label":"devchain","tier":"free"}`)
	if key.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", key.status, key.body)
	}
	secret, keyID := key.obj(t)["api_key"].(string), key.obj(t)["key_id"].(string)
	if _, _, err := balances.Credit(t.Context(), rdb, prefix, keyID, money.Scale, "0xe2e:31337"); err != nil {
		t.Fatal(err)
	}
	rpc := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	settletest.Eventually(t, 20*time.Second, "the gateway routes chain 31337 to the node", func() (bool, error) {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31337", rpc, "X-API-Key: "+secret)
		return a.status == 200 && a.header.Get("X-Tollgate-Upstream") == nodeID, nil
	})
	before := e2eDo(t, http.MethodGet, gw.URL()+"/api/keys/usage", "", "X-API-Key: "+secret).obj(t)["credits_remaining_calls"].(float64)
	const paid = 5
	for i := range paid {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/devchain", rpc, "X-API-Key: "+secret)
		if a.status != 200 || a.header.Get("X-Tollgate-Upstream") != nodeID || a.header.Get("X-Tollgate-Payer") != "credits" ||
			!strings.Contains(string(a.body), `"result":"0x`) {
			t.Fatalf("paid call %d: %d %v %s", i, a.status, a.header, a.body)
		}
	}
	if after := e2eDo(t, http.MethodGet, gw.URL()+"/api/keys/usage", "", "X-API-Key: "+secret).obj(t)["credits_remaining_calls"].(float64); after != before-paid {
		t.Fatalf("credits: %v calls before, %v after %d paid calls", before, after, paid)
	}
	// eth_chainId is the chain's own, answered by the gateway.
	if a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31337", `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`); !strings.Contains(string(a.body), `"result":"0x7a69"`) {
		t.Fatalf("eth_chainId: %d %s", a.status, a.body)
	}

	// The chain's own method table: its eth_getLogs range, refused before metering.
	wide := `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0","toBlock":"0x64"}]}`
	if a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31337", wide, "X-API-Key: "+secret); !strings.Contains(string(a.body), "101 blocks") ||
		!strings.Contains(string(a.body), "at most 100") {
		t.Fatalf("a 101-block eth_getLogs on chain 31337: %d %s", a.status, a.body)
	}

	// --- The free tier: 3 anonymous calls, then 402.
	for i := range 3 {
		if a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31337", rpc); a.status != 200 || a.header.Get("X-Tollgate-Payer") != "free" {
			t.Fatalf("free call %d: %d %v %s", i, a.status, a.header, a.body)
		}
	}
	if a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc/31337", rpc); a.status != http.StatusPaymentRequired || !strings.Contains(string(a.body), `"accepts"`) {
		t.Fatalf("past the free tier: %d %s", a.status, a.body)
	}

	// --- A WebSocket subscription delivers the chain's heads.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(gw.URL(), "http")+"/rpc/31337", http.Header{"X-Api-Key": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.SetReadDeadline(time.Now().Add(15 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)); err != nil {
		t.Fatal(err)
	}
	var sub struct {
		Result string `json:"result"`
		Error  any    `json:"error"`
	}
	if err := ws.ReadJSON(&sub); err != nil || sub.Result == "" {
		t.Fatalf("eth_subscribe: %+v %v", sub, err)
	}
	var note struct {
		Method string `json:"method"`
		Params struct {
			Subscription string `json:"subscription"`
			Result       struct {
				Number string `json:"number"`
			} `json:"result"`
		} `json:"params"`
	}
	if err := ws.ReadJSON(&note); err != nil || note.Method != "eth_subscription" || note.Params.Subscription != sub.Result || note.Params.Result.Number == "" {
		t.Fatalf("newHeads notification: %+v %v", note, err)
	}

	// --- Its revenue reaches settlementd's usage history, under the chain.
	settletest.Eventually(t, 20*time.Second, "usage history of chain 31337", func() (bool, error) {
		a := e2eDo(t, http.MethodGet, api+"/api/keys/history?granularity=day&days=1", "", "X-API-Key: "+secret)
		var h struct {
			ByChain []struct {
				ChainID int64 `json:"chain_id"`
				Calls   int64 `json:"calls"`
			} `json:"by_chain"`
		}
		_ = json.Unmarshal(a.body, &h)
		for _, c := range h.ByChain {
			if c.ChainID == 31337 && c.Calls >= paid {
				return true, nil
			}
		}
		return false, nil
	})
}
