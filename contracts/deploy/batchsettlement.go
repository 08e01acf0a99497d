package deploy

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/core/vm/runtime"
	gethparams "github.com/ethereum/go-ethereum/params"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/batchsettlement"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/depositcollector"
)

// The fixed addresses the official x402 batch-settlement clients and facilitators use
// (BATCH_SETTLEMENT_ADDRESS and ERC3009_DEPOSIT_COLLECTOR_ADDRESS in @x402/evm).
var (
	BatchSettlementAddress  = common.HexToAddress("0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003")
	ERC3009CollectorAddress = common.HexToAddress("0x4020806089470a89826cB9fB1f4059150b550004")
)

// BatchSettlementAlloc returns genesis accounts holding our BatchSettlement and
// ERC3009DepositCollector runtime code at the fixed addresses, so a chain started with it (the
// dev chain, tests) works with the unchanged official client. Neither contract has a constructor
// or immutables; the runtime code is obtained by running each creation bytecode once in a
// throwaway EVM, which is exactly what a deployment would store.
func BatchSettlementAlloc() (types.GenesisAlloc, error) {
	alloc := types.GenesisAlloc{}
	for _, c := range []struct {
		name string
		bin  string
		at   common.Address
	}{
		{"BatchSettlement", batchsettlement.BatchSettlementMetaData.Bin, BatchSettlementAddress},
		{"ERC3009DepositCollector", depositcollector.ERC3009DepositCollectorMetaData.Bin, ERC3009CollectorAddress},
	} {
		code, err := runtimeCode(common.FromHex(c.bin))
		if err != nil {
			return nil, fmt.Errorf("deploy: runtime code of %s: %w", c.name, err)
		}
		alloc[c.at] = types.Account{Code: code, Balance: new(big.Int)}
	}
	return alloc, nil
}

// runtimeCode runs creation bytecode (no constructor arguments) and returns the code it stores.
func runtimeCode(creation []byte) ([]byte, error) {
	cfg := &runtime.Config{ChainConfig: gethparams.MergedTestChainConfig, GasLimit: 30_000_000}
	code, _, _, err := runtime.Create(creation, cfg)
	if err != nil {
		return nil, err
	}
	if len(code) == 0 {
		return nil, fmt.Errorf("creation returned no code")
	}
	return code, nil
}
