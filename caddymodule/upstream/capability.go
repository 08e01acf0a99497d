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
// upstream is asked three cheap questions.
//
//   - archive: an account's nonce at block 1. A full node has only the
//     last blocks' state and answers "missing trie node" (or another
//     pruned-state error the classifier skips); an archive node answers.
//     Reads of older state (evm.NeedsArchive) go to upstreams that answered.
//   - debug: debug_traceBlockByNumber of the genesis block (no
//     transactions: nothing to trace, so it costs the node nothing).
//   - trace: trace_block of the genesis block (Erigon, Nethermind, Reth).
//
// A -32601 (method not found) is a "no"; an answer is a "yes"; another
// error teaches nothing and is asked again after capabilityEvery; no answer
// at all, next probe. debug_* and trace_*
// calls go only to upstreams that said yes, while any did.
var (
	archiveQuestion = []byte(`{"jsonrpc":"2.0","id":3,"method":"eth_getTransactionCount","params":["0x0000000000000000000000000000000000000000","0x1"]}`)
	debugQuestion   = []byte(`{"jsonrpc":"2.0","id":4,"method":"debug_traceBlockByNumber","params":["0x0",{"tracer":"callTracer"}]}`)
	traceQuestion   = []byte(`{"jsonrpc":"2.0","id":5,"method":"trace_block","params":["0x0"]}`)
)

// capabilityEvery is how often a capability is asked again: a node may be
// resynced as archive, or pruned, or restarted with other APIs.
const capabilityEvery = 10 * time.Minute

// What a member is known to support.
const (
	capUnknown int32 = iota
	capYes
	capNo
)

// Capability names a thing an upstream may or may not serve.
type Capability int

// The capabilities probing finds.
const (
	CapArchive Capability = iota
	CapDebug
	CapTrace
	numCaps
)

type capabilities struct {
	known   [numCaps]atomic.Int32
	checked [numCaps]atomic.Int64 // unix ns of the last answer
}

var capQuestions = [numCaps][]byte{CapArchive: archiveQuestion, CapDebug: debugQuestion, CapTrace: traceQuestion}

// probeCapabilities asks m each question that is due.
func (p *Pool) probeCapabilities(ctx context.Context, m *member, now time.Time) {
	for c := Capability(0); c < numCaps; c++ {
		if last := m.caps.checked[c].Load(); last != 0 && now.Sub(time.Unix(0, last)) < capabilityEvery {
			continue
		}
		x := m.post(ctx, capQuestions[c], probeMaxBytes)
		if x.err != nil || x.status != 200 {
			continue // nothing learnt; asked again next probe
		}
		var it probeItem
		if json.Unmarshal(bytes.TrimSpace(x.body), &it) != nil {
			continue
		}
		switch {
		case it.Error == nil && len(it.Result) > 0:
			m.caps.known[c].Store(capYes)
		case it.Error != nil && c == CapArchive && p.cfg.Classifier(*it.Error) == VerdictSkip:
			m.caps.known[c].Store(capNo)
		case it.Error != nil && c != CapArchive && it.Error.Code == -32601:
			m.caps.known[c].Store(capNo)
		}
		// An answer that says neither (a plan that refuses debug with its
		// own error) is not asked again before capabilityEvery: the probe
		// must not spend a provider's quota every few seconds.
		m.caps.checked[c].Store(now.UnixNano())
	}
}

// has reports whether m is known to support c.
func (m *member) has(c Capability) bool { return m.caps.known[c].Load() == capYes }

// capOf is m's capability c for a snapshot: nil while unknown.
func capOf(m *member, c Capability) *bool {
	switch m.caps.known[c].Load() {
	case capYes:
		t := true
		return &t
	case capNo:
		f := false
		return &f
	}
	return nil
}
