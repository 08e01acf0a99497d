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
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// agentCaddyfile: a gateway with a free tier of one call, serving chain 137
// from the dev chain, in front of the in-process settlementd.
const agentCaddyfile = `{
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
			probe_interval 100ms
			free_daily_limit 1
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
				provider dev @RPC@
			}
		}
		@settlement path /api/nodes/* /api/auth/* /api/status /health /x402/* /admin/*
		reverse_proxy @settlement @API@
		respond 404
	}
}
`

// TestAgentFollows402: a program that knows only the gateway's /rpc URL and
// has a funded wallet follows the 402 body — nothing else — from a fresh IP
// to a paid call: it reads onboarding.steps and does what each says (HTTP
// requests with the fields earlier steps returned, the deposit transactions
// on chain in order, polling for the credit). The test checks that the agent
// used no Tollgate path but /rpc and no field name the 402 does not define,
// that the deposit was credited by settlementd from the chain, and that the
// same agent, sending a base-unit amount as whole USDT, is refused with a
// message that names the unit.
func TestAgentFollows402(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stack and waits for deposit confirmations")
	}
	_ = testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, _ := settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	acct := func(name string) (common.Address, string) {
		a, err := m.Account(name)
		if err != nil {
			t.Fatal(err)
		}
		return a.Addr(), a.PrivateKey
	}
	treasury, treasuryKey := acct("treasury")
	_, relayerKey := acct("relayer")
	platform, _ := acct("platform")
	poolW, _ := acct("pool")
	upstreamRPC := faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(upstreamRPC.Close)

	apiAddr := fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t))
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", treasury.Hex(), "@RPC@", upstreamRPC.URL(), "@API@", apiAddr).Replace(agentCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": apiAddr, "TOLLGATE_EPOCH_GRACE": "1s", "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_CHAIN_RPC_URL": m.Polygon.RPCURL, "TOLLGATE_CHAIN_ID": "137", "TOLLGATE_USDT_ADDRESS": m.Polygon.USDT, "TOLLGATE_DEV": "1",
		"TOLLGATE_VAULT_ADDRESS": m.Polygon.RevenueVault, "TOLLGATE_CLAIMS_ADDRESS": m.Polygon.ClaimsContract,
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": "3", "TOLLGATE_DEPOSIT_SCHEDULE": "* * * * * *",
		"TOLLGATE_PLATFORM_WALLET": platform.Hex(), "TOLLGATE_POOL_WALLET": poolW.Hex(),
		"TOLLGATE_TREASURY_KEY": treasuryKey, "TOLLGATE_RELAYER_KEY": relayerKey,
		"TOLLGATE_AUTH_DOMAIN": "127.0.0.1",
	}
	runInProcess(t, env, gw.URL()+"/health")

	// The agent: the gateway's /rpc, a wallet with USDT on chain 137 and a
	// node to send its transactions through — nothing else.
	_, devKeyHex := acct("developer-1")
	wallet, err := crypto.HexToECDSA(strings.TrimPrefix(devKeyHex, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	chain, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chain.Close)
	a := &agent{t: t, ctx: ctx, rpcURL: gw.URL() + "/rpc", wallet: wallet, chain: chain, vars: map[string]any{}}

	raw402 := a.callUntil402()
	a.follow(raw402)

	// What the agent used is defined by the 402 it read.
	for _, name := range a.used {
		if !bytes.Contains(raw402, []byte(`"`+name+`"`)) {
			t.Errorf("the agent used %q, which the 402 body does not define", name)
		}
	}
	for _, u := range a.urls {
		if !strings.HasPrefix(u, gw.URL()) && u != a.rpcURL {
			t.Errorf("the agent requested %s, not from the 402", u)
		}
	}
	if a.lastPayer != "credits" || !strings.HasPrefix(a.lastResult, "0x") {
		t.Fatalf("the agent's last call: payer %q result %q", a.lastPayer, a.lastResult)
	}
	t.Logf("agent: 402 → paid call in %d steps; used %d 402-defined names", a.steps, len(a.used))

	// The same agent fed a base-unit amount as whole USDT: refused, and the
	// message says which unit it read and what takes base units.
	onb := a.field(a.doc, "onboarding").(map[string]any)
	url := a.field(onb, "deposit_instructions_url").(string) + "?amount=1000000"
	status, body := a.request(http.MethodGet, url, map[string]string{a.field(onb, "api_key_header").(string): a.vars["api_key"].(string)}, nil)
	var refusal struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &refusal); err != nil || status != http.StatusBadRequest || refusal.Error.Code != "above_maximum" ||
		!strings.Contains(refusal.Error.Message, "1000000 USDT") || !strings.Contains(refusal.Error.Message, "amount_units") {
		t.Fatalf("a base-unit amount as amount: %d %s", status, body)
	}
}

