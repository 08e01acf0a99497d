// Package ethparse is the one place the gateway and settlementd read the
// three Ethereum concepts strangers hand them: quantities (block numbers,
// amounts in hex), addresses and signatures. Each is read by one function
// over go-ethereum's own implementation (hexutil, common, crypto), with
// one rule, so that two checks of the same value can never disagree (a
// block number one check reads and another skips, an address one check
// takes and another refuses, a signature one path accepts with a high s).
// TestOneParserPerConcept (architecture_test.go) keeps every other
// package from parsing them itself.
package ethparse

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// Quantity reads a JSON-RPC quantity ("0x" then hex digits) that must fit
// 64 bits. Leading zeros are accepted, however many: geth refuses them but
// other clients (Erigon, Nethermind, Besu) read "0x00ff" as 255, so the
// gateway must read the same number they will, never skip a value it
// cannot read (a padded fromBlock once skipped max_block_range). The value
// is then decoded by hexutil.DecodeUint64.
func Quantity(s string) (uint64, error) {
	if len(s) > 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2] != '0' || len(s) == 3 {
		return hexutil.DecodeUint64(s) // the usual spelling: no copy (the cache keys every call's quantities)
	}
	digits, err := quantityDigits(s)
	if err != nil {
		return 0, err
	}
	return hexutil.DecodeUint64("0x" + digits)
}

// CanonicalQuantity reads a quantity in its one canonical spelling only:
// lowercase "0x", no leading zeros, at most 64 bits (hexutil.DecodeUint64's
// rules, which are geth's). It is for judging a node's answer, where a
// padded or respelled number is not the same answer as the provider's;
// a caller's input is read with Quantity.
func CanonicalQuantity(s string) (uint64, error) {
	if len(s) < 2 || s[1] != 'x' {
		return 0, fmt.Errorf("quantity %q: want 0x and hex digits", printable(s))
	}
	return hexutil.DecodeUint64(s)
}

// BigQuantity is Quantity for a value of any size (hexutil.DecodeBig's
// 256-bit bound).
func BigQuantity(s string) (*big.Int, error) {
	digits, err := quantityDigits(s)
	if err != nil {
		return nil, err
	}
	return hexutil.DecodeBig("0x" + digits)
}

// quantityDigits checks the prefix and returns the digits without their
// leading zeros ("0" for zero). The digits are not checked here: hexutil
// refuses anything that is not hex.
func quantityDigits(s string) (string, error) {
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return "", fmt.Errorf("quantity %q: want 0x and hex digits", printable(s))
	}
	d := strings.TrimLeft(s[2:], "0")
	if d == "" {
		d = "0"
	}
	return d, nil
}

// Uint reads a number a person or a tool wrote: a quantity ("0x…", as
// Quantity) or a decimal integer, within 256 bits and not negative.
func Uint(s string) (*big.Int, error) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return BigQuantity(s)
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return nil, fmt.Errorf("number %q: want decimal digits or 0x and hex digits", printable(s))
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.BitLen() > 256 {
		return nil, fmt.Errorf("number %q: over 256 bits", printable(s))
	}
	return n, nil
}

// Address reads an address: "0x" and 40 hex digits. All-lowercase (or
// all-uppercase) digits are taken as they are; mixed case is an EIP-55
// checksum and must be the right one, so a mistyped address is refused
// rather than paid.
func Address(s string) (common.Address, error) {
	if len(s) != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("address %q: want 0x and 40 hex digits", printable(s))
	}
	a := common.HexToAddress(s)
	body := s[2:]
	if body != strings.ToLower(body) && body != strings.ToUpper(body) && a.Hex()[2:] != body {
		// The right spelling is not printed: it is the checksum of what was
		// typed, so copying it from the error would carry a typo past the
		// check.
		return common.Address{}, fmt.Errorf("address %s: bad EIP-55 checksum: copy the address from its source again", s)
	}
	return a, nil
}

// ChecksumAddress reads an address that must be written with its EIP-55
// checksum, exactly: where an operator names who receives money, an
// address without its checksum is refused.
func ChecksumAddress(s string) (common.Address, error) {
	a, err := Address(s)
	if err != nil {
		return a, err
	}
	if a.Hex() != s {
		return common.Address{}, fmt.Errorf("address %s: not EIP-55 checksummed: copy the address, with its checksum, from its source again", s)
	}
	return a, nil
}

// VRule is which recovery ids a signature may carry.
type VRule int

const (
	// VAny: 0, 1, 27 or 28 (what wallets produce; OpenZeppelin's ECDSA
	// accepts 27/28 and callers normalise 0/1).
	VAny VRule = iota
	// V27: only 27 or 28, as ecrecover in a token contract (EIP-3009's
	// transferWithAuthorization) requires.
	V27
)

// ErrSignature is wrapped by every refusal of Recover.
var ErrSignature = errors.New("bad signature")

// Recover returns the address that signed hash with sig, a 65-byte r‖s‖v
// signature: v by rule, r and s in range and s in the lower half of the
// curve order (as every contract we verify against, via OpenZeppelin's
// ECDSA, and as EIP-2 require), so that a signature and its malleable twin
// are never both accepted. crypto.SigToPub does the recovery.
func Recover(hash []byte, sig []byte, rule VRule) (common.Address, error) {
	if len(hash) != 32 {
		return common.Address{}, fmt.Errorf("%w: the hash is %d bytes, want 32", ErrSignature, len(hash))
	}
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, fmt.Errorf("%w: %d bytes, want 65", ErrSignature, len(sig))
	}
	v := sig[64]
	switch {
	case v == 27 || v == 28:
		v -= 27
	case rule == VAny && (v == 0 || v == 1):
	default:
		return common.Address{}, fmt.Errorf("%w: v is %d", ErrSignature, sig[64])
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) { // homestead: s ≤ N/2
		return common.Address{}, fmt.Errorf("%w: r or s out of range (s must be in the lower half)", ErrSignature)
	}
	rsv := make([]byte, crypto.SignatureLength)
	copy(rsv, sig[:64])
	rsv[64] = v
	pub, err := crypto.SigToPub(hash, rsv)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// printable bounds a stranger's value in an error message.
func printable(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// PrivateKey reads a secp256k1 private key written as 64 hex digits, with
// or without 0x (operators paste both) and surrounding space. The error
// never repeats the value: it is a secret.
func PrivateKey(s string) (*ecdsa.PrivateKey, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	k, err := crypto.HexToECDSA(s)
	if err != nil {
		return nil, errors.New("not a secp256k1 private key (64 hex digits)")
	}
	return k, nil
}
