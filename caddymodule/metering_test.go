package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// meterCaddyfile is the gateway with metering on the real Redis (under a
// key prefix of the test), chain 137 served by two fault proxies in front
// of the dev chain, and the dev chain's contracts for deposits.
const meterCaddyfile = `{
	admin {ADMIN}
	metrics
	persist_config off
	auto_https off
	@SERVERS@
}
http://127.0.0.1:{PORT} {
	log {
		format filter {
			wrap json
			request>headers>X-Api-Key replace REDACTED
			# a socket's key may come as ?key= (browsers cannot set headers on a WebSocket)
			request>uri query {
				delete key
			}
			request>headers>X-Admin-Token replace REDACTED
		}
	}
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			admin_token {env.TG_ADMIN_TOKEN}
			key_prefix @PREFIX@
			request_timeout 5s
			upstream_timeout 400ms
			max_attempts 2
			probe_interval 100ms
			breaker_failures 1000
			finality_depth 2
			upstreams {
				hedge off # metering tests count upstream calls exactly (hedge_test.go turns hedges on)
			}
			free_daily_limit @FREE@
			free_subnet_limit @SUBNET@
			rate_limit_ip @IPRATE@
			rate_limit_key @KEYRATE@
			key_create_limit @CREATE@
			ip_concurrency @CONC@
			vault_address @VAULT@
			usdt_address @USDT@
			min_deposit 1
			max_deposit 1000
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			@EXTRA@
			chain 137 {
				provider alpha @ALPHA@
				provider beta @BETA@
				@CHAIN137@
			}
		}
		respond 404
	}
}
`

type meterOpts struct {
	trusted      bool // trust X-Forwarded-For from loopback
	free, subnet int
	ipRate       string
	keyRate      string
	create       string
	conc         string
	adminToken   string // empty: admin is disabled
	prefix       string // Redis key prefix to share with another gateway; empty: a fresh one
	servers      string // a servers { } global block (listener wrappers, timeouts)
	extra        string // more tollgate options, one per line
	chain137     string // more lines in chain 137's block (method …)
	shards       int    // redis_shards (0: meteringShards)
}

// meteringShards is the gateway's redis_shards in startMetered: 1, or more
// while TestMeteringSharded re-runs tests (none runs in parallel).
var meteringShards = 1

func (o *meterOpts) defaults() {
	switch o.free {
	case 0:
		o.free = 5
	case -1: // no free tier
		o.free = 0
	}
	if o.subnet == 0 {
		o.subnet = 100
	}
	for _, p := range []*string{&o.ipRate, &o.keyRate, &o.create, &o.conc} {
		if *p == "" {
			*p = "off"
		}
	}
}

type meterEnv struct {
	net         *devnet.Devnet
	alpha, beta *faultproxy.Proxy
	gw          *caddyrun.Server
	rdb         *redis.Client
	prefix      string
	layout      balances.Layout
	caddyfile   string // as started (a test may reload a changed copy)
}

func startMetered(t *testing.T, o meterOpts) *meterEnv {
	t.Helper()
	o.defaults()
	rdb := testenv.Redis(t)
	prefix := o.prefix
	if prefix == "" {
		prefix = testenv.KeyPrefix(t)
	}
	if o.shards == 0 {
		o.shards = meteringShards
	}
	layout := balances.Layout{Prefix: prefix, Shards: o.shards}
	if layout.Sharded() {
		o.extra += fmt.Sprintf("\nredis_shards %d", o.shards)
	}
	// No settlementd runs here: stand in for its start-up check, so an
	// unknown key is unknown (401), not "recovering" (503).
	testenv.MarkRebuiltLayout(t, rdb, layout)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// A test's extra configuration may name the dev net's Base chain (a
	// second chain with its own provider and nodes).
	o.extra = strings.ReplaceAll(o.extra, "@BASE_RPC@", d.Manifest.Base.RPCURL)
	e := &meterEnv{net: d, alpha: faultproxy.New(d.Manifest.Polygon.RPCURL), beta: faultproxy.New(d.Manifest.Polygon.RPCURL),
		rdb: rdb, prefix: prefix, layout: layout}
	t.Cleanup(e.alpha.Close)
	t.Cleanup(e.beta.Close)
	payTo, _ := d.Manifest.Account("treasury")
	servers := o.servers
	if o.trusted {
		servers = "servers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t}"
	}
	cf := strings.NewReplacer("@SERVERS@", servers, "@PREFIX@", prefix, "@FREE@", fmt.Sprint(o.free), "@SUBNET@", fmt.Sprint(o.subnet),
		"@IPRATE@", o.ipRate, "@KEYRATE@", o.keyRate, "@CREATE@", o.create, "@CONC@", o.conc,
		"@VAULT@", d.Manifest.Polygon.RevenueVault, "@USDT@", d.Manifest.Polygon.USDT, "@USDC@", d.Manifest.Base.USDC,
		"@PAYTO@", payTo.Address, "@ALPHA@", e.alpha.URL(), "@BETA@", e.beta.URL(), "@EXTRA@", o.extra, "@CHAIN137@", o.chain137).Replace(meterCaddyfile)
	// The dev chain's own endpoints, for a provider a test adds in chain137.
	cf = strings.NewReplacer("@POLYRPC@", d.Manifest.Polygon.RPCURL, "@POLYWS@", d.Manifest.Polygon.WSURL).Replace(cf)
	e.caddyfile = cf
	e.gw = caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+o.adminToken)
	e.waitHealthy(t)
	return e
}

// readyWithin bounds the waits for a stack to become ready (providers
// probed healthy, a reloaded pool serving). It is generous on purpose: on a
// busy machine (a laptop compiling while the suite runs) a first probe can
// take many seconds; every wait ends as soon as its condition holds.
const readyWithin = 2 * time.Minute

func (e *meterEnv) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(readyWithin)
	for {
		resp, err := http.Get(e.gw.URL() + "/rpc/stats/polygon")
		if err != nil {
			t.Fatal(err)
		}
		var s stats
		_ = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if s.health("alpha") == "healthy" && s.health("beta") == "healthy" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("providers never healthy: %+v", s)
		}
		time.Sleep(20 * time.Millisecond) // polling observable state
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("status %d, body is not a JSON object: %v: %s", a.status, err, a.body)
	}
	return m
}

