package claim

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

var dom = Domain{ChainID: 137, Contract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")}

// manualDigest hashes the claim the way Solidity does, written out by hand so
// the apitypes-based Digest is checked against an independent construction.
func manualDigest(d Domain, c Claim) common.Hash {
	b32, _ := abi.NewType("bytes32", "", nil)
	u256, _ := abi.NewType("uint256", "", nil)
	addr, _ := abi.NewType("address", "", nil)
	domainType := crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	domEnc, _ := abi.Arguments{{Type: b32}, {Type: b32}, {Type: b32}, {Type: u256}, {Type: addr}}.Pack(
		domainType, crypto.Keccak256Hash([]byte(DomainName)), crypto.Keccak256Hash([]byte(DomainVersion)),
		new(big.Int).SetUint64(d.ChainID), d.Contract)
	claimType := crypto.Keccak256Hash([]byte("Claim(string nodeId,uint256 amount,uint256 deadline)"))
	msgEnc, _ := abi.Arguments{{Type: b32}, {Type: b32}, {Type: u256}, {Type: u256}}.Pack(
		claimType, crypto.Keccak256Hash([]byte(c.NodeID)), c.Amount.Big(), big.NewInt(c.Deadline))
	return crypto.Keccak256Hash([]byte("\x19\x01"), crypto.Keccak256(domEnc), crypto.Keccak256(msgEnc))
}

func TestDigestMatchesHandWrittenEIP712(t *testing.T) {
	for _, c := range []Claim{
		{NodeID: "NODE-EU-ABCDEFGH", Amount: 15, Deadline: 1_763_872_800},
		{NodeID: "node-éü-1", Amount: 1_000_000_000, Deadline: 1},
	} {
		got, err := Digest(dom, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := manualDigest(dom, c); got != want {
			t.Fatalf("digest %s, hand-written %s", got, want)
		}
	}
}

func TestSignRecover(t *testing.T) {
	key, _ := crypto.GenerateKey()
	s := NewSigner(key, dom)
	c := Claim{NodeID: "NODE-US-23456789", Amount: 150, Deadline: 2_000_000_000}
	sig, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
		t.Fatalf("sig shape: len %d v %d", len(sig), sig[64])
	}
	if err := Verify(dom, c, sig, s.Address()); err != nil {
		t.Fatal(err)
	}
	// Any change to the message, the domain or the signature yields another signer.
	other := []struct {
		d Domain
		c Claim
	}{
		{dom, Claim{NodeID: c.NodeID, Amount: 151, Deadline: c.Deadline}},
		{dom, Claim{NodeID: "NODE-US-23456780", Amount: 150, Deadline: c.Deadline}},
		{dom, Claim{NodeID: c.NodeID, Amount: 150, Deadline: c.Deadline + 1}},
		{Domain{ChainID: 80002, Contract: dom.Contract}, c},
		{Domain{ChainID: 137, Contract: common.HexToAddress("0x01")}, c},
	}
	for i, o := range other {
		if err := Verify(o.d, o.c, sig, s.Address()); err == nil {
			t.Errorf("case %d: signature verified for a different claim", i)
		}
	}
	if _, err := Recover(dom, c, sig[:64]); err == nil {
		t.Error("short signature accepted")
	}
	bad := append([]byte(nil), sig...)
	bad[64] = 30
	if _, err := Recover(dom, c, bad); err == nil {
		t.Error("bad v accepted")
	}
}

func TestRejectsEmpty(t *testing.T) {
	for _, c := range []Claim{{Amount: 1, Deadline: 1}, {NodeID: "n", Deadline: 1}, {NodeID: "n", Amount: 1}} {
		if _, err := Digest(dom, c); err == nil {
			t.Errorf("Digest(%+v) accepted", c)
		}
	}
	if _, err := Digest(Domain{ChainID: 137}, Claim{NodeID: "n", Amount: 1, Deadline: 1}); err == nil {
		t.Error("empty contract accepted")
	}
}
