// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {ERC3009} from "@openzeppelin/contracts/token/ERC20/extensions/draft-ERC3009.sol";

/// @title TestUSDC
/// @notice Test stand-in for Circle's USDC (FiatToken v2.2) for x402 "exact" payments: EIP-3009
/// transferWithAuthorization with random bytes32 nonces, EIP-712 domain ("USD Coin", "2"), 6 decimals,
/// and an open mint. Never deploy to a production chain.
/// @dev Besides the inherited v,r,s `transferWithAuthorization`, it adds the FiatToken v2.2 overload taking
/// a `bytes signature` (checked with SignatureChecker, so ERC-1271 wallets work too). Both share OZ's
/// random-nonce map and validity-window checks. OZ's ERC20TransferAuthorization is deliberately NOT used:
/// its keyed sequential nonces reject the random nonces x402 clients send.
contract TestUSDC is ERC20, EIP712, ERC3009 {
    constructor() ERC20("USD Coin", "USDC") EIP712("USD Coin", "2") {}

    /// @inheritdoc ERC20
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice EIP-712 domain version, as exposed by FiatToken.
    function version() external pure returns (string memory) {
        return "2";
    }

    /// @notice Mints `amount` base units to `to`. Open to anyone: test token only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice EIP-3009 transfer authorised by `from`, with the signature as bytes (65-byte ECDSA
    /// R||S||V or an ERC-1271 contract signature).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        bytes32 hash = _hashTypedDataV4(
            keccak256(abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce))
        );
        if (!SignatureChecker.isValidSignatureNow(from, hash, signature)) {
            revert ERC3009InvalidSignature();
        }
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }

    /// @notice EIP-3009 receive authorised by `from`, with the signature as bytes (FiatToken v2.2's
    /// overload): only `to` may redeem it, so a watcher of the mempool cannot front-run it into a plain
    /// transfer. The x402 batch-settlement deposit collector redeems payers' deposits this way.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        if (to != msg.sender) revert ERC20InvalidReceiver(to);
        bytes32 hash = _hashTypedDataV4(
            keccak256(abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce))
        );
        if (!SignatureChecker.isValidSignatureNow(from, hash, signature)) {
            revert ERC3009InvalidSignature();
        }
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }
}
