// Package walkthrough is Tollgate's money loop as code: the narrated steps
// `make demo` prints and the end-to-end test asserts, run against a real
// stack (our Caddy with the root Caddyfile, settlementd, the dev chains,
// Redis, PostgreSQL). Every step checks what it got; the first failed check
// ends the run with an error.
//
// The steps: anonymous calls until the free tier runs out → the 402
// onboarding body → machine registration → deposit instructions → approve +
// deposit from a dev wallet → credited after 25 confirmations → metered
// calls and the usage endpoint → an agent over MCP with the same key → a
// keyless x402 payment by the Node client
// and SIWX reuse → a node operator logs in (SIWE), registers a node, serves
// traffic → the epoch closes with the 50/30/20 split → earnings → claim
// signature → claim() on chain → the USDT arrives → /api/status, /health,
// /stats/free-tier → balances before and after.
package walkthrough

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// X402 modes.
const (
	X402Auto    = "auto"    // run when tests/x402/pay.mjs and node exist, else report NOT RUN
	X402Require = "require" // a missing client is a failure
	X402Off     = "off"
)

// Config of a run.
type Config struct {
	Gateway  string           // the gateway's base URL (also fronts settlementd's API)
	Manifest *devnet.Manifest // the dev chains
	RepoRoot string           // where tests/x402/pay.mjs lives

	DepositUSDT string // default "5"
	PaidCalls   int    // metered calls before the node exists (default 10)
	NodeCalls   int    // paid calls the operator's node serves (default 20)
	X402Calls   int    // calls of the x402 client (default 3)
	X402        string // X402Auto (default), X402Require, X402Off
	NodeBin     string // default "node"

	// DeveloperIP is the developer's address as the gateway sees it
	// (X-Forwarded-For from this loopback client, which the root Caddyfile
	// trusts). Default: a random address of 198.18.0.0/15, so each run starts
	// with a fresh free allowance.
	DeveloperIP string

	// Deadline for each wait (default 2 minutes; the epoch wait allows 150 s).
	StepTimeout time.Duration
}

// Balance is one row of the before/after table.
type Balance struct {
	Who, Asset    string
	Before, After money.Units
}

// Delta is After − Before.
func (b Balance) Delta() money.Units { return b.After - b.Before }

// Summary is what a run did, in exact base units.
type Summary struct {
	FreeCalls int64 // anonymous calls served before the 402
	KeyID     string
	Deposit   money.Units
	DepositTx string
	Credited  money.Units
	PaidCalls int // metered calls before the node (provider-served)
	MCPCalls  int // calls the MCP tool calls made with the key
	NodeCalls int // paid calls served by the node
	// NodeStepCalls: the paid calls made until the node had served
	// NodeCalls (on its rung of the ladder the providers serve the rest).
	NodeStepCalls int
	X402          X402Result
	Revenue       money.Units // credits + x402 revenue the walkthrough generated
	Epochs        int         // closed epochs holding it
	Operators     money.Units // 50 %: the operators' half
	Platform      money.Units // 30 %
	Pool          money.Units // 20 %
	// PlatformOperators is the part of the operators' half that revenue no
	// node served earned: the platform's.
	PlatformOperators money.Units
	Distributed       money.Units // the nodes' shares
	NodeID            string
	NodeServedByNode  int64 // requests the node's endpoint received
	Claimed           money.Units
	ClaimTx           string
	CreditsLeft       money.Units
	Balances          []Balance
	Took              time.Duration

	// Credentials of the run, for the README check; never printed.
	APIKey      string `json:"-"` // the developer's key (credits left)
	OperatorJWT string `json:"-"` // operator-1's login token
}

// X402Result is the x402 step's outcome.
type X402Result struct {
	Ran       bool
	NotRunWhy string // when !Ran
	Calls     int
	OK        int
	Payments  int
	PayerPaid money.Units // the payer's USDC decrease
	BundleKey bool
	Revenue   money.Units
}

type run struct {
	cfg    Config
	out    io.Writer
	ctx    context.Context
	http   *http.Client
	poly   *ethclient.Client
	base   *ethclient.Client
	m      *devnet.Manifest
	sum    *Summary
	step   int
	steps  int
	secret string // the developer's API key: never printed
	// x402Offered: the 402's PAYMENT-REQUIRED carries the sign-in-with-x
	// extension, i.e. the gateway takes x402 payments and SIWX.
	x402Offered bool
}

// Run walks the money loop once against a running stack.
func Run(ctx context.Context, cfg Config, out io.Writer) (Summary, error) {
	began := time.Now()
	if cfg.DepositUSDT == "" {
		cfg.DepositUSDT = "5"
	}
	if cfg.PaidCalls == 0 {
		cfg.PaidCalls = 10
	}
	if cfg.NodeCalls == 0 {
		cfg.NodeCalls = 20
	}
	if cfg.X402Calls == 0 {
		cfg.X402Calls = 3
	}
	if cfg.X402 == "" {
		cfg.X402 = X402Auto
	}
	if cfg.NodeBin == "" {
		cfg.NodeBin = "node"
	}
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 2 * time.Minute
	}
	if cfg.DeveloperIP == "" {
		cfg.DeveloperIP = fmt.Sprintf("198.%d.%d.%d", 18+mrand.IntN(2), mrand.IntN(256), 1+mrand.IntN(250))
	}
	sum := &Summary{}
	r := &run{cfg: cfg, out: out, ctx: ctx, http: &http.Client{Timeout: 30 * time.Second}, m: cfg.Manifest, sum: sum, steps: 20}
	var err error
	if r.poly, err = ethclient.DialContext(ctx, r.m.Polygon.RPCURL); err != nil {
		return *sum, err
	}
	defer r.poly.Close()
	if r.base, err = ethclient.DialContext(ctx, r.m.Base.RPCURL); err != nil {
		return *sum, err
	}
	defer r.base.Close()
	err = r.walk()
	sum.Took = time.Since(began)
	return *sum, err
}

func (r *run) header(title string) {
	r.step++
	fmt.Fprintf(r.out, "\n[%2d/%d] %s\n", r.step, r.steps, title)
}

func (r *run) say(format string, args ...any) {
	fmt.Fprintf(r.out, "        "+format+"\n", args...)
}

func (r *run) fail(format string, args ...any) error {
	return fmt.Errorf("step %d: "+format, append([]any{r.step}, args...)...)
}

// ---------------------------------------------------------------- HTTP

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) obj() map[string]any {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(a.body))
	d.UseNumber()
	_ = d.Decode(&m)
	return m
}

func (a answer) short() string {
	s := strings.TrimSpace(string(a.body))
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return fmt.Sprintf("HTTP %d %s", a.status, s)
}

