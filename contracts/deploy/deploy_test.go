package deploy

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
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
)

func setup(t *testing.T, chainID uint64) (*simchain.Chain, *bind.TransactOpts) {
	t.Helper()
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	chain, err := simchain.New(simchain.Config{
		ChainID: chainID,
		Alloc:   types.GenesisAlloc{from: {Balance: new(big.Int).Mul(big.NewInt(10), big.NewInt(1e18))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chain.Close() })
	return chain, bind.NewKeyedTransactor(key, new(big.Int).SetUint64(chainID))
}

var params = PolygonParams{
	Treasury:     common.HexToAddress("0x1000000000000000000000000000000000000001"),
	Governor:     common.HexToAddress("0x1000000000000000000000000000000000000002"),
	ClaimCreator: common.HexToAddress("0x1000000000000000000000000000000000000003"),
	MinDeposit:   big.NewInt(1_000_000),
}

// TestDeployPolygonAutoMined deploys on a chain mined by an AutoCommit loop (no commit option).
func TestDeployPolygonAutoMined(t *testing.T) {
	chain, opts := setup(t, 137)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go chain.AutoCommit(ctx, 20*time.Millisecond)
	p, err := DeployPolygon(ctx, chain.Client(), opts, params)
	if err != nil {
		t.Fatal(err)
	}
	vault := revenuevault.NewRevenueVault()
	vc := vault.Instance(chain.Client(), p.Vault)
	if got, err := bind.Call(vc, nil, vault.PackUsdt(), vault.UnpackUsdt); err != nil || got != p.USDT {
		t.Fatalf("vault.usdt() = %s, %v; want %s", got, err, p.USDT)
	}
	if got, err := bind.Call(vc, nil, vault.PackOwner(), vault.UnpackOwner); err != nil || got != opts.From {
		t.Fatalf("vault.owner() = %s, %v; want the deployer", got, err)
	}
	claims := claimscontract.NewClaimsContract()
	cc := claims.Instance(chain.Client(), p.Claims)
	if got, err := bind.Call(cc, nil, claims.PackToken(), claims.UnpackToken); err != nil || got != p.USDT {
		t.Fatalf("claims.token() = %s, %v; want %s", got, err, p.USDT)
	}
}

// TestDeployWithCommit deploys on a chain that only the commit option mines.
func TestDeployWithCommit(t *testing.T) {
	chain, opts := setup(t, 8453)
	commit := WithCommit(func() { chain.Commit() })
	usdc, err := DeployUSDC(context.Background(), chain.Client(), opts, commit)
	if err != nil {
		t.Fatal(err)
	}
	p := params
	p.USDT = usdc // reuse an existing token instead of deploying TestUSDT
	p.Admin = params.Governor
	got, err := DeployPolygon(context.Background(), chain.Client(), opts, p, commit)
	if err != nil {
		t.Fatal(err)
	}
	if got.USDT != usdc {
		t.Fatalf("USDT %s, want the existing %s", got.USDT, usdc)
	}
	vault := revenuevault.NewRevenueVault()
	if owner, err := bind.Call(vault.Instance(chain.Client(), got.Vault), nil, vault.PackOwner(), vault.UnpackOwner); err != nil || owner != p.Admin {
		t.Fatalf("owner %s, %v; want Admin %s", owner, err, p.Admin)
	}
}

func TestDeployPolygonValidatesParams(t *testing.T) {
	chain, opts := setup(t, 137)
	bad := params
	bad.MinDeposit = nil
	if _, err := DeployPolygon(context.Background(), chain.Client(), opts, bad); err == nil {
		t.Fatal("nil MinDeposit accepted")
	}
	bad = params
	bad.Treasury = common.Address{}
	if _, err := DeployPolygon(context.Background(), chain.Client(), opts, bad); err == nil {
		t.Fatal("zero treasury accepted")
	}
}
