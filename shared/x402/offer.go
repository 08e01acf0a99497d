package x402

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The operator's offer is one definition both binaries read: the gateway's
// 402 states it (caddymodule/payment, from the Caddyfile's x402_asset and
// x402_pay_to, which the shipped Caddyfiles fill from these environment
// variables) and settlementd's facilitator settles nothing else (from the
// same variables, config.X402). A facilitator that judged a payment against
// the requirements in the request would settle any asset to any payee for
// any amount from the relayer's key and gas (an open relayer).
const (
	EnvAsset = "TOLLGATE_X402_ASSET"  // the token offered (default Base USDC)
	EnvPayTo = "TOLLGATE_X402_PAY_TO" // the receiver of exact payments and batch-settlement channels
	// BaseUSDC is Base mainnet's USDC, the default asset of both sides.
	BaseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
)

// Prices and channel terms of the offer (integer USDC units). The gateway's
// 402 quotes exactly these; the facilitator refuses anything else.
const (
	// ExactPrice is the one amount an "exact" payment may carry: a bundle.
	ExactPrice = money.BundlePrice
	// BatchCallPrice is what one call costs on a batch-settlement channel.
	BatchCallPrice = money.BundleCallRevenue
	// BatchWithdrawDelay is the channels' withdraw delay (seconds): how long
	// a payer's timed withdrawal waits, so settlementd claims first.
	BatchWithdrawDelay = 86_400
	// BatchMinDeposit is the deposit the offer asks for (extra.minDeposit);
	// the facilitator relays no smaller one, so a stranger cannot spend the
	// relayer's gas on dust deposits.
	BatchMinDeposit = money.BundlePrice
	// SettleMarginSecs is how long an exact authorization must still be
	// valid when it is settled (the x402 SDKs' 6 s, the gateway's
	// paycheck.SettleMarginSecs): one that expires sooner may be mined after
	// its validBefore and revert on the relayer's gas, with nothing moved.
	SettleMarginSecs = 6
)

// Offer is the operator's x402 offer on one chain.
type Offer struct {
	ChainID uint64
	Asset   common.Address
	PayTo   common.Address
	// ReceiverAuthorizer is the batch-settlement channels' receiver
	// authorizer; zero: no batch-settlement offer.
	ReceiverAuthorizer common.Address
}

// OfferFromEnv reads the offer's asset and payee from getenv (EnvAsset,
// EnvPayTo). PayTo is required: a facilitator without it would not know
// whose payments it settles.
func OfferFromEnv(chainID uint64, getenv func(string) string) (Offer, error) {
	o := Offer{ChainID: chainID}
	asset := strings.TrimSpace(getenv(EnvAsset))
	if asset == "" {
		asset = BaseUSDC
	}
	a, ok := ParseAddr(asset)
	if !ok || a == (common.Address{}) {
		return o, fmt.Errorf("%s %q is not an address", EnvAsset, asset)
	}
	p, ok := ParseAddr(strings.TrimSpace(getenv(EnvPayTo)))
	if !ok || p == (common.Address{}) {
		return o, fmt.Errorf("%s must be the x402 receiver's address (the gateway's x402_pay_to): the facilitator settles only payments to it", EnvPayTo)
	}
	o.Asset, o.PayTo = a, p
	return o, nil
}

// CheckExact refuses an exact requirement that is not this offer: another
// network, asset, payee or amount. It runs before Check, so a request that
// names a foreign requirement never reaches the chain.
func (o Offer) CheckExact(version int, rq Requirements) error {
	want := fmt.Sprintf("eip155:%d", o.ChainID)
	amount := rq.Amount
	if version == 1 {
		want, amount = V1Name(o.ChainID), rq.MaxAmountRequired
	}
	if rq.Scheme != "exact" {
		return Bad(ReasonScheme, "scheme %q is not offered here", rq.Scheme)
	}
	if rq.Network != want {
		return Bad(ReasonNetwork, "network %q; this facilitator settles %q", rq.Network, want)
	}
	if a, ok := ParseAddr(rq.Asset); !ok || a != o.Asset {
		return Bad(ReasonAsset, "asset %q; this facilitator settles only %s", rq.Asset, o.Asset.Hex())
	}
	if p, ok := ParseAddr(rq.PayTo); !ok || p != o.PayTo {
		return Bad(ReasonRecipient, "payTo %q; this facilitator settles only payments to %s", rq.PayTo, o.PayTo.Hex())
	}
	if v, ok := ParseUint256(amount); !ok || v.Cmp(big.NewInt(int64(ExactPrice))) != 0 {
		reason := ReasonValueV2
		if version == 1 {
			reason = ReasonValueV1
		}
		return Bad(reason, "amount %q; the offer's price is %d", amount, ExactPrice)
	}
	return nil
}

// CheckChannel refuses a batch-settlement channel that is not this offer's:
// another network, token, receiver, receiver authorizer or withdraw delay.
func (o Offer) CheckChannel(network string, token, receiver, receiverAuthorizer common.Address, withdrawDelay uint64) error {
	if want := fmt.Sprintf("eip155:%d", o.ChainID); network != want {
		return Bad(ReasonNetwork, "network %q; this facilitator settles %s", network, want)
	}
	switch {
	case o.ReceiverAuthorizer == (common.Address{}):
		return Bad(ReasonScheme, "batch-settlement is not offered here")
	case token != o.Asset:
		return Bad(ReasonAsset, "channel token %s; the offer's asset is %s", token.Hex(), o.Asset.Hex())
	case receiver != o.PayTo:
		return Bad(ReasonRecipient, "channel receiver %s; the offer's payTo is %s", receiver.Hex(), o.PayTo.Hex())
	case receiverAuthorizer != o.ReceiverAuthorizer:
		return Bad(ReasonRequirements, "channel receiverAuthorizer %s; the offer's is %s", receiverAuthorizer.Hex(), o.ReceiverAuthorizer.Hex())
	case withdrawDelay != BatchWithdrawDelay:
		return Bad(ReasonRequirements, "channel withdrawDelay %d; the offer's is %d", withdrawDelay, BatchWithdrawDelay)
	}
	return nil
}
