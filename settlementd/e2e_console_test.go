package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// consoleCaddyfile: the gateway as the root Caddyfile has it, on the test's
// Redis prefix, passing settlementd's routes (the console and the
// wallet-key routes among them) on to the in-process daemon. Chain 137's
// only provider always fails, so every served call is the registered node's.
const consoleCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			request_timeout 5s
			upstream_timeout 2s
			max_attempts 2
			probe_interval 100ms
			registry_refresh 200ms
			allow_private_nodes
			upstreams {
				probation off # a test of the console (caddymodule's trust_test.go is about probation)
			}
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			min_deposit 1
			max_deposit 1000
			explorer_url https://polygonscan.com
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			chain 137 {
				provider broken @BROKEN@
			}
		}
		@settlement path /api/nodes /api/nodes/* /api/auth/* /api/admin/* /api/status /health /x402/* /console /console/* /admin/* /api/keys/wallet /api/keys/wallet/* /api/keys/history /api/keys/credits
		reverse_proxy @settlement @API@
		respond 404
	}
}
`

const consoleAdminToken = "console-admin-token-0123456789"

// secretOfNoOne is a well-formed API key no one was given.
const secretOfNoOne = "tg_0000000000000000000000000000000000000000000"

// browserDeps finds chromium and the installed playwright-core, or skips
// (fails with TOLLGATE_REQUIRE_BROWSER=1).
func browserDeps(t *testing.T) (chromium, dir string) {
	t.Helper()
	miss := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("TOLLGATE_REQUIRE_BROWSER") == "1" {
			t.Fatalf(format+" (TOLLGATE_REQUIRE_BROWSER=1; run make browser-deps node-deps)", args...)
		}
		t.Skipf(format, args...)
	}
	chromium = os.Getenv("TOLLGATE_CHROMIUM")
	if chromium == "" {
		chromium, _ = exec.LookPath("chromium")
	}
	if chromium == "" {
		miss("no chromium (TOLLGATE_CHROMIUM or chromium on PATH)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		miss("no node")
	}
	dir, _ = filepath.Abs(filepath.Join("..", "tests", "browser"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		miss("tests/browser/node_modules is not installed")
	}
	return chromium, dir
}

// TestConsoleBrowser: in headless Chromium against the running stack (our
// Caddy, settlementd in process, Redis, PostgreSQL, the dev chain), wallets
// injected as EIP-1193 providers backed by dev keys: an operator signs in
// and registers a node; a developer creates a wallet-bound key with one
// signature (asking again names the existing key), deposits USDT through
// the wallet and sees it credited (on the page and in /api/keys/usage); the
// key's paid calls are served by the node; after settlement the operator
// withdraws the earnings with claim(), and the wallet's USDT balance grows
// by exactly the node's earnings. Screenshots go under the run directory
// (.run/screenshots) so a test run leaves the working tree clean;
// TOLLGATE_UPDATE_SCREENSHOTS=1 writes them to docs/screenshots instead.
func TestConsoleBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser against the whole stack")
	}
	chromium, scriptDir := browserDeps(t)
	began := time.Now()
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, pool := settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)

	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	client, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	acct := func(name string) (common.Address, string) {
		a, err := m.Account(name)
		if err != nil {
			t.Fatal(err)
		}
		return a.Addr(), a.PrivateKey
	}
	usdt := testusdt.NewTestUSDT()
	usdtC := usdt.Instance(client, common.HexToAddress(m.Polygon.USDT))
	balanceOf := func(a common.Address) money.Units {
		b, err := bind.Call(usdtC, &bind.CallOpts{Context: ctx}, usdt.PackBalanceOf(a), usdt.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		u, err := money.FromBig(b)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	treasury, treasuryKey := acct("treasury")
	{ // the treasury funds the claims contract in settlement
		opts := bind.NewKeyedTransactor(devnet.DevKey("deployer"), big.NewInt(137))
		opts.Context = ctx
		tx, err := bind.Transact(usdtC, opts, usdt.PackMint(treasury, (1_000*money.Scale).Big()))
		if err != nil {
			t.Fatal(err)
		}
		if r, err := deploy.WaitReceipt(ctx, client, tx.Hash(), 20*time.Millisecond); err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("mint: %v", err)
		}
	}
	developer, developerKey := acct("developer-1")
	operator, operatorKey := acct("operator-1")
	if balanceOf(developer) < 10*money.Scale {
		t.Fatalf("developer-1 holds %s USDT", balanceOf(developer).Decimal())
	}

	node := faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(node.Close)
	broken := faultproxy.New(m.Polygon.RPCURL)
	broken.SetMode(faultproxy.Fail502)
	t.Cleanup(broken.Close)

	apiAddr := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", treasury.Hex(), "@BROKEN@", broken.URL(), "@API@", apiAddr).Replace(consoleCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	_, relayerKey := acct("relayer")
	_, signerKey := acct("claim-signer")
	platform, _ := acct("platform")
	poolW, _ := acct("pool")
	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": apiAddr, "TOLLGATE_EPOCH_GRACE": "1s",
		"TOLLGATE_EPOCH_CLOSE_SCHEDULE": "* * * * * *", "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_CHAIN_RPC_URL": m.Polygon.RPCURL, "TOLLGATE_CHAIN_ID": "137", "TOLLGATE_USDT_ADDRESS": m.Polygon.USDT, "TOLLGATE_DEV": "1",
		"TOLLGATE_VAULT_ADDRESS": m.Polygon.RevenueVault, "TOLLGATE_CLAIMS_ADDRESS": m.Polygon.ClaimsContract,
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": "3", "TOLLGATE_DEPOSIT_SCHEDULE": "* * * * * *",
		"TOLLGATE_PLATFORM_WALLET": platform.Hex(), "TOLLGATE_POOL_WALLET": poolW.Hex(),
		"TOLLGATE_TREASURY_KEY": treasuryKey, "TOLLGATE_RELAYER_KEY": relayerKey, "TOLLGATE_SETTLEMENT_SCHEDULE": "* * * * * *", "TOLLGATE_SETTLEMENT_HOLD": "0s",
		"TOLLGATE_JWT_SECRET": "console-jwt-secret-0123456789abcdef012345", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_CLAIM_SIGNER_KEY": signerKey, "TOLLGATE_CLAIM_CONFIRMATIONS": "0",
		"TOLLGATE_CLAIM_WATCH_SCHEDULE": "* * * * * *", "TOLLGATE_NODE_PROBE_SCHEDULE": "* * * * * *",
		"TOLLGATE_ADMIN_TOKEN": consoleAdminToken, "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(gw.URL(), "http://"),
	}
	runInProcess(t, env, gw.URL()+"/health")
	operatorBefore := balanceOf(operator)
	stackUp := time.Since(began)

	// The browser run.
	shots := screenshotDir(t)
	bctx, bcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer bcancel()
	cmd := exec.CommandContext(bctx, "node", "console.mjs")
	cmd.Dir = scriptDir
	cmd.Env = append(os.Environ(), "TOLLGATE_CHROMIUM="+chromium, "CONSOLE_URL="+gw.URL()+"/console", "CHAIN_RPC="+m.Polygon.RPCURL,
		"DEVELOPER_KEY="+developerKey, "OPERATOR_KEY="+operatorKey, "NODE_URL="+node.URL(), "SHOTS="+shots,
		"DEPOSIT_USDT=10", "PAID_CALLS=20", "ADMIN_URL=http://"+apiAddr, "ADMIN_TOKEN="+consoleAdminToken)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	browserBegan := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser test: %v\n%s\n%s", err, stderr.String(), gw.Output())
	}
	t.Logf("browser run (%v):\n%s", time.Since(browserBegan).Round(100*time.Millisecond), stderr.String())
	var out struct {
		Operator, Developer, NodeID, KeyID, DepositTx, ClaimTx, ClaimableUSDT, ClaimedUSDT, BalanceAfterDeposit string
		PaidCalls                                                                                               int
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(stdout.Bytes())))
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("browser output %q: %v", stdout.String(), err)
	}
	str := func(k string) string { s, _ := raw[k].(string); return s }
	out.Operator, out.Developer, out.NodeID, out.KeyID = str("operator"), str("developer"), str("node_id"), str("key_id")
	out.DepositTx, out.ClaimTx, out.ClaimableUSDT, out.ClaimedUSDT = str("deposit_tx"), str("claim_tx"), str("claimable_usdt"), str("claimed_usdt")
	if n, ok := raw["paid_calls"].(float64); ok {
		out.PaidCalls = int(n)
	}
	// The operator sees the wallet's standing on the node's chain (phase,
	// share, check rate), as the gateways share it.
	if st := str("standing"); !strings.Contains(st, "chain 137: ") || !strings.Contains(st, "checks ") {
		t.Fatalf("the page did not show the wallet's standing: %q", st)
	} else {
		t.Logf("standing shown: %s", st)
	}
	if pm := str("paused_message"); !strings.Contains(pm, "paused") {
		t.Fatalf("the page did not show claims as paused: %q", pm)
	}
	if !strings.EqualFold(out.Operator, operator.Hex()) || !strings.EqualFold(out.Developer, developer.Hex()) {
		t.Fatalf("wallets %s %s", out.Operator, out.Developer)
	}

	// The key: a wallet key bound to the developer's wallet, in Postgres.
	var kind, wallet string
	settletest.Eventually(t, 10*time.Second, "the wallet key recorded", func() (bool, error) {
		err := pool.QueryRow(ctx, `SELECT kind, wallet FROM api_keys WHERE key_id = $1 AND key_hash IS NOT NULL AND revoked_at IS NULL`, out.KeyID).Scan(&kind, &wallet)
		return err == nil, nil
	})
	if kind != "wallet" || wallet != strings.ToLower(developer.Hex()) {
		t.Fatalf("api_keys row: kind %q wallet %q", kind, wallet)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM api_keys WHERE wallet = '`+strings.ToLower(developer.Hex())+`' AND kind = 'wallet'`); n != 1 {
		t.Fatalf("%d wallet keys for the developer, want 1", n)
	}
	// The deposit credited the key's account: 10 USDT, less the paid calls.
	var depUnits int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE(sum(amount_units), 0)::bigint FROM chain_deposits WHERE account = $1 AND state = 'credited'`, out.KeyID).Scan(&depUnits); err != nil ||
		money.Units(depUnits) != 10*money.Scale {
		t.Fatalf("deposits to %s: %d units (%v)", out.KeyID, depUnits, err)
	}
	bal, err := balances.Balance(ctx, rdb, prefix, out.KeyID)
	if err != nil || bal != 10*money.Scale-money.Units(out.PaidCalls*30) {
		t.Fatalf("balance of %s: %s (%v) after %d paid calls", out.KeyID, bal.Decimal(), err, out.PaidCalls)
	}

	// The withdrawal: the operator's wallet received exactly the claimed
	// amount the page showed, the node's earnings of the settled epochs
	// (a later epoch may have settled since, so at most what it earned).
	var earned, claimed int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE((SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1), 0)::bigint,
		COALESCE((SELECT max(cumulative_units) FROM claim_events WHERE node_id = $1), 0)::bigint`, out.NodeID).Scan(&earned, &claimed); err != nil {
		t.Fatal(err)
	}
	got := balanceOf(operator) - operatorBefore
	if got <= 0 || got != money.Units(claimed) || got > money.Units(earned) || money.Units(earned) > money.Units(out.PaidCalls*30)/2 {
		t.Fatalf("the operator received %d units; claimed %d, earned %d", got, claimed, earned)
	}
	if got.Decimal() != str("withdrawn_usdt") || got.Decimal() != out.ClaimedUSDT {
		t.Fatalf("the page showed %s withdrawn and %s claimed (%s claimable before); the wallet received %s", str("withdrawn_usdt"), out.ClaimedUSDT,
			out.ClaimableUSDT, got.Decimal())
	}
	r, err := client.TransactionReceipt(ctx, common.HexToHash(out.ClaimTx))
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("claim tx %s: %v", out.ClaimTx, err)
	}
	// The usage history the page charted is the ledger's: every revenue
	// event of the key, rolled up once.
	var evCalls, rolled int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE((SELECT sum(calls) FROM revenue_events WHERE account = $1), 0)::bigint,
		COALESCE((SELECT sum(calls) FROM usage_hourly WHERE account = $1), 0)::bigint`, out.KeyID).Scan(&evCalls, &rolled); err != nil {
		t.Fatal(err)
	}
	histCalls, _ := raw["history_calls"].(float64)
	if int64(histCalls) < int64(out.PaidCalls) || int64(histCalls) > evCalls || rolled != evCalls {
		t.Fatalf("usage history: the page read %v calls; %d paid calls served by the node, revenue events %d, rolled up %d", histCalls, out.PaidCalls, evCalls, rolled)
	}
	for _, k := range []string{"usage_chart_points", "earnings_chart_points", "epoch_chart_points"} {
		if n, _ := raw[k].(float64); n <= 0 {
			t.Fatalf("%s = %v: a chart drew no data", k, raw[k])
		}
	}
	for _, f := range []string{"console-key.png", "console-deposit.png", "console-withdrawal.png", "console-phone.png",
		"console-usage.png", "console-usage-phone.png", "console-earnings.png", "console-earnings-phone.png"} {
		if st, err := os.Stat(filepath.Join(shots, f)); err != nil || st.Size() < 10_000 || st.ModTime().Before(browserBegan) {
			t.Fatalf("screenshot %s: %v", f, err)
		}
	}

	// The wallet-key API through the gateway, every answer validated against
	// docs/openapi.yaml: the same wallet again is 409 naming the key; a
	// rotation revokes it and carries the balance over to the new key.
	gwURL := gw.URL()
	devKey := devnet.DevKey("developer-1")
	challenge := func(rotate bool) string {
		a := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet/challenge", mustJSON(map[string]any{"wallet": developer.Hex(), "rotate": rotate}))
		if a.status != http.StatusOK {
			t.Fatalf("challenge: %d %s", a.status, a.body)
		}
		return a.obj(t)["message"].(string)
	}
	msg := challenge(false)
	if a := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet", mustJSON(map[string]string{"message": msg, "signature": personalSign(t, devKey, msg)})); a.status != http.StatusConflict ||
		a.code() != "wallet_key_exists" || a.obj(t)["error"].(map[string]any)["key_id"] != out.KeyID {
		t.Fatalf("the same wallet again: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet/challenge", `{"wallet":"0x12"}`); a.status != http.StatusBadRequest {
		t.Fatalf("challenge for a bad wallet: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet", `{"message":"hello","signature":"0x00"}`); a.status != http.StatusBadRequest {
		t.Fatalf("not a SIWE message: %d %s", a.status, a.body)
	}
	msg = challenge(true)
	if a := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet", mustJSON(map[string]any{"message": msg, "rotate": true,
		"signature": personalSign(t, devnet.DevKey("operator-1"), msg)})); a.status != http.StatusUnauthorized {
		t.Fatalf("signed by another wallet: %d %s", a.status, a.body)
	}
	msg = challenge(true)
	rot := e2eDo(t, http.MethodPost, gwURL+"/api/keys/wallet", mustJSON(map[string]any{"message": msg, "rotate": true, "signature": personalSign(t, devKey, msg)}))
	if rot.status != http.StatusCreated || rot.obj(t)["replaced_key_id"] != out.KeyID || rot.obj(t)["carried_over_usdt"] != bal.Decimal() {
		t.Fatalf("rotate: %d replaced %v carried %v (want %s, %s)", rot.status, rot.obj(t)["replaced_key_id"], rot.obj(t)["carried_over_usdt"], out.KeyID, bal.Decimal())
	}
	newKey, newID := rot.obj(t)["api_key"].(string), rot.obj(t)["key_id"].(string)
	if u := e2eDo(t, http.MethodGet, gwURL+"/api/keys/usage", "", "X-API-Key: "+newKey); u.status != http.StatusOK || u.obj(t)["key_id"] != newID ||
		fmt.Sprint(u.obj(t)["credits_remaining_usdt"]) != bal.Decimal() {
		t.Fatalf("usage of the rotated key: %d %s", u.status, u.body)
	}
	if a := e2eDo(t, http.MethodPost, gwURL+"/rpc", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`, "X-API-Key: "+newKey); a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" {
		t.Fatalf("a call with the rotated key: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodGet, gwURL+"/api/keys/usage", "", "X-API-Key: "+secretOfNoOne); a.status != http.StatusUnauthorized {
		t.Fatalf("usage of an unknown key: %d", a.status)
	}
	if a := e2eDo(t, http.MethodGet, gwURL+"/credits/initiate?amount=5", "", "X-API-Key: "+newKey); a.status != http.StatusOK || a.obj(t)["account"] != newID {
		t.Fatalf("deposit instructions of the rotated key: %d %s", a.status, a.body)
	}
	// The usage history through the gateway (passed on to settlementd): the
	// rotated key's one paid call once ingested, the balance it was given as
	// a credit, and no reading of the old key's history with it.
	settletest.Eventually(t, 20*time.Second, "the rotated key's call in its usage history", func() (bool, error) {
		a := e2eDo(t, http.MethodGet, gwURL+"/api/keys/history?granularity=hour&hours=2", "", "X-API-Key: "+newKey)
		if a.status != http.StatusOK {
			return false, nil
		}
		tot, _ := a.obj(t)["totals"].(map[string]any)
		return a.obj(t)["key_id"] == newID && tot["calls"] == float64(1) && tot["spend_units"] == "30", nil
	})
	if a := e2eDo(t, http.MethodGet, gwURL+"/api/keys/credits", "", "X-API-Key: "+newKey); a.status != http.StatusOK ||
		!strings.Contains(string(a.body), `"kind":"adjustment"`) || !strings.Contains(string(a.body), `"units":"`+strconv.FormatInt(int64(bal), 10)+`"`) {
		t.Fatalf("credits of the rotated key: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodGet, gwURL+"/api/keys/history?key_id="+out.KeyID, "", "X-API-Key: "+newKey); a.status != http.StatusForbidden || a.code() != "not_key_owner" {
		t.Fatalf("another key's history: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodGet, gwURL+"/api/keys/history", "", "X-API-Key: "+secretOfNoOne); a.status != http.StatusUnauthorized {
		t.Fatalf("history of an unknown key: %d %s", a.status, a.body)
	}
	for _, p := range []string{"/api/status", "/health"} {
		if a := e2eDo(t, http.MethodGet, gwURL+p, ""); a.status != http.StatusOK {
			t.Fatalf("%s: %d", p, a.status)
		}
	}
	checkAnswersAgainstOpenAPI(t, gwURL)

	t.Logf("console end to end in %v (stack up in %v): key %s, deposit %s, node %s withdrew %s USDT in %s",
		time.Since(began).Round(100*time.Millisecond), stackUp.Round(100*time.Millisecond), out.KeyID, out.DepositTx, out.NodeID, got.Decimal(), out.ClaimTx)
}

// screenshotDir is where the browser test writes its screenshots: the
// committed docs/screenshots only when asked to update them, otherwise the
// run directory (TOLLGATE_RUN_DIR, as make sets it) or the test's temp dir.
func screenshotDir(t *testing.T) string {
	if os.Getenv("TOLLGATE_UPDATE_SCREENSHOTS") == "1" {
		dir, _ := filepath.Abs(filepath.Join("..", "docs", "screenshots"))
		return dir
	}
	if run := os.Getenv("TOLLGATE_RUN_DIR"); run != "" {
		dir := filepath.Join(run, "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("screenshot dir: %v", err)
		}
		return dir
	}
	return t.TempDir()
}
