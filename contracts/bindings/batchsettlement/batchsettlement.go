// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package batchsettlement

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// BatchSettlementChannelConfig is an auto generated low-level Go binding around an user-defined struct.
type BatchSettlementChannelConfig struct {
	Payer              common.Address
	PayerAuthorizer    common.Address
	Receiver           common.Address
	ReceiverAuthorizer common.Address
	Token              common.Address
	WithdrawDelay      *big.Int
	Salt               [32]byte
}

// BatchSettlementVoucher is an auto generated low-level Go binding around an user-defined struct.
type BatchSettlementVoucher struct {
	Channel            BatchSettlementChannelConfig
	MaxClaimableAmount *big.Int
}

// BatchSettlementVoucherClaim is an auto generated low-level Go binding around an user-defined struct.
type BatchSettlementVoucherClaim struct {
	Voucher      BatchSettlementVoucher
	Signature    []byte
	TotalClaimed *big.Int
}

// BatchSettlementMetaData contains all meta data concerning the BatchSettlement contract.
var BatchSettlementMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"target\",\"type\":\"address\"}],\"name\":\"AddressEmptyCode\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"balance\",\"type\":\"uint128\"}],\"name\":\"ClaimAboveBalance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"name\":\"ClaimAboveVoucher\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"alreadyClaimed\",\"type\":\"uint128\"}],\"name\":\"ClaimBelowClaimed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"expected\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"received\",\"type\":\"uint256\"}],\"name\":\"DepositNotReceived\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"EmptyClaim\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"FailedCall\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidAuthorizerSignature\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"InvalidVoucherSignature\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"MixedReceiverAuthorizers\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"NoWithdrawPending\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"}],\"name\":\"NotPayerSide\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"}],\"name\":\"NotReceiverSide\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ReentrancyGuardReentrantCall\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"SafeERC20FailedOperation\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"unclaimed\",\"type\":\"uint128\"}],\"name\":\"WithdrawAboveEscrow\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint40\",\"name\":\"readyAt\",\"type\":\"uint40\"}],\"name\":\"WithdrawDelayNotElapsed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"}],\"name\":\"WithdrawDelayOutOfRange\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"expected\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"given\",\"type\":\"uint256\"}],\"name\":\"WrongRefundNonce\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroReceiverAuthorizer\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"indexed\":false,\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"ChannelClosed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"indexed\":false,\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"ChannelCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"claimed\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"name\":\"Claimed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"balance\",\"type\":\"uint128\"}],\"name\":\"Deposited\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"Settled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint40\",\"name\":\"initiatedAt\",\"type\":\"uint40\"}],\"name\":\"WithdrawInitiated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"Withdrawn\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"CHANNEL_CONFIG_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"CLAIM_BATCH_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"CLAIM_ENTRY_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"MAX_WITHDRAW_DELAY\",\"outputs\":[{\"internalType\":\"uint40\",\"name\":\"\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"MIN_WITHDRAW_DELAY\",\"outputs\":[{\"internalType\":\"uint40\",\"name\":\"\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"REFUND_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"VOUCHER_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"channels\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"balance\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"}],\"name\":\"claim\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"},{\"internalType\":\"bytes\",\"name\":\"authorizerSignature\",\"type\":\"bytes\"}],\"name\":\"claimWithSignature\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"address\",\"name\":\"collector\",\"type\":\"address\"},{\"internalType\":\"bytes\",\"name\":\"collectorData\",\"type\":\"bytes\"}],\"name\":\"deposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"domainSeparator\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"finalizeWithdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"getChannelId\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structBatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"}],\"name\":\"getClaimBatchDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"getRefundDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"name\":\"getVoucherDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"initiateWithdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes[]\",\"name\":\"data\",\"type\":\"bytes[]\"}],\"name\":\"multicall\",\"outputs\":[{\"internalType\":\"bytes[]\",\"name\":\"results\",\"type\":\"bytes[]\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"pendingWithdrawals\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"uint40\",\"name\":\"initiatedAt\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"receivers\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"totalSettled\",\"type\":\"uint128\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"refundNonce\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structBatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"},{\"internalType\":\"bytes\",\"name\":\"receiverAuthorizerSignature\",\"type\":\"bytes\"}],\"name\":\"refundWithSignature\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"settle\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "BatchSettlement",
	Bin: "0x6080604052348015600e575f5ffd5b5060017f9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f0055612754806100405f395ff3fe608060405234801561000f575f5ffd5b506004361061016d575f3560e01c80639db32a8f116100d9578063cf5cf3dc11610093578063e43ce1f21161006e578063e43ce1f21461043e578063e88377b114610451578063f0dc792e14610464578063f698da2514610483575f5ffd5b8063cf5cf3dc14610405578063dce4bfae14610418578063e25cf1891461042b575f5ffd5b80639db32a8f14610332578063ac9650d814610345578063ae15943914610365578063b77433e91461036e578063b7f06ebe14610381578063ba94ec0d146103de575f5ffd5b806353ab0fae1161012a57806353ab0fae146102645780635e5e0b871461028b5780637a7ebd7b1461029e578063862bb199146102d15780638e4a68ac146102e457806394739e871461030b575f5ffd5b8063140f1e75146101715780631e69ef40146101865780631fc3277d146101c057806321ff6389146101e057806329237b0c1461023e578063488ccc3b14610251575b5f5ffd5b61018461017f3660046120db565b61048b565b005b6101ad7fbe23ad087435072cd69b49cc5b92de10ee610fce7ae0ab428307972d764bb21681565b6040519081526020015b60405180910390f35b6101ca62278d0081565b60405164ffffffffff90911681526020016101b7565b61021e6101ee366004612150565b600360209081525f92835260408084209091529082529020546001600160801b0380821691600160801b90041682565b604080516001600160801b039384168152929091166020830152016101b7565b61018461024c3660046121c2565b6107a2565b6101ad61025f3660046121c2565b6108b1565b6101ad7f42bd57c010b870c2e96203c66341f28a6a19b4d56a74533a8eb5f706b9fd6d5781565b6101ad610299366004612201565b610a68565b61021e6102ac36600461221b565b5f602081905290815260409020546001600160801b0380821691600160801b90041682565b6101ad6102df366004612232565b610b48565b6101ad7f1c9a06ceab9b0ebbd3301dc56c9111bb6d9af421356dc9ccb3b7084c755db30881565b6101ad7f1e1bd6ff84c3e0d9029a292b212e039c0ca97ec497c55191a4a5874294609a6981565b610184610340366004612150565b610b9c565b6103586103533660046121c2565b610c93565b6040516101b79190612253565b6101ca61038481565b61018461037c3660046122d7565b610d79565b6103b961038f36600461221b565b60016020525f90815260409020546001600160801b03811690600160801b900464ffffffffff1682565b604080516001600160801b03909316835264ffffffffff9091166020830152016101b7565b6101ad7f30b9a0367528fca13c3e8ec6134c3113f1887ebe7a1ad61de0955aac288b0cf581565b610184610413366004612328565b610e6d565b610184610426366004612328565b610fc0565b6101ad610439366004612352565b61106f565b61018461044c366004612384565b6110cb565b61018461045f366004612201565b6111f8565b6101ad61047236600461221b565b60026020525f908152604090205481565b6101ad611481565b610493611525565b836001600160801b03165f036104bc57604051631f2a200560e01b815260040160405180910390fd5b6104c585611540565b5f6104cf86610a68565b90505f6104e260a08801608089016123f0565b6040516370a0823160e01b81523060048201529091505f906001600160a01b038316906370a0823190602401602060405180830381865afa158015610529573d5f5f3e3d5ffd5b505050506040513d601f19601f8201168201806040525081019061054d9190612409565b90506001600160a01b03861663e416d8d361056b60208b018b6123f0565b61057b60a08c0160808d016123f0565b8a878a8a6040518763ffffffff1660e01b81526004016105a096959493929190612420565b5f604051808303815f87803b1580156105b7575f5ffd5b505af11580156105c9573d5f5f3e3d5ffd5b50506040516370a0823160e01b81523060048201525f92508391506001600160a01b038516906370a0823190602401602060405180830381865afa158015610613573d5f5f3e3d5ffd5b505050506040513d601f19601f820116820180604052508101906106379190612409565b6106419190612494565b9050876001600160801b031681146106835760405163aeb0d2d960e01b81526001600160801b0389166004820152602481018290526044015b60405180910390fd5b5f84815260208190526040902080546001600160801b03808216600160801b909204161480156106c257508054600160801b90046001600160801b0316155b1561070057847f69d8248d5566bdb2ebc4d218970710d8378a2ff9b709a999e052b71970f808fa8b6040516106f791906124bb565b60405180910390a25b8054899082905f9061071c9084906001600160801b0316612563565b82546101009290920a6001600160801b038181021990931691831602179091558254604080518d8416815291909216602082015233925087917f6c2a09353b5e75e70d0b9778b80a413809bb235d46c211811c474b3346791d89910160405180910390a3505050505061079b60015f5160206126ff5f395f51905f5255565b5050505050565b5f8190036107c35760405163da80cc7360e01b815260040160405180910390fd5b5f5b818110156108ac57368383838181106107e0576107e0612582565b90506020028101906107f29190612596565b905061080460608201604083016123f0565b6001600160a01b0316336001600160a01b031614158015610846575061083060808201606083016123f0565b6001600160a01b0316336001600160a01b031614155b156108775761085481610a68565b60405163456c8f1960e01b8152600481019190915233602482015260440161067a565b6108a384848481811061088c5761088c612582565b905060200281019061089e9190612596565b6115ee565b506001016107c5565b505050565b5f808267ffffffffffffffff8111156108cc576108cc6125b5565b6040519080825280602002602001820160405280156108f5578160200160208202803683370190505b5090505f5b838110156109dd573685858381811061091557610915612582565b90506020028101906109279190612596565b90507f30b9a0367528fca13c3e8ec6134c3113f1887ebe7a1ad61de0955aac288b0cf561095382610a68565b610964610100840160e085016125c9565b610976610140850161012086016125c9565b6040805160208101959095528401929092526001600160801b03908116606084015216608082015260a001604051602081830303815290604052805190602001208383815181106109c9576109c9612582565b6020908102919091010152506001016108fa565b50610a5e7f42bd57c010b870c2e96203c66341f28a6a19b4d56a74533a8eb5f706b9fd6d5782604051602001610a1391906125e2565b60405160208183030381529060405280519060200120604051602001610a43929190918252602082015260400190565b604051602081830303815290604052805190602001206118c7565b9150505b92915050565b5f610a627f1c9a06ceab9b0ebbd3301dc56c9111bb6d9af421356dc9ccb3b7084c755db308610a9a60208501856123f0565b610aaa60408601602087016123f0565b610aba60608701604088016123f0565b610aca60808801606089016123f0565b610ada60a0890160808a016123f0565b610aea60c08a0160a08b01612617565b6040805160208101989098526001600160a01b039687169088015293851660608701529184166080860152831660a085015290911660c08084019190915264ffffffffff90911660e083015284013561010082015261012001610a43565b604080517f1e1bd6ff84c3e0d9029a292b212e039c0ca97ec497c55191a4a5874294609a6960208201529081018390526001600160801b03821660608201525f90610b9590608001610a43565b9392505050565b610ba4611525565b6001600160a01b038083165f90815260036020908152604080832093851683529290529081208054909190610beb906001600160801b03600160801b820481169116612630565b82546001600160801b03908116600160801b8102178455909150811615610c2957610c296001600160a01b038416856001600160801b0384166118f3565b6040516001600160801b038216815233906001600160a01b0385811691908716907f7337b4386b690fdb8ba66905b92b9d45d33bc6626ee2620c905fb150ec0cc47d9060200160405180910390a45050610c8f60015f5160206126ff5f395f51905f5255565b5050565b604080515f8152602081019091526060908267ffffffffffffffff811115610cbd57610cbd6125b5565b604051908082528060200260200182016040528015610cf057816020015b6060815260200190600190039081610cdb5790505b5091505f5b83811015610d7157610d4c30868684818110610d1357610d13612582565b9050602002810190610d25919061264f565b85604051602001610d3893929190612692565b604051602081830303815290604052611928565b838281518110610d5e57610d5e612582565b6020908102919091010152600101610cf5565b505092915050565b610d81611525565b5f610d8b86610a68565b5f818152600260205260409020549091508414610dd5575f8181526002602052604090819020549051630516e86d60e31b815260048101919091526024810185905260440161067a565b610e2e610de860808801606089016123f0565b610df383878961106f565b85858080601f0160208091040260200160405190810160405280939291908181526020018383808284375f920191909152506119c892505050565b610e4b5760405163a56862eb60e01b815260040160405180910390fd5b610e56868287611a38565b5061079b60015f5160206126ff5f395f51905f5255565b5f610e7783610a68565b9050610e838382611c73565b816001600160801b03165f03610eac57604051631f2a200560e01b815260040160405180910390fd5b5f8181526020819052604081208054909190610eda906001600160801b03600160801b820481169116612630565b9050806001600160801b0316846001600160801b03161115610f215760405162c69ec560e81b81526001600160801b0380861660048301528216602482015260440161067a565b6040805180820182526001600160801b038681168083524264ffffffffff81811660208087018281525f8c81526001835289902097518854915197166001600160a81b031990911617600160801b9690931695909502919091179094558451918252918101929092529185917fe4280d0d903c7f258f62b07c62f262377cbaa23f7791d78126e6446e0f0e3c23910160405180910390a2505050505050565b610fc8611525565b5f610fd283610a68565b9050610fe460608401604085016123f0565b6001600160a01b0316336001600160a01b031614158015611026575061101060808401606085016123f0565b6001600160a01b0316336001600160a01b031614155b1561104d5760405163456c8f1960e01b81526004810182905233602482015260440161067a565b611058838284611a38565b50610c8f60015f5160206126ff5f395f51905f5255565b604080517fbe23ad087435072cd69b49cc5b92de10ee610fce7ae0ab428307972d764bb2166020820152908101849052606081018390526001600160801b03821660808201525f906110c39060a001610a43565b949350505050565b5f8390036110ec5760405163da80cc7360e01b815260040160405180910390fd5b5f84845f8181106110ff576110ff612582565b90506020028101906111119190612596565b6111229060808101906060016123f0565b905060015b8481101561119d57816001600160a01b031686868381811061114b5761114b612582565b905060200281019061115d9190612596565b61116e9060808101906060016123f0565b6001600160a01b0316146111955760405163f6ea4a0760e01b815260040160405180910390fd5b600101611127565b506111ac81610df387876108b1565b6111c95760405163a56862eb60e01b815260040160405180910390fd5b5f5b848110156111f0576111e886868381811061088c5761088c612582565b6001016111cb565b505050505050565b611200611525565b5f61120a82610a68565b90506112168282611c73565b5f8181526001602090815260408083208151808301909252546001600160801b0381168252600160801b900464ffffffffff16918101829052910361127157604051638d10945760e01b81526004810183905260240161067a565b5f61128260c0850160a08601612617565b826020015161129191906126b5565b90508064ffffffffff164210156112c457604051632a5709ff60e01b815264ffffffffff8216600482015260240161067a565b5f83815260016020908152604080832080546001600160a81b03191690559082905281208054909190611309906001600160801b03600160801b820481169116612630565b90505f816001600160801b0316855f01516001600160801b03161161132f578451611331565b815b8354909150819084905f906113509084906001600160801b0316612630565b92506101000a8154816001600160801b0302191690836001600160801b031602179055505f816001600160801b031611156113bf576113bf61139560208901896123f0565b6001600160801b0383166113af60a08b0160808c016123f0565b6001600160a01b031691906118f3565b6040516001600160801b038216815286907fb9d963dd3548f4550118566346b6223a34f604d98d4388090712878f08a546c49060200160405180910390a282546001600160801b031615801561142457508254600160801b90046001600160801b0316155b1561146257857f8d5942f197f362dfd44dfdc1b0b7a9721c9151b67f55817c83349271d3c08d378860405161145991906124bb565b60405180910390a25b50505050505061147e60015f5160206126ff5f395f51905f5255565b50565b604080517f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f60208201527fe03c502b9066cc6f23a8f0f48ed32cb7d506f9f0a2d0055449f256846a770e9a918101919091527fc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc660608201524660808201523060a08201525f9060c00160405160208183030381529060405280519060200120905090565b61152d611d0a565b60025f5160206126ff5f395f51905f5255565b61038461155360c0830160a08401612617565b64ffffffffff16108061157e575062278d0061157560c0830160a08401612617565b64ffffffffff16115b156115b65761159360c0820160a08301612617565b604051637239990560e01b815264ffffffffff909116600482015260240161067a565b5f6115c760808301606084016123f0565b6001600160a01b03160361147e57604051631d2e088360e21b815260040160405180910390fd5b805f6115f982610a68565b5f81815260208190526040812091925061161b610140860161012087016125c9565b905061162e610100860160e087016125c9565b6001600160801b0316816001600160801b0316111561168d57828161165a610100880160e089016125c9565b604051636fa48cb560e01b815260048101939093526001600160801b03918216602484015216604482015260640161067a565b81546001600160801b03600160801b909104811690821610156116e857815460405163083e4cf760e41b8152600481018590526001600160801b038084166024830152600160801b909204909116604482015260640161067a565b81546001600160801b03908116908216111561173457815460405163f4614bb960e01b8152600481018590526001600160801b038084166024830152909116604482015260640161067a565b6117608461174d856102df6101008a0160e08b016125c9565b61175b61010089018961264f565b611d3b565b6117805760405163692acc3d60e01b81526004810184905260240161067a565b81545f9061179e90600160801b90046001600160801b031683612630565b9050806001600160801b03165f036117b857505050505050565b82546001600160801b03808416600160801b0291161783558060035f6117e46060890160408a016123f0565b6001600160a01b0316815260208101919091526040015f9081209061180f60a0890160808a016123f0565b6001600160a01b0316815260208101919091526040015f90812080549091906118429084906001600160801b0316612563565b92506101000a8154816001600160801b0302191690836001600160801b03160217905550336001600160a01b0316847f36bd546bb573e8921fdbfd934bbed62d872796b01792cd240cce27f79dd3eddd83856040516118b79291906001600160801b0392831681529116602082015260400190565b60405180910390a3505050505050565b5f610a626118d3611481565b8360405161190160f01b8152600281019290925260228201526042902090565b6119008383836001611e40565b6108ac57604051635274afe760e01b81526001600160a01b038416600482015260240161067a565b60605f6119358484611ea2565b905080801561195657505f3d118061195657505f846001600160a01b03163b115b1561196b57611963611eb5565b915050610a62565b801561199557604051639996b31560e01b81526001600160a01b038516600482015260240161067a565b3d156119a8576119a3611ece565b6119c1565b60405163d6bda27560e01b815260040160405180910390fd5b5092915050565b5f836001600160a01b03163b5f03611a26575f5f6119e68585611ed9565b5090925090505f8160038111156119ff576119ff6126d2565b148015611a1d5750856001600160a01b0316826001600160a01b0316145b92505050610b95565b611a31848484611f22565b9050610b95565b5f82815260026020526040812080549082611a52836126e6565b909155505f848152602081905260408120805492935091611a85906001600160801b03600160801b820481169116612630565b9050806001600160801b0316846001600160801b03161115611aa5578093505b836001600160801b03165f03611abd57505050505050565b8154849083905f90611ad99084906001600160801b0316612630565b82546001600160801b039182166101009390930a9283029190920219909116179055505f858152600160205260409020805464ffffffffff600160801b9091041615611b955780546001600160801b0390811690861610611b54575f86815260016020526040902080546001600160a81b0319169055611b95565b8054859082905f90611b709084906001600160801b0316612630565b92506101000a8154816001600160801b0302191690836001600160801b031602179055505b611bbf611ba560208901896123f0565b6001600160801b0387166113af60a08b0160808c016123f0565b604080516001600160801b038716815260208101869052339188917f54ca64c85f3d6c8c9f7414509306eef6125a382b3bede34eb8e9d2f228ca3a19910160405180910390a382546001600160801b0316158015611c2c57508254600160801b90046001600160801b0316155b15611c6a57857f8d5942f197f362dfd44dfdc1b0b7a9721c9151b67f55817c83349271d3c08d3788604051611c6191906124bb565b60405180910390a25b50505050505050565b611c8060208301836123f0565b6001600160a01b0316336001600160a01b031614158015611ce357505f611cad60408401602085016123f0565b6001600160a01b03161480611ce35750611ccd60408301602084016123f0565b6001600160a01b0316336001600160a01b031614155b15610c8f57604051635e9ef8f560e11b81526004810182905233602482015260440161067a565b5f5160206126ff5f395f51905f5254600203611d3957604051633ee5aeb560e01b815260040160405180910390fd5b565b5f80611d4d60408701602088016123f0565b6001600160a01b031614611deb575f5f611d9c8686868080601f0160208091040260200160405190810160405280939291908181526020018383808284375f92019190915250611ed992505050565b5090925090505f816003811115611db557611db56126d2565b148015611de25750611dcd60408801602089016123f0565b6001600160a01b0316826001600160a01b0316145b925050506110c3565b611e37611dfb60208701876123f0565b8585858080601f0160208091040260200160405190810160405280939291908181526020018383808284375f920191909152506119c892505050565b95945050505050565b60405163a9059cbb60e01b5f8181526001600160a01b038616600452602485905291602083604481808b5af1925060015f51148316611e96578383151615611e8a573d5f823e3d81fd5b5f873b113d1516831692505b60405250949350505050565b5f5f5f835160208501865af49392505050565b6040513d81523d5f602083013e3d602001810160405290565b6040513d5f823e3d81fd5b5f5f5f8351604103611f10576020840151604085015160608601515f1a611f0288828585611f87565b955095509550505050611f1b565b505081515f91506002905b9250925092565b805160408051630b135d3f60e11b8082526004820186905260248201929092525f92906020820185604483015e5f82606483010152601f820160051c60051b915060205f60648401838a5afa9050825f5114601f3d1116811693505050509392505050565b5f80807f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0841115611fc057505f91506003905082612045565b604080515f808252602082018084528a905260ff891692820192909252606081018790526080810186905260019060a0016020604051602081039080840390855afa158015612011573d5f5f3e3d5ffd5b5050604051601f1901519150506001600160a01b03811661203c57505f925060019150829050612045565b92505f91508190505b9450945094915050565b5f60e0828403121561205f575f5ffd5b50919050565b80356001600160801b038116811461207b575f5ffd5b919050565b80356001600160a01b038116811461207b575f5ffd5b5f5f83601f8401126120a6575f5ffd5b50813567ffffffffffffffff8111156120bd575f5ffd5b6020830191508360208285010111156120d4575f5ffd5b9250929050565b5f5f5f5f5f61014086880312156120f0575f5ffd5b6120fa878761204f565b945061210860e08701612065565b93506121176101008701612080565b925061012086013567ffffffffffffffff811115612133575f5ffd5b61213f88828901612096565b969995985093965092949392505050565b5f5f60408385031215612161575f5ffd5b61216a83612080565b915061217860208401612080565b90509250929050565b5f5f83601f840112612191575f5ffd5b50813567ffffffffffffffff8111156121a8575f5ffd5b6020830191508360208260051b85010111156120d4575f5ffd5b5f5f602083850312156121d3575f5ffd5b823567ffffffffffffffff8111156121e9575f5ffd5b6121f585828601612181565b90969095509350505050565b5f60e08284031215612211575f5ffd5b610b95838361204f565b5f6020828403121561222b575f5ffd5b5035919050565b5f5f60408385031215612243575f5ffd5b8235915061217860208401612065565b5f602082016020835280845180835260408501915060408160051b8601019250602086015f5b828110156122cb57603f19878603018452815180518087528060208301602089015e5f602082890101526020601f19601f83011688010196505050602082019150602084019350600181019050612279565b50929695505050505050565b5f5f5f5f5f61014086880312156122ec575f5ffd5b6122f6878761204f565b945061230460e08701612065565b9350610100860135925061012086013567ffffffffffffffff811115612133575f5ffd5b5f5f610100838503121561233a575f5ffd5b612344848461204f565b915061217860e08401612065565b5f5f5f60608486031215612364575f5ffd5b833592506020840135915061237b60408501612065565b90509250925092565b5f5f5f5f60408587031215612397575f5ffd5b843567ffffffffffffffff8111156123ad575f5ffd5b6123b987828801612181565b909550935050602085013567ffffffffffffffff8111156123d8575f5ffd5b6123e487828801612096565b95989497509550505050565b5f60208284031215612400575f5ffd5b610b9582612080565b5f60208284031215612419575f5ffd5b5051919050565b6001600160a01b038781168252861660208201526001600160801b03851660408201526060810184905260a0608082018190528101829052818360c08301375f81830160c090810191909152601f909201601f1916010195945050505050565b634e487b7160e01b5f52601160045260245ffd5b81810381811115610a6257610a62612480565b803564ffffffffff8116811461207b575f5ffd5b60e081016001600160a01b036124d084612080565b1682526001600160a01b036124e760208501612080565b1660208301526001600160a01b0361250160408501612080565b1660408301526001600160a01b0361251b60608501612080565b1660608301526001600160a01b0361253560808501612080565b16608083015261254760a084016124a7565b64ffffffffff811660a08401525060c092830135919092015290565b6001600160801b038181168382160190811115610a6257610a62612480565b634e487b7160e01b5f52603260045260245ffd5b5f823561013e198336030181126125ab575f5ffd5b9190910192915050565b634e487b7160e01b5f52604160045260245ffd5b5f602082840312156125d9575f5ffd5b610b9582612065565b81515f90829060208501835b8281101561260c5781518452602093840193909101906001016125ee565b509195945050505050565b5f60208284031215612627575f5ffd5b610b95826124a7565b6001600160801b038281168282160390811115610a6257610a62612480565b5f5f8335601e19843603018112612664575f5ffd5b83018035915067ffffffffffffffff82111561267e575f5ffd5b6020019150368190038213156120d4575f5ffd5b828482375f8382015f815283518060208601835e5f910190815295945050505050565b64ffffffffff8181168382160190811115610a6257610a62612480565b634e487b7160e01b5f52602160045260245ffd5b5f600182016126f7576126f7612480565b506001019056fe9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f00a264697066735822122080fe78d3bedb83421a5ba83d415e3291a963f882b410e5821de95b524dc2287164736f6c63430008250033",
}

