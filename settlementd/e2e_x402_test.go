package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// payOut is the JSON line tests/x402/pay.mjs prints.
type payOut struct {
	Calls            int            `json:"calls"`
	OK               int            `json:"ok"`
	Payments         int            `json:"payments"`
	Transactions     []string       `json:"transactions"`
	BundleKeyPresent bool           `json:"bundle_key_present"`
	LastResult       any            `json:"last_result"`
	Statuses         map[string]int `json:"statuses"`
	Payers           map[string]int `json:"payers"`
	Remaining        *int           `json:"remaining"` // X-Tollgate-Bundle-Remaining of the last answer
	Settlements      []struct {
		Success     bool   `json:"success"`
		Transaction string `json:"transaction"`
		Network     string `json:"network"`
		Payer       string `json:"payer"`
	} `json:"settlements"`
	Wire struct {
		Requests        int `json:"requests"`
		Status402       int `json:"status402"`
		SIWxAttempts    int `json:"siwxAttempts"`
		SIWxOK          int `json:"siwxOk"`
		PaymentAttempts int `json:"paymentAttempts"`
		PaymentRefused  int `json:"paymentRefused"` // requests with a payment answered other than 200
	} `json:"wire"`
	SIWxError string `json:"siwx_error"`
	Error     string `json:"error"`
	// MODE=batch: the last voucher replayed, and one over the deposit.
	Vouchers    int       `json:"vouchers"` // answers to a voucher (no transaction)
	Replay      *batchTry `json:"replay"`
	OverDeposit *batchTry `json:"over_deposit"`
	ChannelID   string    `json:"channel_id"`
	// PAUSE_AFTER: the answer to the first payment sent after the pause.
	Resumed *batchTry `json:"resumed"`
	// REFUND=1: the official client's refund answer, and a voucher after it.
	Refund *struct {
		Success     bool   `json:"success"`
		Transaction string `json:"transaction"`
		Amount      string `json:"amount"`
	} `json:"refund"`
	RefundError string    `json:"refund_error"`
	AfterRefund *batchTry `json:"after_refund"`
}

type batchTry struct {
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// x402Client finds node and the installed tests/x402 packages; a missing one
// skips, or fails under TOLLGATE_REQUIRE_NODE.
func x402Client(t *testing.T) (node, dir string) {
	t.Helper()
	dir, _ = filepath.Abs("../tests/x402")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@x402", "fetch", "package.json"))
	}
	if err != nil {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/x402/node_modules missing (run make test, which runs npm ci there): %v", err)
		}
		t.Skipf("node or tests/x402/node_modules missing: %v", err)
	}
	return node, dir
}

// pay runs the independent client against gw and returns its report; it
// fails the test when the client exits non-zero.
func pay(t *testing.T, node, dir string, gw *caddyrun.Server, key, mode string, calls int, env ...string) payOut {
	t.Helper()
	var out payOut
	took := runClient(t, node, dir, "pay.mjs", fmt.Sprintf("MODE=%s CALLS=%d", mode, calls), 3*time.Minute,
		append([]string{"URL=" + gw.URL() + "/rpc", "EVM_PRIVATE_KEY=" + key, "MODE=" + mode, fmt.Sprintf("CALLS=%d", calls)}, env...), &out)
	t.Logf("pay.mjs MODE=%s CALLS=%d: %v, %d HTTP requests, %d payments", mode, calls, took, out.Wire.Requests, out.Payments)
	return out
}

// runClient runs a node client of tests/x402 (script, in dir) with env
// added to ours, within timeout, and decodes the JSON line it prints last
// into out; it fails the test, naming what it asked (never the env: it
// holds keys), when the client exits non-zero or prints no such line. It
// returns how long the client ran.
func runClient(t *testing.T, node, dir, script, what string, timeout time.Duration, env []string, out any) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), out); jerr != nil || err != nil {
		t.Fatalf("%s %s: %v (%v)\nstdout: %s\nstderr: %s", script, what, err, jerr, stdout.String(), stderr.String())
	}
	return time.Since(began).Round(time.Millisecond)
}

// left is Remaining, -1 when no answer carried it.
func (o payOut) left() int {
	if o.Remaining == nil {
		return -1
	}
	return *o.Remaining
}

