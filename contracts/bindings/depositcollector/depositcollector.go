// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package depositcollector

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

// ERC3009DepositCollectorMetaData contains all meta data concerning the ERC3009DepositCollector contract.
var ERC3009DepositCollectorMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"}],\"name\":\"OnlyBatchSettlement\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"SafeERC20FailedOperation\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BATCH_SETTLEMENT\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes\",\"name\":\"data\",\"type\":\"bytes\"}],\"name\":\"collect\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "ERC3009DepositCollector",
	Bin: "0x6080604052348015600e575f5ffd5b506104768061001c5f395ff3fe608060405234801561000f575f5ffd5b5060043610610034575f3560e01c806382b0032414610038578063e416d8d31461006f575b5f5ffd5b610053734020074e9df2ce1dee5a9c1b5c3f541d02a1000381565b6040516001600160a01b03909116815260200160405180910390f35b61008261007d36600461024a565b610084565b005b33734020074e9df2ce1dee5a9c1b5c3f541d02a10003146100bf57604051638850ddab60e01b81523360048201526024015b60405180910390fd5b5f8080806100cf858701876102ff565b93509350935093505f87836040516020016100f4929190918252602082015260400190565b60408051601f198184030181529082905280516020909101206388b7ab6360e01b825291506001600160a01b038b16906388b7ab6390610144908e9030908e908b908b9089908b906004016103ce565b5f604051808303815f87803b15801561015b575f5ffd5b505af115801561016d573d5f5f3e3d5ffd5b50610186925050506001600160a01b038b16338b610193565b5050505050505050505050565b6101a083838360016101cd565b6101c857604051635274afe760e01b81526001600160a01b03841660048201526024016100b6565b505050565b60405163a9059cbb60e01b5f8181526001600160a01b038616600452602485905291602083604481808b5af1925060015f51148316610223578383151615610217573d5f823e3d81fd5b5f873b113d1516831692505b60405250949350505050565b80356001600160a01b0381168114610245575f5ffd5b919050565b5f5f5f5f5f5f60a0878903121561025f575f5ffd5b6102688761022f565b95506102766020880161022f565b94506040870135935060608701359250608087013567ffffffffffffffff81111561029f575f5ffd5b8701601f810189136102af575f5ffd5b803567ffffffffffffffff8111156102c5575f5ffd5b8960208284010111156102d6575f5ffd5b60208201935080925050509295509295509295565b634e487b7160e01b5f52604160045260245ffd5b5f5f5f5f60808587031215610312575f5ffd5b843593506020850135925060408501359150606085013567ffffffffffffffff81111561033d575f5ffd5b8501601f8101871361034d575f5ffd5b803567ffffffffffffffff811115610367576103676102eb565b604051601f8201601f19908116603f0116810167ffffffffffffffff81118282101715610396576103966102eb565b6040528181528282016020018910156103ad575f5ffd5b816020840160208301375f6020838301015280935050505092959194509250565b60018060a01b038816815260018060a01b03871660208201528560408201528460608201528360808201528260a082015260e060c08201525f82518060e0840152806020850161010085015e5f6101008285010152610100601f19601f8301168401019150509897505050505050505056fea2646970667358221220f26819242287efc9fd7de0c74d31271c711ac810525d6a50b2ef5e0a05530e2464736f6c63430008250033",
}

// ERC3009DepositCollector is an auto generated Go binding around an Ethereum contract.
type ERC3009DepositCollector struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ERC3009DepositCollector) GetABI() abi.ABI {
	return c.abi
}

// NewERC3009DepositCollector creates a new instance of ERC3009DepositCollector.
func NewERC3009DepositCollector() *ERC3009DepositCollector {
	parsed, err := ERC3009DepositCollectorMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ERC3009DepositCollector{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ERC3009DepositCollector) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackBATCHSETTLEMENT is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x82b00324.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function BATCH_SETTLEMENT() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) PackBATCHSETTLEMENT() []byte {
	enc, err := eRC3009DepositCollector.abi.Pack("BATCH_SETTLEMENT")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBATCHSETTLEMENT is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x82b00324.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function BATCH_SETTLEMENT() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) TryPackBATCHSETTLEMENT() ([]byte, error) {
	return eRC3009DepositCollector.abi.Pack("BATCH_SETTLEMENT")
}

// UnpackBATCHSETTLEMENT is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x82b00324.
//
// Solidity: function BATCH_SETTLEMENT() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackBATCHSETTLEMENT(data []byte) (common.Address, error) {
	out, err := eRC3009DepositCollector.abi.Unpack("BATCH_SETTLEMENT", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackCollect is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe416d8d3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes data) returns()
func (eRC3009DepositCollector *ERC3009DepositCollector) PackCollect(payer common.Address, token common.Address, amount *big.Int, channelId [32]byte, data []byte) []byte {
	enc, err := eRC3009DepositCollector.abi.Pack("collect", payer, token, amount, channelId, data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCollect is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe416d8d3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes data) returns()
func (eRC3009DepositCollector *ERC3009DepositCollector) TryPackCollect(payer common.Address, token common.Address, amount *big.Int, channelId [32]byte, data []byte) ([]byte, error) {
	return eRC3009DepositCollector.abi.Pack("collect", payer, token, amount, channelId, data)
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], eRC3009DepositCollector.abi.Errors["OnlyBatchSettlement"].ID.Bytes()[:4]) {
		return eRC3009DepositCollector.UnpackOnlyBatchSettlementError(raw[4:])
	}
	if bytes.Equal(raw[:4], eRC3009DepositCollector.abi.Errors["SafeERC20FailedOperation"].ID.Bytes()[:4]) {
		return eRC3009DepositCollector.UnpackSafeERC20FailedOperationError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// ERC3009DepositCollectorOnlyBatchSettlement represents a OnlyBatchSettlement error raised by the ERC3009DepositCollector contract.
type ERC3009DepositCollectorOnlyBatchSettlement struct {
	Caller common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OnlyBatchSettlement(address caller)
func ERC3009DepositCollectorOnlyBatchSettlementErrorID() common.Hash {
	return common.HexToHash("0x8850ddab9c8dadc155a9063071e72145967fbf5ba610d1dbb9d20d9e1e5c459d")
}

// UnpackOnlyBatchSettlementError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OnlyBatchSettlement(address caller)
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackOnlyBatchSettlementError(raw []byte) (*ERC3009DepositCollectorOnlyBatchSettlement, error) {
	out := new(ERC3009DepositCollectorOnlyBatchSettlement)
	if err := eRC3009DepositCollector.abi.UnpackIntoInterface(out, "OnlyBatchSettlement", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ERC3009DepositCollectorSafeERC20FailedOperation represents a SafeERC20FailedOperation error raised by the ERC3009DepositCollector contract.
type ERC3009DepositCollectorSafeERC20FailedOperation struct {
	Token common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SafeERC20FailedOperation(address token)
func ERC3009DepositCollectorSafeERC20FailedOperationErrorID() common.Hash {
	return common.HexToHash("0x5274afe73c98b4749fc91ffae6b7b574e7842cb2144a159e9377a5f20b32edf9")
}

// UnpackSafeERC20FailedOperationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SafeERC20FailedOperation(address token)
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackSafeERC20FailedOperationError(raw []byte) (*ERC3009DepositCollectorSafeERC20FailedOperation, error) {
	out := new(ERC3009DepositCollectorSafeERC20FailedOperation)
	if err := eRC3009DepositCollector.abi.UnpackIntoInterface(out, "SafeERC20FailedOperation", raw); err != nil {
		return nil, err
	}
	return out, nil
}
