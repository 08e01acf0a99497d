package devaccounts

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// MoneyAddress is the one rule for an address that receives or holds money
// (a vault, a token, a payee, a wallet), for the gateway and settlementd
// alike: an address, never the zero address (money sent there is burnt, in
// the dev profile too), and outside the dev profile (dev false) written in
// its EIP-55 checksummed form and not a dev chain account or one of their
// contracts (their keys are public, and the dev chains reuse real chain
// ids). The error reads after the setting's name ("usdt_address " + err).
// The checksummed form is never printed: if v has a typo, its checksum
// would bless the typo (ethparse's own error names it, so it is not
// passed on).
func MoneyAddress(v string, dev bool) (common.Address, error) {
	a, err := ethparse.Address(v)
	if err != nil {
		if _, lower := ethparse.Address(strings.ToLower(v)); lower == nil {
			return common.Address{}, errNotChecksummed(v)
		}
		return common.Address{}, fmt.Errorf("%q is not an address", v)
	}
	if a == (common.Address{}) {
		return a, errors.New("is the zero address")
	}
	if dev {
		return a, nil
	}
	if v != a.Hex() {
		return a, errNotChecksummed(v)
	}
	if what, ok := Lookup(a); ok {
		return a, fmt.Errorf("%s is the dev chain's %s, whose key is public: "+
			"only the dev profile (dev on, or TOLLGATE_DEV=1) accepts it", v, what)
	}
	return a, nil
}

func errNotChecksummed(v string) error {
	return fmt.Errorf("%q is not in its EIP-55 checksummed form: copy the address from its source again", v)
}