// agent follows a 402's onboarding.steps generically.
type agent struct {
	t      *testing.T
	ctx    context.Context
	rpcURL string
	wallet *ecdsa.PrivateKey
	chain  *ethclient.Client

	doc   map[string]any // the 402 body
	vars  map[string]any // fields returned by the steps so far
	used  []string       // every field name the agent read
	urls  []string       // every URL it requested
	steps int

	lastPayer, lastResult string
}

// field reads obj[name] and records that the agent relied on name.
func (a *agent) field(obj map[string]any, name string) any {
	a.used = append(a.used, name)
	return obj[name]
}

// callUntil402 calls eth_blockNumber until the gateway answers 402 and
// returns that body.
func (a *agent) callUntil402() []byte {
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []any{}}
	for i := 0; i < 10; i++ {
		status, out := a.request(http.MethodPost, a.rpcURL, nil, body)
		if status == http.StatusPaymentRequired {
			if err := json.Unmarshal(out, &a.doc); err != nil {
				a.t.Fatalf("402 body: %v", err)
			}
			return out
		}
		if status != http.StatusOK {
			a.t.Fatalf("free call: %d %s", status, out)
		}
	}
	a.t.Fatal("the free tier never ran out")
	return nil
}

var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

// fill replaces {name} with the value an earlier step returned.
func (a *agent) fill(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		name := p[1 : len(p)-1]
		v, ok := a.vars[name]
		if !ok {
			a.t.Fatalf("step refers to {%s}, which no earlier step returned", name)
		}
		a.used = append(a.used, name)
		return fmt.Sprint(v)
	})
}

func (a *agent) fillAny(v any) any {
	switch v := v.(type) {
	case string:
		return a.fill(v)
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = a.fillAny(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = a.fillAny(x)
		}
		return out
	}
	return v
}

func (a *agent) follow(raw402 []byte) {
	onb, _ := a.field(a.doc, "onboarding").(map[string]any)
	steps, _ := a.field(onb, "steps").([]any)
	if len(steps) == 0 {
		a.t.Fatalf("the 402 has no onboarding.steps: %s", raw402)
	}
	for _, s := range steps {
		st := s.(map[string]any)
		a.steps++
		switch action := a.field(st, "action"); action {
		case "http":
			a.http(st, true)
		case "send_transactions":
			a.sendTransactions(st)
		case "poll":
			interval := time.Duration(a.field(st, "interval_seconds").(float64)) * time.Second
			until := a.field(st, "until_above_zero").(string)
			deadline := time.Now().Add(90 * time.Second)
			for {
				a.http(st, false)
				if n, _ := a.vars[until].(float64); n > 0 {
					a.used = append(a.used, until)
					break
				}
				if time.Now().After(deadline) {
					a.t.Fatalf("step %v: %s never above zero", st["step"], until)
				}
				// The step says how often to ask; an agent waits that
				// long (capped here to keep the test short).
				time.Sleep(min(interval, 500*time.Millisecond))
			}
		default:
			a.t.Fatalf("step with unknown action %v", action)
		}
	}
}

