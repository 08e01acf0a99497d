// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title TestUSDT
/// @notice Test stand-in for Tether USD: 6 decimals and an open mint. Never deploy to a production chain.
contract TestUSDT is ERC20 {
    constructor() ERC20("Tether USD", "USDT") {}

    /// @inheritdoc ERC20
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` base units to `to`. Open to anyone: test token only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
