package chain

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

func TestSignerNeverPrintsTheKey(t *testing.T) {
	key := devnet.DevKey("treasury")
	hexKey := common.Bytes2Hex(crypto.FromECDSA(key))
	s, err := ParseSigner("treasury", "0x"+hexKey)
	if err != nil {
		t.Fatal(err)
	}
	if s.Address() != crypto.PubkeyToAddress(key.PublicKey) || s.Role() != "treasury" {
		t.Fatalf("signer %s", s)
	}
	core, logs := observer.New(zap.DebugLevel)
	zap.New(core).Info("x", zap.Any("signer", s), zap.Stringer("s", s), zap.Reflect("r", s))
	var b bytes.Buffer
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		fmt.Fprintf(&b, f+"\n", s)
		fmt.Fprintf(&b, f+"\n", *s)
	}
	fmt.Fprintf(&b, "%v\n", logs.All()[0].ContextMap())
	out := strings.ToLower(b.String())
	if strings.Contains(out, hexKey) || strings.Contains(out, key.D.String()) {
		t.Fatalf("key leaked:\n%s", b.String())
	}
	for _, bad := range []string{"", "0x", "zz" + hexKey[2:], hexKey[:60]} {
		_, err := ParseSigner("treasury", bad)
		if err == nil || (bad != "" && bad != "0x" && strings.Contains(err.Error(), bad)) {
			t.Fatalf("ParseSigner(%q): %v", bad, err)
		}
	}
	if got := Redact("https://user:pw@polygon-mainnet.g.alchemy.com/v2/SECRETKEY?x=1"); got != "https://polygon-mainnet.g.alchemy.com" {
		t.Fatalf("Redact = %q", got)
	}
}

// simEnv is chain 137 sealed by hand, with the contracts, and a Sender.
type simEnv struct {
	t       *testing.T
	ctx     context.Context
	c       *simchain.Chain
	claims  *claimscontract.ClaimsContract
	claimsA common.Address
	relayer *Signer
	sender  *Sender
}