// BatchSettlement is an auto generated Go binding around an Ethereum contract.
type BatchSettlement struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *BatchSettlement) GetABI() abi.ABI {
	return c.abi
}

// NewBatchSettlement creates a new instance of BatchSettlement.
func NewBatchSettlement() *BatchSettlement {
	parsed, err := BatchSettlementMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &BatchSettlement{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *BatchSettlement) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackCHANNELCONFIGTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e4a68ac.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackCHANNELCONFIGTYPEHASH() []byte {
	enc, err := batchSettlement.abi.Pack("CHANNEL_CONFIG_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCHANNELCONFIGTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e4a68ac.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackCHANNELCONFIGTYPEHASH() ([]byte, error) {
	return batchSettlement.abi.Pack("CHANNEL_CONFIG_TYPEHASH")
}

// UnpackCHANNELCONFIGTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8e4a68ac.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackCHANNELCONFIGTYPEHASH(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("CHANNEL_CONFIG_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCLAIMBATCHTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x53ab0fae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackCLAIMBATCHTYPEHASH() []byte {
	enc, err := batchSettlement.abi.Pack("CLAIM_BATCH_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMBATCHTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x53ab0fae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackCLAIMBATCHTYPEHASH() ([]byte, error) {
	return batchSettlement.abi.Pack("CLAIM_BATCH_TYPEHASH")
}

// UnpackCLAIMBATCHTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x53ab0fae.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackCLAIMBATCHTYPEHASH(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("CLAIM_BATCH_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCLAIMENTRYTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba94ec0d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackCLAIMENTRYTYPEHASH() []byte {
	enc, err := batchSettlement.abi.Pack("CLAIM_ENTRY_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMENTRYTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba94ec0d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackCLAIMENTRYTYPEHASH() ([]byte, error) {
	return batchSettlement.abi.Pack("CLAIM_ENTRY_TYPEHASH")
}

// UnpackCLAIMENTRYTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xba94ec0d.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackCLAIMENTRYTYPEHASH(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("CLAIM_ENTRY_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackMAXWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1fc3277d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) PackMAXWITHDRAWDELAY() []byte {
	enc, err := batchSettlement.abi.Pack("MAX_WITHDRAW_DELAY")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1fc3277d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) TryPackMAXWITHDRAWDELAY() ([]byte, error) {
	return batchSettlement.abi.Pack("MAX_WITHDRAW_DELAY")
}

// UnpackMAXWITHDRAWDELAY is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1fc3277d.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) UnpackMAXWITHDRAWDELAY(data []byte) (*big.Int, error) {
	out, err := batchSettlement.abi.Unpack("MAX_WITHDRAW_DELAY", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackMINWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae159439.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) PackMINWITHDRAWDELAY() []byte {
	enc, err := batchSettlement.abi.Pack("MIN_WITHDRAW_DELAY")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMINWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae159439.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) TryPackMINWITHDRAWDELAY() ([]byte, error) {
	return batchSettlement.abi.Pack("MIN_WITHDRAW_DELAY")
}

// UnpackMINWITHDRAWDELAY is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xae159439.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (batchSettlement *BatchSettlement) UnpackMINWITHDRAWDELAY(data []byte) (*big.Int, error) {
	out, err := batchSettlement.abi.Unpack("MIN_WITHDRAW_DELAY", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackREFUNDTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1e69ef40.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackREFUNDTYPEHASH() []byte {
	enc, err := batchSettlement.abi.Pack("REFUND_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackREFUNDTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1e69ef40.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackREFUNDTYPEHASH() ([]byte, error) {
	return batchSettlement.abi.Pack("REFUND_TYPEHASH")
}

// UnpackREFUNDTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1e69ef40.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackREFUNDTYPEHASH(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("REFUND_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackVOUCHERTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x94739e87.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackVOUCHERTYPEHASH() []byte {
	enc, err := batchSettlement.abi.Pack("VOUCHER_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVOUCHERTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x94739e87.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackVOUCHERTYPEHASH() ([]byte, error) {
	return batchSettlement.abi.Pack("VOUCHER_TYPEHASH")
}

// UnpackVOUCHERTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x94739e87.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackVOUCHERTYPEHASH(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("VOUCHER_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (batchSettlement *BatchSettlement) PackChannels(channelId [32]byte) []byte {
	enc, err := batchSettlement.abi.Pack("channels", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (batchSettlement *BatchSettlement) TryPackChannels(channelId [32]byte) ([]byte, error) {
	return batchSettlement.abi.Pack("channels", channelId)
}

// ChannelsOutput serves as a container for the return parameters of contract
// method Channels.
type ChannelsOutput struct {
	Balance      *big.Int
	TotalClaimed *big.Int
}

// UnpackChannels is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7a7ebd7b.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (batchSettlement *BatchSettlement) UnpackChannels(data []byte) (ChannelsOutput, error) {
	out, err := batchSettlement.abi.Unpack("channels", data)
	outstruct := new(ChannelsOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Balance = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.TotalClaimed = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x29237b0c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claim((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) returns()
func (batchSettlement *BatchSettlement) PackClaim(voucherClaims []BatchSettlementVoucherClaim) []byte {
	enc, err := batchSettlement.abi.Pack("claim", voucherClaims)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x29237b0c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claim((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) returns()
func (batchSettlement *BatchSettlement) TryPackClaim(voucherClaims []BatchSettlementVoucherClaim) ([]byte, error) {
	return batchSettlement.abi.Pack("claim", voucherClaims)
}

// PackClaimWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe43ce1f2.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claimWithSignature((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims, bytes authorizerSignature) returns()
func (batchSettlement *BatchSettlement) PackClaimWithSignature(voucherClaims []BatchSettlementVoucherClaim, authorizerSignature []byte) []byte {
	enc, err := batchSettlement.abi.Pack("claimWithSignature", voucherClaims, authorizerSignature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaimWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe43ce1f2.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claimWithSignature((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims, bytes authorizerSignature) returns()
func (batchSettlement *BatchSettlement) TryPackClaimWithSignature(voucherClaims []BatchSettlementVoucherClaim, authorizerSignature []byte) ([]byte, error) {
	return batchSettlement.abi.Pack("claimWithSignature", voucherClaims, authorizerSignature)
}

// PackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x140f1e75.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function deposit((address,address,address,address,address,uint40,bytes32) config, uint128 amount, address collector, bytes collectorData) returns()
func (batchSettlement *BatchSettlement) PackDeposit(config BatchSettlementChannelConfig, amount *big.Int, collector common.Address, collectorData []byte) []byte {
	enc, err := batchSettlement.abi.Pack("deposit", config, amount, collector, collectorData)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x140f1e75.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function deposit((address,address,address,address,address,uint40,bytes32) config, uint128 amount, address collector, bytes collectorData) returns()
func (batchSettlement *BatchSettlement) TryPackDeposit(config BatchSettlementChannelConfig, amount *big.Int, collector common.Address, collectorData []byte) ([]byte, error) {
	return batchSettlement.abi.Pack("deposit", config, amount, collector, collectorData)
}

// PackDomainSeparator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf698da25.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (batchSettlement *BatchSettlement) PackDomainSeparator() []byte {
	enc, err := batchSettlement.abi.Pack("domainSeparator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDomainSeparator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf698da25.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackDomainSeparator() ([]byte, error) {
	return batchSettlement.abi.Pack("domainSeparator")
}

// UnpackDomainSeparator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf698da25.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackDomainSeparator(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("domainSeparator", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackFinalizeWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe88377b1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function finalizeWithdraw((address,address,address,address,address,uint40,bytes32) config) returns()
func (batchSettlement *BatchSettlement) PackFinalizeWithdraw(config BatchSettlementChannelConfig) []byte {
	enc, err := batchSettlement.abi.Pack("finalizeWithdraw", config)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackFinalizeWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe88377b1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function finalizeWithdraw((address,address,address,address,address,uint40,bytes32) config) returns()
func (batchSettlement *BatchSettlement) TryPackFinalizeWithdraw(config BatchSettlementChannelConfig) ([]byte, error) {
	return batchSettlement.abi.Pack("finalizeWithdraw", config)
}

// PackGetChannelId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e5e0b87.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (batchSettlement *BatchSettlement) PackGetChannelId(config BatchSettlementChannelConfig) []byte {
	enc, err := batchSettlement.abi.Pack("getChannelId", config)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetChannelId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e5e0b87.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackGetChannelId(config BatchSettlementChannelConfig) ([]byte, error) {
	return batchSettlement.abi.Pack("getChannelId", config)
}

// UnpackGetChannelId is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5e5e0b87.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackGetChannelId(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("getChannelId", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetClaimBatchDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x488ccc3b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (batchSettlement *BatchSettlement) PackGetClaimBatchDigest(voucherClaims []BatchSettlementVoucherClaim) []byte {
	enc, err := batchSettlement.abi.Pack("getClaimBatchDigest", voucherClaims)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetClaimBatchDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x488ccc3b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackGetClaimBatchDigest(voucherClaims []BatchSettlementVoucherClaim) ([]byte, error) {
	return batchSettlement.abi.Pack("getClaimBatchDigest", voucherClaims)
}

// UnpackGetClaimBatchDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x488ccc3b.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackGetClaimBatchDigest(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("getClaimBatchDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetRefundDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe25cf189.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (batchSettlement *BatchSettlement) PackGetRefundDigest(channelId [32]byte, nonce *big.Int, amount *big.Int) []byte {
	enc, err := batchSettlement.abi.Pack("getRefundDigest", channelId, nonce, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetRefundDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe25cf189.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackGetRefundDigest(channelId [32]byte, nonce *big.Int, amount *big.Int) ([]byte, error) {
	return batchSettlement.abi.Pack("getRefundDigest", channelId, nonce, amount)
}

// UnpackGetRefundDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe25cf189.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackGetRefundDigest(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("getRefundDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetVoucherDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x862bb199.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (batchSettlement *BatchSettlement) PackGetVoucherDigest(channelId [32]byte, maxClaimableAmount *big.Int) []byte {
	enc, err := batchSettlement.abi.Pack("getVoucherDigest", channelId, maxClaimableAmount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetVoucherDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x862bb199.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (batchSettlement *BatchSettlement) TryPackGetVoucherDigest(channelId [32]byte, maxClaimableAmount *big.Int) ([]byte, error) {
	return batchSettlement.abi.Pack("getVoucherDigest", channelId, maxClaimableAmount)
}

// UnpackGetVoucherDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x862bb199.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (batchSettlement *BatchSettlement) UnpackGetVoucherDigest(data []byte) ([32]byte, error) {
	out, err := batchSettlement.abi.Unpack("getVoucherDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackInitiateWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xcf5cf3dc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function initiateWithdraw((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (batchSettlement *BatchSettlement) PackInitiateWithdraw(config BatchSettlementChannelConfig, amount *big.Int) []byte {
	enc, err := batchSettlement.abi.Pack("initiateWithdraw", config, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackInitiateWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xcf5cf3dc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function initiateWithdraw((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (batchSettlement *BatchSettlement) TryPackInitiateWithdraw(config BatchSettlementChannelConfig, amount *big.Int) ([]byte, error) {
	return batchSettlement.abi.Pack("initiateWithdraw", config, amount)
}

// PackMulticall is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xac9650d8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (batchSettlement *BatchSettlement) PackMulticall(data [][]byte) []byte {
	enc, err := batchSettlement.abi.Pack("multicall", data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMulticall is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xac9650d8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (batchSettlement *BatchSettlement) TryPackMulticall(data [][]byte) ([]byte, error) {
	return batchSettlement.abi.Pack("multicall", data)
}

// UnpackMulticall is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xac9650d8.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (batchSettlement *BatchSettlement) UnpackMulticall(data []byte) ([][]byte, error) {
	out, err := batchSettlement.abi.Unpack("multicall", data)
	if err != nil {
		return *new([][]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([][]byte)).(*[][]byte)
	return out0, nil
}

// PackPendingWithdrawals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb7f06ebe.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (batchSettlement *BatchSettlement) PackPendingWithdrawals(channelId [32]byte) []byte {
	enc, err := batchSettlement.abi.Pack("pendingWithdrawals", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPendingWithdrawals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb7f06ebe.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (batchSettlement *BatchSettlement) TryPackPendingWithdrawals(channelId [32]byte) ([]byte, error) {
	return batchSettlement.abi.Pack("pendingWithdrawals", channelId)
}

// PendingWithdrawalsOutput serves as a container for the return parameters of contract
// method PendingWithdrawals.
type PendingWithdrawalsOutput struct {
	Amount      *big.Int
	InitiatedAt *big.Int
}

// UnpackPendingWithdrawals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb7f06ebe.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (batchSettlement *BatchSettlement) UnpackPendingWithdrawals(data []byte) (PendingWithdrawalsOutput, error) {
	out, err := batchSettlement.abi.Unpack("pendingWithdrawals", data)
	outstruct := new(PendingWithdrawalsOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Amount = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.InitiatedAt = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackReceivers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x21ff6389.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (batchSettlement *BatchSettlement) PackReceivers(receiver common.Address, token common.Address) []byte {
	enc, err := batchSettlement.abi.Pack("receivers", receiver, token)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReceivers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x21ff6389.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (batchSettlement *BatchSettlement) TryPackReceivers(receiver common.Address, token common.Address) ([]byte, error) {
	return batchSettlement.abi.Pack("receivers", receiver, token)
}

// ReceiversOutput serves as a container for the return parameters of contract
// method Receivers.
type ReceiversOutput struct {
	TotalClaimed *big.Int
	TotalSettled *big.Int
}

// UnpackReceivers is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x21ff6389.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (batchSettlement *BatchSettlement) UnpackReceivers(data []byte) (ReceiversOutput, error) {
	out, err := batchSettlement.abi.Unpack("receivers", data)
	outstruct := new(ReceiversOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.TotalClaimed = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.TotalSettled = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdce4bfae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refund((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (batchSettlement *BatchSettlement) PackRefund(config BatchSettlementChannelConfig, amount *big.Int) []byte {
	enc, err := batchSettlement.abi.Pack("refund", config, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdce4bfae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refund((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (batchSettlement *BatchSettlement) TryPackRefund(config BatchSettlementChannelConfig, amount *big.Int) ([]byte, error) {
	return batchSettlement.abi.Pack("refund", config, amount)
}

// PackRefundNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0dc792e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (batchSettlement *BatchSettlement) PackRefundNonce(channelId [32]byte) []byte {
	enc, err := batchSettlement.abi.Pack("refundNonce", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0dc792e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (batchSettlement *BatchSettlement) TryPackRefundNonce(channelId [32]byte) ([]byte, error) {
	return batchSettlement.abi.Pack("refundNonce", channelId)
}

// UnpackRefundNonce is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf0dc792e.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (batchSettlement *BatchSettlement) UnpackRefundNonce(data []byte) (*big.Int, error) {
	out, err := batchSettlement.abi.Unpack("refundNonce", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRefundWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb77433e9.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundWithSignature((address,address,address,address,address,uint40,bytes32) config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature) returns()
func (batchSettlement *BatchSettlement) PackRefundWithSignature(config BatchSettlementChannelConfig, amount *big.Int, nonce *big.Int, receiverAuthorizerSignature []byte) []byte {
	enc, err := batchSettlement.abi.Pack("refundWithSignature", config, amount, nonce, receiverAuthorizerSignature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb77433e9.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundWithSignature((address,address,address,address,address,uint40,bytes32) config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature) returns()
func (batchSettlement *BatchSettlement) TryPackRefundWithSignature(config BatchSettlementChannelConfig, amount *big.Int, nonce *big.Int, receiverAuthorizerSignature []byte) ([]byte, error) {
	return batchSettlement.abi.Pack("refundWithSignature", config, amount, nonce, receiverAuthorizerSignature)
}

// PackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9db32a8f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(address receiver, address token) returns()
func (batchSettlement *BatchSettlement) PackSettle(receiver common.Address, token common.Address) []byte {
	enc, err := batchSettlement.abi.Pack("settle", receiver, token)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9db32a8f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(address receiver, address token) returns()
func (batchSettlement *BatchSettlement) TryPackSettle(receiver common.Address, token common.Address) ([]byte, error) {
	return batchSettlement.abi.Pack("settle", receiver, token)
}

// BatchSettlementChannelClosed represents a ChannelClosed event raised by the BatchSettlement contract.
type BatchSettlementChannelClosed struct {
	ChannelId [32]byte
	Config    BatchSettlementChannelConfig
	Raw       *types.Log // Blockchain specific contextual infos
}

const BatchSettlementChannelClosedEventName = "ChannelClosed"

// ContractEventName returns the user-defined event name.
func (BatchSettlementChannelClosed) ContractEventName() string {
	return BatchSettlementChannelClosedEventName
}

// UnpackChannelClosedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChannelClosed(bytes32 indexed channelId, (address,address,address,address,address,uint40,bytes32) config)
func (batchSettlement *BatchSettlement) UnpackChannelClosedEvent(log *types.Log) (*BatchSettlementChannelClosed, error) {
	event := "ChannelClosed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementChannelClosed)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementChannelCreated represents a ChannelCreated event raised by the BatchSettlement contract.
type BatchSettlementChannelCreated struct {
	ChannelId [32]byte
	Config    BatchSettlementChannelConfig
	Raw       *types.Log // Blockchain specific contextual infos
}

const BatchSettlementChannelCreatedEventName = "ChannelCreated"

// ContractEventName returns the user-defined event name.
func (BatchSettlementChannelCreated) ContractEventName() string {
	return BatchSettlementChannelCreatedEventName
}

// UnpackChannelCreatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChannelCreated(bytes32 indexed channelId, (address,address,address,address,address,uint40,bytes32) config)
func (batchSettlement *BatchSettlement) UnpackChannelCreatedEvent(log *types.Log) (*BatchSettlementChannelCreated, error) {
	event := "ChannelCreated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementChannelCreated)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementClaimed represents a Claimed event raised by the BatchSettlement contract.
type BatchSettlementClaimed struct {
	ChannelId    [32]byte
	Sender       common.Address
	Claimed      *big.Int
	TotalClaimed *big.Int
	Raw          *types.Log // Blockchain specific contextual infos
}

const BatchSettlementClaimedEventName = "Claimed"

// ContractEventName returns the user-defined event name.
func (BatchSettlementClaimed) ContractEventName() string {
	return BatchSettlementClaimedEventName
}

// UnpackClaimedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimed, uint128 totalClaimed)
func (batchSettlement *BatchSettlement) UnpackClaimedEvent(log *types.Log) (*BatchSettlementClaimed, error) {
	event := "Claimed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementClaimed)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementDeposited represents a Deposited event raised by the BatchSettlement contract.
type BatchSettlementDeposited struct {
	ChannelId [32]byte
	Sender    common.Address
	Amount    *big.Int
	Balance   *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const BatchSettlementDepositedEventName = "Deposited"

// ContractEventName returns the user-defined event name.
func (BatchSettlementDeposited) ContractEventName() string {
	return BatchSettlementDepositedEventName
}

// UnpackDepositedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance)
func (batchSettlement *BatchSettlement) UnpackDepositedEvent(log *types.Log) (*BatchSettlementDeposited, error) {
	event := "Deposited"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementDeposited)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementRefunded represents a Refunded event raised by the BatchSettlement contract.
type BatchSettlementRefunded struct {
	ChannelId [32]byte
	Sender    common.Address
	Amount    *big.Int
	Nonce     *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const BatchSettlementRefundedEventName = "Refunded"

// ContractEventName returns the user-defined event name.
func (BatchSettlementRefunded) ContractEventName() string {
	return BatchSettlementRefundedEventName
}

// UnpackRefundedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount, uint256 nonce)
func (batchSettlement *BatchSettlement) UnpackRefundedEvent(log *types.Log) (*BatchSettlementRefunded, error) {
	event := "Refunded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementRefunded)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementSettled represents a Settled event raised by the BatchSettlement contract.
type BatchSettlementSettled struct {
	Receiver common.Address
	Token    common.Address
	Sender   common.Address
	Amount   *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const BatchSettlementSettledEventName = "Settled"

// ContractEventName returns the user-defined event name.
func (BatchSettlementSettled) ContractEventName() string {
	return BatchSettlementSettledEventName
}

// UnpackSettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)
func (batchSettlement *BatchSettlement) UnpackSettledEvent(log *types.Log) (*BatchSettlementSettled, error) {
	event := "Settled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementSettled)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementWithdrawInitiated represents a WithdrawInitiated event raised by the BatchSettlement contract.
type BatchSettlementWithdrawInitiated struct {
	ChannelId   [32]byte
	Amount      *big.Int
	InitiatedAt *big.Int
	Raw         *types.Log // Blockchain specific contextual infos
}

const BatchSettlementWithdrawInitiatedEventName = "WithdrawInitiated"

// ContractEventName returns the user-defined event name.
func (BatchSettlementWithdrawInitiated) ContractEventName() string {
	return BatchSettlementWithdrawInitiatedEventName
}

// UnpackWithdrawInitiatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt)
func (batchSettlement *BatchSettlement) UnpackWithdrawInitiatedEvent(log *types.Log) (*BatchSettlementWithdrawInitiated, error) {
	event := "WithdrawInitiated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementWithdrawInitiated)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// BatchSettlementWithdrawn represents a Withdrawn event raised by the BatchSettlement contract.
type BatchSettlementWithdrawn struct {
	ChannelId [32]byte
	Amount    *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const BatchSettlementWithdrawnEventName = "Withdrawn"

// ContractEventName returns the user-defined event name.
func (BatchSettlementWithdrawn) ContractEventName() string {
	return BatchSettlementWithdrawnEventName
}

// UnpackWithdrawnEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Withdrawn(bytes32 indexed channelId, uint128 amount)
func (batchSettlement *BatchSettlement) UnpackWithdrawnEvent(log *types.Log) (*BatchSettlementWithdrawn, error) {
	event := "Withdrawn"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != batchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(BatchSettlementWithdrawn)
	if len(log.Data) > 0 {
		if err := batchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range batchSettlement.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (batchSettlement *BatchSettlement) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["AddressEmptyCode"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackAddressEmptyCodeError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ClaimAboveBalance"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackClaimAboveBalanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ClaimAboveVoucher"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackClaimAboveVoucherError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ClaimBelowClaimed"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackClaimBelowClaimedError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["DepositNotReceived"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackDepositNotReceivedError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["EmptyClaim"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackEmptyClaimError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["FailedCall"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackFailedCallError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["InvalidAuthorizerSignature"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackInvalidAuthorizerSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["InvalidVoucherSignature"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackInvalidVoucherSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["MixedReceiverAuthorizers"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackMixedReceiverAuthorizersError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["NoWithdrawPending"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackNoWithdrawPendingError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["NotPayerSide"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackNotPayerSideError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["NotReceiverSide"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackNotReceiverSideError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ReentrancyGuardReentrantCall"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackReentrancyGuardReentrantCallError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["SafeERC20FailedOperation"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackSafeERC20FailedOperationError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["WithdrawAboveEscrow"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackWithdrawAboveEscrowError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["WithdrawDelayNotElapsed"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackWithdrawDelayNotElapsedError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["WithdrawDelayOutOfRange"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackWithdrawDelayOutOfRangeError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["WrongRefundNonce"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackWrongRefundNonceError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ZeroAmount"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackZeroAmountError(raw[4:])
	}
	if bytes.Equal(raw[:4], batchSettlement.abi.Errors["ZeroReceiverAuthorizer"].ID.Bytes()[:4]) {
		return batchSettlement.UnpackZeroReceiverAuthorizerError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// BatchSettlementAddressEmptyCode represents a AddressEmptyCode error raised by the BatchSettlement contract.
type BatchSettlementAddressEmptyCode struct {
	Target common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AddressEmptyCode(address target)
func BatchSettlementAddressEmptyCodeErrorID() common.Hash {
	return common.HexToHash("0x9996b315c842ff135b8fc4a08ad5df1c344efbc03d2687aecc0678050d2aac89")
}

// UnpackAddressEmptyCodeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AddressEmptyCode(address target)
func (batchSettlement *BatchSettlement) UnpackAddressEmptyCodeError(raw []byte) (*BatchSettlementAddressEmptyCode, error) {
	out := new(BatchSettlementAddressEmptyCode)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "AddressEmptyCode", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementClaimAboveBalance represents a ClaimAboveBalance error raised by the BatchSettlement contract.
type BatchSettlementClaimAboveBalance struct {
	ChannelId    [32]byte
	TotalClaimed *big.Int
	Balance      *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimAboveBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance)
func BatchSettlementClaimAboveBalanceErrorID() common.Hash {
	return common.HexToHash("0xf4614bb9002515ca0b6a477f82af82776ebd45617f98729d06d8572bfd4627be")
}

// UnpackClaimAboveBalanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimAboveBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance)
func (batchSettlement *BatchSettlement) UnpackClaimAboveBalanceError(raw []byte) (*BatchSettlementClaimAboveBalance, error) {
	out := new(BatchSettlementClaimAboveBalance)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ClaimAboveBalance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementClaimAboveVoucher represents a ClaimAboveVoucher error raised by the BatchSettlement contract.
type BatchSettlementClaimAboveVoucher struct {
	ChannelId          [32]byte
	TotalClaimed       *big.Int
	MaxClaimableAmount *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimAboveVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount)
func BatchSettlementClaimAboveVoucherErrorID() common.Hash {
	return common.HexToHash("0x6fa48cb55f939778d5bda4cf75181271550fba370f05ce461746ea45067f7ff8")
}

// UnpackClaimAboveVoucherError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimAboveVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount)
func (batchSettlement *BatchSettlement) UnpackClaimAboveVoucherError(raw []byte) (*BatchSettlementClaimAboveVoucher, error) {
	out := new(BatchSettlementClaimAboveVoucher)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ClaimAboveVoucher", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementClaimBelowClaimed represents a ClaimBelowClaimed error raised by the BatchSettlement contract.
type BatchSettlementClaimBelowClaimed struct {
	ChannelId      [32]byte
	TotalClaimed   *big.Int
	AlreadyClaimed *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimBelowClaimed(bytes32 channelId, uint128 totalClaimed, uint128 alreadyClaimed)
func BatchSettlementClaimBelowClaimedErrorID() common.Hash {
	return common.HexToHash("0x83e4cf706d78cdb80d9bcee210993010f4528e5a3dd33e7ccfa1203f660e22b3")
}

// UnpackClaimBelowClaimedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimBelowClaimed(bytes32 channelId, uint128 totalClaimed, uint128 alreadyClaimed)
func (batchSettlement *BatchSettlement) UnpackClaimBelowClaimedError(raw []byte) (*BatchSettlementClaimBelowClaimed, error) {
	out := new(BatchSettlementClaimBelowClaimed)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ClaimBelowClaimed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementDepositNotReceived represents a DepositNotReceived error raised by the BatchSettlement contract.
type BatchSettlementDepositNotReceived struct {
	Expected *big.Int
	Received *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DepositNotReceived(uint256 expected, uint256 received)
func BatchSettlementDepositNotReceivedErrorID() common.Hash {
	return common.HexToHash("0xaeb0d2d96454f1444ca3072f866c2453aed3c14c3c1c0efd92b72c901910895f")
}

// UnpackDepositNotReceivedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DepositNotReceived(uint256 expected, uint256 received)
func (batchSettlement *BatchSettlement) UnpackDepositNotReceivedError(raw []byte) (*BatchSettlementDepositNotReceived, error) {
	out := new(BatchSettlementDepositNotReceived)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "DepositNotReceived", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementEmptyClaim represents a EmptyClaim error raised by the BatchSettlement contract.
type BatchSettlementEmptyClaim struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error EmptyClaim()
func BatchSettlementEmptyClaimErrorID() common.Hash {
	return common.HexToHash("0xda80cc73faf9ad20901d538ac7eee75793dbc194bac91468711da9a18315b158")
}

// UnpackEmptyClaimError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error EmptyClaim()
func (batchSettlement *BatchSettlement) UnpackEmptyClaimError(raw []byte) (*BatchSettlementEmptyClaim, error) {
	out := new(BatchSettlementEmptyClaim)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "EmptyClaim", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementFailedCall represents a FailedCall error raised by the BatchSettlement contract.
type BatchSettlementFailedCall struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error FailedCall()
func BatchSettlementFailedCallErrorID() common.Hash {
	return common.HexToHash("0xd6bda27508c0fb6d8a39b4b122878dab26f731a7d4e4abe711dd3731899052a4")
}

// UnpackFailedCallError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error FailedCall()
func (batchSettlement *BatchSettlement) UnpackFailedCallError(raw []byte) (*BatchSettlementFailedCall, error) {
	out := new(BatchSettlementFailedCall)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "FailedCall", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementInvalidAuthorizerSignature represents a InvalidAuthorizerSignature error raised by the BatchSettlement contract.
type BatchSettlementInvalidAuthorizerSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidAuthorizerSignature()
func BatchSettlementInvalidAuthorizerSignatureErrorID() common.Hash {
	return common.HexToHash("0xa56862eb2b45ee5b6c68361263b8df4ec10feb61eebcfcd62826d5ce187da2d5")
}

// UnpackInvalidAuthorizerSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidAuthorizerSignature()
func (batchSettlement *BatchSettlement) UnpackInvalidAuthorizerSignatureError(raw []byte) (*BatchSettlementInvalidAuthorizerSignature, error) {
	out := new(BatchSettlementInvalidAuthorizerSignature)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "InvalidAuthorizerSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementInvalidVoucherSignature represents a InvalidVoucherSignature error raised by the BatchSettlement contract.
type BatchSettlementInvalidVoucherSignature struct {
	ChannelId [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidVoucherSignature(bytes32 channelId)
func BatchSettlementInvalidVoucherSignatureErrorID() common.Hash {
	return common.HexToHash("0x692acc3dfb5b04f8c3f0305c6d55bf546e29fcec2ed859e6459b120300fec7f9")
}

// UnpackInvalidVoucherSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidVoucherSignature(bytes32 channelId)
func (batchSettlement *BatchSettlement) UnpackInvalidVoucherSignatureError(raw []byte) (*BatchSettlementInvalidVoucherSignature, error) {
	out := new(BatchSettlementInvalidVoucherSignature)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "InvalidVoucherSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementMixedReceiverAuthorizers represents a MixedReceiverAuthorizers error raised by the BatchSettlement contract.
type BatchSettlementMixedReceiverAuthorizers struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error MixedReceiverAuthorizers()
func BatchSettlementMixedReceiverAuthorizersErrorID() common.Hash {
	return common.HexToHash("0xf6ea4a0794ad033fab3a7a4e309faad8a03039312d7d4c978413309d050fb44e")
}

// UnpackMixedReceiverAuthorizersError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error MixedReceiverAuthorizers()
func (batchSettlement *BatchSettlement) UnpackMixedReceiverAuthorizersError(raw []byte) (*BatchSettlementMixedReceiverAuthorizers, error) {
	out := new(BatchSettlementMixedReceiverAuthorizers)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "MixedReceiverAuthorizers", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementNoWithdrawPending represents a NoWithdrawPending error raised by the BatchSettlement contract.
type BatchSettlementNoWithdrawPending struct {
	ChannelId [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NoWithdrawPending(bytes32 channelId)
func BatchSettlementNoWithdrawPendingErrorID() common.Hash {
	return common.HexToHash("0x8d109457dc17676f94de0503a1967b42cfc66e08d790b5d867336a87633720e6")
}

// UnpackNoWithdrawPendingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NoWithdrawPending(bytes32 channelId)
func (batchSettlement *BatchSettlement) UnpackNoWithdrawPendingError(raw []byte) (*BatchSettlementNoWithdrawPending, error) {
	out := new(BatchSettlementNoWithdrawPending)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "NoWithdrawPending", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementNotPayerSide represents a NotPayerSide error raised by the BatchSettlement contract.
type BatchSettlementNotPayerSide struct {
	ChannelId [32]byte
	Caller    common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotPayerSide(bytes32 channelId, address caller)
func BatchSettlementNotPayerSideErrorID() common.Hash {
	return common.HexToHash("0xbd3df1ea3a6cf59e8947fb4f31b48c159e5d7434ea4ed16d6d3fe71991c8f6bb")
}

// UnpackNotPayerSideError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotPayerSide(bytes32 channelId, address caller)
func (batchSettlement *BatchSettlement) UnpackNotPayerSideError(raw []byte) (*BatchSettlementNotPayerSide, error) {
	out := new(BatchSettlementNotPayerSide)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "NotPayerSide", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementNotReceiverSide represents a NotReceiverSide error raised by the BatchSettlement contract.
type BatchSettlementNotReceiverSide struct {
	ChannelId [32]byte
	Caller    common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotReceiverSide(bytes32 channelId, address caller)
func BatchSettlementNotReceiverSideErrorID() common.Hash {
	return common.HexToHash("0x456c8f195275b44d3e193f2af9b5347c64c2ec52e358bbc7d4f613f753cdae71")
}

// UnpackNotReceiverSideError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotReceiverSide(bytes32 channelId, address caller)
func (batchSettlement *BatchSettlement) UnpackNotReceiverSideError(raw []byte) (*BatchSettlementNotReceiverSide, error) {
	out := new(BatchSettlementNotReceiverSide)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "NotReceiverSide", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementReentrancyGuardReentrantCall represents a ReentrancyGuardReentrantCall error raised by the BatchSettlement contract.
type BatchSettlementReentrancyGuardReentrantCall struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ReentrancyGuardReentrantCall()
func BatchSettlementReentrancyGuardReentrantCallErrorID() common.Hash {
	return common.HexToHash("0x3ee5aeb571de7fc460830b4d0017439a1ca56fb0bc39062227ade4fe4a24c1ca")
}

// UnpackReentrancyGuardReentrantCallError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ReentrancyGuardReentrantCall()
func (batchSettlement *BatchSettlement) UnpackReentrancyGuardReentrantCallError(raw []byte) (*BatchSettlementReentrancyGuardReentrantCall, error) {
	out := new(BatchSettlementReentrancyGuardReentrantCall)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ReentrancyGuardReentrantCall", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementSafeERC20FailedOperation represents a SafeERC20FailedOperation error raised by the BatchSettlement contract.
type BatchSettlementSafeERC20FailedOperation struct {
	Token common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SafeERC20FailedOperation(address token)
func BatchSettlementSafeERC20FailedOperationErrorID() common.Hash {
	return common.HexToHash("0x5274afe73c98b4749fc91ffae6b7b574e7842cb2144a159e9377a5f20b32edf9")
}

// UnpackSafeERC20FailedOperationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SafeERC20FailedOperation(address token)
func (batchSettlement *BatchSettlement) UnpackSafeERC20FailedOperationError(raw []byte) (*BatchSettlementSafeERC20FailedOperation, error) {
	out := new(BatchSettlementSafeERC20FailedOperation)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "SafeERC20FailedOperation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementWithdrawAboveEscrow represents a WithdrawAboveEscrow error raised by the BatchSettlement contract.
type BatchSettlementWithdrawAboveEscrow struct {
	Amount    *big.Int
	Unclaimed *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawAboveEscrow(uint128 amount, uint128 unclaimed)
func BatchSettlementWithdrawAboveEscrowErrorID() common.Hash {
	return common.HexToHash("0xc69ec500f076f79c01de18b116a65378f423083b21885ffa7eeb1f8d902ec8d7")
}

// UnpackWithdrawAboveEscrowError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawAboveEscrow(uint128 amount, uint128 unclaimed)
func (batchSettlement *BatchSettlement) UnpackWithdrawAboveEscrowError(raw []byte) (*BatchSettlementWithdrawAboveEscrow, error) {
	out := new(BatchSettlementWithdrawAboveEscrow)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "WithdrawAboveEscrow", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementWithdrawDelayNotElapsed represents a WithdrawDelayNotElapsed error raised by the BatchSettlement contract.
type BatchSettlementWithdrawDelayNotElapsed struct {
	ReadyAt *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawDelayNotElapsed(uint40 readyAt)
func BatchSettlementWithdrawDelayNotElapsedErrorID() common.Hash {
	return common.HexToHash("0x2a5709ffa4fa571b173c6b0d94615a1fc384caeee9894ba73e32dc53c8f03d9d")
}

// UnpackWithdrawDelayNotElapsedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawDelayNotElapsed(uint40 readyAt)
func (batchSettlement *BatchSettlement) UnpackWithdrawDelayNotElapsedError(raw []byte) (*BatchSettlementWithdrawDelayNotElapsed, error) {
	out := new(BatchSettlementWithdrawDelayNotElapsed)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "WithdrawDelayNotElapsed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementWithdrawDelayOutOfRange represents a WithdrawDelayOutOfRange error raised by the BatchSettlement contract.
type BatchSettlementWithdrawDelayOutOfRange struct {
	WithdrawDelay *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawDelayOutOfRange(uint40 withdrawDelay)
func BatchSettlementWithdrawDelayOutOfRangeErrorID() common.Hash {
	return common.HexToHash("0x723999051ca98fb04cd70aa5fd042e946d51d0197cf77dca1d421ca1f8688b3f")
}

// UnpackWithdrawDelayOutOfRangeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawDelayOutOfRange(uint40 withdrawDelay)
func (batchSettlement *BatchSettlement) UnpackWithdrawDelayOutOfRangeError(raw []byte) (*BatchSettlementWithdrawDelayOutOfRange, error) {
	out := new(BatchSettlementWithdrawDelayOutOfRange)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "WithdrawDelayOutOfRange", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementWrongRefundNonce represents a WrongRefundNonce error raised by the BatchSettlement contract.
type BatchSettlementWrongRefundNonce struct {
	Expected *big.Int
	Given    *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WrongRefundNonce(uint256 expected, uint256 given)
func BatchSettlementWrongRefundNonceErrorID() common.Hash {
	return common.HexToHash("0x28b74368fe028cbe2cb18e2c05bac983e315d7dbef4334f7b3cfd89cea4cf410")
}

// UnpackWrongRefundNonceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WrongRefundNonce(uint256 expected, uint256 given)
func (batchSettlement *BatchSettlement) UnpackWrongRefundNonceError(raw []byte) (*BatchSettlementWrongRefundNonce, error) {
	out := new(BatchSettlementWrongRefundNonce)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "WrongRefundNonce", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementZeroAmount represents a ZeroAmount error raised by the BatchSettlement contract.
type BatchSettlementZeroAmount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAmount()
func BatchSettlementZeroAmountErrorID() common.Hash {
	return common.HexToHash("0x1f2a2005cb66a8e145327e8814e243a0996aec9bfe1e15a495778b1236dbd485")
}

// UnpackZeroAmountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAmount()
func (batchSettlement *BatchSettlement) UnpackZeroAmountError(raw []byte) (*BatchSettlementZeroAmount, error) {
	out := new(BatchSettlementZeroAmount)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ZeroAmount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// BatchSettlementZeroReceiverAuthorizer represents a ZeroReceiverAuthorizer error raised by the BatchSettlement contract.
type BatchSettlementZeroReceiverAuthorizer struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroReceiverAuthorizer()
func BatchSettlementZeroReceiverAuthorizerErrorID() common.Hash {
	return common.HexToHash("0x74b8220c796e35cd6b8161d71ed1f816d7ee012898511d45e267b07b5544420b")
}

// UnpackZeroReceiverAuthorizerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroReceiverAuthorizer()
func (batchSettlement *BatchSettlement) UnpackZeroReceiverAuthorizerError(raw []byte) (*BatchSettlementZeroReceiverAuthorizer, error) {
	out := new(BatchSettlementZeroReceiverAuthorizer)
	if err := batchSettlement.abi.UnpackIntoInterface(out, "ZeroReceiverAuthorizer", raw); err != nil {
		return nil, err
	}
	return out, nil
}
