// Package contracts holds Tollgate's Solidity contracts and their Go tooling. It has no Go API of
// its own; this package only carries the contract and freshness tests.
//
// Layout:
//
//	src/*.sol          contract sources (RevenueVault, ClaimsContract, TestUSDT, TestUSDC, and the x402
//	                   batch-settlement channel: BatchSettlement, ERC3009DepositCollector)
//	build.js           offline compiler driver (pinned solc-js + OpenZeppelin via package-lock.json)
//	build/             committed artifacts: <Name>.abi, <Name>.bin, inputs.sha256
//	bindings/          abigen --v2 bindings generated from build/ (go generate ./contracts/bindings)
//	simchain/          in-process simulated chain (chosen chain ID, Prague rules, optional HTTP)
//	deploy/            deployment helpers
//	revert/            revert-data decoding for custom errors
//
// Rebuild after editing src/: `npm ci` (once) and `node build.js` in contracts/, then
// `go generate ./contracts/bindings` (the Makefile's `contracts` target is expected to do both).
package contracts
