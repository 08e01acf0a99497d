// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";

/// @title RevenueVault
/// @notice Accepts prepaid-credit deposits in USDT. The tokens go straight to the treasury; the
/// `Deposited` event tells the Tollgate deposit listener which account to credit.
contract RevenueVault is Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice The deposit amount is below `minimum`.
    error DepositBelowMinimum(uint256 amount, uint256 minimum);
    /// @notice The account id is zero.
    error InvalidAccount();
    /// @notice An address argument is the zero address.
    error ZeroAddress();

    /// @notice `from` deposited `amount` USDT base units for the Tollgate account `account`.
    event Deposited(bytes32 indexed account, address indexed from, uint256 amount);
    /// @notice The minimum deposit changed.
    event MinDepositChanged(uint256 previous, uint256 current);
    /// @notice The treasury changed.
    event TreasuryChanged(address indexed previous, address indexed current);

    /// @notice The deposit token (USDT).
    IERC20 public immutable usdt;
    /// @notice Where deposits are sent.
    address public treasury;
    /// @notice Smallest accepted deposit, in USDT base units (inclusive).
    uint256 public minDeposit;

    constructor(address usdt_, address treasury_, uint256 minDeposit_, address admin) Ownable(admin) {
        if (usdt_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        usdt = IERC20(usdt_);
        treasury = treasury_;
        minDeposit = minDeposit_;
        emit TreasuryChanged(address(0), treasury_);
        emit MinDepositChanged(0, minDeposit_);
    }

    /// @notice Pulls `amount` USDT from the caller to the treasury (approve this contract first) and
    /// credits `account`.
    function deposit(uint256 amount, bytes32 account) external {
        if (account == bytes32(0)) revert InvalidAccount();
        if (amount < minDeposit) revert DepositBelowMinimum(amount, minDeposit);
        usdt.safeTransferFrom(msg.sender, treasury, amount);
        emit Deposited(account, msg.sender, amount);
    }

    /// @notice Sets the minimum deposit (owner only).
    function setMinDeposit(uint256 newMinDeposit) external onlyOwner {
        emit MinDepositChanged(minDeposit, newMinDeposit);
        minDeposit = newMinDeposit;
    }

    /// @notice Sets the treasury (owner only).
    function setTreasury(address newTreasury) external onlyOwner {
        if (newTreasury == address(0)) revert ZeroAddress();
        emit TreasuryChanged(treasury, newTreasury);
        treasury = newTreasury;
    }
}
