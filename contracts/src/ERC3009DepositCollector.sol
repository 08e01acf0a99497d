// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IDepositCollector} from "./BatchSettlement.sol";

/// @notice FiatToken v2.2's bytes-signature form of EIP-3009 receiveWithAuthorization.
interface IReceiveWithAuthorization {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @title ERC3009DepositCollector
/// @notice The `eip3009` deposit path of the x402 `batch-settlement` scheme: BatchSettlement calls
/// `collect`, which redeems the payer's EIP-3009 ReceiveWithAuthorization (made out to this
/// collector) and passes the tokens on to BatchSettlement. The authorization's nonce must be
/// keccak256(abi.encode(channelId, salt)), so a signed deposit can only fund the channel it was
/// signed for.
/// @dev Written for Tollgate. Official x402 clients sign the authorization to the fixed address
/// 0x4020806089470a89826cB9fB1f4059150b550004, where the dev chain's genesis state places this
/// runtime code; no constructor runs, so BatchSettlement's address is a constant.
contract ERC3009DepositCollector is IDepositCollector {
    using SafeERC20 for IERC20;

    address public constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error OnlyBatchSettlement(address caller);

    /// @param data abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlyBatchSettlement(msg.sender);
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IReceiveWithAuthorization(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        IERC20(token).safeTransfer(msg.sender, amount);
    }
}