// do sends a request with headers given as "Name: value".
func (e *meterEnv) do(t *testing.T, method, path, body string, headers ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.gw.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func (e *meterEnv) rpc(t *testing.T, body string, headers ...string) answer {
	t.Helper()
	return e.do(t, http.MethodPost, "/rpc", body, headers...)
}

const blockNumber = `{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]}`

func batchOf(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// createKey registers a key over HTTP and returns (secret, key id).
func (e *meterEnv) createKey(t *testing.T) (string, string) {
	t.Helper()
	a := e.do(t, http.MethodPost, "/api/keys", `{"label":"test app","tier":"free"}`)
	if a.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", a.status, a.body)
	}
	m := a.json(t)
	return m["api_key"].(string), m["key_id"].(string)
}

// credit adds units the way settlementd's deposit listener does.
func (e *meterEnv) credit(t *testing.T, id string, units money.Units) {
	t.Helper()
	if _, _, err := balances.CreditAt(context.Background(), e.rdb, e.layout, id, units, fmt.Sprintf("0xtest:%d", time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
}

func (e *meterEnv) usage(t *testing.T, key string) map[string]any {
	t.Helper()
	a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+key)
	if a.status != http.StatusOK {
		t.Fatalf("usage: %d %s", a.status, a.body)
	}
	return a.json(t)
}

// stream decodes the whole event stream with shared/events (every shard's,
// one after the other).
func (e *meterEnv) stream(t *testing.T) []events.Event {
	t.Helper()
	var msgs []redis.XMessage
	for _, s := range e.layout.Streams() {
		m, err := e.rdb.XRange(context.Background(), s, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m...)
	}
	var out []events.Event
	for _, m := range msgs {
		evs, err := events.DecodeEntry(m.Values)
		if err != nil {
			t.Fatalf("stream entry %s: %v", m.ID, err)
		}
		out = append(out, evs...)
	}
	return out
}

// revenues waits until the asynchronous writer has put n Revenue events on
// the stream and returns them by request id.
func (e *meterEnv) revenues(t *testing.T, n int) map[string]*events.Revenue {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := map[string]*events.Revenue{}
		for _, ev := range e.stream(t) {
			if r, ok := ev.(*events.Revenue); ok {
				out[r.ID] = r
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d revenue events after 10 s, want %d", len(out), n)
		}
		time.Sleep(10 * time.Millisecond) // polling the stream
	}
}

func errorField(t *testing.T, a answer) (code, field, msg string) {
	t.Helper()
	var m struct {
		Error struct{ Code, Field, Message string }
	}
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("not a REST error body: %s", a.body)
	}
	return m.Error.Code, m.Error.Field, m.Error.Message
}

// TestFreeTier402AndOnboarding: the free tier runs out at the configured
// limit whatever X-Forwarded-For an untrusted client sends; the 402 answer
// is checked field by field, and its onboarding is followed by running its
// curl examples: register, get the deposit calldata, send it on the dev
// chain, get credited, call with the key.
func TestFreeTier402AndOnboarding(t *testing.T) {
	e := startMetered(t, meterOpts{free: 5, subnet: 100})
	for i := range 5 {
		// The gateway is not behind a trusted proxy: a forged
		// X-Forwarded-For must not buy a fresh allowance.
		a := e.rpc(t, blockNumber, fmt.Sprintf("X-Forwarded-For: 198.51.100.%d", i+1))
		if a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "free" ||
			a.header.Get("X-Tollgate-Free-Remaining") != strconv.Itoa(4-i) || !bytes.Contains(a.body, []byte(`"result"`)) {
			t.Fatalf("free call %d: %d %v %s", i+1, a.status, a.header, a.body)
		}
	}
	a := e.rpc(t, blockNumber, "X-Forwarded-For: 198.51.100.200")
	if a.status != http.StatusPaymentRequired {
		t.Fatalf("6th call: %d %s", a.status, a.body)
	}
	if a.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Fatalf("402 headers %v", a.header)
	}
	usdc := e.net.Manifest.Base.USDC
	treasury, _ := e.net.Manifest.Account("treasury")

	// The body: x402 v1 PaymentRequired plus onboarding.
	var body struct {
		X402Version *int                         `json:"x402Version"`
		Error       string                       `json:"error"`
		Accepts     []map[string]json.RawMessage `json:"accepts"`
		Onboarding  struct {
			Register            struct{ Method, URL string }
			DepositCalldata     struct{ Method, URL string } `json:"deposit_calldata"`
			MinimumDepositUSDT  json.Number                  `json:"minimum_deposit_usdt"`
			MinimumDepositUnits string                       `json:"minimum_deposit_units"`
			Price               struct {
				PerCallUSDT  json.Number `json:"per_call_usdt"`
				PerCallUnits string      `json:"per_call_units"`
				CallsPerUSDT int         `json:"calls_per_usdt"`
			}
			Examples []struct {
				Step        int
				Description string
				Command     string
			}
			Reason string
		}
	}
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.X402Version == nil || *body.X402Version != 1 || body.Error == "" || len(body.Accepts) != 1 {
		t.Fatalf("x402 v1 envelope: %s", a.body)
	}
	acc := body.Accepts[0]
	str := func(k string) string {
		var s string
		if err := json.Unmarshal(acc[k], &s); err != nil {
			t.Fatalf("accepts[0].%s is not a string: %s", k, acc[k])
		}
		return s
	}
	for k, want := range map[string]string{
		"scheme": "exact", "network": "base", "maxAmountRequired": "100000", "asset": usdc,
		"payTo": treasury.Address, "resource": e.gw.URL() + "/rpc", "mimeType": "application/json",
	} {
		if got := str(k); got != want {
			t.Errorf("accepts[0].%s = %q, want %q", k, got, want)
		}
	}
	if str("description") == "" {
		t.Error("accepts[0].description is empty")
	}
	var timeout int
	if err := json.Unmarshal(acc["maxTimeoutSeconds"], &timeout); err != nil || timeout <= 0 {
		t.Errorf("maxTimeoutSeconds %s", acc["maxTimeoutSeconds"])
	}
	var extra map[string]string
	if err := json.Unmarshal(acc["extra"], &extra); err != nil || extra["name"] != "USD Coin" || extra["version"] != "2" {
		t.Errorf("extra %s", acc["extra"])
	}
	if _, ok := acc["outputSchema"]; ok {
		t.Error("outputSchema must be omitted (x402-fetch rejects null)")
	}
	ob := body.Onboarding
	if ob.Register.Method != "POST" || ob.Register.URL != e.gw.URL()+"/v1/machine/register" ||
		ob.DepositCalldata.Method != "GET" || !strings.HasPrefix(ob.DepositCalldata.URL, e.gw.URL()+"/credits/initiate?amount=") ||
		ob.MinimumDepositUSDT.String() != "1" || ob.MinimumDepositUnits != "1000000" ||
		ob.Price.PerCallUSDT.String() != "0.00003" || ob.Price.PerCallUnits != "30" || ob.Price.CallsPerUSDT != 33333 || ob.Reason != "ip" {
		t.Fatalf("onboarding %+v", ob)
	}

	// The header: base64 of the x402 v2 PaymentRequired.
	raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatalf("PAYMENT-REQUIRED is not standard base64: %v", err)
	}
	var v2 struct {
		X402Version int `json:"x402Version"`
		Resource    struct {
			URL, Description, MimeType string
		}
		Accepts []struct {
			Scheme, Network, Amount, Asset, PayTo string
			MaxTimeoutSeconds                     int
			Extra                                 map[string]string
		}
	}
	if err := json.Unmarshal(raw, &v2); err != nil {
		t.Fatalf("PAYMENT-REQUIRED JSON: %v: %s", err, raw)
	}
	if v2.X402Version != 2 || v2.Resource.URL != e.gw.URL()+"/rpc" || v2.Resource.MimeType != "application/json" || len(v2.Accepts) != 1 {
		t.Fatalf("v2 header %s", raw)
	}
	if r := v2.Accepts[0]; r.Scheme != "exact" || r.Network != "eip155:8453" || r.Amount != "100000" || r.Asset != usdc ||
		r.PayTo != treasury.Address || r.MaxTimeoutSeconds <= 0 || r.Extra["name"] != "USD Coin" || r.Extra["version"] != "2" {
		t.Fatalf("v2 accepts %+v", r)
	}

	// The examples are complete shell commands: they parse, and they work.
	if len(ob.Examples) != 4 {
		t.Fatalf("%d examples", len(ob.Examples))
	}
	for _, ex := range ob.Examples {
		if !strings.HasPrefix(ex.Command, "curl ") || !strings.Contains(ex.Command, e.gw.URL()) {
			t.Fatalf("example %d: %q", ex.Step, ex.Command)
		}
		if out, err := exec.Command("bash", "-n", "-c", ex.Command).CombinedOutput(); err != nil {
			t.Fatalf("example %d is not valid shell: %v %s", ex.Step, err, out)
		}
	}
	run := func(step int, key string) []byte {
		t.Helper()
		cmd := exec.Command("bash", "-c", ob.Examples[step-1].Command)
		cmd.Env = append(os.Environ(), "TOLLGATE_API_KEY="+key)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("example %d: %v: %s", step, err, out)
		}
		return out
	}
	var reg struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	if err := json.Unmarshal(run(1, ""), &reg); err != nil || !meter.WellFormedKey(reg.APIKey) || accounts.Validate(reg.KeyID) != nil {
		t.Fatalf("register example: %+v %v", reg, err)
	}
	var dep struct {
		ChainID       uint64 `json:"chain_id"`
		Account       string
		AmountRaw     string `json:"amount_raw"`
		VaultAddress  string `json:"vault_address"`
		Approve       struct{ To, Data string }
		Deposit       struct{ To, Data string }
		Confirmations int
	}
	if err := json.Unmarshal(run(2, reg.APIKey), &dep); err != nil {
		t.Fatal(err)
	}
	if dep.ChainID != 137 || dep.Account != reg.KeyID || dep.AmountRaw != "1000000" || dep.Confirmations != 25 {
		t.Fatalf("deposit instructions %+v", dep)
	}
	e.checkCalldata(t, dep.Approve.To, dep.Approve.Data, dep.Deposit.To, dep.Deposit.Data, reg.KeyID, 1_000_000)
	// Send both transactions as given, from a developer wallet, and credit
	// the Deposited log as settlementd's listener does.
	logID := e.sendDeposit(t, dep.Approve.To, dep.Approve.Data, dep.Deposit.To, dep.Deposit.Data, reg.KeyID)
	if applied, _, err := balances.CreditAt(context.Background(), e.rdb, e.layout, reg.KeyID, 1_000_000, logID); err != nil || !applied {
		t.Fatalf("credit: %v %v", applied, err)
	}
	var call struct{ Result string }
	if err := json.Unmarshal(run(3, reg.APIKey), &call); err != nil || !strings.HasPrefix(call.Result, "0x") {
		t.Fatalf("rpc example: %+v %v", call, err)
	}
	d := json.NewDecoder(bytes.NewReader(run(4, reg.APIKey)))
	d.UseNumber()
	var usage map[string]any
	if err := d.Decode(&usage); err != nil {
		t.Fatal(err)
	}
	if usage["key_id"] != reg.KeyID || fmt.Sprint(usage["credits_remaining_usdt"]) != "0.99997" ||
		fmt.Sprint(usage["credits_remaining_calls"]) != "33332" || fmt.Sprint(usage["total_spend_usdt"]) != "0.00003" ||
		fmt.Sprint(usage["requests_today"]) != "1" {
		t.Fatalf("usage after the paid call: %v", usage)
	}

	// Statistics of the day.
	st := e.do(t, http.MethodGet, "/stats/free-tier", "").json(t)
	if st["active_ips_today"] != 1.0 || st["total_calls_today"] != 5.0 || st["near_limit_ips"] != 1.0 ||
		st["daily_limit_per_ip"] != 5.0 || st["subnet_limit"] != 100.0 {
		t.Fatalf("free-tier stats %v", st)
	}

	// The stream: the key, 6 debits, and (asynchronously) 6 revenue events.
	revs := e.revenues(t, 6)
	var created, freeDebits, paidDebits int
	for _, ev := range e.stream(t) {
		switch ev := ev.(type) {
		case *events.KeyCreated:
			if ev.KeyID == reg.KeyID && ev.Kind == events.KeyMachine {
				created++
			}
		case *events.Debit:
			if ev.Payer == events.PayerFree && ev.Amount == 0 && ev.Account == "" {
				freeDebits++
			}
			if ev.Payer == events.PayerCredits && ev.Amount == 30 && ev.Account == reg.KeyID {
				paidDebits++
			}
		}
	}
	if created != 1 || freeDebits != 5 || paidDebits != 1 {
		t.Fatalf("stream: %d keys, %d free debits, %d paid debits", created, freeDebits, paidDebits)
	}
	var paidRevenue money.Units
	for _, r := range revs {
		if r.Upstream != "alpha" && r.Upstream != "beta" {
			t.Errorf("revenue served by %q", r.Upstream)
		}
		paidRevenue += r.Amount
	}
	if paidRevenue != 30 {
		t.Fatalf("revenue %d units, want 30", paidRevenue)
	}
}

