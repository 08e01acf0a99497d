package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// x402Caddyfile: the gateway on the test's Redis prefix with no free tier
// (every anonymous call is a 402 at once), no abuse limits in the way, chain
// 137 served by the dev chain, and x402 paid to @PAYTO@ in TestUSDC on the
// chain-8453 dev chain through settlementd's facilitator at @FACILITATOR@.
const x402Caddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			request_timeout 10s
			upstream_timeout 5s
			probe_interval 100ms
			free_daily_limit 0
			free_subnet_limit 0
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			x402_facilitator_url @FACILITATOR@
			settlementd_url @SETTLEMENTD@
			settlementd_secret {env.TG_GATEWAY_SECRET}
			chain 137 {
				provider dev @POLYGON@
			}
		}
		respond 404
	}
}
`

// x402GatewaySecret is the secret settlementd knows the tests' gateways by.
const x402GatewaySecret = "x402-test-gateway-secret-0123456789abcdef"

// Reasons the gateway gives itself (the x402 ones are shared/x402's).
const (
	reasonInvalidHeader   = "invalid_payment_header"
	reasonAmountMismatch  = "invalid_exact_evm_payload_amount_mismatch"
	reasonBundleExhausted = "bundle_exhausted"
	reasonSIWXNonceUsed   = "siwx_nonce_used"
)

const (
	x402Price      = 100_000 // TestUSDC units per payment (0.1 USDC)
	x402Bundle     = 1000    // calls bought by one payment
	x402NetworkV2  = "eip155:8453"
	x402NetworkV1  = "base"
	x402TokenName  = "USD Coin"
	x402TokenVer   = "2"
	x402RPCRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
)

// x402Env is the whole keyless-payment path on real parts: Redis and
// Postgres, the dev chains (137 upstream, 8453 with TestUSDC), settlementd in
// process with its facilitator and ingest, and our Caddy build.
type x402Env struct {
	t        *testing.T
	ctx      context.Context
	rdb      *redis.Client
	redisURL string // what settlementd and the gateway use
	prefix   string
	pool     *pgxpool.Pool
	net      *devnet.Devnet
	base     *ethclient.Client
	usdc     *testusdc.TestUSDC
	usdcC    *bind.BoundContract
	asset    common.Address
	payTo    common.Address
	// authorizer, when set, is the batch-settlement receiverAuthorizer the gateway offers.
	authorizer common.Address
	api        string // settlementd
	gw         *caddyrun.Server

	mintMu *sync.Mutex // one deployer transaction at a time
}

// at is e reporting to t (a subtest): helpers fail the test they run in.
func (e *x402Env) at(t *testing.T) *x402Env {
	c := *e
	c.t = t
	return &c
}

func startX402Env(t *testing.T) *x402Env { t.Helper(); return startX402EnvWith(t, nil) }

// startX402EnvWith is startX402Env with more settlementd settings; a
// TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY among them also makes the gateway
// offer batch-settlement with that key's address.
func startX402EnvWith(t *testing.T, more map[string]string) *x402Env {
	t.Helper()
	return startX402EnvOn(t, "", more)
}

// startX402EnvOn is startX402EnvWith on the Redis at redisURL, a server of
// the test's own (the prefix is "tollgate:"); "" is the shared test Redis
// (REDIS_URL) with a prefix of the test's.
func startX402EnvOn(t *testing.T, redisURL string, more map[string]string) *x402Env {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the gateway, settlementd and the dev chains")
	}
	e := &x402Env{t: t, mintMu: &sync.Mutex{}}
	if redisURL == "" {
		e.rdb, e.redisURL, e.prefix = testenv.Redis(t), os.Getenv("REDIS_URL"), testenv.KeyPrefix(t)
	} else {
		opts, err := redis.ParseURL(redisURL)
		if err != nil {
			t.Fatal(err)
		}
		e.rdb, e.redisURL, e.prefix = redis.NewClient(opts), redisURL, "tollgate:"
		t.Cleanup(func() { _ = e.rdb.Close() })
	}
	var dsn string
	dsn, e.pool = settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx

	var err error
	if e.net, err = devnet.Start(ctx, devnet.Config{BlockInterval: -1}); err != nil { // mined as transactions arrive
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.net.Close() })
	m := e.net.Manifest
	if e.base, err = ethclient.DialContext(ctx, m.Base.RPCURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.base.Close)
	e.usdc = testusdc.NewTestUSDC()
	e.asset = common.HexToAddress(m.Base.USDC)
	e.usdcC = e.usdc.Instance(e.base, e.asset)
	// payTo: a wallet of its own, so its balance moves only by x402 payments.
	e.payTo = crypto.PubkeyToAddress(testKey("x402 payTo " + t.Name()).PublicKey)

	// settlementd with the facilitator (relayer = the dev relayer, which holds
	// ETH on 8453 for gas) and the stream ingest.
	relayer, err := m.Account("relayer")
	if err != nil {
		t.Fatal(err)
	}
	e.api = fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": e.redisURL, "TOLLGATE_PREFIX": e.prefix,
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(e.api, "http://"), "TOLLGATE_INGEST_BLOCK": "100ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_X402_RPC_URL": m.Base.RPCURL, "TOLLGATE_X402_RELAYER_KEY": relayer.PrivateKey,
		// The operator's offer, as the gateway's Caddyfile states it, and
		// the secret the gateway is known by.
		"TOLLGATE_X402_ASSET": m.Base.USDC, "TOLLGATE_X402_PAY_TO": e.payTo.Hex(),
		"TOLLGATE_GATEWAY_SECRET": x402GatewaySecret,
		// The dev chain's USDC and accounts are money addresses here.
		"TOLLGATE_DEV": "1",
		// The tests drive many payments through proxies that do not carry
		// the secret; the direct callers' limit has a test of its own.
		"TOLLGATE_X402_RATE_LIMIT": "10000",
	}
	for k, v := range more {
		env[k] = v
	}
	if k := more["TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY"]; k != "" {
		key, err := crypto.HexToECDSA(strings.TrimPrefix(k, "0x"))
		if err != nil {
			t.Fatal(err)
		}
		e.authorizer = crypto.PubkeyToAddress(key.PublicKey)
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logBuf syncBuf
	log, err := newLogger(cfg, &logBuf)
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDaemon(dctx, cfg, log) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("settlementd: %v", err)
		}
		if t.Failed() {
			t.Logf("settlementd log:\n%s", logBuf.String())
		}
	})
	settletest.Eventually(t, 20*time.Second, "settlementd healthy", func() (bool, error) {
		resp, err := http.Get(e.api + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	// The leader's Redis watcher writes the generation marker (after a
	// no-op rebuild of this empty deployment); until then the gateway would
	// hold x402 payments back as "recovering".
	settletest.Eventually(t, 20*time.Second, "settlementd marked Redis rebuilt", func() (bool, error) {
		return reconcile.MarkerPresent(ctx, e.rdb, e.prefix)
	})
	e.gw = e.startGateway(e.api + "/x402")
	return e
}

// startGateway runs our Caddy with facilitatorURL and waits until chain 137
// has a healthy upstream (the probe runs every 100 ms).
func (e *x402Env) startGateway(facilitatorURL string) *caddyrun.Server {
	e.t.Helper()
	m := e.net.Manifest
	payTo := e.payTo.Hex()
	if e.authorizer != (common.Address{}) {
		payTo += "\n\t\t\tx402_receiver_authorizer " + e.authorizer.Hex()
	}
	cf := strings.NewReplacer("@PREFIX@", e.prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT,
		"@USDC@", m.Base.USDC, "@PAYTO@", payTo, "@FACILITATOR@", facilitatorURL, "@SETTLEMENTD@", e.api, "@POLYGON@", m.Polygon.RPCURL).Replace(x402Caddyfile)
	gw := caddyrun.Start(e.t, cf, "TG_REDIS_URL="+e.redisURL, "TG_GATEWAY_SECRET="+x402GatewaySecret) // prints its output when the test fails
	settletest.Eventually(e.t, 15*time.Second, "chain 137 healthy on the gateway", func() (bool, error) { return gw.ChainHealthy(137) })
	return gw
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testKey derives a throwaway key from a label.
func testKey(label string) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("tollgate x402 test " + label)))
	if err != nil {
		panic(err)
	}
	return k
}

// wallet returns a fresh payer holding units TestUSDC (minted by the
// deployer; 0 mints nothing).
func (e *x402Env) wallet(label string, units int64) *ecdsa.PrivateKey {
	e.t.Helper()
	key := testKey(e.t.Name() + "/" + label)
	if units > 0 {
		e.send(devnet.DevKey("deployer"), e.usdc.PackMint(crypto.PubkeyToAddress(key.PublicKey), big.NewInt(units)))
	}
	return key
}

// send transacts data to TestUSDC from key on 8453 and waits for success.
func (e *x402Env) send(key *ecdsa.PrivateKey, data []byte) {
	e.t.Helper()
	e.mintMu.Lock()
	defer e.mintMu.Unlock()
	opts := bind.NewKeyedTransactor(key, big.NewInt(8453))
	opts.Context = e.ctx
	tx, err := bind.Transact(e.usdcC, opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := deploy.WaitReceipt(e.ctx, e.base, tx.Hash(), 20*time.Millisecond)
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("transaction %s reverted", tx.Hash().Hex())
	}
}

// balance is a's TestUSDC balance on 8453, read on chain.
func (e *x402Env) balance(a common.Address) int64 {
	e.t.Helper()
	b, err := bind.Call(e.usdcC, &bind.CallOpts{Context: e.ctx}, e.usdc.PackBalanceOf(a), e.usdc.UnpackBalanceOf)
	if err != nil {
		e.t.Fatal(err)
	}
	return b.Int64()
}

// authUsed is TestUSDC's authorizationState(from, nonce): true once settled.
func (e *x402Env) authUsed(from common.Address, nonce [32]byte) bool {
	e.t.Helper()
	used, err := bind.Call(e.usdcC, &bind.CallOpts{Context: e.ctx}, e.usdc.PackAuthorizationState(from, nonce), e.usdc.UnpackAuthorizationState)
	if err != nil {
		e.t.Fatal(err)
	}
	return used
}

// bundle is the wallet's bundle hash in Redis (empty when none).
func (e *x402Env) bundle(wallet common.Address) map[string]string {
	e.t.Helper()
	l := balances.Layout{Prefix: e.prefix}
	m, err := e.rdb.HGetAll(e.ctx, l.Bundle(strings.ToLower(wallet.Hex()))).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// --- HTTP.

type x402Answer struct {
	status int
	header http.Header
	body   []byte
}

func (a x402Answer) String() string {
	return fmt.Sprintf("HTTP %d %v %s", a.status, a.header, a.body)
}

// rpc POSTs x402RPCRequest to the gateway's /rpc with the given headers.
func (e *x402Env) rpc(gw *caddyrun.Server, headers ...string) x402Answer {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, gw.URL()+"/rpc", strings.NewReader(x402RPCRequest))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return x402Answer{resp.StatusCode, resp.Header, b}
}

// v1Required is the 402 body (x402 v1 PaymentRequired plus onboarding).
type v1Required struct {
	X402Version int    `json:"x402Version"`
	Error       string `json:"error"`
	Accepts     []struct {
		Scheme            string            `json:"scheme"`
		Network           string            `json:"network"`
		MaxAmountRequired string            `json:"maxAmountRequired"`
		Resource          string            `json:"resource"`
		Description       string            `json:"description"`
		MimeType          string            `json:"mimeType"`
		PayTo             string            `json:"payTo"`
		MaxTimeoutSeconds int               `json:"maxTimeoutSeconds"`
		Asset             string            `json:"asset"`
		Extra             map[string]string `json:"extra"`
	} `json:"accepts"`
	Onboarding map[string]any `json:"onboarding"`
}

// v2Required is the PAYMENT-REQUIRED header's object.
type v2Required struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error"`
	Resource    map[string]any             `json:"resource"`
	Accepts     []map[string]any           `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions"`
}

