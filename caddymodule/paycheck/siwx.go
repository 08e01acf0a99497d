package paycheck

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	gethaccounts "github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Sign-In-With-X (the x402 "sign-in-with-x" extension): every 402 offers a
// fresh EIP-4361 challenge; a wallet that already bought a bundle signs it
// (EIP-191) and sends it back in SIGN-IN-WITH-X instead of paying again.
// Like the x402 reference server, the gateway does not remember the nonces
// it hands out (that would cost a Redis write per 402): a message is
// accepted when it names our domain and origin, was issued at most
// siwxMaxAge ago, and its nonce has not been used — the nonce becomes used
// in the same script that draws the call, so one signed message buys one
// request.
const (
	SIWXExtension = "sign-in-with-x"
	siwxMaxAge    = 5 * time.Minute
	siwxSkew      = 30 * time.Second // clocks of clients and gateway differ a little
	// SIWXNonceTTL is how long a used nonce must be remembered: past it,
	// the message is too old anyway.
	SIWXNonceTTL  = siwxMaxAge + siwxSkew + time.Minute
	siwxStatement = "Sign in to use this wallet's Tollgate x402 bundle."
	siwxChain     = "eip155:8453"
	maxSIWXHeader = 8 << 10
	headerSIWX    = "SIGN-IN-WITH-X"
)

