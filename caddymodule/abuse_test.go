package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// abuseCaddyfile: metering on (real Redis, a free tier large enough for the
// test), two providers in front of the real dev chain, and a breaker that
// opens after 3 failures — so a rule book that blamed upstreams for the
// callers' errors would open it within the first handful of bad calls.
// X-Forwarded-For is trusted from loopback, so the calls come from many
// client addresses. Chain 1 is served by a double (odd) whose error
// answers are written with escapes our encoder would not choose.
const abuseCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
	servers {
		trusted_proxies static 127.0.0.1/32
	}
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			admin_token {env.TG_ADMIN_TOKEN}
			key_prefix @PREFIX@
			request_timeout 10s
			upstream_timeout 3s
			max_attempts 2
			probe_interval 200ms
			breaker_failures 3
			breaker_open_for 30s
			free_daily_limit 10000000
			free_subnet_limit 100000000
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
				provider alpha @ALPHA@
				provider beta @BETA@
			}
			chain 1 {
				provider odd @ODD@
			}
		}
		respond 404
	}
}
`

// badCall is a call any anonymous caller can make that the node refuses.
type badCall struct {
	kind, method, params string
	want                 json.RawMessage // the dev chain's own error object, asked directly
	// nested: the node answers with a result carrying the error inside
	// (eth_simulateV1's per-call -32015); the answer must hold this code.
	nested string
	// local: the gateway refuses the call itself, before metering (free,
	// no revenue event).
	local bool
}

// TestCallerErrorsNeverTakeAChainDown is a property test: for
// every method the gateway serves, and for every error class a stranger
// can make the node answer (-32000, -32602, -32603 with eth_simulateV1's
// max nonce and block number overflow, execution reverted, -32015, header
// not found, an unknown block hash, unknown methods and filters, malformed
// and unaffordable transactions…), 50 anonymous calls each from many client
// addresses, sent concurrently with honest traffic through the real Caddy,
// Redis and two upstreams in front of the dev chain. Then: no upstream
// records a failure, every breaker stays closed, every honest call gets
// 200 with a result, every bad call gets the node's own error object byte
// for byte (with the caller's id), and every one of them is charged (one
// call in its revenue event, served by the provider that answered). The
// breaker is live: real 502s open it.
func TestCallerErrorsNeverTakeAChainDown(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	layout := balances.Layout{Prefix: prefix, Shards: 1}
	testenv.MarkRebuiltLayout(t, rdb, layout)
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	alpha, beta := faultproxy.New(m.Polygon.RPCURL), faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(alpha.Close)
	t.Cleanup(beta.Close)
	odd := newOddNode(t)
	payTo, _ := m.Account("treasury")
	const token = "abuse-admin-token-0123456789"
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", payTo.Address, "@ALPHA@", alpha.URL(), "@BETA@", beta.URL(), "@ODD@", odd.URL).Replace(abuseCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+token)
	env := &meterEnv{gw: gw, rdb: rdb, prefix: prefix, layout: layout}
	env.waitHealthy(t)

	calls := append(badCalls(t, m), everyMethodBadCalls(t)...)
	for i := range calls {
		if calls[i].method == "eth_getLogs" || calls[i].method == "eth_newFilter" {
			// A filter the gateway cannot read is refused before metering
			// (max_block_range applies to every eth_getLogs, and to every
			// eth_newFilter, whose eth_getFilterLogs reads the same range):
			// never sent on unjudged, so never the node's error.
			if _, _, err := evm.LogsSpan(json.RawMessage(calls[i].params), 0); err != nil {
				calls[i].want = json.RawMessage(`{"code":-32602,"message":"Invalid params: ` + calls[i].method + `: ` + err.Error() + `"}`)
				calls[i].local = true
				continue
			}
		}
		if calls[i].nested == "" {
			calls[i].want = directError(t, m.Polygon.RPCURL, calls[i])
		}
	}
	if len(calls) < 60 {
		t.Fatalf("%d kinds of bad calls, want at least 60", len(calls))
	}

	stop := make(chan struct{})
	var honestOK, honestBad atomic.Int64
	var honestErr atomic.Value
	var mu sync.Mutex
	var charged []string // request ids of every metered request, honest and bad
	addID := func(h http.Header) {
		mu.Lock()
		defer mu.Unlock()
		charged = append(charged, h.Get("X-Tollgate-Request-Id"))
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies := []string{`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`,
				`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + payTo.Address + `","latest"]}`}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, h, body := postFrom(gw.URL()+"/rpc", fmt.Sprintf("10.1.%d.1", w), bodies[(i+w)%2])
				if status == http.StatusOK && bytes.Contains(body, []byte(`"result":"0x`)) {
					honestOK.Add(1)
					addID(h)
				} else {
					honestBad.Add(1)
					honestErr.Store(fmt.Sprintf("%d %s", status, body))
				}
			}
		}()
	}

	const perKind = 50
	total := int64(perKind * len(calls))
	var next atomic.Int64
	var mismatches atomic.Int64
	var firstMismatch atomic.Value
	var bad sync.WaitGroup
	for range 6 {
		bad.Add(1)
		go func() {
			defer bad.Done()
			for {
				n := next.Add(1) - 1
				if n >= total {
					return
				}
				c := calls[n%int64(len(calls))]
				id := fmt.Sprintf(`"bad-%d"`, n)
				ip := fmt.Sprintf("10.2.%d.%d", n%200, 1+n%250) // many client addresses
				status, h, body := postFrom(gw.URL()+"/rpc", ip, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`)
				var got struct {
					ID     json.RawMessage
					Error  json.RawMessage
					Result json.RawMessage
				}
				ok := json.Unmarshal(body, &got) == nil && status == http.StatusOK && string(got.ID) == id
				if c.nested != "" {
					ok = ok && bytes.Contains(got.Result, []byte(`"code":`+c.nested))
				} else if recoded(c.want) {
					// Charged, with a code default clients retry: re-coded
					// so a retry loop cannot pay for it again (docs/errors.md),
					// the node's message and code kept.
					ok = ok && sameRecoded(got.Error, c.want)
				} else {
					ok = ok && bytes.Equal(got.Error, c.want) // byte for byte
				}
				if !ok {
					if mismatches.Add(1) == 1 {
						firstMismatch.Store(fmt.Sprintf("%s: HTTP %d %s, want the node's error %s", c.kind, status, body, c.want))
					}
					continue
				}
				if c.local {
					if h.Get("X-Tollgate-Request-Id") != "" {
						mismatches.Add(1)
						firstMismatch.Store(c.kind + ": refused locally yet metered")
					}
					continue
				}
				addID(h)
			}
		}()
	}
	bad.Wait()
	close(stop)
	wg.Wait()

	if n := mismatches.Load(); n > 0 {
		t.Errorf("%d of %d bad calls did not get the node's own error; first: %v", n, total, firstMismatch.Load())
	}
	if honestBad.Load() > 0 || honestOK.Load() == 0 {
		t.Errorf("honest callers: %d ok, %d not; last: %v", honestOK.Load(), honestBad.Load(), honestErr.Load())
	}
	for _, u := range adminUpstreams(t, gw, token) {
		if u.Breaker != "closed" || u.Failures != 0 {
			t.Errorf("upstream %s after the bad calls: breaker %s, %d failures (last error %q)", u.Name, u.Breaker, u.Failures, u.LastError)
		}
	}
	// Every answer, error answers included, is charged: one call each,
	// credited to the provider that answered.
	revs := env.revenuesOf(t, charged)
	for _, id := range charged {
		r := revs[id]
		if r == nil || r.Calls != 1 || (r.Upstream != "alpha" && r.Upstream != "beta" && r.Upstream != "cache") {
			t.Fatalf("request %s: revenue %+v, want 1 call served by a provider", id, r)
		}
	}
	t.Logf("%d bad calls of %d kinds (%d methods), %d honest calls: all answered as the node answers, all %d charged; no failure recorded",
		total, len(calls), len(everyMethodBadCalls(t)), honestOK.Load(), len(charged))

	t.Run("poisoned batch is charged whole", func(t *testing.T) {
		secret, keyID := env.createKey(t)
		env.credit(t, keyID, 1000)
		items := make([]string, 20)
		for i := range items {
			items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["%s","latest"]}`, i, payTo.Address)
		}
		items[7] = `{"jsonrpc":"2.0","id":7,"method":"eth_simulateV1","params":` + maxNonceSimulate + `}`
		a := env.rpc(t, "["+strings.Join(items, ",")+"]", "X-API-Key: "+secret)
		if a.status != http.StatusOK || !bytes.Contains(a.body, []byte("nonce has max value")) || bytes.Count(a.body, []byte(`"result"`)) != 19 {
			t.Fatalf("batch: %d %s", a.status, a.body)
		}
		// 20 calls at 30 units: 1000 - 600 = 400 units = 0.0004 USDT.
		if got := a.header.Get("X-Tollgate-Credits-Remaining"); got != "0.0004" {
			t.Fatalf("credits after the batch: %s, want 0.0004 (20 calls charged)", got)
		}
		if bal, err := balances.BalanceAt(t.Context(), rdb, layout, keyID); err != nil || bal != 400 {
			t.Fatalf("Redis balance %d %v, want 400", bal, err)
		}
		rid := a.header.Get("X-Tollgate-Request-Id")
		r := env.revenuesOf(t, []string{rid})[rid]
		if r == nil || r.Calls != 20 || r.Amount != 600 {
			t.Fatalf("batch revenue %+v, want 20 calls, 600 units", r)
		}
	})

	t.Run("upstream errors relayed byte for byte", func(t *testing.T) {
		status, _, body := postFrom(gw.URL()+"/rpc/1", "10.3.0.1", `{"jsonrpc":"2.0","id":"q-1","method":"eth_call","params":[{"to":"0x00000000000000000000000000000000000000e1"},"latest"]}`)
		want := `{"jsonrpc":"2.0","id":"q-1","error":` + oddError + `}`
		if status != http.StatusOK || string(body) != want {
			t.Fatalf("got  %d %s\nwant %s", status, body, want)
		}
	})

	// The rule book is not blind: an upstream that really fails (502) is
	// counted and cut off — by its breaker, or by its probes first.
	alpha.SetMode(faultproxy.Fail502)
	deadline := time.Now().Add(30 * time.Second)
	for {
		postRPC(gw.URL()+"/rpc", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)
		u := upstreamOf(adminUpstreams(t, gw, token), "alpha")
		if u.Breaker == "open" || !u.Healthy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha answering 502 was never taken out: %+v", adminUpstreams(t, gw, token))
		}
	}
}

