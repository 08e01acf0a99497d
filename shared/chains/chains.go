// Package chains is the table of chains Tollgate serves, shared by the gateway
// (routing /rpc/{chainId}, stats names) and settlementd (node registration).
package chains

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Chain is one supported chain.
type Chain struct {
	ID      uint64 `json:"chain_id"`
	Name    string `json:"name"`    // stable lower-case name used in /rpc/stats/{name}
	Display string `json:"display"` // human name
	Testnet bool   `json:"testnet"`
	// Explorer is the block-explorer base URL for links (tx/<hash>, address/<addr>).
	Explorer string `json:"explorer"`
	// BlockTime is the chain's usual block interval: a subscription that
	// sees no new head for several of them counts as stalled.
	BlockTime time.Duration `json:"-"`
}

// Default is the chain served at plain /rpc.
const Default uint64 = 137

// Network returns the CAIP-2 id, e.g. "eip155:8453".
func (c Chain) Network() string { return "eip155:" + strconv.FormatUint(c.ID, 10) }

// HexID is the eth_chainId answer for the chain, e.g. "0x89".
func (c Chain) HexID() string { return "0x" + strconv.FormatUint(c.ID, 16) }

var all = []Chain{
	{ID: 137, Name: "polygon", Display: "Polygon PoS", Explorer: "https://polygonscan.com", BlockTime: 2 * time.Second},
	{ID: 1, Name: "ethereum", Display: "Ethereum", Explorer: "https://etherscan.io", BlockTime: 12 * time.Second},
	{ID: 42161, Name: "arbitrum", Display: "Arbitrum One", Explorer: "https://arbiscan.io", BlockTime: 250 * time.Millisecond},
	{ID: 8453, Name: "base", Display: "Base", Explorer: "https://basescan.org", BlockTime: 2 * time.Second},
	{ID: 80002, Name: "amoy", Display: "Polygon Amoy", Testnet: true, Explorer: "https://amoy.polygonscan.com", BlockTime: 2 * time.Second},
}

// All returns the supported chains, default first. The slice is a copy.
func All() []Chain { return append([]Chain(nil), all...) }

// ByID returns the chain with the given id.
func ByID(id uint64) (Chain, bool) {
	for _, c := range all {
		if c.ID == id {
			return c, true
		}
	}
	return Chain{}, false
}

// Lookup resolves a path segment that is either a decimal chain id ("8453")
// or a chain name ("base", case-insensitive).
func Lookup(s string) (Chain, error) {
	if id, err := strconv.ParseUint(s, 10, 64); err == nil {
		if c, ok := ByID(id); ok {
			return c, nil
		}
		return Chain{}, fmt.Errorf("unsupported chain id %d", id)
	}
	for _, c := range all {
		if strings.EqualFold(c.Name, s) {
			return c, nil
		}
	}
	return Chain{}, fmt.Errorf("unknown chain %q", s)
}
