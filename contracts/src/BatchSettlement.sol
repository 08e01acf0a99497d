// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @notice What a deposit collector does for BatchSettlement: pull `amount` of `token` from `payer`
/// with the payer's signed authorization in `data`, bound to `channelId`, and hand it to the caller.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

/// @title BatchSettlement
/// @notice The channel contract of the x402 `batch-settlement` scheme (EVM binding, coinbase/x402
/// specs/schemes/batch-settlement): a payer deposits once into a channel; the receiver's side collects
/// cumulative EIP-712 vouchers off chain and claims them here in batches (`claim`,
/// `claimWithSignature`), then sweeps everything claimed to the receiver in one transfer (`settle`).
/// Unclaimed escrow goes back to the payer by a cooperative refund (`refund`, `refundWithSignature`) or
/// by the payer's timed withdrawal (`initiateWithdraw`, then `finalizeWithdraw` after the channel's
/// withdraw delay).
/// @dev Written for Tollgate. The official x402 clients expect this contract at the fixed address
/// 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003, so on the dev chain its runtime code is placed there in
/// the genesis state and no constructor ever runs: nothing here may rely on a constructor or on
/// immutables (ReentrancyGuard works from an all-zero slot: only 2 means entered). The EIP-712 domain is therefore computed from block.chainid and address(this) on every
/// use; the channel id is the EIP-712 hash of the channel config, so it binds chain and address too.
/// Amounts are uint128 as in the scheme: `balance` is everything deposited minus what went back to the
/// payer, `totalClaimed` the cumulative amount claimed; `balance - totalClaimed` is the unclaimed escrow.
contract BatchSettlement is Multicall, ReentrancyGuard {
    using SafeERC20 for IERC20;

    struct ChannelConfig {
        address payer;
        address payerAuthorizer; // voucher signer (ECDSA); zero: the payer signs (ERC-1271 allowed)
        address receiver;
        address receiverAuthorizer; // signs claim batches and refunds; never zero
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @dev One row of a claim: the payer's voucher and the cumulative amount to have claimed after it.
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct Channel {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");

    mapping(bytes32 channelId => Channel) public channels;
    mapping(bytes32 channelId => PendingWithdrawal) public pendingWithdrawals;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(address receiver => mapping(address token => ReceiverTotals)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimed, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    event Withdrawn(bytes32 indexed channelId, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount, uint256 nonce);

    error WithdrawDelayOutOfRange(uint40 withdrawDelay);
    error ZeroAmount();
    error ZeroReceiverAuthorizer();
    error DepositNotReceived(uint256 expected, uint256 received);
    error InvalidVoucherSignature(bytes32 channelId);
    error InvalidAuthorizerSignature();
    error ClaimAboveVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount);
    error ClaimAboveBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance);
    error ClaimBelowClaimed(bytes32 channelId, uint128 totalClaimed, uint128 alreadyClaimed);
    error NotReceiverSide(bytes32 channelId, address caller);
    error NotPayerSide(bytes32 channelId, address caller);
    error MixedReceiverAuthorizers();
    error EmptyClaim();
    error WithdrawAboveEscrow(uint128 amount, uint128 unclaimed);
    error NoWithdrawPending(bytes32 channelId);
    error WithdrawDelayNotElapsed(uint40 readyAt);
    error WrongRefundNonce(uint256 expected, uint256 given);

    // ---------------------------------------------------------------- views

    /// @notice The EIP-712 domain separator ("x402 Batch Settlement", "1", this chain, this address).
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice The channel id: the EIP-712 hash of the config under this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _typedHash(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _typedHash(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _typedHash(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice The digest the receiver authorizer signs for `claimWithSignature`.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory rows = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            rows[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH, getChannelId(c.voucher.channel), c.voucher.maxClaimableAmount, c.totalClaimed
                )
            );
        }
        return _typedHash(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(rows)))));
    }

    // ---------------------------------------------------------------- deposit

    /// @notice Deposits `amount` into the channel of `config`, pulled from the payer by `collector`
    /// with the payer's authorization in `collectorData`. Anyone may submit it (a facilitator pays
    /// the gas); the collector binds the authorization to this channel id.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (amount == 0) revert ZeroAmount();
        _checkConfig(config);
        bytes32 id = getChannelId(config);
        IERC20 token = IERC20(config.token);
        uint256 before = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, id, collectorData);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received != amount) revert DepositNotReceived(amount, received);
        Channel storage ch = channels[id];
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelCreated(id, config);
        ch.balance += amount;
        emit Deposited(id, msg.sender, amount, ch.balance);
    }

    // ---------------------------------------------------------------- claims

    /// @notice Claims vouchers; the caller must be the receiver or receiver authorizer of every row.
    function claim(VoucherClaim[] calldata voucherClaims) external {
        if (voucherClaims.length == 0) revert EmptyClaim();
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata cfg = voucherClaims[i].voucher.channel;
            if (msg.sender != cfg.receiver && msg.sender != cfg.receiverAuthorizer) {
                revert NotReceiverSide(getChannelId(cfg), msg.sender);
            }
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Claims vouchers on the strength of the receiver authorizer's EIP-712 `ClaimBatch`
    /// signature over all rows (which must share that authorizer); anyone may relay it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature) external {
        if (voucherClaims.length == 0) revert EmptyClaim();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert MixedReceiverAuthorizers();
        }
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// @dev Raises the channel's totalClaimed to the row's totalClaimed, within the voucher and the
    /// balance. A row at the already-claimed total is a no-op (a batch may repeat a channel's last
    /// claim); a row below it reverts, so an old voucher never lowers anything.
    function _claim(VoucherClaim calldata c) private {
        ChannelConfig calldata cfg = c.voucher.channel;
        bytes32 id = getChannelId(cfg);
        Channel storage ch = channels[id];
        uint128 target = c.totalClaimed;
        if (target > c.voucher.maxClaimableAmount) revert ClaimAboveVoucher(id, target, c.voucher.maxClaimableAmount);
        if (target < ch.totalClaimed) revert ClaimBelowClaimed(id, target, ch.totalClaimed);
        if (target > ch.balance) revert ClaimAboveBalance(id, target, ch.balance);
        if (!_validVoucher(cfg, getVoucherDigest(id, c.voucher.maxClaimableAmount), c.signature)) {
            revert InvalidVoucherSignature(id);
        }
        uint128 delta = target - ch.totalClaimed;
        if (delta == 0) return;
        ch.totalClaimed = target;
        receivers[cfg.receiver][cfg.token].totalClaimed += delta;
        emit Claimed(id, msg.sender, delta, target);
    }

    /// @notice Transfers everything claimed but not yet settled for (receiver, token) to the receiver.
    /// Permissionless: the money can only go to the receiver.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverTotals storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        r.totalSettled = r.totalClaimed;
        if (amount > 0) IERC20(token).safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ---------------------------------------------------------------- refunds and withdrawals

    /// @notice Cooperative refund by the receiver or its authorizer: up to `amount` of the unclaimed
    /// escrow goes back to the payer.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        bytes32 id = getChannelId(config);
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) {
            revert NotReceiverSide(id, msg.sender);
        }
        _refund(config, id, amount);
    }

    /// @notice Cooperative refund relayed by anyone with the receiver authorizer's EIP-712 `Refund`
    /// signature for the channel's current refund nonce.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 id = getChannelId(config);
        if (nonce != refundNonce[id]) revert WrongRefundNonce(refundNonce[id], nonce);
        if (!SignatureChecker.isValidSignatureNow(
                config.receiverAuthorizer, getRefundDigest(id, nonce, amount), receiverAuthorizerSignature
            )) {
            revert InvalidAuthorizerSignature();
        }
        _refund(config, id, amount);
    }

    /// @dev The nonce advances first, so a refund that moves nothing still spends its signature. A
    /// pending withdrawal shrinks by what was refunded, and ends when the refund covers it.
    function _refund(ChannelConfig calldata config, bytes32 id, uint128 amount) private {
        uint256 nonce = refundNonce[id]++;
        Channel storage ch = channels[id];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        if (amount > unclaimed) amount = unclaimed;
        if (amount == 0) return;
        ch.balance -= amount;
        PendingWithdrawal storage w = pendingWithdrawals[id];
        if (w.initiatedAt != 0) {
            if (amount >= w.amount) delete pendingWithdrawals[id];
            else w.amount -= amount;
        }
        IERC20(config.token).safeTransfer(config.payer, amount);
        emit Refunded(id, msg.sender, amount, nonce);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(id, config);
    }

    /// @notice The payer (or its authorizer) starts a timed withdrawal of unclaimed escrow; the
    /// receiver side has the channel's withdraw delay to claim what it is owed.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external {
        bytes32 id = getChannelId(config);
        _onlyPayerSide(config, id);
        if (amount == 0) revert ZeroAmount();
        Channel storage ch = channels[id];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        if (amount > unclaimed) revert WithdrawAboveEscrow(amount, unclaimed);
        uint40 now40 = uint40(block.timestamp);
        pendingWithdrawals[id] = PendingWithdrawal(amount, now40);
        emit WithdrawInitiated(id, amount, now40);
    }

    /// @notice Completes a timed withdrawal after the delay, capped at the escrow still unclaimed.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        bytes32 id = getChannelId(config);
        _onlyPayerSide(config, id);
        PendingWithdrawal memory w = pendingWithdrawals[id];
        if (w.initiatedAt == 0) revert NoWithdrawPending(id);
        uint40 readyAt = w.initiatedAt + config.withdrawDelay;
        if (block.timestamp < readyAt) revert WithdrawDelayNotElapsed(readyAt);
        delete pendingWithdrawals[id];
        Channel storage ch = channels[id];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        uint128 amount = w.amount > unclaimed ? unclaimed : w.amount;
        ch.balance -= amount;
        if (amount > 0) IERC20(config.token).safeTransfer(config.payer, amount);
        emit Withdrawn(id, amount);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(id, config);
    }

    // ---------------------------------------------------------------- internals

    function _typedHash(bytes32 structHash) private view returns (bytes32) {
        return MessageHashUtils.toTypedDataHash(domainSeparator(), structHash);
    }

    function _checkConfig(ChannelConfig calldata config) private pure {
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange(config.withdrawDelay);
        }
        if (config.receiverAuthorizer == address(0)) revert ZeroReceiverAuthorizer();
    }

    function _onlyPayerSide(ChannelConfig calldata config, bytes32 id) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer))
        {
            revert NotPayerSide(id, msg.sender);
        }
    }

    /// @dev A set payer authorizer is an EOA and must have signed (plain ECDSA); otherwise the payer
    /// itself, which may be a contract wallet (ERC-1271).
    function _validVoucher(ChannelConfig calldata cfg, bytes32 digest, bytes calldata sig) private view returns (bool) {
        if (cfg.payerAuthorizer != address(0)) {
            (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, sig);
            return err == ECDSA.RecoverError.NoError && signer == cfg.payerAuthorizer;
        }
        return SignatureChecker.isValidSignatureNow(cfg.payer, digest, sig);
    }
}
