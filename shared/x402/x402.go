// Package x402 is the x402 "exact" scheme on EVM (EIP-3009
// TransferWithAuthorization) as both sides of Tollgate speak it: the wire
// types of payment payloads, requirements and facilitator answers (v1 and
// v2), the offline checks of an authorization against a requirement, and
// the EIP-712 digest and signer recovery. The gateway (caddymodule) and
// settlementd's facilitator share it, so a payment the gateway lets through
// to the facilitator is judged by the same rules there.
package x402

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Reasons of isValid:false / success:false (x402 spec §1.6 names where the
// spec has one).
const (
	ReasonVersion        = "invalid_x402_version"
	ReasonScheme         = "unsupported_scheme"
	ReasonNetwork        = "invalid_network"
	ReasonPayload        = "invalid_payload"
	ReasonRequirements   = "invalid_payment_requirements"
	ReasonAsset          = "invalid_exact_evm_payload_asset_mismatch"
	ReasonSignature      = "invalid_exact_evm_payload_signature"
	ReasonRecipient      = "invalid_exact_evm_payload_recipient_mismatch"
	ReasonValueV1        = "invalid_exact_evm_payload_authorization_value"
	ReasonValueV2        = "invalid_exact_evm_payload_authorization_value_mismatch"
	ReasonValidAfter     = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonValidBefore    = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonNonceUsed      = "invalid_exact_evm_payload_authorization_nonce_used"
	ReasonFunds          = "insufficient_funds"
	ReasonTxState        = "invalid_transaction_state"
	ReasonUnexpectedSett = "unexpected_settle_error"
)

// v1 network names → chain id (the legacy names x402 v1 uses).
var V1Networks = map[string]uint64{"base": 8453, "base-sepolia": 84532}

// V1Name is the v1 network name of chainID ("" if none).
func V1Name(chainID uint64) string {
	for n, id := range V1Networks {
		if id == chainID {
			return n
		}
	}
	return ""
}

// Requirements is a PaymentRequirements of v1 or v2 (the fields this
// facilitator reads; others are ignored).
type Requirements struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount,omitempty"`            // v2
	MaxAmountRequired string `json:"maxAmountRequired,omitempty"` // v1
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
}

// Authorization is the EIP-3009 authorization as x402 sends it.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactPayload is the scheme payload.
type ExactPayload struct {
	Signature     string        `json:"signature"`
	Authorization Authorization `json:"authorization"`
}

// Payload is a PaymentPayload of v1 (scheme, network at the top) or v2
// (accepted).
type Payload struct {
	X402Version int           `json:"x402Version"`
	Scheme      string        `json:"scheme,omitempty"`
	Network     string        `json:"network,omitempty"`
	Accepted    *Requirements `json:"accepted,omitempty"`
	Payload     ExactPayload  `json:"payload"`
}

// Request is the body of /verify and /settle.
type Request struct {
	X402Version         int           `json:"x402Version"`
	PaymentPayload      *Payload      `json:"paymentPayload"`
	PaymentRequirements *Requirements `json:"paymentRequirements"`
}

// VerifyResponse is the /verify answer.
type VerifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer"`
}

