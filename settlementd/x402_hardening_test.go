package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// hardCaddyfile is x402Caddyfile with the knobs the hardening tests turn:
// the Redis URL, the IP rate and the facilitator lines (@PAYMENT@: any of
// x402_facilitator_url / settlementd_url, or none).
const hardCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url @REDIS@
			key_prefix @PREFIX@
			request_timeout 10s
			upstream_timeout 5s
			probe_interval 100ms
			free_daily_limit 0
			free_subnet_limit 0
			rate_limit_ip @RATEIP@
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			x402_asset @USDC@
			x402_pay_to @PAYTO@
@PAYMENT@			chain 137 {
				provider dev @POLYGON@
			}
		}
		respond 404
	}
}
`

// hardGW configures a gateway of the hardening tests.
type hardGW struct {
	facilitator string // x402_facilitator_url, "" for none
	settlementd string // settlementd_url, "" for none
	rateIP      string // rate_limit_ip (default off)
	redisURL    string // default $REDIS_URL
}

// hardGateway starts our Caddy configured by o on the env's prefix and
// waits until chain 137 has a healthy upstream.
func (e *x402Env) hardGateway(o hardGW) *caddyrun.Server {
	e.t.Helper()
	m := e.net.Manifest
	if o.rateIP == "" {
		o.rateIP = "off"
	}
	if o.redisURL == "" {
		o.redisURL = os.Getenv("REDIS_URL")
	}
	var pay strings.Builder
	if o.facilitator != "" {
		fmt.Fprintf(&pay, "\t\t\tx402_facilitator_url %s\n", o.facilitator)
	}
	if o.settlementd != "" {
		fmt.Fprintf(&pay, "\t\t\tsettlementd_url %s\n", o.settlementd)
	}
	cf := strings.NewReplacer("@REDIS@", o.redisURL, "@PREFIX@", e.prefix, "@RATEIP@", o.rateIP, "@VAULT@", m.Polygon.RevenueVault,
		"@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC, "@PAYTO@", e.payTo.Hex(), "@PAYMENT@", pay.String(),
		"@POLYGON@", m.Polygon.RPCURL).Replace(hardCaddyfile)
	gw := caddyrun.Start(e.t, cf)
	settletest.Eventually(e.t, 15*time.Second, "chain 137 healthy on the gateway", func() (bool, error) { return gw.ChainHealthy(137) })
	return gw
}

// hardRPC is rpc with the request's Host set to host ("" keeps the
// gateway's own).
func (e *x402Env) hardRPC(gw *caddyrun.Server, host string, headers ...string) x402Answer {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, gw.URL()+"/rpc", strings.NewReader(x402RPCRequest))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return x402Answer{resp.StatusCode, resp.Header, b}
}

// hardRPCError checks a is a JSON-RPC error answer for id 1 with HTTP
// status and code, and returns its message.
func hardRPCError(t *testing.T, a x402Answer, status, code int) string {
	t.Helper()
	var rpc struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if a.status != status || json.Unmarshal(a.body, &rpc) != nil || rpc.JSONRPC != "2.0" || string(rpc.ID) != "1" ||
		rpc.Error == nil || rpc.Error.Code != code || rpc.Result != nil {
		t.Fatalf("want HTTP %d with JSON-RPC error %d for id 1, got %s", status, code, a)
	}
	for _, h := range []string{"X-Tollgate-Bundle-Key", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "PAYMENT-REQUIRED"} {
		if v := a.header.Get(h); v != "" {
			t.Fatalf("HTTP %d answer carries %s: %s", status, h, v)
		}
	}
	return rpc.Error.Message
}

// hardCounter counts the requests reaching a handler, by path.
type hardCounter struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *hardCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.paths == nil {
			c.paths = map[string]int{}
		}
		c.paths[r.URL.Path]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (c *hardCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.paths {
		n += v
	}
	return n
}

func (c *hardCounter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.paths)
}

// hardProxy is a counting reverse proxy in front of settlementd: its
// /x402 is a facilitator whose every call is counted.
func (e *x402Env) hardProxy() (facilitatorURL string, c *hardCounter) {
	e.t.Helper()
	target, err := url.Parse(e.api)
	if err != nil {
		e.t.Fatal(err)
	}
	c = &hardCounter{}
	srv := httptest.NewServer(c.wrap(httputil.NewSingleHostReverseProxy(target)))
	e.t.Cleanup(srv.Close)
	return srv.URL + "/x402", c
}

// hardSettle POSTs a v2 payment header straight to settlementd's
// facilitator /x402/settle, with the requirement the gateway would send.
func (e *x402Env) hardSettle(hdr string, accepted map[string]any) (int, x402.SettleResponse, []byte) {
	e.t.Helper()
	raw, err := base64.StdEncoding.DecodeString(hdr)
	if err != nil {
		e.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"x402Version": 2, "paymentPayload": json.RawMessage(raw), "paymentRequirements": accepted})
	resp, err := http.Post(e.api+"/x402/settle", "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sr x402.SettleResponse
	if err := json.Unmarshal(b, &sr); err != nil {
		e.t.Fatalf("/x402/settle answered %d %s: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, sr, b
}

// hardStream counts the wallet's events on the Redis stream: bundle grants
// of tx, grants of any transaction, and bundle debits.
func (e *x402Env) hardStream(wallet common.Address, tx common.Hash) (grantsOfTx, grants, debits int) {
	e.t.Helper()
	msgs, err := e.rdb.XRange(e.ctx, balances.Layout{Prefix: e.prefix}.Stream(0), "-", "+").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	w := strings.ToLower(wallet.Hex())
	for _, m := range msgs {
		ev, err := events.Decode(m.Values)
		if err != nil {
			continue // not ours to judge here
		}
		switch v := ev.(type) {
		case *events.BundleGranted:
			if strings.EqualFold(v.Wallet, w) {
				grants++
				if strings.EqualFold(v.ID, tx.Hex()) {
					grantsOfTx++
				}
			}
		case *events.Debit:
			if v.Payer == events.PayerBundle && strings.EqualFold(v.Account, w) {
				debits++
			}
		}
	}
	return grantsOfTx, grants, debits
}

func (e *x402Env) hardWantBundle(wallet common.Address, calls, granted, used int) {
	e.t.Helper()
	want := map[string]string{balances.BundleCalls: fmt.Sprint(calls), balances.BundleGranted: fmt.Sprint(granted),
		balances.BundleUsed: fmt.Sprint(used)}
	if b := e.bundle(wallet); fmt.Sprint(b) != fmt.Sprint(want) {
		e.t.Fatalf("bundle of %s in Redis %v, want %v", wallet.Hex(), b, want)
	}
}

func (e *x402Env) hardWantNoBundle(wallet common.Address) {
	e.t.Helper()
	if b := e.bundle(wallet); len(b) != 0 {
		e.t.Fatalf("a bundle of %s in Redis: %v", wallet.Hex(), b)
	}
}

// TestX402Hardening proves the x402 hardening of ae46aab on real parts
// (our Caddy, settlementd's facilitator, Redis, Postgres, the dev chains):
// a settle whose answer was lost is granted once on retry and never again;
// the facilitator never comes from the Host header; settlementd_url is the
// facilitator fallback; the IP rate and Redis stop a payment before any
// facilitator call.
func TestX402Hardening(t *testing.T) {
	e := startX402Env(t)
	gw := e.gw

	t.Run("lost settle answer then retry", func(t *testing.T) {
		e := e.at(t)
		key := e.wallet("lost", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		resource, acc := e.issued(gw)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)

		// The settlement the gateway never heard of.
		status, sr, raw := e.hardSettle(hdr, acc)
		if status != http.StatusOK || !sr.Success || sr.ErrorReason != "" || sr.Network != x402NetworkV2 ||
			!strings.EqualFold(sr.Payer, payer.Hex()) || len(sr.Transaction) != 66 {
			t.Fatalf("direct /x402/settle: %d %s", status, raw)
		}
		txT := common.HexToHash(sr.Transaction)
		e.checkSettled(sr.Transaction, payer)
		if got := e.balance(payer); got != before-x402Price || !e.authUsed(payer, a.nonce) {
			t.Fatalf("after the direct settle: payer %d → %d (want −%d), authorization used %v", before, got, x402Price, e.authUsed(payer, a.nonce))
		}
		e.hardWantNoBundle(payer)

		// The client retries with the same header: it gets what it paid for.
		tx, bundleKey := e.expectPaid(e.rpc(gw, "PAYMENT-SIGNATURE", hdr), false, payer)
		if tx != txT {
			t.Fatalf("PAYMENT-RESPONSE transaction %s, want the earlier settlement %s", tx.Hex(), txT.Hex())
		}
		if got := e.balance(payer); got != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price {
			t.Fatalf("the retry moved funds again: payer %d (want %d), payTo %+d", got, before-x402Price, e.balance(e.payTo)-payToBefore)
		}
		e.hardWantBundle(payer, x402Bundle-1, x402Bundle, 1)
		if g, all, d := e.hardStream(payer, txT); g != 1 || all != 1 || d != 1 {
			t.Fatalf("stream after the retry: %d grants of T, %d grants, %d bundle debits; want 1, 1, 1", g, all, d)
		}

		// The same header once more (another request): the grant is gone.
		replay := e.rpc(gw, "PAYMENT-SIGNATURE", hdr)
		why := e.expectRefused(replay, x402.ReasonNonceUsed)
		if !strings.Contains(why, "already used") || !strings.Contains(strings.ToLower(why), strings.ToLower(txT.Hex())) {
			t.Fatalf("replay 402 error %q: want it to say the payment (transaction %s) was already used", why, txT.Hex())
		}
		for _, h := range []string{"X-Tollgate-Bundle-Key", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "X-Tollgate-Bundle-Remaining"} {
			if v := replay.header.Get(h); v != "" {
				t.Fatalf("replay answered %s: %s", h, v)
			}
		}
		e.hardWantBundle(payer, x402Bundle-1, x402Bundle, 1)
		if got := e.balance(payer); got != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price {
			t.Fatalf("the replay moved funds: payer %d, want %d", got, before-x402Price)
		}
		if g, all, d := e.hardStream(payer, txT); g != 1 || all != 1 || d != 1 {
			t.Fatalf("stream after the replay: %d grants of T, %d grants, %d bundle debits; want 1, 1, 1", g, all, d)
		}

		// Postgres: the one grant arrives; a later marker event shows the
		// ingest has read past the replay, and still one grant for the wallet.
		settletest.Eventually(t, 15*time.Second, "bundle_grants row of T", func() (bool, error) {
			return settletest.Count(t, e.pool, `SELECT count(*) FROM bundle_grants WHERE id = $1`, strings.ToLower(txT.Hex())) == 1, nil
		})
		if k := e.rpc(gw, "X-API-Key", bundleKey); k.status != 200 || k.header.Get("X-Tollgate-Bundle-Remaining") != fmt.Sprint(x402Bundle-2) {
			t.Fatalf("bundle key from the retry: %s", k)
		}
		marker := e.wallet("lost marker", 1_000_000)
		mres, macc := e.issued(gw)
		ma := e.auth(marker)
		mtx, _ := e.expectPaid(e.rpc(gw, "PAYMENT-SIGNATURE", v2Header(ma, ma.sign(8453, e.asset), mres, macc)), false,
			crypto.PubkeyToAddress(marker.PublicKey))
		settletest.Eventually(t, 15*time.Second, "bundle_grants row of the marker payment", func() (bool, error) {
			return settletest.Count(t, e.pool, `SELECT count(*) FROM bundle_grants WHERE id = $1`, strings.ToLower(mtx.Hex())) == 1, nil
		})
		if n := settletest.Count(t, e.pool, `SELECT count(*) FROM bundle_grants WHERE lower(wallet) = $1`, strings.ToLower(payer.Hex())); n != 1 {
			t.Fatalf("%d bundle_grants rows for the payer, want 1", n)
		}
		var calls, amount int64
		var keyID *string
		if err := e.pool.QueryRow(e.ctx, `SELECT calls, amount_units, key_id FROM bundle_grants WHERE id = $1`,
			strings.ToLower(txT.Hex())).Scan(&calls, &amount, &keyID); err != nil {
			t.Fatal(err)
		}
		if calls != x402Bundle || amount != x402Price || keyID == nil || *keyID == "" {
			t.Fatalf("bundle_grants row of T: calls %d amount %d key %v", calls, amount, keyID)
		}
	})

	t.Run("facilitator never from Host", func(t *testing.T) {
		e := e.at(t)
		var fake hardCounter
		fakeSrv := httptest.NewServer(fake.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			var req struct {
				PaymentPayload struct {
					Payload struct {
						Authorization struct{ From string } `json:"authorization"`
					} `json:"payload"`
				} `json:"paymentPayload"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			from := req.PaymentPayload.Payload.Authorization.From
			if strings.HasSuffix(r.URL.Path, "/settle") {
				fmt.Fprintf(w, `{"success":true,"transaction":"0x%064x","network":%q,"payer":%q}`, 0xf00d, x402NetworkV2, from)
				return
			}
			fmt.Fprintf(w, `{"isValid":true,"payer":%q}`, from)
		})))
		t.Cleanup(fakeSrv.Close)
		fakeHost := strings.TrimPrefix(fakeSrv.URL, "http://")

		bare := e.hardGateway(hardGW{})
		key := e.wallet("host", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		for _, host := range []string{fakeHost, ""} {
			resource, acc := e.issued(gw)
			a := e.auth(key)
			hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
			ans := e.hardRPC(bare, host, "PAYMENT-SIGNATURE", hdr)
			msg := hardRPCError(t, ans, http.StatusServiceUnavailable, -32603)
			if !strings.Contains(msg, "x402 payments are not configured") {
				t.Fatalf("Host %q: 503 message %q, want it to say x402 payments are not configured", host, msg)
			}
			if e.authUsed(payer, a.nonce) {
				t.Fatalf("Host %q: the authorization was used on chain", host)
			}
			if n := fake.total(); n != 0 {
				t.Fatalf("Host %q: the fake facilitator named by the Host header got %d requests: %s", host, n, &fake)
			}
		}
		e.hardWantNoBundle(payer)
		if e.balance(payer) != before || e.balance(e.payTo) != payToBefore {
			t.Fatalf("USDC moved: payer %+d, payTo %+d", e.balance(payer)-before, e.balance(e.payTo)-payToBefore)
		}
		// Control: the fake answers like a facilitator that approves
		// everything, so a gateway deriving it from Host would have granted.
		resp, err := http.Post(fakeSrv.URL+"/x402/verify", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(b, []byte(`"isValid":true`)) || fake.total() != 1 {
			t.Fatalf("fake facilitator control: %s (%s)", b, &fake)
		}
	})

	t.Run("settlementd_url fallback", func(t *testing.T) {
		e := e.at(t)
		sd := e.hardGateway(hardGW{settlementd: e.api})
		key := e.wallet("fallback", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		resource, acc := e.issued(sd)
		a := e.auth(key)
		tx, _ := e.expectPaid(e.rpc(sd, "PAYMENT-SIGNATURE", v2Header(a, a.sign(8453, e.asset), resource, acc)), false, payer)
		if e.balance(payer) != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price || !e.authUsed(payer, a.nonce) {
			t.Fatalf("funds moved %+d / %+d, want −%d / +%d", e.balance(payer)-before, e.balance(e.payTo)-payToBefore, x402Price, x402Price)
		}
		e.hardWantBundle(payer, x402Bundle-1, x402Bundle, 1)
		if g, all, d := e.hardStream(payer, tx); g != 1 || all != 1 || d != 1 {
			t.Fatalf("stream: %d grants of the tx, %d grants, %d bundle debits; want 1, 1, 1", g, all, d)
		}
	})

	t.Run("PaymentGate rate limit", func(t *testing.T) {
		e := e.at(t)
		facURL, calls := e.hardProxy()
		// One request an hour, burst 2: two payments pass, the third waits ~1 h.
		// Two wallets pay (a wallet with bundle calls left would be served
		// from its bundle without settling, see "bundle reuse").
		rl := e.hardGateway(hardGW{facilitator: facURL, rateIP: "1 1h 2"})
		key := e.wallet("ratelimit", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		other := e.wallet("ratelimit-2", 1_000_000)
		before := e.balance(payer)
		resource, acc := e.issued(gw) // from the unlimited gateway: the same requirement
		for _, k := range []*ecdsa.PrivateKey{key, other} {
			a := e.auth(k)
			e.expectPaidBundle(rl, v2Header(a, a.sign(8453, e.asset), resource, acc), crypto.PubkeyToAddress(k.PublicKey), 0)
		}
		if n := calls.total(); n != 4 {
			t.Fatalf("facilitator calls for two payments: %s, want verify+settle twice", calls)
		}
		e.hardWantBundle(payer, x402Bundle-1, x402Bundle, 1)
		// The first wallet's bundle is used up: its next payment must settle.
		e.drainBundle(payer)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		ans := e.rpc(rl, "PAYMENT-SIGNATURE", hdr)
		hardRPCError(t, ans, http.StatusTooManyRequests, -32005)
		ra, err := strconv.Atoi(ans.header.Get("Retry-After"))
		if err != nil || ra < 3500 || ra > 3600 {
			t.Fatalf("429 Retry-After %q, want about 3600 s", ans.header.Get("Retry-After"))
		}
		if n := calls.total(); n != 4 {
			t.Fatalf("the rate-limited payment reached the facilitator: %s", calls)
		}
		if e.authUsed(payer, a.nonce) || e.balance(payer) != before-x402Price {
			t.Fatalf("the rate-limited payment moved funds: used %v, payer %+d", e.authUsed(payer, a.nonce), e.balance(payer)-before)
		}
		e.hardWantBundle(payer, 0, x402Bundle, x402Bundle)
		// Nothing was consumed: the same authorization pays elsewhere.
		ans = e.rpc(gw, "PAYMENT-SIGNATURE", hdr)
		if ans.status != http.StatusOK || ans.header.Get("X-Tollgate-Bundle-Remaining") != fmt.Sprint(x402Bundle-1) ||
			ans.header.Get("PAYMENT-RESPONSE") == "" {
			t.Fatalf("the rate-limited authorization at another gateway: %s", ans)
		}
		if !e.authUsed(payer, a.nonce) || e.balance(payer) != before-2*x402Price {
			t.Fatalf("the rate-limited authorization did not pay afterwards")
		}
	})

	t.Run("bundle reuse", func(t *testing.T) {
		// A generic client pays on every 402. While the wallet's bundle has
		// calls, a new authorization is served from it and never settled;
		// it is single-use, and it cannot be settled afterwards either.
		e := e.at(t)
		facURL, calls := e.hardProxy()
		fg := e.hardGateway(hardGW{facilitator: facURL})
		key := e.wallet("reuse", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		resource, acc := e.issued(gw)
		first := e.auth(key)
		e.expectPaidBundle(fg, v2Header(first, first.sign(8453, e.asset), resource, acc), payer, 0)
		for i := range 3 {
			a := e.auth(key)
			hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
			ans := e.rpc(fg, "PAYMENT-SIGNATURE", hdr)
			if ans.status != http.StatusOK || ans.header.Get("X-Tollgate-Payer") != "bundle" ||
				ans.header.Get("X-Tollgate-Bundle-Remaining") != fmt.Sprint(x402Bundle-2-i) || ans.header.Get("PAYMENT-RESPONSE") != "" {
				t.Fatalf("payment %d with bundle calls left: %s", i+2, ans)
			}
			// The same authorization again: refused, not settled.
			again := e.rpc(fg, "PAYMENT-SIGNATURE", hdr)
			if again.status != http.StatusPaymentRequired || !bytes.Contains(again.body, []byte("will not be settled")) {
				t.Fatalf("payment %d replayed: %s", i+2, again)
			}
			if e.authUsed(payer, a.nonce) {
				t.Fatalf("payment %d was settled on chain", i+2)
			}
		}
		if n := calls.total(); n != 2 {
			t.Fatalf("facilitator calls: %s, want one verify and one settle", calls)
		}
		if e.balance(payer) != before-x402Price || e.balance(e.payTo) != payToBefore+x402Price {
			t.Fatalf("funds moved %+d / %+d, want −%d / +%d", e.balance(payer)-before, e.balance(e.payTo)-payToBefore, x402Price, x402Price)
		}
		e.hardWantBundle(payer, x402Bundle-4, x402Bundle, 4)
	})

	t.Run("Redis down before settlement", func(t *testing.T) {
		e := e.at(t)
		port := caddyrun.FreePort(t)
		srv := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no")
		var out syncBuf
		srv.Stdout, srv.Stderr = &out, &out
		if err := srv.Start(); err != nil {
			t.Fatalf("redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = srv.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = srv.Process.Kill()
			<-exited
		})
		redisURL := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
		own := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { _ = own.Close() })
		settletest.Eventually(t, 10*time.Second, "dedicated redis-server answers", func() (bool, error) {
			return own.Ping(e.ctx).Err() == nil, nil
		})
		facURL, calls := e.hardProxy()
		rd := e.hardGateway(hardGW{facilitator: facURL, redisURL: redisURL})
		// The gateway works on this Redis: a 402 with the requirement.
		resource, acc := e.issued(rd)

		if err := srv.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-exited
		settletest.Eventually(t, 10*time.Second, "dedicated redis-server gone", func() (bool, error) {
			ctx, cancel := context.WithTimeout(e.ctx, time.Second)
			defer cancel()
			return own.Ping(ctx).Err() != nil, nil
		})

		key := e.wallet("redis down", 1_000_000)
		payer := crypto.PubkeyToAddress(key.PublicKey)
		before, payToBefore := e.balance(payer), e.balance(e.payTo)
		a := e.auth(key)
		hdr := v2Header(a, a.sign(8453, e.asset), resource, acc)
		ans := e.rpc(rd, "PAYMENT-SIGNATURE", hdr)
		msg := hardRPCError(t, ans, http.StatusServiceUnavailable, -32603)
		if !strings.Contains(msg, "metering unavailable") || ans.header.Get("Retry-After") == "" {
			t.Fatalf("Redis down: 503 message %q, Retry-After %q; want metering unavailable and a Retry-After", msg, ans.header.Get("Retry-After"))
		}
		if n := calls.total(); n != 0 {
			t.Fatalf("Redis down, yet the facilitator was called: %s", calls)
		}
		if e.authUsed(payer, a.nonce) || e.balance(payer) != before || e.balance(e.payTo) != payToBefore {
			t.Fatalf("Redis down, yet the payment settled: used %v, payer %+d", e.authUsed(payer, a.nonce), e.balance(payer)-before)
		}
		e.hardWantNoBundle(payer)
		// Nothing was consumed: the same authorization pays on a working gateway.
		e.expectPaidBundle(gw, hdr, payer, 0)
		if !e.authUsed(payer, a.nonce) || e.balance(payer) != before-x402Price {
			t.Fatalf("the authorization refused while Redis was down did not pay afterwards")
		}
	})
}

// expectPaidBundle sends a v2 payment to gw and checks it was served and
// settled as the (prior+1)-th payment of payer: a 200 with a new bundle
// key, granted (prior+1)·1000 calls.
func (e *x402Env) expectPaidBundle(gw *caddyrun.Server, hdr string, payer common.Address, prior int) {
	e.t.Helper()
	ans := e.rpc(gw, "PAYMENT-SIGNATURE", hdr)
	if prior == 0 {
		e.expectPaid(ans, false, payer)
		return
	}
	// expectPaid wants 999 left; later grants add to the same bundle.
	left := (prior+1)*x402Bundle - (prior + 1)
	if ans.status != http.StatusOK || !bytes.Contains(ans.body, []byte(`"result":"0x`)) ||
		ans.header.Get("X-Tollgate-Bundle-Remaining") != fmt.Sprint(left) || !strings.HasPrefix(ans.header.Get("X-Tollgate-Bundle-Key"), "tg_") {
		e.t.Fatalf("payment %d: want 200 with %d bundle calls left and a bundle key, got %s", prior+1, left, ans)
	}
	s := decodeSettlement(e.t, ans.header.Get("PAYMENT-RESPONSE"))
	e.checkSettled(fmt.Sprint(s["transaction"]), payer)
}

// drainBundle leaves wallet's bundle as if every granted call had been
// used (calls 0, used = granted), so its next payment must settle; the
// calls themselves are not what these tests are about.
func (e *x402Env) drainBundle(wallet common.Address) {
	e.t.Helper()
	l := balances.Layout{Prefix: e.prefix}
	k := l.Bundle(strings.ToLower(wallet.Hex()))
	granted, err := e.rdb.HGet(e.ctx, k, balances.BundleGranted).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.rdb.HSet(e.ctx, k, balances.BundleCalls, 0, balances.BundleUsed, granted).Err(); err != nil {
		e.t.Fatal(err)
	}
}
