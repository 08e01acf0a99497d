// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package claimscontract

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

// ClaimsContractMetaData contains all meta data concerning the ClaimsContract contract.
var ClaimsContractMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"usdt\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"admin\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"governor\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"claimCreator\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"AccessControlBadConfirmation\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"neededRole\",\"type\":\"bytes32\"}],\"name\":\"AccessControlUnauthorizedAccount\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"current\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"requested\",\"type\":\"uint256\"}],\"name\":\"AllocationDecrease\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"claimed\",\"type\":\"uint256\"}],\"name\":\"AlreadyClaimed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"ClaimExpired\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"DeadlinePassed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ECDSAInvalidSignature\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"length\",\"type\":\"uint256\"}],\"name\":\"ECDSAInvalidSignatureLength\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"name\":\"ECDSAInvalidSignatureS\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"EnforcedPause\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"allocation\",\"type\":\"uint256\"}],\"name\":\"ExceedsAllocation\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ExpectedPause\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"requested\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"available\",\"type\":\"uint256\"}],\"name\":\"InsufficientFreeFunds\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidNodeId\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidShortString\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"recovered\",\"type\":\"address\"}],\"name\":\"InvalidSigner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"}],\"name\":\"NotNodeWallet\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ReentrancyGuardReentrantCall\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"SafeERC20FailedOperation\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"str\",\"type\":\"string\"}],\"name\":\"StringTooLong\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"}],\"name\":\"UnknownWallet\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"nodeIdHash\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"allocation\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"ClaimCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"nodeIdHash\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"paid\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"cumulative\",\"type\":\"uint256\"}],\"name\":\"Claimed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[],\"name\":\"EIP712DomainChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"FundsWithdrawn\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"nodeIdHash\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"}],\"name\":\"NodeWalletSet\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":false,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"Paused\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"previousAdminRole\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"newAdminRole\",\"type\":\"bytes32\"}],\"name\":\"RoleAdminChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"}],\"name\":\"RoleGranted\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"}],\"name\":\"RoleRevoked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":false,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"Unpaused\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"CLAIM_CREATOR_ROLE\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"CLAIM_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"DEFAULT_ADMIN_ROLE\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"GOVERNOR_ROLE\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"}],\"name\":\"allocation\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"claim\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"claimNode\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"}],\"name\":\"claimed\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"createClaim\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"eip712Domain\",\"outputs\":[{\"internalType\":\"bytes1\",\"name\":\"fields\",\"type\":\"bytes1\"},{\"internalType\":\"string\",\"name\":\"name\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"version\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"chainId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"verifyingContract\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[]\",\"name\":\"extensions\",\"type\":\"uint256[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"}],\"name\":\"getRoleAdmin\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"grantRole\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"hasRole\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"hashClaim\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"}],\"name\":\"nodeWallet\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"outstanding\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"pause\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"paused\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"callerConfirmation\",\"type\":\"address\"}],\"name\":\"renounceRole\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"role\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"revokeRole\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"nodeId\",\"type\":\"string\"},{\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"}],\"name\":\"setNodeWallet\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes4\",\"name\":\"interfaceId\",\"type\":\"bytes4\"}],\"name\":\"supportsInterface\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"token\",\"outputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalAllocated\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalClaimed\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"unpause\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"wallet\",\"type\":\"address\"}],\"name\":\"walletNode\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"withdrawFunds\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "ClaimsContract",
	Bin: "0x610180604052348015610010575f5ffd5b5060405161223238038061223283398101604081905261002f91610337565b6040518060400160405280600e81526020016d546f6c6c67617465436c61696d7360901b815250604051806040016040528060018152602001603160f81b815250600161008661008361020960201b60201c565b90565b556100908261022d565b6101205261009d8161022d565b61014052815160208084019190912060e052815190820120610100524660a05261012960e05161010051604080517f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f60208201529081019290925260608201524660808201523060a08201525f9060c00160405160208183030381529060405280519060200120905090565b60805250503060c0526001600160a01b038416158061014f57506001600160a01b038316155b8061016157506001600160a01b038216155b8061017357506001600160a01b038116155b156101915760405163d92e233d60e01b815260040160405180910390fd5b6001600160a01b038416610160526101a95f84610273565b506101d47f7935bd0ae54bc31f548c14dba4d37c5c64b3f8ca900cb468fb8abd54d5894f5583610273565b506101ff7f4310712a70355dabd3743ffa2b1e8379be4cee8c986d882251903b0a43e1aeac82610273565b50505050506103e3565b7f9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f0090565b5f5f829050601f81511115610260578260405163305a27a960e01b81526004016102579190610388565b60405180910390fd5b805161026b826103bd565b179392505050565b5f828152602081815260408083206001600160a01b038516845290915281205460ff16610313575f838152602081815260408083206001600160a01b03861684529091529020805460ff191660011790556102cb3390565b6001600160a01b0316826001600160a01b0316847f2f8788117e7eff1d82e926ec794901d17c78024a50270940304540a733656f0d60405160405180910390a4506001610316565b505f5b92915050565b80516001600160a01b0381168114610332575f5ffd5b919050565b5f5f5f5f6080858703121561034a575f5ffd5b6103538561031c565b93506103616020860161031c565b925061036f6040860161031c565b915061037d6060860161031c565b905092959194509250565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b805160208083015191908110156103dd575f198160200360031b1b821691505b50919050565b60805160a05160c05160e05161010051610120516101405161016051611ddf6104535f395f818161044401528181610516015281816105eb0152610f0301525f6111c201525f61119701525f6113fd01525f6113d501525f61133001525f61135a01525f6113840152611ddf5ff3fe608060405234801561000f575f5ffd5b50600436106101bb575f3560e01c80638456cb59116100f3578063ccc5749011610093578063e28655801161006e578063e2865580146103d7578063e50d33e3146103eb578063ec9b91a7146103f3578063fc0c546a1461043f575f5ffd5b8063ccc57490146103a7578063d547741f146103bb578063d54ad2a1146103ce575f5ffd5b8063a217fddf116100ce578063a217fddf1461034f578063b6ba3fcd14610356578063b894567014610369578063bcda3d5b14610394575f5ffd5b80638456cb591461031957806384b0196e1461032157806391d148541461033c575f5ffd5b806336568abe1161015e5780635c975abb116101395780635c975abb146102a95780635e8d7209146102b45780636b0509b1146102c75780637fdbb0ee146102ee575f5ffd5b806336568abe146102855780633f4ba83a1461029857806345f7f249146102a0575f5ffd5b8063248a9ca311610199578063248a9ca31461020f578063258263f91461023f5780632f2ff15d1461025f57806334ef158914610272575f5ffd5b806301f3d5f2146101bf57806301ffc9a7146101d4578063155dd5ee146101fc575b5f5ffd5b6101d26101cd366004611747565b610466565b005b6101e76101e23660046117c4565b6104b2565b60405190151581526020015b60405180910390f35b6101d261020a3660046117f2565b6104e8565b61023161021d3660046117f2565b5f9081526020819052604090206001015490565b6040519081526020016101f3565b61025261024d366004611824565b61064e565b6040516101f3919061186b565b6101d261026d36600461187d565b6106e5565b6101d26102803660046118a7565b61070f565b6101d261029336600461187d565b610861565b6101d2610899565b61023160085481565b60015460ff166101e7565b6102316102c23660046118a7565b6108bb565b6102317fb96f4a2b2243b25552d13c4d481957c0daa2da43d4c577660b51af7c632bfb0681565b6102316102fc366004611908565b805160208183018101805160048252928201919093012091525481565b6101d261093e565b61032961095d565b6040516101f397969594939291906119bb565b6101e761034a36600461187d565b61099f565b6102315f81565b6101d26103643660046118a7565b6109c7565b610231610377366004611908565b805160208183018101805160058252928201919093012091525481565b6101d26103a2366004611a51565b610a95565b6102315f516020611d8a5f395f51905f5281565b6101d26103c936600461187d565b610c6f565b61023160095481565b6102315f516020611d6a5f395f51905f5281565b610231610c93565b610427610401366004611908565b80516020818301810180516006825292820191909301209152546001600160a01b031681565b6040516001600160a01b0390911681526020016101f3565b6104277f000000000000000000000000000000000000000000000000000000000000000081565b6104aa86868080601f0160208091040260200160405190810160405280939291908181526020018383808284375f9201919091525088925087915086905085610ca9565b505050505050565b5f6001600160e01b03198216637965db0b60e01b14806104e257506301ffc9a760e01b6001600160e01b03198316145b92915050565b5f516020611d8a5f395f51905f526104ff81610fa0565b6040516370a0823160e01b81523060048201525f907f00000000000000000000000000000000000000000000000000000000000000006001600160a01b0316906370a0823190602401602060405180830381865afa158015610563573d5f5f3e3d5ffd5b505050506040513d601f19601f820116820180604052508101906105879190611aa1565b90505f610592610c93565b90505f8183116105a2575f6105ac565b6105ac8284611acc565b9050808511156105de57604051632fced30360e21b815260048101869052602481018290526044015b60405180910390fd5b6106126001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000163387610faa565b60405185815233907feaff4b37086828766ad3268786972c0cd24259d4c87a80f9d3963a3c3d999b0d9060200160405180910390a25050505050565b60076020525f90815260409020805461066690611adf565b80601f016020809104026020016040519081016040528092919081815260200182805461069290611adf565b80156106dd5780601f106106b4576101008083540402835291602001916106dd565b820191905f5260205f20905b8154815290600101906020018083116106c057829003601f168201915b505050505081565b5f828152602081905260409020600101546106ff81610fa0565b6107098383610fdf565b50505050565b5f516020611d6a5f395f51905f5261072681610fa0565b5f849003610747576040516352793b0b60e01b815260040160405180910390fd5b8142111561076b5760405163bfb22adf60e01b8152600481018390526024016105d5565b5f6004868660405161077e929190611b17565b9081526020016040518091039020549050808410156107ba57604051635087938f60e01b815260048101829052602481018590526044016105d5565b8084146108045783600487876040516107d4929190611b17565b908152604051908190036020019020556107ee8185611acc565b60085f8282546107fe9190611b26565b90915550505b8585604051610814929190611b17565b60405180910390207f1108288a3cfa06c27fc783d5541f55af6bf4750a13a28385fab9dd35332ec83d878787876040516108519493929190611b61565b60405180910390a2505050505050565b6001600160a01b038116331461088a5760405163334bd91960e11b815260040160405180910390fd5b610894828261106e565b505050565b5f516020611d8a5f395f51905f526108b081610fa0565b6108b86110d7565b50565b5f6109357fb96f4a2b2243b25552d13c4d481957c0daa2da43d4c577660b51af7c632bfb0686866040516108f0929190611b17565b604080519182900382206020830193909352810191909152606081018590526080810184905260a0015b60405160208183030381529060405280519060200120611129565b95945050505050565b5f516020611d8a5f395f51905f5261095581610fa0565b6108b8611155565b5f6060805f5f5f606061096e611190565b6109766111bb565b604080515f80825260208201909252600f60f81b9b939a50919850469750309650945092509050565b5f918252602082815260408084206001600160a01b0393909316845291905290205460ff1690565b335f90815260076020526040812080546109e090611adf565b80601f0160208091040260200160405190810160405280929190818152602001828054610a0c90611adf565b8015610a575780601f10610a2e57610100808354040283529160200191610a57565b820191905f5260205f20905b815481529060010190602001808311610a3a57829003601f168201915b5050505050905080515f03610a8157604051634b5cb35f60e11b81523360048201526024016105d5565b610a8e8186868686610ca9565b5050505050565b5f516020611d6a5f395f51905f52610aac81610fa0565b5f839003610acd576040516352793b0b60e01b815260040160405180910390fd5b6001600160a01b038216610af45760405163d92e233d60e01b815260040160405180910390fd5b5f60068585604051610b07929190611b17565b908152604051908190036020019020546001600160a01b031690508015801590610b435750826001600160a01b0316816001600160a01b031614155b8015610b9157508484604051610b5a929190611b17565b604080519182900382206001600160a01b0384165f9081526007602052919091209091610b879190611b87565b6040518091039020145b15610bb6576001600160a01b0381165f908152600760205260408120610bb6916116bc565b8260068686604051610bc9929190611b17565b908152604080516020928190038301902080546001600160a01b0319166001600160a01b039485161790559185165f908152600790915220610c0c858783611c46565b50826001600160a01b03168585604051610c27929190611b17565b60405180910390207f02696b3e659718b02fa5a613938f69bb5b6ac9df9214ea5419d5d10997668eb68787604051610c60929190611d00565b60405180910390a35050505050565b5f82815260208190526040902060010154610c8981610fa0565b610709838361106e565b5f600954600854610ca49190611acc565b905090565b610cb16111e6565b610cb9611214565b80421115610cdd57604051630f5f3b2360e41b8152600481018290526024016105d5565b5f600686604051610cee9190611d1b565b908152604051908190036020019020546001600160a01b03169050338114610d3a5760405163019ee27760e01b81523360048201526001600160a01b03821660248201526044016105d5565b8551602080880191909120604080517fb96f4a2b2243b25552d13c4d481957c0daa2da43d4c577660b51af7c632bfb069381019390935282018190526060820185905260808201849052905f90610d939060a00161091a565b90505f610dd58289898080601f0160208091040260200160405190810160405280939291908181526020018383808284375f9201919091525061123a92505050565b9050610dee5f516020611d6a5f395f51905f528261099f565b610e165760405163bf18af4360e01b81526001600160a01b03821660048201526024016105d5565b5f60048a604051610e279190611d1b565b908152602001604051809103902054905080871115610e635760405163388f6b2360e21b815260048101889052602481018290526044016105d5565b5f60058b604051610e749190611d1b565b9081526020016040518091039020549050808811610eaf57604051636bd4745f60e01b815260048101899052602481018290526044016105d5565b5f610eba828a611acc565b90508860058d604051610ecd9190611d1b565b9081526020016040518091039020819055508060095f828254610ef09190611b26565b90915550610f2a90506001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000163383610faa565b336001600160a01b0316867f4b9cdd58ebf44728676d2b0cca7895cb147ed13c10d8ddd1f415ee70ae435cf78e848d604051610f6893929190611d31565b60405180910390a350505050505050610a8e60017f9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f0055565b6108b88133611262565b610fb7838383600161129f565b61089457604051635274afe760e01b81526001600160a01b03841660048201526024016105d5565b5f610fea838361099f565b611067575f838152602081815260408083206001600160a01b03861684529091529020805460ff1916600117905561101f3390565b6001600160a01b0316826001600160a01b0316847f2f8788117e7eff1d82e926ec794901d17c78024a50270940304540a733656f0d60405160405180910390a45060016104e2565b505f6104e2565b5f611079838361099f565b15611067575f838152602081815260408083206001600160a01b0386168085529252808320805460ff1916905551339286917ff6391f5c32d9c69d2a47ea670b442974b53935d1edc7fd64eb21e047a839171b9190a45060016104e2565b6110df611301565b6001805460ff191690557f5db9ee0a495bf2e6ff9c91a7834c1ba4fdd244a5e8aa4e537bd38aeae4b073aa335b6040516001600160a01b03909116815260200160405180910390a1565b5f6104e2611135611324565b8360405161190160f01b8152600281019290925260228201526042902090565b61115d611214565b6001805460ff1916811790557f62e78cea01bee320cd4e420270b5ea74000d11b0c9f74754ebdbfc544b05a2583361110c565b6060610ca47f000000000000000000000000000000000000000000000000000000000000000061144d565b6060610ca47f000000000000000000000000000000000000000000000000000000000000000061144d565b6111ee61148a565b60027f9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f0055565b60015460ff16156112385760405163d93c066560e01b815260040160405180910390fd5b565b5f5f5f5f61124886866114cc565b9250925092506112588282611515565b5090949350505050565b61126c828261099f565b61129b5760405163e2517d3f60e01b81526001600160a01b0382166004820152602481018390526044016105d5565b5050565b60405163a9059cbb60e01b5f8181526001600160a01b038616600452602485905291602083604481808b5af1925060015f511483166112f55783831516156112e9573d5f823e3d81fd5b5f873b113d1516831692505b60405250949350505050565b60015460ff1661123857604051638dfc202b60e01b815260040160405180910390fd5b5f306001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614801561137c57507f000000000000000000000000000000000000000000000000000000000000000046145b156113a657507f000000000000000000000000000000000000000000000000000000000000000090565b610ca4604080517f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f60208201527f0000000000000000000000000000000000000000000000000000000000000000918101919091527f000000000000000000000000000000000000000000000000000000000000000060608201524660808201523060a08201525f9060c00160405160208183030381529060405280519060200120905090565b60605f611459836115cd565b6040805160208082528183019092529192505f91906020820181803683375050509182525060208101929092525090565b7f9b779b17422d0df92223018b32b4d1fa46e071723d6817e2486d003becc55f005460020361123857604051633ee5aeb560e01b815260040160405180910390fd5b5f5f5f8351604103611503576020840151604085015160608601515f1a6114f5888285856115f4565b95509550955050505061150e565b505081515f91506002905b9250925092565b5f82600381111561152857611528611d55565b03611531575050565b600182600381111561154557611545611d55565b036115635760405163f645eedf60e01b815260040160405180910390fd5b600282600381111561157757611577611d55565b036115985760405163fce698f760e01b8152600481018290526024016105d5565b60038260038111156115ac576115ac611d55565b0361129b576040516335e2f38360e21b8152600481018290526024016105d5565b5f60ff8216601f8111156104e257604051632cd44ac360e21b815260040160405180910390fd5b5f80807f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a084111561162d57505f915060039050826116b2565b604080515f808252602082018084528a905260ff891692820192909252606081018790526080810186905260019060a0016020604051602081039080840390855afa15801561167e573d5f5f3e3d5ffd5b5050604051601f1901519150506001600160a01b0381166116a957505f9250600191508290506116b2565b92505f91508190505b9450945094915050565b5080546116c890611adf565b5f825580601f106116d7575050565b601f0160209004905f5260205f209061123891905f5b80821115610894575f818401556001016116ed565b5f5f83601f840112611712575f5ffd5b50813567ffffffffffffffff811115611729575f5ffd5b602083019150836020828501011115611740575f5ffd5b9250929050565b5f5f5f5f5f5f6080878903121561175c575f5ffd5b863567ffffffffffffffff811115611772575f5ffd5b61177e89828a01611702565b909750955050602087013567ffffffffffffffff81111561179d575f5ffd5b6117a989828a01611702565b979a9699509760408101359660609091013595509350505050565b5f602082840312156117d4575f5ffd5b81356001600160e01b0319811681146117eb575f5ffd5b9392505050565b5f60208284031215611802575f5ffd5b5035919050565b80356001600160a01b038116811461181f575f5ffd5b919050565b5f60208284031215611834575f5ffd5b6117eb82611809565b5f81518084528060208401602086015e5f602082860101526020601f19601f83011685010191505092915050565b602081525f6117eb602083018461183d565b5f5f6040838503121561188e575f5ffd5b8235915061189e60208401611809565b90509250929050565b5f5f5f5f606085870312156118ba575f5ffd5b843567ffffffffffffffff8111156118d0575f5ffd5b6118dc87828801611702565b90989097506020870135966040013595509350505050565b634e487b7160e01b5f52604160045260245ffd5b5f60208284031215611918575f5ffd5b813567ffffffffffffffff81111561192e575f5ffd5b8201601f8101841361193e575f5ffd5b803567ffffffffffffffff811115611958576119586118f4565b604051601f8201601f19908116603f0116810167ffffffffffffffff81118282101715611987576119876118f4565b60405281815282820160200186101561199e575f5ffd5b816020840160208301375f91810160200191909152949350505050565b60ff60f81b8816815260e060208201525f6119d960e083018961183d565b82810360408401526119eb818961183d565b606084018890526001600160a01b038716608085015260a0840186905283810360c0850152845180825260208087019350909101905f5b81811015611a40578351835260209384019390920191600101611a22565b50909b9a5050505050505050505050565b5f5f5f60408486031215611a63575f5ffd5b833567ffffffffffffffff811115611a79575f5ffd5b611a8586828701611702565b9094509250611a98905060208501611809565b90509250925092565b5f60208284031215611ab1575f5ffd5b5051919050565b634e487b7160e01b5f52601160045260245ffd5b818103818111156104e2576104e2611ab8565b600181811c90821680611af357607f821691505b602082108103611b1157634e487b7160e01b5f52602260045260245ffd5b50919050565b818382375f9101908152919050565b808201808211156104e2576104e2611ab8565b81835281816020850137505f828201602090810191909152601f909101601f19169091010190565b606081525f611b74606083018688611b39565b6020830194909452506040015292915050565b5f5f8354611b9481611adf565b600182168015611bab5760018114611bc057611bed565b60ff1983168652811515820286019350611bed565b865f5260205f205f5b83811015611be557815488820152600190910190602001611bc9565b505081860193505b509195945050505050565b601f821115610894578282111561089457805f5260205f20601f840160051c6020851015611c2357505f5b90810190601f840160051c035f5b818110156104aa575f83820155600101611c31565b67ffffffffffffffff831115611c5e57611c5e6118f4565b611c7283611c6c8354611adf565b83611bf8565b5f601f841160018114611ca3575f8515611c8c5750838201355b5f19600387901b1c1916600186901b178355610a8e565b5f83815260208120601f198716915b82811015611cd25786850135825560209485019460019092019101611cb2565b5086821015611cee575f1960f88860031b161c19848701351681555b505060018560011b0183555050505050565b602081525f611d13602083018486611b39565b949350505050565b5f82518060208501845e5f920191825250919050565b606081525f611d43606083018661183d565b60208301949094525060400152919050565b634e487b7160e01b5f52602160045260245ffdfe4310712a70355dabd3743ffa2b1e8379be4cee8c986d882251903b0a43e1aeac7935bd0ae54bc31f548c14dba4d37c5c64b3f8ca900cb468fb8abd54d5894f55a2646970667358221220106412a1c846ce38cfc724b103cea1b61ba4a57d16b453f80d39cd043e46b70764736f6c63430008250033",
}

