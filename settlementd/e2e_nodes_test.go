package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// e2eCaddyfile: the gateway on the test's Redis prefix, chain 137 served by
// registered nodes, with one configured provider that always fails (so
// every served call is a node's). Probation is off: with no working
// provider nothing could judge a node's shadow answers, and these tests are
// about registration and settlement (caddymodule's trust_test.go is about
// probation).
const e2eCaddyfile = `{
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
				probation off
			}
			free_daily_limit 1000
			free_subnet_limit 5000
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
			chain 137 {
				provider broken @BROKEN@
			}
		}
		respond 404
	}
}
`

type e2eAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a e2eAnswer) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("not JSON (%d): %s", a.status, a.body)
	}
	return m
}

func (a e2eAnswer) code() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Error.Code
}

func e2eDo(t *testing.T, method, url, body string, headers ...string) e2eAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := e2eAnswer{resp.StatusCode, resp.Header, b}
	recordAnswer(method, url, a)
	return a
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// login runs the wallet login and returns the bearer header.
func login(t *testing.T, api string, key *ecdsa.PrivateKey) string {
	t.Helper()
	wallet := crypto.PubkeyToAddress(key.PublicKey)
	ch := e2eDo(t, http.MethodPost, api+"/api/auth/challenge", mustJSON(map[string]string{"wallet": wallet.Hex()}))
	if ch.status != http.StatusOK {
		t.Fatalf("challenge: %d %s", ch.status, ch.body)
	}
	msg := ch.obj(t)["message"].(string)
	a := e2eDo(t, http.MethodPost, api+"/api/auth/login", mustJSON(map[string]string{"message": msg, "signature": personalSign(t, key, msg)}))
	if a.status != http.StatusOK {
		t.Fatalf("login: %d %s", a.status, a.body)
	}
	return "Authorization: Bearer " + a.obj(t)["token"].(string)
}

