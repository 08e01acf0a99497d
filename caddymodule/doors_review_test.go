package caddymodule_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// exactPayment signs a fresh x402 v2 "exact" payment (an EIP-3009
// TransferWithAuthorization) for the offer the gateway's 402 makes: the
// PaymentPayload as an object (MCP's _meta["x402/payment"]) and as the
// PAYMENT-SIGNATURE header's value.
func exactPayment(t *testing.T, offer map[string]any) (map[string]any, string) {
	t.Helper()
	acc := offer["accepts"].([]any)[0].(map[string]any)
	chainID, err := strconv.ParseUint(strings.TrimPrefix(fmt.Sprint(acc["network"]), "eip155:"), 10, 64)
	if err != nil {
		t.Fatalf("offer network %v", acc["network"])
	}
	extra, _ := acc["extra"].(map[string]any)
	value, ok := new(big.Int).SetString(fmt.Sprint(acc["amount"]), 10)
	if !ok || extra == nil {
		t.Fatalf("offer %v", acc)
	}
	key, _ := crypto.GenerateKey()
	from, to, asset := crypto.PubkeyToAddress(key.PublicKey), common.HexToAddress(fmt.Sprint(acc["payTo"])), common.HexToAddress(fmt.Sprint(acc["asset"]))
	var nonce [32]byte
	_, _ = rand.Read(nonce[:])
	after, before := big.NewInt(0), big.NewInt(time.Now().Unix()+300)
	sig, err := crypto.Sign(x402.Digest(fmt.Sprint(extra["name"]), fmt.Sprint(extra["version"]), chainID, asset, from, to, value, after, before, nonce), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	p := map[string]any{"x402Version": 2, "resource": offer["resource"], "accepted": acc, "payload": map[string]any{
		"signature": hexutil.Encode(sig), "authorization": map[string]any{"from": from.Hex(), "to": to.Hex(), "value": value.String(),
			"validAfter": after.String(), "validBefore": before.String(), "nonce": hexutil.Encode(nonce[:])}}}
	b, _ := json.Marshal(p)
	return p, base64.StdEncoding.EncodeToString(b)
}

// TestRefusedSettlementEchoedAtEveryDoor: a payment the facilitator
// verifies but fails to settle (success false: the payer's balance went
// between verify and settle) is refused 402 with the facilitator's failed
// SettlementResponse echoed, so the client learns why its payment did not
// go through: POST /rpc in PAYMENT-RESPONSE, an MCP tool call in the
// result's _meta["x402/payment-response"] (x402's MCP binding). The
// facilitator is a stand-in for an external one (x402_facilitator_url),
// speaking x402's wire format.
func TestRefusedSettlementEchoedAtEveryDoor(t *testing.T) {
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			PaymentPayload struct {
				Payload struct {
					Authorization struct{ From string } `json:"authorization"`
				} `json:"payload"`
			} `json:"paymentPayload"`
			PaymentRequirements struct{ Network string } `json:"paymentRequirements"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		from := req.PaymentPayload.Payload.Authorization.From
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/settle") {
			fmt.Fprintf(w, `{"success":false,"errorReason":"insufficient_funds","errorMessage":"the payer's balance is short","transaction":"","network":%q,"payer":%q}`,
				req.PaymentRequirements.Network, from)
			return
		}
		fmt.Fprintf(w, `{"isValid":true,"payer":%q}`, from)
	}))
	t.Cleanup(fac.Close)
	e := startMetered(t, meterOpts{free: -1, extra: "x402_facilitator_url " + fac.URL})

	first := e.rpc(t, blockNumber)
	raw, err := base64.StdEncoding.DecodeString(first.header.Get("PAYMENT-REQUIRED"))
	var offer map[string]any
	if first.status != http.StatusPaymentRequired || err != nil || json.Unmarshal(raw, &offer) != nil {
		t.Fatalf("the 402: %d %v %s", first.status, err, raw)
	}

	// POST: the control.
	_, sig := exactPayment(t, offer)
	a := e.rpc(t, blockNumber, "PAYMENT-SIGNATURE: "+sig)
	var overHTTP map[string]any
	resp, _ := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-RESPONSE"))
	if a.status != http.StatusPaymentRequired || json.Unmarshal(resp, &overHTTP) != nil || overHTTP["success"] != false ||
		overHTTP["errorReason"] != "insufficient_funds" {
		t.Fatalf("POST: %d PAYMENT-RESPONSE %s, want 402 echoing the failed settlement", a.status, resp)
	}

	// MCP, with the official SDK client: the same echo in the result's _meta.
	p, _ := exactPayment(t, offer)
	res := tool(t, e.mcpSession(t), "rpc", map[string]any{"method": "eth_blockNumber"}, sdk.Meta{"x402/payment": p})
	pr, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || pr == nil || pr["x402Version"] != float64(2) {
		t.Fatalf("MCP: %+v, want the payment-required result", res)
	}
	echo, _ := res.Meta["x402/payment-response"].(map[string]any)
	if echo["success"] != false || echo["errorReason"] != "insufficient_funds" || echo["payer"] != payerOf(p) {
		t.Fatalf("MCP: _meta %v, want x402/payment-response echoing the failed settlement (POST's: %v)", res.Meta, overHTTP)
	}
}

// payerOf is the payer a payment names.
func payerOf(p map[string]any) string {
	return p["payload"].(map[string]any)["authorization"].(map[string]any)["from"].(string)
}
