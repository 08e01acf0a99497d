package trust

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Nodes keeps every pool's node set equal to the registry that
// settlementd maintains in Redis, and follows its review of quarantines
// (followReview). Off the request path: a request never waits for it.
func (h *Sync) Nodes(ctx context.Context, pools []*upstream.Pool) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	all, err := h.redis.HGetAll(rctx, h.prefix+registry.NodesKey).Result()
	if err != nil {
		if ctx.Err() == nil {
			h.logger.Warn("node registry unavailable; keeping the current node set", zap.Error(err))
		}
		return
	}
	per := map[uint64][]upstream.Upstream{}
	for id, raw := range all {
		n, err := registry.Decode(raw)
		if err != nil || n.ID != id {
			h.logger.Warn("skipping a malformed registry entry", zap.String("node_id", id), zap.Error(err))
			continue
		}
		h.followReview(n, pools)
		for _, pool := range pools {
			if cid := pool.ChainID(); n.Serves(cid) {
				per[cid] = append(per[cid], upstream.Upstream{Name: n.ID, URL: n.URL, WSURL: n.WSURL, Kind: upstream.KindNode, NodeID: n.ID, ChainID: cid,
					Operator: n.Wallet})
			}
		}
	}
	for _, pool := range pools {
		cid := pool.ChainID()
		if err := pool.SetNodes(per[cid]); err != nil {
			h.logger.Warn("rejecting node set", zap.Uint64("chain_id", cid), zap.Error(err))
		}
	}
}

// followReview carries settlementd's review of a quarantine to this
// gateway's pools: a node this gateway quarantined stays out (its own
// quarantine does not wait for the registry), and once the registry has
// shown it quarantined and then online again — an operator lifted it after
// review (POST /admin/nodes/{id}/unquarantine) — it is lifted here too.
func (h *Sync) followReview(n *registry.Node, pools []*upstream.Pool) {
	switch n.Status {
	case registry.StatusQuarantined:
		if h.reviewed == nil {
			h.reviewed = map[string]bool{}
		}
		h.reviewed[n.ID] = true
	case registry.StatusOnline:
		if !h.reviewed[n.ID] {
			return
		}
		delete(h.reviewed, n.ID)
		h.Forget(n.ID)
		for _, pool := range pools {
			if pool.Unquarantine(n.ID) {
				h.logger.Info("node quarantine lifted after review", zap.Uint64("chain_id", pool.ChainID()), zap.String("node", n.ID))
			}
		}
	}
}
