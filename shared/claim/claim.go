// Package claim builds, signs and verifies the EIP-712 Claim that
// ClaimsContract checks before paying a node operator:
//
//	Claim(string nodeId,uint256 amount,uint256 deadline)
//	domain: name "TollgateClaims", version "1", chainId, verifyingContract
//
// settlementd signs with a CLAIM_CREATOR_ROLE key; the console and tests use
// Recover to show who signed. The amount is the node's cumulative allocation,
// so a signature can never pay more than the contract has allocated.
package claim

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Domain constants; they must match ClaimsContract's EIP712 constructor.
const (
	DomainName    = "TollgateClaims"
	DomainVersion = "1"
	// Validity is how long a claim signature stays valid (48 hours).
	Validity = 172800
)

// Domain identifies the contract a claim is for.
type Domain struct {
	ChainID  uint64
	Contract common.Address
}

// Claim is the signed message.
type Claim struct {
	NodeID   string
	Amount   money.Units // cumulative base units the node may have been paid after this claim
	Deadline int64       // unix seconds
}

// TypedData returns the EIP-712 structure in the exact field order and types
// OpenZeppelin hashes; a reordered or retyped field silently changes the digest.
func TypedData(d Domain, c Claim) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"},
				{Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"},
				{Name: "verifyingContract", Type: "address"},
			},
			"Claim": {
				{Name: "nodeId", Type: "string"},
				{Name: "amount", Type: "uint256"},
				{Name: "deadline", Type: "uint256"},
			},
		},
		PrimaryType: "Claim",
		Domain: apitypes.TypedDataDomain{
			Name:              DomainName,
			Version:           DomainVersion,
			ChainId:           (*math.HexOrDecimal256)(new(big.Int).SetUint64(d.ChainID)),
			VerifyingContract: d.Contract.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"nodeId":   c.NodeID,
			"amount":   c.Amount.Big(),
			"deadline": big.NewInt(c.Deadline),
		},
	}
}

func (c Claim) check() error {
	switch {
	case c.NodeID == "":
		return errors.New("claim: empty node id")
	case c.Amount <= 0:
		return errors.New("claim: amount must be positive")
	case c.Deadline <= 0:
		return errors.New("claim: deadline missing")
	}
	return nil
}

// Digest is the 32-byte hash that is signed (ClaimsContract.hashClaim).
func Digest(d Domain, c Claim) (common.Hash, error) {
	if err := c.check(); err != nil {
		return common.Hash{}, err
	}
	if d.ChainID == 0 || d.Contract == (common.Address{}) {
		return common.Hash{}, errors.New("claim: domain needs a chain id and a contract")
	}
	h, _, err := apitypes.TypedDataAndHash(TypedData(d, c))
	if err != nil {
		return common.Hash{}, fmt.Errorf("claim: hash typed data: %w", err)
	}
	return common.BytesToHash(h), nil
}

// Sign returns the 65-byte R‖S‖V signature with V in {27, 28}, the form
// OpenZeppelin's ECDSA.recover and wallets use.
func Sign(key *ecdsa.PrivateKey, d Domain, c Claim) ([]byte, error) {
	h, err := Digest(d, c)
	if err != nil {
		return nil, err
	}
	sig, err := crypto.Sign(h[:], key)
	if err != nil {
		return nil, fmt.Errorf("claim: sign: %w", err)
	}
	sig[64] += 27
	return sig, nil
}

// Recover returns the address that signed the claim: 65 bytes, v in
// {27, 28} and low s, as ClaimsContract's ECDSA.recover (OpenZeppelin, the
// ecrecover precompile) requires (ethparse.Recover; a high-s twin and a v
// of 0 or 1 were accepted here before, and refused by the contract).
func Recover(d Domain, c Claim, sig []byte) (common.Address, error) {
	h, err := Digest(d, c)
	if err != nil {
		return common.Address{}, err
	}
	a, err := ethparse.Recover(h[:], sig, ethparse.V27)
	if err != nil {
		return common.Address{}, fmt.Errorf("claim: %w", err)
	}
	return a, nil
}

// Signer signs claims for one contract with one CLAIM_CREATOR_ROLE key.
type Signer struct {
	key    *ecdsa.PrivateKey
	domain Domain
}

// NewSigner binds a key to a contract.
func NewSigner(key *ecdsa.PrivateKey, d Domain) *Signer { return &Signer{key: key, domain: d} }

// Address is the signer's address; it must hold CLAIM_CREATOR_ROLE on chain.
func (s *Signer) Address() common.Address { return crypto.PubkeyToAddress(s.key.PublicKey) }

// Domain returns the contract the signer signs for.
func (s *Signer) Domain() Domain { return s.domain }

// Sign signs c.
func (s *Signer) Sign(c Claim) ([]byte, error) { return Sign(s.key, s.domain, c) }

// Verify reports whether sig over c was made by want.
func Verify(d Domain, c Claim, sig []byte, want common.Address) error {
	got, err := Recover(d, c, sig)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("claim: signed by %s, want %s", got.Hex(), want.Hex())
	}
	return nil
}
