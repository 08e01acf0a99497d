package claim_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestDigestEqualsContract proves the Go digest is the one ClaimsContract
// verifies, by asking the deployed contract's hashClaim on chain 137.
func TestDigestEqualsContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deployer, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(deployer.PublicKey)
	chain, err := simchain.New(simchain.Config{ChainID: 137, Alloc: types.GenesisAlloc{from: {Balance: new(big.Int).Lsh(common.Big1, 100)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	p, err := deploy.DeployPolygon(ctx, chain.Client(), bind.NewKeyedTransactor(deployer, chain.ChainID()),
		deploy.PolygonParams{Treasury: from, Governor: from, ClaimCreator: from, MinDeposit: common.Big1},
		deploy.WithCommit(func() { chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	cc := claimscontract.NewClaimsContract()
	inst := cc.Instance(chain.Client(), p.Claims)
	dom := claim.Domain{ChainID: 137, Contract: p.Claims}
	for _, c := range []claim.Claim{
		{NodeID: "NODE-EU-ABCDEFGH", Amount: 15, Deadline: time.Now().Unix() + claim.Validity},
		{NodeID: "node-éü-1", Amount: 9_000_000 * money.Scale, Deadline: 1},
	} {
		want, err := bind.Call(inst, &bind.CallOpts{Context: ctx}, cc.PackHashClaim(c.NodeID, c.Amount.Big(), big.NewInt(c.Deadline)), cc.UnpackHashClaim)
		if err != nil {
			t.Fatal(err)
		}
		got, err := claim.Digest(dom, c)
		if err != nil {
			t.Fatal(err)
		}
		if got != common.Hash(want) {
			t.Fatalf("%q: Go digest %s, contract %s", c.NodeID, got, common.Hash(want))
		}
	}
	// A different chain id gives a different digest than the contract's.
	other, _ := claim.Digest(claim.Domain{ChainID: 80002, Contract: p.Claims}, claim.Claim{NodeID: "n", Amount: 1, Deadline: 1})
	onchain, _ := bind.Call(inst, nil, cc.PackHashClaim("n", common.Big1, common.Big1), cc.UnpackHashClaim)
	if other == common.Hash(onchain) {
		t.Fatal("digest ignores the chain id")
	}
}
