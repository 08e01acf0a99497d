package facilitator

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// env is the dev chain 8453 (TestUSDC, funded payer) with the facilitator
// built from its settings and served over HTTP.
type env struct {
	t      *testing.T
	m      *devnet.Manifest
	asset  common.Address
	payer  *ecdsa.PrivateKey
	payTo  common.Address
	client *ethclient.Client
	srv    *httptest.Server
	cfg    config.X402 // the facilitator's settings (a second one of the same offer: Open(ctx, e.cfg, nil))
}

var (
	shared     *devnet.Devnet
	sharedOnce sync.Once
	sharedErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Close()
	}
	os.Exit(code)
}

// testGatewaySecret is the gateway's secret of the tests' facilitators.
const testGatewaySecret = "test-gateway-secret-0123456789abcdef"

func newEnv(t *testing.T) *env { t.Helper(); return newEnvWith(t, nil) }

// newEnvWith runs setup (e.g. Track) on the facilitator before its routes
// are registered.
func newEnvWith(t *testing.T, setup func(*Facilitator)) *env {
	t.Helper()
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shared, sharedErr = devnet.Start(ctx, devnet.Config{BlockInterval: -1})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	m := shared.Manifest
	relayer, err := m.Account("relayer")
	if err != nil {
		t.Fatal(err)
	}
	payTo := make([]byte, 20)
	_, _ = rand.Read(payTo)
	xcfg := config.X402{RPCURL: m.Base.RPCURL, RelayerKey: relayer.PrivateKey,
		Asset: m.Base.USDC, PayTo: common.BytesToAddress(payTo).Hex(), GatewaySecret: testGatewaySecret}
	f, client, err := Open(context.Background(), xcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if f.Relayer() != relayer.Addr() {
		t.Fatalf("relayer %s, want %s", f.Relayer(), relayer.Addr())
	}
	if setup != nil {
		setup(f)
	}
	mux := http.NewServeMux()
	f.Register(mux.Handle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, m: m, asset: common.HexToAddress(m.Base.USDC), payer: devnet.DevKey("payer"),
		payTo: common.BytesToAddress(payTo), client: client, srv: srv, cfg: xcfg}
}

func (e *env) balance(a common.Address) *big.Int {
	e.t.Helper()
	u := testusdc.NewTestUSDC()
	b, err := bind.Call(u.Instance(e.client, e.asset), nil, u.PackBalanceOf(a), u.UnpackBalanceOf)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// auth is a TransferWithAuthorization being built.
type auth struct {
	key                            *ecdsa.PrivateKey
	asset, to                      common.Address
	chainID                        int64
	name                           string
	value, validAfter, validBefore *big.Int
	nonce                          [32]byte
}

func (e *env) auth(value int64) *auth {
	a := &auth{key: e.payer, asset: e.asset, to: e.payTo, chainID: 8453, name: "USD Coin", value: big.NewInt(value),
		validAfter: big.NewInt(0), validBefore: big.NewInt(time.Now().Unix() + 600)}
	_, _ = rand.Read(a.nonce[:])
	return a
}

// sign signs with go-ethereum's generic EIP-712 encoder (independent of
// Digest), r‖s‖v with v ∈ {27, 28}.
func (a *auth) sign(t *testing.T) []byte {
	t.Helper()
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
			"TransferWithAuthorization": {{Name: "from", Type: "address"}, {Name: "to", Type: "address"},
				{Name: "value", Type: "uint256"}, {Name: "validAfter", Type: "uint256"},
				{Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain: apitypes.TypedDataDomain{Name: a.name, Version: "2", ChainId: (*math.HexOrDecimal256)(big.NewInt(a.chainID)),
			VerifyingContract: a.asset.Hex()},
		Message: apitypes.TypedDataMessage{"from": crypto.PubkeyToAddress(a.key.PublicKey).Hex(), "to": a.to.Hex(),
			"value": a.value, "validAfter": a.validAfter, "validBefore": a.validBefore, "nonce": a.nonce[:]},
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(h, a.key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return sig
}

func (a *auth) json() map[string]any {
	return map[string]any{"from": crypto.PubkeyToAddress(a.key.PublicKey).Hex(), "to": a.to.Hex(), "value": a.value.String(),
		"validAfter": a.validAfter.String(), "validBefore": a.validBefore.String(), "nonce": hexutil.Encode(a.nonce[:])}
}

// v2Body is a facilitator request as an x402 v2 resource server sends it:
// the payload echoes the requirement in accepted.
func v2Body(a *auth, sig []byte, req map[string]any) map[string]any {
	accepted := map[string]any{}
	for k, v := range req {
		accepted[k] = v
	}
	return map[string]any{"x402Version": 2, "paymentRequirements": req, "paymentPayload": map[string]any{
		"x402Version": 2,
		"payload":     map[string]any{"authorization": a.json(), "signature": hexutil.Encode(sig)},
		"resource":    map[string]any{"url": "http://127.0.0.1/rpc", "description": "JSON-RPC call", "mimeType": "application/json"},
		"accepted":    accepted,
		"extensions":  map[string]any{},
	}}
}

func (e *env) v2Req(amount string) map[string]any {
	return map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": amount,
		"asset": strings.ToLower(e.asset.Hex()), "payTo": e.payTo.Hex(), "maxTimeoutSeconds": 60,
		"extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

// v1Body is the x402 v1 shape: scheme and network at the payload's top,
// maxAmountRequired and the resource fields in the requirement.
func v1Body(a *auth, sig []byte, req map[string]any) map[string]any {
	return map[string]any{"x402Version": 1, "paymentRequirements": req, "paymentPayload": map[string]any{
		"x402Version": 1, "scheme": "exact", "network": req["network"],
		"payload": map[string]any{"signature": hexutil.Encode(sig), "authorization": a.json()},
	}}
}

func (e *env) v1Req(amount string) map[string]any {
	return map[string]any{"scheme": "exact", "network": "base", "maxAmountRequired": amount,
		"resource": "http://127.0.0.1/rpc", "description": "JSON-RPC call", "mimeType": "application/json",
		"payTo": strings.ToLower(e.payTo.Hex()), "maxTimeoutSeconds": 60, "asset": e.asset.Hex(),
		"extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

func (e *env) post(path string, body any) (int, map[string]any) {
	e.t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			e.t.Fatal(err)
		}
	}
	return do(e.t, e.srv.URL+path, b)
}

func do(t *testing.T, url string, b []byte) (int, map[string]any) {
	t.Helper()
	return doAs(t, url, b, "")
}

// doAs is do with the gateway's secret header (none when secret is "").
func doAs(t *testing.T, url string, b []byte, secret string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(GatewayHeader, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %d %s: %v", url, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

func (e *env) expectValid(body any, payer common.Address) {
	e.t.Helper()
	code, out := e.post("/x402/verify", body)
	if code != 200 || out["isValid"] != true || out["payer"] != payer.Hex() {
		e.t.Fatalf("verify: %d %v", code, out)
	}
}

func (e *env) expectInvalid(body any, reason string) {
	e.t.Helper()
	code, out := e.post("/x402/verify", body)
	if code != 200 || out["isValid"] != false || out["invalidReason"] != reason {
		e.t.Fatalf("verify: %d %v, want isValid false %s", code, out, reason)
	}
	e.t.Logf("%s: %v", reason, out["invalidMessage"])
	code, out = e.post("/x402/settle", body)
	if code != 200 || out["success"] != false || out["errorReason"] != reason || out["transaction"] != "" {
		e.t.Fatalf("settle: %d %v, want success false %s", code, out, reason)
	}
}

// expectSettledBefore checks a replay of a settled authorization: verify
// says the nonce is used, settle is idempotent — success with the original
// transaction — and no money moves again.
func (e *env) expectSettledBefore(body any, tx string) {
	e.t.Helper()
	code, out := e.post("/x402/verify", body)
	if code != 200 || out["isValid"] != false || out["invalidReason"] != ReasonNonceUsed {
		e.t.Fatalf("verify: %d %v, want isValid false %s", code, out, ReasonNonceUsed)
	}
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	p0, t0 := e.balance(payer), e.balance(e.payTo)
	code, out = e.post("/x402/settle", body)
	if code != 200 || out["success"] != true || out["transaction"] != tx {
		e.t.Fatalf("settle again: %d %v, want success with the original transaction %s", code, out, tx)
	}
	if e.balance(payer).Cmp(p0) != 0 || e.balance(e.payTo).Cmp(t0) != 0 {
		e.t.Fatal("a repeated settle moved money again")
	}
}

// settleOK settles body and checks exactly value moved from payer to payTo
// in the returned transaction.
func (e *env) settleOK(body any, network string, value int64) string {
	e.t.Helper()
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	p0, t0 := e.balance(payer), e.balance(e.payTo)
	code, out := e.post("/x402/settle", body)
	if code != 200 || out["success"] != true || out["network"] != network || out["payer"] != payer.Hex() {
		e.t.Fatalf("settle: %d %v", code, out)
	}
	tx, _ := out["transaction"].(string)
	rcpt, err := e.client.TransactionReceipt(context.Background(), common.HexToHash(tx))
	if err != nil || rcpt.Status != 1 || len(tx) != 66 {
		e.t.Fatalf("receipt of %q: %v %+v", tx, err, rcpt)
	}
	if d := new(big.Int).Sub(p0, e.balance(payer)); d.Int64() != value {
		e.t.Fatalf("payer paid %s, want %d", d, value)
	}
	if d := new(big.Int).Sub(e.balance(e.payTo), t0); d.Int64() != value {
		e.t.Fatalf("payTo received %s, want %d", d, value)
	}
	return tx
}

func TestSupported(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.srv.URL + "/x402/supported")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	want := `{"kinds":[{"x402Version":1,"scheme":"exact","network":"base"},{"x402Version":2,"scheme":"exact","network":"eip155:8453"}]}`
	if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != want {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	// batch-settlement is offered with a receiver authorizer (the claim job's).
	e = newEnvWith(t, func(f *Facilitator) { f.cfg.Offer.ReceiverAuthorizer = common.HexToAddress("0x01") })
	resp2, err := http.Get(e.srv.URL + "/x402/supported")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	raw, _ = io.ReadAll(resp2.Body)
	if !strings.Contains(string(raw), `{"x402Version":2,"scheme":"batch-settlement","network":"eip155:8453"}`) {
		t.Fatalf("with a receiver authorizer: %s", raw)
	}
}

func TestV2VerifySettleReplay(t *testing.T) {
	e := newEnv(t)
	a := e.auth(100_000)
	body := v2Body(a, a.sign(t), e.v2Req("100000"))
	e.expectValid(body, crypto.PubkeyToAddress(e.payer.PublicKey))
	tx := e.settleOK(body, "eip155:8453", 100_000)
	// The same authorization again: the nonce is used on chain, and settling
	// is idempotent (a caller whose answer was lost learns the transaction).
	e.expectSettledBefore(body, tx)
}

func TestV1VerifySettleReplay(t *testing.T) {
	e := newEnv(t)
	a := e.auth(100_000)
	a.validAfter = big.NewInt(time.Now().Unix() - 600) // what v1 clients send
	body := v1Body(a, a.sign(t), e.v1Req("100000"))
	e.expectValid(body, crypto.PubkeyToAddress(e.payer.PublicKey))
	tx := e.settleOK(body, "base", 100_000)
	e.expectSettledBefore(body, tx)
}

func TestConcurrentSettlesSubmitOnce(t *testing.T) {
	e := newEnv(t)
	a := e.auth(100_000)
	body, _ := json.Marshal(v2Body(a, a.sign(t), e.v2Req("100000")))
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	p0 := e.balance(payer)
	const n = 4
	outs := make([]map[string]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, outs[i] = do(t, e.srv.URL+"/x402/settle", body)
		}()
	}
	wg.Wait()
	// One submission; the others wait on the (from, nonce) lock and then
	// answer the same transaction (settling is idempotent).
	for _, o := range outs {
		if o["success"] != true || o["transaction"] != outs[0]["transaction"] || len(outs[0]["transaction"].(string)) != 66 {
			t.Fatalf("concurrent settles of one authorization: %v", outs)
		}
	}
	if d := new(big.Int).Sub(p0, e.balance(payer)); d.Int64() != 100_000 {
		t.Fatalf("payer paid %s, want 100000 once", d)
	}
}

func TestInvalidPayments(t *testing.T) {
	e := newEnv(t)
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	p0 := e.balance(payer)
	now := time.Now().Unix()
	halfN := new(big.Int).Rsh(crypto.S256().Params().N, 1)
	cases := []struct {
		name   string
		reason string
		body   func() map[string]any
	}{
		{"v2 tampered signature", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			sig := a.sign(t)
			sig[5] ^= 0x01
			return v2Body(a, sig, e.v2Req("100000"))
		}},
		{"v1 tampered signature", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			sig := a.sign(t)
			sig[40] ^= 0x80
			return v1Body(a, sig, e.v1Req("100000"))
		}},
		{"signed value differs from the authorization", ReasonSignature, func() map[string]any {
			a := e.auth(99_999)
			sig := a.sign(t)
			a.value = big.NewInt(100_000)
			return v2Body(a, sig, e.v2Req("100000"))
		}},
		{"high s (malleated)", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			sig := a.sign(t)
			s := new(big.Int).SetBytes(sig[32:64])
			if s.Cmp(halfN) > 0 {
				t.Fatal("crypto.Sign gave a high s")
			}
			copy(sig[32:64], common.LeftPadBytes(new(big.Int).Sub(crypto.S256().Params().N, s).Bytes(), 32))
			sig[64] = 55 - sig[64] // 27 ↔ 28: the same signer
			return v2Body(a, sig, e.v2Req("100000"))
		}},
		{"v is 0", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			sig := a.sign(t)
			sig[64] -= 27
			return v2Body(a, sig, e.v2Req("100000"))
		}},
		{"wrong token domain name", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			a.name = "USDC"
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"signed for another chain", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			a.chainID = 84532
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"64-byte signature (bytes overload, simulated on chain)", ReasonSignature, func() map[string]any {
			a := e.auth(100_000)
			return v2Body(a, a.sign(t)[:64], e.v2Req("100000"))
		}},
		{"v2 wrong amount", ReasonValueV2, func() map[string]any {
			a := e.auth(100_000)
			return v2Body(a, a.sign(t), e.v2Req("100001"))
		}},
		{"v1 wrong amount (more than required)", ReasonValueV1, func() map[string]any {
			a := e.auth(200_000)
			return v1Body(a, a.sign(t), e.v1Req("100000"))
		}},
		{"v2 wrong payTo", ReasonRecipient, func() map[string]any {
			a := e.auth(100_000)
			a.to = common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"v1 wrong payTo", ReasonRecipient, func() map[string]any {
			a := e.auth(100_000)
			a.to = common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")
			return v1Body(a, a.sign(t), e.v1Req("100000"))
		}},
		{"v2 unsupported network", ReasonNetwork, func() map[string]any {
			a := e.auth(100_000)
			r := e.v2Req("100000")
			r["network"] = "eip155:84532"
			return v2Body(a, a.sign(t), r)
		}},
		{"v2 payload network differs from the requirement", ReasonNetwork, func() map[string]any {
			a := e.auth(100_000)
			b := v2Body(a, a.sign(t), e.v2Req("100000"))
			b["paymentPayload"].(map[string]any)["accepted"].(map[string]any)["network"] = "eip155:84532"
			return b
		}},
		{"v1 with a CAIP-2 network", ReasonNetwork, func() map[string]any {
			a := e.auth(100_000)
			r := e.v1Req("100000")
			r["network"] = "eip155:8453"
			return v1Body(a, a.sign(t), r)
		}},
		{"v1 base-sepolia", ReasonNetwork, func() map[string]any {
			a := e.auth(100_000)
			r := e.v1Req("100000")
			r["network"] = "base-sepolia"
			return v1Body(a, a.sign(t), r)
		}},
		{"v2 payload asset differs from the requirement", ReasonAsset, func() map[string]any {
			a := e.auth(100_000)
			b := v2Body(a, a.sign(t), e.v2Req("100000"))
			b["paymentPayload"].(map[string]any)["accepted"].(map[string]any)["asset"] = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
			return b
		}},
		{"v1 requirement for another asset", ReasonAsset, func() map[string]any {
			a := e.auth(100_000)
			r := e.v1Req("100000")
			r["asset"] = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
			return v1Body(a, a.sign(t), r)
		}},
		{"expired", ReasonValidBefore, func() map[string]any {
			a := e.auth(100_000)
			a.validBefore = big.NewInt(now - 1)
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"v1 expired", ReasonValidBefore, func() map[string]any {
			a := e.auth(100_000)
			a.validAfter, a.validBefore = big.NewInt(now-600), big.NewInt(now-5)
			return v1Body(a, a.sign(t), e.v1Req("100000"))
		}},
		{"not yet valid", ReasonValidAfter, func() map[string]any {
			a := e.auth(100_000)
			a.validAfter = big.NewInt(now + 300)
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"insufficient balance", ReasonFunds, func() map[string]any {
			k, _ := crypto.GenerateKey()
			a := e.auth(100_000)
			a.key = k
			return v2Body(a, a.sign(t), e.v2Req("100000"))
		}},
		{"more than the offer's price", ReasonValueV2, func() map[string]any {
			v := new(big.Int).Add(e.balance(payer), big.NewInt(1))
			a := e.auth(0)
			a.value = v
			return v2Body(a, a.sign(t), e.v2Req(v.String()))
		}},
		{"decimal amount string", ReasonValueV2, func() map[string]any {
			a := e.auth(100_000)
			return v2Body(a, a.sign(t), e.v2Req("0.001"))
		}},
		{"bad nonce", ReasonPayload, func() map[string]any {
			a := e.auth(100_000)
			b := v2Body(a, a.sign(t), e.v2Req("100000"))
			b["paymentPayload"].(map[string]any)["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] = "0x1234"
			return b
		}},
		{"scheme upto", ReasonScheme, func() map[string]any {
			a := e.auth(100_000)
			r := e.v2Req("100000")
			r["scheme"] = "upto"
			return v2Body(a, a.sign(t), r)
		}},
		{"x402Version 3", ReasonVersion, func() map[string]any {
			a := e.auth(100_000)
			b := v2Body(a, a.sign(t), e.v2Req("100000"))
			b["x402Version"] = 3
			return b
		}},
		{"versions disagree", ReasonVersion, func() map[string]any {
			a := e.auth(100_000)
			b := v1Body(a, a.sign(t), e.v1Req("100000"))
			b["x402Version"] = 2
			return b
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			e.expectInvalid(c.body(), c.reason)
		})
	}
	e.t = t
	if p := e.balance(payer); p.Cmp(p0) != 0 {
		t.Fatalf("payer balance %s → %s after invalid payments", p0, p)
	}
}

func TestMalformedRequests400(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/x402/verify", "/x402/settle"} {
		for _, body := range []string{`{`, `[]`, `{"x402Version":2}`, `{"x402Version":"2","paymentPayload":{},"paymentRequirements":{}}`, `{} {}`} {
			code, out := e.post(path, body)
			if code != 400 {
				t.Fatalf("%s %s: %d %v", path, body, code, out)
			}
		}
	}
}

// TestRPCDown: with the chain RPC unreachable, verify and settle answer 503
// and nothing moves.
func TestRPCDown(t *testing.T) {
	e := newEnv(t)
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port) // nothing listens
	dead, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	f, err := New(Config{Backend: dead, ChainID: ChainID, Relayer: devnet.DevKey("relayer"), RPCURL: url,
		Offer: x402.Offer{Asset: e.asset, PayTo: e.payTo}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	f.Register(mux.Handle)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	p0, t0 := e.balance(payer), e.balance(e.payTo)
	a := e.auth(100_000)
	body, _ := json.Marshal(v2Body(a, a.sign(t), e.v2Req("100000")))
	for _, path := range []string{"/x402/verify", "/x402/settle"} {
		code, out := do(t, srv.URL+path, body)
		if code != 503 {
			t.Fatalf("%s: %d %v", path, code, out)
		}
	}
	if e.balance(payer).Cmp(p0) != 0 || e.balance(e.payTo).Cmp(t0) != 0 {
		t.Fatal("balances moved while the RPC was down")
	}
	// The authorization is still good on the live facilitator.
	e.settleOK(v2Body(a, a.sign(t), e.v2Req("100000")), "eip155:8453", 100_000)
}

func TestOpen(t *testing.T) {
	e := newEnv(t)
	f, c, err := Open(context.Background(), config.X402{}, nil)
	if f != nil || c != nil || err != nil {
		t.Fatalf("without TOLLGATE_X402_RPC_URL: %v %v %v", f, c, err)
	}
	relayer, _ := e.m.Account("relayer")
	if _, _, err := Open(context.Background(), config.X402{RPCURL: e.m.Base.RPCURL, RelayerKey: relayer.PrivateKey}, nil); err == nil || !strings.Contains(err.Error(), "TOLLGATE_X402_PAY_TO") {
		t.Fatalf("a facilitator without the offer's payTo: %v", err)
	}
	if _, _, err := Open(context.Background(), config.X402{RPCURL: e.m.Polygon.RPCURL, RelayerKey: relayer.PrivateKey, PayTo: e.payTo.Hex()}, nil); err == nil || !strings.Contains(err.Error(), "want 8453") {
		t.Fatalf("chain 137 accepted: %v", err)
	}
	if _, _, err := Open(context.Background(), config.X402{RPCURL: e.m.Base.RPCURL, RelayerKey: "0xnothex", PayTo: e.payTo.Hex()}, nil); err == nil || strings.Contains(err.Error(), "nothex") {
		t.Fatalf("bad key: %v", err)
	}
}

// TestDigestMatchesApitypes checks Digest against go-ethereum's generic
// encoder and the domain against Base USDC's on-chain DOMAIN_SEPARATOR.
func TestDigestMatchesApitypes(t *testing.T) {
	base := common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	if got := hexutil.Encode(DomainSeparator("USD Coin", "2", 8453, base)); got != "0x02fa7265e7c5d81118673727957699e4d68f74cd74b7db77da710fe8a2c7834f" {
		t.Fatalf("Base USDC domain separator %s", got)
	}
	e := newEnv(t)
	a := e.auth(1234)
	a.asset = common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	sig := a.sign(t)
	sig[64] -= 27
	d := Digest("USD Coin", "2", 8453, a.asset, crypto.PubkeyToAddress(a.key.PublicKey), a.to, a.value, a.validAfter, a.validBefore, a.nonce)
	pub, err := crypto.SigToPub(d, sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != crypto.PubkeyToAddress(a.key.PublicKey) {
		t.Fatalf("Digest disagrees with apitypes: %v", err)
	}
}

// Tracked (as settlementd runs it): the settlement transaction is recorded
// in chain_txs under the authorization, followed to its receipt, and a
// replay answers the recorded transaction without sending another.
func TestTrackedSettleIsRecorded(t *testing.T) {
	_, pool := settletest.DB(t)
	var f *Facilitator
	e := newEnvWith(t, func(x *Facilitator) {
		if x.TxJob() != nil {
			t.Fatal("a TxJob without Track")
		}
		if err := x.Track(pool, chain.TxPolicy{}); err != nil {
			t.Fatal(err)
		}
		f = x
	})
	a := e.auth(100_000)
	body := v2Body(a, a.sign(t), e.v2Req("100000"))
	tx := e.settleOK(body, "eip155:8453", 100_000)
	purpose := fmt.Sprintf("x402:%s:%s:%s", strings.ToLower(e.asset.Hex()), strings.ToLower(crypto.PubkeyToAddress(e.payer.PublicKey).Hex()),
		hexutil.Encode(a.nonce[:]))
	var hash, state, kind, role string
	var chainID, amount int64
	if err := pool.QueryRow(context.Background(), `SELECT tx_hash, state, kind, role, chain_id, amount_units FROM chain_txs WHERE purpose = $1`,
		purpose).Scan(&hash, &state, &kind, &role, &chainID, &amount); err != nil {
		t.Fatal(err)
	}
	if hash != strings.ToLower(tx) || state != chain.StateMined || kind != chain.KindX402Settle || role != "x402-relayer" ||
		chainID != ChainID || amount != 100_000 {
		t.Fatalf("recorded %s %s %s %s %d %d, answered %s", hash, state, kind, role, chainID, amount, tx)
	}
	e.expectSettledBefore(body, tx)
	if err := f.TxJob().Run(context.Background()); err != nil || f.TxJob().Name() != "x402-transactions" {
		t.Fatalf("tx job: %v", err)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM chain_txs`); n != 1 {
		t.Fatalf("%d transactions recorded, want 1", n)
	}
}

// A transaction over the gas cap is refused before it is sent: the
// relayer's nonce and the balances do not move.
func TestGasCap(t *testing.T) {
	e := newEnvWith(t, func(f *Facilitator) { f.cfg.GasCap = 30_000 }) // transferWithAuthorization needs more
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	relayer, _ := e.m.Account("relayer")
	n0, err := e.client.PendingNonceAt(context.Background(), relayer.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p0, t0 := e.balance(payer), e.balance(e.payTo)
	a := e.auth(100_000)
	code, out := e.post("/x402/settle", v2Body(a, a.sign(t), e.v2Req("100000")))
	if code != http.StatusOK || out["success"] != false || out["errorReason"] != ReasonGasCap {
		t.Fatalf("settle over the gas cap: %d %v", code, out)
	}
	n1, _ := e.client.PendingNonceAt(context.Background(), relayer.Addr())
	if n1 != n0 || e.balance(payer).Cmp(p0) != 0 || e.balance(e.payTo).Cmp(t0) != 0 {
		t.Fatalf("a refused settle moved something: nonce %d → %d", n0, n1)
	}
}