// siwxPayload is the SIGN-IN-WITH-X header's JSON (x402 extensions'
// SIWxPayload): the challenge's fields as signed, the address and the
// signature.
type siwxPayload struct {
	Domain          string   `json:"domain"`
	Address         string   `json:"address"`
	Statement       *string  `json:"statement,omitempty"`
	URI             string   `json:"uri"`
	Version         string   `json:"version"`
	ChainID         string   `json:"chainId"`
	Type            string   `json:"type"`
	Nonce           string   `json:"nonce"`
	IssuedAt        string   `json:"issuedAt"`
	ExpirationTime  string   `json:"expirationTime,omitempty"`
	NotBefore       string   `json:"notBefore,omitempty"`
	RequestID       *string  `json:"requestId,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	SignatureScheme string   `json:"signatureScheme,omitempty"`
	Signature       string   `json:"signature"`
}

var (
	siwxNonceRe = regexp.MustCompile(`^[A-Za-z0-9]{8,64}$`)
	// A field of the message must stay on its line: a newline would let a
	// signer smuggle lines into the text that is verified.
	siwxLineSafe = func(s string) bool { return !strings.ContainsAny(s, "\r\n") }
)

// siweMessage lays the payload out as EIP-4361 text, exactly as the x402
// client (@signinwithethereum/siwe's prepareMessage) builds what it signs.
func siweMessage(p *siwxPayload, addr common.Address, chainID uint64) string {
	var b strings.Builder
	b.WriteString(p.Domain + " wants you to sign in with your Ethereum account:\n")
	b.WriteString(addr.Hex() + "\n\n")
	// Present fields are written even when empty, as the x402 client's
	// SIWE library does (an empty statement still adds its line).
	if p.Statement != nil {
		b.WriteString(*p.Statement + "\n")
	}
	b.WriteString("\nURI: " + p.URI)
	b.WriteString("\nVersion: " + p.Version)
	b.WriteString("\nChain ID: " + strconv.FormatUint(chainID, 10))
	b.WriteString("\nNonce: " + p.Nonce)
	b.WriteString("\nIssued At: " + p.IssuedAt)
	if p.ExpirationTime != "" {
		b.WriteString("\nExpiration Time: " + p.ExpirationTime)
	}
	if p.NotBefore != "" {
		b.WriteString("\nNot Before: " + p.NotBefore)
	}
	if p.RequestID != nil {
		b.WriteString("\nRequest ID: " + *p.RequestID)
	}
	if p.Resources != nil {
		b.WriteString("\nResources:")
		for _, r := range p.Resources {
			b.WriteString("\n- " + r)
		}
	}
	return b.String()
}

// VerifySIWX checks a SIGN-IN-WITH-X header against the request's origin at
// now and returns the signer (lower-case hex) and the nonce. The error is a
// *Refusal with an invalid_siwx_* reason.
func VerifySIWX(value, base string, now time.Time) (wallet, nonce string, ref *Refusal) {
	wallet, nonce, _, ref = VerifySIWXIssued(value, base, now)
	return wallet, nonce, ref
}

// VerifySIWXIssued is VerifySIWX that also returns when the message says
// it was issued: a sign-in that lasts (a socket's, meter.SignInSIWX) is
// refused a message issued before its Redis was last rebuilt, since the
// nonces used before a loss are forgotten with it.
func VerifySIWXIssued(value, base string, now time.Time) (wallet, nonce string, issued time.Time, ref *Refusal) {
	b, err := DecodeBase64JSON(value, maxSIWXHeader)
	if err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_header", "%s: %v", headerSIWX, err)
	}
	var p siwxPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_header", "%s does not hold a SIWX payload: %v", headerSIWX, err)
	}
	origin, err := url.Parse(base)
	if err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_header", "the gateway's base URL does not parse")
	}
	for _, f := range append([]string{p.Domain, p.Address, deref(p.Statement), p.URI, p.Version, p.ChainID, p.Nonce, p.IssuedAt,
		p.ExpirationTime, p.NotBefore, deref(p.RequestID)}, p.Resources...) {
		if !siwxLineSafe(f) {
			return "", "", time.Time{}, Refuse("invalid_siwx_header", "a field holds a line break")
		}
	}
	switch {
	case p.Domain != origin.Host:
		return "", "", time.Time{}, Refuse("invalid_siwx_domain_mismatch", "domain %q; this gateway is %q", p.Domain, origin.Host)
	case !sameOrigin(p.URI, origin):
		return "", "", time.Time{}, Refuse("invalid_siwx_uri_mismatch", "uri %q is not on %s://%s", p.URI, origin.Scheme, origin.Host)
	case p.Version != "1":
		return "", "", time.Time{}, Refuse("invalid_siwx_version", "version %q; want 1", p.Version)
	case p.ChainID != siwxChain:
		return "", "", time.Time{}, Refuse("invalid_siwx_chain_id", "chainId %q; sign in on %s", p.ChainID, siwxChain)
	case p.Type != "eip191" || (p.SignatureScheme != "" && p.SignatureScheme != "eip191"):
		return "", "", time.Time{}, Refuse("invalid_siwx_signature_scheme", "type %q scheme %q; only EIP-191 signatures of externally owned accounts are accepted", p.Type, p.SignatureScheme)
	case !siwxNonceRe.MatchString(p.Nonce):
		return "", "", time.Time{}, Refuse("invalid_siwx_nonce", "the nonce must be 8 to 64 letters and digits")
	}
	// The one address reader: 0x and 40 hex digits, a mixed-case spelling
	// with its right EIP-55 checksum (as settlementd's SIWE login reads
	// its address line).
	addr, err := ethparse.Address(p.Address)
	if err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_address", "address %q is not a 0x address with a right EIP-55 checksum", p.Address)
	}
	issued, err = time.Parse(time.RFC3339Nano, p.IssuedAt)
	if err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_issued_at", "issuedAt %q is not an RFC 3339 time", p.IssuedAt)
	}
	if age := now.Sub(issued); age > siwxMaxAge {
		return "", "", time.Time{}, Refuse("invalid_siwx_issued_at_too_old", "issued %s ago; a message is good for %s", age.Truncate(time.Second), siwxMaxAge)
	} else if age < -siwxSkew {
		return "", "", time.Time{}, Refuse("invalid_siwx_issued_at_in_future", "issuedAt is in the future")
	}
	if p.ExpirationTime != "" {
		exp, err := time.Parse(time.RFC3339Nano, p.ExpirationTime)
		if err != nil {
			return "", "", time.Time{}, Refuse("invalid_siwx_expiration_time", "expirationTime %q is not an RFC 3339 time", p.ExpirationTime)
		}
		if !now.Before(exp) {
			return "", "", time.Time{}, Refuse("invalid_siwx_expired", "the message expired at %s", p.ExpirationTime)
		}
	}
	if p.NotBefore != "" {
		nb, err := time.Parse(time.RFC3339Nano, p.NotBefore)
		if err != nil {
			return "", "", time.Time{}, Refuse("invalid_siwx_not_before", "notBefore %q is not an RFC 3339 time", p.NotBefore)
		}
		if now.Before(nb) {
			return "", "", time.Time{}, Refuse("invalid_siwx_not_yet_valid", "the message is valid from %s", p.NotBefore)
		}
	}
	signer, err := personalSigner(siweMessage(&p, addr, ChainID), p.Signature)
	if err != nil {
		return "", "", time.Time{}, Refuse("invalid_siwx_signature", "%v", err)
	}
	if signer != addr {
		return "", "", time.Time{}, Refuse("invalid_siwx_signature", "the signature is not %s's", addr.Hex())
	}
	return strings.ToLower(addr.Hex()), p.Nonce, issued, nil
}

func sameOrigin(raw string, origin *url.URL) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == origin.Scheme && u.Host == origin.Host
}

// personalSigner recovers the EIP-191 (personal_sign) signer of msg from a
// 65-byte r‖s‖v signature: v ∈ {0, 1, 27, 28} (wallets write either) and
// low s (ethparse.Recover with VAny, as settlementd's SIWE login).
func personalSigner(msg, sigHex string) (common.Address, error) {
	sig, err := hexutil.Decode(sigHex)
	if err != nil || len(sig) != 65 {
		return common.Address{}, errors.New("the signature must be 65 bytes of 0x-hex")
	}
	return ethparse.Recover(gethaccounts.TextHash([]byte(msg)), sig, ethparse.VAny)
}

// SIWXChallenge is the extension's entry in a 402: a fresh challenge for
// the resource and the chains a signature may name.
func SIWXChallenge(base, resource string, now time.Time) map[string]any {
	var n [16]byte
	_, _ = rand.Read(n[:])
	u, _ := url.Parse(base)
	host := ""
	if u != nil {
		host = u.Host
	}
	const ts = "2006-01-02T15:04:05.000Z07:00"
	return map[string]any{
		"info": map[string]any{
			"domain": host, "uri": resource, "version": "1", "nonce": hex.EncodeToString(n[:]),
			"issuedAt": now.UTC().Format(ts), "expirationTime": now.Add(siwxMaxAge).UTC().Format(ts),
			"statement": siwxStatement, "resources": []string{resource},
		},
		"supportedChains": []map[string]string{{"chainId": siwxChain, "type": "eip191"}},
		"schema":          siwxSchema,
	}
}

// siwxSchema describes the SIGN-IN-WITH-X payload (JSON Schema 2020-12).
var siwxSchema = func() map[string]any {
	str := map[string]any{"type": "string"}
	props := map[string]any{}
	for _, f := range []string{"domain", "address", "statement", "uri", "version", "chainId", "type", "nonce",
		"issuedAt", "expirationTime", "notBefore", "requestId", "signature"} {
		props[f] = str
	}
	props["resources"] = map[string]any{"type": "array", "items": str}
	return map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props,
		"required": []string{"domain", "address", "uri", "version", "chainId", "type", "nonce", "issuedAt", "signature"},
	}
}()

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
