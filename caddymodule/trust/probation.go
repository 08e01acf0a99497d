package trust

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// Probation must not depend on providers serving callers:
// once one node holds the whole share, callers' calls reach no provider and
// give nodes in probation no shadow material, so a newcomer would wait
// forever. The gateway therefore asks its own probation questions when
// callers gave too few: a provider answers a small pinned batch about a
// block just below its head (Questions: 2 to 5 calls of seven kinds —
// the block, state of an address active lately, a recent transaction and
// its receipt — in a random order), once, and every node in probation is
// asked the same and judged by that answer (Shadower.OfferEach),
// within the shadow budgets.
//
// Bound: a round every probationTick per chain while a node is in
// probation and callers' calls gave fewer than probationEnough shadows in
// the current second;
// each round can give a node 2 to 5 matches (3.5 on average), so the
// default probation (50 matches over 3 methods) ends in about 15 rounds,
// about 4 s (docs/node-market.md). The providers' cost is 2 to 5 calls per
// round per chain, only while a node is in probation.
const (
	probationTick   = 250 * time.Millisecond
	probationEnough = 16 // callers' shadows a second that make the gateway's own questions unnecessary
	probationBelow  = 2  // the questions are about a block 1 to 2×this below the providers' head
)

// Probation is a chain's own probation questions and their state.
type Probation struct {
	second atomic.Int64 // the unix second shadows are counted in
	count  atomic.Int64 // callers' calls offered as shadow material in it (approximate at the boundary)
	addrs  atomic.Value // []string: senders, recipients and miners of recent blocks, the addresses to ask about
	hashes atomic.Value // []string: transactions of recent blocks, to ask for by hash
	round  atomic.Int64

	chain     chains.Chain
	pool      *upstream.Pool
	methods   *evm.Table
	head      *Head
	finalized func() uint64 // the chain's final head (relay.Chain.Finalized)
}

// NewProbation is chain's probation questions, asked of pool's providers
// about what head has seen.
func NewProbation(chain chains.Chain, pool *upstream.Pool, methods *evm.Table, head *Head, finalized func() uint64) *Probation {
	return &Probation{chain: chain, pool: pool, methods: methods, head: head, finalized: finalized}
}

// NoteShadow counts a caller's call offered as shadow material (hot path:
// two atomic operations).
func (p *Probation) NoteShadow() {
	sec := time.Now().Unix()
	if p.second.Swap(sec) != sec {
		p.count.Store(0)
	}
	p.count.Add(1)
}

// fed: callers' calls gave enough shadow material this second.
func (p *Probation) fed() bool {
	return p.second.Load() == time.Now().Unix() && p.count.Load() >= probationEnough
}

// FeedProbation runs the probation rounds of every chain until ctx ends.
func FeedProbation(ctx context.Context, s *Shadower, ps []*Probation) {
	t := time.NewTicker(probationTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range ps {
			p.ask(ctx, s)
		}
	}
}

// ask asks one batch of probation questions on the chain when a node
// is in probation and callers' calls gave it no material lately.
func (cs *Probation) ask(ctx context.Context, shadower *Shadower) {
	// Only for nodes that would take the questions now: a node backing
	// off after unanswered shadows (one that hangs) costs the providers
	// no rounds while it does.
	if shadower == nil || !shadower.Wants(cs.pool.InProbation()) {
		return
	}
	if cs.fed() {
		return
	}
	head, _, ok := cs.head.Latest()
	if !ok || head < probationBelow {
		return
	}
	// The questions vary so a node cannot tell them from callers' and
	// answer only them honestly: a block 1–4 below the head, the batch's
	// size and methods drawn anew each round (Questions); every 8th
	// round the block comes with its transactions, whose senders,
	// recipients and hashes are the next rounds' material.
	round := cs.round.Add(1)
	n := "0x" + strconv.FormatUint(head-uint64(1+rand.IntN(probationBelow*2)), 16)
	if head < probationBelow*2+1 {
		n = "0x" + strconv.FormatUint(head, 16)
	}
	m := Material{Block: n}
	m.Addrs, _ = cs.addrs.Load().([]string)
	m.Hashes, _ = cs.hashes.Load().([]string)
	calls := Questions(m, round%8 == 1, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	plan := PinCalls(calls, cs.methods, cs.head, cs.finalized(), cs.chain.ID)
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
	for k := range plan.Calls {
		if plan.Calls[k].Method == "eth_getBlockByNumber" && k < len(replies) {
			if as, hs := blockMaterial(replies[k].Result); len(as) > 0 {
				cs.addrs.Store(as)
				cs.hashes.Store(hs)
			}
		}
	}
	shadower.OfferEach(cs.pool, cs.chain.ID, cs.chain.BlockTime, "probation-"+strconv.FormatInt(time.Now().UnixNano(), 36), res.Upstream.Name, plan.Calls, plan.Pins, replies)
}

// blockMaterial is, for a block with its transactions, the miner, the
// senders and recipients (at most 64) and the transactions' hashes (at
// most 64).
func blockMaterial(raw json.RawMessage) (addrs, hashes []string) {
	var b struct {
		Miner        string            `json:"miner"`
		Transactions []json.RawMessage `json:"transactions"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil, nil
	}
	if len(b.Miner) == 42 {
		addrs = append(addrs, b.Miner)
	}
	for _, t := range b.Transactions {
		var tx struct {
			Hash string `json:"hash"`
			From string `json:"from"`
			To   string `json:"to"`
		}
		if json.Unmarshal(t, &tx) != nil {
			continue // a hash: the block came without its transactions
		}
		for _, a := range []string{tx.From, tx.To} {
			if len(a) == 42 && len(addrs) < 64 {
				addrs = append(addrs, a)
			}
		}
		if len(tx.Hash) == 66 && len(hashes) < 64 {
			hashes = append(hashes, tx.Hash)
		}
	}
	if len(addrs) <= 1 {
		return nil, nil // keep the material of the last full block
	}
	return addrs, hashes
}