// paymentRequired checks a is a well-formed 402 (v1 body, v2 header) and
// returns both objects.
func paymentRequired(t *testing.T, a x402Answer) (*v1Required, *v2Required) {
	t.Helper()
	if a.status != http.StatusPaymentRequired {
		t.Fatalf("want 402, got %s", a)
	}
	var v1 v1Required
	if err := json.Unmarshal(a.body, &v1); err != nil || v1.X402Version != 1 || len(v1.Accepts) != 1 {
		t.Fatalf("402 body is not an x402 v1 PaymentRequired (%v): %s", err, a.body)
	}
	h := a.header.Get("PAYMENT-REQUIRED")
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("PAYMENT-REQUIRED %q is not standard base64: %v", h, err)
	}
	var v2 v2Required
	if err := json.Unmarshal(raw, &v2); err != nil || v2.X402Version != 2 || len(v2.Accepts) != 1 {
		t.Fatalf("PAYMENT-REQUIRED is not an x402 v2 PaymentRequired (%v): %s", err, raw)
	}
	return &v1, &v2
}

// --- Payloads signed here, to the x402 spec.

type x402Auth struct {
	key                            *ecdsa.PrivateKey
	from, to                       common.Address
	value, validAfter, validBefore *big.Int
	nonce                          [32]byte
}

