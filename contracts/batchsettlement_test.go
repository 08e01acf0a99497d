package contracts

import (
	"context"
	"crypto/rand"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
)

// bsEnv is chain 8453 with BatchSettlement and its ERC-3009 collector in the genesis state at
// their fixed addresses (as on the dev chain), TestUSDC deployed and 10 USDC minted to payer.
type bsEnv struct {
	t                                         *testing.T
	chain                                     *simchain.Chain
	deployer, payer, receiver, authz, relayer *account
	usdcAddr                                  common.Address
	usdc                                      *testusdc.TestUSDC
	usdcC                                     *bind.BoundContract
	bs                                        *batchsettlement.BatchSettlement
	bsC                                       *bind.BoundContract
	dom                                       batchsettle.Domain
}

func newBSEnv(t *testing.T) *bsEnv {
	t.Helper()
	e := &bsEnv{t: t}
	e.deployer = newAccount(t, baseChainID)
	e.payer = newAccount(t, baseChainID)
	e.receiver = newAccount(t, baseChainID)
	e.authz = newAccount(t, baseChainID)
	e.relayer = newAccount(t, baseChainID)
	alloc, err := deploy.BatchSettlementAlloc()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*account{e.deployer, e.payer, e.receiver, e.authz, e.relayer} {
		alloc[a.addr] = types.Account{Balance: new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))}
	}
	e.chain, err = simchain.New(simchain.Config{ChainID: baseChainID, Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.chain.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.usdcAddr, err = deploy.DeployUSDC(ctx, e.chain.Client(), e.deployer.opts, deploy.WithCommit(func() { e.chain.Commit() })); err != nil {
		t.Fatal(err)
	}
	e.usdc = testusdc.NewTestUSDC()
	e.usdcC = e.usdc.Instance(e.chain.Client(), e.usdcAddr)
	e.bs = batchsettlement.NewBatchSettlement()
	e.bsC = e.bs.Instance(e.chain.Client(), batchsettle.SettlementAddress)
	e.dom = batchsettle.DefaultDomain(baseChainID)
	mustSend(t, e.chain, e.deployer, e.usdcC, e.usdc.PackMint(e.payer.addr, big.NewInt(10_000_000)))
	return e
}

func (e *bsEnv) config() batchsettle.Config {
	return batchsettle.Config{Payer: e.payer.addr, PayerAuthorizer: e.payer.addr, Receiver: e.receiver.addr,
		ReceiverAuthorizer: e.authz.addr, Token: e.usdcAddr, WithdrawDelay: 900}
}

func onchainConfig(c batchsettle.Config) batchsettlement.BatchSettlementChannelConfig {
	return batchsettlement.BatchSettlementChannelConfig{Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver,
		ReceiverAuthorizer: c.ReceiverAuthorizer, Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt}
}

func (e *bsEnv) usdcBalance(a common.Address) int64 {
	return call(e.t, e.usdcC, e.usdc.PackBalanceOf(a), e.usdc.UnpackBalanceOf).Int64()
}

func (e *bsEnv) channel(id common.Hash) (balance, claimed int64) {
	ch := call(e.t, e.bsC, e.bs.PackChannels(id), e.bs.UnpackChannels)
	return ch.Balance.Int64(), ch.TotalClaimed.Int64()
}

// depositData signs the payer's ReceiveWithAuthorization to the collector for channel id and
// returns deposit() calldata; bindTo, when set, is the channel the nonce is derived from instead.
func (e *bsEnv) depositData(cfg batchsettle.Config, amount int64, bindTo *common.Hash) []byte {
	e.t.Helper()
	id := e.dom.ChannelID(cfg)
	if bindTo != nil {
		id = *bindTo
	}
	var saltB [32]byte
	if _, err := rand.Read(saltB[:]); err != nil {
		e.t.Fatal(err)
	}
	salt := new(big.Int).SetBytes(saltB[:])
	validBefore := new(big.Int).SetUint64(latestTime(e.t, e.chain) + 600)
	nonce := batchsettle.DepositNonce(id, salt)
	sig := e.signReceive(batchsettle.ERC3009CollectorAddress, big.NewInt(amount), validBefore, nonce)
	data, err := batchsettle.CollectorData(big.NewInt(0), validBefore, salt, sig)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.bs.PackDeposit(onchainConfig(cfg), big.NewInt(amount), batchsettle.ERC3009CollectorAddress, data)
}

// signReceive signs TestUSDC's EIP-3009 ReceiveWithAuthorization from the payer.
func (e *bsEnv) signReceive(to common.Address, value, validBefore *big.Int, nonce common.Hash) []byte {
	typeHash := crypto.Keccak256([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	w := func(b []byte) []byte { return common.LeftPadBytes(b, 32) }
	structHash := crypto.Keccak256(typeHash, w(e.payer.addr[:]), w(to[:]), w(value.Bytes()), w(nil), w(validBefore.Bytes()), nonce[:])
	domHash := crypto.Keccak256(crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")),
		crypto.Keccak256([]byte("USD Coin")), crypto.Keccak256([]byte("2")), w(big.NewInt(baseChainID).Bytes()), w(e.usdcAddr[:]))
	sig, err := batchsettle.Sign(crypto.Keccak256Hash([]byte{0x19, 0x01}, domHash, structHash), e.payer.key)
	if err != nil {
		e.t.Fatal(err)
	}
	return sig
}

func (e *bsEnv) voucher(cfg batchsettle.Config, max int64) []byte {
	sig, err := batchsettle.Sign(e.dom.VoucherDigest(e.dom.ChannelID(cfg), big.NewInt(max)), e.payer.key)
	if err != nil {
		e.t.Fatal(err)
	}
	return sig
}

type claimRow struct {
	cfg          batchsettle.Config
	max, claimed int64
	sig          []byte
}

func (e *bsEnv) claimData(rows []claimRow, signer *account) []byte {
	e.t.Helper()
	var vc []batchsettlement.BatchSettlementVoucherClaim
	var entries []batchsettle.ClaimEntry
	for _, r := range rows {
		vc = append(vc, batchsettlement.BatchSettlementVoucherClaim{
			Voucher:      batchsettlement.BatchSettlementVoucher{Channel: onchainConfig(r.cfg), MaxClaimableAmount: big.NewInt(r.max)},
			Signature:    r.sig,
			TotalClaimed: big.NewInt(r.claimed),
		})
		entries = append(entries, batchsettle.ClaimEntry{ChannelID: e.dom.ChannelID(r.cfg), MaxClaimable: big.NewInt(r.max), TotalClaimed: big.NewInt(r.claimed)})
	}
	sig, err := batchsettle.Sign(e.dom.ClaimBatchDigest(entries), signer.key)
	if err != nil {
		e.t.Fatal(err)
	}
	if got := call(e.t, e.bsC, e.bs.PackGetClaimBatchDigest(vc), e.bs.UnpackGetClaimBatchDigest); common.Hash(got) != e.dom.ClaimBatchDigest(entries) {
		e.t.Fatalf("getClaimBatchDigest %x, Go computes %x", got, e.dom.ClaimBatchDigest(entries))
	}
	return e.bs.PackClaimWithSignature(vc, sig)
}

// The EIP-712 arithmetic in shared/batchsettle (used by the gateway and the facilitator) is the
// contract's: channel id, voucher and refund digests agree.
func TestBatchSettlementDigestsMatchGo(t *testing.T) {
	e := newBSEnv(t)
	cfg := e.config()
	cfg.Salt = common.HexToHash("0x1234")
	id := call(t, e.bsC, e.bs.PackGetChannelId(onchainConfig(cfg)), e.bs.UnpackGetChannelId)
	if common.Hash(id) != e.dom.ChannelID(cfg) {
		t.Fatalf("getChannelId %x, Go computes %x", id, e.dom.ChannelID(cfg))
	}
	vd := call(t, e.bsC, e.bs.PackGetVoucherDigest(id, big.NewInt(777)), e.bs.UnpackGetVoucherDigest)
	if common.Hash(vd) != e.dom.VoucherDigest(id, big.NewInt(777)) {
		t.Fatal("voucher digest differs")
	}
	rd := call(t, e.bsC, e.bs.PackGetRefundDigest(id, big.NewInt(3), big.NewInt(55)), e.bs.UnpackGetRefundDigest)
	if common.Hash(rd) != e.dom.RefundDigest(id, big.NewInt(3), big.NewInt(55)) {
		t.Fatal("refund digest differs")
	}
	// A different chain id gives a different channel id: the id is chain-bound.
	if batchsettle.DefaultDomain(84532).ChannelID(cfg) == e.dom.ChannelID(cfg) {
		t.Fatal("channel id does not depend on the chain")
	}
}

// Deposit, claim in a batch, settle: the receiver gets exactly what was claimed, and the escrow
// left over goes back to the payer by a signed refund.
func TestBatchSettlementDepositClaimSettleRefund(t *testing.T) {
	e := newBSEnv(t)
	cfg := e.config()
	id := e.dom.ChannelID(cfg)
	payer0 := e.usdcBalance(e.payer.addr)

	mustSend(t, e.chain, e.relayer, e.bsC, e.depositData(cfg, 500_000, nil))
	if b, c := e.channel(id); b != 500_000 || c != 0 {
		t.Fatalf("after deposit channel = (%d, %d), want (500000, 0)", b, c)
	}
	if got := e.usdcBalance(batchsettle.SettlementAddress); got != 500_000 {
		t.Fatalf("contract holds %d", got)
	}
	if got := e.usdcBalance(e.payer.addr); got != payer0-500_000 {
		t.Fatalf("payer has %d, want %d", got, payer0-500_000)
	}

	// A second channel of the same payer (another salt) in the same claim batch.
	cfg2 := cfg
	cfg2.Salt = common.HexToHash("0x02")
	mustSend(t, e.chain, e.relayer, e.bsC, e.depositData(cfg2, 100_000, nil))

	// Claims: the latest voucher of each channel, relayed by anyone with the authorizer's signature.
	rows := []claimRow{{cfg, 3000, 3000, e.voucher(cfg, 3000)}, {cfg2, 40, 40, e.voucher(cfg2, 40)}}
	mustSend(t, e.chain, e.relayer, e.bsC, e.claimData(rows, e.authz))
	if _, c := e.channel(id); c != 3000 {
		t.Fatalf("totalClaimed %d, want 3000", c)
	}
	// The same batch again is a no-op (idempotent); a lower voucher is refused.
	mustSend(t, e.chain, e.relayer, e.bsC, e.claimData(rows, e.authz))
	_, err := send(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 2000, 2000, e.voucher(cfg, 2000)}}, e.authz))
	expectRevert[batchsettlement.BatchSettlementClaimBelowClaimed](t, err, e.bs.UnpackError)

	// settle sweeps both channels' claims to the receiver in one transfer.
	recv0 := e.usdcBalance(e.receiver.addr)
	mustSend(t, e.chain, e.relayer, e.bsC, e.bs.PackSettle(e.receiver.addr, e.usdcAddr))
	if got := e.usdcBalance(e.receiver.addr) - recv0; got != 3040 {
		t.Fatalf("receiver got %d, want 3040", got)
	}
	mustSend(t, e.chain, e.relayer, e.bsC, e.bs.PackSettle(e.receiver.addr, e.usdcAddr))
	if got := e.usdcBalance(e.receiver.addr) - recv0; got != 3040 {
		t.Fatalf("a second settle paid again: receiver got %d", got)
	}
	tot := call(t, e.bsC, e.bs.PackReceivers(e.receiver.addr, e.usdcAddr), e.bs.UnpackReceivers)
	if tot.TotalClaimed.Int64() != 3040 || tot.TotalSettled.Int64() != 3040 {
		t.Fatalf("receivers = %+v", tot)
	}

	// Signed refund of everything unclaimed: the payer gets 497000 back; the nonce advances and the
	// same signature cannot be used twice.
	nonce := big.NewInt(0)
	rsig, _ := batchsettle.Sign(e.dom.RefundDigest(id, nonce, big.NewInt(1_000_000)), e.authz.key)
	payer1 := e.usdcBalance(e.payer.addr)
	mustSend(t, e.chain, e.relayer, e.bsC, e.bs.PackRefundWithSignature(onchainConfig(cfg), big.NewInt(1_000_000), nonce, rsig))
	if got := e.usdcBalance(e.payer.addr) - payer1; got != 497_000 {
		t.Fatalf("refund paid %d, want 497000 (capped at the unclaimed escrow)", got)
	}
	if b, c := e.channel(id); b != 3000 || c != 3000 {
		t.Fatalf("after refund channel = (%d, %d), want (3000, 3000)", b, c)
	}
	_, err = send(t, e.chain, e.relayer, e.bsC, e.bs.PackRefundWithSignature(onchainConfig(cfg), big.NewInt(1_000_000), nonce, rsig))
	expectRevert[batchsettlement.BatchSettlementWrongRefundNonce](t, err, e.bs.UnpackError)
	// Every unit is accounted for: what the payer lost is what the receiver got plus cfg2's escrow.
	if lost := payer0 - e.usdcBalance(e.payer.addr); lost != 3040+(100_000-40) {
		t.Fatalf("payer lost %d", lost)
	}
}

