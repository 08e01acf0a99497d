package devaccounts

import (
	"strings"
	"testing"
)

// The one money-address rule, as every setting that receives money reads
// it: the gateway's payments, settlementd's x402 offer and its chain jobs.
func TestMoneyAddress(t *testing.T) {
	usdt := "0xc2132D05D31c914a87C6611C10748AEb04B58e8F" // Polygon USDT
	treasury := Address("treasury").Hex()
	for _, c := range []struct {
		v    string
		dev  bool
		want string // "" accepted
	}{
		{usdt, false, ""},
		{strings.ToLower(usdt), false, "is not in its EIP-55 checksummed form"},
		{strings.ToLower(usdt), true, ""}, // the dev profile takes any spelling
		{strings.Replace(usdt, "D05D", "D05d", 1), true, "is not in its EIP-55 checksummed form"},
		{"0x1234", true, `"0x1234" is not an address`},
		{"0x0000000000000000000000000000000000000000", true, "is the zero address"},
		{treasury, false, "is the dev chain's treasury, whose key is public"},
		{treasury, true, ""},
	} {
		_, err := MoneyAddress(c.v, c.dev)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (dev %v): refused: %v", c.v, c.dev, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (dev %v): %v, want %q", c.v, c.dev, err, c.want)
		case err != nil && strings.Contains(err.Error(), usdt) && c.v != usdt:
			t.Errorf("%s: the error names the checksummed spelling, blessing a typo: %v", c.v, err)
		}
	}
}
