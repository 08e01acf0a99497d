// Package trust is the gateway's room for trust in registered nodes
// (docs/trust.md): strangers' nodes answer only questions that
// can be judged, about a definite block, and serve callers only after a
// probation of shadow traffic.
//
//   - head.go: the providers' recent chain (number → hash), which pins are
//     made from;
//   - pin.go: the plan for a caller's calls: whether a node may answer them,
//     and the calls rewritten to name a definite block (Pin);
//   - shadow.go: shadow copies of provider-served calls for nodes in
//     probation, bounded per node and per chain, compared with the
//     provider's answer (Shadower).
//
// The ladder a node climbs and its check rate are kept on the pool
// (upstream.TrustConfig); answers are compared by caddymodule/verify.
package trust

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// ringSize is how many recent blocks' hashes a Head keeps: state reads
// that far below the head can still be pinned to a hash (older ones are
// final on every chain we know and are judged as final answers).
const ringSize = 256

// gapFill is the most blocks one poll fetches to fill the ring after the
// head jumped (or walked back after a reorg).
const gapFill = 64

// Head follows the configured providers' chain: the latest block and the
// hashes of recent blocks by number. It asks the providers only (a node
// must never decide what a pin means), off the request path.
type Head struct {
	pool     *upstream.Pool
	interval time.Duration
	log      *zap.Logger

	mu     sync.RWMutex
	head   uint64
	hashes map[uint64]string // number → hash, the providers' canonical view
	// roots are the state roots of the headers the poll fetched (hash →
	// root): a node's state proof is checked against them with no
	// provider call of its own (verify.Prove).
	roots map[string]common.Hash
	// rehash: the providers' latest header rehashes as go-ethereum
	// hashes headers (known once a poll saw one), so a node's block
	// header can be proved by its hash (verify.Prove).
	rehash, rehashKnown bool
}

// NewHead makes a Head for pool, polling every interval once Run starts.
func NewHead(pool *upstream.Pool, interval time.Duration, log *zap.Logger) *Head {
	if log == nil {
		log = zap.NewNop()
	}
	return &Head{pool: pool, interval: interval, log: log, hashes: map[uint64]string{}, roots: map[string]common.Hash{}}
}

// Latest is the providers' head and its hash (ok false until known).
func (h *Head) Latest() (uint64, string, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	hash, ok := h.hashes[h.head]
	return h.head, hash, ok && h.head > 0
}

