// Package bindings holds the generated Go bindings (abigen --v2) for the Tollgate contracts, one
// sub-package per contract. They are generated from the committed artifacts in contracts/build
// (produced by `node build.js`); regenerate with `go generate ./contracts/bindings`.
// contracts/freshness_test.go checks that they match the artifacts byte for byte.
package bindings

//go:generate go tool abigen --v2 --abi ../build/RevenueVault.abi --bin ../build/RevenueVault.bin --pkg revenuevault --type RevenueVault --out revenuevault/revenuevault.go
//go:generate go tool abigen --v2 --abi ../build/ClaimsContract.abi --bin ../build/ClaimsContract.bin --pkg claimscontract --type ClaimsContract --out claimscontract/claimscontract.go
//go:generate go tool abigen --v2 --abi ../build/TestUSDT.abi --bin ../build/TestUSDT.bin --pkg testusdt --type TestUSDT --out testusdt/testusdt.go
//go:generate go tool abigen --v2 --abi ../build/TestUSDC.abi --bin ../build/TestUSDC.bin --pkg testusdc --type TestUSDC --out testusdc/testusdc.go
//go:generate go tool abigen --v2 --abi ../build/BatchSettlement.abi --bin ../build/BatchSettlement.bin --pkg batchsettlement --type BatchSettlement --out batchsettlement/batchsettlement.go
//go:generate go tool abigen --v2 --abi ../build/ERC3009DepositCollector.abi --bin ../build/ERC3009DepositCollector.bin --pkg depositcollector --type ERC3009DepositCollector --out depositcollector/depositcollector.go
