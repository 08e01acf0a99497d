package status

import (
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/evidence"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// The operator's review of quarantined nodes, behind
// X-Admin-Token:
//
//   - GET /admin/quarantine: the quarantined nodes with their reason and
//     evidence count, and the latest quarantines and lifts;
//   - GET /admin/nodes/{id}/evidence: a node's evidence, both answers as
//     sent, newest first (cursor: the previous page's next_cursor);
//   - POST /admin/nodes/{id}/unquarantine {"reason", "by"}: lifts the
//     quarantine after review (logged in node_quarantine_log); the node is
//     online again at the gateways' next registry refresh. Money already
//     withheld stays in the pool.

func (s *Service) registryKey() string { return s.cfg.Prefix + registry.NodesKey }

func (s *Service) quarantine(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	nodes, err := s.query(ctx, `SELECT n.node_id, lower(COALESCE(n.wallet, '')) AS wallet, n.status, n.quarantined_at, n.quarantine_reason,
			(SELECT count(*) FROM node_evidence e WHERE e.node_id = n.node_id) AS evidence,
			(SELECT COALESCE(sum(withheld_units), 0) FROM epoch_node_shares s WHERE s.node_id = n.node_id)::bigint AS withheld_units
		FROM nodes n WHERE n.quarantined_at IS NOT NULL ORDER BY n.quarantined_at DESC, n.node_id LIMIT 500`)
	if err != nil {
		unavailable(w, "the quarantined nodes")
		return
	}
	log, err := s.query(ctx, `SELECT id, node_id, action, at, by, reason, evidence_id FROM node_quarantine_log ORDER BY id DESC LIMIT 100`)
	if err != nil {
		unavailable(w, "the quarantine log")
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"nodes": nodes, "log": log})
}

// nodeID answers 404 for an id that is not a node id.
func nodeID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !registry.ValidID(id) {
		httpx.Error(w, http.StatusNotFound, "node_not_found", "no such node")
		return "", false
	}
	return id, true
}

func (s *Service) nodeEvidence(w http.ResponseWriter, r *http.Request) {
	id, ok := nodeID(w, r)
	if !ok {
		return
	}
	items, next, ok := evidence.Page(w, r, s.cfg.Pool, id)
	if !ok {
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"node_id": id, "evidence": items, "next_cursor": next})
}

func (s *Service) unquarantine(w http.ResponseWriter, r *http.Request) {
	id, ok := nodeID(w, r)
	if !ok {
		return
	}
	reason, by, ok := adminBody(w, r)
	if !ok {
		return
	}
	err := evidence.Lift(r.Context(), s.cfg.Pool, s.cfg.Redis, s.registryKey(), id, by, reason)
	published := !errors.Is(err, evidence.ErrNotPublished)
	if !published {
		// The lift is committed; the node prober republishes the record
		// from Postgres at its next run.
		s.cfg.Log.Warn("a lifted quarantine could not be published to the registry yet", zap.String("node", id), zap.Error(err))
		err = nil
	}
	switch {
	case errors.Is(err, evidence.ErrUnknownNode):
		httpx.Error(w, http.StatusNotFound, "node_not_found", "no such node")
		return
	case errors.Is(err, evidence.ErrNotQuarantined):
		httpx.Error(w, http.StatusConflict, "not_quarantined", "the node is not quarantined")
		return
	case err != nil:
		s.cfg.Log.Error("admin unquarantine failed", zap.String("node", id), zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "unquarantine_failed", "the quarantine could not be lifted; try again")
		return
	}
	q, err := evidence.Of(r.Context(), s.cfg.Pool, id)
	if err != nil {
		unavailable(w, "the node")
		return
	}
	s.cfg.Log.Warn("admin lifted a node's quarantine", zap.String("node", id), zap.String("by", by), zap.String("reason", reason))
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "node_id": id, "registry_published": published, "quarantine": q})
}
