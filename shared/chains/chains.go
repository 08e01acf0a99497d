// Package chains is the table of chains Tollgate serves, shared by the gateway
// (routing /rpc/{chain}, stats, health, discovery, the cache's finality,
// subscriptions) and settlementd (node registration, the console).
//
// The table is configuration: five chains are built in (Builtin), and an
// operator adds any EVM chain — or changes a built-in one's description —
// with a Spec, the same fields in the Caddyfile's chain block, the gateway's
// JSON and settlementd's chains file (Build validates them all alike). A
// Table is immutable once built: the gateway builds one per config load and
// settlementd swaps a new one in on SIGHUP (Live), so a lookup is a map read
// with no lock.
package chains

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Chain is one served chain, resolved: every field set.
type Chain struct {
	ID      uint64 `json:"chain_id"`
	Name    string `json:"name"`    // stable lower-case name used in /rpc/{name} and /rpc/stats/{name}
	Display string `json:"display"` // human name
	Testnet bool   `json:"testnet"`
	// Explorer is the block-explorer base URL for links (tx/<hash>,
	// address/<addr>); empty when the operator gave none.
	Explorer string `json:"explorer"`
	// BlockTime is the chain's usual block interval: a subscription that
	// sees no new head for several of them counts as stalled.
	BlockTime time.Duration `json:"-"`
	// Finality is how the gateway's cache tells a final block: a depth
	// below the best head, or the chain's own "finalized" block tag.
	Finality Finality `json:"-"`
	// Currency is the chain's native currency (gas).
	Currency Currency `json:"-"`
}

// Finality is a depth in blocks, or (Tag) the chain's "finalized" block tag.
type Finality struct {
	Depth uint64
	Tag   bool
}

// IsZero reports whether no finality was given.
func (f Finality) IsZero() bool { return f.Depth == 0 && !f.Tag }

// String is the finality as configured: "64" or "tag".
func (f Finality) String() string {
	if f.Tag {
		return "tag"
	}
	return strconv.FormatUint(f.Depth, 10)
}

// ParseFinality reads "64" (a depth of at least 1) or "tag" ("finalized" is
// read as "tag").
func ParseFinality(s string) (Finality, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "tag", "finalized":
		return Finality{Tag: true}, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || n == 0 {
		return Finality{}, fmt.Errorf("finality %q: want a depth in blocks (a positive integer) or tag", s)
	}
	return Finality{Depth: n}, nil
}

// Currency is a chain's native currency.
type Currency struct {
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

// Default is the built-in default chain, served at plain /rpc unless the
// configuration names another; it is also the chain of RevenueVault and
// ClaimsContract (deposits and claims), which configuration does not move.
const Default uint64 = 137

// DefaultFinalityDepth is the built-in chains' finality: blocks below the
// best head the gateway's cache treats as final (its finality_depth option
// changes it for the built-in chains a configuration does not describe).
const DefaultFinalityDepth = 64

// Network returns the CAIP-2 id, e.g. "eip155:8453".
func (c Chain) Network() string { return "eip155:" + strconv.FormatUint(c.ID, 10) }

// HexID is the eth_chainId answer for the chain, e.g. "0x89".
func (c Chain) HexID() string { return "0x" + strconv.FormatUint(c.ID, 16) }

var eth = Currency{Symbol: "ETH", Decimals: 18}

// builtin is the seed's table, default first.
var builtin = []Chain{
	{ID: 137, Name: "polygon", Display: "Polygon PoS", Explorer: "https://polygonscan.com", BlockTime: 2 * time.Second,
		Finality: Finality{Depth: DefaultFinalityDepth}, Currency: Currency{Symbol: "POL", Decimals: 18}},
	{ID: 1, Name: "ethereum", Display: "Ethereum", Explorer: "https://etherscan.io", BlockTime: 12 * time.Second,
		Finality: Finality{Depth: DefaultFinalityDepth}, Currency: eth},
	{ID: 42161, Name: "arbitrum", Display: "Arbitrum One", Explorer: "https://arbiscan.io", BlockTime: 250 * time.Millisecond,
		Finality: Finality{Depth: DefaultFinalityDepth}, Currency: eth},
	{ID: 8453, Name: "base", Display: "Base", Explorer: "https://basescan.org", BlockTime: 2 * time.Second,
		Finality: Finality{Depth: DefaultFinalityDepth}, Currency: eth},
	{ID: 80002, Name: "amoy", Display: "Polygon Amoy", Testnet: true, Explorer: "https://amoy.polygonscan.com", BlockTime: 2 * time.Second,
		Finality: Finality{Depth: DefaultFinalityDepth}, Currency: Currency{Symbol: "POL", Decimals: 18}},
}

var builtinTable = mustBuild(nil, "")

func mustBuild(specs []Spec, def string) *Table {
	t, err := Build(specs, def)
	if err != nil {
		panic(err) // the built-in table is a constant: a test covers it
	}
	return t
}

// Builtin returns the built-in table: the five chains every configuration
// starts from.
func Builtin() *Table { return builtinTable }

// IsBuiltin reports whether id is one of the built-in chains.
func IsBuiltin(id uint64) bool {
	for _, c := range builtin {
		if c.ID == id {
			return true
		}
	}
	return false
}

// Table is a validated, immutable set of chains with one default. Its
// methods never allocate on a hit, so the request path can use them.
type Table struct {
	list   []Chain // default first, then the built-ins, then added chains in configuration order
	byID   map[uint64]int
	byName map[string]int
	ids    string // "137, 1, 42161, 8453, 80002": for messages
	names  string // "polygon, ethereum, …"
}

// All returns the chains, default first. The slice is a copy.
func (t *Table) All() []Chain { return append([]Chain(nil), t.list...) }

// Len is the number of chains.
func (t *Table) Len() int { return len(t.list) }

// Default is the chain served at plain /rpc.
func (t *Table) Default() Chain { return t.list[0] }

// DefaultID is the id of the chain served at plain /rpc (the request path
// reads it: no copy of the Chain).
func (t *Table) DefaultID() uint64 { return t.list[0].ID }

// ByID returns the chain with the given id.
func (t *Table) ByID(id uint64) (Chain, bool) {
	i, ok := t.byID[id]
	if !ok {
		return Chain{}, false
	}
	return t.list[i], true
}

// Lookup resolves a path segment that is either a decimal chain id ("8453")
// or a chain name ("base", case-insensitive).
func (t *Table) Lookup(s string) (Chain, error) {
	if digits(s) { // ParseUint's error on a name would allocate
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Chain{}, fmt.Errorf("unsupported chain id %q", s)
		}
		if c, ok := t.ByID(id); ok {
			return c, nil
		}
		return Chain{}, fmt.Errorf("unsupported chain id %d", id)
	}
	if i, ok := t.byName[s]; ok { // names are stored lower-case: the usual spelling needs no folding
		return t.list[i], nil
	}
	for _, c := range t.list {
		if strings.EqualFold(c.Name, s) {
			return c, nil
		}
	}
	return Chain{}, fmt.Errorf("unknown chain %q", s)
}

// IDs lists the chain ids for messages, default first: "137, 1, 42161".
func (t *Table) IDs() string { return t.ids }

// Names lists the chain names for messages, default first.
func (t *Table) Names() string { return t.names }

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
