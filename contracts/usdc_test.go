package contracts

import (
	"context"
	"crypto/rand"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
)

// usdcEnv is a chain 8453 with TestUSDC deployed and 10 USDC minted to payer.
type usdcEnv struct {
	t                               *testing.T
	chain                           *simchain.Chain
	deployer, payer, payee, relayer *account
	addr                            common.Address
	usdc                            *testusdc.TestUSDC
	c                               *bind.BoundContract
}

func newUSDCEnv(t *testing.T) *usdcEnv {
	t.Helper()
	e := &usdcEnv{t: t}
	e.deployer = newAccount(t, baseChainID)
	e.payer = newAccount(t, baseChainID)
	e.payee = newAccount(t, baseChainID)
	e.relayer = newAccount(t, baseChainID)
	e.chain = newChain(t, baseChainID, e.deployer, e.payer, e.payee, e.relayer)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, err := deploy.DeployUSDC(ctx, e.chain.Client(), e.deployer.opts, deploy.WithCommit(func() { e.chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	e.addr = addr
	e.usdc = testusdc.NewTestUSDC()
	e.c = e.usdc.Instance(e.chain.Client(), addr)
	mustSend(t, e.chain, e.deployer, e.c, e.usdc.PackMint(e.payer.addr, big.NewInt(10_000_000)))
	return e
}

func (e *usdcEnv) balance(a common.Address) *big.Int {
	return call(e.t, e.c, e.usdc.PackBalanceOf(a), e.usdc.UnpackBalanceOf)
}

// authorization is a signed EIP-3009 TransferWithAuthorization.
type authorization struct {
	from, to                  common.Address
	value, validAfter, before *big.Int
	nonce                     [32]byte
	sig                       []byte // R||S||V, V in {27,28}
}

func (e *usdcEnv) sign(value int64) authorization {
	a := authorization{
		from:       e.payer.addr,
		to:         e.payee.addr,
		value:      big.NewInt(value),
		validAfter: big.NewInt(0),
		before:     new(big.Int).SetUint64(latestTime(e.t, e.chain) + 600),
	}
	if _, err := rand.Read(a.nonce[:]); err != nil {
		e.t.Fatal(err)
	}
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"},
				{Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"},
				{Name: "verifyingContract", Type: "address"},
			},
			"TransferWithAuthorization": {
				{Name: "from", Type: "address"},
				{Name: "to", Type: "address"},
				{Name: "value", Type: "uint256"},
				{Name: "validAfter", Type: "uint256"},
				{Name: "validBefore", Type: "uint256"},
				{Name: "nonce", Type: "bytes32"},
			},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain: apitypes.TypedDataDomain{
			Name:              "USD Coin",
			Version:           "2",
			ChainId:           (*math.HexOrDecimal256)(big.NewInt(baseChainID)),
			VerifyingContract: e.addr.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"from":        a.from.Hex(),
			"to":          a.to.Hex(),
			"value":       a.value,
			"validAfter":  a.validAfter,
			"validBefore": a.before,
			"nonce":       a.nonce,
		},
	}
	a.sig, _ = signTyped(e.t, e.payer.key, td)
	return a
}

func (e *usdcEnv) packVRS(a authorization) []byte {
	var r, s [32]byte
	copy(r[:], a.sig[:32])
	copy(s[:], a.sig[32:64])
	return e.usdc.PackTransferWithAuthorization0(a.from, a.to, a.value, a.validAfter, a.before, a.nonce, a.sig[64], r, s)
}

func (e *usdcEnv) packBytes(a authorization) []byte {
	return e.usdc.PackTransferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.before, a.nonce, a.sig)
}

func (e *usdcEnv) assertTransferred(a authorization, payerBefore, payeeBefore *big.Int) {
	e.t.Helper()
	if d := new(big.Int).Sub(payerBefore, e.balance(e.payer.addr)); d.Cmp(a.value) != 0 {
		e.t.Fatalf("payer balance dropped by %v, want %v", d, a.value)
	}
	if d := new(big.Int).Sub(e.balance(e.payee.addr), payeeBefore); d.Cmp(a.value) != 0 {
		e.t.Fatalf("payee balance rose by %v, want %v", d, a.value)
	}
	if used := call(e.t, e.c, e.usdc.PackAuthorizationState(a.from, a.nonce), e.usdc.UnpackAuthorizationState); !used {
		e.t.Fatal("authorizationState is false after the transfer")
	}
}

func TestUSDCMetadata(t *testing.T) {
	e := newUSDCEnv(t)
	if v := call(t, e.c, e.usdc.PackName(), e.usdc.UnpackName); v != "USD Coin" {
		t.Fatalf("name %q", v)
	}
	if v := call(t, e.c, e.usdc.PackSymbol(), e.usdc.UnpackSymbol); v != "USDC" {
		t.Fatalf("symbol %q", v)
	}
	if v := call(t, e.c, e.usdc.PackDecimals(), e.usdc.UnpackDecimals); v != 6 {
		t.Fatalf("decimals %d", v)
	}
	if v := call(t, e.c, e.usdc.PackVersion(), e.usdc.UnpackVersion); v != "2" {
		t.Fatalf("version %q", v)
	}
	d := call(t, e.c, e.usdc.PackEip712Domain(), e.usdc.UnpackEip712Domain)
	if d.Name != "USD Coin" || d.Version != "2" || d.ChainId.Int64() != baseChainID || d.VerifyingContract != e.addr {
		t.Fatalf("eip712Domain %+v", d)
	}
}

func TestUSDCTransferWithAuthorizationVRS(t *testing.T) {
	e := newUSDCEnv(t)
	a := e.sign(1_500_000)
	payer, payee := e.balance(e.payer.addr), e.balance(e.payee.addr)
	mustSend(t, e.chain, e.relayer, e.c, e.packVRS(a))
	e.assertTransferred(a, payer, payee)
}

func TestUSDCTransferWithAuthorizationBytes(t *testing.T) {
	e := newUSDCEnv(t)
	a := e.sign(2_000_000)
	payer, payee := e.balance(e.payer.addr), e.balance(e.payee.addr)
	mustSend(t, e.chain, e.relayer, e.c, e.packBytes(a))
	e.assertTransferred(a, payer, payee)
}

func TestUSDCReplayedNonceRevertsUsedAuthorization(t *testing.T) {
	e := newUSDCEnv(t)
	a := e.sign(1_000_000)
	mustSend(t, e.chain, e.relayer, e.c, e.packBytes(a))
	for _, c := range []struct {
		name string
		data []byte
	}{{"bytes", e.packBytes(a)}, {"v,r,s", e.packVRS(a)}} {
		name := c.name
		_, err := send(t, e.chain, e.relayer, e.c, c.data)
		got := expectRevert[testusdc.TestUSDCERC3009UsedAuthorization](t, err, e.usdc.UnpackError)
		if got.Authorizer != e.payer.addr || got.Nonce != a.nonce {
			t.Fatalf("%s overload: ERC3009UsedAuthorization(%s, %x), want (%s, %x)", name, got.Authorizer, got.Nonce, e.payer.addr, a.nonce)
		}
	}
}

func TestUSDCTamperedAuthorizationRevertsInvalidSignature(t *testing.T) {
	e := newUSDCEnv(t)
	a := e.sign(1_000_000)
	a.value = big.NewInt(1_000_001)
	_, err := send(t, e.chain, e.relayer, e.c, e.packBytes(a))
	expectRevert[testusdc.TestUSDCERC3009InvalidSignature](t, err, e.usdc.UnpackError)
}