// HashAt is the providers' hash of block n, if it is recent and known.
func (h *Head) HashAt(n uint64) (string, bool) {
	if h == nil {
		return "", false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	hash, ok := h.hashes[n]
	return hash, ok
}

// StateRoot is the state root of the block with hash h, if a poll fetched
// its header (verify.ChainView).
func (h *Head) StateRoot(hash string) (common.Hash, bool) {
	if h == nil {
		return common.Hash{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	r, ok := h.roots[strings.ToLower(hash)]
	return r, ok
}

// HeadersRehash says whether the providers' headers rehash as
// go-ethereum's do (types.Header.Hash), once a poll has seen one
// (verify.ChainView): only then is a node's block header proved by its
// hash; otherwise blocks are judged by sampling.
func (h *Head) HeadersRehash() (rehash, known bool) {
	if h == nil {
		return false, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.rehash, h.rehashKnown
}

// Run polls until ctx ends. Polling stops costing anything when the pool
// has no node (no pin is needed then).
func (h *Head) Run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		if h.pool.HasNodes() {
			h.Poll(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

type blockHeader struct {
	Number     string      `json:"number"`
	Hash       string      `json:"hash"`
	ParentHash string      `json:"parentHash"`
	StateRoot  common.Hash `json:"stateRoot"`
	raw        json.RawMessage
}

// Poll asks a provider for the latest block, records it, and fills the ring
// below it: blocks skipped since the last poll, and after a reorg (the new
// head's parent is not the hash we hold) the blocks below it again.
func (h *Head) Poll(ctx context.Context) {
	blocks := h.fetch(ctx, []string{"latest"})
	if len(blocks) != 1 {
		return
	}
	top := blocks[0]
	n, ok := providerNumber(top.Number)
	if !ok || top.Hash == "" {
		return
	}
	var hdr types.Header
	rehash := json.Unmarshal(top.raw, &hdr) == nil && strings.EqualFold(hdr.Hash().Hex(), top.Hash)
	h.mu.Lock()
	prev := h.head
	parentKnown := h.hashes[n-1] == top.ParentHash
	h.record(n, top)
	h.rehash, h.rehashKnown = rehash, true
	h.mu.Unlock()

	// What to fetch below the head: the gap since the last poll, or, when
	// the parent link does not match, the recent blocks again (a reorg).
	var want []string
	switch {
	case prev == 0:
		return // first sight: pins start at the head
	case n > prev+1 || !parentKnown:
		from := max(n-min(n, gapFill), 1)
		if parentKnown && prev+1 > from {
			from = prev + 1
		}
		for b := from; b < n; b++ {
			want = append(want, "0x"+strconv.FormatUint(b, 16))
		}
	}
	if len(want) == 0 {
		return
	}
	got := h.fetch(ctx, want)
	h.mu.Lock()
	low := n
	var lowParent string
	for _, b := range got {
		if num, ok := providerNumber(b.Number); ok && num < n {
			h.hashes[num] = b.Hash
			h.keepRoot(b)
			if num < low {
				low, lowParent = num, b.ParentHash
			}
		}
	}
	if held, ok := h.hashes[low-1]; ok && low < n && low > 1 && !strings.EqualFold(held, lowParent) {
		// The reorg went deeper than the refill: the hashes held below it
		// are the replaced branch's (as deep as it went, unknown). Forget
		// them: a height the ring does not hold is asked of a provider
		// (verify), where a replaced hash would be taken as the
		// providers' block there.
		for k := range h.hashes {
			if k < low {
				delete(h.hashes, k)
			}
		}
	}
	h.mu.Unlock()
}

// record sets the head; the caller holds mu.
func (h *Head) record(n uint64, b blockHeader) {
	if n < h.head {
		// The providers' head went back (a reorg to a shorter branch, or
		// another provider): forget the blocks above it.
		for k := range h.hashes {
			if k > n {
				delete(h.hashes, k)
			}
		}
	}
	h.head = n
	h.hashes[n] = b.Hash
	h.keepRoot(b)
	if n > 0 && b.ParentHash != "" {
		h.hashes[n-1] = b.ParentHash
	}
	for k := range h.hashes {
		if k+ringSize < n {
			delete(h.hashes, k)
		}
	}
	if len(h.roots) > 2*ringSize {
		// The roots of blocks that left the ring: a proof at one of them
		// fetches its header once (verify's cache).
		keep := make(map[string]bool, len(h.hashes))
		for _, hash := range h.hashes {
			keep[strings.ToLower(hash)] = true
		}
		for k := range h.roots {
			if !keep[k] {
				delete(h.roots, k)
			}
		}
	}
}

// keepRoot records a fetched header's state root; the caller holds mu.
func (h *Head) keepRoot(b blockHeader) {
	if b.StateRoot != (common.Hash{}) {
		h.roots[strings.ToLower(b.Hash)] = b.StateRoot
	}
}

// fetch asks a provider for the headers of blocks (numbers or tags).
func (h *Head) fetch(ctx context.Context, blocks []string) []blockHeader {
	items := make([]jsonrpc.Item, len(blocks))
	for i, b := range blocks {
		items[i] = jsonrpc.Item{Method: "eth_getBlockByNumber", Params: json.RawMessage(`["` + b + `",false]`), ID: json.RawMessage(strconv.Itoa(i))}
	}
	body, err := jsonrpc.EncodeUpstream(items)
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := h.pool.Forward(cctx, body, upstream.ForwardOptions{ProvidersOnly: true, MaxAttempts: 2})
	if err != nil {
		if ctx.Err() == nil {
			h.log.Debug("head: providers did not answer", zap.Error(err))
		}
		return nil
	}
	replies, _ := jsonrpc.MatchReplies(items, res.Body)
	out := make([]blockHeader, 0, len(replies))
	for _, r := range replies {
		var b blockHeader
		if r.Err != nil || r.Error != nil || json.Unmarshal(r.Result, &b) != nil || b.Hash == "" {
			continue
		}
		b.raw = r.Result
		out = append(out, b)
	}
	return out
}
