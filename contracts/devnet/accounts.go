package devnet

import (
	"crypto/ecdsa"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
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

// The dev accounts and what each one is for. The roles mirror production's
// key separation (README, "Key management").
var accountRoles = []struct {
	name  string
	roles []string
}{
	{"deployer", []string{"RevenueVault owner", "ClaimsContract DEFAULT_ADMIN_ROLE"}},
	{"treasury", []string{"receives RevenueVault deposits", "funds ClaimsContract in settlement"}},
	{"claim-signer", []string{"ClaimsContract CLAIM_CREATOR_ROLE (signs EIP-712 claims)"}},
	{"relayer", []string{"ClaimsContract CLAIM_CREATOR_ROLE (sends createClaim/setNodeWallet)", "x402 facilitator on 8453"}},
	{"governor", []string{"ClaimsContract GOVERNOR_ROLE"}},
	{"platform", []string{"platform share wallet"}},
	{"pool", []string{"pool share wallet"}},
	{"developer-1", []string{"holds TestUSDT and TestUSDC"}},
	{"developer-2", []string{"holds TestUSDT and TestUSDC"}},
	{"payer", []string{"keyless x402 payer, holds TestUSDC"}},
	{"operator-1", []string{"node operator wallet"}},
	{"operator-2", []string{"node operator wallet"}},
}

// DevKey derives the key of a named dev account.
func DevKey(name string) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("tollgate devchain account " + name)))
	if err != nil { // a keccak output is a valid key with overwhelming probability
		panic(err)
	}
	return k
}

func devAccounts() []Account {
	out := make([]Account, 0, len(accountRoles))
	for _, a := range accountRoles {
		k := DevKey(a.name)
		out = append(out, Account{
			Name:       a.name,
			Address:    crypto.PubkeyToAddress(k.PublicKey).Hex(),
			PrivateKey: "0x" + common.Bytes2Hex(crypto.FromECDSA(k)),
			Roles:      a.roles,
		})
	}
	return out
}