// auth is an authorization of the price to payTo, valid from 0 to now+300 s
// (as @x402/evm 2.27 builds it), with a random nonce.
func (e *x402Env) auth(key *ecdsa.PrivateKey) *x402Auth {
	a := &x402Auth{key: key, from: crypto.PubkeyToAddress(key.PublicKey), to: e.payTo, value: big.NewInt(x402Price),
		validAfter: big.NewInt(0), validBefore: big.NewInt(time.Now().Unix() + 300)}
	if _, err := rand.Read(a.nonce[:]); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// sign is the EIP-712 TransferWithAuthorization signature (r‖s‖v, v 27/28)
// for the token at asset on chainID, domain "USD Coin" / "2".
func (a *x402Auth) sign(chainID uint64, asset common.Address) []byte {
	d := x402.Digest(x402TokenName, x402TokenVer, chainID, asset, a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce)
	sig, err := crypto.Sign(d, a.key)
	if err != nil { // only for a digest that is not 32 bytes
		panic(err)
	}
	sig[64] += 27
	return sig
}

func (a *x402Auth) json() map[string]any {
	return map[string]any{"from": a.from.Hex(), "to": a.to.Hex(), "value": a.value.String(),
		"validAfter": a.validAfter.String(), "validBefore": a.validBefore.String(), "nonce": hexutil.Encode(a.nonce[:])}
}

func b64JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// v1Header is an X-PAYMENT value as the x402 v1 transport spec defines it.
func v1Header(a *x402Auth, sig []byte, scheme, network string) string {
	return b64JSON(map[string]any{"x402Version": 1, "scheme": scheme, "network": network,
		"payload": map[string]any{"signature": hexutil.Encode(sig), "authorization": a.json()}})
}

// v2Header is a PAYMENT-SIGNATURE value: accepted echoes the requirement
// the client chose (edited by the caller for the negative cases).
func v2Header(a *x402Auth, sig []byte, resource map[string]any, accepted map[string]any) string {
	return b64JSON(map[string]any{"x402Version": 2, "resource": resource, "accepted": accepted,
		"payload": map[string]any{"signature": hexutil.Encode(sig), "authorization": a.json()}})
}

// issued fetches a fresh 402 and returns its v2 resource and accepts[0]
// (a copy the caller may edit), as a client would echo them.
func (e *x402Env) issued(gw *caddyrun.Server) (map[string]any, map[string]any) {
	e.t.Helper()
	_, v2 := paymentRequired(e.t, e.rpc(gw))
	acc := map[string]any{}
	for k, v := range v2.Accepts[0] {
		acc[k] = v
	}
	return v2.Resource, acc
}

func decodeSettlement(t *testing.T, h string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("settlement header %q is not base64: %v", h, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("settlement header is not JSON: %s", raw)
	}
	return m
}

// expectPaid checks a successful paid call: 200 with the JSON-RPC result, the
// settlement header of the request's version, the bundle headers.
func (e *x402Env) expectPaid(a x402Answer, v1 bool, payer common.Address) (tx common.Hash, bundleKey string) {
	e.t.Helper()
	var rpc struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  string          `json:"result"`
		Error   any             `json:"error"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &rpc) != nil || rpc.JSONRPC != "2.0" || string(rpc.ID) != "1" ||
		rpc.Error != nil || !strings.HasPrefix(rpc.Result, "0x") {
		e.t.Fatalf("paid call: want 200 with a JSON-RPC result, got %s", a)
	}
	name, other, network := "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", x402NetworkV2
	if v1 {
		name, other, network = other, name, x402NetworkV1
	}
	if a.header.Get(other) != "" {
		e.t.Fatalf("a v%d payment answered with %s too: %v", map[bool]int{true: 1, false: 2}[v1], other, a.header)
	}
	s := decodeSettlement(e.t, a.header.Get(name))
	txs, _ := s["transaction"].(string)
	if s["success"] != true || s["network"] != network || !strings.EqualFold(fmt.Sprint(s["payer"]), payer.Hex()) ||
		len(txs) != 66 || !strings.HasPrefix(txs, "0x") {
		e.t.Fatalf("%s = %v, want success, network %s, payer %s, a tx hash", name, s, network, payer.Hex())
	}
	tx = common.HexToHash(txs)
	bundleKey = a.header.Get("X-Tollgate-Bundle-Key")
	if !strings.HasPrefix(bundleKey, "tg_") || len(bundleKey) != 46 {
		e.t.Fatalf("X-Tollgate-Bundle-Key %q, want tg_ + 43 base62 chars", bundleKey)
	}
	if got := a.header.Get("X-Tollgate-Payer"); got != "bundle" {
		e.t.Fatalf("X-Tollgate-Payer %q, want bundle", got)
	}
	if got := a.header.Get("X-Tollgate-Bundle-Remaining"); got != fmt.Sprint(x402Bundle-1) {
		e.t.Fatalf("X-Tollgate-Bundle-Remaining %q, want %d", got, x402Bundle-1)
	}
	// The settlement is a real transfer on chain: payer → payTo, the price.
	r, err := e.base.TransactionReceipt(e.ctx, tx)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("settlement tx %s: receipt %v, %v", tx.Hex(), r, err)
	}
	var moved bool
	for _, l := range r.Logs {
		if ev, err := e.usdc.UnpackTransferEvent(l); err == nil && l.Address == e.asset {
			moved = ev.From == payer && ev.To == e.payTo && ev.Value.Int64() == x402Price
		}
	}
	if !moved {
		e.t.Fatalf("settlement tx %s has no TestUSDC Transfer %s → %s of %d", tx.Hex(), payer.Hex(), e.payTo.Hex(), x402Price)
	}
	return tx, bundleKey
}

// expectRefused checks a payment (or SIWX proof) refused with reason: 402,
// both the v1 body's error and the v2 header's error are "<reason>: <why>",
// no bundle key, no settlement header claiming success.
func (e *x402Env) expectRefused(a x402Answer, reason string) string {
	e.t.Helper()
	v1, v2 := paymentRequired(e.t, a)
	for _, got := range []string{v1.Error, v2.Error} {
		if !strings.HasPrefix(got, reason+": ") || len(got) <= len(reason)+2 {
			e.t.Fatalf("402 reason: body error %q, header error %q; want %q and why in both", v1.Error, v2.Error, reason)
		}
	}
	if k := a.header.Get("X-Tollgate-Bundle-Key"); k != "" {
		e.t.Fatalf("a refused payment returned a bundle key %q", k)
	}
	for _, h := range []string{"PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"} {
		if v := a.header.Get(h); v != "" && decodeSettlement(e.t, v)["success"] != false {
			e.t.Fatalf("a refused payment answered %s = %s", h, v)
		}
	}
	return v1.Error
}

// TestX402Gateway drives the gateway's x402 path with payloads signed here:
// the 402 it issues, a v1 X-PAYMENT built to the v1 spec, a replayed
// authorization, and every kind of bad payment (tampered or foreign-chain
// signature, wrong network, scheme, asset, amount, payee, time window,
// garbage) answered 402 with its reason and nothing charged; then a
// facilitator that is down (503, no bundle, nothing moved, the same
// authorization still good afterwards).
func TestX402Gateway(t *testing.T) {
	e := startX402Env(t)
	gw := e.gw

	t.Run("payment required", func(t *testing.T) {
		e := e.at(t)
		a := e.rpc(gw)
		v1, v2 := paymentRequired(t, a)
		if cc := a.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("402 Cache-Control %q, want no-store", cc)
		}
		acc := v1.Accepts[0]
		resource := gw.URL() + "/rpc"
		if acc.Scheme != "exact" || acc.Network != x402NetworkV1 || acc.MaxAmountRequired != fmt.Sprint(x402Price) ||
			!strings.EqualFold(acc.Asset, e.asset.Hex()) || !strings.EqualFold(acc.PayTo, e.payTo.Hex()) || acc.Resource != resource ||
			acc.MimeType == "" || acc.Description == "" || acc.MaxTimeoutSeconds < 60 ||
			acc.Extra["name"] != x402TokenName || acc.Extra["version"] != x402TokenVer || v1.Onboarding == nil || v1.Error == "" {
			t.Errorf("v1 402 body %s", a.body)
		}
		r := v2.Accepts[0]
		if r["scheme"] != "exact" || r["network"] != x402NetworkV2 || r["amount"] != fmt.Sprint(x402Price) ||
			!strings.EqualFold(fmt.Sprint(r["asset"]), e.asset.Hex()) || !strings.EqualFold(fmt.Sprint(r["payTo"]), e.payTo.Hex()) ||
			fmt.Sprint(r["extra"]) != fmt.Sprint(map[string]any{"name": x402TokenName, "version": x402TokenVer}) || v2.Resource["url"] != resource {
			t.Errorf("v2 PAYMENT-REQUIRED %+v", v2)
		}
		type siwx struct {
			Info struct {
				Domain, URI, Version, Nonce, IssuedAt, ExpirationTime, Statement string
				Resources                                                        []string
			}
			SupportedChains []struct{ ChainID, Type string }
			Schema          map[string]any
		}
		ext := func(v *v2Required) siwx {
			var s siwx
			if err := json.Unmarshal(v.Extensions["sign-in-with-x"], &s); err != nil {
				t.Fatalf("extensions[sign-in-with-x] %s: %v", v.Extensions["sign-in-with-x"], err)
			}
			return s
		}
		s := ext(v2)
		issued, err1 := time.Parse(time.RFC3339, s.Info.IssuedAt)
		expires, err2 := time.Parse(time.RFC3339, s.Info.ExpirationTime)
		if s.Info.Domain != strings.TrimPrefix(gw.URL(), "http://") || s.Info.URI != resource || s.Info.Version != "1" ||
			len(s.Info.Nonce) < 8 || err1 != nil || err2 != nil || !expires.After(issued) || time.Since(issued).Abs() > time.Minute ||
			s.Info.Statement == "" || len(s.Info.Resources) != 1 || s.Info.Resources[0] != resource ||
			len(s.SupportedChains) != 1 || s.SupportedChains[0].ChainID != x402NetworkV2 || s.SupportedChains[0].Type != "eip191" || s.Schema == nil {
			t.Errorf("sign-in-with-x extension %s", v2.Extensions["sign-in-with-x"])
		}
		if _, again := paymentRequired(t, e.rpc(gw)); ext(again).Info.Nonce == s.Info.Nonce {
			t.Errorf("two 402s carry the same SIWX nonce %q", s.Info.Nonce)
		}
	})

	// Browser clients: the preflight admits the x402 request headers (and
	// Access-Control-Expose-Headers, which the x402 fetch wrappers send), and
	// answers expose the payment headers.
	t.Run("CORS", func(t *testing.T) {
		e := e.at(t)
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodOptions, gw.URL()+"/rpc", nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,payment-signature,x-payment,sign-in-with-x,access-control-expose-headers")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		list := func(h string) map[string]bool {
			m := map[string]bool{}
			for _, f := range strings.Split(h, ",") {
				m[strings.ToLower(strings.TrimSpace(f))] = true
			}
			return m
		}
		allowed := list(resp.Header.Get("Access-Control-Allow-Headers"))
		if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") == "" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
		}
		for _, h := range []string{"content-type", "payment-signature", "x-payment", "sign-in-with-x", "access-control-expose-headers"} {
			if !allowed[h] {
				t.Errorf("preflight does not allow %s: %q", h, resp.Header.Get("Access-Control-Allow-Headers"))
			}
		}
		a := e.rpc(gw, "Origin", "https://app.example")
		exposed := list(a.header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"payment-required", "payment-response", "x-payment-response", "x-tollgate-bundle-key", "x-tollgate-bundle-remaining"} {
			if !exposed[h] {
				t.Errorf("the 402 does not expose %s: %q", h, a.header.Get("Access-Control-Expose-Headers"))
			}
		}
	})

	// The control of every refusal below: the payloads this test signs, v1
	// and v2, against the requirements the gateway issues, are valid for
	// the facilitator (so a refused variant is refused for its one change).
	t.Run("control: our payloads verify at the facilitator", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("control", 1_000_000)
		v1, v2 := paymentRequired(t, e.rpc(gw))
		for _, c := range []struct {
			version int
			hdr     func(a *x402Auth, sig []byte) string
			req     any
		}{
			{1, func(a *x402Auth, sig []byte) string { return v1Header(a, sig, "exact", x402NetworkV1) }, v1.Accepts[0]},
			{2, func(a *x402Auth, sig []byte) string { return v2Header(a, sig, v2.Resource, v2.Accepts[0]) }, v2.Accepts[0]},
		} {
			a := e.auth(key)
			raw, _ := base64.StdEncoding.DecodeString(c.hdr(a, a.sign(8453, e.asset)))
			body, _ := json.Marshal(map[string]any{"x402Version": c.version, "paymentPayload": json.RawMessage(raw), "paymentRequirements": c.req})
			resp, err := http.Post(e.api+"/x402/verify", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var vr struct {
				IsValid bool   `json:"isValid"`
				Payer   string `json:"payer"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(b, &vr) != nil || !vr.IsValid || vr.Payer != a.from.Hex() {
				t.Fatalf("v%d payload at /x402/verify: %d %s", c.version, resp.StatusCode, b)
			}
		}
	})

	t.Run("v1 X-PAYMENT, replay, bundle key", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("v1", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		a := e.auth(key)
		hdr := v1Header(a, a.sign(8453, e.asset), "exact", x402NetworkV1)
		tx, bundleKey := e.expectPaid(e.rpc(gw, "X-PAYMENT", hdr), true, payer)
		if got := e.balance(payer); got != before-x402Price {
			t.Fatalf("payer balance %d → %d, want −%d", before, got, x402Price)
		}
		if got := e.balance(e.payTo); got != payToBefore+x402Price {
			t.Fatalf("payTo balance %d → %d, want +%d", payToBefore, got, x402Price)
		}
		want := map[string]string{balances.BundleCalls: "999", balances.BundleGranted: "1000", balances.BundleUsed: "1"}
		if b := e.bundle(payer); fmt.Sprint(b) != fmt.Sprint(want) {
			t.Fatalf("bundle in Redis %v, want %v", b, want)
		}

		// The same header again: the nonce is spent.
		t.Logf("replay → 402 %q", e.expectRefused(e.rpc(gw, "X-PAYMENT", hdr), x402.ReasonNonceUsed))
		if got := e.balance(payer); got != before-x402Price {
			t.Fatalf("a replay moved funds: payer balance %d, want %d", got, before-x402Price)
		}
		if b := e.bundle(payer); b[balances.BundleCalls] != "999" || b[balances.BundleGranted] != "1000" {
			t.Fatalf("a replay changed the bundle: %v", b)
		}

		// The bundle key draws on the same bundle.
		k := e.rpc(gw, "X-API-Key", bundleKey)
		if k.status != 200 || k.header.Get("X-Tollgate-Payer") != "bundle" || k.header.Get("X-Tollgate-Bundle-Remaining") != "998" ||
			!bytes.Contains(k.body, []byte(`"result":"0x`)) {
			t.Fatalf("call with the bundle key: %s", k)
		}
		if b := e.bundle(payer); b[balances.BundleCalls] != "998" || b[balances.BundleUsed] != "2" {
			t.Fatalf("bundle after a bundle-key call %v", b)
		}

		// Accounting: the grant reaches Postgres through the stream ingest.
		settletest.Eventually(t, 15*time.Second, "bundle_grants row of the v1 payment", func() (bool, error) {
			return settletest.Count(t, e.pool, `SELECT count(*) FROM bundle_grants WHERE id = $1`, strings.ToLower(tx.Hex())) == 1, nil
		})
		var wallet, network string
		var calls, amount int64
		if err := e.pool.QueryRow(e.ctx, `SELECT wallet, calls, amount_units, network FROM bundle_grants WHERE id = $1`,
			strings.ToLower(tx.Hex())).Scan(&wallet, &calls, &amount, &network); err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(wallet, payer.Hex()) || calls != x402Bundle || amount != x402Price || network != x402NetworkV2 {
			t.Fatalf("bundle_grants row: wallet %s calls %d amount %d network %s", wallet, calls, amount, network)
		}
	})

	t.Run("v2 PAYMENT-SIGNATURE", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("v2", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before := e.balance(payer)
		resource, acc := e.issued(gw)
		a := e.auth(key)
		// Checksummed and lower-case addresses are the same requirement.
		acc["payTo"] = strings.ToLower(fmt.Sprint(acc["payTo"]))
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		e.expectPaid(e.rpc(gw, "PAYMENT-SIGNATURE", hdr), false, payer)
		if got := e.balance(payer); got != before-x402Price {
			t.Fatalf("payer balance %d → %d, want −%d", before, got, x402Price)
		}
		t.Logf("replay → 402 %q", e.expectRefused(e.rpc(gw, "PAYMENT-SIGNATURE", hdr), x402.ReasonNonceUsed))
		if got := e.balance(payer); got != before-x402Price {
			t.Fatalf("a replay moved funds: %d", got)
		}
	})

	// One authorization sent many times at once buys one bundle: exactly one
	// request is served and settled, the others are refused, the funds move
	// once.
	t.Run("concurrent replays", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("concurrent", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		resource, acc := e.issued(gw)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		const n = 6
		answers := make([]x402Answer, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, gw.URL()+"/rpc", strings.NewReader(x402RPCRequest))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("PAYMENT-SIGNATURE", hdr)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					answers[i] = x402Answer{status: -1, body: []byte(err.Error())}
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				answers[i] = x402Answer{resp.StatusCode, resp.Header, b}
			}()
		}
		close(start)
		wg.Wait()
		served := 0
		for _, ans := range answers {
			if ans.status == http.StatusOK {
				served++
				e.expectPaid(ans, false, payer)
				continue
			}
			t.Logf("concurrent replay → 402 %q", e.expectRefused(ans, x402.ReasonNonceUsed))
		}
		if served != 1 {
			t.Fatalf("%d of %d concurrent copies of one authorization were served, want 1", served, n)
		}
		if e.balance(payer) != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price {
			t.Fatalf("funds moved %d / %d, want −%d / +%d", e.balance(payer)-before, e.balance(e.payTo)-payToBefore, x402Price, x402Price)
		}
		want := map[string]string{balances.BundleCalls: "999", balances.BundleGranted: "1000", balances.BundleUsed: "1"}
		if b := e.bundle(payer); fmt.Sprint(b) != fmt.Sprint(want) {
			t.Fatalf("bundle %v, want %v", b, want)
		}
	})

	t.Run("SIWX", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("siwx", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		// Without a bundle a valid proof is refused, and nothing is drawn.
		if a := e.rpc(gw, "SIGN-IN-WITH-X", e.siwx(t, gw, key, nil)); a.status != 402 || len(e.bundle(payer)) != 0 {
			t.Fatalf("SIWX without a bundle: %s", a)
		} else {
			e.expectRefused(a, reasonBundleExhausted)
		}
		resource, acc := e.issued(gw)
		a := e.auth(key)
		e.expectPaid(e.rpc(gw, "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc)), false, payer)
		before := e.balance(payer)

		hdr := e.siwx(t, gw, key, nil)
		ok := e.rpc(gw, "SIGN-IN-WITH-X", hdr)
		if ok.status != 200 || ok.header.Get("X-Tollgate-Payer") != "bundle" || ok.header.Get("X-Tollgate-Bundle-Remaining") != "998" ||
			!bytes.Contains(ok.body, []byte(`"result":"0x`)) || ok.header.Get("PAYMENT-RESPONSE") != "" {
			t.Fatalf("SIWX with bundle calls left: %s", ok)
		}
		// Single use: the same signed message again is refused, nothing drawn.
		e.expectRefused(e.rpc(gw, "SIGN-IN-WITH-X", hdr), reasonSIWXNonceUsed)
		for name, c := range map[string]struct {
			edit   func(p map[string]any)
			reason string
		}{
			"another domain":     {func(p map[string]any) { p["domain"] = "evil.example" }, "invalid_siwx_domain_mismatch"},
			"another origin":     {func(p map[string]any) { p["uri"] = "http://evil.example/rpc" }, "invalid_siwx_uri_mismatch"},
			"another chain":      {func(p map[string]any) { p["chainId"] = "eip155:1" }, "invalid_siwx_chain_id"},
			"expired":            {func(p map[string]any) { p["expirationTime"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339) }, "invalid_siwx_expired"},
			"issued long ago":    {func(p map[string]any) { p["issuedAt"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) }, "invalid_siwx_issued_at_too_old"},
			"signed by intruder": {func(p map[string]any) { p["signer"] = testKey("intruder") }, "invalid_siwx_signature"},
		} {
			t.Run(name, func(t *testing.T) {
				e := e.at(t)
				reason := e.expectRefused(e.rpc(gw, "SIGN-IN-WITH-X", e.siwx(t, gw, key, c.edit)), c.reason)
				t.Logf("%s → 402 %q", name, reason)
			})
		}
		if b := e.bundle(payer); b[balances.BundleCalls] != "998" || b[balances.BundleUsed] != "2" || e.balance(payer) != before {
			t.Fatalf("after refused SIWX proofs: bundle %v, balance %d (want 998 calls left, %d)", b, e.balance(payer), before)
		}
	})

	// Every bad payment: 402 with the reason, nothing charged, no bundle.
	key := e.wallet("refused", 1_000_000)
	payer := crypto.PubkeyToAddress(key.PublicKey)
	broke := e.wallet("broke", 0)
	other := common.HexToAddress("0x00000000000000000000000000000000000b0b01")
	type bad struct {
		name   string
		header func(t *testing.T) (string, string) // header name, value
		reason string
	}
	v2With := func(edit func(a *x402Auth, acc map[string]any) []byte) func(t *testing.T) (string, string) {
		return func(t *testing.T) (string, string) {
			e := e.at(t)
			resource, acc := e.issued(gw)
			a := e.auth(key)
			sig := edit(a, acc)
			return "PAYMENT-SIGNATURE", v2Header(a, sig, resource, acc)
		}
	}
	v1With := func(scheme, network string, edit func(a *x402Auth) []byte) func(t *testing.T) (string, string) {
		return func(t *testing.T) (string, string) {
			e := e.at(t)
			a := e.auth(key)
			return "X-PAYMENT", v1Header(a, edit(a), scheme, network)
		}
	}
	good := func(a *x402Auth) []byte { return a.sign(8453, e.asset) }
	cases := []bad{
		{"tampered signature", v2With(func(a *x402Auth, _ map[string]any) []byte {
			sig := a.sign(8453, e.asset)
			sig[10] ^= 0x01
			return sig
		}), x402.ReasonSignature},
		{"tampered authorization (validBefore changed after signing)", v1With("exact", x402NetworkV1, func(a *x402Auth) []byte {
			sig := good(a)
			a.validBefore = new(big.Int).Add(a.validBefore, big.NewInt(1))
			return sig
		}), x402.ReasonSignature},
		{"signed by another wallet", v2With(func(a *x402Auth, _ map[string]any) []byte {
			a.key = testKey("intruder")
			return a.sign(8453, e.asset)
		}), x402.ReasonSignature},
		{"wrong chain: v2 network eip155:1", v2With(func(a *x402Auth, acc map[string]any) []byte {
			acc["network"] = "eip155:1"
			return a.sign(1, e.asset)
		}), x402.ReasonNetwork},
		{"wrong chain: v1 network ethereum", v1With("exact", "ethereum", func(a *x402Auth) []byte { return a.sign(1, e.asset) }), x402.ReasonNetwork},
		{"wrong chain: signed over chainId 1", v2With(func(a *x402Auth, _ map[string]any) []byte {
			return a.sign(1, e.asset)
		}), x402.ReasonSignature},
		{"expired window", v2With(func(a *x402Auth, _ map[string]any) []byte {
			a.validAfter, a.validBefore = big.NewInt(time.Now().Unix()-600), big.NewInt(time.Now().Unix()-5)
			return a.sign(8453, e.asset)
		}), x402.ReasonValidBefore},
		{"expired window (v1)", v1With("exact", x402NetworkV1, func(a *x402Auth) []byte {
			a.validBefore = big.NewInt(time.Now().Unix() - 1)
			return good(a)
		}), x402.ReasonValidBefore},
		{"not yet valid", v2With(func(a *x402Auth, _ map[string]any) []byte {
			a.validAfter = big.NewInt(time.Now().Unix() + 3600)
			return a.sign(8453, e.asset)
		}), x402.ReasonValidAfter},
		{"wrong amount: authorization value", v2With(func(a *x402Auth, _ map[string]any) []byte {
			a.value = big.NewInt(x402Price - 1)
			return a.sign(8453, e.asset)
		}), x402.ReasonValueV2},
		{"wrong amount: accepted amount and value", v2With(func(a *x402Auth, acc map[string]any) []byte {
			acc["amount"], a.value = "1", big.NewInt(1)
			return a.sign(8453, e.asset)
		}), reasonAmountMismatch},
		{"wrong amount (v1)", v1With("exact", x402NetworkV1, func(a *x402Auth) []byte {
			a.value = big.NewInt(x402Price * 10)
			return good(a)
		}), x402.ReasonValueV1},
		{"wrong payTo: authorization to", v2With(func(a *x402Auth, _ map[string]any) []byte {
			a.to = other
			return a.sign(8453, e.asset)
		}), x402.ReasonRecipient},
		{"wrong payTo: accepted and authorization", v2With(func(a *x402Auth, acc map[string]any) []byte {
			acc["payTo"], a.to = other.Hex(), other
			return a.sign(8453, e.asset)
		}), x402.ReasonRecipient},
		{"wrong payTo (v1)", v1With("exact", x402NetworkV1, func(a *x402Auth) []byte {
			a.to = other
			return good(a)
		}), x402.ReasonRecipient},
		{"wrong asset", v2With(func(a *x402Auth, acc map[string]any) []byte {
			acc["asset"] = other.Hex()
			return a.sign(8453, other)
		}), x402.ReasonAsset},
		{"wrong scheme", v2With(func(a *x402Auth, acc map[string]any) []byte {
			acc["scheme"] = "upto"
			return a.sign(8453, e.asset)
		}), x402.ReasonScheme},
		{"wrong scheme (v1)", v1With("upto", x402NetworkV1, good), x402.ReasonScheme},
		{"insufficient funds", func(t *testing.T) (string, string) {
			e := e.at(t)
			resource, acc := e.issued(gw)
			a := e.auth(broke)
			return "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc)
		}, x402.ReasonFunds},
		{"garbage base64", func(*testing.T) (string, string) { return "PAYMENT-SIGNATURE", "%%% not base64 %%%" },
			reasonInvalidHeader},
		{"base64 of non-JSON", func(*testing.T) (string, string) {
			return "X-PAYMENT", base64.StdEncoding.EncodeToString([]byte("hello, world"))
		}, reasonInvalidHeader},
		{"unknown x402Version", func(t *testing.T) (string, string) {
			e := e.at(t)
			a := e.auth(key)
			return "X-PAYMENT", b64JSON(map[string]any{"x402Version": 7, "scheme": "exact", "network": x402NetworkV1,
				"payload": map[string]any{"signature": hexutil.Encode(good(a)), "authorization": a.json()}})
		}, x402.ReasonVersion},
		{"v2 payload without accepted", func(t *testing.T) (string, string) {
			e := e.at(t)
			a := e.auth(key)
			return "PAYMENT-SIGNATURE", b64JSON(map[string]any{"x402Version": 2,
				"payload": map[string]any{"signature": hexutil.Encode(good(a)), "authorization": a.json()}})
		}, x402.ReasonPayload},
	}
	for _, c := range cases {
		t.Run("refused/"+c.name, func(t *testing.T) {
			e := e.at(t)
			before, payToBefore := e.balance(payer), e.balance(e.payTo)
			name, value := c.header(t)
			a := e.rpc(gw, name, value)
			reason := e.expectRefused(a, c.reason)
			t.Logf("%s → 402 %q", c.name, reason)
			if e.balance(payer) != before || e.balance(e.payTo) != payToBefore {
				t.Fatalf("a refused payment moved funds")
			}
			for _, w := range []common.Address{payer, crypto.PubkeyToAddress(broke.PublicKey)} {
				if b := e.bundle(w); len(b) != 0 {
					t.Fatalf("a refused payment granted a bundle to %s: %v", w.Hex(), b)
				}
			}
		})
	}

	t.Run("facilitator down", func(t *testing.T) {
		e := e.at(t)
		down := e.startGateway(fmt.Sprintf("http://127.0.0.1:%d/x402", caddyrun.FreePort(t)))
		for _, v1 := range []bool{false, true} {
			key := e.wallet(fmt.Sprintf("down v1=%v", v1), 1_000_000)
			payer := crypto.PubkeyToAddress(key.PublicKey)
			before, payToBefore := e.balance(payer), e.balance(e.payTo)
			a := e.auth(key)
			name, hdr := "X-PAYMENT", v1Header(a, a.sign(8453, e.asset), "exact", x402NetworkV1)
			if !v1 {
				resource, acc := e.issued(down)
				name, hdr = "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc)
			}
			ans := e.rpc(down, name, hdr)
			var rpc struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
				Result json.RawMessage `json:"result"`
			}
			if ans.status != http.StatusServiceUnavailable || json.Unmarshal(ans.body, &rpc) != nil || rpc.JSONRPC != "2.0" ||
				string(rpc.ID) != "1" || rpc.Error == nil || rpc.Error.Code != -32603 || rpc.Error.Message == "" || rpc.Result != nil {
				t.Fatalf("%s with the facilitator down: want 503 with a JSON-RPC error -32603, got %s", name, ans)
			}
			for _, h := range []string{"X-Tollgate-Bundle-Key", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"} {
				if v := ans.header.Get(h); v != "" {
					t.Fatalf("facilitator down, yet %s: %s", h, v)
				}
			}
			if b := e.bundle(payer); len(b) != 0 {
				t.Fatalf("facilitator down, yet a bundle in Redis: %v", b)
			}
			if e.balance(payer) != before || e.balance(e.payTo) != payToBefore || e.authUsed(payer, a.nonce) {
				t.Fatalf("facilitator down, yet funds moved")
			}
			// Nothing was consumed: the same authorization pays on the working gateway.
			e.expectPaid(e.rpc(gw, name, hdr), v1, payer)
			if e.balance(payer) != before-x402Price || !e.authUsed(payer, a.nonce) {
				t.Fatalf("the authorization refused while the facilitator was down did not pay afterwards")
			}
		}
	})
}