// checkCalldata decodes approve and deposit with the contracts' ABIs.
func (e *meterEnv) checkCalldata(t *testing.T, approveTo, approveData, depositTo, depositData, account string, units int64) {
	t.Helper()
	m := e.net.Manifest.Polygon
	if approveTo != m.USDT || depositTo != m.RevenueVault {
		t.Fatalf("approve to %s (USDT %s), deposit to %s (vault %s)", approveTo, m.USDT, depositTo, m.RevenueVault)
	}
	usdt, vault := testusdt.NewTestUSDT(), revenuevault.NewRevenueVault()
	ab := usdt.GetABI()
	data := hexutil.MustDecode(approveData)
	meth, err := ab.MethodById(data[:4])
	if err != nil || meth.Name != "approve" {
		t.Fatalf("approve calldata method %v %v", meth, err)
	}
	args, err := meth.Inputs.Unpack(data[4:])
	if err != nil || args[0].(common.Address).Hex() != m.RevenueVault || args[1].(interface{ Int64() int64 }).Int64() != units {
		t.Fatalf("approve args %v %v", args, err)
	}
	vb := vault.GetABI()
	data = hexutil.MustDecode(depositData)
	meth, err = vb.MethodById(data[:4])
	if err != nil || meth.Name != "deposit" {
		t.Fatalf("deposit calldata method %v %v", meth, err)
	}
	args, err = meth.Inputs.Unpack(data[4:])
	if err != nil {
		t.Fatal(err)
	}
	acct, err := accounts.FromBytes32(args[1].([32]byte))
	if err != nil || acct != account || args[0].(interface{ Int64() int64 }).Int64() != units {
		t.Fatalf("deposit args %v account %q %v", args, acct, err)
	}
}

