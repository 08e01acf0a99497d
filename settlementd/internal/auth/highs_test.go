package auth

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestPersonalSignRefusesTheMalleableTwin: a login signature and its twin
// (same r, s' = N - s, v flipped) recover the same wallet; only the low-s
// one is taken, as everywhere else (shared/ethparse).
func TestPersonalSignRefusesTheMalleableTwin(t *testing.T) {
	key, _ := crypto.GenerateKey()
	msg := "tollgate login"
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	if a, err := VerifyPersonalSign(msg, sig); err != nil || a != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("the wallet's own signature: %v %v", a, err)
	}
	twin := append([]byte(nil), sig...)
	new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig[32:64])).FillBytes(twin[32:64])
	twin[64] = 55 - sig[64]
	if a, err := VerifyPersonalSign(msg, twin); err == nil {
		t.Fatalf("the high-s twin was taken as %s", a.Hex())
	}
}
