package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"time"
)

// Capabilities are found by asking, not by trusting what an operator
// registered: after a healthy probe, and again every capabilityEvery, an
// upstream is asked for an account's nonce at block 1. A full node has
// only the last 128 blocks' state and answers "missing trie node" (or
// another pruned-state error the classifier skips); an archive node
// answers. Calls that read older state (evm.NeedsArchive) go only to
// upstreams that answered, while any does.
var archiveQuestion = []byte(`{"jsonrpc":"2.0","id":3,"method":"eth_getTransactionCount","params":["0x0000000000000000000000000000000000000000","0x1"]}`)

// capabilityEvery is how often a capability is asked again: a node may be
// resynced as archive, or pruned.
const capabilityEvery = 10 * time.Minute

// Archive knowledge of a member.
const (
	archiveUnknown int32 = iota
	archiveYes
	archiveNo
)

type capabilities struct {
	archive atomic.Int32
	checked atomic.Int64 // unix ns of the last answer
}

// probeCapabilities asks m the archive question when it is due.
func (p *Pool) probeCapabilities(ctx context.Context, m *member, now time.Time) {
	if last := m.caps.checked.Load(); last != 0 && now.Sub(time.Unix(0, last)) < capabilityEvery {
		return
	}
	x := m.post(ctx, archiveQuestion, probeMaxBytes)
	if x.err != nil || x.status != 200 {
		return // nothing learnt; asked again next probe
	}
	var it probeItem
	if json.Unmarshal(bytes.TrimSpace(x.body), &it) != nil {
		return
	}
	switch {
	case it.Error == nil && len(it.Result) > 0:
		m.caps.archive.Store(archiveYes)
	case it.Error != nil && p.cfg.Classifier(*it.Error) == VerdictSkip:
		m.caps.archive.Store(archiveNo)
	default:
		return
	}
	m.caps.checked.Store(now.UnixNano())
}

// archiveOf is m's archive capability for a snapshot: nil while unknown.
func archiveOf(m *member) *bool {
	switch m.caps.archive.Load() {
	case archiveYes:
		t := true
		return &t
	case archiveNo:
		f := false
		return &f
	}
	return nil
}