// ClaimsContract is an auto generated Go binding around an Ethereum contract.
type ClaimsContract struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ClaimsContract) GetABI() abi.ABI {
	return c.abi
}

// NewClaimsContract creates a new instance of ClaimsContract.
func NewClaimsContract() *ClaimsContract {
	parsed, err := ClaimsContractMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ClaimsContract{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ClaimsContract) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address usdt, address admin, address governor, address claimCreator) returns()
func (claimsContract *ClaimsContract) PackConstructor(usdt common.Address, admin common.Address, governor common.Address, claimCreator common.Address) []byte {
	enc, err := claimsContract.abi.Pack("", usdt, admin, governor, claimCreator)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackCLAIMCREATORROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe2865580.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_CREATOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) PackCLAIMCREATORROLE() []byte {
	enc, err := claimsContract.abi.Pack("CLAIM_CREATOR_ROLE")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMCREATORROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe2865580.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_CREATOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackCLAIMCREATORROLE() ([]byte, error) {
	return claimsContract.abi.Pack("CLAIM_CREATOR_ROLE")
}

// UnpackCLAIMCREATORROLE is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe2865580.
//
// Solidity: function CLAIM_CREATOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackCLAIMCREATORROLE(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("CLAIM_CREATOR_ROLE", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCLAIMTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6b0509b1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_TYPEHASH() view returns(bytes32)
func (claimsContract *ClaimsContract) PackCLAIMTYPEHASH() []byte {
	enc, err := claimsContract.abi.Pack("CLAIM_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6b0509b1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_TYPEHASH() view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackCLAIMTYPEHASH() ([]byte, error) {
	return claimsContract.abi.Pack("CLAIM_TYPEHASH")
}

// UnpackCLAIMTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6b0509b1.
//
// Solidity: function CLAIM_TYPEHASH() view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackCLAIMTYPEHASH(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("CLAIM_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackDEFAULTADMINROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa217fddf.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function DEFAULT_ADMIN_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) PackDEFAULTADMINROLE() []byte {
	enc, err := claimsContract.abi.Pack("DEFAULT_ADMIN_ROLE")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDEFAULTADMINROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa217fddf.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function DEFAULT_ADMIN_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackDEFAULTADMINROLE() ([]byte, error) {
	return claimsContract.abi.Pack("DEFAULT_ADMIN_ROLE")
}

// UnpackDEFAULTADMINROLE is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa217fddf.
//
// Solidity: function DEFAULT_ADMIN_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackDEFAULTADMINROLE(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("DEFAULT_ADMIN_ROLE", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGOVERNORROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xccc57490.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function GOVERNOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) PackGOVERNORROLE() []byte {
	enc, err := claimsContract.abi.Pack("GOVERNOR_ROLE")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGOVERNORROLE is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xccc57490.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function GOVERNOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackGOVERNORROLE() ([]byte, error) {
	return claimsContract.abi.Pack("GOVERNOR_ROLE")
}

// UnpackGOVERNORROLE is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xccc57490.
//
// Solidity: function GOVERNOR_ROLE() view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackGOVERNORROLE(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("GOVERNOR_ROLE", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackAllocation is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7fdbb0ee.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function allocation(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) PackAllocation(nodeId string) []byte {
	enc, err := claimsContract.abi.Pack("allocation", nodeId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAllocation is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7fdbb0ee.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function allocation(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) TryPackAllocation(nodeId string) ([]byte, error) {
	return claimsContract.abi.Pack("allocation", nodeId)
}

// UnpackAllocation is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7fdbb0ee.
//
// Solidity: function allocation(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) UnpackAllocation(data []byte) (*big.Int, error) {
	out, err := claimsContract.abi.Unpack("allocation", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb6ba3fcd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claim(bytes signature, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) PackClaim(signature []byte, amount *big.Int, deadline *big.Int) []byte {
	enc, err := claimsContract.abi.Pack("claim", signature, amount, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb6ba3fcd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claim(bytes signature, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) TryPackClaim(signature []byte, amount *big.Int, deadline *big.Int) ([]byte, error) {
	return claimsContract.abi.Pack("claim", signature, amount, deadline)
}

// PackClaimNode is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01f3d5f2.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claimNode(string nodeId, bytes signature, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) PackClaimNode(nodeId string, signature []byte, amount *big.Int, deadline *big.Int) []byte {
	enc, err := claimsContract.abi.Pack("claimNode", nodeId, signature, amount, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaimNode is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01f3d5f2.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claimNode(string nodeId, bytes signature, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) TryPackClaimNode(nodeId string, signature []byte, amount *big.Int, deadline *big.Int) ([]byte, error) {
	return claimsContract.abi.Pack("claimNode", nodeId, signature, amount, deadline)
}

// PackClaimed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb8945670.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claimed(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) PackClaimed(nodeId string) []byte {
	enc, err := claimsContract.abi.Pack("claimed", nodeId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaimed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb8945670.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claimed(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) TryPackClaimed(nodeId string) ([]byte, error) {
	return claimsContract.abi.Pack("claimed", nodeId)
}

// UnpackClaimed is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb8945670.
//
// Solidity: function claimed(string nodeId) view returns(uint256)
func (claimsContract *ClaimsContract) UnpackClaimed(data []byte) (*big.Int, error) {
	out, err := claimsContract.abi.Unpack("claimed", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackCreateClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x34ef1589.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function createClaim(string nodeId, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) PackCreateClaim(nodeId string, amount *big.Int, deadline *big.Int) []byte {
	enc, err := claimsContract.abi.Pack("createClaim", nodeId, amount, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCreateClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x34ef1589.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function createClaim(string nodeId, uint256 amount, uint256 deadline) returns()
func (claimsContract *ClaimsContract) TryPackCreateClaim(nodeId string, amount *big.Int, deadline *big.Int) ([]byte, error) {
	return claimsContract.abi.Pack("createClaim", nodeId, amount, deadline)
}

// PackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (claimsContract *ClaimsContract) PackEip712Domain() []byte {
	enc, err := claimsContract.abi.Pack("eip712Domain")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (claimsContract *ClaimsContract) TryPackEip712Domain() ([]byte, error) {
	return claimsContract.abi.Pack("eip712Domain")
}

// Eip712DomainOutput serves as a container for the return parameters of contract
// method Eip712Domain.
type Eip712DomainOutput struct {
	Fields            [1]byte
	Name              string
	Version           string
	ChainId           *big.Int
	VerifyingContract common.Address
	Salt              [32]byte
	Extensions        []*big.Int
}

// UnpackEip712Domain is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x84b0196e.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (claimsContract *ClaimsContract) UnpackEip712Domain(data []byte) (Eip712DomainOutput, error) {
	out, err := claimsContract.abi.Unpack("eip712Domain", data)
	outstruct := new(Eip712DomainOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Fields = *abi.ConvertType(out[0], new([1]byte)).(*[1]byte)
	outstruct.Name = *abi.ConvertType(out[1], new(string)).(*string)
	outstruct.Version = *abi.ConvertType(out[2], new(string)).(*string)
	outstruct.ChainId = abi.ConvertType(out[3], new(big.Int)).(*big.Int)
	outstruct.VerifyingContract = *abi.ConvertType(out[4], new(common.Address)).(*common.Address)
	outstruct.Salt = *abi.ConvertType(out[5], new([32]byte)).(*[32]byte)
	outstruct.Extensions = *abi.ConvertType(out[6], new([]*big.Int)).(*[]*big.Int)
	return *outstruct, nil
}

// PackGetRoleAdmin is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x248a9ca3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getRoleAdmin(bytes32 role) view returns(bytes32)
func (claimsContract *ClaimsContract) PackGetRoleAdmin(role [32]byte) []byte {
	enc, err := claimsContract.abi.Pack("getRoleAdmin", role)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetRoleAdmin is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x248a9ca3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getRoleAdmin(bytes32 role) view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackGetRoleAdmin(role [32]byte) ([]byte, error) {
	return claimsContract.abi.Pack("getRoleAdmin", role)
}

// UnpackGetRoleAdmin is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x248a9ca3.
//
// Solidity: function getRoleAdmin(bytes32 role) view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackGetRoleAdmin(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("getRoleAdmin", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGrantRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2f2ff15d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function grantRole(bytes32 role, address account) returns()
func (claimsContract *ClaimsContract) PackGrantRole(role [32]byte, account common.Address) []byte {
	enc, err := claimsContract.abi.Pack("grantRole", role, account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGrantRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2f2ff15d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function grantRole(bytes32 role, address account) returns()
func (claimsContract *ClaimsContract) TryPackGrantRole(role [32]byte, account common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("grantRole", role, account)
}

// PackHasRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x91d14854.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function hasRole(bytes32 role, address account) view returns(bool)
func (claimsContract *ClaimsContract) PackHasRole(role [32]byte, account common.Address) []byte {
	enc, err := claimsContract.abi.Pack("hasRole", role, account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackHasRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x91d14854.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function hasRole(bytes32 role, address account) view returns(bool)
func (claimsContract *ClaimsContract) TryPackHasRole(role [32]byte, account common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("hasRole", role, account)
}

// UnpackHasRole is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x91d14854.
//
// Solidity: function hasRole(bytes32 role, address account) view returns(bool)
func (claimsContract *ClaimsContract) UnpackHasRole(data []byte) (bool, error) {
	out, err := claimsContract.abi.Unpack("hasRole", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackHashClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e8d7209.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function hashClaim(string nodeId, uint256 amount, uint256 deadline) view returns(bytes32)
func (claimsContract *ClaimsContract) PackHashClaim(nodeId string, amount *big.Int, deadline *big.Int) []byte {
	enc, err := claimsContract.abi.Pack("hashClaim", nodeId, amount, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackHashClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e8d7209.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function hashClaim(string nodeId, uint256 amount, uint256 deadline) view returns(bytes32)
func (claimsContract *ClaimsContract) TryPackHashClaim(nodeId string, amount *big.Int, deadline *big.Int) ([]byte, error) {
	return claimsContract.abi.Pack("hashClaim", nodeId, amount, deadline)
}

// UnpackHashClaim is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5e8d7209.
//
// Solidity: function hashClaim(string nodeId, uint256 amount, uint256 deadline) view returns(bytes32)
func (claimsContract *ClaimsContract) UnpackHashClaim(data []byte) ([32]byte, error) {
	out, err := claimsContract.abi.Unpack("hashClaim", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackNodeWallet is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xec9b91a7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function nodeWallet(string nodeId) view returns(address)
func (claimsContract *ClaimsContract) PackNodeWallet(nodeId string) []byte {
	enc, err := claimsContract.abi.Pack("nodeWallet", nodeId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackNodeWallet is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xec9b91a7.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function nodeWallet(string nodeId) view returns(address)
func (claimsContract *ClaimsContract) TryPackNodeWallet(nodeId string) ([]byte, error) {
	return claimsContract.abi.Pack("nodeWallet", nodeId)
}

// UnpackNodeWallet is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xec9b91a7.
//
// Solidity: function nodeWallet(string nodeId) view returns(address)
func (claimsContract *ClaimsContract) UnpackNodeWallet(data []byte) (common.Address, error) {
	out, err := claimsContract.abi.Unpack("nodeWallet", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackOutstanding is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe50d33e3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function outstanding() view returns(uint256)
func (claimsContract *ClaimsContract) PackOutstanding() []byte {
	enc, err := claimsContract.abi.Pack("outstanding")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOutstanding is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe50d33e3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function outstanding() view returns(uint256)
func (claimsContract *ClaimsContract) TryPackOutstanding() ([]byte, error) {
	return claimsContract.abi.Pack("outstanding")
}

// UnpackOutstanding is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe50d33e3.
//
// Solidity: function outstanding() view returns(uint256)
func (claimsContract *ClaimsContract) UnpackOutstanding(data []byte) (*big.Int, error) {
	out, err := claimsContract.abi.Unpack("outstanding", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackPause is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8456cb59.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function pause() returns()
func (claimsContract *ClaimsContract) PackPause() []byte {
	enc, err := claimsContract.abi.Pack("pause")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPause is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8456cb59.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function pause() returns()
func (claimsContract *ClaimsContract) TryPackPause() ([]byte, error) {
	return claimsContract.abi.Pack("pause")
}

// PackPaused is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c975abb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function paused() view returns(bool)
func (claimsContract *ClaimsContract) PackPaused() []byte {
	enc, err := claimsContract.abi.Pack("paused")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPaused is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c975abb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function paused() view returns(bool)
func (claimsContract *ClaimsContract) TryPackPaused() ([]byte, error) {
	return claimsContract.abi.Pack("paused")
}

// UnpackPaused is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5c975abb.
//
// Solidity: function paused() view returns(bool)
func (claimsContract *ClaimsContract) UnpackPaused(data []byte) (bool, error) {
	out, err := claimsContract.abi.Unpack("paused", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackRenounceRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x36568abe.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function renounceRole(bytes32 role, address callerConfirmation) returns()
func (claimsContract *ClaimsContract) PackRenounceRole(role [32]byte, callerConfirmation common.Address) []byte {
	enc, err := claimsContract.abi.Pack("renounceRole", role, callerConfirmation)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRenounceRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x36568abe.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function renounceRole(bytes32 role, address callerConfirmation) returns()
func (claimsContract *ClaimsContract) TryPackRenounceRole(role [32]byte, callerConfirmation common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("renounceRole", role, callerConfirmation)
}

// PackRevokeRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd547741f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokeRole(bytes32 role, address account) returns()
func (claimsContract *ClaimsContract) PackRevokeRole(role [32]byte, account common.Address) []byte {
	enc, err := claimsContract.abi.Pack("revokeRole", role, account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokeRole is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd547741f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokeRole(bytes32 role, address account) returns()
func (claimsContract *ClaimsContract) TryPackRevokeRole(role [32]byte, account common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("revokeRole", role, account)
}

// PackSetNodeWallet is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbcda3d5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setNodeWallet(string nodeId, address wallet) returns()
func (claimsContract *ClaimsContract) PackSetNodeWallet(nodeId string, wallet common.Address) []byte {
	enc, err := claimsContract.abi.Pack("setNodeWallet", nodeId, wallet)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetNodeWallet is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbcda3d5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setNodeWallet(string nodeId, address wallet) returns()
func (claimsContract *ClaimsContract) TryPackSetNodeWallet(nodeId string, wallet common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("setNodeWallet", nodeId, wallet)
}

// PackSupportsInterface is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01ffc9a7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function supportsInterface(bytes4 interfaceId) view returns(bool)
func (claimsContract *ClaimsContract) PackSupportsInterface(interfaceId [4]byte) []byte {
	enc, err := claimsContract.abi.Pack("supportsInterface", interfaceId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSupportsInterface is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01ffc9a7.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function supportsInterface(bytes4 interfaceId) view returns(bool)
func (claimsContract *ClaimsContract) TryPackSupportsInterface(interfaceId [4]byte) ([]byte, error) {
	return claimsContract.abi.Pack("supportsInterface", interfaceId)
}

// UnpackSupportsInterface is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x01ffc9a7.
//
// Solidity: function supportsInterface(bytes4 interfaceId) view returns(bool)
func (claimsContract *ClaimsContract) UnpackSupportsInterface(data []byte) (bool, error) {
	out, err := claimsContract.abi.Unpack("supportsInterface", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function token() view returns(address)
func (claimsContract *ClaimsContract) PackToken() []byte {
	enc, err := claimsContract.abi.Pack("token")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function token() view returns(address)
func (claimsContract *ClaimsContract) TryPackToken() ([]byte, error) {
	return claimsContract.abi.Pack("token")
}

// UnpackToken is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xfc0c546a.
//
// Solidity: function token() view returns(address)
func (claimsContract *ClaimsContract) UnpackToken(data []byte) (common.Address, error) {
	out, err := claimsContract.abi.Unpack("token", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackTotalAllocated is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x45f7f249.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalAllocated() view returns(uint256)
func (claimsContract *ClaimsContract) PackTotalAllocated() []byte {
	enc, err := claimsContract.abi.Pack("totalAllocated")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalAllocated is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x45f7f249.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalAllocated() view returns(uint256)
func (claimsContract *ClaimsContract) TryPackTotalAllocated() ([]byte, error) {
	return claimsContract.abi.Pack("totalAllocated")
}

// UnpackTotalAllocated is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x45f7f249.
//
// Solidity: function totalAllocated() view returns(uint256)
func (claimsContract *ClaimsContract) UnpackTotalAllocated(data []byte) (*big.Int, error) {
	out, err := claimsContract.abi.Unpack("totalAllocated", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackTotalClaimed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd54ad2a1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalClaimed() view returns(uint256)
func (claimsContract *ClaimsContract) PackTotalClaimed() []byte {
	enc, err := claimsContract.abi.Pack("totalClaimed")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalClaimed is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd54ad2a1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalClaimed() view returns(uint256)
func (claimsContract *ClaimsContract) TryPackTotalClaimed() ([]byte, error) {
	return claimsContract.abi.Pack("totalClaimed")
}

// UnpackTotalClaimed is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xd54ad2a1.
//
// Solidity: function totalClaimed() view returns(uint256)
func (claimsContract *ClaimsContract) UnpackTotalClaimed(data []byte) (*big.Int, error) {
	out, err := claimsContract.abi.Unpack("totalClaimed", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackUnpause is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3f4ba83a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function unpause() returns()
func (claimsContract *ClaimsContract) PackUnpause() []byte {
	enc, err := claimsContract.abi.Pack("unpause")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackUnpause is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3f4ba83a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function unpause() returns()
func (claimsContract *ClaimsContract) TryPackUnpause() ([]byte, error) {
	return claimsContract.abi.Pack("unpause")
}

// PackWalletNode is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x258263f9.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function walletNode(address wallet) view returns(string)
func (claimsContract *ClaimsContract) PackWalletNode(wallet common.Address) []byte {
	enc, err := claimsContract.abi.Pack("walletNode", wallet)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWalletNode is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x258263f9.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function walletNode(address wallet) view returns(string)
func (claimsContract *ClaimsContract) TryPackWalletNode(wallet common.Address) ([]byte, error) {
	return claimsContract.abi.Pack("walletNode", wallet)
}

// UnpackWalletNode is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x258263f9.
//
// Solidity: function walletNode(address wallet) view returns(string)
func (claimsContract *ClaimsContract) UnpackWalletNode(data []byte) (string, error) {
	out, err := claimsContract.abi.Unpack("walletNode", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackWithdrawFunds is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x155dd5ee.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function withdrawFunds(uint256 amount) returns()
func (claimsContract *ClaimsContract) PackWithdrawFunds(amount *big.Int) []byte {
	enc, err := claimsContract.abi.Pack("withdrawFunds", amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWithdrawFunds is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x155dd5ee.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function withdrawFunds(uint256 amount) returns()
func (claimsContract *ClaimsContract) TryPackWithdrawFunds(amount *big.Int) ([]byte, error) {
	return claimsContract.abi.Pack("withdrawFunds", amount)
}

// ClaimsContractClaimCreated represents a ClaimCreated event raised by the ClaimsContract contract.
type ClaimsContractClaimCreated struct {
	NodeIdHash [32]byte
	NodeId     string
	Allocation *big.Int
	Deadline   *big.Int
	Raw        *types.Log // Blockchain specific contextual infos
}

const ClaimsContractClaimCreatedEventName = "ClaimCreated"

// ContractEventName returns the user-defined event name.
func (ClaimsContractClaimCreated) ContractEventName() string {
	return ClaimsContractClaimCreatedEventName
}

// UnpackClaimCreatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ClaimCreated(bytes32 indexed nodeIdHash, string nodeId, uint256 allocation, uint256 deadline)
func (claimsContract *ClaimsContract) UnpackClaimCreatedEvent(log *types.Log) (*ClaimsContractClaimCreated, error) {
	event := "ClaimCreated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractClaimCreated)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractClaimed represents a Claimed event raised by the ClaimsContract contract.
type ClaimsContractClaimed struct {
	NodeIdHash [32]byte
	NodeId     string
	Wallet     common.Address
	Paid       *big.Int
	Cumulative *big.Int
	Raw        *types.Log // Blockchain specific contextual infos
}

const ClaimsContractClaimedEventName = "Claimed"

// ContractEventName returns the user-defined event name.
func (ClaimsContractClaimed) ContractEventName() string {
	return ClaimsContractClaimedEventName
}

// UnpackClaimedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Claimed(bytes32 indexed nodeIdHash, string nodeId, address indexed wallet, uint256 paid, uint256 cumulative)
func (claimsContract *ClaimsContract) UnpackClaimedEvent(log *types.Log) (*ClaimsContractClaimed, error) {
	event := "Claimed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractClaimed)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractEIP712DomainChanged represents a EIP712DomainChanged event raised by the ClaimsContract contract.
type ClaimsContractEIP712DomainChanged struct {
	Raw *types.Log // Blockchain specific contextual infos
}

const ClaimsContractEIP712DomainChangedEventName = "EIP712DomainChanged"

// ContractEventName returns the user-defined event name.
func (ClaimsContractEIP712DomainChanged) ContractEventName() string {
	return ClaimsContractEIP712DomainChangedEventName
}

// UnpackEIP712DomainChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event EIP712DomainChanged()
func (claimsContract *ClaimsContract) UnpackEIP712DomainChangedEvent(log *types.Log) (*ClaimsContractEIP712DomainChanged, error) {
	event := "EIP712DomainChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractEIP712DomainChanged)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractFundsWithdrawn represents a FundsWithdrawn event raised by the ClaimsContract contract.
type ClaimsContractFundsWithdrawn struct {
	To     common.Address
	Amount *big.Int
	Raw    *types.Log // Blockchain specific contextual infos
}

const ClaimsContractFundsWithdrawnEventName = "FundsWithdrawn"

// ContractEventName returns the user-defined event name.
func (ClaimsContractFundsWithdrawn) ContractEventName() string {
	return ClaimsContractFundsWithdrawnEventName
}

// UnpackFundsWithdrawnEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event FundsWithdrawn(address indexed to, uint256 amount)
func (claimsContract *ClaimsContract) UnpackFundsWithdrawnEvent(log *types.Log) (*ClaimsContractFundsWithdrawn, error) {
	event := "FundsWithdrawn"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractFundsWithdrawn)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractNodeWalletSet represents a NodeWalletSet event raised by the ClaimsContract contract.
type ClaimsContractNodeWalletSet struct {
	NodeIdHash [32]byte
	NodeId     string
	Wallet     common.Address
	Raw        *types.Log // Blockchain specific contextual infos
}

const ClaimsContractNodeWalletSetEventName = "NodeWalletSet"

// ContractEventName returns the user-defined event name.
func (ClaimsContractNodeWalletSet) ContractEventName() string {
	return ClaimsContractNodeWalletSetEventName
}

// UnpackNodeWalletSetEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event NodeWalletSet(bytes32 indexed nodeIdHash, string nodeId, address indexed wallet)
func (claimsContract *ClaimsContract) UnpackNodeWalletSetEvent(log *types.Log) (*ClaimsContractNodeWalletSet, error) {
	event := "NodeWalletSet"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractNodeWalletSet)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractPaused represents a Paused event raised by the ClaimsContract contract.
type ClaimsContractPaused struct {
	Account common.Address
	Raw     *types.Log // Blockchain specific contextual infos
}

const ClaimsContractPausedEventName = "Paused"

// ContractEventName returns the user-defined event name.
func (ClaimsContractPaused) ContractEventName() string {
	return ClaimsContractPausedEventName
}

// UnpackPausedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Paused(address account)
func (claimsContract *ClaimsContract) UnpackPausedEvent(log *types.Log) (*ClaimsContractPaused, error) {
	event := "Paused"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractPaused)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractRoleAdminChanged represents a RoleAdminChanged event raised by the ClaimsContract contract.
type ClaimsContractRoleAdminChanged struct {
	Role              [32]byte
	PreviousAdminRole [32]byte
	NewAdminRole      [32]byte
	Raw               *types.Log // Blockchain specific contextual infos
}

const ClaimsContractRoleAdminChangedEventName = "RoleAdminChanged"

// ContractEventName returns the user-defined event name.
func (ClaimsContractRoleAdminChanged) ContractEventName() string {
	return ClaimsContractRoleAdminChangedEventName
}

// UnpackRoleAdminChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event RoleAdminChanged(bytes32 indexed role, bytes32 indexed previousAdminRole, bytes32 indexed newAdminRole)
func (claimsContract *ClaimsContract) UnpackRoleAdminChangedEvent(log *types.Log) (*ClaimsContractRoleAdminChanged, error) {
	event := "RoleAdminChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractRoleAdminChanged)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractRoleGranted represents a RoleGranted event raised by the ClaimsContract contract.
type ClaimsContractRoleGranted struct {
	Role    [32]byte
	Account common.Address
	Sender  common.Address
	Raw     *types.Log // Blockchain specific contextual infos
}

const ClaimsContractRoleGrantedEventName = "RoleGranted"

// ContractEventName returns the user-defined event name.
func (ClaimsContractRoleGranted) ContractEventName() string {
	return ClaimsContractRoleGrantedEventName
}

// UnpackRoleGrantedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)
func (claimsContract *ClaimsContract) UnpackRoleGrantedEvent(log *types.Log) (*ClaimsContractRoleGranted, error) {
	event := "RoleGranted"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractRoleGranted)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractRoleRevoked represents a RoleRevoked event raised by the ClaimsContract contract.
type ClaimsContractRoleRevoked struct {
	Role    [32]byte
	Account common.Address
	Sender  common.Address
	Raw     *types.Log // Blockchain specific contextual infos
}

const ClaimsContractRoleRevokedEventName = "RoleRevoked"

// ContractEventName returns the user-defined event name.
func (ClaimsContractRoleRevoked) ContractEventName() string {
	return ClaimsContractRoleRevokedEventName
}

// UnpackRoleRevokedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)
func (claimsContract *ClaimsContract) UnpackRoleRevokedEvent(log *types.Log) (*ClaimsContractRoleRevoked, error) {
	event := "RoleRevoked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractRoleRevoked)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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

// ClaimsContractUnpaused represents a Unpaused event raised by the ClaimsContract contract.
type ClaimsContractUnpaused struct {
	Account common.Address
	Raw     *types.Log // Blockchain specific contextual infos
}

const ClaimsContractUnpausedEventName = "Unpaused"

// ContractEventName returns the user-defined event name.
func (ClaimsContractUnpaused) ContractEventName() string {
	return ClaimsContractUnpausedEventName
}

// UnpackUnpausedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Unpaused(address account)
func (claimsContract *ClaimsContract) UnpackUnpausedEvent(log *types.Log) (*ClaimsContractUnpaused, error) {
	event := "Unpaused"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != claimsContract.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ClaimsContractUnpaused)
	if len(log.Data) > 0 {
		if err := claimsContract.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range claimsContract.abi.Events[event].Inputs {
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
func (claimsContract *ClaimsContract) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["AccessControlBadConfirmation"].ID.Bytes()[:4]) {
		return claimsContract.UnpackAccessControlBadConfirmationError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["AccessControlUnauthorizedAccount"].ID.Bytes()[:4]) {
		return claimsContract.UnpackAccessControlUnauthorizedAccountError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["AllocationDecrease"].ID.Bytes()[:4]) {
		return claimsContract.UnpackAllocationDecreaseError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["AlreadyClaimed"].ID.Bytes()[:4]) {
		return claimsContract.UnpackAlreadyClaimedError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ClaimExpired"].ID.Bytes()[:4]) {
		return claimsContract.UnpackClaimExpiredError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["DeadlinePassed"].ID.Bytes()[:4]) {
		return claimsContract.UnpackDeadlinePassedError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ECDSAInvalidSignature"].ID.Bytes()[:4]) {
		return claimsContract.UnpackECDSAInvalidSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ECDSAInvalidSignatureLength"].ID.Bytes()[:4]) {
		return claimsContract.UnpackECDSAInvalidSignatureLengthError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ECDSAInvalidSignatureS"].ID.Bytes()[:4]) {
		return claimsContract.UnpackECDSAInvalidSignatureSError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["EnforcedPause"].ID.Bytes()[:4]) {
		return claimsContract.UnpackEnforcedPauseError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ExceedsAllocation"].ID.Bytes()[:4]) {
		return claimsContract.UnpackExceedsAllocationError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ExpectedPause"].ID.Bytes()[:4]) {
		return claimsContract.UnpackExpectedPauseError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["InsufficientFreeFunds"].ID.Bytes()[:4]) {
		return claimsContract.UnpackInsufficientFreeFundsError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["InvalidNodeId"].ID.Bytes()[:4]) {
		return claimsContract.UnpackInvalidNodeIdError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["InvalidShortString"].ID.Bytes()[:4]) {
		return claimsContract.UnpackInvalidShortStringError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["InvalidSigner"].ID.Bytes()[:4]) {
		return claimsContract.UnpackInvalidSignerError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["NotNodeWallet"].ID.Bytes()[:4]) {
		return claimsContract.UnpackNotNodeWalletError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ReentrancyGuardReentrantCall"].ID.Bytes()[:4]) {
		return claimsContract.UnpackReentrancyGuardReentrantCallError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["SafeERC20FailedOperation"].ID.Bytes()[:4]) {
		return claimsContract.UnpackSafeERC20FailedOperationError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["StringTooLong"].ID.Bytes()[:4]) {
		return claimsContract.UnpackStringTooLongError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["UnknownWallet"].ID.Bytes()[:4]) {
		return claimsContract.UnpackUnknownWalletError(raw[4:])
	}
	if bytes.Equal(raw[:4], claimsContract.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return claimsContract.UnpackZeroAddressError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// ClaimsContractAccessControlBadConfirmation represents a AccessControlBadConfirmation error raised by the ClaimsContract contract.
type ClaimsContractAccessControlBadConfirmation struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AccessControlBadConfirmation()
func ClaimsContractAccessControlBadConfirmationErrorID() common.Hash {
	return common.HexToHash("0x6697b23232a647058342c0724fe7c415cab25915b54e5dbc03f233173d37b41c")
}

// UnpackAccessControlBadConfirmationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AccessControlBadConfirmation()
func (claimsContract *ClaimsContract) UnpackAccessControlBadConfirmationError(raw []byte) (*ClaimsContractAccessControlBadConfirmation, error) {
	out := new(ClaimsContractAccessControlBadConfirmation)
	if err := claimsContract.abi.UnpackIntoInterface(out, "AccessControlBadConfirmation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractAccessControlUnauthorizedAccount represents a AccessControlUnauthorizedAccount error raised by the ClaimsContract contract.
type ClaimsContractAccessControlUnauthorizedAccount struct {
	Account    common.Address
	NeededRole [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)
func ClaimsContractAccessControlUnauthorizedAccountErrorID() common.Hash {
	return common.HexToHash("0xe2517d3fbfae6f8515ef5ff1ccedc3933ab0cbbda0b492c06eb54ad10ef03b3e")
}

// UnpackAccessControlUnauthorizedAccountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)
func (claimsContract *ClaimsContract) UnpackAccessControlUnauthorizedAccountError(raw []byte) (*ClaimsContractAccessControlUnauthorizedAccount, error) {
	out := new(ClaimsContractAccessControlUnauthorizedAccount)
	if err := claimsContract.abi.UnpackIntoInterface(out, "AccessControlUnauthorizedAccount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractAllocationDecrease represents a AllocationDecrease error raised by the ClaimsContract contract.
type ClaimsContractAllocationDecrease struct {
	Current   *big.Int
	Requested *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AllocationDecrease(uint256 current, uint256 requested)
func ClaimsContractAllocationDecreaseErrorID() common.Hash {
	return common.HexToHash("0x5087938f8fd909ef10fc0d1343434402f1ca7d059c8bc2200178d7e843831388")
}

// UnpackAllocationDecreaseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AllocationDecrease(uint256 current, uint256 requested)
func (claimsContract *ClaimsContract) UnpackAllocationDecreaseError(raw []byte) (*ClaimsContractAllocationDecrease, error) {
	out := new(ClaimsContractAllocationDecrease)
	if err := claimsContract.abi.UnpackIntoInterface(out, "AllocationDecrease", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractAlreadyClaimed represents a AlreadyClaimed error raised by the ClaimsContract contract.
type ClaimsContractAlreadyClaimed struct {
	Amount  *big.Int
	Claimed *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AlreadyClaimed(uint256 amount, uint256 claimed)
func ClaimsContractAlreadyClaimedErrorID() common.Hash {
	return common.HexToHash("0x6bd4745f158d30c043cba14fb71aa75e34ff198858bbcc5c3190e69f18d6dee3")
}

// UnpackAlreadyClaimedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AlreadyClaimed(uint256 amount, uint256 claimed)
func (claimsContract *ClaimsContract) UnpackAlreadyClaimedError(raw []byte) (*ClaimsContractAlreadyClaimed, error) {
	out := new(ClaimsContractAlreadyClaimed)
	if err := claimsContract.abi.UnpackIntoInterface(out, "AlreadyClaimed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractClaimExpired represents a ClaimExpired error raised by the ClaimsContract contract.
type ClaimsContractClaimExpired struct {
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimExpired(uint256 deadline)
func ClaimsContractClaimExpiredErrorID() common.Hash {
	return common.HexToHash("0xf5f3b23065c545069845a9b48e0828868634446543ab5782c8946b4f1b67b919")
}

// UnpackClaimExpiredError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimExpired(uint256 deadline)
func (claimsContract *ClaimsContract) UnpackClaimExpiredError(raw []byte) (*ClaimsContractClaimExpired, error) {
	out := new(ClaimsContractClaimExpired)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ClaimExpired", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractDeadlinePassed represents a DeadlinePassed error raised by the ClaimsContract contract.
type ClaimsContractDeadlinePassed struct {
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DeadlinePassed(uint256 deadline)
func ClaimsContractDeadlinePassedErrorID() common.Hash {
	return common.HexToHash("0xbfb22adfe9d5fa2834e025e2832eac6acdb50f696427fd6da5e7d933cf7e8923")
}

// UnpackDeadlinePassedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DeadlinePassed(uint256 deadline)
func (claimsContract *ClaimsContract) UnpackDeadlinePassedError(raw []byte) (*ClaimsContractDeadlinePassed, error) {
	out := new(ClaimsContractDeadlinePassed)
	if err := claimsContract.abi.UnpackIntoInterface(out, "DeadlinePassed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractECDSAInvalidSignature represents a ECDSAInvalidSignature error raised by the ClaimsContract contract.
type ClaimsContractECDSAInvalidSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ECDSAInvalidSignature()
func ClaimsContractECDSAInvalidSignatureErrorID() common.Hash {
	return common.HexToHash("0xf645eedf0193584640b6b90cb9477e4c95b98636c148a891d4c0a146dc46e75a")
}

// UnpackECDSAInvalidSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ECDSAInvalidSignature()
func (claimsContract *ClaimsContract) UnpackECDSAInvalidSignatureError(raw []byte) (*ClaimsContractECDSAInvalidSignature, error) {
	out := new(ClaimsContractECDSAInvalidSignature)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ECDSAInvalidSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractECDSAInvalidSignatureLength represents a ECDSAInvalidSignatureLength error raised by the ClaimsContract contract.
type ClaimsContractECDSAInvalidSignatureLength struct {
	Length *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ECDSAInvalidSignatureLength(uint256 length)
func ClaimsContractECDSAInvalidSignatureLengthErrorID() common.Hash {
	return common.HexToHash("0xfce698f7e8e5342cd615f641317bc45fe7e1e4a8b0a14dd1383ff8dc9c41917f")
}

// UnpackECDSAInvalidSignatureLengthError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ECDSAInvalidSignatureLength(uint256 length)
func (claimsContract *ClaimsContract) UnpackECDSAInvalidSignatureLengthError(raw []byte) (*ClaimsContractECDSAInvalidSignatureLength, error) {
	out := new(ClaimsContractECDSAInvalidSignatureLength)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ECDSAInvalidSignatureLength", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractECDSAInvalidSignatureS represents a ECDSAInvalidSignatureS error raised by the ClaimsContract contract.
type ClaimsContractECDSAInvalidSignatureS struct {
	S [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ECDSAInvalidSignatureS(bytes32 s)
func ClaimsContractECDSAInvalidSignatureSErrorID() common.Hash {
	return common.HexToHash("0xd78bce0cccb935155ed6428d1c13e50b7f3550fd2b66b9fe266006fea4a5e1eb")
}

// UnpackECDSAInvalidSignatureSError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ECDSAInvalidSignatureS(bytes32 s)
func (claimsContract *ClaimsContract) UnpackECDSAInvalidSignatureSError(raw []byte) (*ClaimsContractECDSAInvalidSignatureS, error) {
	out := new(ClaimsContractECDSAInvalidSignatureS)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ECDSAInvalidSignatureS", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractEnforcedPause represents a EnforcedPause error raised by the ClaimsContract contract.
type ClaimsContractEnforcedPause struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error EnforcedPause()
func ClaimsContractEnforcedPauseErrorID() common.Hash {
	return common.HexToHash("0xd93c0665d6c96d04a8f174024fc4ddd66c250604aff22bbec808de86dd3637e3")
}

// UnpackEnforcedPauseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error EnforcedPause()
func (claimsContract *ClaimsContract) UnpackEnforcedPauseError(raw []byte) (*ClaimsContractEnforcedPause, error) {
	out := new(ClaimsContractEnforcedPause)
	if err := claimsContract.abi.UnpackIntoInterface(out, "EnforcedPause", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractExceedsAllocation represents a ExceedsAllocation error raised by the ClaimsContract contract.
type ClaimsContractExceedsAllocation struct {
	Amount     *big.Int
	Allocation *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ExceedsAllocation(uint256 amount, uint256 allocation)
func ClaimsContractExceedsAllocationErrorID() common.Hash {
	return common.HexToHash("0xe23dac8cbc870651f163d6e81df1fa3c44fdf52a19f76d17f2ca9429b4eed403")
}

// UnpackExceedsAllocationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ExceedsAllocation(uint256 amount, uint256 allocation)
func (claimsContract *ClaimsContract) UnpackExceedsAllocationError(raw []byte) (*ClaimsContractExceedsAllocation, error) {
	out := new(ClaimsContractExceedsAllocation)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ExceedsAllocation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractExpectedPause represents a ExpectedPause error raised by the ClaimsContract contract.
type ClaimsContractExpectedPause struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ExpectedPause()
func ClaimsContractExpectedPauseErrorID() common.Hash {
	return common.HexToHash("0x8dfc202bcfe9a735b559bee70674422512bc5c30f687046ae8778315fb81da44")
}

// UnpackExpectedPauseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ExpectedPause()
func (claimsContract *ClaimsContract) UnpackExpectedPauseError(raw []byte) (*ClaimsContractExpectedPause, error) {
	out := new(ClaimsContractExpectedPause)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ExpectedPause", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractInsufficientFreeFunds represents a InsufficientFreeFunds error raised by the ClaimsContract contract.
type ClaimsContractInsufficientFreeFunds struct {
	Requested *big.Int
	Available *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InsufficientFreeFunds(uint256 requested, uint256 available)
func ClaimsContractInsufficientFreeFundsErrorID() common.Hash {
	return common.HexToHash("0xbf3b4c0c66c9e872ec4e6401eb1ff84d9cccdf3772cd12bb6be82a2610ee22bf")
}

// UnpackInsufficientFreeFundsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InsufficientFreeFunds(uint256 requested, uint256 available)
func (claimsContract *ClaimsContract) UnpackInsufficientFreeFundsError(raw []byte) (*ClaimsContractInsufficientFreeFunds, error) {
	out := new(ClaimsContractInsufficientFreeFunds)
	if err := claimsContract.abi.UnpackIntoInterface(out, "InsufficientFreeFunds", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractInvalidNodeId represents a InvalidNodeId error raised by the ClaimsContract contract.
type ClaimsContractInvalidNodeId struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidNodeId()
func ClaimsContractInvalidNodeIdErrorID() common.Hash {
	return common.HexToHash("0x52793b0b423bd71821948e8d6c9540c7fedf5bcbdfec68a2a52a587fe7acd1cc")
}

// UnpackInvalidNodeIdError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidNodeId()
func (claimsContract *ClaimsContract) UnpackInvalidNodeIdError(raw []byte) (*ClaimsContractInvalidNodeId, error) {
	out := new(ClaimsContractInvalidNodeId)
	if err := claimsContract.abi.UnpackIntoInterface(out, "InvalidNodeId", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractInvalidShortString represents a InvalidShortString error raised by the ClaimsContract contract.
type ClaimsContractInvalidShortString struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidShortString()
func ClaimsContractInvalidShortStringErrorID() common.Hash {
	return common.HexToHash("0xb3512b0c6163e5f0bafab72bb631b9d58cd7a731b082f910338aa21c83d5c274")
}

// UnpackInvalidShortStringError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidShortString()
func (claimsContract *ClaimsContract) UnpackInvalidShortStringError(raw []byte) (*ClaimsContractInvalidShortString, error) {
	out := new(ClaimsContractInvalidShortString)
	if err := claimsContract.abi.UnpackIntoInterface(out, "InvalidShortString", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractInvalidSigner represents a InvalidSigner error raised by the ClaimsContract contract.
type ClaimsContractInvalidSigner struct {
	Recovered common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidSigner(address recovered)
func ClaimsContractInvalidSignerErrorID() common.Hash {
	return common.HexToHash("0xbf18af4376e76b3bc6eff3f06259e7333a989b275646b90af2c119b5bf92ae45")
}

// UnpackInvalidSignerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidSigner(address recovered)
func (claimsContract *ClaimsContract) UnpackInvalidSignerError(raw []byte) (*ClaimsContractInvalidSigner, error) {
	out := new(ClaimsContractInvalidSigner)
	if err := claimsContract.abi.UnpackIntoInterface(out, "InvalidSigner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractNotNodeWallet represents a NotNodeWallet error raised by the ClaimsContract contract.
type ClaimsContractNotNodeWallet struct {
	Caller common.Address
	Wallet common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotNodeWallet(address caller, address wallet)
func ClaimsContractNotNodeWalletErrorID() common.Hash {
	return common.HexToHash("0x019ee277103167206da386d4236044e853651c2753c83f6782483a431c0944a4")
}

// UnpackNotNodeWalletError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotNodeWallet(address caller, address wallet)
func (claimsContract *ClaimsContract) UnpackNotNodeWalletError(raw []byte) (*ClaimsContractNotNodeWallet, error) {
	out := new(ClaimsContractNotNodeWallet)
	if err := claimsContract.abi.UnpackIntoInterface(out, "NotNodeWallet", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractReentrancyGuardReentrantCall represents a ReentrancyGuardReentrantCall error raised by the ClaimsContract contract.
type ClaimsContractReentrancyGuardReentrantCall struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ReentrancyGuardReentrantCall()
func ClaimsContractReentrancyGuardReentrantCallErrorID() common.Hash {
	return common.HexToHash("0x3ee5aeb571de7fc460830b4d0017439a1ca56fb0bc39062227ade4fe4a24c1ca")
}

// UnpackReentrancyGuardReentrantCallError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ReentrancyGuardReentrantCall()
func (claimsContract *ClaimsContract) UnpackReentrancyGuardReentrantCallError(raw []byte) (*ClaimsContractReentrancyGuardReentrantCall, error) {
	out := new(ClaimsContractReentrancyGuardReentrantCall)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ReentrancyGuardReentrantCall", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractSafeERC20FailedOperation represents a SafeERC20FailedOperation error raised by the ClaimsContract contract.
type ClaimsContractSafeERC20FailedOperation struct {
	Token common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SafeERC20FailedOperation(address token)
func ClaimsContractSafeERC20FailedOperationErrorID() common.Hash {
	return common.HexToHash("0x5274afe73c98b4749fc91ffae6b7b574e7842cb2144a159e9377a5f20b32edf9")
}

// UnpackSafeERC20FailedOperationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SafeERC20FailedOperation(address token)
func (claimsContract *ClaimsContract) UnpackSafeERC20FailedOperationError(raw []byte) (*ClaimsContractSafeERC20FailedOperation, error) {
	out := new(ClaimsContractSafeERC20FailedOperation)
	if err := claimsContract.abi.UnpackIntoInterface(out, "SafeERC20FailedOperation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractStringTooLong represents a StringTooLong error raised by the ClaimsContract contract.
type ClaimsContractStringTooLong struct {
	Str string
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error StringTooLong(string str)
func ClaimsContractStringTooLongErrorID() common.Hash {
	return common.HexToHash("0x305a27a93f8e33b7392df0a0f91d6fc63847395853c45991eec52dbf24d72381")
}

// UnpackStringTooLongError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error StringTooLong(string str)
func (claimsContract *ClaimsContract) UnpackStringTooLongError(raw []byte) (*ClaimsContractStringTooLong, error) {
	out := new(ClaimsContractStringTooLong)
	if err := claimsContract.abi.UnpackIntoInterface(out, "StringTooLong", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractUnknownWallet represents a UnknownWallet error raised by the ClaimsContract contract.
type ClaimsContractUnknownWallet struct {
	Wallet common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error UnknownWallet(address wallet)
func ClaimsContractUnknownWalletErrorID() common.Hash {
	return common.HexToHash("0x96b966be234c408bc25596ef8975d3a32a2cc8d296b49f7a1d4fcbebe64f0a26")
}

// UnpackUnknownWalletError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error UnknownWallet(address wallet)
func (claimsContract *ClaimsContract) UnpackUnknownWalletError(raw []byte) (*ClaimsContractUnknownWallet, error) {
	out := new(ClaimsContractUnknownWallet)
	if err := claimsContract.abi.UnpackIntoInterface(out, "UnknownWallet", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimsContractZeroAddress represents a ZeroAddress error raised by the ClaimsContract contract.
type ClaimsContractZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func ClaimsContractZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (claimsContract *ClaimsContract) UnpackZeroAddressError(raw []byte) (*ClaimsContractZeroAddress, error) {
	out := new(ClaimsContractZeroAddress)
	if err := claimsContract.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}
