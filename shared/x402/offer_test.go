package x402

import (
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func TestOfferFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	o, err := OfferFromEnv(8453, env(map[string]string{EnvPayTo: "0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5"}))
	if err != nil || o.Asset != common.HexToAddress(BaseUSDC) || o.ChainID != 8453 {
		t.Fatalf("default asset: %+v %v", o, err)
	}
	for name, m := range map[string]map[string]string{
		"no payTo":    {},
		"zero payTo":  {EnvPayTo: "0x0000000000000000000000000000000000000000"},
		"bad asset":   {EnvPayTo: "0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5", EnvAsset: "usdc"},
		"no 0x payTo": {EnvPayTo: "6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5"},
	} {
		if _, err := OfferFromEnv(8453, env(m)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Only the offer's exact requirement passes: its network (v1 and v2
// names), asset, payee and price; zero and any other amount are refused
// with the reason a client understands.
func TestOfferCheckExact(t *testing.T) {
	asset, payTo := common.HexToAddress(BaseUSDC), common.HexToAddress("0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5")
	o := Offer{ChainID: 8453, Asset: asset, PayTo: payTo}
	good := Requirements{Scheme: "exact", Network: "eip155:8453", Amount: "100000", Asset: asset.Hex(), PayTo: payTo.Hex()}
	if err := o.CheckExact(2, good); err != nil {
		t.Fatal(err)
	}
	v1 := good
	v1.Network, v1.Amount, v1.MaxAmountRequired = "base", "", "100000"
	if err := o.CheckExact(1, v1); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit   func(r *Requirements)
		reason string
	}{
		"zero amount":   {func(r *Requirements) { r.Amount = "0" }, ReasonValueV2},
		"one unit":      {func(r *Requirements) { r.Amount = "1" }, ReasonValueV2},
		"more":          {func(r *Requirements) { r.Amount = "100001" }, ReasonValueV2},
		"foreign asset": {func(r *Requirements) { r.Asset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }, ReasonAsset},
		"foreign payTo": {func(r *Requirements) { r.PayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" }, ReasonRecipient},
		"other network": {func(r *Requirements) { r.Network = "eip155:84532" }, ReasonNetwork},
		"other scheme":  {func(r *Requirements) { r.Scheme = "upto" }, ReasonScheme},
	} {
		r := good
		c.edit(&r)
		var inv *Invalid
		if err := o.CheckExact(2, r); !errors.As(err, &inv) || inv.Reason != c.reason {
			t.Errorf("%s: %v, want %s", name, err, c.reason)
		}
	}
	authz := common.HexToAddress("0x01")
	if err := o.CheckChannel("eip155:8453", asset, payTo, authz, BatchWithdrawDelay); err == nil {
		t.Fatal("a channel accepted without a batch-settlement offer")
	}
	o.ReceiverAuthorizer = authz
	if err := o.CheckChannel("eip155:8453", asset, payTo, authz, BatchWithdrawDelay); err != nil {
		t.Fatal(err)
	}
	if err := o.CheckChannel("eip155:8453", asset, payTo, authz, 900); err == nil {
		t.Fatal("another withdraw delay accepted")
	}
}