// maxNonceSimulate is eth_simulateV1's params with a state override that
// sets a nonce to 2^64-1: geth answers -32603 "nonce has max value".
const maxNonceSimulate = `[{"blockStateCalls":[{"stateOverrides":{"0x00000000000000000000000000000000000000e1":{"nonce":"0xffffffffffffffff"}},` +
	`"calls":[{"from":"0x00000000000000000000000000000000000000e1","to":"0x00000000000000000000000000000000000000e2"}]}]},"latest"]`

// everyMethodBadCalls is one call with invalid params for every method the
// gateway serves (not denied, not answered locally): the node answers each
// with its own error (-32602, or -32601 where the dev chain lacks the
// namespace), whatever the method.
func everyMethodBadCalls(t *testing.T) []badCall {
	t.Helper()
	var out []badCall
	for _, name := range jsonrpc.KnownMethods() {
		m := evm.Lookup(name)
		if m.Denied != "" || m.Local != nil || m.Sticky {
			// Refused or answered here; a sticky filter call with an id no
			// upstream made is answered here too ("unknown filter" in
			// badCalls is the node's own answer to it).
			continue
		}
		out = append(out, badCall{kind: name + " with invalid params", method: name, params: `["0xzz",{"x":"<&é"},"0xzz","0xzz","0xzz"]`})
	}
	return out
}

