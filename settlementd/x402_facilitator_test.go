package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/facilitator"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// facPost POSTs body to settlementd's facilitator path, with the gateway's
// secret when secret is not "" (a stranger sends none, or a wrong one).
func (e *x402Env) facPost(path string, body any, secret string) (int, map[string]any) {
	e.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.api+path, bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(facilitator.GatewayHeader, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// relayerState is the relayer's ETH balance and nonce on 8453: what a
// settlement would spend.
func (e *x402Env) relayerState() (*big.Int, uint64) {
	e.t.Helper()
	a, err := e.net.Manifest.Account("relayer")
	if err != nil {
		e.t.Fatal(err)
	}
	bal, err := e.base.BalanceAt(e.ctx, a.Addr(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := e.base.PendingNonceAt(e.ctx, a.Addr())
	if err != nil {
		e.t.Fatal(err)
	}
	return bal, n
}

// TestX402OpenRelayClosed is the closed-open-relay case: 100 settles of
// well-signed EIP-3009 authorizations that are not the operator's offer — a
// foreign asset, a foreign payTo, a zero amount — posted straight to
// settlementd's /x402/settle, half of them with the gateway's secret (being
// the gateway opens nothing), are all refused; the relayer's ETH balance
// and nonce and every token balance are unchanged. /verify says the same.
// The shipped Caddyfiles do not route /x402/* publicly.
func TestX402OpenRelayClosed(t *testing.T) {
	e := startX402Env(t)
	payer := e.wallet("open relay payer", 10*x402Price)
	payerAddr := crypto.PubkeyToAddress(payer.PublicKey)
	stranger := crypto.PubkeyToAddress(testKey("open relay stranger " + t.Name()).PublicKey)
	var foreignAsset common.Address
	_, _ = rand.Read(foreignAsset[:])
	eth0, nonce0 := e.relayerState()
	payer0, payTo0, stranger0 := e.balance(payerAddr), e.balance(e.payTo), e.balance(stranger)

	refused := map[string]int{}
	for i := range 100 {
		a := e.auth(payer)
		asset := e.asset
		amount := big.NewInt(x402Price)
		switch i % 3 {
		case 0: // a token that is not the offer's
			asset = foreignAsset
		case 1: // to a stranger, at the offer's price: a valid transfer the old relayer settled
			a.to = stranger
		case 2: // nothing: the relayer's gas for a zero transfer
			amount = big.NewInt(0)
		}
		a.value = amount
		accepted := map[string]any{"scheme": "exact", "network": x402NetworkV2, "amount": amount.String(), "asset": asset.Hex(),
			"payTo": a.to.Hex(), "maxTimeoutSeconds": 300, "extra": map[string]any{"name": x402TokenName, "version": x402TokenVer}}
		hdr := v2Header(a, a.sign(8453, asset), map[string]any{"url": "http://x/rpc"}, accepted)
		raw, _ := base64.StdEncoding.DecodeString(hdr)
		body := map[string]any{"x402Version": 2, "paymentPayload": json.RawMessage(raw), "paymentRequirements": accepted}
		secret := ""
		if i%2 == 0 {
			secret = x402GatewaySecret
		}
		code, out := e.facPost("/x402/settle", body, secret)
		if code != http.StatusOK || out["success"] != false || out["transaction"] != "" {
			t.Fatalf("settle %d (case %d): %d %v", i, i%3, code, out)
		}
		refused[out["errorReason"].(string)]++
		if i < 3 {
			if code, out := e.facPost("/x402/verify", body, secret); code != http.StatusOK || out["isValid"] != false {
				t.Fatalf("verify %d: %d %v", i, code, out)
			}
		}
	}
	if refused[x402.ReasonAsset] != 34 || refused[x402.ReasonRecipient] != 33 || refused[x402.ReasonValueV2] != 33 {
		t.Fatalf("refusal reasons %v, want 34 asset, 33 recipient, 33 value", refused)
	}
	eth1, nonce1 := e.relayerState()
	if eth1.Cmp(eth0) != 0 || nonce1 != nonce0 {
		t.Fatalf("the relayer spent: ETH %s → %s, nonce %d → %d", eth0, eth1, nonce0, nonce1)
	}
	if e.balance(payerAddr) != payer0 || e.balance(e.payTo) != payTo0 || e.balance(stranger) != stranger0 {
		t.Fatal("a refused settle moved tokens")
	}
	// The operator's own offer still settles (the facilitator is closed,
	// not broken), once.
	a := e.auth(payer)
	_, acc := e.issued(e.gw)
	hdr := v2Header(a, a.sign(8453, e.asset), map[string]any{"url": "http://x/rpc"}, acc)
	raw, _ := base64.StdEncoding.DecodeString(hdr)
	if code, out := e.facPost("/x402/settle", map[string]any{"x402Version": 2, "paymentPayload": json.RawMessage(raw), "paymentRequirements": acc}, ""); code != 200 || out["success"] != true {
		t.Fatalf("the offer's own payment: %d %v", code, out)
	}
	if d := e.balance(e.payTo) - payTo0; d != x402Price {
		t.Fatalf("payTo received %d, want %d", d, x402Price)
	}

	// The shipped Caddyfiles route settlementd's API but not its facilitator.
	for _, path := range []string{"../Caddyfile", "../deploy/production/Caddyfile"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		routes := regexp.MustCompile(`@settlement path [^\n]*`).FindAllString(string(b), -1)
		if len(routes) == 0 {
			t.Fatalf("%s has no @settlement route", path)
		}
		for _, r := range routes {
			if strings.Contains(r, "/x402") {
				t.Fatalf("%s routes the facilitator publicly: %s", path, r)
			}
		}
		if !strings.Contains(string(b), "settlementd_secret {env.TOLLGATE_GATEWAY_SECRET}") {
			t.Fatalf("%s does not authenticate the gateway to settlementd", path)
		}
	}
}

// Direct callers (anything without the gateway's secret) share a budget
// of verify/settle calls; the gateway is never limited.
func TestX402FacilitatorRateLimit(t *testing.T) {
	e := startX402EnvWith(t, map[string]string{"TOLLGATE_X402_RATE_LIMIT": "1"}) // burst 4
	body := map[string]any{"x402Version": 2, "paymentPayload": map[string]any{}, "paymentRequirements": map[string]any{}}
	limited := 0
	for range 20 {
		if code, _ := e.facPost("/x402/verify", body, ""); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 10 {
		t.Fatalf("%d of 20 direct calls limited, want most", limited)
	}
	for i := range 20 {
		if code, out := e.facPost("/x402/verify", body, x402GatewaySecret); code == http.StatusTooManyRequests {
			t.Fatalf("the gateway's call %d was limited: %v", i, out)
		}
	}
}

// --- batch-settlement channels driven through the gateway with payloads signed here.

// batchChannel is a channel of the dev chain's payer account, opened with a
// deposit through the gateway.
type batchChannel struct {
	key *ecdsa.PrivateKey
	cfg batchsettle.Config
	id  string
}

func (e *x402Env) newChannel() *batchChannel {
	e.t.Helper()
	acct, err := e.net.Manifest.Account("payer")
	if err != nil {
		e.t.Fatal(err)
	}
	key := devnet.DevKey("payer")
	var salt [32]byte
	_, _ = rand.Read(salt[:])
	cfg := batchsettle.Config{Payer: acct.Addr(), PayerAuthorizer: acct.Addr(), Receiver: e.payTo, ReceiverAuthorizer: e.authorizer,
		Token: e.asset, WithdrawDelay: x402.BatchWithdrawDelay, Salt: salt}
	return &batchChannel{key: key, cfg: cfg, id: strings.ToLower(batchsettle.DefaultDomain(8453).ChannelID(cfg).Hex())}
}

func (c *batchChannel) payload(typ string, cum int64) map[string]any {
	dom := batchsettle.DefaultDomain(8453)
	id := dom.ChannelID(c.cfg)
	vsig, err := batchsettle.Sign(dom.VoucherDigest(id, big.NewInt(cum)), c.key)
	if err != nil {
		panic(err)
	}
	accepted := map[string]any{"scheme": batchsettle.Scheme, "network": x402NetworkV2, "amount": money.BundleCallRevenue.String(),
		"asset": c.cfg.Token.Hex(), "payTo": c.cfg.Receiver.Hex()}
	return map[string]any{"x402Version": 2, "accepted": accepted, "payload": map[string]any{
		"type": typ,
		"channelConfig": map[string]any{"payer": c.cfg.Payer.Hex(), "payerAuthorizer": c.cfg.PayerAuthorizer.Hex(), "receiver": c.cfg.Receiver.Hex(),
			"receiverAuthorizer": c.cfg.ReceiverAuthorizer.Hex(), "token": c.cfg.Token.Hex(), "withdrawDelay": c.cfg.WithdrawDelay, "salt": c.cfg.Salt.Hex()},
		"voucher": map[string]any{"channelId": id.Hex(), "maxClaimableAmount": big.NewInt(cum).String(), "signature": hexutil.Encode(vsig)},
	}}
}

// depositHeader is a deposit payload: amount into the channel (ERC-3009
// ReceiveWithAuthorization to the collector, bound to the channel), and
// the first voucher at cum.
func (c *batchChannel) depositHeader(amount, cum int64) string {
	dom := batchsettle.DefaultDomain(8453)
	id := dom.ChannelID(c.cfg)
	var saltB [32]byte
	_, _ = rand.Read(saltB[:])
	salt := new(big.Int).SetBytes(saltB[:])
	before := big.NewInt(time.Now().Unix() + 300)
	nonce := batchsettle.DepositNonce(id, salt)
	w := func(b []byte) []byte { return common.LeftPadBytes(b, 32) }
	to := batchsettle.ERC3009CollectorAddress
	s := crypto.Keccak256(crypto.Keccak256([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")),
		w(c.cfg.Payer[:]), w(to[:]), w(big.NewInt(amount).Bytes()), w(nil), w(before.Bytes()), nonce[:])
	d := crypto.Keccak256(crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")),
		crypto.Keccak256([]byte(x402TokenName)), crypto.Keccak256([]byte(x402TokenVer)), w(big.NewInt(8453).Bytes()), w(c.cfg.Token[:]))
	sig, err := batchsettle.Sign(crypto.Keccak256Hash([]byte{0x19, 0x01}, d, s), c.key)
	if err != nil {
		panic(err)
	}
	p := c.payload("deposit", cum)
	p["payload"].(map[string]any)["deposit"] = map[string]any{"amount": big.NewInt(amount).String(), "authorization": map[string]any{
		"erc3009Authorization": map[string]any{"validAfter": "0", "validBefore": before.String(), "salt": hexutil.Encode(saltB[:]), "signature": hexutil.Encode(sig)}}}
	return b64JSON(p)
}

func (c *batchChannel) voucherHeader(cum int64) string { return b64JSON(c.payload("voucher", cum)) }

// pay sends one call paid with hdr through the gateway.
func (e *x402Env) pay(hdr string) x402Answer {
	e.t.Helper()
	return e.rpc(e.gw, "PAYMENT-SIGNATURE", hdr)
}

// open deposits amount and draws calls vouchers through the gateway.
func (e *x402Env) open(c *batchChannel, amount int64, calls int) {
	e.t.Helper()
	price := int64(money.BundleCallRevenue)
	if a := e.pay(c.depositHeader(amount, price)); a.status != 200 {
		e.t.Fatalf("deposit: %s", a)
	}
	for i := int64(2); i <= int64(calls); i++ {
		if a := e.pay(c.voucherHeader(i * price)); a.status != 200 {
			e.t.Fatalf("voucher %d: %s", i, a)
		}
	}
}

// onChain is the channel's balance and totalClaimed on chain.
func (e *x402Env) onChain(id string) (bal, claimed int64) {
	e.t.Helper()
	bs := batchsettlement.NewBatchSettlement()
	ch, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), &bind.CallOpts{Context: e.ctx}, bs.PackChannels(common.HexToHash(id)), bs.UnpackChannels)
	if err != nil {
		e.t.Fatal(err)
	}
	return ch.Balance.Int64(), ch.TotalClaimed.Int64()
}

// channelState is the gateway's state of the channel in Redis.
func (e *x402Env) channelState(id string) meter.ChannelState {
	e.t.Helper()
	m, err := meter.New(e.rdb, meter.Config{Prefix: e.prefix})
	if err != nil {
		e.t.Fatal(err)
	}
	st, ok, err := m.Channel(e.ctx, id)
	if err != nil || !ok {
		e.t.Fatalf("channel %s: %v %v", id, ok, err)
	}
	return st
}

// transactSettlement sends data to the BatchSettlement contract from key.
func (e *x402Env) transactSettlement(key *ecdsa.PrivateKey, data []byte) {
	e.t.Helper()
	e.mintMu.Lock()
	defer e.mintMu.Unlock()
	bs := batchsettlement.NewBatchSettlement()
	opts := bind.NewKeyedTransactor(key, big.NewInt(8453))
	opts.Context = e.ctx
	tx, err := bind.Transact(bs.Instance(e.base, batchsettle.SettlementAddress), opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := deploy.WaitReceipt(e.ctx, e.base, tx.Hash(), 20*time.Millisecond)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("settlement transaction %s: %v", tx.Hash().Hex(), err)
	}
}

func onchainCfg(c batchsettle.Config) batchsettlement.BatchSettlementChannelConfig {
	return batchsettlement.BatchSettlementChannelConfig{Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver,
		ReceiverAuthorizer: c.ReceiverAuthorizer, Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt}
}

// TestX402RefundByStrangerAndWithdrawal is the refund-by-a-stranger
// case, first two parts, through our Caddy on the dev chain: a refund
// posted to settlementd by anyone but the gateway (no secret, a wrong one)
// is refused and moves nothing, and even the gateway's is refused while the
// channel is open (vouchers still draw on it); after the payer asks on
// chain to withdraw, the next voucher above what will remain is refused,
// and what the vouchers charged is claimed within seconds, long before the
// one-day withdraw delay ends (the claims job itself is not scheduled here:
// the channel watcher claims).
func TestX402RefundByStrangerAndWithdrawal(t *testing.T) {
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "0 0 0 1 1 *", // never during the test
		"TOLLGATE_X402_WATCH_SCHEDULE":          "* * * * * *",
	})
	price := int64(money.BundleCallRevenue)
	const deposit = 100_000

	// A stranger's refund.
	a := e.newChannel()
	e.open(a, deposit, 3)
	refund := map[string]any{"x402Version": 2, "paymentPayload": a.payload("refund", 3*price),
		"paymentRequirements": map[string]any{"scheme": batchsettle.Scheme, "network": x402NetworkV2, "asset": e.asset.Hex(), "payTo": e.payTo.Hex(),
			"extra": map[string]any{"receiverAuthorizer": e.authorizer.Hex(), "withdrawDelay": x402.BatchWithdrawDelay}}}
	payer := a.cfg.Payer
	payer0 := e.balance(payer)
	for _, secret := range []string{"", "not-the-gateway-secret-not-the-gateway-secret", x402GatewaySecret[:len(x402GatewaySecret)-1]} {
		if code, out := e.facPost("/x402/settle", refund, secret); code != http.StatusUnauthorized || out["errorReason"] != facilitator.ReasonUnauthorized {
			t.Fatalf("a refund with secret %q: %d %v", secret, code, out)
		}
	}
	// The gateway's own secret, but the gateway never closed the channel.
	if code, out := e.facPost("/x402/settle", refund, x402GatewaySecret); code != http.StatusOK || out["errorReason"] != facilitator.ReasonChannelOpen {
		t.Fatalf("a refund of an open channel: %d %v", code, out)
	}
	if bal, claimed := e.onChain(a.id); bal != deposit || claimed != 0 || e.balance(payer) != payer0 {
		t.Fatalf("after the refused refunds: channel %d/%d, payer %d → %d", bal, claimed, payer0, e.balance(payer))
	}
	// The channel still draws; a refund through the gateway needs the payer's own signature.
	if ans := e.pay(a.voucherHeader(4 * price)); ans.status != 200 {
		t.Fatalf("voucher after the refused refunds: %s", ans)
	}
	forged := a.payload("refund", 4*price)
	other, _ := crypto.GenerateKey()
	fake := &batchChannel{key: other, cfg: a.cfg, id: a.id}
	forged["payload"].(map[string]any)["voucher"] = fake.payload("refund", 4*price)["payload"].(map[string]any)["voucher"]
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, e.gw.URL()+"/rpc", nil)
	req.Header.Set("PAYMENT-SIGNATURE", b64JSON(forged))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 402 {
		t.Fatalf("a refund GET signed by a stranger: %d", resp.StatusCode)
	}
	if bal, _ := e.onChain(a.id); bal != deposit {
		t.Fatalf("the stranger's refund GET moved escrow: balance %d", bal)
	}

	// The payer withdraws on chain: everything unclaimed.
	b := e.newChannel()
	const calls = 5
	e.open(b, deposit, calls)
	charged := calls * price
	bs := batchsettlement.NewBatchSettlement()
	e.transactSettlement(b.key, bs.PackInitiateWithdraw(onchainCfg(b.cfg), big.NewInt(deposit)))
	started := time.Now()
	// The watcher lowers the channel's balance in Redis to what will remain
	// (nothing but what the vouchers charged) and claims the charged total.
	settletest.Eventually(t, 30*time.Second, "the withdrawal followed into Redis and the charged total claimed", func() (bool, error) {
		_, claimed := e.onChain(b.id)
		st := e.channelState(b.id)
		return st.Balance == 0 && claimed == charged && st.Claimed == money.Units(charged), nil
	})
	if took := time.Since(started); took > time.Minute {
		t.Fatalf("the claim took %s", took)
	}
	// The next voucher (above the on-chain balance the withdrawal leaves) is refused.
	ans := e.pay(b.voucherHeader(charged + price))
	if ans.status != 402 || requiredError(t, ans) != meter.ReasonOverDeposit {
		t.Fatalf("a voucher after the withdrawal request: %s", ans)
	}
	if _, claimed := e.onChain(b.id); claimed != charged {
		t.Fatalf("on-chain claim %d, want exactly the charged %d", claimed, charged)
	}
	if st := e.channelState(b.id); st.Charged != money.Units(charged) || st.Claimed != money.Units(charged) {
		t.Fatalf("the gateway's state %+v", st)
	}
	// The payer's withdrawal can take only what was not charged.
	bal, claimed := e.onChain(b.id)
	if bal-claimed != deposit-charged {
		t.Fatalf("unclaimed escrow %d, want %d", bal-claimed, deposit-charged)
	}
}

// TestX402ClaimSkipsARevertingChannel is the refund-by-a-stranger case,
// third part: a channel whose escrow was refunded on chain behind the
// gateway's back (here by the receiver authorizer's own signature, as the
// old open refund did) while Redis still let it draw, would revert any
// claim batch it is in. Each claim run simulates every channel alone and
// leaves that one out (counted in settlementd_x402_claims_skipped_total),
// so the other channels are claimed, run after run, to exactly what they
// charged.
func TestX402ClaimSkipsARevertingChannel(t *testing.T) {
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "*/2 * * * * *",
		"TOLLGATE_X402_WATCH_SCHEDULE":          "0 0 0 1 1 *", // Redis keeps the stale balance: the claim must cope
	})
	price := int64(money.BundleCallRevenue)
	const deposit = 100_000
	bad, good := e.newChannel(), e.newChannel()
	if a := e.pay(bad.depositHeader(deposit, price)); a.status != 200 {
		t.Fatalf("deposit: %s", a)
	}
	// The escrow goes back to the payer on chain (refundWithSignature is
	// permissionless with the authorizer's signature).
	bs := batchsettlement.NewBatchSettlement()
	id := common.HexToHash(bad.id)
	nonce, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), &bind.CallOpts{Context: e.ctx}, bs.PackRefundNonce(id), bs.UnpackRefundNonce)
	if err != nil {
		t.Fatal(err)
	}
	// What a claim of the first voucher needs, refunded away: balance = 0.
	sig, err := batchsettle.Sign(batchsettle.DefaultDomain(8453).RefundDigest(id, nonce, big.NewInt(deposit)), authz)
	if err != nil {
		t.Fatal(err)
	}
	e.transactSettlement(devnet.DevKey("deployer"), bs.PackRefundWithSignature(onchainCfg(bad.cfg), big.NewInt(deposit), nonce, sig))
	// (A claim run may have claimed the first voucher before the refund:
	// then that much stays; nothing unclaimed is left either way.)
	badBal, badClaimed := e.onChain(bad.id)
	if badBal != badClaimed {
		t.Fatalf("the refunded channel holds %d unclaimed", badBal-badClaimed)
	}
	// Both channels draw (Redis does not know of the refund).
	for i := int64(2); i <= 3; i++ {
		if a := e.pay(bad.voucherHeader(i * price)); a.status != 200 {
			t.Fatalf("voucher %d on the refunded channel: %s", i, a)
		}
	}
	payTo0 := e.balance(e.payTo)
	e.open(good, deposit, 4)
	settletest.Eventually(t, 60*time.Second, "the good channel claimed beside the reverting one", func() (bool, error) {
		_, claimed := e.onChain(good.id)
		return claimed == 4*price, nil
	})
	// The next run claims the good channel's new vouchers too.
	for i := int64(5); i <= 7; i++ {
		if a := e.pay(good.voucherHeader(i * price)); a.status != 200 {
			t.Fatalf("voucher %d: %s", i, a)
		}
	}
	settletest.Eventually(t, 60*time.Second, "the good channel's later vouchers claimed", func() (bool, error) {
		_, claimed := e.onChain(good.id)
		return claimed == 7*price, nil
	})
	if _, claimed := e.onChain(bad.id); claimed != badClaimed {
		t.Fatalf("the refunded channel shows %d claimed, was %d", claimed, badClaimed)
	}
	if d := e.balance(e.payTo) - payTo0; d != 7*price {
		t.Fatalf("payTo received %d, want exactly the good channel's %d", d, 7*price)
	}
	// The alert: the skipped channel is counted.
	resp, err := http.Get(e.api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`settlementd_x402_claims_skipped_total\{reason="ClaimAboveBalance"\} (\d+)`).FindSubmatch(raw)
	if m == nil || string(m[1]) == "0" {
		t.Fatalf("no skipped-claim metric for the reverting channel:\n%s", grepLines(string(raw), "x402_claims"))
	}
}