// http sends a step's request and merges the JSON object it answers into
// vars. A non-2xx answer fails the test unless tolerated (polling).
func (a *agent) http(st map[string]any, strict bool) {
	method := a.field(st, "method").(string)
	url := a.fill(a.field(st, "url").(string))
	headers := map[string]string{}
	if h, ok := a.field(st, "headers").(map[string]any); ok {
		for k, v := range h {
			headers[k] = a.fill(v.(string))
		}
	}
	var body any
	if b, ok := a.field(st, "body").(map[string]any); ok {
		body = a.fillAny(b)
	}
	status, out := a.request(method, url, headers, body)
	if status/100 != 2 {
		if strict {
			a.t.Fatalf("step %v: %s %s → %d %s", st["step"], method, url, status, out)
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		a.t.Fatalf("step %v: answer is not a JSON object: %s", st["step"], out)
	}
	for k, v := range obj {
		a.vars[k] = v
	}
	if r, ok := obj["result"].(string); ok { // a JSON-RPC answer
		a.lastResult = r
	}
}

func (a *agent) request(method, url string, headers map[string]string, body any) (int, []byte) {
	a.urls = append(a.urls, url)
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, url, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	a.lastPayer = resp.Header.Get("X-Tollgate-Payer")
	return resp.StatusCode, out
}

// sendTransactions signs and sends the listed transactions in order, each
// mined (and successful) before the next.
func (a *agent) sendTransactions(st map[string]any) {
	from := crypto.PubkeyToAddress(a.wallet.PublicKey)
	list, _ := a.vars[a.field(st, "transactions").(string)].([]any)
	fields, _ := a.field(st, "transaction_fields").([]any)
	if len(list) == 0 || len(fields) != 4 {
		a.t.Fatalf("send_transactions: %d transactions, fields %v", len(list), fields)
	}
	for i, x := range list {
		tx := x.(map[string]any)
		get := func(name string) string {
			for _, f := range fields {
				if f == name {
					return fmt.Sprint(a.field(tx, name))
				}
			}
			a.t.Fatalf("the 402 does not define the transaction field %q", name)
			return ""
		}
		chainID, ok := new(big.Int).SetString(get("chain_id"), 10)
		if !ok {
			a.t.Fatalf("transaction %d: chain_id %q", i, get("chain_id"))
		}
		to := common.HexToAddress(get("to"))
		data, err := hexutil.Decode(get("data"))
		if err != nil {
			a.t.Fatal(err)
		}
		value, err := hexutil.DecodeBig(get("value"))
		if err != nil {
			a.t.Fatal(err)
		}
		nonce, err := a.chain.PendingNonceAt(a.ctx, from)
		if err != nil {
			a.t.Fatal(err)
		}
		gas, err := a.chain.EstimateGas(a.ctx, ethereum.CallMsg{From: from, To: &to, Data: data, Value: value})
		if err != nil {
			a.t.Fatalf("transaction %d would fail: %v", i+1, err)
		}
		tip, err := a.chain.SuggestGasTipCap(a.ctx)
		if err != nil {
			a.t.Fatal(err)
		}
		head, err := a.chain.HeaderByNumber(a.ctx, nil)
		if err != nil {
			a.t.Fatal(err)
		}
		feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
		signed, err := types.SignNewTx(a.wallet, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{
			ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas * 2, To: &to, Value: value, Data: data})
		if err != nil {
			a.t.Fatal(err)
		}
		if err := a.chain.SendTransaction(a.ctx, signed); err != nil {
			a.t.Fatalf("transaction %d: %v", i+1, err)
		}
		for {
			r, err := a.chain.TransactionReceipt(a.ctx, signed.Hash())
			if err == nil {
				if r.Status != types.ReceiptStatusSuccessful {
					a.t.Fatalf("transaction %d reverted", i+1)
				}
				break
			}
			if a.ctx.Err() != nil {
				a.t.Fatalf("transaction %d never mined", i+1)
			}
			time.Sleep(50 * time.Millisecond) // polling for the receipt
		}
	}
}