// SettleResponse is the /settle answer.
type SettleResponse struct {
	Success      bool   `json:"success"`
	ErrorReason  string `json:"errorReason,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Transaction  string `json:"transaction"`
	Network      string `json:"network"`
	Payer        string `json:"payer"`
}

// Checked is an authorization that passed the offline checks.
type Checked struct {
	From, To                       common.Address
	Value, ValidAfter, ValidBefore *big.Int
	Nonce                          [32]byte
	Sig                            []byte
	Asset                          common.Address
	Network                        string
}

// Invalid is a failed check.
type Invalid struct{ Reason, Msg string }

func (e *Invalid) Error() string { return e.Reason + ": " + e.Msg }

func Bad(reason, format string, a ...any) error {
	return &Invalid{Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func ParseUint256(s string) (*big.Int, bool) {
	if s == "" || len(s) > 78 {
		return nil, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Cmp(maxUint256) > 0 {
		return nil, false
	}
	return v, true
}

// ParseAddr reads an address with the one address reader (ethparse.Address:
// 0x and 40 hex digits, a mixed-case spelling's EIP-55 checksum right).
func ParseAddr(s string) (common.Address, bool) {
	a, err := ethparse.Address(s)
	return a, err == nil
}

// PayerOf is authorization.from when it is an address.
func PayerOf(req *Request) string {
	if a, ok := ParseAddr(req.PaymentPayload.Payload.Authorization.From); ok {
		return a.Hex()
	}
	return ""
}

// Domain is what an authorization is checked against: the chain and the
// token's EIP-712 domain name and version.
type Domain struct {
	ChainID       uint64
	Name, Version string
}

// CAIP2 is the chain's x402 v2 network name.
func (d Domain) CAIP2() string { return fmt.Sprintf("eip155:%d", d.ChainID) }

// Check runs the offline checks of a payment against its requirement:
// versions, scheme, network, asset, authorization fields, recipient, value,
// time window (at now) and, for a 65-byte signature, signer recovery. The
// error is an *Invalid. The gateway runs it before asking a facilitator
// (a forged or stale payment never costs a round trip), and settlementd's
// facilitator runs it first in /verify and /settle.
func Check(req *Request, dom Domain, now time.Time) (*Checked, error) {
	p, rq := req.PaymentPayload, req.PaymentRequirements
	v := req.X402Version
	if (v != 1 && v != 2) || p.X402Version != v {
		return nil, Bad(ReasonVersion, "x402Version %d (payload %d); 1 and 2 are supported", v, p.X402Version)
	}
	scheme, network := p.Scheme, p.Network
	if v == 2 {
		if p.Accepted == nil {
			return nil, Bad(ReasonPayload, "a v2 payload carries the accepted requirement")
		}
		scheme, network = p.Accepted.Scheme, p.Accepted.Network
	}
	if scheme != "exact" || rq.Scheme != "exact" {
		return nil, Bad(ReasonScheme, "scheme %q / %q; only exact is supported", scheme, rq.Scheme)
	}
	want := dom.CAIP2()
	if v == 1 {
		want = V1Name(dom.ChainID)
	}
	if network != rq.Network || network != want {
		return nil, Bad(ReasonNetwork, "network %q / %q; x402 v%d here is %q", network, rq.Network, v, want)
	}
	asset, ok := ParseAddr(rq.Asset)
	if !ok {
		return nil, Bad(ReasonRequirements, "asset %q is not an address", rq.Asset)
	}
	if v == 2 && !strings.EqualFold(p.Accepted.Asset, rq.Asset) {
		return nil, Bad(ReasonAsset, "payload asset %s, required %s", p.Accepted.Asset, rq.Asset)
	}
	payTo, ok := ParseAddr(rq.PayTo)
	if !ok {
		return nil, Bad(ReasonRequirements, "payTo %q is not an address", rq.PayTo)
	}
	amountStr, valueReason := rq.Amount, ReasonValueV2
	if v == 1 {
		amountStr, valueReason = rq.MaxAmountRequired, ReasonValueV1
	}
	amount, ok := ParseUint256(amountStr)
	if !ok {
		return nil, Bad(ReasonRequirements, "required amount %q is not a decimal integer", amountStr)
	}

	a := p.Payload.Authorization
	c := &Checked{Asset: asset, Network: network}
	var okF, okT, okV, okA, okB bool
	c.From, okF = ParseAddr(a.From)
	c.To, okT = ParseAddr(a.To)
	c.Value, okV = ParseUint256(a.Value)
	c.ValidAfter, okA = ParseUint256(a.ValidAfter)
	c.ValidBefore, okB = ParseUint256(a.ValidBefore)
	if !okF || !okT || !okV || !okA || !okB {
		return nil, Bad(ReasonPayload, "authorization from/to must be addresses and value/validAfter/validBefore decimal integers")
	}
	nonce, err := hexutil.Decode(a.Nonce)
	if err != nil || len(nonce) != 32 {
		return nil, Bad(ReasonPayload, "authorization nonce must be 32 bytes of 0x-hex")
	}
	copy(c.Nonce[:], nonce)
	if c.Sig, err = hexutil.Decode(p.Payload.Signature); err != nil || len(c.Sig) == 0 {
		return nil, Bad(ReasonSignature, "signature is not 0x-hex")
	}
	if c.To != payTo {
		return nil, Bad(ReasonRecipient, "authorization to %s, payTo %s", c.To.Hex(), payTo.Hex())
	}
	if c.Value.Cmp(amount) != 0 {
		return nil, Bad(valueReason, "authorization value %s, required %s", c.Value, amount)
	}
	// The token's own rule: validAfter < block.timestamp < validBefore.
	nowU := big.NewInt(now.Unix())
	if c.ValidAfter.Cmp(nowU) >= 0 {
		return nil, Bad(ReasonValidAfter, "not valid before %s (now %s)", c.ValidAfter, nowU)
	}
	if nowU.Cmp(c.ValidBefore) >= 0 {
		return nil, Bad(ReasonValidBefore, "expired at %s (now %s)", c.ValidBefore, nowU)
	}
	if len(c.Sig) == 65 {
		signer, err := Recover(c, dom)
		if err != nil {
			return nil, Bad(ReasonSignature, "%v", err)
		}
		if signer != c.From {
			return nil, Bad(ReasonSignature, "signed by %s, authorization from %s", signer.Hex(), c.From.Hex())
		}
	}
	return c, nil
}

var (
	domainTypeHash = crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	twaTypeHash    = crypto.Keccak256([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
)

func word(b *big.Int) []byte { return common.LeftPadBytes(b.Bytes(), 32) }

// DomainSeparator is the token's EIP-712 domain separator.
func DomainSeparator(name, version string, chainID uint64, asset common.Address) []byte {
	return crypto.Keccak256(domainTypeHash, crypto.Keccak256([]byte(name)), crypto.Keccak256([]byte(version)),
		word(new(big.Int).SetUint64(chainID)), common.LeftPadBytes(asset.Bytes(), 32))
}

// Digest is the EIP-712 hash of a TransferWithAuthorization for the token
// at asset on chainID with the given domain name and version.
func Digest(name, version string, chainID uint64, asset, from, to common.Address, value, validAfter, validBefore *big.Int, nonce [32]byte) []byte {
	domain := DomainSeparator(name, version, chainID, asset)
	st := crypto.Keccak256(twaTypeHash, common.LeftPadBytes(from.Bytes(), 32), common.LeftPadBytes(to.Bytes(), 32),
		word(value), word(validAfter), word(validBefore), nonce[:])
	return crypto.Keccak256([]byte{0x19, 0x01}, domain, st)
}

// Recover returns the signer of a 65-byte r‖s‖v signature, enforcing what
// the token's ecrecover does: v ∈ {27, 28} and low s (ethparse.Recover).
func Recover(c *Checked, dom Domain) (common.Address, error) {
	d := Digest(dom.Name, dom.Version, dom.ChainID, c.Asset, c.From, c.To, c.Value, c.ValidAfter, c.ValidBefore, c.Nonce)
	return ethparse.Recover(d, c.Sig, ethparse.V27)
}
