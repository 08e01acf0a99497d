package paycheck

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
)

// batchFixture holds payloads made by the official client library
// (tests/x402/batchfixture.mjs: @x402/evm 2.27.0 BatchSettlementEvmScheme):
// the first request's deposit and the next request's voucher.
type batchFixture struct {
	Payer        string          `json:"payer"`
	ChannelID    string          `json:"channel_id"`
	Requirements json.RawMessage `json:"requirements"`
	Deposit      json.RawMessage `json:"deposit"`
	Voucher      json.RawMessage `json:"voucher"`
}

func loadBatch(t *testing.T) (batchFixture, BatchOffer) {
	t.Helper()
	b, err := os.ReadFile("testdata/batch_fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var f batchFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Asset, PayTo string
		Extra        struct {
			ReceiverAuthorizer string
			WithdrawDelay      uint64
		}
	}
	if err := json.Unmarshal(f.Requirements, &req); err != nil {
		t.Fatal(err)
	}
	return f, BatchOffer{Asset: common.HexToAddress(req.Asset), PayTo: common.HexToAddress(req.PayTo),
		ReceiverAuthorizer: common.HexToAddress(req.Extra.ReceiverAuthorizer), WithdrawDelay: req.Extra.WithdrawDelay}
}

func header(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

// fixtureNow is inside the fixture's deposit authorization window.
var fixtureNow = time.Unix(1795610035-200, 0)

// The gateway computes the channel id the official client computes, and
// recovers its voucher and deposit signatures.
func TestBatchPaymentFromTheOfficialClient(t *testing.T) {
	f, o := loadBatch(t)
	if !IsBatchPayment(header(f.Deposit)) || !IsBatchPayment(header(f.Voucher)) {
		t.Fatal("IsBatchPayment does not recognise the client's payments")
	}
	dep, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", header(f.Deposit), fixtureNow)
	if ref != nil {
		t.Fatalf("deposit refused: %v", ref)
	}
	if dep.ChannelID.Hex() != f.ChannelID {
		t.Fatalf("channel id %s, the client computes %s", dep.ChannelID.Hex(), f.ChannelID)
	}
	if dep.Type != "deposit" || dep.MaxClaimable != 100 || dep.Deposit == nil || dep.Deposit.Amount.Int64() != 100_000 {
		t.Fatalf("deposit = %+v", dep)
	}
	if !strings.EqualFold(dep.Wallet(), f.Payer) || dep.Config.PayerAuthorizer != common.HexToAddress(f.Payer) {
		t.Fatalf("payer %s, want %s", dep.Wallet(), f.Payer)
	}
	v, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", header(f.Voucher), fixtureNow)
	if ref != nil {
		t.Fatalf("voucher refused: %v", ref)
	}
	if v.Type != "voucher" || v.MaxClaimable != 200 || v.ChannelID != dep.ChannelID || v.Deposit != nil {
		t.Fatalf("voucher = %+v", v)
	}
}

// mutate decodes a fixture payload, applies fn, and re-encodes it.
func mutate(t *testing.T, raw json.RawMessage, fn func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, _ := json.Marshal(m)
	return header(b)
}

func payloadOf(m map[string]any) map[string]any { return m["payload"].(map[string]any) }

// wrongChecksum is addr's EIP-55 spelling with one letter's case flipped:
// the same 20 bytes, a checksum that does not match them.
func wrongChecksum(t *testing.T, addr string) string {
	t.Helper()
	b := []byte(common.HexToAddress(addr).Hex())
	for i := 2; i < len(b); i++ {
		switch {
		case b[i] >= 'a' && b[i] <= 'f':
			b[i] -= 'a' - 'A'
			return string(b)
		case b[i] >= 'A' && b[i] <= 'F':
			b[i] += 'a' - 'A'
			return string(b)
		}
	}
	t.Fatalf("%s has no letter to flip", addr)
	return ""
}

// An all-lowercase spelling of the channel's addresses is the same
// channel: it hashes to the same id and the voucher still verifies.
func TestBatchPaymentLowercaseAddresses(t *testing.T) {
	f, o := loadBatch(t)
	v, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", mutate(t, f.Voucher, func(m map[string]any) {
		cc := payloadOf(m)["channelConfig"].(map[string]any)
		for _, k := range []string{"payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "token"} {
			cc[k] = strings.ToLower(cc[k].(string))
		}
	}), fixtureNow)
	if ref != nil {
		t.Fatalf("lowercase addresses refused: %v", ref)
	}
	if v.ChannelID.Hex() != f.ChannelID {
		t.Fatalf("channel id %s, want %s", v.ChannelID.Hex(), f.ChannelID)
	}
}

