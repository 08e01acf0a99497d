package devnet

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/tollgate-rpc/tollgate/contracts/simchain"
)

// MaxReorgDepth is the deepest reorganisation Reorg performs.
const MaxReorgDepth = 16

// ReorgResult describes what Reorg did. Block i of Old and block i of New
// have the same number, ForkPoint+1+i; New has one block more than Old.
type ReorgResult struct {
	ChainID uint64 `json:"chainId"`
	Depth   int    `json:"depth"`
	// ForkPoint is the number of the last block both branches share.
	ForkPoint uint64 `json:"forkPoint"`
	// Old are the replaced blocks, ForkPoint+1 … ForkPoint+Depth (the old head last).
	Old []common.Hash `json:"old"`
	// New is the new branch, ForkPoint+1 … ForkPoint+Depth+1 (the new head last).
	New []common.Hash `json:"new"`
	// Reincluded are the transactions of the replaced blocks that the new branch
	// carries again (normally all of them, in its first block); Dropped are the
	// others (normally none).
	Reincluded []common.Hash `json:"reincludedTxs"`
	Dropped    []common.Hash `json:"droppedTxs"`
}

// Reorg replaces the last depth blocks (1 ≤ depth ≤ MaxReorgDepth) of chain
// chainID (137 or 8453) with a new branch of depth+1 blocks forked from the
// block below them, the way a live chain reorganises: afterwards
// eth_getBlockByNumber at each replaced height returns a different block,
// "latest" is one block higher than before, and eth_subscribe newHeads
// subscribers are sent the fork point's header and then every block of the
// new branch (logs subscribers get the replaced blocks' logs with
// removed: true first).
//
// Every new block differs from the one it replaces: its timestamp is later
// (the first new block is at least 1 s after the old head, each next one at
// least 1 s after its parent, so the chain clock ends about depth seconds
// further ahead than plain sealing would leave it) and its prevRandao is
// random.
//
// Transactions of the replaced blocks go back to the pool and are mined again
// in the first block of the new branch (same hashes, new block, new receipts);
// the result lists them. Transactions that arrive while Reorg runs are mined
// in the new branch too. The new branch carries no other transactions: its
// blocks after the first are empty unless a transaction arrives meanwhile.
//
// Reorg stops the chain's block producers (the pending-transaction miner and
// the empty-block ticker) for its duration, a few milliseconds, and restarts
// them after, so nothing else seals a block in between; callers that seal
// blocks themselves (Polygon.Commit, Base.Commit) must not do so concurrently.
// Between the fork and the last new block, eth_blockNumber reports the fork
// point and then each new block in turn, as a node importing the heavier
// branch block by block would. The replaced range never includes the
// finalized block (every 32nd block on the simulated beacon): when it would,
// Reorg first seals empty blocks on the old branch, at most depth of them,
// and replaces the last depth blocks of the longer chain.
//
// ctx bounds the wait before the fork; once the chain is forked, Reorg
// finishes the new branch even if ctx is done meanwhile.
func (d *Devnet) Reorg(ctx context.Context, chainID uint64, depth int) (*ReorgResult, error) {
	if depth < 1 || depth > MaxReorgDepth {
		return nil, fmt.Errorf("devnet: reorg depth %d out of range: 1 to %d blocks", depth, MaxReorgDepth)
	}
	s, ok := d.sealers[chainID]
	if !ok {
		return nil, fmt.Errorf("devnet: no chain %d to reorganise (the dev chains are 137 and 8453)", chainID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("devnet: reorg on a closed dev chain")
	}
	s.stop()
	defer s.start()
	return reorg(ctx, s.c, depth)
}

// reorg does Reorg's work on a chain nothing else seals blocks on.
func reorg(ctx context.Context, c *simchain.Chain, depth int) (*ReorgResult, error) {
	id := c.ChainID().Uint64()
	cl := c.Client()
	res := &ReorgResult{ChainID: id, Depth: depth, Reincluded: []common.Hash{}, Dropped: []common.Hash{}}

	// Fork below the last depth blocks. The fork needs an empty pool, so a
	// transaction that has just arrived is mined first, on the old branch; a
	// range that reaches the finalized block (or the genesis) is moved up by
	// sealing on the old branch too. Either way, look again.
	var (
		old     []*types.Block
		lastErr error
	)
	const maxAttempts = MaxReorgDepth + 32
	for attempt := 0; ; attempt++ {
		if attempt == maxAttempts {
			return nil, fmt.Errorf("devnet: reorg of chain %d: no quiet moment to fork in %d attempts: %w", id, maxAttempts, lastErr)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("devnet: reorg of chain %d: %w", id, err)
		}
		head, err := cl.HeaderByNumber(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("devnet: reorg of chain %d: head: %w", id, err)
		}
		n := head.Number.Uint64()
		if n < finalized(ctx, cl)+uint64(depth) {
			lastErr = errors.New("the last blocks include the finalized one")
			c.Commit()
			continue
		}
		if old, err = blockRange(ctx, cl, n-uint64(depth)+1, n); err != nil {
			return nil, fmt.Errorf("devnet: reorg of chain %d: %w", id, err)
		}
		if err := c.Backend().Fork(old[0].ParentHash()); err != nil {
			lastErr = err // "pending block dirty": transactions arrived
			c.Commit()
			continue
		}
		break
	}
	res.ForkPoint = old[0].NumberU64() - 1

	// The new branch. Past the fork there is no going back: finish it.
	bctx := context.WithoutCancel(ctx)
	prev := old[0].ParentHash()
	for i := 0; i <= depth; i++ {
		c.Commit()
		h, err := cl.HeaderByNumber(bctx, nil)
		if err != nil {
			return nil, fmt.Errorf("devnet: reorg of chain %d: new head: %w", id, err)
		}
		if want := res.ForkPoint + 1 + uint64(i); h.Number.Uint64() != want || h.ParentHash != prev {
			return nil, fmt.Errorf("devnet: reorg of chain %d: block %d of the new branch was not sealed (head %d %s)", id, want, h.Number, h.Hash())
		}
		if i < depth && h.Hash() == old[i].Hash() {
			return nil, fmt.Errorf("devnet: reorg of chain %d: block %d was sealed again with the same hash", id, h.Number)
		}
		prev = h.Hash()
		res.New = append(res.New, prev)
	}

	inNew := map[common.Hash]bool{}
	for _, h := range res.New {
		inNew[h] = true
	}
	for _, b := range old {
		res.Old = append(res.Old, b.Hash())
		for _, tx := range b.Transactions() {
			if r, err := cl.TransactionReceipt(bctx, tx.Hash()); err == nil && inNew[r.BlockHash] {
				res.Reincluded = append(res.Reincluded, tx.Hash())
			} else {
				res.Dropped = append(res.Dropped, tx.Hash())
			}
		}
	}
	return res, nil
}

// finalized returns the number of the finalized block (0 when there is none yet).
func finalized(ctx context.Context, cl simulated.Client) uint64 {
	h, err := cl.HeaderByNumber(ctx, big.NewInt(int64(gethrpc.FinalizedBlockNumber)))
	if err != nil {
		return 0
	}
	return h.Number.Uint64()
}

// blockRange returns the canonical blocks from to to, inclusive.
func blockRange(ctx context.Context, cl simulated.Client, from, to uint64) ([]*types.Block, error) {
	out := make([]*types.Block, 0, to-from+1)
	for n := from; n <= to; n++ {
		b, err := cl.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		if len(out) > 0 && b.ParentHash() != out[len(out)-1].Hash() {
			return nil, fmt.Errorf("block %d does not extend block %d", n, n-1)
		}
		out = append(out, b)
	}
	return out, nil
}