// stallProxy relays TCP to a Redis; while stall is set, every reply chunk
// is held 3 s (a Redis that ran the command and answers too late).
type stallProxy struct {
	ln    net.Listener
	stall atomic.Bool
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					if n > 0 {
						if p.stall.Load() {
							time.Sleep(3 * time.Second)
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

// TestX402VoucherVoidedBehindALostReply is the voided-draw case for a
// voucher payer: Redis's reply stalled (a TCP relay holds it 3 s) past the
// gateway's metering timeout while a voucher is drawn — the script ran, the
// gateway never learned it — is answered 503, and the draw is voided: the
// channel's charged total goes back down (the signed voucher stays),
// PostgreSQL books a Refund of payer "channel" against the Debit, the
// client's retry of the same voucher is drawn, and the channel's on-chain
// claim equals exactly what was charged for the calls served.
func TestX402VoucherVoidedBehindALostReply(t *testing.T) {
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "*/2 * * * * *",
	})
	price := int64(money.BundleCallRevenue)
	payTo0 := e.balance(e.payTo)
	c := e.newChannel()
	e.open(c, 100_000, 3)
	wallet := strings.ToLower(c.cfg.Payer.Hex())

	// Redis's replies to the gateway stall for longer than it waits (2 s):
	// the voucher's script runs, its answer does not arrive in time.
	proxy := newStallProxy(t, strings.TrimPrefix(strings.Split(e.redisURL, "/0")[0], "redis://"))
	redisURL := e.redisURL
	e.redisURL = "redis://" + proxy.addr() + "/0"
	e.gw = e.startGateway(e.api + "/x402") // this gateway reaches Redis through the proxy
	e.redisURL = redisURL
	proxy.stall.Store(true)
	a := e.pay(c.voucherHeader(4 * price))
	proxy.stall.Store(false)
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("a voucher whose Redis reply stalled: %s", a)
	}
	// Booked after the gateway gave up, then voided.
	settletest.Eventually(t, 30*time.Second, "the lost draw voided", func() (bool, error) {
		st := e.channelState(c.id)
		if st.Charged == money.Units(3*price) && st.Signed == money.Units(4*price) {
			return true, nil
		}
		return false, fmt.Errorf("charged %d, signed %d", st.Charged, st.Signed)
	})
	settletest.Eventually(t, 30*time.Second, "the void booked in PostgreSQL", func() (bool, error) {
		return settletest.Count(t, e.pool, `SELECT count(*) FROM refunds WHERE payer = 'channel' AND account = $1 AND amount_units = $2`, wallet, price) == 1, nil
	})
	var debits, debited, refunded int64
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*), COALESCE(sum(amount_units), 0)::bigint FROM debits WHERE payer = 'channel' AND account = $1`, wallet).Scan(&debits, &debited); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(e.ctx, `SELECT COALESCE(sum(r.amount_units), 0)::bigint FROM refunds r JOIN debits d ON d.id = r.id WHERE r.payer = 'channel' AND d.account = $1`, wallet).Scan(&refunded); err != nil {
		t.Fatal(err)
	}
	if debits != 4 || debited != 4*price || refunded != price {
		t.Fatalf("PostgreSQL: %d debits of %d units, %d refunded; want 4, %d, %d", debits, debited, refunded, 4*price, price)
	}
	// The client, never served, sends the same voucher again: drawn.
	if a := e.pay(c.voucherHeader(4 * price)); a.status != 200 {
		t.Fatalf("the retried voucher: %s", a)
	}
	// What is claimed on chain is what was charged for the 4 calls served.
	settletest.Eventually(t, 60*time.Second, "the charged total claimed", func() (bool, error) {
		_, claimed := e.onChain(c.id)
		return claimed == 4*price, nil
	})
	if st := e.channelState(c.id); st.Charged != money.Units(4*price) {
		t.Fatalf("charged %d", st.Charged)
	}
	if d := e.balance(e.payTo) - payTo0; d != 4*price {
		t.Fatalf("payTo received %d, want %d", d, 4*price)
	}
}

// A payer's balance backs one payment, not one per request in flight:
// authorizations of one payer settled concurrently (the gateway settles
// each X-PAYMENT it is sent, with its secret, unlimited) are all verified
// against the same balance; if each were sent, every one after the first
// would revert on chain on the relayer's gas, and the payer could repeat
// that with the same 0.1 USDC as often as it liked. Exactly one is sent.
func TestX402ConcurrentSettlesOfOneBalanceSendOne(t *testing.T) {
	e := startX402Env(t)
	payer := e.wallet("one balance payer", x402Price) // exactly one payment
	payerAddr := crypto.PubkeyToAddress(payer.PublicKey)
	_, acc := e.issued(e.gw)
	_, nonce0 := e.relayerState()
	payTo0 := e.balance(e.payTo)

	const n = 12
	bodies := make([]map[string]any, n)
	for i := range bodies {
		a := e.auth(payer)
		hdr := v2Header(a, a.sign(8453, e.asset), map[string]any{"url": "http://x/rpc"}, acc)
		raw, _ := base64.StdEncoding.DecodeString(hdr)
		bodies[i] = map[string]any{"x402Version": 2, "paymentPayload": json.RawMessage(raw), "paymentRequirements": acc}
	}
	type answer struct {
		code int
		out  map[string]any
	}
	answers := make(chan answer, n)
	start := make(chan struct{})
	for _, b := range bodies {
		go func() {
			<-start
			code, out := e.facPost("/x402/settle", b, x402GatewaySecret)
			answers <- answer{code, out}
		}()
	}
	close(start)
	succeeded, reverted := 0, 0
	for range n {
		a := <-answers
		switch {
		case a.code == http.StatusOK && a.out["success"] == true:
			succeeded++
		case a.out["errorReason"] == facilitator.ReasonTxState:
			reverted++
		}
	}
	_, nonce1 := e.relayerState()
	if succeeded != 1 || reverted != 0 || nonce1 != nonce0+1 {
		t.Fatalf("%d concurrent payments backed by one balance: %d settled, %d reverted on chain, relayer sent %d transactions; want 1, 0, 1",
			n, succeeded, reverted, nonce1-nonce0)
	}
	if d := e.balance(e.payTo) - payTo0; d != x402Price || e.balance(payerAddr) != 0 {
		t.Fatalf("payTo received %d, want %d", d, x402Price)
	}
}

// A channel whose escrow went back on chain below what it charged (a
// payer's withdrawal the watcher saw too late, a refund behind the
// gateway's back) is not left unclaimed altogether: the claim of its full
// charged total would revert, but what the chain still holds is the
// receiver's, under the same voucher. Left unclaimed, the payer's next
// withdrawal would take that too, so every call drawn since the last claim
// would have been free.
func TestX402ClaimTakesWhatTheChainStillHolds(t *testing.T) {
	authz := testKey("x402 receiver authorizer " + t.Name())
	e := startX402EnvWith(t, map[string]string{
		"TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY": common.Bytes2Hex(crypto.FromECDSA(authz)),
		"TOLLGATE_X402_CLAIM_SCHEDULE":          "*/2 * * * * *",
		"TOLLGATE_X402_WATCH_SCHEDULE":          "0 0 0 1 1 *", // Redis keeps the stale balance
	})
	price := int64(money.BundleCallRevenue)
	const deposit, left = 100_000, 5 * 100 // the chain keeps 5 calls' worth
	c := e.newChannel()
	if a := e.pay(c.depositHeader(deposit, price)); a.status != 200 {
		t.Fatalf("deposit: %s", a)
	}
	bs := batchsettlement.NewBatchSettlement()
	id := common.HexToHash(c.id)
	nonce, err := bind.Call(bs.Instance(e.base, batchsettle.SettlementAddress), &bind.CallOpts{Context: e.ctx}, bs.PackRefundNonce(id), bs.UnpackRefundNonce)
	if err != nil {
		t.Fatal(err)
	}
	bal0, claimed0 := e.onChain(c.id)
	refund := big.NewInt(bal0 - claimed0 - left)
	sig, err := batchsettle.Sign(batchsettle.DefaultDomain(8453).RefundDigest(id, nonce, refund), authz)
	if err != nil {
		t.Fatal(err)
	}
	e.transactSettlement(devnet.DevKey("deployer"), bs.PackRefundWithSignature(onchainCfg(c.cfg), refund, nonce, sig))
	// Redis does not know: 10 calls are drawn, more than the chain holds.
	for i := int64(2); i <= 10; i++ {
		if a := e.pay(c.voucherHeader(i * price)); a.status != 200 {
			t.Fatalf("voucher %d: %s", i, a)
		}
	}
	bal, _ := e.onChain(c.id)
	settletest.Eventually(t, 60*time.Second, "what the chain holds claimed", func() (bool, error) {
		_, claimed := e.onChain(c.id)
		return claimed == bal, nil
	})
	if bal != claimed0+left+(bal0-claimed0-left-refund.Int64()) || bal <= claimed0 {
		t.Fatalf("balance %d after the refund, claimed %d before it", bal, claimed0)
	}
}

// An authorization that expires before its transaction can be mined is
// refused before anything is sent: a payer signing validBefore a second or
// two ahead would have the relayer's transaction revert (expired) with no
// token moved, over and over with the same balance. The gateway asks 6 s
// (paycheck.SettleMarginSecs); settlementd's own verify/settle ask the same,
// whoever calls them.
func TestX402SettleRefusesAnAuthorizationAboutToExpire(t *testing.T) {
	e := startX402Env(t)
	payer := e.wallet("short-lived payer", x402Price)
	payerAddr := crypto.PubkeyToAddress(payer.PublicKey)
	_, acc := e.issued(e.gw)
	_, nonce0 := e.relayerState()
	for _, secret := range []string{x402GatewaySecret, ""} {
		a := e.auth(payer)
		a.validBefore = big.NewInt(time.Now().Unix() + 2)
		hdr := v2Header(a, a.sign(8453, e.asset), map[string]any{"url": "http://x/rpc"}, acc)
		raw, _ := base64.StdEncoding.DecodeString(hdr)
		body := map[string]any{"x402Version": 2, "paymentPayload": json.RawMessage(raw), "paymentRequirements": acc}
		code, out := e.facPost("/x402/settle", body, secret)
		if code != http.StatusOK || out["success"] != false || out["errorReason"] != x402.ReasonValidBefore {
			t.Fatalf("settle of an authorization expiring in 2 s: %d %v", code, out)
		}
		if code, out := e.facPost("/x402/verify", body, secret); code != http.StatusOK || out["isValid"] != false {
			t.Fatalf("verify: %d %v", code, out)
		}
	}
	if _, nonce1 := e.relayerState(); nonce1 != nonce0 || e.balance(payerAddr) != x402Price {
		t.Fatalf("the relayer sent %d transactions for expiring authorizations", nonce1-nonce0)
	}
}