// oddError is the error object the double on chain 1 answers every call
// with, written as geth writes (\u003c, \u0026) plus raw UTF-8 and an
// extra member: relayed, it must arrive unchanged.
const oddError = `{"code":-32000,"message":"gas \u003c 21000 \u0026 caf\u00e9 — naïve","data":"0x01","extra":true}`

// newOddNode is a JSON-RPC double for chain 1: it answers the gateway's
// probes (eth_chainId, eth_blockNumber) and every other call with oddError.
func newOddNode(t *testing.T) *httptest.Server {
	t.Helper()
	answer := func(raw json.RawMessage) string {
		var c struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(raw, &c)
		switch c.Method {
		case "eth_chainId":
			return `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"result":"0x1"}`
		case "eth_blockNumber":
			return `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"result":"0x100"}`
		}
		return `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"error":` + oddError + `}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) == nil {
			out := make([]string, len(batch))
			for i, c := range batch {
				out[i] = answer(c)
			}
			_, _ = io.WriteString(w, "["+strings.Join(out, ",")+"]")
			return
		}
		_, _ = io.WriteString(w, answer(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// revenuesOf waits until the event writer has put the revenue events of
// every request in ids on the stream, and returns all by request id.
func (e *meterEnv) revenuesOf(t *testing.T, ids []string) map[string]*events.Revenue {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := map[string]*events.Revenue{}
		for _, ev := range e.stream(t) {
			if r, ok := ev.(*events.Revenue); ok {
				out[r.ID] = r
			}
		}
		missing := 0
		for _, id := range ids {
			if out[id] == nil {
				missing++
			}
		}
		if missing == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests have no revenue event after 30 s", missing, len(ids))
		}
		time.Sleep(20 * time.Millisecond) // polling the stream
	}
}

// postFrom posts body as a client at ip (through the trusted loopback proxy).
func postFrom(url, ip, body string) (int, http.Header, []byte) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func badCalls(t *testing.T, m *devnet.Manifest) []badCall {
	t.Helper()
	usdt := testusdt.NewTestUSDT()
	empty := "0x00000000000000000000000000000000000000e1"
	transfer := hexutil.Encode(usdt.PackTransfer(common.HexToAddress("0x00000000000000000000000000000000000000e2"), big.NewInt(1)))
	signed := func(key string, nonce uint64, chainID int64) string {
		k := devnet.DevKey(key)
		if key == "" {
			k, _ = crypto.GenerateKey()
		}
		to := common.HexToAddress("0x00000000000000000000000000000000000000e3")
		tx, err := types.SignNewTx(k, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9), Gas: 21000, To: &to,
			Value: big.NewInt(1)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tx.MarshalBinary()
		return hexutil.Encode(b)
	}
	unknownHash := "0x1111111111111111111111111111111111111111111111111111111111111111"
	return []badCall{
		{kind: "eth_call at an unknown blockHash", method: "eth_call",
			params: `[{"to":"` + m.Polygon.USDT + `","data":"0x"},{"blockHash":"` + unknownHash + `"}]`},
		{kind: "malformed raw transaction", method: "eth_sendRawTransaction", params: `["0x02"]`},
		{kind: "raw transaction that is not RLP", method: "eth_sendRawTransaction", params: `["0xdeadbeef"]`},
		{kind: "transaction signed for another chain", method: "eth_sendRawTransaction", params: `["` + signed("deployer", 0, 1) + `"]`},
		{kind: "transaction with a used nonce", method: "eth_sendRawTransaction", params: `["` + signed("deployer", 0, 137) + `"]`},
		{kind: "transaction from an empty account", method: "eth_sendRawTransaction", params: `["` + signed("", 0, 137) + `"]`},
		{kind: "balance at a future block", method: "eth_getBalance", params: `["` + empty + `","0xffffff"]`},
		{kind: "code at a future block", method: "eth_getCode", params: `["` + empty + `","0xffffff"]`},
		{kind: "nonce at a future block", method: "eth_getTransactionCount", params: `["` + empty + `","0xfffffe"]`},
		{kind: "eth_call at a future block", method: "eth_call", params: `[{"to":"` + m.Polygon.USDT + `"},"0xfffffd"]`},
		{kind: "reverting call", method: "eth_call", params: `[{"from":"` + empty + `","to":"` + m.Polygon.USDT + `","data":"` + transfer + `"},"latest"]`},
		{kind: "call with too little gas", method: "eth_call", params: `[{"to":"` + empty + `","gas":"0x1"},"latest"]`},
		{kind: "unaffordable gas estimate", method: "eth_estimateGas",
			params: `[{"from":"` + empty + `","to":"0x00000000000000000000000000000000000000e2","value":"0xffffffffffffffffffffffffffff"}]`},
		{kind: "invalid address", method: "eth_getBalance", params: `["0xzz","latest"]`},
		{kind: "invalid hash", method: "eth_getTransactionReceipt", params: `["0x12"]`},
		{kind: "invalid block tag", method: "eth_getBlockByNumber", params: `["notablock",false]`},
		{kind: "inverted log range", method: "eth_getLogs", params: `[{"fromBlock":"0x10","toBlock":"0x1"}]`},
		{kind: "unknown filter", method: "eth_getFilterChanges", params: `["0x1234"]`},
		{kind: "unknown method", method: "eth_fooBar", params: `[]`},
		{kind: "invalid storage key", method: "eth_getStorageAt", params: `["` + empty + `","0xzz","latest"]`},
		// The error classes a stranger can provoke on purpose.
		{kind: "eth_simulateV1 with a max nonce (-32603)", method: "eth_simulateV1", params: maxNonceSimulate},
		{kind: "eth_simulateV1 with a block number overflow", method: "eth_simulateV1",
			params: `[{"blockStateCalls":[{"blockOverrides":{"number":"0xffffffffffffffff"}}]},"latest"]`},
		{kind: "eth_simulateV1 call hitting INVALID (-32015 in the result)", method: "eth_simulateV1", nested: "-32015",
			params: `[{"blockStateCalls":[{"calls":[{"from":"` + empty + `","data":"0xfe"}]}]},"latest"]`},
		{kind: "eth_call hitting INVALID (-32000)", method: "eth_call", params: `[{"data":"0x6000fe"},"latest"]`},
		{kind: "eth_estimateGas of a revert (3)", method: "eth_estimateGas", params: `[{"data":"0x600080fd"}]`},
		{kind: "balance at an unknown block hash", method: "eth_getBalance", params: `["` + empty + `",{"blockHash":"` + unknownHash + `"}]`},
	}
}

// directError asks the dev chain itself and returns its error object.
func directError(t *testing.T, url string, c badCall) json.RawMessage {
	t.Helper()
	status, body := postRPC(url, `{"jsonrpc":"2.0","id":1,"method":"`+c.method+`","params":`+c.params+`}`)
	var r struct{ Error json.RawMessage }
	if err := json.Unmarshal(body, &r); err != nil || status != http.StatusOK || len(r.Error) == 0 {
		t.Fatalf("%s: the dev chain answers %d %s, not an error: the test's call is wrong", c.kind, status, body)
	}
	return r.Error
}

func postRPC(url, body string) (int, []byte) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

type upstreamView struct {
	Name, Breaker, LastError string
	Failures                 int64
	Healthy                  bool
}

func adminUpstreams(t *testing.T, gw *caddyrun.Server, token string) []upstreamView {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, gw.URL()+"/admin/upstreams/137", nil)
	req.Header.Set("X-Admin-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Pool struct {
			Upstreams []struct {
				Name      string `json:"name"`
				Breaker   string `json:"breaker"`
				Failures  int64  `json:"failures"`
				LastError string `json:"last_error"`
				Healthy   bool   `json:"healthy"`
			} `json:"upstreams"`
		} `json:"pool"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil || len(out.Pool.Upstreams) == 0 {
		t.Fatalf("/admin/upstreams/137: %d %s", resp.StatusCode, b)
	}
	var v []upstreamView
	for _, u := range out.Pool.Upstreams {
		v = append(v, upstreamView{u.Name, u.Breaker, u.LastError, u.Failures, u.Healthy})
	}
	return v
}

func upstreamOf(us []upstreamView, name string) upstreamView {
	for _, u := range us {
		if u.Name == name {
			return u
		}
	}
	return upstreamView{}
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Charged      bool `json:"charged"`
		UpstreamCode *int `json:"upstream_code"`
	} `json:"data"`
}

// recoded reports whether the node's error want carries a code default
// clients retry, which the gateway re-codes when it charges for it.
func recoded(want json.RawMessage) bool {
	var e wireError
	return json.Unmarshal(want, &e) == nil && jsonrpc.RetriedCodes[e.Code]
}

// sameRecoded: got is want re-coded: -32040 for a -32005, else -32042, the
// same message, data.upstream_code the node's code.
func sameRecoded(got, want json.RawMessage) bool {
	var g, w wireError
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	code := jsonrpc.CodeChargedUpstreamError
	if w.Code == jsonrpc.CodeLimitExceeded {
		code = jsonrpc.CodeAnswerTooLarge
	}
	return g.Code == code && g.Message == w.Message && g.Data.Charged && g.Data.UpstreamCode != nil && *g.Data.UpstreamCode == w.Code
}