// sendDeposit sends the two transactions exactly as the gateway gave them
// and returns the Deposited log's "<tx>:<index>".
func (e *meterEnv) sendDeposit(t *testing.T, approveTo, approveData, depositTo, depositData, account string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dev, _ := e.net.Manifest.Account("developer-1")
	key, err := dev.Key()
	if err != nil {
		t.Fatal(err)
	}
	client, err := ethclient.DialContext(ctx, e.net.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	chainID, _ := client.ChainID(ctx)
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = ctx
	var last *types.Receipt
	for _, tx := range []struct{ to, data string }{{approveTo, approveData}, {depositTo, depositData}} {
		c := bind.NewBoundContract(common.HexToAddress(tx.to), revenuevault.NewRevenueVault().GetABI(), client, client, client)
		sent, err := c.RawTransact(opts, hexutil.MustDecode(tx.data))
		if err != nil {
			t.Fatalf("sending to %s: %v", tx.to, err)
		}
		r, err := deploy.WaitReceipt(ctx, client, sent.Hash(), 20*time.Millisecond)
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("tx to %s failed: %v %+v", tx.to, err, r)
		}
		last = r
	}
	vault := revenuevault.NewRevenueVault()
	for _, l := range last.Logs {
		if ev, err := vault.UnpackDepositedEvent(l); err == nil {
			got, err := accounts.FromBytes32(ev.Account)
			if err != nil || got != account || ev.Amount.Int64() != 1_000_000 {
				t.Fatalf("Deposited %+v (%q)", ev, got)
			}
			return fmt.Sprintf("%s:%d", last.TxHash.Hex(), l.Index)
		}
	}
	t.Fatal("no Deposited event")
	return ""
}

// TestTrustedProxySubnetCapAndBatches: behind a trusted proxy the forwarded
// address is the caller; every item of a batch counts; the /24 cap stops a
// neighbour with allowance of its own left.
func TestTrustedProxySubnetCapAndBatches(t *testing.T) {
	e := startMetered(t, meterOpts{trusted: true, free: 5, subnet: 8})
	from := func(ip string) string { return "X-Forwarded-For: " + ip }
	a := e.rpc(t, batchOf(3), from("203.0.113.1"))
	var items []json.RawMessage
	if a.status != http.StatusOK || json.Unmarshal(a.body, &items) != nil || len(items) != 3 || a.header.Get("X-Tollgate-Free-Remaining") != "2" {
		t.Fatalf("batch of 3: %d %v %s", a.status, a.header, a.body)
	}
	// 3 more do not fit in the 2 left: refused whole, nothing forwarded.
	before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
	if a := e.rpc(t, batchOf(3), from("203.0.113.1")); a.status != http.StatusPaymentRequired {
		t.Fatalf("batch of 3 with 2 left: %d %s", a.status, a.body)
	}
	if after := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance"); after != before {
		t.Fatalf("a refused batch reached the upstream (%d calls)", after-before)
	}
	for range 2 {
		if a := e.rpc(t, blockNumber, from("203.0.113.1")); a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	if a := e.rpc(t, blockNumber, from("203.0.113.1")); a.status != http.StatusPaymentRequired || a.json(t)["onboarding"].(map[string]any)["reason"] != "ip" {
		t.Fatalf("6th call: %d %s", a.status, a.body)
	}
	for i := range 3 {
		if a := e.rpc(t, blockNumber, from("203.0.113.2")); a.status != http.StatusOK {
			t.Fatalf("neighbour call %d: %d %s", i+1, a.status, a.body)
		}
	}
	a = e.rpc(t, blockNumber, from("203.0.113.2"))
	if a.status != http.StatusPaymentRequired || a.json(t)["onboarding"].(map[string]any)["reason"] != "subnet" {
		t.Fatalf("neighbour past the /24 cap: %d %s", a.status, a.body)
	}
	// Another /24 is untouched; invalid batch items are answered but not metered.
	a = e.rpc(t, `[`+blockNumber+`,{"jsonrpc":"2.0","id":9}]`, from("203.0.114.1"))
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "4" || !bytes.Contains(a.body, []byte("-32600")) {
		t.Fatalf("other /24: %d %v %s", a.status, a.header, a.body)
	}
	otherReq := a.header.Get("X-Tollgate-Request-Id")
	st := e.do(t, http.MethodGet, "/stats/free-tier", "").json(t)
	if st["active_ips_today"] != 3.0 || st["total_calls_today"] != 9.0 || st["near_limit_ips"] != 1.0 || st["near_limit_threshold"] != 4.0 {
		t.Fatalf("stats %v", st)
	}
	// A batch naming different methods is one revenue event labelled "batch";
	// a batch whose one valid call is eth_blockNumber is labelled with it.
	// (eth_gasPrice, not eth_chainId: the gateway answers that itself, free.)
	gasPriceCall := `{"jsonrpc":"2.0","id":8,"method":"eth_gasPrice","params":[]}`
	a = e.rpc(t, `[`+blockNumber+`,`+gasPriceCall+`]`, from("203.0.115.1"))
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "3" {
		t.Fatalf("mixed batch: %d %v %s", a.status, a.header, a.body)
	}
	mixedReq := a.header.Get("X-Tollgate-Request-Id")
	for deadline := time.Now().Add(10 * time.Second); ; {
		revs := e.revenues(t, 1)
		mixed, other := revs[mixedReq], revs[otherReq]
		if mixed != nil && other != nil {
			if mixed.Method != events.MethodBatch || mixed.Calls != 2 || mixed.EpochID != events.EpochOf(mixed.Time()) ||
				other.Method != "eth_blockNumber" || other.Calls != 1 {
				t.Fatalf("revenue of the mixed batch %+v, of the batch with one valid call %+v", mixed, other)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revenue events of %s and %s never arrived", mixedReq, otherReq)
		}
		time.Sleep(10 * time.Millisecond) // polling the stream
	}

	// A call answered from the edge cache is metered like any other, and its
	// revenue event names "cache" as the server.
	block1 := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x1",false]}`
	deadline := time.Now().Add(10 * time.Second)
	var cached answer
	for i := 1; ; i++ {
		// Block 1 is cacheable once it is final (2 blocks deep); a fresh
		// address per try keeps the polling clear of the free-tier limit.
		cached = e.rpc(t, block1, from(fmt.Sprintf("198.18.%d.1", i)))
		if cached.status != http.StatusOK {
			t.Fatalf("block 1: %d %s", cached.status, cached.body)
		}
		if cached.header.Get("X-Tollgate-Upstream") == "cache" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("block 1 was never served from the cache")
		}
		time.Sleep(20 * time.Millisecond) // polling the chain's progress
	}
	revs := e.revenues(t, 1)
	deadline = time.Now().Add(10 * time.Second)
	for revs[cached.header.Get("X-Tollgate-Request-Id")] == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling the stream
		revs = e.revenues(t, 1)
	}
	if r := revs[cached.header.Get("X-Tollgate-Request-Id")]; r == nil || r.Upstream != "cache" || r.Payer != events.PayerFree || r.Amount != 0 || r.Calls != 1 {
		t.Fatalf("revenue of the cached call: %+v", r)
	}
}

