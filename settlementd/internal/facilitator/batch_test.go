package facilitator

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// depositBody is a batch-settlement deposit settle request as the gateway
// sends it: the client's payload (channel config, voucher, ERC-3009
// ReceiveWithAuthorization to the collector bound to the channel) and our requirement.
func (e *env) depositBody(key *ecdsa.PrivateKey, cfg batchsettle.Config, amount int64) map[string]any {
	e.t.Helper()
	dom := batchsettle.DefaultDomain(8453)
	id := dom.ChannelID(cfg)
	var saltB [32]byte
	_, _ = rand.Read(saltB[:])
	salt := new(big.Int).SetBytes(saltB[:])
	before := big.NewInt(time.Now().Unix() + 300)
	nonce := batchsettle.DepositNonce(id, salt)
	w := func(b []byte) []byte { return common.LeftPadBytes(b, 32) }
	to := batchsettle.ERC3009CollectorAddress
	s := crypto.Keccak256(crypto.Keccak256([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")),
		w(cfg.Payer[:]), w(to[:]), w(big.NewInt(amount).Bytes()), w(nil), w(before.Bytes()), nonce[:])
	d := crypto.Keccak256(crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")),
		crypto.Keccak256([]byte("USD Coin")), crypto.Keccak256([]byte("2")), w(big.NewInt(8453).Bytes()), w(cfg.Token[:]))
	sig, err := batchsettle.Sign(crypto.Keccak256Hash([]byte{0x19, 0x01}, d, s), key)
	if err != nil {
		e.t.Fatal(err)
	}
	vsig, _ := batchsettle.Sign(dom.VoucherDigest(id, big.NewInt(100)), key)
	req := map[string]any{"scheme": "batch-settlement", "network": "eip155:8453", "amount": "100", "asset": cfg.Token.Hex(), "payTo": cfg.Receiver.Hex(),
		"maxTimeoutSeconds": 300, "extra": map[string]any{"receiverAuthorizer": cfg.ReceiverAuthorizer.Hex(), "withdrawDelay": cfg.WithdrawDelay, "name": "USD Coin", "version": "2"}}
	return map[string]any{"x402Version": 2, "paymentRequirements": req, "paymentPayload": map[string]any{
		"x402Version": 2, "accepted": req,
		"payload": map[string]any{
			"type": "deposit",
			"channelConfig": map[string]any{"payer": cfg.Payer.Hex(), "payerAuthorizer": cfg.PayerAuthorizer.Hex(), "receiver": cfg.Receiver.Hex(),
				"receiverAuthorizer": cfg.ReceiverAuthorizer.Hex(), "token": cfg.Token.Hex(), "withdrawDelay": cfg.WithdrawDelay, "salt": cfg.Salt.Hex()},
			"voucher": map[string]any{"channelId": id.Hex(), "maxClaimableAmount": "100", "signature": hexutil.Encode(vsig)},
			"deposit": map[string]any{"amount": big.NewInt(amount).String(), "authorization": map[string]any{"erc3009Authorization": map[string]any{
				"validAfter": "0", "validBefore": before.String(), "salt": hexutil.Encode(saltB[:]), "signature": hexutil.Encode(sig)}}},
		},
	}}
}

// A deposit settles on chain into the channel: the payer's USDC moves into
// BatchSettlement and the answer carries the channel's on-chain balance;
// the same authorization again moves nothing; a config that does not match
// the requirement is refused before any transaction.
func TestBatchDepositSettles(t *testing.T) {
	authz := common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
	e := newEnvWith(t, func(f *Facilitator) { f.cfg.Offer.ReceiverAuthorizer = authz })
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	var salt [32]byte
	_, _ = rand.Read(salt[:])
	cfg := batchsettle.Config{Payer: payer, PayerAuthorizer: payer, Receiver: e.payTo, ReceiverAuthorizer: common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"),
		Token: e.asset, WithdrawDelay: 86400, Salt: salt}
	id := batchsettle.DefaultDomain(8453).ChannelID(cfg)
	payer0, held0 := e.balance(payer), e.balance(batchsettle.SettlementAddress)

	// Below the offer's minimum deposit: refused before any transaction.
	if code, out := e.post("/x402/settle", e.depositBody(e.payer, cfg, 99_999)); code != http.StatusOK || out["errorReason"] != ReasonBatchDeposit {
		t.Fatalf("a dust deposit: %d %v", code, out)
	}
	// Addresses the gateway's reader refuses are refused here too (one
	// reader, ethparse.Address): a mixed-case payer with a wrong EIP-55
	// checksum, a payer without 0x.
	for name, spell := range map[string]string{
		"a wrong checksum": flipCase(payer.Hex()),
		"no 0x":            strings.TrimPrefix(payer.Hex(), "0x"),
	} {
		bad := e.depositBody(e.payer, cfg, 100_000)
		bad["paymentPayload"].(map[string]any)["payload"].(map[string]any)["channelConfig"].(map[string]any)["payer"] = spell
		if code, out := e.post("/x402/settle", bad); code != http.StatusOK || out["errorReason"] != ReasonBatchDeposit {
			t.Fatalf("payer with %s (%s): %d %v", name, spell, code, out)
		}
	}
	body := e.depositBody(e.payer, cfg, 100_000)
	code, out := e.post("/x402/settle", body)
	if code != http.StatusOK || out["success"] != true {
		t.Fatalf("deposit: %d %v", code, out)
	}
	cs := out["extra"].(map[string]any)["channelState"].(map[string]any)
	if cs["channelId"] != hexutil.Encode(id[:]) || cs["balance"] != "100000" || cs["totalClaimed"] != "0" {
		t.Fatalf("channelState %v", cs)
	}
	if d := new(big.Int).Sub(payer0, e.balance(payer)); d.Int64() != 100_000 {
		t.Fatalf("payer paid %v", d)
	}
	if d := new(big.Int).Sub(e.balance(batchsettle.SettlementAddress), held0); d.Int64() != 100_000 {
		t.Fatalf("the contract received %v", d)
	}
	// The same authorization again: refused by the chain's simulation, nothing moves.
	code, out = e.post("/x402/settle", body)
	if code != http.StatusOK || out["success"] != false || out["errorReason"] != ReasonBatchSimulation {
		t.Fatalf("replayed deposit: %d %v", code, out)
	}
	if d := new(big.Int).Sub(payer0, e.balance(payer)); d.Int64() != 100_000 {
		t.Fatalf("after the replay the payer paid %v", d)
	}
	// Channels that are not the operator's offer — a foreign receiver,
	// token, receiver authorizer or withdraw delay — are refused whatever
	// the request's requirement says, before any transaction.
	for name, edit := range map[string]func(c *batchsettle.Config){
		"receiver":           func(c *batchsettle.Config) { c.Receiver = common.HexToAddress("0x01") },
		"token":              func(c *batchsettle.Config) { c.Token = common.HexToAddress("0x02") },
		"receiverAuthorizer": func(c *batchsettle.Config) { c.ReceiverAuthorizer = common.HexToAddress("0x03") },
		"withdrawDelay":      func(c *batchsettle.Config) { c.WithdrawDelay = 900 },
	} {
		foreign := cfg
		edit(&foreign)
		bad := e.depositBody(e.payer, foreign, 100_000)
		req := bad["paymentRequirements"].(map[string]any)
		req["payTo"], req["asset"] = foreign.Receiver.Hex(), foreign.Token.Hex()
		if code, out = e.post("/x402/settle", bad); code != http.StatusOK || out["errorReason"] != ReasonBatchConfig {
			t.Fatalf("foreign %s: %d %v", name, code, out)
		}
	}
	if d := new(big.Int).Sub(payer0, e.balance(payer)); d.Int64() != 100_000 {
		t.Fatalf("after the refused deposits the payer paid %v", d)
	}
}

// flipCase is an EIP-55 address with its first letter's case flipped: the
// same bytes under a checksum that does not match them.
func flipCase(addr string) string {
	b := []byte(addr)
	for i := 2; i < len(b); i++ {
		if c := b[i] | 0x20; c >= 'a' && c <= 'f' {
			b[i] ^= 0x20
			return string(b)
		}
	}
	panic("no letter in " + addr)
}

// The claim job claims every channel's latest voucher and settles it to the
// receiver in one transaction: the receiver gets exactly what the vouchers
// drawn add up to; a second run moves nothing.
func TestClaimJobClaimsAndSettles(t *testing.T) {
	authzKey, _ := crypto.GenerateKey()
	e := newEnvWith(t, func(f *Facilitator) { f.cfg.Offer.ReceiverAuthorizer = crypto.PubkeyToAddress(authzKey.PublicKey) })
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	testenv.MarkRebuilt(t, rdb, prefix) // a healthy deployment: settlementd has written the generation marker
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	var salt [32]byte
	_, _ = rand.Read(salt[:])
	cfg := batchsettle.Config{Payer: payer, PayerAuthorizer: payer, Receiver: e.payTo, ReceiverAuthorizer: crypto.PubkeyToAddress(authzKey.PublicKey),
		Token: e.asset, WithdrawDelay: 86400, Salt: salt}
	dom := batchsettle.DefaultDomain(8453)
	id := strings.ToLower(dom.ChannelID(cfg).Hex())
	if code, out := e.post("/x402/settle", e.depositBody(e.payer, cfg, 100_000)); code != 200 || out["success"] != true {
		t.Fatalf("deposit: %d %v", code, out)
	}
	cfgJSON, _ := json.Marshal(cfg)
	ctx := context.Background()
	if _, err := m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: id, Wallet: strings.ToLower(payer.Hex()), Config: string(cfgJSON), TxHash: "0xdep", Balance: 100_000}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		sig, _ := batchsettle.Sign(dom.VoucherDigest(common.HexToHash(id), big.NewInt(100*i)), e.payer)
		d, _, err := m.AuthorizeVoucher(ctx, meter.Request{ChainID: 8453, IP: netip.MustParseAddr("192.0.2.1"), Calls: 1},
			meter.Voucher{ChannelID: id, Wallet: strings.ToLower(payer.Hex()), Cumulative: money.Units(100 * i), Signature: hexutil.Encode(sig)})
		if err != nil || d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %v", i, d.Outcome, err)
		}
	}
	f, client, err := Open(ctx, e.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	job := f.ClaimJob(m, authzKey)
	// Fresh draws are held back for the claim grace (a lost reply's void
	// comes first); this test claims at once.
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := m.Channel(ctx, id); st.Claimed != 0 {
		t.Fatalf("a draw younger than the grace was claimed: %d", st.Claimed)
	}
	job.grace = 0
	r0 := e.balance(e.payTo)
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d := new(big.Int).Sub(e.balance(e.payTo), r0); d.Int64() != 300 {
		t.Fatalf("the receiver got %v, want 300 (three vouchers of 100)", d)
	}
	st, _, _ := m.Channel(ctx, id)
	if st.Claimed != 300 {
		t.Fatalf("claimed %d", st.Claimed)
	}
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d := new(big.Int).Sub(e.balance(e.payTo), r0); d.Int64() != 300 {
		t.Fatalf("a second run paid again: %v", d)
	}
}

