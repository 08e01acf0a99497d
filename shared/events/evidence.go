package events

import (
	"encoding/json"
	"errors"
	"strings"
)

// TypeNodeMismatch is the type of a NodeMismatch event.
const TypeNodeMismatch = "node_mismatch"

// MaxEvidenceBytes bounds each answer kept as evidence (a block with its
// transactions fits; a larger answer is not sampled).
const MaxEvidenceBytes = 256 << 10

func init() {
	Register(TypeNodeMismatch, func() Event { return new(NodeMismatch) })
}

// NodeMismatch is the evidence that a registered node answered a
// deterministic question (about a final block, or by hash) differently
// from a trusted upstream: the gateway's verifier asked the same call of a
// configured provider and the canonical answers differ. settlementd stores
// it (node_evidence), quarantines the node and withholds its share for the
// epoch in which it lied. ID identifies the check; the event is idempotent
// on it.
type NodeMismatch struct {
	ID      string `json:"id"`
	TimeMs  int64  `json:"ts"`
	ChainID uint64 `json:"chain_id"`
	NodeID  string `json:"node_id"`
	// RequestID is the caller's request the node answered.
	RequestID string          `json:"request_id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	// Block is the block number the question is pinned to (0 when it is
	// asked by hash).
	Block         uint64          `json:"block"`
	NodeAnswer    json.RawMessage `json:"node_answer"`
	TrustedAnswer json.RawMessage `json:"trusted_answer"`
	// TrustedBy names the configured provider that answered.
	TrustedBy string `json:"trusted_by"`
	// SuspectSinceMs (optional) is when the node's lies may have started
	// (Unix ms, at most TimeMs), e.g. the last answer of the node the
	// verifier found correct: settlement withholds the node's share of every
	// unsettled epoch from min(TimeMs − its lookback, SuspectSinceMs) to
	// TimeMs. 0: the lookback alone.
	SuspectSinceMs int64 `json:"suspect_since_ms,omitempty"`
}

func (e *NodeMismatch) EventType() string { return TypeNodeMismatch }
func (e *NodeMismatch) EventID() string   { return "mismatch:" + e.ID }

// Validate rejects evidence settlement must not act on.
func (e *NodeMismatch) Validate() error {
	switch {
	case e.ID == "" || len(e.ID) > 64:
		return errors.New("node_mismatch: id missing or too long")
	case e.TimeMs <= 0:
		return errors.New("node_mismatch: ts missing")
	case e.NodeID == "" || len(e.NodeID) > 64 || strings.ContainsAny(e.NodeID, " \t\r\n"):
		return errors.New("node_mismatch: node_id missing or malformed")
	case e.ChainID == 0:
		return errors.New("node_mismatch: chain_id missing")
	case e.Method == "" || len(e.Method) > MaxMethodLen:
		return errors.New("node_mismatch: method missing or too long")
	case e.TrustedBy == "" || len(e.TrustedBy) > 64:
		return errors.New("node_mismatch: trusted_by missing or too long")
	case len(e.NodeAnswer) == 0 || len(e.TrustedAnswer) == 0 || !json.Valid(e.NodeAnswer) || !json.Valid(e.TrustedAnswer):
		return errors.New("node_mismatch: both answers are required as JSON")
	case len(e.NodeAnswer) > MaxEvidenceBytes || len(e.TrustedAnswer) > MaxEvidenceBytes || len(e.Params) > MaxEvidenceBytes:
		return errors.New("node_mismatch: evidence too large")
	case len(e.Params) > 0 && !json.Valid(e.Params):
		return errors.New("node_mismatch: params are not JSON")
	}
	return nil
}

var _ Event = (*NodeMismatch)(nil)