// TestKeyCreationValidationAndUsage covers POST /api/keys and
// /v1/machine/register input checking, hash-only storage, the usage
// endpoint's 401s and the per-IP creation limit.
func TestKeyCreationValidationAndUsage(t *testing.T) {
	e := startMetered(t, meterOpts{create: "3 1h"})
	long := strings.Repeat("x", 65)
	cases := []struct {
		path, body, field string
	}{
		{"/api/keys", `not json`, "body"},
		{"/api/keys", `["label"]`, "body"},
		{"/api/keys", `{"label":"a","tier":"free"} {}`, "body"},
		{"/api/keys", `{}`, "label"},
		{"/api/keys", `{"label":"","tier":"free"}`, "label"},
		{"/api/keys", `{"label":"   ","tier":"free"}`, "label"},
		{"/api/keys", `{"label":"` + long + `","tier":"free"}`, "label"},
		{"/api/keys", `{"label":42,"tier":"free"}`, "label"},
		{"/api/keys", `{"label":"a\u0007b","tier":"free"}`, "label"},
		{"/api/keys", `{"label":"a","label":"b","tier":"free"}`, "label"},
		{"/api/keys", `{"label":"app"}`, "tier"},
		{"/api/keys", `{"label":"app","tier":"pro"}`, "tier"},
		{"/api/keys", `{"label":"app","tier":null}`, "tier"},
		{"/api/keys", `{"label":"app","tier":"free","email":"not-an-email"}`, "email"},
		{"/api/keys", `{"label":"app","tier":"free","email":"Dev <dev@example.com>"}`, "email"},
		{"/api/keys", `{"label":"app","tier":"free","email":7}`, "email"},
		{"/api/keys", `{"label":"app","tier":"free","email_consent":"yes"}`, "email_consent"},
		{"/api/keys", `{"label":"app","tier":"free","email_consent":true}`, "email_consent"},
		{"/api/keys", `{"label":"app","tier":"free","plan":"gold"}`, "plan"},
		{"/v1/machine/register", `{}`, "label"},
		{"/v1/machine/register", `{"label":"bot","tier":"free"}`, "tier"},
		{"/v1/machine/register", `{"label":"bot","email":"a@b.co"}`, "email"},
	}
	for _, c := range cases {
		a := e.do(t, http.MethodPost, c.path, c.body)
		code, field, msg := errorField(t, a)
		if a.status != http.StatusBadRequest || field != c.field || !strings.Contains(msg, c.field) || code == "" {
			t.Errorf("POST %s %s: %d field %q code %q message %q", c.path, c.body, a.status, field, code, msg)
		}
	}
	if a := e.do(t, http.MethodGet, "/api/keys", ""); a.status != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/keys: %d", a.status)
	}

	a := e.do(t, http.MethodPost, "/api/keys", `{"label":"my app","tier":"free","email":"dev@example.com","email_consent":true}`)
	if a.status != http.StatusCreated || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	m := a.json(t)
	secret, id := m["api_key"].(string), m["key_id"].(string)
	if !meter.WellFormedKey(secret) || accounts.Validate(id) != nil || m["tier"] != "free" {
		t.Fatalf("created %v", m)
	}
	// Only the SHA-256 of the key is in Redis, under any name or value.
	if where := scanRedis(t, e.rdb, e.prefix, secret); where != "" {
		t.Fatalf("the plaintext key is stored in Redis (%s)", where)
	}
	if where := scanRedis(t, e.rdb, e.prefix, meter.HashKey(secret)); where == "" {
		t.Fatal("the key's hash is not stored")
	}

	// Usage: 401 for a missing, malformed, unknown or revoked key.
	unknown, _ := meter.NewKey()
	for name, hdr := range map[string][]string{
		"missing": nil, "empty": {"X-API-Key: "}, "malformed": {"X-API-Key: hello"}, "unknown": {"X-API-Key: " + unknown},
	} {
		a := e.do(t, http.MethodGet, "/api/keys/usage", "", hdr...)
		if code, _, _ := errorField(t, a); a.status != http.StatusUnauthorized || code == "" {
			t.Errorf("%s key: %d %s", name, a.status, a.body)
		}
	}
	u := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+secret)
	if u.status != http.StatusOK || bytes.Contains(u.body, []byte(secret)) {
		t.Fatalf("usage: %d %s", u.status, u.body)
	}
	var usage map[string]any
	dec := json.NewDecoder(bytes.NewReader(u.body))
	dec.UseNumber()
	_ = dec.Decode(&usage)
	want := map[string]string{"key_id": id, "tier": "free", "daily_limit": "5", "requests_today": "0",
		"total_spend_usdt": "0", "credits_remaining_usdt": "0", "credits_remaining_calls": "0", "method_weights": "map[]"}
	if len(usage) != len(want) {
		t.Errorf("usage has fields %v", usage)
	}
	for k, v := range want {
		if fmt.Sprint(usage[k]) != v {
			t.Errorf("usage %s = %v, want %s", k, usage[k], v)
		}
	}
	if err := e.rdb.HSet(context.Background(), e.layout.Account(id), balances.FieldStatus, balances.StatusRevoked).Err(); err != nil {
		t.Fatal(err)
	}
	if a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+secret); a.status != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber, "X-API-Key: "+secret); a.status != http.StatusUnauthorized || !bytes.Contains(a.body, []byte("-32001")) {
		t.Fatalf("/rpc with a revoked key: %d %s", a.status, a.body)
	}

	// The creation limit (3 per hour here): the one above and two machines.
	for i := range 2 {
		a := e.do(t, http.MethodPost, "/v1/machine/register", fmt.Sprintf(`{"label":"bot %d"}`, i))
		if a.status != http.StatusCreated || a.json(t)["kind"] != "machine" {
			t.Fatalf("machine %d: %d %s", i, a.status, a.body)
		}
	}
	a = e.do(t, http.MethodPost, "/v1/machine/register", `{"label":"bot 3"}`)
	ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
	if code, _, _ := errorField(t, a); a.status != http.StatusTooManyRequests || code != "rate_limited" || ra < 3000 || ra > 3600 {
		t.Fatalf("4th creation: %d Retry-After %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
}

// scanRedis looks for needle in every key name and value under prefix.
func scanRedis(t *testing.T, rdb *redis.Client, prefix, needle string) string {
	t.Helper()
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if strings.Contains(k, needle) {
			return "key " + k
		}
		var blob any
		switch rdb.Type(ctx, k).Val() {
		case "string":
			blob = rdb.Get(ctx, k).Val()
		case "hash":
			blob = rdb.HGetAll(ctx, k).Val()
		case "set":
			blob = rdb.SMembers(ctx, k).Val()
		case "zset":
			blob = rdb.ZRange(ctx, k, 0, -1).Val()
		case "stream":
			blob = rdb.XRange(ctx, k, "-", "+").Val()
		}
		if strings.Contains(fmt.Sprint(blob), needle) {
			return "value of " + k
		}
	}
	return ""
}

