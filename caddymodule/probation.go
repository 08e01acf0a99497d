package caddymodule

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/trust"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// Probation must not depend on providers serving callers (issue 41.6):
// once one node holds the whole share, callers' calls reach no provider and
// give nodes in probation no shadow material, so a newcomer would wait
// forever. The gateway therefore asks its own probation questions when
// callers gave none lately: a provider answers a small pinned batch about a
// block just below its head (the block, a balance, a nonce, a code — four
// methods), once, and every node in probation is asked the same and judged
// by that answer (trust.Shadower.OfferEach), within the shadow budgets.
//
// Bound: a round every probationTick per chain while a node is in
// probation and callers' calls gave fewer than probationEnough shadows in
// the current second;
// each round can give a node up to four matches over four methods, so the
// default probation (50 matches over 3 methods) ends in about 13 rounds,
// about 3–4 s (docs/node-market.md). The providers' cost is four calls per
// round per chain, only while a node is in probation.
const (
	probationTick   = 250 * time.Millisecond
	probationEnough = 16 // callers' shadows a second that make the gateway's own questions unnecessary
	probationBelow  = 2  // blocks below the providers' head: a node in sync has it
)

// probationState is a chain's own probation questions' state.
type probationState struct {
	second atomic.Int64 // the unix second shadows are counted in
	count  atomic.Int64 // callers' calls offered as shadow material in it (approximate at the boundary)
	miner  atomic.Value // string: the last probed block's miner, a busy address to ask about
	round  atomic.Int64
}

// noteShadow counts a caller's call offered as shadow material (hot path:
// two atomic operations).
func (p *probationState) noteShadow() {
	sec := time.Now().Unix()
	if p.second.Swap(sec) != sec {
		p.count.Store(0)
	}
	p.count.Add(1)
}

// fed: callers' calls gave enough shadow material this second.
func (p *probationState) fed() bool {
	return p.second.Load() == time.Now().Unix() && p.count.Load() >= probationEnough
}

// feedProbation runs the probation rounds until ctx ends.
func (h *Handler) feedProbation(ctx context.Context) {
	t := time.NewTicker(probationTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, cs := range h.chains {
			h.probationRound(ctx, cs)
		}
	}
}

// probationRound asks one batch of probation questions on cs when a node
// is in probation and callers' calls gave it no material lately.
func (h *Handler) probationRound(ctx context.Context, cs *chainState) {
	if h.shadower == nil || len(cs.pool.InProbation()) == 0 {
		return
	}
	if cs.probation.fed() {
		return
	}
	head, _, ok := cs.head.Latest()
	if !ok || head < probationBelow {
		return
	}
	n := "0x" + strconv.FormatUint(head-probationBelow, 16)
	addr := "0x0000000000000000000000000000000000000000"
	if m, _ := cs.probation.miner.Load().(string); m != "" && cs.probation.round.Add(1)%2 == 0 {
		addr = m
	}
	q := func(id int, method string, params ...any) jsonrpc.Item {
		p, _ := json.Marshal(params)
		return jsonrpc.Item{ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: p}
	}
	calls := []jsonrpc.Item{q(1, "eth_getBlockByNumber", n, false), q(2, "eth_getBalance", addr, n),
		q(3, "eth_getTransactionCount", addr, n), q(4, "eth_getCode", addr, n)}
	plan := trust.PinCalls(calls, cs.methods, cs.head, cs.finalized(), cs.chain.ID)
	if !plan.Shadow {
		return
	}
	body, err := jsonrpc.EncodeUpstream(plan.Calls)
	if err != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := cs.pool.Forward(cctx, body, upstream.ForwardOptions{ProvidersOnly: true, MaxAttempts: 1})
	if err != nil {
		return
	}
	replies, err := jsonrpc.MatchReplies(plan.Calls, res.Body)
	if err != nil {
		return
	}
	var b struct {
		Miner string `json:"miner"`
	}
	if len(replies) > 0 && json.Unmarshal(replies[0].Result, &b) == nil && len(b.Miner) == 42 {
		cs.probation.miner.Store(b.Miner)
	}
	h.shadower.OfferEach(cs.pool, cs.chain.ID, "probation-"+strconv.FormatInt(time.Now().UnixNano(), 36), res.Upstream.Name, plan.Calls, plan.Pins, replies)
}
