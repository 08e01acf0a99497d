// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @title ClaimsContract
/// @notice Pays node operators their USDT earnings. The platform (CLAIM_CREATOR_ROLE) raises each
/// node's cumulative on-chain allocation with `createClaim` and signs EIP-712
/// `Claim(string nodeId,uint256 amount,uint256 deadline)` messages off chain; the node's registered
/// wallet redeems them with `claim` / `claimNode`. Amounts are cumulative: a claim pays
/// `amount - claimed[nodeId]`, so an older signature can never pay twice.
/// @dev EIP-712 domain: name "TollgateClaims", version "1", chainId, this contract.
contract ClaimsContract is AccessControl, Pausable, ReentrancyGuard, EIP712 {
    using SafeERC20 for IERC20;

    /// @notice May allocate, bind node wallets, and sign claims.
    bytes32 public constant CLAIM_CREATOR_ROLE = keccak256("CLAIM_CREATOR_ROLE");
    /// @notice May withdraw free funds and pause/unpause.
    bytes32 public constant GOVERNOR_ROLE = keccak256("GOVERNOR_ROLE");
    /// @notice EIP-712 type hash of the signed claim.
    bytes32 public constant CLAIM_TYPEHASH = keccak256("Claim(string nodeId,uint256 amount,uint256 deadline)");

    error ZeroAddress();
    error InvalidNodeId();
    error DeadlinePassed(uint256 deadline);
    error AllocationDecrease(uint256 current, uint256 requested);
    error UnknownWallet(address wallet);
    error ClaimExpired(uint256 deadline);
    error NotNodeWallet(address caller, address wallet);
    error InvalidSigner(address recovered);
    error ExceedsAllocation(uint256 amount, uint256 allocation);
    error AlreadyClaimed(uint256 amount, uint256 claimed);
    error InsufficientFreeFunds(uint256 requested, uint256 available);

    event ClaimCreated(bytes32 indexed nodeIdHash, string nodeId, uint256 allocation, uint256 deadline);
    event NodeWalletSet(bytes32 indexed nodeIdHash, string nodeId, address indexed wallet);
    event Claimed(bytes32 indexed nodeIdHash, string nodeId, address indexed wallet, uint256 paid, uint256 cumulative);
    event FundsWithdrawn(address indexed to, uint256 amount);

    /// @notice The payout token (USDT).
    IERC20 public immutable token;

    /// @notice Cumulative amount allocated to each node.
    mapping(string nodeId => uint256) public allocation;
    /// @notice Cumulative amount paid to each node.
    mapping(string nodeId => uint256) public claimed;
    /// @notice The wallet allowed to claim for each node.
    mapping(string nodeId => address) public nodeWallet;
    /// @notice The node id most recently bound to each wallet (used by `claim`).
    mapping(address wallet => string) public walletNode;

    /// @notice Sum of all allocations.
    uint256 public totalAllocated;
    /// @notice Sum of all payouts.
    uint256 public totalClaimed;

    constructor(address usdt, address admin, address governor, address claimCreator)
        EIP712("TollgateClaims", "1")
    {
        if (usdt == address(0) || admin == address(0) || governor == address(0) || claimCreator == address(0)) {
            revert ZeroAddress();
        }
        token = IERC20(usdt);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(GOVERNOR_ROLE, governor);
        _grantRole(CLAIM_CREATOR_ROLE, claimCreator);
    }

    /// @notice Allocated but not yet claimed: what the contract must always be able to pay.
    function outstanding() public view returns (uint256) {
        return totalAllocated - totalClaimed;
    }

    /// @notice The full EIP-712 digest a CLAIM_CREATOR_ROLE key signs for this claim.
    function hashClaim(string calldata nodeId, uint256 amount, uint256 deadline) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(CLAIM_TYPEHASH, keccak256(bytes(nodeId)), amount, deadline)));
    }

    /// @notice Raises `nodeId`'s cumulative allocation to `amount`. Re-sending the current allocation
    /// is a no-op apart from the event; lowering it reverts.
    function createClaim(string calldata nodeId, uint256 amount, uint256 deadline)
        external
        onlyRole(CLAIM_CREATOR_ROLE)
    {
        if (bytes(nodeId).length == 0) revert InvalidNodeId();
        if (block.timestamp > deadline) revert DeadlinePassed(deadline);
        uint256 current = allocation[nodeId];
        if (amount < current) revert AllocationDecrease(current, amount);
        if (amount != current) {
            allocation[nodeId] = amount;
            totalAllocated += amount - current;
        }
        emit ClaimCreated(keccak256(bytes(nodeId)), nodeId, amount, deadline);
    }

    /// @notice Binds `nodeId` to `wallet`. If the node's previous wallet had this node as its
    /// `walletNode`, that entry is cleared.
    function setNodeWallet(string calldata nodeId, address wallet) external onlyRole(CLAIM_CREATOR_ROLE) {
        if (bytes(nodeId).length == 0) revert InvalidNodeId();
        if (wallet == address(0)) revert ZeroAddress();
        address previous = nodeWallet[nodeId];
        if (previous != address(0) && previous != wallet && keccak256(bytes(walletNode[previous])) == keccak256(bytes(nodeId))) {
            delete walletNode[previous];
        }
        nodeWallet[nodeId] = wallet;
        walletNode[wallet] = nodeId;
        emit NodeWalletSet(keccak256(bytes(nodeId)), nodeId, wallet);
    }

    /// @notice Claims for the node most recently bound to the caller's wallet.
    /// @param signature EIP-712 signature of Claim(nodeId, amount, deadline) by a CLAIM_CREATOR_ROLE key.
    /// @param amount Cumulative amount; pays `amount - claimed[nodeId]`.
    function claim(bytes calldata signature, uint256 amount, uint256 deadline) external {
        string memory nodeId = walletNode[msg.sender];
        if (bytes(nodeId).length == 0) revert UnknownWallet(msg.sender);
        _claim(nodeId, signature, amount, deadline);
    }

    /// @notice Claims for `nodeId` (for a wallet that owns several nodes).
    function claimNode(string calldata nodeId, bytes calldata signature, uint256 amount, uint256 deadline) external {
        _claim(nodeId, signature, amount, deadline);
    }

    function _claim(string memory nodeId, bytes calldata signature, uint256 amount, uint256 deadline)
        internal
        nonReentrant
        whenNotPaused
    {
        if (block.timestamp > deadline) revert ClaimExpired(deadline);
        address wallet = nodeWallet[nodeId];
        if (msg.sender != wallet) revert NotNodeWallet(msg.sender, wallet);
        bytes32 nodeIdHash = keccak256(bytes(nodeId));
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(CLAIM_TYPEHASH, nodeIdHash, amount, deadline)));
        address signer = ECDSA.recover(digest, signature);
        if (!hasRole(CLAIM_CREATOR_ROLE, signer)) revert InvalidSigner(signer);
        uint256 allocated = allocation[nodeId];
        if (amount > allocated) revert ExceedsAllocation(amount, allocated);
        uint256 already = claimed[nodeId];
        if (amount <= already) revert AlreadyClaimed(amount, already);

        uint256 paid = amount - already;
        claimed[nodeId] = amount;
        totalClaimed += paid;
        token.safeTransfer(msg.sender, paid);
        emit Claimed(nodeIdHash, nodeId, msg.sender, paid, amount);
    }

    /// @notice Withdraws `amount` to the governor, never below `outstanding()`.
    function withdrawFunds(uint256 amount) external onlyRole(GOVERNOR_ROLE) {
        uint256 balance = token.balanceOf(address(this));
        uint256 owed = outstanding();
        uint256 available = balance > owed ? balance - owed : 0;
        if (amount > available) revert InsufficientFreeFunds(amount, available);
        token.safeTransfer(msg.sender, amount);
        emit FundsWithdrawn(msg.sender, amount);
    }

    /// @notice Stops claims.
    function pause() external onlyRole(GOVERNOR_ROLE) {
        _pause();
    }

    /// @notice Resumes claims.
    function unpause() external onlyRole(GOVERNOR_ROLE) {
        _unpause();
    }
}