// TestCreditsRefundAndRevenue: a funded key pays 30 units per call and 300
// for a batch of 10, falls back to the free tier and then gets 402; calls
// the upstream fails are refunded exactly; the revenue events name the
// serving upstream and add up to what was spent.
func TestCreditsRefundAndRevenue(t *testing.T) {
	e := startMetered(t, meterOpts{free: 2, subnet: 100})
	secret, id := e.createKey(t)
	key := "X-API-Key: " + secret
	e.credit(t, id, 330)

	a := e.rpc(t, blockNumber, key)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" || a.header.Get("X-Tollgate-Credits-Remaining") != "0.0003" {
		t.Fatalf("paid call: %d %v %s", a.status, a.header, a.body)
	}
	singleReq := a.header.Get("X-Tollgate-Request-Id")
	a = e.rpc(t, batchOf(10), key)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Credits-Remaining") != "0" {
		t.Fatalf("paid batch: %d %v %s", a.status, a.header, a.body)
	}
	batchReq := a.header.Get("X-Tollgate-Request-Id")
	if u := e.usage(t, secret); u["credits_remaining_usdt"] != 0.0 || u["total_spend_usdt"] != 0.00033 || u["requests_today"] != 11.0 {
		t.Fatalf("usage %v", u)
	}
	// Empty: the key draws on its IP's free allowance, then gets 402.
	for range 2 {
		if a := e.rpc(t, blockNumber, key); a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "free" {
			t.Fatalf("fallback: %d %v %s", a.status, a.header, a.body)
		}
	}
	a = e.rpc(t, blockNumber, key)
	if a.status != http.StatusPaymentRequired || !strings.Contains(a.json(t)["error"].(string), "No credits left") {
		t.Fatalf("empty key, no free calls: %d %s", a.status, a.body)
	}

	// Refund: every provider fails, so nothing is served and nothing is charged.
	e.credit(t, id, 300)
	e.alpha.SetMode(faultproxy.Fail502)
	e.beta.SetMode(faultproxy.Fail502)
	a = e.rpc(t, batchOf(10), key)
	if a.status != http.StatusServiceUnavailable || !bytes.Contains(a.body, []byte("-32603")) {
		t.Fatalf("all providers failing: %d %s", a.status, a.body)
	}
	failedReq := a.header.Get("X-Tollgate-Request-Id")
	if a.header.Get("X-Tollgate-Credits-Remaining") != "0.0003" {
		t.Fatalf("remaining after refund: %v", a.header)
	}
	if u := e.usage(t, secret); u["credits_remaining_usdt"] != 0.0003 || u["total_spend_usdt"] != 0.00033 {
		t.Fatalf("usage after refund %v", u)
	}
	e.alpha.SetMode(faultproxy.Pass)
	e.beta.SetMode(faultproxy.Pass)
	e.waitHealthy(t)
	if a := e.rpc(t, blockNumber, key); a.status != http.StatusOK || a.header.Get("X-Tollgate-Credits-Remaining") != "0.00027" {
		t.Fatalf("after recovery: %d %v %s", a.status, a.header, a.body)
	}

	// Served requests: 1 + 1 (batch) + 2 free + 1 = 5 revenue events.
	revs := e.revenues(t, 5)
	if _, ok := revs[failedReq]; ok {
		t.Fatal("the failed request recorded revenue")
	}
	var refund *events.Refund
	var debited, revenue money.Units
	for _, ev := range e.stream(t) {
		switch ev := ev.(type) {
		case *events.Refund:
			refund = ev
		case *events.Debit:
			debited += ev.Amount
		}
	}
	for _, r := range revs {
		revenue += r.Amount
		if r.Account != id || (r.Payer == events.PayerCredits) != (r.Amount > 0) || (r.Upstream != "alpha" && r.Upstream != "beta") ||
			r.EpochID != events.EpochOf(r.Time()) || r.EpochID == 0 {
			t.Errorf("revenue event %+v", r)
		}
	}
	// One event per HTTP request, labelled with its method: a single call's
	// own, a batch of one method's that method.
	if r := revs[singleReq]; r == nil || r.Method != "eth_blockNumber" || r.Calls != 1 {
		t.Errorf("revenue of the single call: %+v", r)
	}
	if r := revs[batchReq]; r == nil || r.Method != "eth_getBalance" || r.Calls != 10 {
		t.Errorf("revenue of the batch: %+v", r)
	}
	if refund == nil || refund.ID != failedReq || refund.Amount != 300 || refund.Calls != 10 || refund.Account != id {
		t.Fatalf("refund event %+v", refund)
	}
	// Revenue = debits − refunds = what left the balance (330 + 300 − 270).
	if revenue != 360 || debited-refund.Amount != revenue {
		t.Fatalf("revenue %d, debits %d, refund %d", revenue, debited, refund.Amount)
	}
	if u := e.usage(t, secret); u["total_spend_usdt"] != 0.00036 {
		t.Fatalf("spent %v, want 0.00036", u["total_spend_usdt"])
	}
	// The access log prints request headers; the log filter of the
	// Caddyfile (as in the root Caddyfile) keeps the key out.
	if out := e.gw.Output(); strings.Contains(out, secret) || !strings.Contains(out, `"X-Api-Key":"REDACTED"`) {
		t.Fatalf("the API key leaked into Caddy's output, or the access log is missing")
	}
}