func personalSign(t *testing.T, key *ecdsa.PrivateKey, msg string) string {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// TestNodeOperatorEndToEnd: on real Redis, Postgres, the dev chain and our
// Caddy build, an operator logs in with a wallet signature, registers a node
// (a JSON-RPC endpoint in front of the dev chain), the gateway routes paid
// calls to it, the epoch closes and settles, the earnings are exactly half
// the revenue, the claim signature pays exactly that on chain, the same
// claim again reverts AlreadyClaimed, and an expired signature is replaced
// by a new one for the same funds. Negative answers of every endpoint on the
// way.
func TestNodeOperatorEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway, settlementd and the dev chain")
	}
	began := time.Now()
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, pool := settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1}) // mined as transactions arrive
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
	usdt, cc := testusdt.NewTestUSDT(), claimscontract.NewClaimsContract()
	usdtA, claimsA := common.HexToAddress(m.Polygon.USDT), common.HexToAddress(m.Polygon.ClaimsContract)
	usdtC, claimsC := usdt.Instance(client, usdtA), cc.Instance(client, claimsA)
	balance := func(a common.Address) money.Units {
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
	send := func(key *ecdsa.PrivateKey, c *bind.BoundContract, data []byte) (*types.Receipt, error) {
		opts := bind.NewKeyedTransactor(key, big.NewInt(137))
		opts.Context = ctx
		tx, err := bind.Transact(c, opts, data)
		if err != nil {
			return nil, err
		}
		r, err := deploy.WaitReceipt(ctx, client, tx.Hash(), 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transaction %s reverted", tx.Hash().Hex())
		}
		return r, nil
	}
	treasury, treasuryKey := acct("treasury")
	if _, err := send(devnet.DevKey("deployer"), usdtC, usdt.PackMint(treasury, (1_000*money.Scale).Big())); err != nil {
		t.Fatal(err)
	}
	op1Key, op2Key := devnet.DevKey("operator-1"), devnet.DevKey("operator-2")
	op1, op2 := crypto.PubkeyToAddress(op1Key.PublicKey), crypto.PubkeyToAddress(op2Key.PublicKey)

	// The operator's node: a JSON-RPC endpoint in front of the dev chain.
	node := faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(node.Close)
	broken := faultproxy.New(m.Polygon.RPCURL)
	broken.SetMode(faultproxy.Fail502)
	t.Cleanup(broken.Close)

	_, payTo := acct("treasury")
	payToAddr, _ := acct("treasury")
	_ = payTo
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", payToAddr.Hex(), "@BROKEN@", broken.URL()).Replace(e2eCaddyfile)
	const adminToken = "e2e-admin-token-0123456789"
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+adminToken)

	// settlementd, in process, with the chain jobs and a test-friendly pace.
	_, relayerKey := acct("relayer")
	_, signerKey := acct("claim-signer")
	platform, _ := acct("platform")
	poolW, _ := acct("pool")
	api := fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(api, "http://"), "TOLLGATE_EPOCH_GRACE": "1s",
		"TOLLGATE_EPOCH_CLOSE_SCHEDULE": "* * * * * *", "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_CHAIN_RPC_URL": m.Polygon.RPCURL, "TOLLGATE_CHAIN_ID": "137", "TOLLGATE_USDT_ADDRESS": m.Polygon.USDT, "TOLLGATE_DEV": "1",
		"TOLLGATE_VAULT_ADDRESS": m.Polygon.RevenueVault, "TOLLGATE_CLAIMS_ADDRESS": m.Polygon.ClaimsContract,
		"TOLLGATE_PLATFORM_WALLET": platform.Hex(), "TOLLGATE_POOL_WALLET": poolW.Hex(),
		"TOLLGATE_TREASURY_KEY": treasuryKey, "TOLLGATE_RELAYER_KEY": relayerKey, "TOLLGATE_SETTLEMENT_SCHEDULE": "* * * * * *", "TOLLGATE_SETTLEMENT_HOLD": "0s",
		"TOLLGATE_JWT_SECRET": "e2e-jwt-secret-0123456789abcdef0123456789", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_CLAIM_SIGNER_KEY": signerKey, "TOLLGATE_CLAIM_VALIDITY": "8s", "TOLLGATE_CLAIM_CONFIRMATIONS": "0",
		"TOLLGATE_CLAIM_WATCH_SCHEDULE": "* * * * * *", "TOLLGATE_CLAIM_SWEEP_SCHEDULE": "* * * * * *",
		"TOLLGATE_GATEWAY_URL": gw.URL(), "TOLLGATE_GATEWAY_PROBE_SCHEDULE": "* * * * * *", "TOLLGATE_ADMIN_TOKEN": adminToken,
		"TOLLGATE_NODE_PROBE_SCHEDULE": "* * * * * *", "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(api, "http://"),
	}
	runInProcess(t, env, api+"/health")

	// --- Wallet login, and its failures.
	auth1 := login(t, api, op1Key)
	auth2 := login(t, api, op2Key)
	ch := e2eDo(t, http.MethodPost, api+"/api/auth/challenge", mustJSON(map[string]string{"wallet": op1.Hex()})).obj(t)
	msg := ch["message"].(string)
	for name, c := range map[string]struct {
		msg, sig string
		status   int
		code     string
	}{
		"signed by another wallet": {msg, personalSign(t, op2Key, msg), 401, "invalid_signature"},
		"garbage signature":        {msg, "0x1234", 401, "invalid_signature"},
		"wrong domain":             {strings.Replace(msg, "127.0.0.1:", "evil.example:", 1), "", 401, "wrong_domain"},
		"not a SIWE message":       {"hello", "0x00", 400, "invalid_message"},
	} {
		sig := c.sig
		if sig == "" {
			sig = personalSign(t, op1Key, c.msg)
		}
		if a := e2eDo(t, http.MethodPost, api+"/api/auth/login", mustJSON(map[string]string{"message": c.msg, "signature": sig})); a.status != c.status || a.code() != c.code {
			t.Fatalf("login %s: %d %s, want %d %s", name, a.status, a.body, c.status, c.code)
		}
	}
	good := mustJSON(map[string]string{"message": msg, "signature": personalSign(t, op1Key, msg)})
	if a := e2eDo(t, http.MethodPost, api+"/api/auth/login", good); a.status != 200 {
		t.Fatalf("login: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, api+"/api/auth/login", good); a.status != 401 || a.code() != "nonce_used" {
		t.Fatalf("reused nonce: %d %s", a.status, a.body)
	}
	// Challenges are signed, not stored: a message whose expiry
	// has passed is refused as expired (here the wallet signed one whose
	// expiry was moved into the past; the nonce's MAC would refuse it next).
	ch = e2eDo(t, http.MethodPost, api+"/api/auth/challenge", mustJSON(map[string]string{"wallet": op1.Hex()})).obj(t)
	expired := regexp.MustCompile(`Expiration Time: \S+`).ReplaceAllString(ch["message"].(string), "Expiration Time: 2020-01-01T00:00:00Z")
	if a := e2eDo(t, http.MethodPost, api+"/api/auth/login", mustJSON(map[string]string{"message": expired,
		"signature": personalSign(t, op1Key, expired)})); a.status != 401 || a.code() != "nonce_expired" {
		t.Fatalf("expired nonce: %d %s", a.status, a.body)
	}
	// Tokens: none, garbage, alg none, another key, expired.
	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": strings.ToLower(op1.Hex()), "iss": "tollgate-settlementd",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	otherTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": strings.ToLower(op1.Hex()), "iss": "tollgate-settlementd",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("another-secret-0123456789abcdef0123456"))
	expTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": strings.ToLower(op1.Hex()), "iss": "tollgate-settlementd",
		"exp": time.Now().Add(-time.Minute).Unix()}).SignedString([]byte(env["TOLLGATE_JWT_SECRET"]))
	regBody := mustJSON(map[string]any{"region": "eu-west", "rpc_url": node.URL(), "chain_ids": []uint64{137}, "label": "e2e node"})
	for name, h := range map[string][]string{"none": nil, "garbage": {"Authorization: Bearer abc"}, "alg none": {"Authorization: Bearer " + noneTok},
		"other key": {"Authorization: Bearer " + otherTok}, "expired": {"Authorization: Bearer " + expTok}} {
		if a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, h...); a.status != 401 || a.code() != "invalid_token" {
			t.Fatalf("register with token %s: %d %s", name, a.status, a.body)
		}
	}

	// --- Registration, and its failures.
	for name, c := range map[string]struct {
		body map[string]any
		code string
	}{
		"bad region":      {map[string]any{"region": "EU_WEST!", "rpc_url": node.URL(), "chain_ids": []uint64{137}}, "invalid_region"},
		"bad scheme":      {map[string]any{"region": "eu", "rpc_url": "ftp://example.com", "chain_ids": []uint64{137}}, "invalid_rpc_url"},
		"unknown chain":   {map[string]any{"region": "eu", "rpc_url": node.URL(), "chain_ids": []uint64{999}}, "unsupported_chain"},
		"wrong chain":     {map[string]any{"region": "eu", "rpc_url": node.URL(), "chain_ids": []uint64{1}}, "chain_mismatch"},
		"nothing listens": {map[string]any{"region": "eu", "rpc_url": "http://127.0.0.1:1/", "chain_ids": []uint64{137}}, "probe_failed"},
	} {
		if a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", mustJSON(c.body), auth1); a.status != 400 || a.code() != c.code {
			t.Fatalf("register %s: %d %s, want 400 %s", name, a.status, a.body, c.code)
		}
	}
	reg := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, auth1)
	if reg.status != http.StatusCreated {
		t.Fatalf("register: %d %s", reg.status, reg.body)
	}
	nodeID := reg.obj(t)["node_id"].(string)
	if !registry.ValidID(nodeID) || !strings.HasPrefix(nodeID, "NODE-EU-WEST-") {
		t.Fatalf("node id %q", nodeID)
	}
	if a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, auth1); a.status != http.StatusOK || a.obj(t)["node_id"] != nodeID {
		t.Fatalf("re-register: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, api+"/api/nodes/register", regBody, auth2); a.status != http.StatusConflict {
		t.Fatalf("another wallet registering the URL: %d %s", a.status, a.body)
	}
	if v, err := rdb.HGet(ctx, prefix+registry.NodesKey, nodeID).Result(); err != nil || !strings.Contains(v, `"status":"online"`) {
		t.Fatalf("registry record: %q %v", v, err)
	}

	// --- Paid traffic through the gateway reaches the node.
	key := e2eDo(t, http.MethodPost, gw.URL()+"/api/keys", `{"label":"e2e","tier":"free"}`)
	if key.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", key.status, key.body)
	}
	secret, keyID := key.obj(t)["api_key"].(string), key.obj(t)["key_id"].(string)
	if _, _, err := balances.Credit(ctx, rdb, prefix, keyID, 100*money.Scale, "0xe2e:1"); err != nil {
		t.Fatal(err)
	}
	rpc := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	settletest.Eventually(t, 15*time.Second, "the gateway routes to the node", func() (bool, error) {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc) // anonymous: free, no revenue
		return a.status == 200 && a.header.Get("X-Tollgate-Upstream") == nodeID, nil
	})
	const calls = 20
	for i := range calls {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc, "X-API-Key: "+secret)
		if a.status != 200 || a.header.Get("X-Tollgate-Upstream") != nodeID || a.header.Get("X-Tollgate-Payer") != "credits" {
			t.Fatalf("paid call %d: %d %v %s", i, a.status, a.header, a.body)
		}
	}
	paidAt := time.Now()
	revenue := money.Units(calls * 30)

	// Status while the epoch runs.
	st := e2eDo(t, http.MethodGet, api+"/api/status", "")
	if st.status != 200 {
		t.Fatalf("status: %d %s", st.status, st.body)
	}
	sm := st.obj(t)
	if sm["nodes_online"].(float64) != 1 || sm["requests_today"].(float64) < calls {
		t.Fatalf("status %s", st.body)
	}

	// Earnings before anything is settled: zero, last_claim null; A's
	// token cannot read or claim B's node and vice versa; unknown node 404.
	earnings := func(h string) map[string]any {
		a := e2eDo(t, http.MethodGet, api+"/api/nodes/"+nodeID+"/earnings", "", h)
		if a.status != 200 {
			t.Fatalf("earnings: %d %s", a.status, a.body)
		}
		return a.obj(t)
	}
	if e := earnings(auth1); e["last_claim"] != nil || e["claimable_units"] != "0" {
		t.Fatalf("fresh earnings %v", e)
	}
	claimURL := api + "/api/nodes/" + nodeID + "/claim"
	op1Body := mustJSON(map[string]string{"walletAddress": op1.Hex()})
	for name, c := range map[string]struct {
		method, url, body, auth string
		status                  int
		code                    string
	}{
		"B reads A's earnings":  {"GET", api + "/api/nodes/" + nodeID + "/earnings", "", auth2, 403, "not_node_owner"},
		"B claims A's node":     {"POST", claimURL, mustJSON(map[string]string{"walletAddress": op2.Hex()}), auth2, 403, "not_node_owner"},
		"unknown node":          {"GET", api + "/api/nodes/NODE-EU-AAAAAAAA/earnings", "", auth1, 404, "node_not_found"},
		"unknown node claim":    {"POST", api + "/api/nodes/NODE-EU-AAAAAAAA/claim", op1Body, auth1, 404, "node_not_found"},
		"malformed address":     {"POST", claimURL, `{"walletAddress":"0x123"}`, auth1, 400, "invalid_address"},
		"other wallet in body":  {"POST", claimURL, mustJSON(map[string]string{"walletAddress": op2.Hex()}), auth1, 403, "wallet_mismatch"},
		"nothing claimable yet": {"POST", claimURL, op1Body, auth1, 409, "nothing_claimable"},
		"no token":              {"POST", claimURL, op1Body, "X-None: 1", 401, "invalid_token"},
	} {
		if a := e2eDo(t, c.method, c.url, c.body, c.auth); a.status != c.status || a.code() != c.code {
			t.Fatalf("%s: %d %s, want %d %s", name, a.status, a.body, c.status, c.code)
		}
	}

	// --- The epoch closes, settlement funds ClaimsContract and allocates.
	var want money.Units
	settletest.Eventually(t, 80*time.Second, "the node's share allocated on chain", func() (bool, error) {
		var earned, allocated int64
		err := pool.QueryRow(ctx, `SELECT COALESCE((SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1), 0)::bigint,
			COALESCE((SELECT allocated_units FROM node_allocations WHERE node_id = $1), 0)::bigint`, nodeID).Scan(&earned, &allocated)
		want = money.Units(earned)
		return earned > 0 && allocated == earned, err
	})
	var served, nodeRevenue int64
	if err := pool.QueryRow(ctx, `SELECT count(*), COALESCE(sum(amount_units), 0)::bigint FROM revenue_events WHERE node_id = $1 AND amount_units > 0`,
		nodeID).Scan(&served, &nodeRevenue); err != nil || served != calls || money.Units(nodeRevenue) != revenue {
		t.Fatalf("revenue events naming the node: %d, %d units (%v); want %d, %d", served, nodeRevenue, err, calls, revenue)
	}
	if want != revenue/2 {
		t.Fatalf("node earned %d units of %d revenue, want exactly half", want, revenue)
	}
	e := earnings(auth1)
	if e["total_earned_units"] != want.String() || e["claimable_units"] != want.String() || e["last_claim"] != nil ||
		fmt.Sprint(e["claimable_usdt"]) != strconv.FormatFloat(float64(want)/1e6, 'f', -1, 64) {
		t.Fatalf("earnings %v, want %d units claimable", e, want)
	}
	t.Logf("paid %d calls (%s USDT) at %s; node earned %s USDT, allocated after %v", calls, revenue.Decimal(), paidAt.Format(time.TimeOnly),
		want.Decimal(), time.Since(paidAt).Round(100*time.Millisecond))

	// --- Claims paused → 503; unpaused by the admin.
	if a := e2eDo(t, http.MethodPost, api+"/admin/claims/pause", "", "X-Admin-Token: wrong"); a.status != 401 {
		t.Fatalf("admin with a wrong token: %d", a.status)
	}
	if a := e2eDo(t, http.MethodPost, api+"/admin/claims/pause", `{"reason":"e2e"}`, "X-Admin-Token: "+adminToken); a.status != 200 {
		t.Fatalf("pause: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, claimURL, op1Body, auth1); a.status != 503 || a.code() != "claims_paused" {
		t.Fatalf("claim while paused: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, api+"/admin/claims/unpause", "", "X-Admin-Token: "+adminToken); a.status != 200 {
		t.Fatalf("unpause: %d %s", a.status, a.body)
	}

	// --- Claim S1 and let it expire unclaimed: the funds are claimable
	// again and a new signature S2 covers the same amount.
	type sigOut struct {
		AmountRaw, CumulativeRaw, Signature, Contract, NodeID string
		DeadlineUnix                                          int64
		TypedData                                             map[string]any
	}
	claimSig := func() sigOut {
		a := e2eDo(t, http.MethodPost, claimURL, op1Body, auth1)
		if a.status != 200 {
			t.Fatalf("claim: %d %s", a.status, a.body)
		}
		var out struct {
			Success   bool `json:"success"`
			Signature struct {
				AmountUSDT    json.Number    `json:"amount_usdt"`
				AmountRaw     string         `json:"amount_raw"`
				CumulativeRaw string         `json:"cumulative_raw"`
				Signature     string         `json:"signature"`
				Deadline      string         `json:"deadline"`
				DeadlineUnix  int64          `json:"deadline_unix"`
				Contract      string         `json:"contract"`
				ChainID       uint64         `json:"chain_id"`
				NodeID        string         `json:"node_id"`
				TypedData     map[string]any `json:"typed_data"`
			} `json:"signature"`
		}
		if err := json.Unmarshal(a.body, &out); err != nil || !out.Success {
			t.Fatalf("claim answer %s", a.body)
		}
		s := out.Signature
		if s.AmountRaw != want.String() || s.CumulativeRaw != want.String() || string(s.AmountUSDT) != want.Decimal() ||
			s.ChainID != 137 || s.NodeID != nodeID || !strings.EqualFold(s.Contract, claimsA.Hex()) || s.TypedData["primaryType"] != "Claim" {
			t.Fatalf("claim answer %s", a.body)
		}
		if dl, err := time.Parse(time.RFC3339, s.Deadline); err != nil || dl.Unix() != s.DeadlineUnix {
			t.Fatalf("deadline %q vs %d", s.Deadline, s.DeadlineUnix)
		}
		raw, _ := hexutil.Decode(s.Signature)
		signer, _ := acct("claim-signer")
		if err := claim.Verify(claim.Domain{ChainID: 137, Contract: claimsA}, claim.Claim{NodeID: nodeID, Amount: want, Deadline: s.DeadlineUnix}, raw, signer); err != nil {
			t.Fatal(err)
		}
		return sigOut{s.AmountRaw, s.CumulativeRaw, s.Signature, s.Contract, s.NodeID, s.DeadlineUnix, s.TypedData}
	}
	s1 := claimSig()
	if e := earnings(auth1); e["claimable_units"] != "0" || e["reserved_units"] != want.String() {
		t.Fatalf("earnings with S1 outstanding %v", e)
	}
	if a := e2eDo(t, http.MethodPost, claimURL, op1Body, auth1); a.status != 409 || a.code() != "nothing_claimable" {
		t.Fatalf("second claim while S1 is outstanding: %d %s", a.status, a.body)
	}
	settletest.Eventually(t, 15*time.Second, "S1 expired and its funds claimable again", func() (bool, error) {
		return earnings(auth1)["claimable_units"] == want.String(), nil
	})
	s2 := claimSig()
	if s2.DeadlineUnix <= s1.DeadlineUnix || s2.Signature == s1.Signature {
		t.Fatalf("S2 %+v is not a new signature after S1 %+v", s2, s1)
	}

	// --- The node wallet claims with S2 and receives exactly the amount.
	before := balance(op1)
	sig2, _ := hexutil.Decode(s2.Signature)
	if _, err := send(op1Key, claimsC, cc.PackClaim(sig2, want.Big(), big.NewInt(s2.DeadlineUnix))); err != nil {
		t.Fatalf("claim(): %v", err)
	}
	if got := balance(op1) - before; got != want {
		t.Fatalf("the wallet received %d units, want %d", got, want)
	}
	_, err = send(op1Key, claimsC, cc.PackClaim(sig2, want.Big(), big.NewInt(s2.DeadlineUnix)))
	if dup, ok := revert.As[claimscontract.ClaimsContractAlreadyClaimed](err, cc.UnpackError); !ok {
		t.Fatalf("the same claim again: %v, want AlreadyClaimed", err)
	} else if dup.Claimed.Cmp(want.Big()) != 0 {
		t.Fatalf("AlreadyClaimed %+v", dup)
	}
	sig1, _ := hexutil.Decode(s1.Signature)
	if _, err := send(op1Key, claimsC, cc.PackClaim(sig1, want.Big(), big.NewInt(s1.DeadlineUnix))); err == nil {
		t.Fatal("the expired S1 was accepted")
	}
	if balance(op1)-before != want {
		t.Fatal("a rejected claim paid")
	}

	// The watcher sees the Claimed event: last_claim moves, nothing left.
	settletest.Eventually(t, 15*time.Second, "the claim observed", func() (bool, error) {
		e := earnings(auth1)
		return e["last_claim"] != nil && e["claimed_units"] == want.String(), nil
	})
	e = earnings(auth1)
	if e["claimable_units"] != "0" || e["reserved_units"] != "0" {
		t.Fatalf("earnings after the claim %v", e)
	}
	if _, err := time.Parse(time.RFC3339, e["last_claim"].(string)); err != nil || !strings.HasSuffix(e["last_claim"].(string), "Z") {
		t.Fatalf("last_claim %v", e["last_claim"])
	}
	if a := e2eDo(t, http.MethodPost, claimURL, op1Body, auth1); a.status != 409 {
		t.Fatalf("claim after everything was claimed: %d %s", a.status, a.body)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM claim_signatures WHERE node_id = $1 AND state = 'claimed'`, nodeID); n != 1 {
		t.Fatalf("%d claimed signatures, want 1 (S2): %s %s", n, rows(t, pool, `SELECT id, state, deadline, resolved_at FROM claim_signatures`),
			rows(t, pool, `SELECT block_time, block_number FROM claim_events`))
	}
	settletest.Eventually(t, 10*time.Second, "S1 swept as expired", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM claim_signatures WHERE node_id = $1 AND state = 'expired'`, nodeID) == 1, nil
	})

	// --- Public data and admin.
	eco := e2eDo(t, http.MethodGet, api+"/api/admin/economics?limit=2&events_limit=200", "")
	if eco.status != 200 || !bytes.Contains(eco.body, []byte(nodeID)) || bytes.Contains(eco.body, []byte(keyID)) || bytes.Contains(eco.body, []byte(secret)) {
		t.Fatalf("economics: %d %s", eco.status, eco.body)
	}
	p1 := e2eDo(t, http.MethodGet, api+"/api/admin/economics?events_limit=5", "").obj(t)
	if next, _ := p1["next_events_cursor"].(string); next == "" {
		t.Fatalf("economics without an events cursor: %v", p1)
	} else if a := e2eDo(t, http.MethodGet, api+"/api/admin/economics?events_limit=5&events_cursor="+next, ""); a.status != 200 ||
		len(a.obj(t)["revenue_events"].([]any)) != 5 || mustJSON(a.obj(t)["revenue_events"]) == mustJSON(p1["revenue_events"]) {
		t.Fatalf("economics page 2: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodGet, api+"/api/admin/economics?cursor=@@", ""); a.status != 400 {
		t.Fatalf("economics with a bad cursor: %d", a.status)
	}
	set := e2eDo(t, http.MethodGet, api+"/api/admin/settlement", "")
	if set.status != 200 || !bytes.Contains(set.body, []byte(nodeID)) || bytes.Contains(set.body, []byte(strings.TrimPrefix(treasuryKey, "0x"))) {
		t.Fatalf("settlement: %d %s", set.status, set.body)
	}
	if a := e2eDo(t, http.MethodGet, api+"/admin/epochs?limit=1", "", "X-Admin-Token: "+adminToken); a.status != 200 ||
		len(a.obj(t)["epochs"].([]any)) != 1 || a.obj(t)["next_cursor"] == nil {
		t.Fatalf("admin epochs: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodGet, api+"/admin/epochs", ""); a.status != 401 {
		t.Fatalf("admin epochs without a token: %d", a.status)
	}
	if a := e2eDo(t, http.MethodPost, api+"/admin/settlement/run", "", "X-Admin-Token: "+adminToken); a.status != 200 && a.code() != "not_leader" {
		t.Fatalf("admin settlement run: %d %s", a.status, a.body)
	}
	// An honest node has no evidence and no quarantine; its operator and
	// the admin can read that (answers validated against the document).
	if a := e2eDo(t, http.MethodGet, api+"/api/nodes/"+nodeID+"/evidence", "", auth1); a.status != 200 || len(a.obj(t)["evidence"].([]any)) != 0 {
		t.Fatalf("evidence of an honest node: %d %s", a.status, a.body)
	}
	if q := earnings(auth1)["quarantine"].(map[string]any); q["quarantined"] != false || q["evidence_count"] != 0.0 {
		t.Fatalf("an honest node's quarantine: %v", q)
	}
	if a := e2eDo(t, http.MethodGet, api+"/admin/quarantine", "", "X-Admin-Token: "+adminToken); a.status != 200 || len(a.obj(t)["nodes"].([]any)) != 0 {
		t.Fatalf("admin quarantine: %d %s", a.status, a.body)
	}
	if a := e2eDo(t, http.MethodPost, api+"/admin/nodes/"+nodeID+"/unquarantine", "", "X-Admin-Token: "+adminToken); a.status != 409 ||
		a.code() != "not_quarantined" {
		t.Fatalf("lifting a quarantine that is not there: %d %s", a.status, a.body)
	}
	// The gateway-health sampler measures the upstream path through the
	// gateway's unmetered admin probe: once the node serves chain 137 a
	// sample is ok, and no sample ever saw a 402 (it spends no free tier).
	for deadline := time.Now().Add(15 * time.Second); ; {
		var okSamples, paymentSamples int
		if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE ok), count(*) FILTER (WHERE status = 402) FROM health_samples`).
			Scan(&okSamples, &paymentSamples); err != nil {
			t.Fatal(err)
		}
		if paymentSamples != 0 {
			t.Fatalf("%d health samples got a 402: the sampler spends the free tier", paymentSamples)
		}
		if okSamples > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ok gateway health sample while the node serves chain 137")
		}
		time.Sleep(100 * time.Millisecond) // polling the sampler's table
	}
	st = e2eDo(t, http.MethodGet, api+"/api/status", "")
	sm = st.obj(t)
	if sm["uptime_24h"] == nil || sm["p50_latency_ms_24h"] == nil || sm["current_epoch"].(map[string]any)["state"] != "open" {
		t.Fatalf("status after samples: %s", st.body)
	}

	// --- A lie. The gateway's verifier appends its evidence to the stream
	// (here the test does, with the event's real encoding); settlementd
	// quarantines the node in PostgreSQL and in the registry, the gateway
	// stops routing to it at its next registry refresh, the operator reads
	// why, and the admin's lift brings it back.
	lieEv := &events.NodeMismatch{ID: "e2e-check-1", TimeMs: time.Now().UnixMilli(), ChainID: 137, NodeID: nodeID, RequestID: "e2e-req",
		Method: "eth_getBalance", Params: json.RawMessage(`["0x0000000000000000000000000000000000000001","0x1"]`), Block: 1,
		NodeAnswer: json.RawMessage(`"0x0"`), TrustedAnswer: json.RawMessage(`"0x1"`), TrustedBy: "provider-a"}
	settletest.XAdd(t, rdb, prefix+"events", lieEv, lieEv)
	settletest.Eventually(t, 15*time.Second, "the registry record quarantined", func() (bool, error) {
		v, err := rdb.HGet(ctx, prefix+registry.NodesKey, nodeID).Result()
		return err == nil && strings.Contains(v, `"status":"quarantined"`), err
	})
	notServed := 0
	settletest.Eventually(t, 15*time.Second, "the gateway drops the quarantined node", func() (bool, error) {
		if e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc).header.Get("X-Tollgate-Upstream") == nodeID {
			notServed = 0
		} else {
			notServed++
		}
		return notServed >= 10, nil // ten calls in a row none of which reached the node
	})
	if q := earnings(auth1)["quarantine"].(map[string]any); q["quarantined"] != true || !strings.Contains(q["reason"].(string), "e2e-check-1") {
		t.Fatalf("the operator's view of the quarantine: %v", q)
	}
	if a := e2eDo(t, http.MethodGet, api+"/api/nodes/"+nodeID+"/evidence", "", auth1); a.status != 200 || !bytes.Contains(a.body, []byte(`"e2e-check-1"`)) {
		t.Fatalf("the operator's evidence: %d %s", a.status, a.body)
	}
	if st := e2eDo(t, http.MethodGet, api+"/api/status", "").obj(t); st["nodes_quarantined"] != 1.0 {
		t.Fatalf("status with a quarantined node: %v", st)
	}
	if a := e2eDo(t, http.MethodPost, api+"/admin/nodes/"+nodeID+"/unquarantine", `{"reason":"e2e review","by":"e2e"}`,
		"X-Admin-Token: "+adminToken); a.status != 200 || a.obj(t)["registry_published"] != true {
		t.Fatalf("lift: %d %s", a.status, a.body)
	}
	settletest.Eventually(t, 15*time.Second, "the gateway routes to the node again", func() (bool, error) {
		a := e2eDo(t, http.MethodPost, gw.URL()+"/rpc", rpc)
		return a.status == 200 && a.header.Get("X-Tollgate-Upstream") == nodeID, nil
	})

	t.Logf("end to end in %v: node %s earned %s USDT, claimed on chain; status %s", time.Since(began).Round(100*time.Millisecond), nodeID,
		want.Decimal(), st.body)
	checkAnswersAgainstOpenAPI(t, api)
	_ = redis.Nil
}
