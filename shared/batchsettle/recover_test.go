package batchsettle

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestRecoverTakesWhatTheContractTakes: a voucher signature is taken only
// as BatchSettlement.sol's ECDSA.tryRecover takes it — v 27 or 28, low s —
// so the gateway never serves calls against a voucher it cannot claim.
func TestRecoverTakesWhatTheContractTakes(t *testing.T) {
	key, _ := crypto.GenerateKey()
	digest := common.BytesToHash(crypto.Keccak256([]byte("voucher")))
	sig, err := Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := Recover(digest, sig); err != nil || a != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("the payer's own voucher: %v %v", a, err)
	}
	v01 := append([]byte(nil), sig...)
	v01[64] -= 27
	if _, err := Recover(digest, v01); err == nil {
		t.Fatal("v 0/1 taken: the contract's ecrecover refuses it")
	}
	twin := append([]byte(nil), sig...)
	new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig[32:64])).FillBytes(twin[32:64])
	twin[64] = 55 - sig[64]
	if _, err := Recover(digest, twin); err == nil {
		t.Fatal("the high-s twin taken: OpenZeppelin's ECDSA refuses it")
	}
}