// TestConcurrentSpendOverHTTP races many clients of one key through the
// real gateway: every 200 was paid for (upstream calls = answers = debits),
// and the balance ends between 0 and one call's price, never below zero.
func TestConcurrentSpendOverHTTP(t *testing.T) {
	// Every call must be served or refused for money, never lost to a slow
	// upstream on a loaded machine: the attempt timeout is generous here.
	e := startMetered(t, meterOpts{free: -1, extra: "upstreams {\n\t\t\t\ttimeout 5s\n\t\t\t}"})
	secret, id := e.createKey(t)
	const initial = 30*300 + 29
	e.credit(t, id, initial)
	before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
	var mu sync.Mutex
	status := map[int]int{}
	var wg sync.WaitGroup
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				a := e.rpc(t, getBalance, "X-API-Key: "+secret)
				mu.Lock()
				status[a.status]++
				mu.Unlock()
				if a.status != http.StatusOK {
					return
				}
			}
		}()
	}
	wg.Wait()
	served := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance") - before
	bal, err := balances.BalanceAt(context.Background(), e.rdb, e.layout, id)
	if err != nil {
		t.Fatal(err)
	}
	// Every upstream call is a paid read or a hedge of one (billed once).
	hedges := int(e.hedges(t)["hedges_sent"])
	if status[http.StatusOK] != 300 || status[http.StatusPaymentRequired] != 24 || len(status) != 2 || served != 300+hedges || bal != 29 {
		t.Fatalf("answers %v, upstream calls %d (%d hedges), balance %d", status, served, hedges, bal)
	}
	var debits int
	for _, ev := range e.stream(t) {
		if d, ok := ev.(*events.Debit); ok && d.Payer == events.PayerCredits && d.Amount == 30 {
			debits++
		}
	}
	if debits != 300 {
		t.Fatalf("%d debit events for 300 paid calls", debits)
	}
}

// TestDepositInstructions covers /credits/initiate and its alias.
func TestDepositInstructions(t *testing.T) {
	e := startMetered(t, meterOpts{})
	secret, id := e.createKey(t)
	for _, c := range []struct {
		query   string
		headers []string
		status  int
		code    string
	}{
		{"?amount=5", nil, 400, "missing_account"},
		{"?amount=5&key_id=nope", nil, 400, "invalid_key_id"},
		{"?amount=5&key_id=" + accounts.NewID(), nil, 404, "unknown_account"},
		{"?key_id=" + id, nil, 400, "missing_amount"},
		{"?amount=abc&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount=-1&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount=1.0000001&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount=1e3&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount=0.5&key_id=" + id, nil, 400, "below_minimum"},
		{"?amount=1000.000001&key_id=" + id, nil, 400, "above_maximum"},
		{"?amount=5", []string{"X-API-Key: tg_bad"}, 401, "invalid_api_key"},
		{"?amount=5&key_id=" + accounts.NewID(), []string{"X-API-Key: " + secret}, 400, "conflicting_account"},
		{"?amount=5&amount_units=5000000&key_id=" + id, nil, 400, "conflicting_amount"},
		{"?amount_units=1.5&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount_units=-5&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount_units=99999999999999999999&key_id=" + id, nil, 400, "invalid_amount"},
		{"?amount_units=999999&key_id=" + id, nil, 400, "below_minimum"},
		{"?amount_units=1000000001&key_id=" + id, nil, 400, "above_maximum"},
	} {
		a := e.do(t, http.MethodGet, "/credits/initiate"+c.query, "", c.headers...)
		if code, _, _ := errorField(t, a); a.status != c.status || code != c.code {
			t.Errorf("%s %v: %d %s", c.query, c.headers, a.status, a.body)
		}
	}
	a := e.do(t, http.MethodGet, "/credits/initiate?amount=5", "")
	if _, _, msg := errorField(t, a); !strings.Contains(msg, "X-API-Key") || !strings.Contains(msg, "key_id") {
		t.Errorf("the missing-account message must explain both ways: %q", msg)
	}
	// Base units sent as whole USDT: refused, and the message names the unit
	// it read and the parameter that takes base units.
	a = e.do(t, http.MethodGet, "/credits/initiate?amount=1000000&key_id="+id, "")
	if code, _, msg := errorField(t, a); code != "above_maximum" || !strings.Contains(msg, "1000000 USDT") || !strings.Contains(msg, "amount_units") {
		t.Errorf("a base-unit amount sent as amount: %d %q", a.status, msg)
	}
	for _, path := range []string{"/credits/initiate?amount=2.5", "/credits/deposit/initiate?amount=2.5&key_id=" + id,
		"/credits/initiate?amount_units=2500000&key_id=" + id} {
		var hdr []string
		if !strings.Contains(path, "key_id") {
			hdr = []string{"X-API-Key: " + secret}
		}
		a := e.do(t, http.MethodGet, path, "", hdr...)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
		var dep map[string]any
		dec := json.NewDecoder(bytes.NewReader(a.body))
		dec.UseNumber()
		_ = dec.Decode(&dep)
		m := e.net.Manifest.Polygon
		if fmt.Sprint(dep["chain_id"]) != "137" || dep["vault_address"] != m.RevenueVault || dep["usdt_address"] != m.USDT ||
			dep["account"] != id || fmt.Sprint(dep["amount_usdt"]) != "2.5" || dep["amount_raw"] != "2500000" ||
			fmt.Sprint(dep["confirmations"]) != "25" || dep["explorer_url"] != "https://polygonscan.com/address/"+m.RevenueVault {
			t.Fatalf("%s: %v", path, dep)
		}
		ap, de := dep["approve"].(map[string]any), dep["deposit"].(map[string]any)
		e.checkCalldata(t, ap["to"].(string), ap["data"].(string), de["to"].(string), de["data"].(string), id, 2_500_000)
		// transactions: the same two, in order, each complete.
		txs, _ := dep["transactions"].([]any)
		if len(txs) != 2 || dep["amount_units"] != "2500000" {
			t.Fatalf("%s: transactions %v amount_units %v", path, dep["transactions"], dep["amount_units"])
		}
		for i, want := range []map[string]any{ap, de} {
			tx := txs[i].(map[string]any)
			if fmt.Sprint(tx["step"]) != fmt.Sprint(i+1) || fmt.Sprint(tx["chain_id"]) != "137" || tx["value"] != "0x0" ||
				tx["to"] != want["to"] || tx["data"] != want["data"] {
				t.Fatalf("%s: transaction %d %v", path, i+1, tx)
			}
		}
	}
}

