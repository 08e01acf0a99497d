package caddymodule

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// refreshRegistry keeps every pool's node set equal to the registry that
// settlementd maintains in Redis. It runs off the request path: a request
// never waits for the registry.
func (h *Handler) refreshRegistry(ctx context.Context) {
	t := time.NewTicker(time.Duration(h.Upstreams.RegistryRefresh))
	defer t.Stop()
	for {
		h.syncNodes(ctx)
		h.trustSync.Run(ctx, h.pools()) // trust.Sync
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pools are every chain's pool.
func (h *Handler) pools() []*upstream.Pool {
	out := make([]*upstream.Pool, 0, len(h.chains))
	for _, cs := range h.chains {
		out = append(out, cs.pool)
	}
	return out
}

func (h *Handler) syncNodes(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	all, err := h.redis.HGetAll(rctx, h.KeyPrefix+registry.NodesKey).Result()
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
		h.followReview(n)
		for cid, cs := range h.chains {
			if n.Serves(cid) {
				per[cid] = append(per[cid], upstream.Upstream{Name: n.ID, URL: n.URL, WSURL: n.WSURL, Kind: upstream.KindNode, NodeID: n.ID, ChainID: cs.chain.ID,
					Operator: n.Wallet})
			}
		}
	}
	for cid, cs := range h.chains {
		if err := cs.pool.SetNodes(per[cid]); err != nil {
			h.logger.Warn("rejecting node set", zap.Uint64("chain_id", cid), zap.Error(err))
		}
	}
}

// followReview carries settlementd's review of a quarantine to this
// gateway's pools: a node this gateway quarantined stays out (its own
// quarantine does not wait for the registry), and once the registry has
// shown it quarantined and then online again — an operator lifted it after
// review (POST /admin/nodes/{id}/unquarantine) — it is lifted here too.
func (h *Handler) followReview(n *registry.Node) {
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
		h.trustSync.Forget(n.ID)
		for _, cs := range h.chains {
			if cs.pool.Unquarantine(n.ID) {
				h.logger.Info("node quarantine lifted after review", zap.Uint64("chain_id", cs.chain.ID), zap.String("node", n.ID))
			}
		}
	}
}