// do sends a request as the developer (X-Forwarded-For: DeveloperIP) unless
// a header overrides it.
func (r *run) do(method, path, body string, headers ...string) (answer, error) {
	u := path
	if !strings.HasPrefix(path, "http") {
		u = r.cfg.Gateway + path
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(r.ctx, method, u, rd)
	if err != nil {
		return answer{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Forwarded-For", r.cfg.DeveloperIP)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return answer{resp.StatusCode, resp.Header, b}, nil
}

// call sends a request and requires the status.
func (r *run) call(status int, what, method, path, body string, headers ...string) (answer, error) {
	a, err := r.do(method, path, body, headers...)
	if err != nil {
		return a, r.fail("%s: %v", what, err)
	}
	if a.status != status {
		return a, r.fail("%s: want HTTP %d, got %s", what, status, a.short())
	}
	return a, nil
}

func str(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func obj(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

func units(s string) money.Units {
	u, err := money.Parse(s)
	if err != nil {
		return -1
	}
	return u
}

const blockNumber = `{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}`

func batch(n, from int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(blockNumber, from+i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// poll calls cond until it reports true or the deadline passes.
// nodeStanding is the node's trust standing on chain 137 in /rpc/health.
func (r *run) nodeStanding(nodeID string) map[string]any {
	a, err := r.do(http.MethodGet, "/rpc/health", "")
	if err != nil || a.status != http.StatusOK {
		return nil
	}
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []map[string]any `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if json.Unmarshal(a.body, &h) != nil {
		return nil
	}
	for _, c := range h.Chains {
		for _, u := range c.Pool.Upstreams {
			if c.ChainID == 137 && u["name"] == nodeID {
				tv, _ := u["trust"].(map[string]any)
				return tv
			}
		}
	}
	return nil
}

func (r *run) poll(within time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(within)
	for {
		ok, err := cond()
		if err != nil {
			return r.fail("%s: %v", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return r.fail("%s: not within %s", what, within)
		}
		select {
		case <-r.ctx.Done():
			return r.fail("%s: %v", what, r.ctx.Err())
		case <-time.After(200 * time.Millisecond): // poll interval, not a synchronisation
		}
	}
}

// ---------------------------------------------------------------- chain

func (r *run) account(name string) (common.Address, *ecdsa.PrivateKey, error) {
	a, err := r.m.Account(name)
	if err != nil {
		return common.Address{}, nil, err
	}
	k, err := a.Key()
	return a.Addr(), k, err
}

func (r *run) tokenBalance(client *ethclient.Client, token string, who common.Address) (money.Units, error) {
	usdt := testusdt.NewTestUSDT() // the balanceOf ABI is ERC-20's; TestUSDC has the same
	c := usdt.Instance(client, common.HexToAddress(token))
	b, err := bind.Call(c, &bind.CallOpts{Context: r.ctx}, usdt.PackBalanceOf(who), usdt.UnpackBalanceOf)
	if err != nil {
		return 0, fmt.Errorf("balanceOf(%s): %w", who.Hex(), err)
	}
	return money.FromBig(b)
}

// send signs calldata to `to` from key on client and waits for a successful receipt.
func (r *run) send(client *ethclient.Client, key *ecdsa.PrivateKey, to common.Address, data []byte, what string) (*types.Receipt, error) {
	chainID, err := client.ChainID(r.ctx)
	if err != nil {
		return nil, err
	}
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = r.ctx
	c := bind.NewBoundContract(to, abi.ABI{}, client, client, client)
	tx, err := c.RawTransact(opts, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.StepTimeout)
	defer cancel()
	rc, err := deploy.WaitReceipt(ctx, client, tx.Hash(), 50*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if rc.Status != types.ReceiptStatusSuccessful {
		return nil, fmt.Errorf("%s: transaction %s reverted", what, tx.Hash().Hex())
	}
	return rc, nil
}

type tracked struct {
	who, asset string
	client     *ethclient.Client
	token      string
	addr       common.Address
}

func (r *run) tracked() ([]tracked, error) {
	var out []tracked
	for _, t := range []struct{ name, label, asset string }{
		{"developer-1", "developer-1 (deposits)", "USDT"},
		{"treasury", "treasury", "USDT"},
		{"platform", "platform wallet", "USDT"},
		{"pool", "pool wallet (20 %)", "USDT"},
		{"operator-1", "node operator-1", "USDT"},
		{"payer", "x402 payer", "USDC"},
		{"treasury", "x402 payTo (treasury)", "USDC"},
	} {
		a, err := r.m.Account(t.name)
		if err != nil {
			return nil, err
		}
		tr := tracked{who: t.label, asset: t.asset, addr: a.Addr(), client: r.poly, token: r.m.Polygon.USDT}
		if t.asset == "USDC" {
			tr.client, tr.token = r.base, r.m.Base.USDC
		}
		out = append(out, tr)
	}
	out = append(out, tracked{who: "ClaimsContract", asset: "USDT", addr: common.HexToAddress(r.m.Polygon.ClaimsContract),
		client: r.poly, token: r.m.Polygon.USDT})
	return out, nil
}

func (r *run) readBalances(ts []tracked) ([]money.Units, error) {
	out := make([]money.Units, len(ts))
	for i, t := range ts {
		b, err := r.tokenBalance(t.client, t.token, t.addr)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// ---------------------------------------------------------------- the walk

func (r *run) walk() error {
	s := r.sum
	gw := r.cfg.Gateway

	// 1. The stack answers; balances before.
	r.header("The stack: our Caddy with the root Caddyfile, settlementd behind it, the dev chains")
	if _, err := r.call(http.StatusOK, "GET /rpc/health", http.MethodGet, "/rpc/health", ""); err != nil {
		return err
	}
	a, err := r.call(http.StatusOK, "GET /.well-known/service.json", http.MethodGet, "/.well-known/service.json", "")
	if err != nil {
		return err
	}
	r.say("GET %s/rpc/health → 200; GET /.well-known/service.json → 200 (%d bytes)", gw, len(a.body))
	tracked, err := r.tracked()
	if err != nil {
		return err
	}
	before, err := r.readBalances(tracked)
	if err != nil {
		return r.fail("%v", err)
	}
	r.say("the developer calls from %s (X-Forwarded-For from a trusted local proxy)", r.cfg.DeveloperIP)

	// 2. Anonymous calls until the free tier runs out.
	r.header("Anonymous calls until the free tier runs out")
	a, err = r.call(http.StatusOK, "the first anonymous call", http.MethodPost, "/rpc", fmt.Sprintf(blockNumber, 1))
	if err != nil {
		return err
	}
	if a.header.Get("X-Tollgate-Payer") != "free" {
		return r.fail("first anonymous call: payer %q, want free", a.header.Get("X-Tollgate-Payer"))
	}
	left, err := strconv.ParseInt(a.header.Get("X-Tollgate-Free-Remaining"), 10, 64)
	if err != nil {
		return r.fail("X-Tollgate-Free-Remaining %q", a.header.Get("X-Tollgate-Free-Remaining"))
	}
	s.FreeCalls = 1
	limit := left + 1
	for left > 0 {
		n := min(left, 100)
		a, err := r.call(http.StatusOK, "an anonymous batch", http.MethodPost, "/rpc", batch(int(n), int(s.FreeCalls)+1))
		if err != nil {
			return err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(a.body, &items); err != nil || int64(len(items)) != n || bytes.Contains(a.body, []byte(`"error"`)) {
			return r.fail("batch of %d: %s", n, a.short())
		}
		s.FreeCalls += n
		nl, _ := strconv.ParseInt(a.header.Get("X-Tollgate-Free-Remaining"), 10, 64)
		if nl != left-n {
			return r.fail("free remaining %d after a batch of %d from %d", nl, n, left)
		}
		left = nl
		r.say("batch of %3d eth_blockNumber calls → 200, free calls used %3d/%d", n, s.FreeCalls, limit)
	}

	// 3. The 402 onboarding body.
	r.header("The next call: HTTP 402 with the x402 offer and the onboarding")
	a, err = r.call(http.StatusPaymentRequired, "the call after the free tier", http.MethodPost, "/rpc", fmt.Sprintf(blockNumber, 9999))
	if err != nil {
		return err
	}
	body := a.obj()
	accepts, _ := body["accepts"].([]any)
	ob := obj(body, "onboarding")
	if str(body, "x402Version") != "1" || len(accepts) == 0 || ob == nil {
		return r.fail("402 body: %s", a.short())
	}
	acc, _ := accepts[0].(map[string]any)
	if str(acc, "scheme") != "exact" || str(acc, "network") != "base" || str(acc, "maxAmountRequired") != "100000" ||
		!strings.EqualFold(str(acc, "asset"), r.m.Base.USDC) {
		return r.fail("402 accepts[0]: %v", acc)
	}
	examples, _ := ob["examples"].([]any)
	if len(examples) < 4 || obj(ob, "register") == nil || str(ob, "minimum_deposit_units") == "" {
		return r.fail("402 onboarding: %v", ob)
	}
	v2raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	var v2 map[string]any
	if err != nil || json.Unmarshal(v2raw, &v2) != nil || fmt.Sprint(v2["x402Version"]) != "2" {
		return r.fail("PAYMENT-REQUIRED header is not a base64 x402 v2 object")
	}
	r.say("402 %q", str(body, "error"))
	r.say("accepts: scheme exact, network base, %s USDC units to %s", str(acc, "maxAmountRequired"), str(acc, "payTo"))
	r.say("onboarding: register %s %s; deposit calldata %s; minimum deposit %s USDT; %d curl examples",
		str(obj(ob, "register"), "method"), str(obj(ob, "register"), "url"), str(obj(ob, "deposit_calldata"), "url"),
		str(ob, "minimum_deposit_usdt"), len(examples))
	_, r.x402Offered = obj(v2, "extensions")["sign-in-with-x"]
	r.say("PAYMENT-REQUIRED header: x402 v2 (network %s), sign-in-with-x offered: %v", str(firstOf(v2["accepts"]), "network"), r.x402Offered)

	// 4. Machine registration.
	r.header("Machine registration: POST /v1/machine/register")
	a, err = r.call(http.StatusCreated, "POST /v1/machine/register", http.MethodPost, "/v1/machine/register", `{"label":"demo-agent"}`)
	if err != nil {
		return err
	}
	body = a.obj()
	r.secret, s.KeyID = str(body, "api_key"), str(body, "key_id")
	s.APIKey = r.secret
	if !strings.HasPrefix(r.secret, "tg_") || !strings.HasPrefix(s.KeyID, "key_") {
		return r.fail("register answer without api_key/key_id")
	}
	r.say("201: key_id %s, api_key %s… (shown once; kept in memory, not printed)", s.KeyID, r.secret[:6])
	keyHdr := "X-API-Key: " + r.secret

	// 5. Deposit instructions.
	r.header("Deposit instructions: GET /credits/initiate?amount=" + r.cfg.DepositUSDT)
	a, err = r.call(http.StatusOK, "GET /credits/initiate", http.MethodGet, "/credits/initiate?amount="+r.cfg.DepositUSDT, "", keyHdr)
	if err != nil {
		return err
	}
	ins := a.obj()
	s.Deposit = units(r.cfg.DepositUSDT)
	if str(ins, "account") != s.KeyID || str(ins, "amount_raw") != s.Deposit.String() || str(ins, "confirmations") != "25" ||
		!strings.EqualFold(str(ins, "vault_address"), r.m.Polygon.RevenueVault) || !strings.EqualFold(str(obj(ins, "approve"), "to"), r.m.Polygon.USDT) ||
		!strings.EqualFold(str(obj(ins, "deposit"), "to"), r.m.Polygon.RevenueVault) {
		return r.fail("deposit instructions: %s", a.short())
	}
	r.say("chain %s: approve → %s (USDT), deposit → %s (RevenueVault) for account %s, %s USDT; %s confirmations",
		str(ins, "chain_id"), str(obj(ins, "approve"), "to"), str(obj(ins, "deposit"), "to"), s.KeyID, str(ins, "amount_usdt"), str(ins, "confirmations"))

	// 6. approve + deposit from developer-1, with exactly that calldata.
	r.header("developer-1 sends the approve and deposit transactions on chain 137")
	_, devKey, err := r.account("developer-1")
	if err != nil {
		return err
	}
	approveData, err1 := hexutil.Decode(str(obj(ins, "approve"), "data"))
	depositData, err2 := hexutil.Decode(str(obj(ins, "deposit"), "data"))
	if err1 != nil || err2 != nil {
		return r.fail("calldata is not hex")
	}
	ar, err := r.send(r.poly, devKey, common.HexToAddress(str(obj(ins, "approve"), "to")), approveData, "approve")
	if err != nil {
		return r.fail("%v", err)
	}
	r.say("approve tx %s mined in block %d", ar.TxHash.Hex(), ar.BlockNumber)
	dr, err := r.send(r.poly, devKey, common.HexToAddress(str(obj(ins, "deposit"), "to")), depositData, "deposit")
	if err != nil {
		return r.fail("%v", err)
	}
	vault := revenuevault.NewRevenueVault()
	var deposited bool
	for _, l := range dr.Logs {
		if ev, err := vault.UnpackDepositedEvent(l); err == nil && l.Address == common.HexToAddress(r.m.Polygon.RevenueVault) {
			deposited = ev.Amount.Cmp(s.Deposit.Big()) == 0
		}
	}
	if !deposited {
		return r.fail("deposit tx %s emitted no Deposited event for %s units", dr.TxHash.Hex(), s.Deposit)
	}
	s.DepositTx = dr.TxHash.Hex()
	r.say("deposit tx %s mined in block %d: Deposited(account=%s, amount=%s USDT)", s.DepositTx, dr.BlockNumber, s.KeyID, s.Deposit.Decimal())

	// 7. Credited after 25 confirmations.
	r.header("settlementd credits the key after 25 confirmations")
	depBlock := dr.BlockNumber.Uint64()
	lastShown := uint64(0)
	err = r.poll(r.cfg.StepTimeout, "the deposit credited", func() (bool, error) {
		a, err := r.do(http.MethodGet, "/api/keys/usage", "", keyHdr)
		if err != nil || a.status != http.StatusOK {
			return false, err
		}
		if c := units(str(a.obj(), "credits_remaining_usdt")); c == s.Deposit {
			s.Credited = c
			return true, nil
		} else if c != 0 {
			return false, fmt.Errorf("credits %s, want 0 or %s", c.Decimal(), s.Deposit.Decimal())
		}
		head, err := r.poly.BlockNumber(r.ctx)
		if conf := head - depBlock + 1; err == nil && head >= depBlock && conf/5 != lastShown/5 {
			lastShown = conf
			r.say("%2d confirmations…", conf)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	head, _ := r.poly.BlockNumber(r.ctx)
	r.say("credited: %s USDT on %s at chain head %d: %d confirmations (the deposit's block counts as the first)",
		s.Credited.Decimal(), s.KeyID, head, head-depBlock+1)

	// 8. Metered calls and the usage endpoint.
	r.header(fmt.Sprintf("%d metered calls with the key, then GET /api/keys/usage", r.cfg.PaidCalls))
	for i := range r.cfg.PaidCalls {
		a, err := r.call(http.StatusOK, "a metered call", http.MethodPost, "/rpc", fmt.Sprintf(blockNumber, i), keyHdr)
		if err != nil {
			return err
		}
		want := s.Deposit - money.Units(i+1)*money.PricePerCall
		if a.header.Get("X-Tollgate-Payer") != "credits" || units(a.header.Get("X-Tollgate-Credits-Remaining")) != want {
			return r.fail("metered call %d: payer %q, credits %q, want %s", i+1, a.header.Get("X-Tollgate-Payer"),
				a.header.Get("X-Tollgate-Credits-Remaining"), want.Decimal())
		}
	}
	s.PaidCalls = r.cfg.PaidCalls
	spent := money.Units(s.PaidCalls) * money.PricePerCall
	a, err = r.call(http.StatusOK, "GET /api/keys/usage", http.MethodGet, "/api/keys/usage", "", keyHdr)
	if err != nil {
		return err
	}
	u := a.obj()
	if units(str(u, "total_spend_usdt")) != spent || units(str(u, "credits_remaining_usdt")) != s.Deposit-spent ||
		str(u, "credits_remaining_calls") != strconv.FormatInt(int64((s.Deposit-spent)/money.PricePerCall), 10) || str(u, "key_id") != s.KeyID {
		return r.fail("usage: %s", a.short())
	}
	r.say("each call 0.00003 USDT (X-Tollgate-Payer: credits); usage: %s", strings.TrimSpace(string(a.body)))

	// 8b. The same key from an agent, over MCP.
	r.header("An agent over MCP (POST /mcp, official Go SDK client) with the same key")
	if err := r.mcp(keyHdr); err != nil {
		return err
	}
	spent += money.Units(s.MCPCalls) * money.PricePerCall

	// 9. x402.
	r.header("A keyless x402 payment by the Node client, then SIWX reuse")
	if err := r.x402(); err != nil {
		return err
	}

	// 10. Operator login.
	r.header("A node operator logs in with a wallet signature (SIWE)")
	opAddr, opKey, err := r.account("operator-1")
	if err != nil {
		return err
	}
	a, err = r.call(http.StatusOK, "POST /api/auth/challenge", http.MethodPost, "/api/auth/challenge", fmt.Sprintf(`{"wallet":%q}`, opAddr.Hex()))
	if err != nil {
		return err
	}
	msg := str(a.obj(), "message")
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), opKey)
	if err != nil {
		return err
	}
	sig[64] += 27
	lb, _ := json.Marshal(map[string]string{"message": msg, "signature": hexutil.Encode(sig)})
	a, err = r.call(http.StatusOK, "POST /api/auth/login", http.MethodPost, "/api/auth/login", string(lb))
	if err != nil {
		return err
	}
	s.OperatorJWT = str(a.obj(), "token")
	auth := "Authorization: Bearer " + s.OperatorJWT
	r.say("challenge: %q…", firstLine(msg))
	r.say("login with the EIP-191 signature → 200, a JWT for %s (not printed)", opAddr.Hex())

	// 11. Register a node: a JSON-RPC endpoint in front of the dev chain.
	r.header("The operator registers a node (its endpoint forwards to the dev chain)")
	// The node's origin serves the endpoint proof: the operator's wallet.
	node, err := startNode(r.m.Polygon.RPCURL, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/.well-known/tollgate-node" {
			http.NotFound(w, req)
			return
		}
		fmt.Fprintln(w, opAddr.Hex())
	}))
	if err != nil {
		return r.fail("start the node: %v", err)
	}
	defer node.Close()
	rb, _ := json.Marshal(map[string]any{"region": "eu-west", "rpc_url": node.URL, "chain_ids": []int{137}, "label": "demo node"})
	a, err = r.call(http.StatusCreated, "POST /api/nodes/register", http.MethodPost, "/api/nodes/register", string(rb), auth)
	if err != nil {
		return err
	}
	s.NodeID = str(a.obj(), "node_id")
	if !strings.HasPrefix(s.NodeID, "NODE-EU-WEST-") {
		return r.fail("node id %q", s.NodeID)
	}
	r.say("201: %s at %s (chain 137), status %s", s.NodeID, node.URL, str(a.obj(), "status"))

	// 12. Probation, then the ladder: the node earns traffic by answering
	// shadow copies of provider-served calls as the providers do.
	r.header(fmt.Sprintf("The node's probation (shadow answers checked against a provider), then %d paid calls it serves on the first rung of the ladder", r.cfg.NodeCalls))
	probeIP := "192.0.2.77" // a second client, on the free tier: no revenue
	began := time.Now()
	follow := []string{fmt.Sprintf(blockNumber, 1),
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",false]}`,
		`{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["` + opAddr.Hex() + `","latest"]}`}
	var standing map[string]any
	calls := 0
	err = r.poll(r.cfg.StepTimeout, "the node's probation", func() (bool, error) {
		a, err := r.do(http.MethodPost, "/rpc", follow[calls%len(follow)], "X-Forwarded-For: "+probeIP)
		calls++
		if err != nil {
			return false, err
		}
		if a.status != http.StatusOK {
			return false, fmt.Errorf("probe call: %s", a.short())
		}
		byNode := a.header.Get("X-Tollgate-Upstream") == s.NodeID
		if !byNode && calls%10 != 0 {
			return false, nil
		}
		standing = r.nodeStanding(s.NodeID)
		over := standing != nil && standing["phase"] != "probation"
		if byNode && !over {
			return false, fmt.Errorf("a caller was served by %s during its probation", s.NodeID)
		}
		return over, nil
	})
	if err != nil {
		return err
	}
	r.say("probation over after %s and %d caller calls, none served by the node: %v verified answers over %v methods; traffic share %v",
		time.Since(began).Round(100*time.Millisecond), calls, standing["verified_matches"], standing["verified_methods"], standing["traffic_share"])
	servedBefore := node.served.Load()
	paid := 0
	for byNode := 0; byNode < r.cfg.NodeCalls; {
		if paid >= 100*r.cfg.NodeCalls {
			return r.fail("the node served %d of %d paid calls", byNode, paid)
		}
		a, err := r.call(http.StatusOK, "a paid call", http.MethodPost, "/rpc", fmt.Sprintf(blockNumber, paid), keyHdr)
		if err != nil {
			return err
		}
		paid++
		if a.header.Get("X-Tollgate-Payer") != "credits" {
			return r.fail("paid call %d: payer %q", paid, a.header.Get("X-Tollgate-Payer"))
		}
		if a.header.Get("X-Tollgate-Upstream") == s.NodeID {
			byNode++
		}
	}
	s.NodeCalls, s.NodeStepCalls = r.cfg.NodeCalls, paid
	s.NodeServedByNode = node.served.Load() - servedBefore
	r.say("%d paid calls → 200; %d served by %s (X-Tollgate-Upstream), the rest by the provider; the node's endpoint received %d requests meanwhile (with probes and checks)",
		paid, s.NodeCalls, s.NodeID, s.NodeServedByNode)
	spent += money.Units(s.NodeStepCalls) * money.PricePerCall
	s.Revenue = spent + s.X402.Revenue
	waitStart := time.Now()
	lastTick := waitStart

	// 13. Epoch close and split.
	r.header("The epoch closes: revenue split 50/30/20 (epochs are 60 s; this waits for the current one)")
	nodePath := "/api/nodes/" + s.NodeID
	// The node earns half of what it served, nothing of what the provider or
	// x402 traffic earned (that half is the platform's).
	wantNode := money.Units(s.NodeCalls) * money.PricePerCall / 2
	var earn map[string]any
	err = r.poll(150*time.Second, "the node's share closed, forwarded and allocated on chain", func() (bool, error) {
		a, err := r.do(http.MethodGet, nodePath+"/earnings", "", auth)
		if err != nil || a.status != http.StatusOK {
			return false, err
		}
		earn = a.obj()
		earned := pu(earn, "total_earned_units")
		if earned > wantNode {
			return false, fmt.Errorf("the node earned %s USDT, more than half the %s USDT it served", earned.Decimal(), (2 * wantNode).Decimal())
		}
		if time.Since(lastTick) >= 10*time.Second {
			lastTick = time.Now()
			r.say("%3.0f s: earned %s USDT, claimable %s USDT, waiting for the epoch to close and settle…",
				time.Since(waitStart).Seconds(), earned.Decimal(), str(earn, "claimable_usdt"))
		}
		return str(earn, "claimable_units") == wantNode.String(), nil
	})
	if err != nil {
		return err
	}
	if err := r.economics(); err != nil {
		return err
	}

	// 14. Earnings.
	r.header("The operator's earnings: GET /api/nodes/{id}/earnings")
	if str(earn, "total_earned_units") != wantNode.String() || str(earn, "claimed_units") != "0" {
		return r.fail("earnings %v", earn)
	}
	r.say("total earned %s USDT, claimable %s USDT (allocated on chain by createClaim), claimed %s USDT, last claim %v",
		str(earn, "total_earned"), str(earn, "claimable_usdt"), str(earn, "claimed_usdt"), earn["last_claim"])

	// 15. Claim signature.
	r.header("Claim signature: POST /api/nodes/{id}/claim")
	a, err = r.call(http.StatusOK, "POST claim", http.MethodPost, nodePath+"/claim", fmt.Sprintf(`{"walletAddress":%q}`, opAddr.Hex()), auth)
	if err != nil {
		return err
	}
	cs := obj(a.obj(), "signature")
	amount := units(str(cs, "amount_usdt"))
	deadline, _ := strconv.ParseInt(str(cs, "deadline_unix"), 10, 64)
	rawSig, err := hexutil.Decode(str(cs, "signature"))
	if err != nil || amount != wantNode || str(cs, "amount_raw") != wantNode.String() || str(cs, "node_id") != s.NodeID {
		return r.fail("claim answer: %s", a.short())
	}
	signer, _, err := r.account("claim-signer")
	if err != nil {
		return err
	}
	if err := claim.Verify(claim.Domain{ChainID: 137, Contract: common.HexToAddress(r.m.Polygon.ClaimsContract)},
		claim.Claim{NodeID: s.NodeID, Amount: amount, Deadline: deadline}, rawSig, signer); err != nil {
		return r.fail("the claim signature does not verify: %v", err)
	}
	r.say("EIP-712 Claim(%s, %s USDT, deadline %s) signed by the claim signer %s", s.NodeID, amount.Decimal(), str(cs, "deadline"), signer.Hex())

	// 16. claim() on chain.
	r.header("The operator's wallet calls ClaimsContract.claim() on chain 137")
	opBefore, err := r.tokenBalance(r.poly, r.m.Polygon.USDT, opAddr)
	if err != nil {
		return r.fail("%v", err)
	}
	cc := claimscontract.NewClaimsContract()
	rc, err := r.send(r.poly, opKey, common.HexToAddress(r.m.Polygon.ClaimsContract), cc.PackClaim(rawSig, amount.Big(), big.NewInt(deadline)), "claim()")
	if err != nil {
		return r.fail("%v", err)
	}
	s.ClaimTx = rc.TxHash.Hex()
	r.say("claim tx %s mined in block %d", s.ClaimTx, rc.BlockNumber)

	// 17. The USDT arrives.
	r.header("The USDT arrives in the operator's wallet")
	opAfter, err := r.tokenBalance(r.poly, r.m.Polygon.USDT, opAddr)
	if err != nil {
		return r.fail("%v", err)
	}
	if opAfter-opBefore != amount {
		return r.fail("operator-1 received %s USDT, want %s", (opAfter - opBefore).Decimal(), amount.Decimal())
	}
	s.Claimed = amount
	err = r.poll(r.cfg.StepTimeout, "settlementd observing the Claimed event", func() (bool, error) {
		a, err := r.do(http.MethodGet, nodePath+"/earnings", "", auth)
		if err != nil || a.status != http.StatusOK {
			return false, err
		}
		earn = a.obj()
		return str(earn, "claimed_units") == amount.String() && earn["last_claim"] != nil, nil
	})
	if err != nil {
		return err
	}
	r.say("operator-1 USDT %s → %s (+%s); settlementd saw the Claimed event: claimed %s USDT, last_claim %s",
		opBefore.Decimal(), opAfter.Decimal(), amount.Decimal(), str(earn, "claimed_usdt"), str(earn, "last_claim"))

	// 18. Status, health, free-tier statistics.
	r.header("GET /api/status, /health, /stats/free-tier")
	a, err = r.call(http.StatusOK, "GET /api/status", http.MethodGet, "/api/status", "")
	if err != nil {
		return err
	}
	st := a.obj()
	if n, _ := strconv.Atoi(str(st, "nodes_online")); n < 1 {
		return r.fail("status: %s", a.short())
	}
	r.say("/api/status: nodes_online %s, requests_today %s, current epoch %s (%s), claims_paused %s",
		str(st, "nodes_online"), str(st, "requests_today"), str(obj(st, "current_epoch"), "id"), str(obj(st, "current_epoch"), "state"), str(st, "claims_paused"))
	a, err = r.call(http.StatusOK, "GET /health", http.MethodGet, "/health", "")
	if err != nil {
		return err
	}
	r.say("/health: %s", compact(a.body))
	a, err = r.call(http.StatusOK, "GET /stats/free-tier", http.MethodGet, "/stats/free-tier", "")
	if err != nil {
		return err
	}
	ft := a.obj()
	if calls, _ := strconv.ParseInt(str(ft, "total_calls_today"), 10, 64); calls < s.FreeCalls {
		return r.fail("free-tier stats count %d calls, the walkthrough alone made %d", calls, s.FreeCalls)
	}
	r.say("/stats/free-tier: %s active IPs, %s free calls today, limit %s per IP and %s per /24",
		str(ft, "active_ips_today"), str(ft, "total_calls_today"), str(ft, "daily_limit_per_ip"), str(ft, "subnet_limit"))

	// 20. Balances.
	r.header("Balances before and after")
	after, err := r.readBalances(tracked)
	if err != nil {
		return r.fail("%v", err)
	}
	a, err = r.call(http.StatusOK, "GET /api/keys/usage", http.MethodGet, "/api/keys/usage", "", keyHdr)
	if err != nil {
		return err
	}
	s.CreditsLeft = units(str(a.obj(), "credits_remaining_usdt"))
	for i, t := range tracked {
		s.Balances = append(s.Balances, Balance{Who: t.who, Asset: t.asset, Before: before[i], After: after[i]})
	}
	s.Balances = append(s.Balances, Balance{Who: "developer credits (" + s.KeyID + ")", Asset: "credits", Before: 0, After: s.CreditsLeft})
	r.table()
	return r.checkBalances()
}

func firstOf(v any) map[string]any {
	l, _ := v.([]any)
	if len(l) == 0 {
		return nil
	}
	m, _ := l[0].(map[string]any)
	return m
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return strings.TrimSpace(string(b))
	}
	s := buf.String()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// economics reads the closed epochs and checks each one's 50/30/20 split;
// their sums are the walkthrough's revenue (a fresh stack has no other).
func (r *run) economics() error {
	s := r.sum
	a, err := r.call(http.StatusOK, "GET /api/admin/economics", http.MethodGet, "/api/admin/economics?limit=100&events_limit=1", "")
	if err != nil {
		return err
	}
	var eco struct {
		Epochs []map[string]any `json:"epochs"`
	}
	d := json.NewDecoder(bytes.NewReader(a.body))
	d.UseNumber()
	if err := d.Decode(&eco); err != nil {
		return r.fail("economics: %v", err)
	}
	sort.Slice(eco.Epochs, func(i, j int) bool { return str(eco.Epochs[i], "id") < str(eco.Epochs[j], "id") })
	var total, ops, plat, pool, platOps, dist money.Units
	for _, e := range eco.Epochs {
		t, o, p, q := pu(e, "total_units"), pu(e, "operators_units"), pu(e, "platform_units"), pu(e, "pool_units")
		po, d, wh := pu(e, "platform_operators_units"), pu(e, "distributed_units"), pu(e, "withheld_units")
		if t == 0 {
			continue
		}
		// The pool also holds the shares withheld from nodes caught lying.
		wo, wp, wq := money.Split(t)
		if o != wo || p != wp || q != wq+wh {
			return r.fail("epoch %s: total %d split %d/%d/%d, want %d/%d/%d", str(e, "id"), t, o, p, q, wo, wp, wq)
		}
		if d+po+wh+pu(e, "carry_out_units") != o+pu(e, "carry_in_units") {
			return r.fail("epoch %s: shares %d + platform's operators' part %d + carry out %s != operators %d + carry in %s",
				str(e, "id"), d, po, str(e, "carry_out_units"), o, str(e, "carry_in_units"))
		}
		platOps, dist = platOps+po, dist+d
		r.say("epoch %s (%s–%s): %s calls, revenue %s USDT → operators %s, platform %s, pool %s; carry in %s, out %s",
			str(e, "id"), hhmmss(str(e, "starts_at")), hhmmss(str(e, "ends_at")), str(e, "calls"), t.Decimal(), o.Decimal(), p.Decimal(), q.Decimal(),
			pu(e, "carry_in_units").Decimal(), pu(e, "carry_out_units").Decimal())
		total, ops, plat, pool = total+t, ops+o, plat+p, pool+q
		s.Epochs++
	}
	if total != s.Revenue {
		return r.fail("closed epochs hold %s USDT of revenue, the walkthrough made %s", total.Decimal(), s.Revenue.Decimal())
	}
	s.Operators, s.Platform, s.Pool, s.PlatformOperators, s.Distributed = ops, plat, pool, platOps, dist
	r.say("total %s USDT = operators %s (50 %%) + platform %s (30 %%) + pool %s (20 %%); of the operators' half the node earned %s "+
		"(half of what it served) and the platform %s (what the provider and x402 traffic earned)",
		total.Decimal(), ops.Decimal(), plat.Decimal(), pool.Decimal(), dist.Decimal(), platOps.Decimal())
	return nil
}

func pu(m map[string]any, k string) money.Units {
	n, err := strconv.ParseInt(str(m, k), 10, 64)
	if err != nil {
		return 0
	}
	return money.Units(n)
}

func hhmmss(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("15:04:05")
}

func (r *run) table() {
	w := tabwriter.NewWriter(r.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "        account\tasset\tbefore\tafter\tchange\t")
	for _, b := range r.sum.Balances {
		sign := ""
		if b.Delta() > 0 {
			sign = "+"
		}
		fmt.Fprintf(w, "        %s\t%s\t%s\t%s\t%s%s\t\n", b.Who, b.Asset, b.Before.Decimal(), b.After.Decimal(), sign, b.Delta().Decimal())
	}
	_ = w.Flush()
}

// checkBalances: every change is exactly what the steps imply.
func (r *run) checkBalances() error {
	s := r.sum
	want := map[string]money.Units{
		"developer-1 (deposits)/USDT": -s.Deposit,
		"treasury/USDT":               s.Deposit - s.Distributed - s.Platform - s.PlatformOperators - s.Pool,
		"platform wallet/USDT":        s.Platform + s.PlatformOperators,
		"pool wallet (20 %)/USDT":     s.Pool,
		"node operator-1/USDT":        s.Claimed,
		"ClaimsContract/USDT":         s.Distributed - s.Claimed,
		"x402 payer/USDC":             -s.X402.PayerPaid,
		"x402 payTo (treasury)/USDC":  s.X402.PayerPaid,
	}
	for _, b := range s.Balances {
		k := b.Who + "/" + b.Asset
		if b.Asset == "credits" {
			if b.After != s.Deposit-money.Units(s.PaidCalls+s.MCPCalls+s.NodeStepCalls)*money.PricePerCall {
				return r.fail("credits left %s", b.After.Decimal())
			}
			continue
		}
		if w, ok := want[k]; ok && b.Delta() != w {
			return r.fail("%s %s changed by %s, want %s", b.Who, b.Asset, b.Delta().Decimal(), w.Decimal())
		}
	}
	return nil
}

// ---------------------------------------------------------------- x402

// x402 runs the x402 step. In X402Require mode every failure is an
// error. In X402Auto mode too, once the gateway offers x402 (its 402 carries
// the sign-in-with-x extension); before that, or without the client, the
// step is reported as NOT CHECKED and the walk goes on (Summary.X402.Ran is
// false).
func (r *run) x402() error {
	var err error
	if r.cfg.X402 == X402Auto && !r.x402Offered {
		err = errors.New("the gateway's 402 offers no x402 payment with sign-in-with-x (PAYMENT-REQUIRED has no extension)")
	} else {
		err = r.x402Try()
	}
	if err == nil || r.cfg.X402 != X402Auto || (r.x402Offered && !errors.Is(err, errNoClient)) {
		return err
	}
	why := err.Error()
	if len(why) > 500 {
		why = why[:500] + "…"
	}
	r.sum.X402 = X402Result{NotRunWhy: why}
	r.say("NOT CHECKED (x402 mode auto; -x402 require makes this fatal): %v", err)
	return nil
}

func (r *run) x402Try() error {
	s := r.sum
	script := filepath.Join(r.cfg.RepoRoot, "tests", "x402", "pay.mjs")
	notRun := func(why string) error { return r.fail("x402 not run: %w: %s", errNoClient, why) }
	if r.cfg.X402 == X402Off {
		s.X402.NotRunWhy = "switched off (-x402 off)"
		r.say("NOT RUN: switched off")
		return nil
	}
	if _, err := os.Stat(script); err != nil {
		return notRun("the x402 client tests/x402/pay.mjs is not in this checkout yet")
	}
	nodeBin, err := exec.LookPath(r.cfg.NodeBin)
	if err != nil {
		return notRun("Node.js (" + r.cfg.NodeBin + ") is not installed")
	}
	if _, err := os.Stat(filepath.Join(r.cfg.RepoRoot, "tests", "x402", "node_modules")); err != nil {
		return notRun("tests/x402/node_modules is missing (make node-deps)")
	}
	payer, payerKey, err := r.account("payer")
	if err != nil {
		return err
	}
	treasury, _, _ := r.account("treasury")
	pBefore, err := r.tokenBalance(r.base, r.m.Base.USDC, payer)
	if err != nil {
		return r.fail("%v", err)
	}
	tBefore, err := r.tokenBalance(r.base, r.m.Base.USDC, treasury)
	if err != nil {
		return r.fail("%v", err)
	}
	// The agent reaches the gateway from the developer's address, whose
	// free tier is used up, through a loopback proxy that says so in
	// X-Forwarded-For (as the developer's calls did).
	front, err := startFront(r.cfg.Gateway, r.cfg.DeveloperIP)
	if err != nil {
		return r.fail("start the client's proxy: %v", err)
	}
	defer front.Close()
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.StepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, script)
	cmd.Dir = r.cfg.RepoRoot
	cmd.Env = append(os.Environ(), "URL="+front.URL+"/rpc", "EVM_PRIVATE_KEY=0x"+common.Bytes2Hex(crypto.FromECDSA(payerKey)),
		fmt.Sprintf("CALLS=%d", r.cfg.X402Calls), "MODE=siwx")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r.say("URL=%s/rpc CALLS=%d MODE=siwx node tests/x402/pay.mjs (payer %s; the client's address %s has no free calls left)",
		front.URL, r.cfg.X402Calls, payer.Hex(), r.cfg.DeveloperIP)
	runErr := cmd.Run()
	line := lastLine(stdout.String())
	var res struct {
		Calls            int             `json:"calls"`
		OK               int             `json:"ok"`
		Payments         int             `json:"payments"`
		Transactions     []any           `json:"transactions"`
		BundleKeyPresent bool            `json:"bundle_key_present"`
		LastResult       json.RawMessage `json:"last_result"`
		Statuses         json.RawMessage `json:"statuses"`
	}
	if runErr != nil || json.Unmarshal([]byte(line), &res) != nil {
		return r.fail("pay.mjs: %v; its report: %s %s", runErr, line, tailStr(strings.TrimSpace(stderr.String()), 600))
	}
	r.say("pay.mjs: %s", line)
	if res.Calls != r.cfg.X402Calls || res.OK != r.cfg.X402Calls || res.Payments != 1 {
		return r.fail("pay.mjs: %d/%d calls ok with %d payments, want %d ok with exactly 1 payment", res.OK, res.Calls, res.Payments, r.cfg.X402Calls)
	}
	var pAfter, tAfter money.Units
	err = r.poll(r.cfg.StepTimeout, "the x402 settlement on chain 8453", func() (bool, error) {
		if pAfter, err = r.tokenBalance(r.base, r.m.Base.USDC, payer); err != nil {
			return false, err
		}
		tAfter, err = r.tokenBalance(r.base, r.m.Base.USDC, treasury)
		return pBefore-pAfter == money.BundlePrice, err
	})
	if err != nil {
		return err
	}
	if tAfter-tBefore != money.BundlePrice {
		return r.fail("payTo received %s USDC, want %s", (tAfter - tBefore).Decimal(), money.BundlePrice.Decimal())
	}
	s.X402 = X402Result{Ran: true, Calls: res.Calls, OK: res.OK, Payments: res.Payments, PayerPaid: pBefore - pAfter,
		BundleKey: res.BundleKeyPresent, Revenue: money.Units(res.OK) * (money.BundlePrice / money.BundleCalls)}
	r.say("1 payment of %s USDC (payer %s → %s), %d calls served, the later ones by SIWX reuse of the bundle", s.X402.PayerPaid.Decimal(),
		pBefore.Decimal(), pAfter.Decimal(), res.OK)
	return nil
}

// errNoClient: the x402 client (Node.js, tests/x402) is not available.
var errNoClient = errors.New("no x402 client")

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func tailStr(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// ---------------------------------------------------------------- the node

// opNode is the operator's node: a JSON-RPC endpoint on its own port that
// forwards to the dev chain, counting what it serves.
type opNode struct {
	URL    string
	srv    *http.Server
	served atomic.Int64
}

// wellKnown, when set, answers /.well-known/* on the node's origin (the
// endpoint proof registration asks for); everything else goes upstream.
func startNode(upstream string, wellKnown http.Handler) (*opNode, error) {
	target, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &opNode{URL: "http://" + l.Addr().String() + "/"}
	rp := httputil.NewSingleHostReverseProxy(target)
	n.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if wellKnown != nil && strings.HasPrefix(req.URL.Path, "/.well-known/") {
			wellKnown.ServeHTTP(w, req)
			return
		}
		n.served.Add(1)
		req.Host = target.Host
		rp.ServeHTTP(w, req)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.srv.Serve(l) }()
	return n, nil
}

// StartGuideNode is a node operator's node for the guide check: JSON-RPC
// forwarded to upstream (a dev chain), and a web server serving the files
// under webRoot at /.well-known/ (where the guide writes the endpoint
// proof). Served counts the JSON-RPC requests.
func StartGuideNode(upstream, webRoot string) (url string, served func() int64, stop func(), err error) {
	n, err := startNode(upstream, http.FileServer(http.Dir(webRoot)))
	if err != nil {
		return "", nil, nil, err
	}
	return n.URL, n.served.Load, n.Close, nil
}

// startFront is a loopback reverse proxy to the gateway that keeps the
// client's Host and sets X-Forwarded-For to clientIP (the stack trusts
// loopback proxies, TOLLGATE_TRUSTED_PROXIES), so a client that cannot set
// headers is seen from clientIP.
func startFront(gateway, clientIP string) (*opNode, error) {
	target, err := url.Parse(gateway)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &opNode{URL: fmt.Sprintf("http://localhost:%d", l.Addr().(*net.TCPAddr).Port)}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
		pr.Out.Header.Set("X-Forwarded-For", clientIP)
	}}
	n.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n.served.Add(1)
		rp.ServeHTTP(w, req)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.srv.Serve(l) }()
	return n, nil
}

func (n *opNode) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.srv.Shutdown(ctx)
}

// mcp is the agent's view: the MCP server lists its tools, and two tool
// calls with the developer's key (a native balance: 1 call; an ERC-20
// balance: 3 calls in one paid decision) are charged exactly their calls.
func (r *run) mcp(keyHdr string) error {
	s := r.sum
	k, v, _ := strings.Cut(keyHdr, ": ")
	hdr := http.Header{k: {v}, "X-Forwarded-For": {r.cfg.DeveloperIP}}
	client := sdk.NewClient(&sdk.Implementation{Name: "tollgate-walkthrough", Version: "1"}, nil)
	cs, err := client.Connect(r.ctx, &sdk.StreamableClientTransport{Endpoint: r.cfg.Gateway + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{hdr}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return r.fail("MCP connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(r.ctx, nil)
	if err != nil || len(tools.Tools) != 9 {
		return r.fail("MCP tools/list: %v (%v)", tools, err)
	}
	names := make([]string, len(tools.Tools))
	for i, t := range tools.Tools {
		names[i] = t.Name
	}
	r.say("protocol %s; tools: %s", cs.InitializeResult().ProtocolVersion, strings.Join(names, ", "))
	dev, _, err := r.account("developer-1")
	if err != nil {
		return err
	}
	for _, c := range []struct {
		args  map[string]any
		calls int
	}{
		{map[string]any{"chain": "polygon", "address": dev.Hex()}, 1},
		{map[string]any{"chain": "polygon", "address": dev.Hex(), "token": r.m.Polygon.USDT}, 3},
	} {
		res, err := cs.CallTool(r.ctx, &sdk.CallToolParams{Name: "get_balance", Arguments: c.args})
		if err != nil || res.IsError {
			return r.fail("MCP get_balance %v: %v %v", c.args, res, err)
		}
		s.MCPCalls += c.calls
		want := s.Deposit - money.Units(s.PaidCalls+s.MCPCalls)*money.PricePerCall
		if res.Meta["tollgate/payer"] != "credits" || fmt.Sprint(res.Meta["tollgate/credits-remaining"]) != want.Decimal() {
			return r.fail("MCP get_balance %v: _meta %v, want %s USDT left", c.args, res.Meta, want.Decimal())
		}
		out, _ := json.Marshal(res.StructuredContent)
		r.say("get_balance → %s (%d call(s), %s USDT left)", out, c.calls, want.Decimal())
	}
	return nil
}

// headerTransport adds fixed headers to every request of the MCP client.
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.h {
		req.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(req)
}
