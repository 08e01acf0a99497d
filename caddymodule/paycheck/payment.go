// Package paycheck reads the two headers through which a caller pays the
// gateway without an API key — an x402 payment (PAYMENT-SIGNATURE v2,
// X-PAYMENT v1; the exact scheme, or a batch-settlement deposit or voucher)
// and a Sign-In-With-X proof — and checks them offline: no
// Redis, no chain, no facilitator. It is its own small package so its
// fuzz targets run fast (a fuzz binary's coverage map grows with every
// package linked in).
package paycheck

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// Network names and the token domain of the offer (Base USDC).
const (
	Scheme       = "exact"
	NetworkV1    = "base"        // v1 clients accept only legacy names
	NetworkV2    = "eip155:8453" // CAIP-2
	ChainID      = 8453
	TokenName    = "USD Coin" // Base USDC's EIP-712 domain
	TokenVersion = "2"
	// SettleMarginSecs: an authorization must outlive its settlement (the
	// x402 SDKs require 6 s).
	SettleMarginSecs = 6
	maxPaymentHeader = 16 << 10 // a 65-byte-signature payload is ~1.5 KiB
)

// Reasons this package gives besides shared/x402's.
const (
	ReasonInvalidHeader  = "invalid_payment_header"
	ReasonAmountMismatch = "invalid_exact_evm_payload_amount_mismatch"
	ReasonPayToMismatch  = "invalid_exact_evm_payload_recipient_mismatch"
)

// Refusal is why a header was not accepted: an x402 reason (snake_case)
// and a human message.
type Refusal struct{ Reason, Msg string }

func (e *Refusal) Error() string { return e.Reason + ": " + e.Msg }

// Refuse builds a Refusal.
func Refuse(reason, format string, a ...any) *Refusal {
	return &Refusal{Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

// Offer is what the gateway asks for: one bundle, paid in asset to payTo.
type Offer struct{ Asset, PayTo string }

// Short is the requirement of version v as shared/x402 checks it.
func (o Offer) Short(v int) x402.Requirements {
	amount := money.BundlePrice.String()
	if v == 1 {
		return x402.Requirements{Scheme: Scheme, Network: NetworkV1, MaxAmountRequired: amount, Asset: o.Asset, PayTo: o.PayTo}
	}
	return x402.Requirements{Scheme: Scheme, Network: NetworkV2, Amount: amount, Asset: o.Asset, PayTo: o.PayTo}
}

// Payment is a decoded payment header that passed the offline checks.
type Payment struct {
	Version int             // 1 (X-PAYMENT) or 2 (PAYMENT-SIGNATURE)
	Raw     json.RawMessage // the payload as sent, forwarded verbatim to the facilitator
	Payload x402.Payload
	Checked *x402.Checked
}

// DecodeBase64JSON decodes a standard-base64 JSON header (padding optional;
// clients must send standard base64, being lenient here costs nothing).
func DecodeBase64JSON(v string, max int) ([]byte, error) {
	v = strings.TrimSpace(v)
	if len(v) > max {
		return nil, fmt.Errorf("the header is over %d bytes", max)
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "=")); err != nil {
			return nil, errors.New("the header is not standard base64")
		}
	}
	if !json.Valid(b) {
		return nil, errors.New("the header's base64 does not hold JSON")
	}
	return b, nil
}

// DecodePayment parses the payment header name: value and checks it
// against the offer at now: version, scheme, network, asset, payee, amount,
// the time window with room to settle, and the EIP-712 signature. Only a
// payment that passes is worth a facilitator round trip.
func DecodePayment(o Offer, name, value string, now time.Time) (*Payment, *Refusal) {
	b, err := DecodeBase64JSON(value, maxPaymentHeader)
	if err != nil {
		return nil, Refuse(ReasonInvalidHeader, "%s: %v", name, err)
	}
	p := &Payment{Raw: b}
	if err := json.Unmarshal(b, &p.Payload); err != nil {
		return nil, Refuse(ReasonInvalidHeader, "%s does not hold an x402 PaymentPayload: %v", name, err)
	}
	p.Version = p.Payload.X402Version
	if p.Version != 1 && p.Version != 2 {
		return nil, Refuse(x402.ReasonVersion, "x402Version %d; this gateway speaks 1 (X-PAYMENT) and 2 (PAYMENT-SIGNATURE)", p.Version)
	}
	short := o.Short(p.Version)
	if p.Version == 2 && p.Payload.Accepted != nil {
		// v2 echoes the requirement it accepted: it must be ours, compared
		// with normalised addresses and amounts (clients re-checksum).
		acc := p.Payload.Accepted
		if v, ok := x402.ParseUint256(acc.Amount); !ok || v.Cmp(big.NewInt(int64(money.BundlePrice))) != 0 {
			return nil, Refuse(ReasonAmountMismatch, "accepted amount %q; the bundle costs %s USDC units", acc.Amount, money.BundlePrice.String())
		}
		if !strings.EqualFold(acc.PayTo, o.PayTo) {
			return nil, Refuse(ReasonPayToMismatch, "accepted payTo %s; payments go to %s", acc.PayTo, o.PayTo)
		}
	}
	dom := x402.Domain{ChainID: ChainID, Name: TokenName, Version: TokenVersion}
	c, err := x402.Check(&x402.Request{X402Version: p.Version, PaymentPayload: &p.Payload, PaymentRequirements: &short}, dom, now)
	if err != nil {
		var inv *x402.Invalid
		if errors.As(err, &inv) {
			return nil, Refuse(inv.Reason, "%s", inv.Msg)
		}
		return nil, Refuse(x402.ReasonPayload, "%v", err)
	}
	if c.ValidBefore.Cmp(big.NewInt(now.Unix()+SettleMarginSecs)) < 0 {
		return nil, Refuse(x402.ReasonValidBefore, "the authorization expires at %s, too soon to settle (now %d)", c.ValidBefore, now.Unix())
	}
	p.Checked = c
	return p, nil
}
