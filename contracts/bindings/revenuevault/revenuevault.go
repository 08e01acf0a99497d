// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package revenuevault

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

// RevenueVaultMetaData contains all meta data concerning the RevenueVault contract.
var RevenueVaultMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"usdt_\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"treasury_\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"minDeposit_\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"minimum\",\"type\":\"uint256\"}],\"name\":\"DepositBelowMinimum\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidAccount\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"OwnableInvalidOwner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"OwnableUnauthorizedAccount\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"SafeERC20FailedOperation\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"account\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Deposited\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"previous\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"current\",\"type\":\"uint256\"}],\"name\":\"MinDepositChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previousOwner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"newOwner\",\"type\":\"address\"}],\"name\":\"OwnershipTransferStarted\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previousOwner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"newOwner\",\"type\":\"address\"}],\"name\":\"OwnershipTransferred\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previous\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"current\",\"type\":\"address\"}],\"name\":\"TreasuryChanged\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"acceptOwnership\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"account\",\"type\":\"bytes32\"}],\"name\":\"deposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"minDeposit\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"pendingOwner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"renounceOwnership\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"newMinDeposit\",\"type\":\"uint256\"}],\"name\":\"setMinDeposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"newTreasury\",\"type\":\"address\"}],\"name\":\"setTreasury\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"newOwner\",\"type\":\"address\"}],\"name\":\"transferOwnership\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"treasury\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"usdt\",\"outputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "RevenueVault",
	Bin: "0x60a060405234801561000f575f5ffd5b506040516107f73803806107f783398101604081905261002e916101bc565b806001600160a01b03811661005c57604051631e4fbdf760e01b81525f600482015260240160405180910390fd5b61006581610136565b506001600160a01b038416158061008357506001600160a01b038316155b156100a15760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b03848116608052600280546001600160a01b031916918516918217905560038390556040515f907f8c3aa5f43a388513435861bf27dfad7829cd248696fed367c62d441f62954496908290a3604080515f8152602081018490527fcacd94bd1e7bb1185c816a740d9439bc8eff8159f6f4ffad8d306b5aca2ebd92910160405180910390a150505050610206565b600180546001600160a01b031916905561014f81610152565b50565b5f80546001600160a01b038381166001600160a01b0319831681178455604051919092169283917f8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e09190a35050565b80516001600160a01b03811681146101b7575f5ffd5b919050565b5f5f5f5f608085870312156101cf575f5ffd5b6101d8856101a1565b93506101e6602086016101a1565b9250604085015191506101fb606086016101a1565b905092959194509250565b6080516105d36102245f395f818160af015261029c01526105d35ff3fe608060405234801561000f575f5ffd5b50600436106100a6575f3560e01c80638da5cb5b1161006e5780638da5cb5b1461012a5780638fcc9cfb1461013a578063c9630cb01461014d578063e30c397814610160578063f0f4426014610171578063f2fde38b14610184575f5ffd5b80632f48ab7d146100aa57806341b3d185146100ee57806361d027b314610105578063715018a61461011857806379ba509714610122575b5f5ffd5b6100d17f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b0390911681526020015b60405180910390f35b6100f760035481565b6040519081526020016100e5565b6002546100d1906001600160a01b031681565b610120610197565b005b6101206101aa565b5f546001600160a01b03166100d1565b610120610148366004610539565b6101f3565b61012061015b366004610550565b61023c565b6001546001600160a01b03166100d1565b61012061017f366004610570565b610302565b610120610192366004610570565b61038c565b61019f6103fc565b6101a85f610428565b565b60015433906001600160a01b031681146101e75760405163118cdaa760e01b81526001600160a01b03821660048201526024015b60405180910390fd5b6101f081610428565b50565b6101fb6103fc565b60035460408051918252602082018390527fcacd94bd1e7bb1185c816a740d9439bc8eff8159f6f4ffad8d306b5aca2ebd92910160405180910390a1600355565b8061025a57604051630da30f6560e31b815260040160405180910390fd5b60035482101561028b5760035460405163ed28d08960e01b81526101de918491600401918252602082015260400190565b6002546102c7906001600160a01b037f000000000000000000000000000000000000000000000000000000000000000081169133911685610441565b604051828152339082907f87d4c0b5e30d6808bc8a94ba1c4d839b29d664151551a31753387ee9ef48429b9060200160405180910390a35050565b61030a6103fc565b6001600160a01b0381166103315760405163d92e233d60e01b815260040160405180910390fd5b6002546040516001600160a01b038084169216907f8c3aa5f43a388513435861bf27dfad7829cd248696fed367c62d441f62954496905f90a3600280546001600160a01b0319166001600160a01b0392909216919091179055565b6103946103fc565b600180546001600160a01b0383166001600160a01b031990911681179091556103c45f546001600160a01b031690565b6001600160a01b03167f38d16b8cac22d99fc7c124b9cd0de2d3fa1faef420bfe791d8c362d765e2270060405160405180910390a350565b5f546001600160a01b031633146101a85760405163118cdaa760e01b81523360048201526024016101de565b600180546001600160a01b03191690556101f08161047d565b61044f8484848460016104cc565b61047757604051635274afe760e01b81526001600160a01b03851660048201526024016101de565b50505050565b5f80546001600160a01b038381166001600160a01b0319831681178455604051919092169283917f8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e09190a35050565b6040516323b872dd60e01b5f8181526001600160a01b038781166004528616602452604485905291602083606481808c5af1925060015f5114831661052857838315161561051c573d5f823e3d81fd5b5f883b113d1516831692505b604052505f60605295945050505050565b5f60208284031215610549575f5ffd5b5035919050565b5f5f60408385031215610561575f5ffd5b50508035926020909101359150565b5f60208284031215610580575f5ffd5b81356001600160a01b0381168114610596575f5ffd5b939250505056fea2646970667358221220dccf0a22f6e3d21b2ea2fd641517fcdb1f57bfc1c9f9df323fb56bb3be58221c64736f6c63430008250033",
}

