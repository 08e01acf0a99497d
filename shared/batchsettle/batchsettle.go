// Package batchsettle is the x402 `batch-settlement` scheme's EIP-712 arithmetic, shared by the
// gateway (vouchers checked on the hot path without a chain call), settlementd's facilitator
// (claim batches signed by the receiver authorizer) and the tests: the channel id of a
// ChannelConfig, the Voucher, ClaimBatch and Refund digests, and the ERC-3009 deposit nonce. They
// must equal what contracts/src/BatchSettlement.sol computes (its tests compare them) and what the
// official @x402/evm client signs.
//
// Domain: name "x402 Batch Settlement", version "1", the chain id, and the contract's address.
package batchsettle

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Scheme is the x402 scheme name.
const Scheme = "batch-settlement"

// Fixed addresses of the scheme's contracts (the same on every chain).
var (
	SettlementAddress       = common.HexToAddress("0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003")
	ERC3009CollectorAddress = common.HexToAddress("0x4020806089470a89826cB9fB1f4059150b550004")
)

// Withdraw delay bounds the contract enforces, in seconds.
const (
	MinWithdrawDelay = 900
	MaxWithdrawDelay = 2_592_000
)

var (
	domainTypeHash = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	nameHash       = crypto.Keccak256Hash([]byte("x402 Batch Settlement"))
	versionHash    = crypto.Keccak256Hash([]byte("1"))

	channelConfigTypeHash = crypto.Keccak256Hash([]byte("ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"))
	voucherTypeHash       = crypto.Keccak256Hash([]byte("Voucher(bytes32 channelId,uint128 maxClaimableAmount)"))
	refundTypeHash        = crypto.Keccak256Hash([]byte("Refund(bytes32 channelId,uint256 nonce,uint128 amount)"))
	claimEntryTypeHash    = crypto.Keccak256Hash([]byte("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"))
	claimBatchTypeHash    = crypto.Keccak256Hash([]byte("ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"))
)

// Config is the immutable channel configuration; its EIP-712 hash is the channel id.
type Config struct {
	Payer              common.Address
	PayerAuthorizer    common.Address // zero: the payer signs vouchers itself (possibly ERC-1271)
	Receiver           common.Address
	ReceiverAuthorizer common.Address
	Token              common.Address
	WithdrawDelay      uint64 // uint40 on chain
	Salt               common.Hash
}

// Domain is the EIP-712 domain: a chain and the BatchSettlement contract on it.
type Domain struct {
	ChainID  uint64
	Contract common.Address
}

// DefaultDomain is the domain of the contract at its fixed address on chainID.
func DefaultDomain(chainID uint64) Domain {
	return Domain{ChainID: chainID, Contract: SettlementAddress}
}

func word(b []byte) []byte { return common.LeftPadBytes(b, 32) }

func uintWord(v *big.Int) []byte {
	if v == nil {
		v = new(big.Int)
	}
	return word(v.Bytes())
}

// Separator is the EIP-712 domain separator.
func (d Domain) Separator() common.Hash {
	return crypto.Keccak256Hash(domainTypeHash[:], nameHash[:], versionHash[:],
		uintWord(new(big.Int).SetUint64(d.ChainID)), word(d.Contract[:]))
}

func (d Domain) typed(structHash common.Hash) common.Hash {
	sep := d.Separator()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], structHash[:])
}

// ChannelID is the channel id of cfg on d.
func (d Domain) ChannelID(cfg Config) common.Hash {
	s := crypto.Keccak256Hash(channelConfigTypeHash[:], word(cfg.Payer[:]), word(cfg.PayerAuthorizer[:]),
		word(cfg.Receiver[:]), word(cfg.ReceiverAuthorizer[:]), word(cfg.Token[:]),
		uintWord(new(big.Int).SetUint64(cfg.WithdrawDelay)), cfg.Salt[:])
	return d.typed(s)
}

// VoucherDigest is what the payer authorizer signs for a cumulative ceiling.
func (d Domain) VoucherDigest(channelID common.Hash, maxClaimable *big.Int) common.Hash {
	return d.typed(crypto.Keccak256Hash(voucherTypeHash[:], channelID[:], uintWord(maxClaimable)))
}

// RefundDigest is what the receiver authorizer signs for refundWithSignature.
func (d Domain) RefundDigest(channelID common.Hash, nonce, amount *big.Int) common.Hash {
	return d.typed(crypto.Keccak256Hash(refundTypeHash[:], channelID[:], uintWord(nonce), uintWord(amount)))
}

// ClaimEntry is one row of a ClaimBatch.
type ClaimEntry struct {
	ChannelID    common.Hash
	MaxClaimable *big.Int
	TotalClaimed *big.Int
}

// ClaimBatchDigest is what the receiver authorizer signs for claimWithSignature.
func (d Domain) ClaimBatchDigest(rows []ClaimEntry) common.Hash {
	var cat []byte
	for _, r := range rows {
		h := crypto.Keccak256Hash(claimEntryTypeHash[:], r.ChannelID[:], uintWord(r.MaxClaimable), uintWord(r.TotalClaimed))
		cat = append(cat, h[:]...)
	}
	return d.typed(crypto.Keccak256Hash(claimBatchTypeHash[:], crypto.Keccak256(cat)))
}

// DepositNonce is the ERC-3009 nonce a deposit authorization must carry: keccak256(abi.encode(channelId, salt)),
// which binds the payer's signed transfer to one channel.
func DepositNonce(channelID common.Hash, salt *big.Int) common.Hash {
	return crypto.Keccak256Hash(channelID[:], uintWord(salt))
}

// Sign signs a digest, returning R||S||V with V in {27, 28} as wallets do.
func Sign(digest common.Hash, key *ecdsa.PrivateKey) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	return sig, nil
}

// ErrBadSignature is returned for a signature that is not a valid 65-byte ECDSA signature.
var ErrBadSignature = errors.New("batchsettle: malformed signature")

// Recover returns the address that signed digest: 65 bytes, V in {27, 28}
// and low s — what BatchSettlement.sol's ECDSA.tryRecover (OpenZeppelin,
// the ecrecover precompile) accepts, so a voucher the gateway takes can be
// claimed on chain (a v of 0 or 1 was taken here and then refused there).
func Recover(digest common.Hash, sig []byte) (common.Address, error) {
	a, err := ethparse.Recover(digest[:], sig, ethparse.V27)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return a, nil
}

var collectorArgs = func() abi.Arguments {
	u, _ := abi.NewType("uint256", "", nil)
	b, _ := abi.NewType("bytes", "", nil)
	return abi.Arguments{{Type: u}, {Type: u}, {Type: u}, {Type: b}}
}()

// CollectorData is the ERC-3009 collector's data for deposit():
// abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature).
func CollectorData(validAfter, validBefore, salt *big.Int, sig []byte) ([]byte, error) {
	return collectorArgs.Pack(validAfter, validBefore, salt, sig)
}