// checkSettled checks tx is a successful TestUSDC transfer of the price
// from payer to payTo on the chain-8453 dev chain.
func (e *x402Env) checkSettled(tx string, payer common.Address) {
	e.t.Helper()
	r, err := e.base.TransactionReceipt(e.ctx, common.HexToHash(tx))
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("settlement tx %s: receipt %v, %v", tx, r, err)
	}
	for _, l := range r.Logs {
		if ev, err := e.usdc.UnpackTransferEvent(l); err == nil && l.Address == e.asset &&
			ev.From == payer && ev.To == e.payTo && ev.Value.Int64() == x402Price {
			return
		}
	}
	e.t.Fatalf("settlement tx %s has no TestUSDC Transfer %s → %s of %d", tx, payer.Hex(), e.payTo.Hex(), x402Price)
}

// TestX402IndependentClientEndToEnd: a real,
// independent client — tests/x402/pay.mjs: @x402/fetch 2.27 with @x402/evm,
// the @x402/extensions sign-in-with-x client extension and a viem local
// account, pinned in tests/x402/package-lock.json — calls our Caddy's /rpc
// with no key and no free tier: it gets a 402, pays 0.1 TestUSDC on the
// chain-8453 dev chain through settlementd's facilitator and gets the
// JSON-RPC result (from the chain-137 dev chain); the payer's balance drops
// by exactly 100,000 units and payTo's rises by as much; the next 999 calls
// are served from the bundle through SIWX without another payment; the
// 1,001st pays again. The bundle key works the same for a second wallet.
// Postgres records each grant (payer, amount, settlement tx hash) and the
// bundle calls' revenue (USDC, 100 units a call) through the stream ingest.
func TestX402IndependentClientEndToEnd(t *testing.T) {
	node, dir := x402Client(t)
	began := time.Now()
	e := startX402Env(t)
	m := e.net.Manifest
	payerAcct, err := m.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	devAcct, err := m.Account("developer-1")
	if err != nil {
		t.Fatal(err)
	}
	payer, dev := payerAcct.Addr(), devAcct.Addr()
	payerStart, devStart, payToStart := e.balance(payer), e.balance(dev), e.balance(e.payTo)
	if payerStart < 3*x402Price || devStart < x402Price {
		t.Fatalf("dev accounts hold too little TestUSDC: payer %d, developer-1 %d", payerStart, devStart)
	}
	t.Logf("set-up in %v", time.Since(began).Round(time.Millisecond))
	wantBundle := func(w common.Address, calls, granted, used int) {
		t.Helper()
		want := map[string]string{balances.BundleCalls: fmt.Sprint(calls), balances.BundleGranted: fmt.Sprint(granted),
			balances.BundleUsed: fmt.Sprint(used)}
		if got := e.bundle(w); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("bundle of %s in Redis: %v, want %v", w.Hex(), got, want)
		}
	}
	checkRun := func(out payOut, calls, payments int, w common.Address) {
		t.Helper()
		if out.Calls != calls || out.OK != calls || out.Payments != payments || len(out.Transactions) != payments ||
			fmt.Sprint(out.Statuses) != fmt.Sprint(map[string]int{"200": calls}) || out.Payers["bundle"] != calls ||
			!out.BundleKeyPresent || out.Error != "" {
			t.Fatalf("client report %+v: want %d calls, all 200 from the bundle, %d payment(s)", out, calls, payments)
		}
		if r, ok := out.LastResult.(string); !ok || !strings.HasPrefix(r, "0x") {
			t.Fatalf("last JSON-RPC result %v, want a block number", out.LastResult)
		}
		for _, s := range out.Settlements {
			if !s.Success || s.Network != x402NetworkV2 || !strings.EqualFold(s.Payer, w.Hex()) {
				t.Fatalf("PAYMENT-RESPONSE %+v, want success on %s by %s", s, x402NetworkV2, w.Hex())
			}
		}
		for _, tx := range out.Transactions {
			e.checkSettled(tx, w)
		}
	}

	// 1,000 calls through SIWX: one payment, then 999 calls drawn from the
	// bundle by a fresh SIGN-IN-WITH-X proof each, no second payment.
	run1 := pay(t, node, dir, e.gw, payerAcct.PrivateKey, "siwx", x402Bundle)
	checkRun(run1, x402Bundle, 1, payer)
	if run1.Wire.SIWxOK != x402Bundle-1 || run1.Wire.PaymentAttempts != 1 || run1.left() != 0 {
		t.Fatalf("SIWX: %d calls served by a SIGN-IN-WITH-X proof, %d payment attempts, %v left; want %d, 1, 0 (siwx_error %q)",
			run1.Wire.SIWxOK, run1.Wire.PaymentAttempts, run1.left(), x402Bundle-1, run1.SIWxError)
	}
	if got := e.balance(payer); got != payerStart-x402Price {
		t.Fatalf("payer TestUSDC %d → %d, want exactly −%d", payerStart, got, x402Price)
	}
	if got := e.balance(e.payTo); got != payToStart+x402Price {
		t.Fatalf("payTo TestUSDC %d → %d, want exactly +%d", payToStart, got, x402Price)
	}
	wantBundle(payer, 0, x402Bundle, x402Bundle)

	// The 1,001st call: SIWX is refused (no calls left), the client pays again.
	run2 := pay(t, node, dir, e.gw, payerAcct.PrivateKey, "siwx", 1)
	checkRun(run2, 1, 1, payer)
	if run2.Wire.SIWxOK != 0 || run2.Wire.SIWxAttempts != 1 || run2.Transactions[0] == run1.Transactions[0] {
		t.Fatalf("1,001st call: %+v", run2.Wire)
	}
	if got := e.balance(payer); got != payerStart-2*x402Price {
		t.Fatalf("payer TestUSDC after the second payment %d, want %d", got, payerStart-2*x402Price)
	}
	if got := e.balance(e.payTo); got != payToStart+2*x402Price {
		t.Fatalf("payTo TestUSDC after the second payment %d, want %d", got, payToStart+2*x402Price)
	}
	wantBundle(payer, x402Bundle-1, 2*x402Bundle, x402Bundle+1)

	// Key mode, another wallet: pay once, then X-API-Key: <bundle key>.
	const keyCalls = 5
	run3 := pay(t, node, dir, e.gw, devAcct.PrivateKey, "key", keyCalls)
	checkRun(run3, keyCalls, 1, dev)
	if run3.left() != x402Bundle-keyCalls || run3.Wire.SIWxAttempts != 0 {
		t.Fatalf("key mode: %v calls left, %d SIWX attempts; want %d, 0", run3.left(), run3.Wire.SIWxAttempts, x402Bundle-keyCalls)
	}
	if got := e.balance(dev); got != devStart-x402Price {
		t.Fatalf("developer-1 TestUSDC %d → %d, want −%d", devStart, got, x402Price)
	}
	if got := e.balance(e.payTo); got != payToStart+3*x402Price {
		t.Fatalf("payTo TestUSDC %d, want %d", got, payToStart+3*x402Price)
	}
	wantBundle(dev, x402Bundle-keyCalls, x402Bundle, keyCalls)

	// Postgres, through the stream ingest: one bundle_grants row per
	// settlement, named by its tx hash; the ledger; the bundle calls' revenue.
	type grant struct {
		id, wallet, network string
		calls, amount       int64
	}
	wantGrants := []grant{
		{strings.ToLower(run1.Transactions[0]), strings.ToLower(payer.Hex()), x402NetworkV2, x402Bundle, x402Price},
		{strings.ToLower(run2.Transactions[0]), strings.ToLower(payer.Hex()), x402NetworkV2, x402Bundle, x402Price},
		{strings.ToLower(run3.Transactions[0]), strings.ToLower(dev.Hex()), x402NetworkV2, x402Bundle, x402Price},
	}
	sort.Slice(wantGrants, func(i, j int) bool { return wantGrants[i].id < wantGrants[j].id })
	var got []grant
	settletest.Eventually(t, 20*time.Second, "three bundle_grants rows", func() (bool, error) {
		got = nil
		rows, err := e.pool.Query(e.ctx, `SELECT lower(id), lower(wallet), network, calls, amount_units FROM bundle_grants ORDER BY lower(id)`)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		for rows.Next() {
			var g grant
			if err := rows.Scan(&g.id, &g.wallet, &g.network, &g.calls, &g.amount); err != nil {
				return false, err
			}
			got = append(got, g)
		}
		return len(got) >= len(wantGrants), rows.Err()
	})
	if fmt.Sprint(got) != fmt.Sprint(wantGrants) {
		t.Fatalf("bundle_grants %v, want %v", got, wantGrants)
	}
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM account_ledger WHERE kind = 'bundle_grant' AND units = $1 AND calls = $2`,
		x402Price, x402Bundle); n != 3 {
		t.Fatalf("%d bundle_grant ledger rows, want 3", n)
	}
	const served = x402Bundle + 1 + keyCalls
	settletest.Eventually(t, 20*time.Second, fmt.Sprintf("revenue of %d bundle calls ingested", served), func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE payer = 'bundle'`) >= served, nil
	})
	var calls, units, off int64
	if err := e.pool.QueryRow(e.ctx, `SELECT sum(calls)::bigint, sum(amount_units)::bigint,
		count(*) FILTER (WHERE asset <> 'USDC' OR amount_units <> 100 * calls) FROM revenue_events WHERE payer = 'bundle'`).Scan(&calls, &units, &off); err != nil {
		t.Fatal(err)
	}
	if calls != served || units != 100*served || off != 0 {
		t.Fatalf("bundle revenue: %d calls, %d units, %d rows not USDC at 100 units a call; want %d calls, %d units", calls, units, off,
			served, 100*served)
	}
	t.Logf("end to end in %v: payer paid %d units twice (txs %s, %s), developer-1 once (%s); %d bundle calls, %d units of USDC revenue",
		time.Since(began).Round(time.Millisecond), x402Price, run1.Transactions[0], run2.Transactions[0], run3.Transactions[0], calls, units)
}