// siweText is the EIP-4361 message of a SIWX payload, laid out as the spec
// (and @signinwithethereum/siwe, which the x402 client uses) writes it.
func siweText(p map[string]any) string {
	str := func(k string) string { s, _ := p[k].(string); return s }
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants you to sign in with your Ethereum account:\n%s\n\n", str("domain"), str("address"))
	if s := str("statement"); s != "" {
		b.WriteString(s + "\n")
	}
	chain := strings.TrimPrefix(str("chainId"), "eip155:")
	fmt.Fprintf(&b, "\nURI: %s\nVersion: %s\nChain ID: %s\nNonce: %s\nIssued At: %s", str("uri"), str("version"), chain, str("nonce"), str("issuedAt"))
	if s := str("expirationTime"); s != "" {
		b.WriteString("\nExpiration Time: " + s)
	}
	if rs, _ := p["resources"].([]string); len(rs) > 0 {
		b.WriteString("\nResources:")
		for _, r := range rs {
			b.WriteString("\n- " + r)
		}
	}
	return b.String()
}

// siwx answers a fresh 402's sign-in-with-x challenge as the x402 client
// extension does: the challenge's fields plus address, chainId, type and
// the EIP-191 signature, base64 JSON. edit may change fields before signing
// (key "signer" replaces the signing key).
func (e *x402Env) siwx(t *testing.T, gw *caddyrun.Server, key *ecdsa.PrivateKey, edit func(p map[string]any)) string {
	t.Helper()
	_, v2 := paymentRequired(t, e.rpc(gw))
	var ch struct {
		Info struct {
			Domain, URI, Version, Nonce, IssuedAt, ExpirationTime, Statement string
			Resources                                                        []string
		}
	}
	if err := json.Unmarshal(v2.Extensions["sign-in-with-x"], &ch); err != nil {
		t.Fatalf("sign-in-with-x challenge %s: %v", v2.Extensions["sign-in-with-x"], err)
	}
	i := ch.Info
	p := map[string]any{"domain": i.Domain, "address": crypto.PubkeyToAddress(key.PublicKey).Hex(), "statement": i.Statement, "uri": i.URI,
		"version": i.Version, "chainId": x402NetworkV2, "type": "eip191", "nonce": i.Nonce, "issuedAt": i.IssuedAt,
		"expirationTime": i.ExpirationTime, "resources": i.Resources}
	signer := key
	if edit != nil {
		edit(p)
		if k, ok := p["signer"].(*ecdsa.PrivateKey); ok {
			signer = k
			delete(p, "signer")
		}
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(siweText(p))), signer)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	p["signature"] = hexutil.Encode(sig)
	return b64JSON(p)
}