func newSimEnv(t *testing.T) *simEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	alloc := types.GenesisAlloc{}
	for _, n := range []string{"deployer", "relayer", "governor"} {
		alloc[crypto.PubkeyToAddress(devnet.DevKey(n).PublicKey)] = types.Account{Balance: new(big.Int).Mul(big.NewInt(1e6), big.NewInt(1e18))}
	}
	c, err := simchain.New(simchain.Config{ChainID: 137, Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	addr := func(n string) common.Address { return crypto.PubkeyToAddress(devnet.DevKey(n).PublicKey) }
	poly, err := deploy.DeployPolygon(ctx, c.Client(), bind.NewKeyedTransactor(devnet.DevKey("deployer"), c.ChainID()), deploy.PolygonParams{
		Treasury: addr("deployer"), Governor: addr("governor"), ClaimCreator: addr("relayer"), MinDeposit: big.NewInt(1),
	}, deploy.WithCommit(func() { c.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	_, pool := settletest.DB(t)
	e := &simEnv{t: t, ctx: ctx, c: c, claims: claimscontract.NewClaimsContract(), claimsA: poly.Claims,
		relayer: NewSigner("relayer", devnet.DevKey("relayer"))}
	if e.sender, err = NewSender(SenderConfig{Pool: pool, Client: c.Client(), ChainID: 137, PollInterval: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *simEnv) intent(purpose, node string) Intent {
	return Intent{Purpose: purpose, Kind: KindCreateClaim, To: e.claimsA, NodeID: node, Unpack: e.claims.UnpackError,
		Data: e.claims.PackCreateClaim(node, big.NewInt(1_000_000), big.NewInt(time.Now().Add(time.Hour).Unix()))}
}

// send transacts from key outside the Sender (another user of the key, or an admin).
func (e *simEnv) send(key *ecdsa.PrivateKey, data []byte, nonce *uint64, tip int64) *types.Transaction {
	e.t.Helper()
	opts := bind.NewKeyedTransactor(key, e.c.ChainID())
	opts.Context = e.ctx
	if nonce != nil {
		opts.Nonce = new(big.Int).SetUint64(*nonce)
	}
	if tip > 0 {
		opts.GasTipCap, opts.GasFeeCap = big.NewInt(tip), big.NewInt(3*tip)
	}
	tx, err := bind.Transact(e.claims.Instance(e.c.Client(), e.claimsA), opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	return tx
}

func (e *simEnv) rows(purpose string) int64 {
	return settletest.Count(e.t, e.sender.cfg.Pool, `SELECT count(*) FROM chain_txs WHERE purpose = $1`, purpose)
}

// A recorded transaction whose nonce another transaction took is a
// conflict: flagged for an operator, and never replaced by a new build.
func TestNonceTakenByAnotherTransactionIsAConflict(t *testing.T) {
	e := newSimEnv(t)
	crash := errors.New("crash before broadcast")
	e.sender.SetHooks(Hooks{AfterCommit: func(*Tx) error { return crash }})
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-EU-AAAAAAAA:1000000", "NODE-EU-AAAAAAAA"))
	if !errors.Is(err, crash) || tx == nil || tx.State != StateSigned {
		t.Fatalf("Submit: %v %+v", err, tx)
	}
	e.sender.SetHooks(Hooks{})
	// Someone else uses the relayer key at that nonce.
	other := e.send(devnet.DevKey("relayer"), e.claims.PackSetNodeWallet("NODE-EU-AAAAAAAA", common.HexToAddress("0x1")), &tx.Nonce, 0)
	e.c.Commit()
	if err := e.sender.ResolvePending(e.ctx); err != nil {
		t.Fatal(err)
	}
	last, err := e.sender.Last(e.ctx, tx.Purpose)
	if err != nil || last.State != StateConflict || last.Hash != tx.Hash || last.Hash == other.Hash() {
		t.Fatalf("after resolve: %+v %v", last, err)
	}
	if _, err := e.sender.Submit(e.ctx, e.relayer, e.intent(tx.Purpose, "NODE-EU-AAAAAAAA")); !errors.Is(err, ErrConflict) {
		t.Fatalf("Submit after a conflict: %v", err)
	}
	if n := e.rows(tx.Purpose); n != 1 {
		t.Fatalf("%d rows for the purpose, want 1", n)
	}
}

// A transaction that reverts on chain proves it did nothing, so the
// purpose may be retried with a new transaction, up to MaxAttempts.
func TestRevertedTransactionIsRetriedUpToMaxAttempts(t *testing.T) {
	e := newSimEnv(t)
	purpose := "alloc:NODE-US-BBBBBBBB:1000000"
	first, err := e.sender.Submit(e.ctx, e.relayer, e.intent(purpose, "NODE-US-BBBBBBBB"))
	if err != nil {
		t.Fatal(err)
	}
	// Before it is mined, the admin revokes the relayer's role (a higher
	// tip puts the revocation first in the block): the createClaim reverts.
	role := crypto.Keccak256Hash([]byte("CLAIM_CREATOR_ROLE"))
	e.send(devnet.DevKey("deployer"), e.claims.PackRevokeRole(role, e.relayer.Address()), nil, 100e9)
	e.c.Commit()
	if ok, err := e.sender.Await(e.ctx, []*Tx{first}, 5*time.Second); err != nil || !ok || first.State != StateFailed {
		t.Fatalf("first attempt: %v %v %s", ok, err, first.State)
	}

	strict, _ := NewSender(SenderConfig{Pool: e.sender.cfg.Pool, Client: e.c.Client(), ChainID: 137, MaxAttempts: 1})
	if _, err := strict.Submit(e.ctx, e.relayer, e.intent(purpose, "NODE-US-BBBBBBBB")); !errors.Is(err, ErrGaveUp) {
		t.Fatalf("MaxAttempts 1: %v", err)
	}
	// Without the role the retry would revert: estimation refuses to build it.
	if _, err := e.sender.Submit(e.ctx, e.relayer, e.intent(purpose, "NODE-US-BBBBBBBB")); err == nil ||
		!strings.Contains(err.Error(), "AccessControlUnauthorizedAccount") {
		t.Fatalf("retry without the role: %v", err)
	}
	e.send(devnet.DevKey("deployer"), e.claims.PackGrantRole(role, e.relayer.Address()), nil, 0)
	e.c.Commit()
	second, err := e.sender.Submit(e.ctx, e.relayer, e.intent(purpose, "NODE-US-BBBBBBBB"))
	if err != nil || second.Hash == first.Hash || second.Nonce != first.Nonce+1 {
		t.Fatalf("retry: %+v %v", second, err)
	}
	e.c.Commit()
	if ok, err := e.sender.Await(e.ctx, []*Tx{second}, 5*time.Second); err != nil || !ok || second.State != StateMined {
		t.Fatalf("second attempt: %v %v %s", ok, err, second.State)
	}
	// Mined: the purpose is done; Submit returns it and builds nothing.
	again, err := e.sender.Submit(e.ctx, e.relayer, e.intent(purpose, "NODE-US-BBBBBBBB"))
	if err != nil || again.ID != second.ID || e.rows(purpose) != 2 {
		t.Fatalf("after success: %+v %v, %d rows", again, err, e.rows(purpose))
	}
}
