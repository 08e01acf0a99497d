// Package devaccounts derives the dev chains' accounts. Their keys come from
// a public string, so anyone can sign for them: the gateway refuses every
// address derived here (and every contract they deploy) as a money setting
// unless the dev profile is on. contracts/devnet builds its accounts from
// the same derivation, so the refusal cannot drift from the dev chain.
package devaccounts

import (
	"crypto/ecdsa"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Names are the dev accounts, in the order the dev chain lists them.
var Names = []string{
	"deployer", "treasury", "claim-signer", "relayer", "governor", "platform", "pool",
	"developer-1", "developer-2", "payer", "operator-1", "operator-2",
}

// Key derives the key of a named dev account.
func Key(name string) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("tollgate devchain account " + name)))
	if err != nil { // a keccak output is a valid key with overwhelming probability
		panic(err)
	}
	return k
}

// Address is the address of a named dev account.
func Address(name string) common.Address { return crypto.PubkeyToAddress(Key(name).PublicKey) }

// CreateNonces is how many CREATE addresses of each account count as dev
// contracts: the dev chain's deployment uses the first few of the
// deployer's nonces; tests deploy more, never hundreds.
const CreateNonces = 256

var known = sync.OnceValue(func() map[common.Address]string {
	m := make(map[common.Address]string, len(Names)*(CreateNonces+1))
	for _, n := range Names {
		a := Address(n)
		m[a] = n
		for nonce := uint64(0); nonce < CreateNonces; nonce++ {
			m[crypto.CreateAddress(a, nonce)] = n + "'s contract"
		}
	}
	return m
})

// Lookup says whether a is a dev account or a contract one of them
// created (with one of its first CreateNonces nonces), and which.
func Lookup(a common.Address) (what string, ok bool) {
	what, ok = known()[a]
	return what, ok
}
