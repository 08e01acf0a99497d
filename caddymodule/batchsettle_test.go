package caddymodule_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// batchAccept is the batch-settlement entry of a v2 PAYMENT-REQUIRED.
type batchAccept struct {
	Scheme, Network, Amount, Asset, PayTo string
	Extra                                 struct {
		ReceiverAuthorizer string `json:"receiverAuthorizer"`
		WithdrawDelay      uint64 `json:"withdrawDelay"`
		Name, Version      string
		MinDeposit         string `json:"minDeposit"`
		ChannelState       *struct {
			ChannelID               string `json:"channelId"`
			Balance                 string `json:"balance"`
			ChargedCumulativeAmount string `json:"chargedCumulativeAmount"`
		} `json:"channelState"`
		VoucherState *struct {
			SignedMaxClaimable string `json:"signedMaxClaimable"`
			Signature          string `json:"signature"`
		} `json:"voucherState"`
	}
}

type paymentRequired struct {
	Error   string            `json:"error"`
	Accepts []json.RawMessage `json:"accepts"`
}

func decodeRequired(t *testing.T, a answer) (paymentRequired, *batchAccept) {
	t.Helper()
	if a.status != 402 {
		t.Fatalf("status %d, want 402: %s", a.status, a.body)
	}
	raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatal(err)
	}
	var pr paymentRequired
	if err := json.Unmarshal(raw, &pr); err != nil {
		t.Fatal(err)
	}
	for _, acc := range pr.Accepts {
		var b batchAccept
		if err := json.Unmarshal(acc, &b); err == nil && b.Scheme == batchsettle.Scheme {
			return pr, &b
		}
	}
	return pr, nil
}

// voucherHeader is a PAYMENT-SIGNATURE voucher payload as the official client sends it.
func voucherHeader(t *testing.T, key *ecdsa.PrivateKey, cfg batchsettle.Config, acc *batchAccept, cumulative int64) (string, string) {
	t.Helper()
	dom := batchsettle.DefaultDomain(8453)
	id := dom.ChannelID(cfg)
	sig, err := batchsettle.Sign(dom.VoucherDigest(id, big.NewInt(cumulative)), key)
	if err != nil {
		t.Fatal(err)
	}
	p := map[string]any{
		"x402Version": 2,
		"accepted":    map[string]any{"scheme": acc.Scheme, "network": acc.Network, "amount": acc.Amount, "asset": acc.Asset, "payTo": acc.PayTo},
		"payload": map[string]any{
			"type": "voucher",
			"channelConfig": map[string]any{"payer": cfg.Payer.Hex(), "payerAuthorizer": cfg.PayerAuthorizer.Hex(), "receiver": cfg.Receiver.Hex(),
				"receiverAuthorizer": cfg.ReceiverAuthorizer.Hex(), "token": cfg.Token.Hex(), "withdrawDelay": cfg.WithdrawDelay, "salt": cfg.Salt.Hex()},
			"voucher": map[string]any{"channelId": id.Hex(), "maxClaimableAmount": big.NewInt(cumulative).String(), "signature": hexutil.Encode(sig)},
		},
	}
	b, _ := json.Marshal(p)
	return "PAYMENT-SIGNATURE: " + base64.StdEncoding.EncodeToString(b), hexutil.Encode(sig)
}