// TestRateAndConcurrencyLimits: 429 with Retry-After and -32005 past the
// per-IP rate; the per-IP in-flight cap.
func TestRateAndConcurrencyLimits(t *testing.T) {
	e := startMetered(t, meterOpts{free: 100, ipRate: "3 1m 3", conc: "2"})
	for i := range 3 {
		if a := e.rpc(t, blockNumber); a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, a.status, a.body)
		}
	}
	a := e.rpc(t, blockNumber)
	var m struct {
		ID    json.RawMessage
		Error struct {
			Code int
			Data struct {
				RetryAfter int `json:"retry_after"`
			}
		}
	}
	ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
	if a.status != http.StatusTooManyRequests || json.Unmarshal(a.body, &m) != nil || m.Error.Code != -32005 ||
		string(m.ID) != "7" || ra < 1 || ra > 20 || m.Error.Data.RetryAfter != ra {
		t.Fatalf("4th call: %d Retry-After %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	// A funded key is limited on its own rate (off here), not the IP's; the
	// in-flight cap still applies to its address.
	secret, id := e.createKey(t)
	e.credit(t, id, 30_000)
	e.alpha.SetDelay(300 * time.Millisecond)
	e.beta.SetDelay(300 * time.Millisecond)
	// eth_getBalance, which health probes never send, so the proxies' counts are ours.
	before := e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance")
	var wg sync.WaitGroup
	results := make([]answer, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.rpc(t, getBalance, "X-API-Key: "+secret)
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.alpha.Calls("eth_getBalance")+e.beta.Calls("eth_getBalance") < before+2 {
		if time.Now().After(deadline) {
			t.Fatal("the two slow calls never reached the upstream")
		}
		time.Sleep(5 * time.Millisecond) // polling the proxies' counters
	}
	third := e.rpc(t, getBalance, "X-API-Key: "+secret)
	wg.Wait()
	if third.status != http.StatusTooManyRequests || third.header.Get("Retry-After") == "" || !bytes.Contains(third.body, []byte("-32005")) {
		t.Fatalf("3rd concurrent call: %d %s", third.status, third.body)
	}
	for i, r := range results {
		if r.status != http.StatusOK {
			t.Fatalf("slow call %d: %d %s", i, r.status, r.body)
		}
	}
}

// TestRedisDownFailsClosed: without Redis nothing is served for free and
// nothing paid is served unbooked: 503 (-32603 on /rpc), never 500, and the
// Redis password stays out of the logs.
func TestRedisDownFailsClosed(t *testing.T) {
	const pass = "s3cr3t-meter-pass-41b2"
	gw := caddyrun.Start(t, `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
			usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
			x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
		}
	}
}
`, "TG_REDIS_URL=redis://:"+pass+"@127.0.0.1:1/0")
	e := &meterEnv{gw: gw}
	key, _ := meter.NewKey()
	for _, c := range []struct {
		method, path, body string
		headers            []string
		rpc                bool
	}{
		{"POST", "/rpc", blockNumber, nil, true},
		{"POST", "/rpc", blockNumber, []string{"X-API-Key: " + key}, true},
		{"POST", "/rpc", batchOf(3), nil, true},
		{"POST", "/api/keys", `{"label":"a","tier":"free"}`, nil, false},
		{"POST", "/v1/machine/register", `{"label":"a"}`, nil, false},
		{"GET", "/api/keys/usage", "", []string{"X-API-Key: " + key}, false},
		{"GET", "/stats/free-tier", "", nil, false},
		{"GET", "/credits/initiate?amount=5&key_id=" + accounts.NewID(), "", nil, false},
	} {
		a := e.do(t, c.method, c.path, c.body, c.headers...)
		if a.status != http.StatusServiceUnavailable {
			t.Errorf("%s %s: %d %s", c.method, c.path, a.status, a.body)
			continue
		}
		if c.rpc && !bytes.Contains(a.body, []byte(`"code":-32603`)) {
			t.Errorf("%s %s: %s", c.method, c.path, a.body)
		}
		if !c.rpc {
			if code, _, _ := errorField(t, a); code != "unavailable" {
				t.Errorf("%s %s: %s", c.method, c.path, a.body)
			}
		}
	}
	if strings.Contains(gw.Output(), pass) {
		t.Fatal("the Redis password is in Caddy's output")
	}
	if !strings.Contains(gw.Output(), "metering unavailable") {
		t.Fatalf("the failure was not logged:\n%s", gw.Output())
	}
}

// The gateway packs the revenue events of concurrent calls into shared
// stream entries (at most 32 each), every event once; `event_pack off`
// writes one event per entry, as a settlementd from before packing reads.
func TestRevenueEventsPacked(t *testing.T) {
	for _, c := range []struct {
		extra  string
		packed bool
	}{{"", true}, {"metering {\n\t\t\t\tevent_pack off\n\t\t\t}", false}} {
		e := startMetered(t, meterOpts{free: -1, extra: c.extra})
		secret, id := e.createKey(t)
		e.credit(t, id, 100*30)
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				for range 10 {
					if a := e.rpc(t, getBalance, "X-API-Key: "+secret); a.status != http.StatusOK {
						t.Errorf("call: %d %s", a.status, a.body)
						return
					}
				}
			})
		}
		wg.Wait()
		e.revenues(t, 100)
		seen := map[string]int{}
		entries, largest := 0, 0
		for _, s := range e.layout.Streams() {
			msgs, err := e.rdb.XRange(context.Background(), s, "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Values["t"] != events.TypeRevenue {
					continue
				}
				evs, err := events.DecodeEntry(m.Values)
				if err != nil {
					t.Fatal(err)
				}
				entries, largest = entries+1, max(largest, len(evs))
				for _, ev := range evs {
					seen[ev.EventID()]++
				}
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("revenue event %s written %d times", id, n)
			}
		}
		if len(seen) != 100 || largest > 32 || (c.packed && entries >= 100) || (!c.packed && (entries != 100 || largest != 1)) {
			t.Fatalf("%q: %d revenue events in %d entries (largest %d)", c.extra, len(seen), entries, largest)
		}
		t.Logf("%q: 100 revenue events in %d stream entries, the largest holding %d", c.extra, entries, largest)
	}
}