// RevenueVault is an auto generated Go binding around an Ethereum contract.
type RevenueVault struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *RevenueVault) GetABI() abi.ABI {
	return c.abi
}

// NewRevenueVault creates a new instance of RevenueVault.
func NewRevenueVault() *RevenueVault {
	parsed, err := RevenueVaultMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &RevenueVault{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *RevenueVault) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address usdt_, address treasury_, uint256 minDeposit_, address admin) returns()
func (revenueVault *RevenueVault) PackConstructor(usdt_ common.Address, treasury_ common.Address, minDeposit_ *big.Int, admin common.Address) []byte {
	enc, err := revenueVault.abi.Pack("", usdt_, treasury_, minDeposit_, admin)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackAcceptOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x79ba5097.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function acceptOwnership() returns()
func (revenueVault *RevenueVault) PackAcceptOwnership() []byte {
	enc, err := revenueVault.abi.Pack("acceptOwnership")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAcceptOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x79ba5097.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function acceptOwnership() returns()
func (revenueVault *RevenueVault) TryPackAcceptOwnership() ([]byte, error) {
	return revenueVault.abi.Pack("acceptOwnership")
}

// PackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc9630cb0.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function deposit(uint256 amount, bytes32 account) returns()
func (revenueVault *RevenueVault) PackDeposit(amount *big.Int, account [32]byte) []byte {
	enc, err := revenueVault.abi.Pack("deposit", amount, account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc9630cb0.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function deposit(uint256 amount, bytes32 account) returns()
func (revenueVault *RevenueVault) TryPackDeposit(amount *big.Int, account [32]byte) ([]byte, error) {
	return revenueVault.abi.Pack("deposit", amount, account)
}

// PackMinDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x41b3d185.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function minDeposit() view returns(uint256)
func (revenueVault *RevenueVault) PackMinDeposit() []byte {
	enc, err := revenueVault.abi.Pack("minDeposit")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMinDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x41b3d185.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function minDeposit() view returns(uint256)
func (revenueVault *RevenueVault) TryPackMinDeposit() ([]byte, error) {
	return revenueVault.abi.Pack("minDeposit")
}

// UnpackMinDeposit is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x41b3d185.
//
// Solidity: function minDeposit() view returns(uint256)
func (revenueVault *RevenueVault) UnpackMinDeposit(data []byte) (*big.Int, error) {
	out, err := revenueVault.abi.Unpack("minDeposit", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (revenueVault *RevenueVault) PackOwner() []byte {
	enc, err := revenueVault.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (revenueVault *RevenueVault) TryPackOwner() ([]byte, error) {
	return revenueVault.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (revenueVault *RevenueVault) UnpackOwner(data []byte) (common.Address, error) {
	out, err := revenueVault.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackPendingOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe30c3978.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function pendingOwner() view returns(address)
func (revenueVault *RevenueVault) PackPendingOwner() []byte {
	enc, err := revenueVault.abi.Pack("pendingOwner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPendingOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe30c3978.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function pendingOwner() view returns(address)
func (revenueVault *RevenueVault) TryPackPendingOwner() ([]byte, error) {
	return revenueVault.abi.Pack("pendingOwner")
}

// UnpackPendingOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe30c3978.
//
// Solidity: function pendingOwner() view returns(address)
func (revenueVault *RevenueVault) UnpackPendingOwner(data []byte) (common.Address, error) {
	out, err := revenueVault.abi.Unpack("pendingOwner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackRenounceOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x715018a6.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function renounceOwnership() returns()
func (revenueVault *RevenueVault) PackRenounceOwnership() []byte {
	enc, err := revenueVault.abi.Pack("renounceOwnership")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRenounceOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x715018a6.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function renounceOwnership() returns()
func (revenueVault *RevenueVault) TryPackRenounceOwnership() ([]byte, error) {
	return revenueVault.abi.Pack("renounceOwnership")
}

// PackSetMinDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8fcc9cfb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setMinDeposit(uint256 newMinDeposit) returns()
func (revenueVault *RevenueVault) PackSetMinDeposit(newMinDeposit *big.Int) []byte {
	enc, err := revenueVault.abi.Pack("setMinDeposit", newMinDeposit)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetMinDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8fcc9cfb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setMinDeposit(uint256 newMinDeposit) returns()
func (revenueVault *RevenueVault) TryPackSetMinDeposit(newMinDeposit *big.Int) ([]byte, error) {
	return revenueVault.abi.Pack("setMinDeposit", newMinDeposit)
}

// PackSetTreasury is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0f44260.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setTreasury(address newTreasury) returns()
func (revenueVault *RevenueVault) PackSetTreasury(newTreasury common.Address) []byte {
	enc, err := revenueVault.abi.Pack("setTreasury", newTreasury)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetTreasury is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0f44260.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setTreasury(address newTreasury) returns()
func (revenueVault *RevenueVault) TryPackSetTreasury(newTreasury common.Address) ([]byte, error) {
	return revenueVault.abi.Pack("setTreasury", newTreasury)
}

// PackTransferOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2fde38b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferOwnership(address newOwner) returns()
func (revenueVault *RevenueVault) PackTransferOwnership(newOwner common.Address) []byte {
	enc, err := revenueVault.abi.Pack("transferOwnership", newOwner)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2fde38b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferOwnership(address newOwner) returns()
func (revenueVault *RevenueVault) TryPackTransferOwnership(newOwner common.Address) ([]byte, error) {
	return revenueVault.abi.Pack("transferOwnership", newOwner)
}

// PackTreasury is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x61d027b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function treasury() view returns(address)
func (revenueVault *RevenueVault) PackTreasury() []byte {
	enc, err := revenueVault.abi.Pack("treasury")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTreasury is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x61d027b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function treasury() view returns(address)
func (revenueVault *RevenueVault) TryPackTreasury() ([]byte, error) {
	return revenueVault.abi.Pack("treasury")
}

// UnpackTreasury is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x61d027b3.
//
// Solidity: function treasury() view returns(address)
func (revenueVault *RevenueVault) UnpackTreasury(data []byte) (common.Address, error) {
	out, err := revenueVault.abi.Unpack("treasury", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackUsdt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2f48ab7d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function usdt() view returns(address)
func (revenueVault *RevenueVault) PackUsdt() []byte {
	enc, err := revenueVault.abi.Pack("usdt")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackUsdt is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2f48ab7d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function usdt() view returns(address)
func (revenueVault *RevenueVault) TryPackUsdt() ([]byte, error) {
	return revenueVault.abi.Pack("usdt")
}

// UnpackUsdt is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x2f48ab7d.
//
// Solidity: function usdt() view returns(address)
func (revenueVault *RevenueVault) UnpackUsdt(data []byte) (common.Address, error) {
	out, err := revenueVault.abi.Unpack("usdt", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// RevenueVaultDeposited represents a Deposited event raised by the RevenueVault contract.
type RevenueVaultDeposited struct {
	Account [32]byte
	From    common.Address
	Amount  *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const RevenueVaultDepositedEventName = "Deposited"

// ContractEventName returns the user-defined event name.
func (RevenueVaultDeposited) ContractEventName() string {
	return RevenueVaultDepositedEventName
}

// UnpackDepositedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Deposited(bytes32 indexed account, address indexed from, uint256 amount)
func (revenueVault *RevenueVault) UnpackDepositedEvent(log *types.Log) (*RevenueVaultDeposited, error) {
	event := "Deposited"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != revenueVault.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RevenueVaultDeposited)
	if len(log.Data) > 0 {
		if err := revenueVault.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range revenueVault.abi.Events[event].Inputs {
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

// RevenueVaultMinDepositChanged represents a MinDepositChanged event raised by the RevenueVault contract.
type RevenueVaultMinDepositChanged struct {
	Previous *big.Int
	Current  *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const RevenueVaultMinDepositChangedEventName = "MinDepositChanged"

// ContractEventName returns the user-defined event name.
func (RevenueVaultMinDepositChanged) ContractEventName() string {
	return RevenueVaultMinDepositChangedEventName
}

// UnpackMinDepositChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event MinDepositChanged(uint256 previous, uint256 current)
func (revenueVault *RevenueVault) UnpackMinDepositChangedEvent(log *types.Log) (*RevenueVaultMinDepositChanged, error) {
	event := "MinDepositChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != revenueVault.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RevenueVaultMinDepositChanged)
	if len(log.Data) > 0 {
		if err := revenueVault.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range revenueVault.abi.Events[event].Inputs {
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

// RevenueVaultOwnershipTransferStarted represents a OwnershipTransferStarted event raised by the RevenueVault contract.
type RevenueVaultOwnershipTransferStarted struct {
	PreviousOwner common.Address
	NewOwner      common.Address
	Raw           *types.Log // Blockchain specific contextual infos
}

const RevenueVaultOwnershipTransferStartedEventName = "OwnershipTransferStarted"

// ContractEventName returns the user-defined event name.
func (RevenueVaultOwnershipTransferStarted) ContractEventName() string {
	return RevenueVaultOwnershipTransferStartedEventName
}

// UnpackOwnershipTransferStartedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner)
func (revenueVault *RevenueVault) UnpackOwnershipTransferStartedEvent(log *types.Log) (*RevenueVaultOwnershipTransferStarted, error) {
	event := "OwnershipTransferStarted"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != revenueVault.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RevenueVaultOwnershipTransferStarted)
	if len(log.Data) > 0 {
		if err := revenueVault.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range revenueVault.abi.Events[event].Inputs {
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

// RevenueVaultOwnershipTransferred represents a OwnershipTransferred event raised by the RevenueVault contract.
type RevenueVaultOwnershipTransferred struct {
	PreviousOwner common.Address
	NewOwner      common.Address
	Raw           *types.Log // Blockchain specific contextual infos
}

const RevenueVaultOwnershipTransferredEventName = "OwnershipTransferred"

// ContractEventName returns the user-defined event name.
func (RevenueVaultOwnershipTransferred) ContractEventName() string {
	return RevenueVaultOwnershipTransferredEventName
}

// UnpackOwnershipTransferredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnershipTransferred(address indexed previousOwner, address indexed newOwner)
func (revenueVault *RevenueVault) UnpackOwnershipTransferredEvent(log *types.Log) (*RevenueVaultOwnershipTransferred, error) {
	event := "OwnershipTransferred"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != revenueVault.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RevenueVaultOwnershipTransferred)
	if len(log.Data) > 0 {
		if err := revenueVault.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range revenueVault.abi.Events[event].Inputs {
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

// RevenueVaultTreasuryChanged represents a TreasuryChanged event raised by the RevenueVault contract.
type RevenueVaultTreasuryChanged struct {
	Previous common.Address
	Current  common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const RevenueVaultTreasuryChangedEventName = "TreasuryChanged"

// ContractEventName returns the user-defined event name.
func (RevenueVaultTreasuryChanged) ContractEventName() string {
	return RevenueVaultTreasuryChangedEventName
}

// UnpackTreasuryChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event TreasuryChanged(address indexed previous, address indexed current)
func (revenueVault *RevenueVault) UnpackTreasuryChangedEvent(log *types.Log) (*RevenueVaultTreasuryChanged, error) {
	event := "TreasuryChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != revenueVault.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RevenueVaultTreasuryChanged)
	if len(log.Data) > 0 {
		if err := revenueVault.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range revenueVault.abi.Events[event].Inputs {
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
func (revenueVault *RevenueVault) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["DepositBelowMinimum"].ID.Bytes()[:4]) {
		return revenueVault.UnpackDepositBelowMinimumError(raw[4:])
	}
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["InvalidAccount"].ID.Bytes()[:4]) {
		return revenueVault.UnpackInvalidAccountError(raw[4:])
	}
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["OwnableInvalidOwner"].ID.Bytes()[:4]) {
		return revenueVault.UnpackOwnableInvalidOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["OwnableUnauthorizedAccount"].ID.Bytes()[:4]) {
		return revenueVault.UnpackOwnableUnauthorizedAccountError(raw[4:])
	}
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["SafeERC20FailedOperation"].ID.Bytes()[:4]) {
		return revenueVault.UnpackSafeERC20FailedOperationError(raw[4:])
	}
	if bytes.Equal(raw[:4], revenueVault.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return revenueVault.UnpackZeroAddressError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// RevenueVaultDepositBelowMinimum represents a DepositBelowMinimum error raised by the RevenueVault contract.
type RevenueVaultDepositBelowMinimum struct {
	Amount  *big.Int
	Minimum *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DepositBelowMinimum(uint256 amount, uint256 minimum)
func RevenueVaultDepositBelowMinimumErrorID() common.Hash {
	return common.HexToHash("0xed28d08990578501140aeed4e899fa6c18673086b6de379fd15ef2a9bc2704a6")
}

// UnpackDepositBelowMinimumError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DepositBelowMinimum(uint256 amount, uint256 minimum)
func (revenueVault *RevenueVault) UnpackDepositBelowMinimumError(raw []byte) (*RevenueVaultDepositBelowMinimum, error) {
	out := new(RevenueVaultDepositBelowMinimum)
	if err := revenueVault.abi.UnpackIntoInterface(out, "DepositBelowMinimum", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RevenueVaultInvalidAccount represents a InvalidAccount error raised by the RevenueVault contract.
type RevenueVaultInvalidAccount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidAccount()
func RevenueVaultInvalidAccountErrorID() common.Hash {
	return common.HexToHash("0x6d187b28dc0ac7ec3747dcca312a7f01229ba51941237588cf813e48090f2a50")
}

// UnpackInvalidAccountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidAccount()
func (revenueVault *RevenueVault) UnpackInvalidAccountError(raw []byte) (*RevenueVaultInvalidAccount, error) {
	out := new(RevenueVaultInvalidAccount)
	if err := revenueVault.abi.UnpackIntoInterface(out, "InvalidAccount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RevenueVaultOwnableInvalidOwner represents a OwnableInvalidOwner error raised by the RevenueVault contract.
type RevenueVaultOwnableInvalidOwner struct {
	Owner common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OwnableInvalidOwner(address owner)
func RevenueVaultOwnableInvalidOwnerErrorID() common.Hash {
	return common.HexToHash("0x1e4fbdf7f3ef8bcaa855599e3abf48b232380f183f08f6f813d9ffa5bd585188")
}

// UnpackOwnableInvalidOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OwnableInvalidOwner(address owner)
func (revenueVault *RevenueVault) UnpackOwnableInvalidOwnerError(raw []byte) (*RevenueVaultOwnableInvalidOwner, error) {
	out := new(RevenueVaultOwnableInvalidOwner)
	if err := revenueVault.abi.UnpackIntoInterface(out, "OwnableInvalidOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RevenueVaultOwnableUnauthorizedAccount represents a OwnableUnauthorizedAccount error raised by the RevenueVault contract.
type RevenueVaultOwnableUnauthorizedAccount struct {
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OwnableUnauthorizedAccount(address account)
func RevenueVaultOwnableUnauthorizedAccountErrorID() common.Hash {
	return common.HexToHash("0x118cdaa7a341953d1887a2245fd6665d741c67c8c50581daa59e1d03373fa188")
}

// UnpackOwnableUnauthorizedAccountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OwnableUnauthorizedAccount(address account)
func (revenueVault *RevenueVault) UnpackOwnableUnauthorizedAccountError(raw []byte) (*RevenueVaultOwnableUnauthorizedAccount, error) {
	out := new(RevenueVaultOwnableUnauthorizedAccount)
	if err := revenueVault.abi.UnpackIntoInterface(out, "OwnableUnauthorizedAccount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RevenueVaultSafeERC20FailedOperation represents a SafeERC20FailedOperation error raised by the RevenueVault contract.
type RevenueVaultSafeERC20FailedOperation struct {
	Token common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SafeERC20FailedOperation(address token)
func RevenueVaultSafeERC20FailedOperationErrorID() common.Hash {
	return common.HexToHash("0x5274afe73c98b4749fc91ffae6b7b574e7842cb2144a159e9377a5f20b32edf9")
}

// UnpackSafeERC20FailedOperationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SafeERC20FailedOperation(address token)
func (revenueVault *RevenueVault) UnpackSafeERC20FailedOperationError(raw []byte) (*RevenueVaultSafeERC20FailedOperation, error) {
	out := new(RevenueVaultSafeERC20FailedOperation)
	if err := revenueVault.abi.UnpackIntoInterface(out, "SafeERC20FailedOperation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RevenueVaultZeroAddress represents a ZeroAddress error raised by the RevenueVault contract.
type RevenueVaultZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func RevenueVaultZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (revenueVault *RevenueVault) UnpackZeroAddressError(raw []byte) (*RevenueVaultZeroAddress, error) {
	out := new(RevenueVaultZeroAddress)
	if err := revenueVault.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}
