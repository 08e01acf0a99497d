// Package accounts names the prepaid-credit accounts. An account is an API key's
// public id, "key_" followed by a 26-character ULID. On chain, RevenueVault's
// deposit(amount, account) carries the same id as ASCII in a bytes32 (30 bytes,
// right-padded with zeros), so a Deposited log names its account directly.
package accounts

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Prefix starts every account id.
const Prefix = "key_"

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid account id")

// NewID returns a fresh account id.
func NewID() string {
	return Prefix + ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// Validate checks the shape key_<ULID>.
func Validate(id string) error {
	rest, ok := strings.CutPrefix(id, Prefix)
	if !ok {
		return fmt.Errorf("%w: %q does not start with %q", ErrInvalid, id, Prefix)
	}
	if _, err := ulid.ParseStrict(rest); err != nil || rest != strings.ToUpper(rest) {
		return fmt.Errorf("%w: %q is not key_ followed by a ULID", ErrInvalid, id)
	}
	return nil
}

// ToBytes32 encodes a valid account id for RevenueVault.deposit.
func ToBytes32(id string) ([32]byte, error) {
	var b [32]byte
	if err := Validate(id); err != nil {
		return b, err
	}
	copy(b[:], id)
	return b, nil
}

// FromBytes32 decodes the account of a Deposited log. Anything that is not a
// valid id (a deposit made by hand with a wrong account) is reported, so the
// listener can park it for an operator instead of crediting a phantom account.
func FromBytes32(b [32]byte) (string, error) {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	for _, c := range b[n:] {
		if c != 0 {
			return "", fmt.Errorf("%w: bytes after the terminating zero", ErrInvalid)
		}
	}
	id := string(b[:n])
	if err := Validate(id); err != nil {
		return "", err
	}
	return id, nil
}