func TestBatchPaymentRefusals(t *testing.T) {
	f, o := loadBatch(t)
	cases := []struct {
		name, reason string
		value        string
		offer        *BatchOffer
		now          time.Time
	}{
		{"voucher for more than it signed", ReasonBatchVoucherSignature, mutate(t, f.Voucher, func(m map[string]any) {
			payloadOf(m)["voucher"].(map[string]any)["maxClaimableAmount"] = "100000"
		}), nil, fixtureNow},
		{"another channel's id", ReasonBatchChannelIDMismatch, mutate(t, f.Voucher, func(m map[string]any) {
			payloadOf(m)["voucher"].(map[string]any)["channelId"] = "0x" + strings.Repeat("ab", 32)
		}), nil, fixtureNow},
		{"config changed under the id", ReasonBatchChannelIDMismatch, mutate(t, f.Voucher, func(m map[string]any) {
			payloadOf(m)["channelConfig"].(map[string]any)["salt"] = "0x" + strings.Repeat("01", 32)
		}), nil, fixtureNow},
		{"unknown payload type", ReasonBatchPayloadType, mutate(t, f.Voucher, func(m map[string]any) { payloadOf(m)["type"] = "close" }), nil, fixtureNow},
		{"refund of no amount", ReasonBatchRefundAmount, mutate(t, f.Voucher, func(m map[string]any) {
			payloadOf(m)["type"], payloadOf(m)["amount"] = "refund", "0"
		}), nil, fixtureNow},
		{"deposit amount raised", ReasonBatchReceiveAuth, mutate(t, f.Deposit, func(m map[string]any) {
			payloadOf(m)["deposit"].(map[string]any)["amount"] = "200000"
		}), nil, fixtureNow},
		{"deposit authorization expired", ReasonBatchValidBefore, header(f.Deposit), nil, time.Unix(1795610035, 0)},
		{"other receiver", ReasonBatchReceiverMismatch, header(f.Voucher), &BatchOffer{Asset: o.Asset, PayTo: common.HexToAddress("0x01"), ReceiverAuthorizer: o.ReceiverAuthorizer, WithdrawDelay: o.WithdrawDelay}, fixtureNow},
		{"other authorizer", ReasonBatchAuthorizer, header(f.Voucher), &BatchOffer{Asset: o.Asset, PayTo: o.PayTo, ReceiverAuthorizer: common.HexToAddress("0x02"), WithdrawDelay: o.WithdrawDelay}, fixtureNow},
		{"other delay", ReasonBatchWithdrawDelay, header(f.Voucher), &BatchOffer{Asset: o.Asset, PayTo: o.PayTo, ReceiverAuthorizer: o.ReceiverAuthorizer, WithdrawDelay: 3600}, fixtureNow},
		{"not base64", ReasonInvalidHeader, "%%%", nil, fixtureNow},
		// Addresses are read by ethparse.Address, as the facilitator reads
		// the same payload: a mixed-case spelling must carry its right
		// checksum, and 0x is required.
		{"payer with a wrong checksum", ReasonBatchVoucherPayload, mutate(t, f.Voucher, func(m map[string]any) {
			cc := payloadOf(m)["channelConfig"].(map[string]any)
			cc["payer"] = wrongChecksum(t, cc["payer"].(string))
		}), nil, fixtureNow},
		{"token without 0x", ReasonBatchVoucherPayload, mutate(t, f.Voucher, func(m map[string]any) {
			cc := payloadOf(m)["channelConfig"].(map[string]any)
			cc["token"] = strings.TrimPrefix(cc["token"].(string), "0x")
		}), nil, fixtureNow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			off := o
			if c.offer != nil {
				off = *c.offer
			}
			_, ref := DecodeBatchPayment(off, "PAYMENT-SIGNATURE", c.value, c.now)
			if ref == nil || ref.Reason != c.reason {
				t.Fatalf("refusal %v, want reason %s", ref, c.reason)
			}
		})
	}
}

// A refund payload (the client's zero-charge voucher, optionally an
// amount) passes the same offline checks as a voucher.
func TestBatchRefundPayload(t *testing.T) {
	f, o := loadBatch(t)
	p, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", mutate(t, f.Voucher, func(m map[string]any) {
		payloadOf(m)["type"], payloadOf(m)["amount"] = "refund", "500"
	}), fixtureNow)
	if ref != nil {
		t.Fatalf("refund refused: %v", ref)
	}
	if p.Type != "refund" || p.MaxClaimable != 200 || p.RefundAmount != 500 {
		t.Fatalf("refund = %+v", p)
	}
	if _, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", mutate(t, f.Voucher, func(m map[string]any) {
		payloadOf(m)["type"] = "refund"
		payloadOf(m)["voucher"].(map[string]any)["maxClaimableAmount"] = "300"
	}), fixtureNow); ref == nil || ref.Reason != ReasonBatchVoucherSignature {
		t.Fatalf("refund with a voucher it did not sign: %v", ref)
	}
}

// The deposit nonce binds the authorization to the channel, as the contract's collector requires.
func TestBatchDepositNonceIsTheContracts(t *testing.T) {
	f, o := loadBatch(t)
	dep, ref := DecodeBatchPayment(o, "PAYMENT-SIGNATURE", header(f.Deposit), fixtureNow)
	if ref != nil {
		t.Fatal(ref)
	}
	if dep.Deposit.Nonce != batchsettle.DepositNonce(dep.ChannelID, dep.Deposit.Salt) {
		t.Fatal("nonce differs")
	}
}