func TestBatchSettlementRefusals(t *testing.T) {
	e := newBSEnv(t)
	cfg := e.config()
	id := e.dom.ChannelID(cfg)
	mustSend(t, e.chain, e.relayer, e.bsC, e.depositData(cfg, 10_000, nil))

	// An authorization signed for another channel cannot fund this one.
	other := common.HexToHash("0xbeef")
	_, err := send(t, e.chain, e.relayer, e.bsC, e.depositData(cfg, 10_000, &other))
	if err == nil {
		t.Fatal("a deposit authorization bound to another channel was accepted")
	}
	// Over the balance, over the voucher, a voucher not signed by the payer authorizer, a batch not
	// signed by the receiver authorizer: all refused.
	_, err = send(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 10_001, 10_001, e.voucher(cfg, 10_001)}}, e.authz))
	expectRevert[batchsettlement.BatchSettlementClaimAboveBalance](t, err, e.bs.UnpackError)
	_, err = send(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 100, 101, e.voucher(cfg, 100)}}, e.authz))
	expectRevert[batchsettlement.BatchSettlementClaimAboveVoucher](t, err, e.bs.UnpackError)
	forged, _ := batchsettle.Sign(e.dom.VoucherDigest(id, big.NewInt(100)), e.receiver.key)
	_, err = send(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 100, 100, forged}}, e.authz))
	expectRevert[batchsettlement.BatchSettlementInvalidVoucherSignature](t, err, e.bs.UnpackError)
	_, err = send(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 100, 100, e.voucher(cfg, 100)}}, e.relayer))
	expectRevert[batchsettlement.BatchSettlementInvalidAuthorizerSignature](t, err, e.bs.UnpackError)
	// A withdraw delay outside 15 min .. 30 days is refused at deposit.
	bad := cfg
	bad.WithdrawDelay = 60
	_, err = send(t, e.chain, e.relayer, e.bsC, e.depositData(bad, 1, nil))
	expectRevert[batchsettlement.BatchSettlementWithdrawDelayOutOfRange](t, err, e.bs.UnpackError)
	if b, c := e.channel(id); b != 10_000 || c != 0 {
		t.Fatalf("refusals changed the channel: (%d, %d)", b, c)
	}
}

