// Package money holds Tollgate's only representation of an amount: an integer
// count of base units with 6 decimals (1 USDT = 1,000,000 units). Floats never
// touch an amount; decimal text is parsed and printed digit by digit.
package money

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Decimals is the number of decimals of USDT and USDC, and of every amount.
const Decimals = 6

// Scale is the number of base units in one whole token.
const Scale Units = 1_000_000

// Prices and bundle sizes fixed by the specification.
const (
	PricePerCall      Units = 30      // 0.00003 USDT per RPC or metered call
	BundlePrice       Units = 100_000 // 0.1 USDC buys one x402 bundle
	BundleCalls             = 1_000   // calls in one bundle
	BundleCallRevenue Units = BundlePrice / BundleCalls
)

// Units is an amount in base units. int64 holds 9.2e12 whole tokens, far more
// than any balance; conversions from chain values check for overflow.
type Units int64

// ErrInvalid is wrapped by every parse error so callers can map it to a 400.
var ErrInvalid = errors.New("invalid amount")

// Parse reads a non-negative decimal amount of whole tokens ("0.00003", "12",
// "1.5") into base units. It rejects signs, exponents, NaN/Inf, spaces, more
// than 6 decimals, empty parts ("1.", ".5") and values that overflow.
func Parse(s string) (Units, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrInvalid)
	}
	if len(s) > 32 {
		return 0, fmt.Errorf("%w: too long", ErrInvalid)
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") {
		return 0, fmt.Errorf("%w: %q is not a decimal number", ErrInvalid, s)
	}
	if !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%w: %q is not a non-negative decimal number", ErrInvalid, s)
	}
	if len(frac) > Decimals {
		return 0, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalid, s, Decimals)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/int64(Scale) {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalid, s)
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", Decimals-len(frac)), 10, 64)
	}
	u := w*int64(Scale) + f
	if u < 0 {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalid, s)
	}
	return Units(u), nil
}

// ParseUnits reads a raw base-unit count ("30") as sent in *_units/amount_raw fields.
func ParseUnits(s string) (Units, error) {
	if s == "" || len(s) > 19 || !digits(s) {
		return 0, fmt.Errorf("%w: %q is not a non-negative integer of base units", ErrInvalid, s)
	}
	u, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalid, s)
	}
	return Units(u), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FromBig converts an on-chain uint256 amount, refusing negatives and overflow.
func FromBig(b *big.Int) (Units, error) {
	if b == nil || b.Sign() < 0 || !b.IsInt64() {
		return 0, fmt.Errorf("%w: %v out of range", ErrInvalid, b)
	}
	return Units(b.Int64()), nil
}

// Big returns the amount as a *big.Int for contract calls.
func (u Units) Big() *big.Int { return big.NewInt(int64(u)) }

// Decimal renders the amount as a decimal string of whole tokens with no
// trailing zeros: 30 → "0.00003", 1_500_000 → "1.5", 0 → "0".
func (u Units) Decimal() string {
	neg := u < 0
	v := uint64(u)
	if neg {
		v = uint64(-u) // two's complement handles MinInt64 correctly as uint64
	}
	whole, frac := v/uint64(Scale), v%uint64(Scale)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(strconv.FormatUint(whole, 10))
	if frac != 0 {
		fs := strconv.FormatUint(frac+uint64(Scale), 10)[1:] // zero-padded to 6 digits
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(fs, "0"))
	}
	return b.String()
}

// String renders the raw base-unit count, the form of *_units and amount_raw fields.
func (u Units) String() string { return strconv.FormatInt(int64(u), 10) }

// USDT is an amount that marshals to JSON as an exact decimal number of whole
// tokens (the original specification's "decimal USDT" number fields such as claimable_usdt).
type USDT Units

// MarshalJSON writes the decimal digits as a JSON number literal, never via float64.
func (d USDT) MarshalJSON() ([]byte, error) { return []byte(Units(d).Decimal()), nil }

// UnmarshalJSON accepts a JSON number or string in decimal token notation.
func (d *USDT) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	u, err := Parse(s)
	if err != nil {
		return err
	}
	*d = USDT(u)
	return nil
}

// Split divides an epoch total T into the 50/30/20 shares:
// operators = floor(T/2), platform = floor(3T/10), pool = the rest, so the
// three always sum to T exactly.
func Split(total Units) (operators, platform, pool Units) {
	if total <= 0 {
		return 0, 0, 0
	}
	operators = total / 2
	platform = total/10*3 + total%10*3/10
	pool = total - operators - platform
	return operators, platform, pool
}
