package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
//
// The same probe finds the widest eth_getLogs range each upstream serves
// (probeLogsRange); a wide eth_getLogs goes only to upstreams that serve
// its span, while any does.
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

// logsRungs are the eth_getLogs ranges asked, widest first: the gateway's
// own limit (evm.DefaultMaxLogsRange) and the limits providers commonly
// set. The widest range an upstream answers is its logs range.
var logsRungs = []uint64{10_000, 2_000, 500, 100}

// logsQuestion asks for the logs of the zero address over the span blocks
// ending at head: no contract logs there, so a node with bloom filters
// answers it cheaply, and one that limits ranges refuses it.
func logsQuestion(head, span uint64) []byte {
	from := uint64(0)
	if head+1 > span {
		from = head + 1 - span
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":6,"method":"eth_getLogs","params":[{"fromBlock":"0x%x","toBlock":"0x%x","address":"0x0000000000000000000000000000000000000000"}]}`, from, head)
}

// probeLogsRange finds the widest eth_getLogs range m serves, when due.
// An answer (a list) at a rung sets it; an error moves to the next rung;
// no answer at all leaves it for the next probe. An upstream refusing even
// the narrowest rung is recorded as serving none of them (logsRangeNone).
func (p *Pool) probeLogsRange(ctx context.Context, m *member, head uint64, now time.Time) {
	if head == 0 {
		return
	}
	if last := m.logs.checked.Load(); last != 0 && now.Sub(time.Unix(0, last)) < capabilityEvery {
		return
	}
	found := logsRangeNone
	for _, span := range logsRungs {
		x := m.post(ctx, logsQuestion(head, span), probeMaxBytes)
		if x.err != nil || x.status != 200 {
			return // nothing learnt; asked again next probe
		}
		var it probeItem
		if json.Unmarshal(bytes.TrimSpace(x.body), &it) != nil {
			return
		}
		if it.Error == nil && len(it.Result) > 0 && it.Result[0] == '[' {
			found = span
			break
		}
	}
	m.logs.span.Store(found)
	m.logs.checked.Store(now.UnixNano())
}

// logsRangeNone: the upstream refused every rung.
const logsRangeNone uint64 = 1

// logsRange is what probing found of an upstream's eth_getLogs range.
type logsRange struct {
	span    atomic.Uint64 // 0 unknown, logsRangeNone, or a rung
	checked atomic.Int64  // unix ns of the last answer
}

// servesLogs reports whether m may be given an eth_getLogs of span blocks:
// unknown upstreams may.
func (m *member) servesLogs(span uint64) bool {
	s := m.logs.span.Load()
	return s == 0 || s >= span
}

// logsRangeOf is m's logs range for a snapshot: nil while unknown, 0 when
// it refused every rung.
func logsRangeOf(m *member) *uint64 {
	s := m.logs.span.Load()
	switch s {
	case 0:
		return nil
	case logsRangeNone:
		s = 0
	}
	return &s
}
