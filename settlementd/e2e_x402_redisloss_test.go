package main

import (
	"bufio"
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
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// pausedOut is the line tests/x402/pay.mjs prints at PAUSE_AFTER.
type pausedOut struct {
	Paused *struct {
		Calls int `json:"calls"`
		OK    int `json:"ok"`
		Wire  struct {
			Requests        int `json:"requests"`
			PaymentAttempts int `json:"paymentAttempts"`
			PaymentRefused  int `json:"paymentRefused"`
		} `json:"wire"`
		LastPaid  string `json:"last_paid"`
		ChannelID string `json:"channel_id"`
	} `json:"paused"`
}

// TestX402BatchChannelSurvivesRedisLoss shows that
// a batch-settlement channel keeps working across a Redis loss.
// The official client (tests/x402/pay.mjs MODE=batch, @x402/evm
// BatchSettlementEvmScheme) deposits once and pays 500 calls with vouchers
// through our Caddy, on a redis-server of the test's own; it then pauses
// (PAUSE_AFTER) with its channel state in memory. Ingest is held back
// meanwhile (the test locks x402_channels), so PostgreSQL has no state of
// the channel when Redis is SIGKILLed and restarted empty.
// The gateway answers the replayed last voucher 503 metering_recovering
// until settlementd has rebuilt the channel from PostgreSQL (after the
// gateway appended the facts it kept), then 402 cumulative mismatch: the
// channel is back at exactly 500 calls. The same client process, same
// channel, goes on with 500 more vouchers: the first one after the loss is
// accepted (200), and no voucher of the run is refused. Afterwards
// everything counts 1,000 calls exactly once: the channel in PostgreSQL
// (charged, signed, claimed), the revenue events and channel debits of the
// wallet, what payTo received on chain from settlementd's claims, and the
// channel's totalClaimed on chain; the deposit was made once, the last
// voucher replayed is refused, and one more voucher is over the deposit.
func TestX402BatchChannelSurvivesRedisLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway, settlementd, the dev chains and its own redis-server")
	}
	node, dir := x402Client(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is required")
	}
	began := time.Now()
	rs := startOwnRedis(t, "") // no persistence: restarted empty
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvOn(t, rs.url(), map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "* * * * * *", // claims before and after the loss
		"TOLLGATE_LEADER_HEARTBEAT":             "200ms",
		"TOLLGATE_LEADER_RETRY":                 "200ms",
	})
	payerAcct, err := e.net.Manifest.Account("payer")
	if err != nil {
		t.Fatal(err)
	}
	payer := payerAcct.Addr()
	wallet := strings.ToLower(payer.Hex())
	payer0, payTo0 := e.usdcBalance(payer), e.usdcBalance(e.payTo)
	const (
		before, after   = 500, 500
		calls           = before + after
		perCall         = 100     // 0.0001 USDC a call
		deposit         = 100_000 // minDeposit 0.1 USDC: exactly the 1,000 calls
		recoveringBound = 30 * time.Second
	)
	t.Logf("set-up in %v", time.Since(began).Round(time.Millisecond))

	// Ingest lags behind until the loss: a transaction of the test holds
	// x402_channels, so the batch carrying the channel's first state waits
	// (its debits and revenue, written first, may commit) and the entries
	// after it are only in Redis when it dies. PostgreSQL has no state of
	// the channel at the kill; the gateway's kept facts alone bring it back.
	lock, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock := func() { _ = lock.Rollback(context.Background()) }
	t.Cleanup(unlock)
	if _, err := lock.Exec(e.ctx, `LOCK TABLE x402_channels IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	// The client, one process across the loss: it keeps its channel state
	// (the cumulative amount charged) in memory.
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "pay.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "URL="+e.gw.URL()+"/rpc", "EVM_PRIVATE_KEY="+payerAcct.PrivateKey, "MODE=batch",
		fmt.Sprintf("CALLS=%d", calls), fmt.Sprintf("PAUSE_AFTER=%d", before))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = stdin.Close()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("pay.mjs ended before %s\nstderr: %s", what, stderr.String())
			}
			return l
		case <-ctx.Done():
			t.Fatalf("pay.mjs: no %s: %v\nstderr: %s", what, ctx.Err(), stderr.String())
		}
		return ""
	}

	// Phase 1: the deposit and 499 vouchers.
	phase1 := time.Now()
	var p pausedOut
	if l := line("pause"); json.Unmarshal([]byte(l), &p) != nil || p.Paused == nil {
		t.Fatalf("pay.mjs printed %q, want its pause line\nstderr: %s", l, stderr.String())
	}
	paused := p.Paused
	if paused.Calls != before || paused.OK != before || paused.Wire.PaymentRefused != 0 || paused.LastPaid == "" ||
		!strings.HasPrefix(paused.ChannelID, "0x") {
		t.Fatalf("at the pause: %+v; want %d calls served, no payment refused, the last voucher and its channel", paused, before)
	}
	channelID := strings.ToLower(paused.ChannelID)
	bs := batchsettlement.NewBatchSettlement()
	onChain := func() (balance, claimed int64) {
		t.Helper()
		ch, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), &bind.CallOpts{Context: e.ctx},
			bs.PackChannels(common.HexToHash(channelID)), bs.UnpackChannels)
		if err != nil {
			t.Fatal(err)
		}
		return ch.Balance.Int64(), ch.TotalClaimed.Int64()
	}
	_, claimedBefore := onChain()
	// What PostgreSQL had at the kill: no channel (the lock), and the debits
	// of at most the batch ingest is stuck on.
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM x402_channels`); n != 0 {
		t.Fatalf("PostgreSQL holds %d channel states before the loss, want none (ingest held back)", n)
	}
	pgDebits := settletest.Count(t, e.pool, `SELECT count(*) FROM debits WHERE payer = 'channel'`)

	// The loss: SIGKILL, and the same port again with nothing in it.
	killAt := time.Now()
	rs.kill()
	rs.start()
	upAt := time.Now()
	if ok, err := reconcile.MarkerPresent(e.ctx, e.rdb, e.prefix); err != nil || ok {
		t.Fatalf("the restarted Redis has its generation marker (%v, %v): it was not emptied", ok, err)
	}
	unlock()
	t.Logf("%d calls in %v; Redis killed (PostgreSQL had no channel state and %d of the %d channel debits, the chain %d units claimed), answering again after %v",
		before, killAt.Sub(phase1).Round(time.Millisecond), pgDebits, before, claimedBefore, upAt.Sub(killAt).Round(time.Millisecond))

	// Until the channel is rebuilt, the last voucher replayed is answered
	// 503 metering_recovering (never "unknown channel", which would send the
	// client to a new deposit); then 402 cumulative mismatch with the
	// channel's state (what the official client would adopt): the gateway
	// holds the channel again at exactly the 500 vouchers drawn, the last
	// one's amount and signature (what a claim pays from), the deposit.
	var lastVoucher struct {
		Payload struct {
			Voucher struct {
				MaxClaimableAmount string `json:"maxClaimableAmount"`
				Signature          string `json:"signature"`
			} `json:"voucher"`
		} `json:"payload"`
	}
	if raw, err := base64.StdEncoding.DecodeString(paused.LastPaid); err != nil || json.Unmarshal(raw, &lastVoucher) != nil ||
		lastVoucher.Payload.Voucher.MaxClaimableAmount != strconv.Itoa(before*perCall) || lastVoucher.Payload.Voucher.Signature == "" {
		t.Fatalf("the last voucher before the pause %q: want one of %d units (%v)", paused.LastPaid, before*perCall, err)
	}
	wantState := fmt.Sprintf("charged %d, balance %d, signed %d by %s", before*perCall, deposit, before*perCall,
		strings.ToLower(lastVoucher.Payload.Voucher.Signature))
	statuses := map[string]int{}
	var markerAt time.Time
	settletest.Eventually(t, recoveringBound, "the gateway refusing the replayed last voucher as already used", func() (bool, error) {
		if markerAt.IsZero() {
			if ok, _ := reconcile.MarkerPresent(e.ctx, e.rdb, e.prefix); ok {
				markerAt = time.Now()
			}
		}
		a := e.rpc(e.gw, "PAYMENT-SIGNATURE", paused.LastPaid)
		reason := ""
		switch a.status {
		case http.StatusPaymentRequired:
			reason = requiredError(t, a)
		case http.StatusServiceUnavailable:
			if bytes.Contains(a.body, []byte(meter.ReasonRecovering)) {
				reason = meter.ReasonRecovering
			}
		}
		statuses[fmt.Sprintf("%d %s", a.status, reason)]++
		switch {
		case a.status == http.StatusPaymentRequired && reason == meter.ReasonCumulativeMismatch:
			if got := correctiveState(t, a); got != wantState {
				t.Fatalf("the gateway's channel after the rebuild: %s; want %s", got, wantState)
			}
			return true, nil
		case a.status == http.StatusServiceUnavailable:
			return false, nil
		}
		t.Fatalf("the replayed last voucher after the restart: %s", a)
		return false, nil
	})
	backAt := time.Now()
	if statuses["503 "+meter.ReasonRecovering] == 0 {
		t.Fatalf("no replay met the rebuild window (%v): the test did not exercise the loss", statuses)
	}
	if markerAt.IsZero() {
		markerAt = backAt
	}
	t.Logf("after the restart: generation marker at +%v, the channel back on the gateway at +%v; probe answers %v",
		markerAt.Sub(upAt).Round(time.Millisecond), backAt.Sub(upAt).Round(time.Millisecond), statuses)

	// Phase 2: the same client, the same channel, the next voucher.
	phase2 := time.Now()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	last := line("report")
	_ = stdin.Close()
	werr := cmd.Wait()
	exited = true
	var out payOut
	if jerr := json.Unmarshal([]byte(last), &out); jerr != nil || werr != nil {
		t.Fatalf("pay.mjs: %v (%v)\nreport: %s\nstderr: %s", werr, jerr, last, stderr.String())
	}
	t.Logf("%d more calls in %v after the loss", after, time.Since(phase2).Round(time.Millisecond))
	if out.Resumed == nil || out.Resumed.Status != http.StatusOK {
		t.Fatalf("the first voucher after the loss was answered %+v, want 200", out.Resumed)
	}
	if out.Calls != calls || out.OK != calls || out.Error != "" || out.Wire.PaymentRefused != 0 {
		t.Fatalf("client: %d calls, %d ok, %d payments refused on the wire (error %q); want %d, %d, 0",
			out.Calls, out.OK, out.Wire.PaymentRefused, out.Error, calls, calls)
	}
	deposits := 0
	for _, s := range out.Settlements {
		if s.Transaction != "" {
			deposits++
		}
	}
	if deposits != 1 || out.Vouchers != calls-1 || strings.ToLower(out.ChannelID) != channelID {
		t.Fatalf("%d deposits, %d vouchers on channel %s; want 1, %d on %s", deposits, out.Vouchers, out.ChannelID, calls-1, channelID)
	}
	if out.Replay == nil || out.Replay.Status != 402 || out.Replay.Error != meter.ReasonCumulativeMismatch {
		t.Fatalf("the last voucher replayed answered %+v, want 402 %s", out.Replay, meter.ReasonCumulativeMismatch)
	}
	if out.OverDeposit == nil || out.OverDeposit.Status != 402 || out.OverDeposit.Error != meter.ReasonOverDeposit {
		t.Fatalf("a voucher over the deposit answered %+v, want 402 %s", out.OverDeposit, meter.ReasonOverDeposit)
	}
	if d := payer0 - e.usdcBalance(payer); d != deposit {
		t.Fatalf("the payer paid %d, want one deposit of %d", d, deposit)
	}

	// The chain: settlementd's claims pay payTo exactly the 1,000 vouchers.
	settletest.Eventually(t, 60*time.Second, "the vouchers claimed and settled to payTo", func() (bool, error) {
		return e.usdcBalance(e.payTo)-payTo0 >= calls*perCall, nil
	})
	if bal, claimed := onChain(); bal != deposit || claimed != calls*perCall {
		t.Fatalf("channel on chain: balance %d, totalClaimed %d; want %d, %d", bal, claimed, deposit, calls*perCall)
	}
	// PostgreSQL: the channel, its one deposit, the revenue and the debits.
	settletest.Eventually(t, 30*time.Second, "the channel's final state ingested", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT count(*) FROM x402_channels WHERE channel_id = $1 AND charged = $2 AND signed = $2
			AND claimed = $2 AND balance = $3 AND length(signature) = 132 AND wallet = $4 AND NOT closed`,
			channelID, calls*perCall, deposit, wallet) == 1, nil
	})
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM x402_channel_deposits WHERE channel_id = $1`, channelID); n != 1 {
		t.Fatalf("%d deposit transactions recorded for the channel, want 1", n)
	}
	settletest.Eventually(t, 30*time.Second, "the calls' revenue and debits ingested", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE payer = 'bundle'`) >= calls &&
			settletest.Count(t, e.pool, `SELECT count(*) FROM debits WHERE payer = 'channel'`) >= calls, nil
	})
	var revCalls, revUnits, revOff, debits, debitUnits, debitOff int64
	if err := e.pool.QueryRow(e.ctx, `SELECT COALESCE(sum(calls), 0)::bigint, COALESCE(sum(amount_units), 0)::bigint,
		count(*) FILTER (WHERE asset <> 'USDC' OR amount_units <> $2 * calls OR lower(account) <> $1) FROM revenue_events WHERE payer = 'bundle'`,
		wallet, perCall).Scan(&revCalls, &revUnits, &revOff); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*), COALESCE(sum(amount_units), 0)::bigint,
		count(*) FILTER (WHERE lower(account) <> $1) FROM debits WHERE payer = 'channel'`, wallet).Scan(&debits, &debitUnits, &debitOff); err != nil {
		t.Fatal(err)
	}
	if revCalls != calls || revUnits != calls*perCall || revOff != 0 || debits != calls || debitUnits != calls*perCall || debitOff != 0 {
		t.Fatalf("PostgreSQL: revenue %d calls %d units (%d rows off), channel debits %d of %d units (%d off); want %d calls of %d units each way",
			revCalls, revUnits, revOff, debits, debitUnits, debitOff, calls, calls*perCall)
	}
	claimTxs := settletest.Count(t, e.pool, `SELECT count(*) FROM chain_txs WHERE kind = 'x402_batch_settlement_claim_settle'`)
	// Nothing is claimed twice: payTo's balance is still exact once every
	// claim is recorded (the claims job keeps running).
	if d := e.usdcBalance(e.payTo) - payTo0; d != calls*perCall {
		t.Fatalf("payTo received %d from the claims, want exactly %d", d, calls*perCall)
	}
	replayed := 0
	for _, m := range replayedRe.FindAllStringSubmatch(e.gw.Output(), -1) {
		n, _ := strconv.Atoi(m[1])
		replayed += n
	}
	t.Logf("totals: %d calls, %d units charged, claimed on chain and received by payTo, %d revenue calls, %d channel debits in PostgreSQL; "+
		"%d claim transactions; the gateway appended %d kept money facts to the empty Redis; took %v",
		calls, calls*perCall, revCalls, debits, claimTxs, replayed, time.Since(began).Round(time.Millisecond))
}