// The payer's escape hatch: a timed withdrawal completes only after the delay, and what the
// receiver claimed in the meantime stays claimed.
func TestBatchSettlementTimedWithdrawal(t *testing.T) {
	e := newBSEnv(t)
	cfg := e.config()
	id := e.dom.ChannelID(cfg)
	mustSend(t, e.chain, e.relayer, e.bsC, e.depositData(cfg, 10_000, nil))
	_, err := send(t, e.chain, e.relayer, e.bsC, e.bs.PackInitiateWithdraw(onchainConfig(cfg), big.NewInt(10_000)))
	expectRevert[batchsettlement.BatchSettlementNotPayerSide](t, err, e.bs.UnpackError)
	mustSend(t, e.chain, e.payer, e.bsC, e.bs.PackInitiateWithdraw(onchainConfig(cfg), big.NewInt(10_000)))
	_, err = send(t, e.chain, e.payer, e.bsC, e.bs.PackFinalizeWithdraw(onchainConfig(cfg)))
	expectRevert[batchsettlement.BatchSettlementWithdrawDelayNotElapsed](t, err, e.bs.UnpackError)
	// The receiver claims 2500 during the grace period.
	mustSend(t, e.chain, e.relayer, e.bsC, e.claimData([]claimRow{{cfg, 2500, 2500, e.voucher(cfg, 2500)}}, e.authz))
	if err := e.chain.AdjustTime(901 * time.Second); err != nil {
		t.Fatal(err)
	}
	p0 := e.usdcBalance(e.payer.addr)
	mustSend(t, e.chain, e.payer, e.bsC, e.bs.PackFinalizeWithdraw(onchainConfig(cfg)))
	if got := e.usdcBalance(e.payer.addr) - p0; got != 7500 {
		t.Fatalf("withdrawal paid %d, want 7500 (capped at the unclaimed escrow)", got)
	}
	if b, c := e.channel(id); b != 2500 || c != 2500 {
		t.Fatalf("channel = (%d, %d)", b, c)
	}
}

// multicall batches claim and settle in one transaction, as a facilitator does.
func TestBatchSettlementMulticallClaimAndSettle(t *testing.T) {
	e := newBSEnv(t)
	cfg := e.config()
	mustSend(t, e.chain, e.relayer, e.bsC, e.depositData(cfg, 10_000, nil))
	claimCall := e.claimData([]claimRow{{cfg, 1234, 1234, e.voucher(cfg, 1234)}}, e.authz)
	r0 := e.usdcBalance(e.receiver.addr)
	mustSend(t, e.chain, e.relayer, e.bsC, e.bs.PackMulticall([][]byte{claimCall, e.bs.PackSettle(e.receiver.addr, e.usdcAddr)}))
	if got := e.usdcBalance(e.receiver.addr) - r0; got != 1234 {
		t.Fatalf("receiver got %d, want 1234", got)
	}
}