// The 402 offers batch-settlement beside exact; vouchers on a channel the
// gateway knows the deposit of are drawn one flat price per call without a
// chain call; a replayed voucher gets the corrective 402 the official client
// recovers from; a voucher past the deposit is refused; each served
// voucher is one Debit of the wallet, as a bundle call.
func TestBatchSettlementVouchersThroughTheGateway(t *testing.T) {
	authorizer := common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
	e := startMetered(t, meterOpts{free: -1, extra: "x402_receiver_authorizer " + authorizer.Hex()})
	const call = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	pr, acc := decodeRequired(t, e.do(t, "POST", "/rpc", call))
	if acc == nil || len(pr.Accepts) != 2 {
		t.Fatalf("the 402 does not offer batch-settlement beside exact: %d accepts", len(pr.Accepts))
	}
	price := money.BundleCallRevenue
	if acc.Network != "eip155:8453" || acc.Amount != price.String() || acc.Extra.ReceiverAuthorizer != authorizer.Hex() ||
		acc.Extra.WithdrawDelay < batchsettle.MinWithdrawDelay || acc.Extra.Name != "USD Coin" || acc.Extra.Version != "2" || acc.Extra.MinDeposit == "" {
		t.Fatalf("batch-settlement offer %+v", acc)
	}

	key, _ := crypto.GenerateKey()
	payer := crypto.PubkeyToAddress(key.PublicKey)
	cfg := batchsettle.Config{Payer: payer, PayerAuthorizer: payer, Receiver: common.HexToAddress(acc.PayTo), ReceiverAuthorizer: authorizer,
		Token: common.HexToAddress(acc.Asset), WithdrawDelay: acc.Extra.WithdrawDelay}
	id := strings.ToLower(batchsettle.DefaultDomain(8453).ChannelID(cfg).Hex())
	wallet := strings.ToLower(payer.Hex())

	// Before any deposit the channel is unknown.
	h, _ := voucherHeader(t, key, cfg, acc, int64(price))
	if pr, _ := decodeRequired(t, e.do(t, "POST", "/rpc", call, h)); pr.Error != meter.ReasonChannelUnknown {
		t.Fatalf("voucher without a deposit: error %q", pr.Error)
	}
	// The deposit as the facilitator's answer records it: 3 calls' worth.
	m, err := meter.New(e.rdb, meter.Config{Prefix: e.prefix, Shards: e.layout.Shards})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RecordDeposit(context.Background(), meter.ChannelDeposit{ChannelID: id, Wallet: wallet, Config: "{}", TxHash: "0x01", Balance: 3 * price}); err != nil {
		t.Fatal(err)
	}
	var lastSig string
	for i := int64(1); i <= 3; i++ {
		h, sig := voucherHeader(t, key, cfg, acc, i*int64(price))
		a := e.do(t, "POST", "/rpc", call, h)
		if a.status != 200 || a.json(t)["result"] == nil {
			t.Fatalf("voucher %d: %d %s", i, a.status, a.body)
		}
		raw, _ := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-RESPONSE"))
		var sr struct {
			Success bool
			Extra   struct {
				ChargedAmount string `json:"chargedAmount"`
				ChannelState  struct {
					ChargedCumulativeAmount string `json:"chargedCumulativeAmount"`
				} `json:"channelState"`
			}
		}
		if err := json.Unmarshal(raw, &sr); err != nil || !sr.Success || sr.Extra.ChargedAmount != price.String() ||
			sr.Extra.ChannelState.ChargedCumulativeAmount != (money.Units(i)*price).String() {
			t.Fatalf("voucher %d PAYMENT-RESPONSE %s", i, raw)
		}
		if got := a.header.Get("X-Tollgate-Payer"); got != "bundle" {
			t.Fatalf("voucher %d payer %q", i, got)
		}
		lastSig = sig
	}
	// The last voucher replayed: the corrective 402 with the channel state and the last voucher.
	h, _ = voucherHeader(t, key, cfg, acc, 3*int64(price))
	pr, acc2 := decodeRequired(t, e.do(t, "POST", "/rpc", call, h))
	if pr.Error != meter.ReasonCumulativeMismatch || acc2 == nil || acc2.Extra.ChannelState == nil || acc2.Extra.VoucherState == nil ||
		acc2.Extra.ChannelState.ChargedCumulativeAmount != (3*price).String() || acc2.Extra.ChannelState.ChannelID != id ||
		acc2.Extra.VoucherState.Signature != lastSig || acc2.Extra.VoucherState.SignedMaxClaimable != (3*price).String() {
		t.Fatalf("replayed voucher: error %q offer %+v", pr.Error, acc2)
	}
	// The next voucher in order is past the 3-call deposit.
	h, _ = voucherHeader(t, key, cfg, acc, 4*int64(price))
	if pr, _ := decodeRequired(t, e.do(t, "POST", "/rpc", call, h)); pr.Error != meter.ReasonOverDeposit {
		t.Fatalf("over the deposit: error %q", pr.Error)
	}
	// A voucher signed by another key is refused before Redis.
	other, _ := crypto.GenerateKey()
	h, _ = voucherHeader(t, other, cfg, acc, 4*int64(price))
	if pr, _ := decodeRequired(t, e.do(t, "POST", "/rpc", call, h)); !strings.HasPrefix(pr.Error, "invalid_batch_settlement_evm_voucher_signature") {
		t.Fatalf("forged voucher: error %q", pr.Error)
	}
	// Exactly three Debits of the wallet, 3 calls at the flat price, each
	// drawn from the channel (not from the wallet's bundle).
	var calls int
	var amount money.Units
	for _, ev := range e.stream(t) {
		if d, ok := ev.(*events.Debit); ok && d.Account == wallet {
			if d.Payer != events.PayerChannel {
				t.Fatalf("voucher debit of payer %q", d.Payer)
			}
			calls += d.Calls
			amount += d.Amount
		}
	}
	if calls != 3 || amount != 3*price {
		t.Fatalf("debits of the wallet: %d calls, %d units; want 3, %d", calls, amount, 3*price)
	}
}

// refundHeader is the official client's refund payload: its voucher at the
// charged total, type "refund".
func refundHeader(t *testing.T, key *ecdsa.PrivateKey, cfg batchsettle.Config, acc *batchAccept, charged int64) string {
	t.Helper()
	h, _ := voucherHeader(t, key, cfg, acc, charged)
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(h, "PAYMENT-SIGNATURE: "))
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p["payload"].(map[string]any)["type"] = "refund"
	b, _ := json.Marshal(p)
	return "PAYMENT-SIGNATURE: " + base64.StdEncoding.EncodeToString(b)
}