// correctiveState is the channel state a corrective 402 gives the client:
// charged total, balance, and the last voucher's amount and signature.
func correctiveState(t *testing.T, a x402Answer) string {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	var v struct {
		Accepts []struct {
			Scheme string `json:"scheme"`
			Extra  struct {
				ChannelState struct {
					Charged string `json:"chargedCumulativeAmount"`
					Balance string `json:"balance"`
				} `json:"channelState"`
				VoucherState struct {
					Signed    string `json:"signedMaxClaimable"`
					Signature string `json:"signature"`
				} `json:"voucherState"`
			} `json:"extra"`
		} `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("corrective 402 (%v): %s", err, raw)
	}
	for _, acc := range v.Accepts {
		if acc.Scheme != batchsettle.Scheme {
			continue
		}
		x := acc.Extra
		return fmt.Sprintf("charged %s, balance %s, signed %s by %s", x.ChannelState.Charged, x.ChannelState.Balance,
			x.VoucherState.Signed, strings.ToLower(x.VoucherState.Signature))
	}
	t.Fatalf("corrective 402 without a %s offer: %s", batchsettle.Scheme, raw)
	return ""
}

// requiredError is the error of a 402's PAYMENT-REQUIRED header.
func requiredError(t *testing.T, a x402Answer) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	var v v2Required
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		t.Fatalf("402 without a readable PAYMENT-REQUIRED (%v): %s", err, a)
	}
	return v.Error
}
