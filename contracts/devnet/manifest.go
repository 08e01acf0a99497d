package devnet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Manifest is what the dev chain writes to .run/devchain.json for the demo,
// settlementd's dev configuration and tests.
type Manifest struct {
	StartedAt       string    `json:"started_at"`
	BlockIntervalMs int64     `json:"block_interval_ms"`
	Polygon         Polygon   `json:"polygon"`
	Base            Base      `json:"base"`
	Accounts        []Account `json:"accounts"`
	// AdminURL is the admin JSON-RPC endpoint (devchain_reorg), when served (Devnet.ServeAdmin).
	AdminURL string `json:"admin_url,omitempty"`
	// Extra are the chains started by Config.ExtraChains (none by default).
	Extra []Chain `json:"extra_chains,omitempty"`
	Note  string  `json:"note"`
}

// Chain is a plain chain started by Config.ExtraChains: no contracts, the
// dev accounts funded with ETH.
type Chain struct {
	ChainID uint64 `json:"chain_id"`
	RPCURL  string `json:"rpc_url"`
	WSURL   string `json:"ws_url"`
}

// Polygon is the chain-137 part. RevenueVault, ClaimsContract and
// MinDepositUnits are empty on a chain started with TokensOnly.
type Polygon struct {
	ChainID         uint64 `json:"chain_id"`
	RPCURL          string `json:"rpc_url"`
	WSURL           string `json:"ws_url"` // JSON-RPC over WebSocket (eth_subscribe), same port as RPCURL
	USDT            string `json:"usdt"`
	RevenueVault    string `json:"revenue_vault"`
	ClaimsContract  string `json:"claims_contract"`
	MinDepositUnits string `json:"min_deposit_units"`
}

// Base is the chain-8453 part.
type Base struct {
	ChainID uint64 `json:"chain_id"`
	RPCURL  string `json:"rpc_url"`
	WSURL   string `json:"ws_url"` // JSON-RPC over WebSocket (eth_subscribe), same port as RPCURL
	USDC    string `json:"usdc"`
	// BatchSettlement and its ERC-3009 deposit collector sit in the genesis state at the fixed
	// addresses the official x402 batch-settlement clients use.
	BatchSettlement  string `json:"batch_settlement"`
	DepositCollector string `json:"erc3009_deposit_collector"`
}

// Account returns the named dev account.
func (m *Manifest) Account(name string) (Account, error) {
	for _, a := range m.Accounts {
		if a.Name == name {
			return a, nil
		}
	}
	return Account{}, fmt.Errorf("devnet: no dev account %q", name)
}

// Write stores the manifest atomically (readers poll for the file).
func (m *Manifest) Write(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadManifest loads a manifest written by Write.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("devnet: read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("devnet: parse manifest %s: %w", path, err)
	}
	return &m, nil
}