// A GET on /rpc is the batch-settlement client's cooperative refund: the
// bare GET is its probe (the 402 with the offer); a GET with a refund
// payload is checked against the channel (unknown, or a refund voucher
// below the charged total: the corrective 402); a voucher or a refund in
// the wrong method is refused; a refund the facilitator cannot take (none
// is configured here, so nothing can have moved) is a 503 that leaves
// the channel drawing. The
// refund itself, through settlementd on the dev chain, is
// TestX402BatchSettlementRefund's.
func TestBatchSettlementRefundRequests(t *testing.T) {
	authorizer := common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
	e := startMetered(t, meterOpts{free: -1, extra: "x402_receiver_authorizer " + authorizer.Hex()})
	const call = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	probe := e.do(t, "GET", "/rpc", "")
	pr, acc := decodeRequired(t, probe)
	if probe.status != 402 || acc == nil || acc.Extra.ReceiverAuthorizer != authorizer.Hex() {
		t.Fatalf("refund probe: %d, offer %+v", probe.status, acc)
	}
	_ = pr
	price := money.BundleCallRevenue
	key, _ := crypto.GenerateKey()
	payer := crypto.PubkeyToAddress(key.PublicKey)
	cfg := batchsettle.Config{Payer: payer, PayerAuthorizer: payer, Receiver: common.HexToAddress(acc.PayTo), ReceiverAuthorizer: authorizer,
		Token: common.HexToAddress(acc.Asset), WithdrawDelay: acc.Extra.WithdrawDelay}
	id := strings.ToLower(batchsettle.DefaultDomain(8453).ChannelID(cfg).Hex())
	// While Redis is not rebuilt after a loss, an unknown channel may just
	// not be back yet: 503 recovering, not "no deposit".
	if err := e.rdb.Del(context.Background(), e.layout.Shard(e.layout.ShardOfPayer(id)).Generation()).Err(); err != nil {
		t.Fatal(err)
	}
	if a := e.do(t, "GET", "/rpc", "", refundHeader(t, key, cfg, acc, 0)); a.status != 503 || a.header.Get("Retry-After") == "" ||
		!strings.Contains(string(a.body), meter.ReasonRecovering) {
		t.Fatalf("refund while recovering: %d %s", a.status, a.body)
	}
	testenv.MarkRebuiltLayout(t, e.rdb, e.layout)
	if pr, _ := decodeRequired(t, e.do(t, "GET", "/rpc", "", refundHeader(t, key, cfg, acc, 0))); !strings.HasPrefix(pr.Error, meter.ReasonChannelUnknown) {
		t.Fatalf("refund of an unknown channel: error %q", pr.Error)
	}
	m, err := meter.New(e.rdb, meter.Config{Prefix: e.prefix, Shards: e.layout.Shards})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RecordDeposit(context.Background(), meter.ChannelDeposit{ChannelID: id, Wallet: strings.ToLower(payer.Hex()), Config: "{}", TxHash: "0x01", Balance: 3 * price}); err != nil {
		t.Fatal(err)
	}
	h, _ := voucherHeader(t, key, cfg, acc, int64(price))
	if a := e.do(t, "POST", "/rpc", call, h); a.status != 200 {
		t.Fatalf("voucher 1: %d %s", a.status, a.body)
	}
	// A refund voucher below the charged total: the corrective 402 with the state.
	pr, acc2 := decodeRequired(t, e.do(t, "GET", "/rpc", "", refundHeader(t, key, cfg, acc, 0)))
	if pr.Error != meter.ReasonCumulativeMismatch || acc2 == nil || acc2.Extra.ChannelState == nil || acc2.Extra.ChannelState.ChargedCumulativeAmount != price.String() {
		t.Fatalf("stale refund voucher: error %q offer %+v", pr.Error, acc2)
	}
	// A voucher on a GET, a refund on a POST: refused, nothing drawn.
	h2, _ := voucherHeader(t, key, cfg, acc, 2*int64(price))
	if pr, _ := decodeRequired(t, e.do(t, "GET", "/rpc", "", h2)); !strings.HasPrefix(pr.Error, paycheck.ReasonBatchPayloadType) {
		t.Fatalf("voucher on a GET: error %q", pr.Error)
	}
	if pr, _ := decodeRequired(t, e.do(t, "POST", "/rpc", call, refundHeader(t, key, cfg, acc, int64(price)))); !strings.HasPrefix(pr.Error, paycheck.ReasonBatchPayloadType) {
		t.Fatalf("refund on a POST: error %q", pr.Error)
	}
	// The facilitator is not there: 503, and the channel still draws.
	if a := e.do(t, "GET", "/rpc", "", refundHeader(t, key, cfg, acc, int64(price))); a.status != 503 {
		t.Fatalf("refund without a facilitator: %d %s", a.status, a.body)
	}
	if a := e.do(t, "POST", "/rpc", call, h2); a.status != 200 {
		t.Fatalf("voucher 2 after a failed refund: %d %s", a.status, a.body)
	}
}