func mustAccount(t *testing.T, m *devnet.Manifest, name string) devnet.Account {
	t.Helper()
	a, err := m.Account(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A cooperative refund (a refund payload on /x402/settle, after the gateway
// closed the channel): one transaction claims the latest voucher for the
// receiver and returns what is left to the payer. A partial refund returns
// the amount asked; the rest later; a refund with nothing left moves nothing
// (refund_no_balance), so a repeated request never pays twice.
func TestBatchRefundClaimsThenRefunds(t *testing.T) {
	authzKey, _ := crypto.GenerateKey()
	e := newEnvWith(t, func(f *Facilitator) { f.cfg.Offer.ReceiverAuthorizer = crypto.PubkeyToAddress(authzKey.PublicKey) })
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	testenv.MarkRebuilt(t, rdb, prefix) // a healthy deployment: settlementd has written the generation marker
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	payer := crypto.PubkeyToAddress(e.payer.PublicKey)
	var salt [32]byte
	_, _ = rand.Read(salt[:])
	cfg := batchsettle.Config{Payer: payer, PayerAuthorizer: payer, Receiver: e.payTo, ReceiverAuthorizer: crypto.PubkeyToAddress(authzKey.PublicKey),
		Token: e.asset, WithdrawDelay: 86400, Salt: salt}
	dom := batchsettle.DefaultDomain(8453)
	id := strings.ToLower(dom.ChannelID(cfg).Hex())
	body := e.depositBody(e.payer, cfg, 100_000)
	if code, out := e.post("/x402/settle", body); code != 200 || out["success"] != true {
		t.Fatalf("deposit: %d %v", code, out)
	}
	cfgJSON, _ := json.Marshal(cfg)
	ctx := context.Background()
	wallet := strings.ToLower(payer.Hex())
	if _, err := m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: id, Wallet: wallet, Config: string(cfgJSON), TxHash: "0xdep", Balance: 100_000}); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		sig, _ := batchsettle.Sign(dom.VoucherDigest(common.HexToHash(id), big.NewInt(100*i)), e.payer)
		d, _, err := m.AuthorizeVoucher(ctx, meter.Request{ChainID: 8453, IP: netip.MustParseAddr("192.0.2.1"), Calls: 1},
			meter.Voucher{ChannelID: id, Wallet: wallet, Cumulative: money.Units(100 * i), Signature: hexutil.Encode(sig)})
		if err != nil || d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %v", i, d.Outcome, err)
		}
	}
	f, client, err := Open(ctx, e.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	f.ClaimJob(m, authzKey)
	mux := http.NewServeMux()
	f.Register(mux.Handle)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	payer0, payTo0 := e.balance(payer), e.balance(e.payTo)
	// Before the gateway closed the channel: refused, with the gateway's
	// secret or without it (then first as a stranger's), nothing moves.
	rb := func(amount string) []byte {
		pl := body["paymentPayload"].(map[string]any)["payload"].(map[string]any)
		pl["type"] = "refund"
		delete(pl, "deposit")
		delete(pl, "amount")
		if amount != "" {
			pl["amount"] = amount
		}
		pl["voucher"].(map[string]any)["maxClaimableAmount"] = "300"
		b, _ := json.Marshal(body)
		return b
	}
	if code, out := doAs(t, srv.URL+"/x402/settle", rb(""), testGatewaySecret); code != http.StatusOK || out["errorReason"] != ReasonChannelOpen {
		t.Fatalf("refund of an open channel: %d %v", code, out)
	}
	if _, reason, err := m.CloseChannel(ctx, id, wallet, 300); err != nil || reason != "" {
		t.Fatalf("close: %q %v", reason, err)
	}
	for _, secret := range []string{"", "wrong-secret-wrong-secret-wrong-secret", testGatewaySecret + "x"} {
		if code, out := doAs(t, srv.URL+"/x402/settle", rb(""), secret); code != http.StatusUnauthorized || out["errorReason"] != ReasonUnauthorized {
			t.Fatalf("refund with secret %q: %d %v", secret, code, out)
		}
	}
	if e.balance(payer).Cmp(payer0) != 0 || e.balance(e.payTo).Cmp(payTo0) != 0 {
		t.Fatal("a refused refund moved money")
	}
	refund := func(amount string) map[string]any {
		t.Helper()
		pl := body["paymentPayload"].(map[string]any)["payload"].(map[string]any)
		pl["type"] = "refund"
		delete(pl, "deposit")
		delete(pl, "amount")
		if amount != "" {
			pl["amount"] = amount
		}
		pl["voucher"].(map[string]any)["maxClaimableAmount"] = "300"
		b, _ := json.Marshal(body)
		code, out := doAs(t, srv.URL+"/x402/settle", b, testGatewaySecret)
		if code != http.StatusOK {
			t.Fatalf("refund %q: %d %v", amount, code, out)
		}
		return out
	}
	moved := func() (int64, int64) {
		return new(big.Int).Sub(e.balance(payer), payer0).Int64(), new(big.Int).Sub(e.balance(e.payTo), payTo0).Int64()
	}
	out := refund("200")
	if out["success"] != true || out["amount"] != "200" || out["transaction"] == "" {
		t.Fatalf("partial refund: %v", out)
	}
	if p, r := moved(); p != 200 || r != 300 {
		t.Fatalf("after a partial refund the payer got %d, payTo %d; want 200 and the vouchers' 300", p, r)
	}
	out = refund("")
	cs := out["extra"].(map[string]any)["channelState"].(map[string]any)
	if out["success"] != true || out["amount"] != "99500" || cs["balance"] != "300" || cs["totalClaimed"] != "300" || cs["refundNonce"] != "2" {
		t.Fatalf("full refund: %v", out)
	}
	if p, r := moved(); p != 99_700 || r != 300 {
		t.Fatalf("after the refund the payer got %d, payTo %d; want 99700 and 300", p, r)
	}
	if out = refund(""); out["success"] != false || out["errorReason"] != ReasonBatchRefundNoBalance {
		t.Fatalf("refund with nothing left: %v", out)
	}
	if p, r := moved(); p != 99_700 || r != 300 {
		t.Fatalf("a repeated refund moved money: payer %d, payTo %d", p, r)
	}
	if st, _, _ := m.Channel(ctx, id); st.Claimed != 300 {
		t.Fatalf("the gateway's channel state says %d claimed", st.Claimed)
	}
}
