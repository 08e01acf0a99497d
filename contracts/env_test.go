package contracts

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"

	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const (
	polygonChainID = 137
	baseChainID    = 8453
	minDeposit     = 1_000_000 // 1 USDT
)

// account is a funded test key with its transactor.
type account struct {
	key  *ecdsa.PrivateKey
	addr common.Address
	opts *bind.TransactOpts
}

func newAccount(t *testing.T, chainID uint64) *account {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &account{
		key:  key,
		addr: crypto.PubkeyToAddress(key.PublicKey),
		opts: bind.NewKeyedTransactor(key, new(big.Int).SetUint64(chainID)),
	}
}

// newChain starts a simulated chain funding every account with 100 ETH.
func newChain(t *testing.T, chainID uint64, accts ...*account) *simchain.Chain {
	t.Helper()
	alloc := types.GenesisAlloc{}
	for _, a := range accts {
		alloc[a.addr] = types.Account{Balance: new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))}
	}
	chain, err := simchain.New(simchain.Config{ChainID: chainID, Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chain.Close() })
	return chain
}

// polygonEnv is a chain 137 with the Polygon contracts deployed.
type polygonEnv struct {
	t     *testing.T
	chain *simchain.Chain

	deployer, treasury, governor, creator, node, other, user *account

	addrs  *deploy.Polygon
	usdt   *testusdt.TestUSDT
	vault  *revenuevault.RevenueVault
	claims *claimscontract.ClaimsContract

	usdtC, vaultC, claimsC *bind.BoundContract
}

func newPolygonEnv(t *testing.T) *polygonEnv {
	t.Helper()
	e := &polygonEnv{t: t}
	e.deployer = newAccount(t, polygonChainID)
	e.treasury = newAccount(t, polygonChainID)
	e.governor = newAccount(t, polygonChainID)
	e.creator = newAccount(t, polygonChainID)
	e.node = newAccount(t, polygonChainID)
	e.other = newAccount(t, polygonChainID)
	e.user = newAccount(t, polygonChainID)
	e.chain = newChain(t, polygonChainID, e.deployer, e.treasury, e.governor, e.creator, e.node, e.other, e.user)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addrs, err := deploy.DeployPolygon(ctx, e.chain.Client(), e.deployer.opts, deploy.PolygonParams{
		Treasury:     e.treasury.addr,
		Governor:     e.governor.addr,
		ClaimCreator: e.creator.addr,
		MinDeposit:   big.NewInt(minDeposit),
	}, deploy.WithCommit(func() { e.chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	e.addrs = addrs
	e.usdt = testusdt.NewTestUSDT()
	e.vault = revenuevault.NewRevenueVault()
	e.claims = claimscontract.NewClaimsContract()
	e.usdtC = e.usdt.Instance(e.chain.Client(), addrs.USDT)
	e.vaultC = e.vault.Instance(e.chain.Client(), addrs.Vault)
	e.claimsC = e.claims.Instance(e.chain.Client(), addrs.Claims)
	return e
}

// send transacts, commits and requires a successful receipt. A revert (detected at gas estimation)
// is returned as the error, for revert.Decode.
func send(t *testing.T, chain *simchain.Chain, from *account, c *bind.BoundContract, data []byte) (*types.Receipt, error) {
	t.Helper()
	tx, err := bind.Transact(c, from.opts, data)
	if err != nil {
		return nil, err
	}
	chain.Commit()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := deploy.WaitReceipt(ctx, chain.Client(), tx.Hash(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("transaction %s failed on chain (status %d)", tx.Hash(), r.Status)
	}
	return r, nil
}

// mustSend is send that fails the test on a revert.
func mustSend(t *testing.T, chain *simchain.Chain, from *account, c *bind.BoundContract, data []byte) *types.Receipt {
	t.Helper()
	r, err := send(t, chain, from, c, data)
	if err != nil {
		t.Fatalf("unexpected revert: %v (decoded: %s)", err, describeRevert(err))
	}
	return r
}

func describeRevert(err error) string {
	for _, u := range []revert.Unpacker{
		claimscontract.NewClaimsContract().UnpackError,
		revenuevault.NewRevenueVault().UnpackError,
		testusdt.NewTestUSDT().UnpackError,
	} {
		if v, derr := revert.Decode(err, u); derr == nil {
			return typeName(v)
		}
	}
	return "undecodable"
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// expectRevert asserts err is a revert decoding (via unpack) to *T and returns it.
func expectRevert[T any](t *testing.T, err error, unpack revert.Unpacker) *T {
	t.Helper()
	if err == nil {
		var zero T
		t.Fatalf("expected revert %T, but the transaction succeeded", zero)
	}
	v, derr := revert.Decode(err, unpack)
	if derr != nil {
		t.Fatalf("expected a decodable revert, got %v (decode: %v)", err, derr)
	}
	got, ok := v.(*T)
	if !ok {
		var zero T
		t.Fatalf("expected revert %T, got %s %+v", zero, typeName(v), v)
	}
	return got
}

func call[T any](t *testing.T, c *bind.BoundContract, data []byte, unpack func([]byte) (T, error)) T {
	t.Helper()
	v, err := bind.Call(c, nil, data, unpack)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *polygonEnv) usdtBalance(a common.Address) *big.Int {
	return call(e.t, e.usdtC, e.usdt.PackBalanceOf(a), e.usdt.UnpackBalanceOf)
}

func (e *polygonEnv) mintUSDT(to common.Address, amount int64) {
	mustSend(e.t, e.chain, e.deployer, e.usdtC, e.usdt.PackMint(to, big.NewInt(amount)))
}

// now returns the latest block's timestamp.
func (e *polygonEnv) now() uint64 { return latestTime(e.t, e.chain) }

func latestTime(t *testing.T, chain *simchain.Chain) uint64 {
	t.Helper()
	h, err := chain.Client().HeaderByNumber(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Time
}

// allocate funds the claims contract with amount, binds nodeID to wallet (if wallet is set) and
// raises the allocation to the cumulative amount.
func (e *polygonEnv) allocate(nodeID string, wallet *account, cumulative int64, fund int64) *big.Int {
	if fund > 0 {
		e.mintUSDT(e.addrs.Claims, fund)
	}
	if wallet != nil {
		mustSend(e.t, e.chain, e.creator, e.claimsC, e.claims.PackSetNodeWallet(nodeID, wallet.addr))
	}
	deadline := new(big.Int).SetUint64(e.now() + 3600)
	mustSend(e.t, e.chain, e.creator, e.claimsC, e.claims.PackCreateClaim(nodeID, big.NewInt(cumulative), deadline))
	return deadline
}

// signTyped signs EIP-712 typed data, returning R||S||V with V in {27, 28}, and the digest.
func signTyped(t *testing.T, key *ecdsa.PrivateKey, td apitypes.TypedData) ([]byte, []byte) {
	t.Helper()
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return sig, digest
}

// signClaim signs with the production signer (shared/claim), so every claim
// test also proves that signer against the contract.
func (e *polygonEnv) signClaim(key *ecdsa.PrivateKey, nodeID string, amount int64, deadline *big.Int) []byte {
	e.t.Helper()
	sig, err := claim.Sign(key, claim.Domain{ChainID: polygonChainID, Contract: e.addrs.Claims},
		claim.Claim{NodeID: nodeID, Amount: money.Units(amount), Deadline: deadline.Int64()})
	if err != nil {
		e.t.Fatal(err)
	}
	return sig
}