// TestX402GenericClientPaysOnce covers generic x402
// clients (and then the same for the legacy v1 x402-fetch 1.2.0):
// @x402/fetch 2.27 with ExactEvmScheme and no Sign-In-With-X hook
// (tests/x402/pay.mjs MODE=plain) answers every 402 with a new payment. The
// first is settled and buys a bundle; the next 19 are served from that
// bundle and never settled. On chain the payer pays exactly 0.1 TestUSDC
// once; Redis shows 20 calls drawn; Postgres one grant.
func TestX402GenericClientPaysOnce(t *testing.T) {
	node, dir := x402Client(t)
	e := startX402Env(t)
	payerAcct, err := e.net.Manifest.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	payer := payerAcct.Addr()
	payerStart, payToStart := e.balance(payer), e.balance(e.payTo)
	const calls = 20
	out := pay(t, node, dir, e.gw, payerAcct.PrivateKey, "plain", calls)
	if out.Calls != calls || out.OK != calls || fmt.Sprint(out.Statuses) != fmt.Sprint(map[string]int{"200": calls}) ||
		out.Payers["bundle"] != calls || out.Error != "" {
		t.Fatalf("client report %+v: want %d calls, all 200 from the bundle", out, calls)
	}
	// Every call met a 402 and answered it with a payment; one settled.
	if out.Wire.PaymentAttempts != calls || out.Wire.SIWxAttempts != 0 || out.Payments != 1 || len(out.Transactions) != 1 {
		t.Fatalf("wire %+v, %d settlements %v: want %d payment headers, 1 settlement", out.Wire, out.Payments, out.Transactions, calls)
	}
	e.checkSettled(out.Transactions[0], payer)
	if got := e.balance(payer); got != payerStart-x402Price {
		t.Fatalf("payer TestUSDC %d → %d, want exactly −%d", payerStart, got, x402Price)
	}
	if got := e.balance(e.payTo); got != payToStart+x402Price {
		t.Fatalf("payTo TestUSDC %d → %d, want exactly +%d", payToStart, got, x402Price)
	}
	want := map[string]string{balances.BundleCalls: fmt.Sprint(x402Bundle - calls), balances.BundleGranted: fmt.Sprint(x402Bundle),
		balances.BundleUsed: fmt.Sprint(calls)}
	if got := e.bundle(payer); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("bundle in Redis %v, want %v", got, want)
	}
	settletest.Eventually(t, 20*time.Second, "the grant and the 20 calls' revenue ingested", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE payer = 'bundle'`) >= calls, nil
	})
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM bundle_grants`); n != 1 {
		t.Fatalf("%d bundle_grants rows, want 1", n)
	}
	if n := settletest.Count(t, e.pool, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE payer = 'bundle'`); n != calls {
		t.Fatalf("%d bundle calls of revenue, want %d", n, calls)
	}

	// The same with the legacy v1 client, x402-fetch 1.2.0 (X-PAYMENT), from
	// another wallet.
	devAcct, err := e.net.Manifest.Account("developer-1")
	if err != nil {
		t.Fatal(err)
	}
	dev := devAcct.Addr()
	devStart, payToStart := e.balance(dev), e.balance(e.payTo)
	v1 := payV1(t, e.gw, devAcct.PrivateKey, calls)
	if v1.OK != calls || v1.Payers["bundle"] != calls || v1.Wire.PaymentAttempts != calls || v1.Payments != 1 || len(v1.Transactions) != 1 {
		t.Fatalf("x402-fetch report %+v: want %d calls from the bundle, %d X-PAYMENT headers, 1 settlement", v1, calls, calls)
	}
	e.checkSettled(v1.Transactions[0], dev)
	if got := e.balance(dev); got != devStart-x402Price {
		t.Fatalf("developer-1 TestUSDC %d → %d, want exactly −%d", devStart, got, x402Price)
	}
	if got := e.balance(e.payTo); got != payToStart+x402Price {
		t.Fatalf("payTo TestUSDC %d → %d, want exactly +%d", payToStart, got, x402Price)
	}
	want[balances.BundleCalls] = fmt.Sprint(x402Bundle - calls)
	if got := e.bundle(dev); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("developer-1's bundle in Redis %v, want %v", got, want)
	}
}

// payV1Out is the JSON line tests/x402v1/pay-v1.mjs prints.
type payV1Out struct {
	Calls        int            `json:"calls"`
	OK           int            `json:"ok"`
	Payments     int            `json:"payments"`
	Transactions []string       `json:"transactions"`
	Statuses     map[string]int `json:"statuses"`
	Payers       map[string]int `json:"payers"`
	Wire         struct {
		Requests        int `json:"requests"`
		Status402       int `json:"status402"`
		PaymentAttempts int `json:"paymentAttempts"`
	} `json:"wire"`
	Error string `json:"error"`
}

// payV1 runs the legacy x402-fetch client (tests/x402v1) against gw.
func payV1(t *testing.T, gw *caddyrun.Server, key string, calls int) payV1Out {
	t.Helper()
	dir, _ := filepath.Abs("../tests/x402v1")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "x402-fetch", "package.json"))
	}
	if err != nil {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/x402v1/node_modules missing (make test runs npm ci there): %v", err)
		}
		t.Skipf("node or tests/x402v1/node_modules missing: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "pay-v1.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "URL="+gw.URL()+"/rpc", "EVM_PRIVATE_KEY="+key, fmt.Sprintf("CALLS=%d", calls))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out payV1Out
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &out); jerr != nil || runErr != nil {
		t.Fatalf("pay-v1.mjs CALLS=%d: %v (%v)\nstdout: %s\nstderr: %s", calls, runErr, jerr, stdout.String(), stderr.String())
	}
	t.Logf("pay-v1.mjs CALLS=%d: %d HTTP requests, %d settlements", calls, out.Wire.Requests, out.Payments)
	return out
}

// TestX402BatchSettlementEndToEnd pays by batch settlement:
// the official batch-settlement client (tests/x402/pay.mjs MODE=batch:
// @x402/fetch + @x402/evm 2.27.0 BatchSettlementEvmScheme with its defaults
// and a viem local account) makes 1,000 calls through our Caddy on one
// deposit into our BatchSettlement contract on the chain-8453 dev chain
// (genesis code at the fixed address the client uses). settlementd's
// facilitator makes the deposit; the gateway draws each voucher without a
// chain call; settlementd's claims job claims and settles the channel, and
// payTo receives exactly what the vouchers claimed (on-chain balances). The
// last voucher replayed, and a voucher over the deposit, are refused with
// the scheme's codes.
func TestX402BatchSettlementEndToEnd(t *testing.T) {
	node, dir := x402Client(t)
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "* * * * * *",
	})
	payerAcct, err := e.net.Manifest.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	payer := payerAcct.Addr()
	payer0, payTo0 := e.usdcBalance(payer), e.usdcBalance(e.payTo)

	const calls = 1000
	out := pay(t, node, dir, e.gw, payerAcct.PrivateKey, "batch", calls)
	if out.OK != calls || out.Error != "" {
		t.Fatalf("%d of %d calls ok: %s", out.OK, calls, out.Error)
	}
	// One deposit on chain: the only payment that moved money from the payer.
	deposits := 0
	for _, s := range out.Settlements {
		if s.Transaction != "" {
			deposits++
		}
	}
	const perCall, deposit = 100, 100_000 // 0.0001 USDC a call; minDeposit 0.1 USDC
	if deposits != 1 || out.Vouchers != calls-1 {
		t.Fatalf("%d settlements carried a transaction, %d were vouchers; want 1 (the deposit) and %d", deposits, out.Vouchers, calls-1)
	}
	if d := payer0 - e.usdcBalance(payer); d != deposit {
		t.Fatalf("the payer paid %d, want one deposit of %d", d, deposit)
	}
	if out.Replay == nil || out.Replay.Status != 402 || out.Replay.Error != meter.ReasonCumulativeMismatch {
		t.Fatalf("replayed voucher answered %+v, want 402 %s", out.Replay, meter.ReasonCumulativeMismatch)
	}
	if out.OverDeposit == nil || out.OverDeposit.Status != 402 || out.OverDeposit.Error != meter.ReasonOverDeposit {
		t.Fatalf("voucher over the deposit answered %+v, want 402 %s", out.OverDeposit, meter.ReasonOverDeposit)
	}
	// settlementd claims the channel and settles it: payTo receives exactly
	// the 1,000 vouchers' 100,000 units, and the channel's totalClaimed says so.
	settletest.Eventually(t, 30*time.Second, "the vouchers claimed and settled to payTo", func() (bool, error) {
		return e.usdcBalance(e.payTo)-payTo0 == calls*perCall, nil
	})
	bs := batchsettlement.NewBatchSettlement()
	ch, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), nil, bs.PackChannels(common.HexToHash(out.ChannelID)), bs.UnpackChannels)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Balance.Int64() != deposit || ch.TotalClaimed.Int64() != calls*perCall {
		t.Fatalf("channel on chain: balance %v, totalClaimed %v", ch.Balance, ch.TotalClaimed)
	}
	// The transactions are recorded in PostgreSQL, the deposit and the claim.
	var n int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM chain_txs WHERE kind IN ($1, $2)`,
		"x402_batch_settlement_deposit", "x402_batch_settlement_claim_settle").Scan(&n); err != nil || n < 2 {
		t.Fatalf("chain_txs holds %d batch-settlement transactions (%v), want the deposit and a claim", n, err)
	}
	if d := e.usdcBalance(e.payTo) - payTo0; d != calls*perCall {
		t.Fatalf("payTo received %d after the claims, want %d", d, calls*perCall)
	}
	// The calls' revenue reaches PostgreSQL as bundle revenue of the payer's
	// wallet (USDC, 100 units a call), which epochs split like any bundle's.
	settletest.Eventually(t, 20*time.Second, "the 1,000 calls' revenue ingested", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE payer = 'bundle'`) >= calls, nil
	})
	var revCalls, revUnits, off int64
	if err := e.pool.QueryRow(e.ctx, `SELECT COALESCE(sum(calls), 0)::bigint, COALESCE(sum(amount_units), 0)::bigint,
		count(*) FILTER (WHERE asset <> 'USDC' OR amount_units <> 100 * calls OR lower(account) <> $1) FROM revenue_events WHERE payer = 'bundle'`,
		strings.ToLower(payer.Hex())).Scan(&revCalls, &revUnits, &off); err != nil {
		t.Fatal(err)
	}
	if revCalls != calls || revUnits != calls*perCall || off != 0 {
		t.Fatalf("revenue: %d calls, %d units, %d rows off; want %d calls, %d units of the payer's wallet", revCalls, revUnits, off, calls, calls*perCall)
	}
	// The channel's newest state reaches PostgreSQL too (what a rebuild after
	// a Redis loss restores): the last voucher, its signature, the claim.
	settletest.Eventually(t, 20*time.Second, "the channel's state ingested", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT count(*) FROM x402_channels WHERE channel_id = $1 AND charged = $2 AND signed = $2
			AND claimed = $2 AND balance = $3 AND length(signature) = 132 AND wallet = $4 AND NOT closed`,
			strings.ToLower(out.ChannelID), calls*perCall, deposit, strings.ToLower(payer.Hex())) == 1, nil
	})
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM x402_channel_deposits WHERE channel_id = $1`, strings.ToLower(out.ChannelID)); n != 1 {
		t.Fatalf("%d deposit transactions recorded for the channel, want 1", n)
	}
}

// TestX402BatchSettlementRefund: after N vouchers, the official client's
// cooperative refund (BatchSettlementEvmScheme.refund, tests/x402/pay.mjs
// REFUND=1) closes the channel: settlementd claims what the vouchers
// charged and refunds the rest with the receiver authorizer's
// refundWithSignature in one transaction (the claims job is scheduled too
// rarely to have claimed first). payTo gets exactly N×100 units, the payer
// the deposit less N×100, the channel holds nothing unclaimed, the
// transaction is recorded in chain_txs, and a voucher after the refund is
// refused with ReasonChannelRefunded.
func TestX402BatchSettlementRefund(t *testing.T) {
	node, dir := x402Client(t)
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "0 0 0 1 1 *",
	})
	payerAcct, err := e.net.Manifest.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	payer := payerAcct.Addr()
	payer0, payTo0 := e.usdcBalance(payer), e.usdcBalance(e.payTo)
	const calls, perCall, deposit = 7, 100, 100_000
	out := pay(t, node, dir, e.gw, payerAcct.PrivateKey, "batch", calls, "REFUND=1")
	if out.OK != calls || out.Error != "" {
		t.Fatalf("%d of %d calls ok: %s", out.OK, calls, out.Error)
	}
	if out.RefundError != "" || out.Refund == nil || !out.Refund.Success || out.Refund.Transaction == "" {
		t.Fatalf("refund: %+v, error %q", out.Refund, out.RefundError)
	}
	if out.Refund.Amount != fmt.Sprint(deposit-calls*perCall) {
		t.Fatalf("the refund answer names %s units, want %d", out.Refund.Amount, deposit-calls*perCall)
	}
	if d := e.usdcBalance(e.payTo) - payTo0; d != calls*perCall {
		t.Fatalf("payTo received %d, want exactly the vouchers' %d", d, calls*perCall)
	}
	if d := payer0 - e.usdcBalance(payer); d != calls*perCall {
		t.Fatalf("the payer is down %d after the refund, want %d (deposit %d less the refund)", d, calls*perCall, deposit)
	}
	bs := batchsettlement.NewBatchSettlement()
	ch, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), nil, bs.PackChannels(common.HexToHash(out.ChannelID)), bs.UnpackChannels)
	if err != nil {
		t.Fatal(err)
	}
	// The channel's balance is what was claimed (and settled to payTo): nothing left in escrow.
	if ch.Balance.Int64() != calls*perCall || ch.TotalClaimed.Int64() != calls*perCall {
		t.Fatalf("channel on chain: balance %v, totalClaimed %v; want both %d (0 unclaimed)", ch.Balance, ch.TotalClaimed, calls*perCall)
	}
	if held := e.usdcBalance(batchsettle.SettlementAddress); held != 0 {
		t.Fatalf("the settlement contract still holds %d units", held)
	}
	if out.AfterRefund == nil || out.AfterRefund.Status != 402 || out.AfterRefund.Error != meter.ReasonChannelRefunded {
		t.Fatalf("a voucher after the refund answered %+v, want 402 %s", out.AfterRefund, meter.ReasonChannelRefunded)
	}
	var n int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM chain_txs WHERE kind = 'x402_batch_settlement_refund' AND state = 'mined'
		AND lower(tx_hash) = lower($1)`, out.Refund.Transaction).Scan(&n); err != nil || n != 1 {
		t.Fatalf("chain_txs holds %d mined refunds with hash %s (%v), want 1", n, out.Refund.Transaction, err)
	}
}

func (e *x402Env) usdcBalance(a common.Address) int64 {
	e.t.Helper()
	b, err := bind.Call(e.usdcC, nil, e.usdc.PackBalanceOf(a), e.usdc.UnpackBalanceOf)
	if err != nil {
		e.t.Fatal(err)
	}
	return b.Int64()
}
