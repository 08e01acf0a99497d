package relay

import (
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// readPlan is everything decided about a part before it is sent, in one
// place and from the method table (evm.Table) and the chain's state:
// which block each call is pinned to and how its answer is judged, who
// may answer (providers only, or nodes too), and how upstream.Pool.Forward
// picks, hedges and retries. The forward then only executes it, and the
// judge reads the same plan afterwards.
type readPlan struct {
	trust  trust.Plan              // pins, and whether a node may answer or be shadowed
	opts   upstream.ForwardOptions // retry, hedge, archive, capabilities, logs span, prefer/only
	capped bool                    // some call's method caps its answer's size (capResponses)
}

// plan decides a part of calls (preferring the upstream named prefer, or
// only the one named only).
func (h *Relay) plan(cs *Chain, calls []jsonrpc.Item, prefer, only string) readPlan {
	noRetry, noHedge, archive, head := false, false, false, cs.pool.BestHead()
	var need []upstream.Capability
	var logsSpan uint64
	capped := false
	for _, c := range calls {
		m := cs.methods.Lookup(c.Method)
		noRetry = noRetry || m.NoRetry // a send is never made twice
		noHedge = noHedge || m.NoHedge
		capped = capped || m.MaxResponseBytes > 0
		if m.MaxBlockRange > 0 { // eth_getLogs: to an upstream that serves its span
			if span, ok, _ := evm.LogsSpan(c.Params, head); ok {
				logsSpan = max(logsSpan, span)
			}
		}
		archive = archive || evm.NeedsArchive(c.Method, c.Params, head, h.Upstreams.ArchiveWindow)
		switch m.Needs {
		case evm.NeedsDebug:
			need = appendOnce(need, upstream.CapDebug)
		case evm.NeedsTrace:
			need = appendOnce(need, upstream.CapTrace)
		}
	}
	// Trust in nodes (caddymodule/trust): a registered node answers only
	// questions that can be judged, about a definite block. A sticky call
	// (only) goes where its filter lives, unchanged.
	tp := trust.Plan{Calls: calls, NodeOK: true}
	if only == "" && cs.pool.HasNodes() {
		tp = trust.PinCalls(calls, cs.methods, cs.head, cs.finalized(), cs.chain.ID)
	}
	opts := upstream.ForwardOptions{NoRetry: noRetry, Prefer: prefer, Only: only, NeedArchive: archive, Need: need,
		LogsSpan: logsSpan, ProvidersOnly: !tp.NodeOK, NoHedge: noHedge || len(tp.Calls) > maxHedgedCalls}
	if !opts.ProvidersOnly && h.verifier.SendsBusy() && hasSend(tp.Pins) {
		opts.ProvidersOnly = true // a node's send could not be checked now
	}
	return readPlan{trust: tp, opts: opts, capped: capped}
}
