// Package registry is the node registry record that settlementd writes to
// Redis when an operator registers a node and the gateway reads to route
// traffic. Redis key: <prefix>nodes, a hash from node id to the JSON record.
// A node has a record exactly while it is registered: deregistering it
// (DELETE /api/nodes/{id}) removes the record, and the gateway, which
// rebuilds every pool's node set from the whole hash at each refresh, drops
// it then.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// NodesKey is the hash holding every node, under the deployment's key prefix.
const NodesKey = "nodes"

// Node status values. Only an online node serves; a quarantined node (one
// caught answering unlike a trusted provider, until an admin review lifts
// it) keeps its record so the gateway drops it at its next refresh and
// operators can see why.
const (
	StatusOnline      = "online"
	StatusOffline     = "offline"
	StatusQuarantined = "quarantined"
)

// Node is one registered node.
type Node struct {
	ID     string `json:"id"`
	Wallet string `json:"wallet"`
	Region string `json:"region"`
	Label  string `json:"label,omitempty"`
	URL    string `json:"url"`
	// WSURL is the node's JSON-RPC-over-WebSocket endpoint for
	// eth_subscribe; empty when it offers none.
	WSURL     string   `json:"ws_url,omitempty"`
	ChainIDs  []uint64 `json:"chain_ids"`
	Status    string   `json:"status"`
	UpdatedAt int64    `json:"updated_at"` // unix seconds
}

var idRe = regexp.MustCompile(`^NODE-[A-Z0-9-]{2,16}-[A-Z2-7]{8}$`)

// ValidID reports whether id has the shape NODE-<REGION>-<8 base32 chars>.
func ValidID(id string) bool { return idRe.MatchString(id) }

// Serves reports whether the node is online and serves chain id.
func (n *Node) Serves(id uint64) bool {
	if n.Status != StatusOnline {
		return false
	}
	for _, c := range n.ChainIDs {
		if c == id {
			return true
		}
	}
	return false
}

// Validate rejects records the gateway must not route to.
func (n *Node) Validate() error {
	switch {
	case !ValidID(n.ID):
		return fmt.Errorf("registry: bad node id %q", n.ID)
	case n.URL == "":
		return errors.New("registry: node without url")
	case len(n.ChainIDs) == 0:
		return errors.New("registry: node serves no chain")
	case n.WSURL != "" && !strings.HasPrefix(n.WSURL, "ws://") && !strings.HasPrefix(n.WSURL, "wss://"):
		return errors.New("registry: node ws url is not ws:// or wss://")
	case n.Status != StatusOnline && n.Status != StatusOffline && n.Status != StatusQuarantined:
		return fmt.Errorf("registry: bad status %q", n.Status)
	}
	return nil
}

// Encode returns the hash value for a node.
func Encode(n *Node) (string, error) {
	if err := n.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(n)
	return string(b), err
}

// Decode parses a hash value.
func Decode(s string) (*Node, error) {
	var n Node
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return nil, fmt.Errorf("registry: decode: %w", err)
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return &n, nil
}
