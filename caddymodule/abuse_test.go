package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
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

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

// abuseCaddyfile: metering on (real Redis, a free tier large enough for the
// test), two providers in front of the real dev chain, and a breaker that
// opens after 3 failures — so a rule book that blamed upstreams for the
// callers' errors would open it within the first handful of bad calls.
const abuseCaddyfile = `{
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
		}
		respond 404
	}
}
`

// badCall is a call any anonymous caller can make that the node refuses.
type badCall struct {
	kind, method, params string
	want                 json.RawMessage // the dev chain's own error object, asked directly
}

// TestCallerErrorsNeverTakeAChainDown: 1,000+ anonymous calls of 20 kinds
// of caller-provokable errors (unknown block hashes, future blocks,
// malformed, wrongly signed and unaffordable transactions, reverts, invalid
// params, unknown methods and filters…) sent concurrently with honest
// traffic through the real Caddy, Redis and two upstreams: no upstream
// records a failure, every breaker stays closed, every honest call gets 200
// with a result, and every bad call gets exactly the error object the node
// gives (with the caller's id). The breaker is live: real 502s open it.
func TestCallerErrorsNeverTakeAChainDown(t *testing.T) {
	rdb := testenv.Redis(t)
	_ = rdb
	prefix := testenv.KeyPrefix(t)
	d, err := devnet.Start(t.Context(), devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	alpha, beta := faultproxy.New(m.Polygon.RPCURL), faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(alpha.Close)
	t.Cleanup(beta.Close)
	payTo, _ := m.Account("treasury")
	const token = "abuse-admin-token-0123456789"
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", payTo.Address, "@ALPHA@", alpha.URL(), "@BETA@", beta.URL()).Replace(abuseCaddyfile)
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"), "TG_ADMIN_TOKEN="+token)
	(&meterEnv{gw: gw}).waitHealthy(t)

	calls := badCalls(t, m)
	for i := range calls {
		calls[i].want = directError(t, m.Polygon.RPCURL, calls[i])
	}
	if len(calls) < 15 {
		t.Fatalf("%d kinds of bad calls, want at least 15", len(calls))
	}

	stop := make(chan struct{})
	var honestOK, honestBad atomic.Int64
	var honestErr atomic.Value
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
				status, body := postRPC(gw.URL()+"/rpc", bodies[(i+w)%2])
				if status == http.StatusOK && bytes.Contains(body, []byte(`"result":"0x`)) {
					honestOK.Add(1)
				} else {
					honestBad.Add(1)
					honestErr.Store(fmt.Sprintf("%d %s", status, body))
				}
			}
		}()
	}

	const total = 1050
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
				status, body := postRPC(gw.URL()+"/rpc", `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`)
				var got struct {
					ID    json.RawMessage
					Error json.RawMessage
				}
				if json.Unmarshal(body, &got) != nil || status != http.StatusOK || string(got.ID) != id || !sameJSON(got.Error, c.want) {
					if mismatches.Add(1) == 1 {
						firstMismatch.Store(fmt.Sprintf("%s: HTTP %d %s, want the node's error %s", c.kind, status, body, c.want))
					}
				}
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
	t.Logf("%d bad calls of %d kinds, %d honest calls, all answered as the node answers; no failure recorded",
		total, len(calls), honestOK.Load())

	// The rule book is not blind: an upstream that really fails (502) is
	// counted and cut off — by its breaker, or by its probes first.
	alpha.SetMode(faultproxy.Fail502)
	deadline := time.Now().Add(15 * time.Second)
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
