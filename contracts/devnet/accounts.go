package devnet

import (
	"crypto/ecdsa"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
)

// Account is a development account. Its key is derived from a public string,
// so it is the same on every machine and must never hold real funds.
type Account struct {
	Name       string   `json:"name"`
	Address    string   `json:"address"`
	PrivateKey string   `json:"private_key"`
	Roles      []string `json:"roles,omitempty"`
}

// Key returns the account's private key.
func (a Account) Key() (*ecdsa.PrivateKey, error) {
	k, err := crypto.HexToECDSA(trim0x(a.PrivateKey))
	if err != nil {
		return nil, fmt.Errorf("devnet: key of %s: %w", a.Name, err)
	}
	return k, nil
}

// Addr returns the account's address.
func (a Account) Addr() common.Address { return common.HexToAddress(a.Address) }

func trim0x(s string) string {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// What each dev account is for. The roles mirror production's key
// separation (README, "Key management"). The accounts themselves (names,
// key derivation) are shared/devaccounts', which the gateway also uses to
// refuse them as money settings outside the dev profile.
var accountRoles = map[string][]string{
	"deployer":     {"RevenueVault owner", "ClaimsContract DEFAULT_ADMIN_ROLE"},
	"treasury":     {"receives RevenueVault deposits", "funds ClaimsContract in settlement"},
	"claim-signer": {"ClaimsContract CLAIM_CREATOR_ROLE (signs EIP-712 claims)"},
	"relayer":      {"ClaimsContract CLAIM_CREATOR_ROLE (sends createClaim/setNodeWallet)", "x402 facilitator on 8453"},
	"governor":     {"ClaimsContract GOVERNOR_ROLE"},
	"platform":     {"platform share wallet"},
	"pool":         {"pool share wallet"},
	"developer-1":  {"holds TestUSDT and TestUSDC"},
	"developer-2":  {"holds TestUSDT and TestUSDC"},
	"payer":        {"keyless x402 payer, holds TestUSDC"},
	"operator-1":   {"node operator wallet"},
	"operator-2":   {"node operator wallet"},
}

// DevKey derives the key of a named dev account.
func DevKey(name string) *ecdsa.PrivateKey { return devaccounts.Key(name) }

func devAccounts() []Account {
	out := make([]Account, 0, len(devaccounts.Names))
	for _, name := range devaccounts.Names {
		k := DevKey(name)
		out = append(out, Account{
			Name:       name,
			Address:    crypto.PubkeyToAddress(k.PublicKey).Hex(),
			PrivateKey: "0x" + common.Bytes2Hex(crypto.FromECDSA(k)),
			Roles:      accountRoles[name],
		})
	}
	return out
}
