package status

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	shttpx "github.com/tollgate-rpc/tollgate/shared/httpx"
)

// settlement: the forwarding queue (batches and closed epochs not yet in
// one), on-chain allocations per node against what nodes earned, claim
// signatures outstanding and the solvency state. Public: amounts, node ids
// and wallets that are on chain anyway; no keys, no API-key accounts.
func (s *Service) settlement(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	out := map[string]any{}
	var err error
	q := func(key, sql string, args ...any) {
		if err != nil {
			return
		}
		out[key], err = s.query(ctx, sql, args...)
	}
	q("batches", `SELECT id, chain_id, first_epoch, last_epoch, epochs, claims_units, platform_units, pool_units, state, created_at, forwarded_at
		FROM settlement_batches ORDER BY id DESC LIMIT 20`)
	q("unsettled_epochs", `SELECT e.id, e.ends_at, e.total_units, e.operators_units FROM epochs e
		WHERE e.state = 'CLOSED' AND NOT EXISTS (SELECT 1 FROM settled_epochs s WHERE s.epoch_id = e.id) ORDER BY e.id LIMIT 100`)
	q("allocations", `SELECT ne.node_id, ne.earned AS earned_units, COALESCE(a.allocated_units, 0)::bigint AS allocated_units,
			(ne.earned - COALESCE(a.allocated_units, 0))::bigint AS pending_allocation_units, a.updated_at
		FROM (SELECT node_id, sum(amount_units)::bigint AS earned FROM node_earnings WHERE kind = 'epoch_share' GROUP BY node_id) ne
		LEFT JOIN node_allocations a USING (node_id) ORDER BY ne.node_id LIMIT 500`)
	q("pending_transactions", `SELECT purpose, kind, node_id, amount_units, state, created_at FROM chain_txs WHERE state = 'signed' ORDER BY id LIMIT 100`)
	q("claims", `SELECT id, node_id, wallet, amount_units, cumulative_units, state, deadline, created_at, resolved_at
		FROM claim_signatures WHERE state = 'pending' OR resolved_at > now() - interval '7 days' ORDER BY id DESC LIMIT 100`)
	q("solvency", `SELECT c.paused AS claims_paused, c.reason, c.paused_at, c.unpaused_at, c.onchain_paused,
			l.balance_raw::text AS contract_balance_raw, l.owed_raw::text AS owed_raw, l.solvent, l.block_number, l.checked_at
		FROM claims_state c LEFT JOIN LATERAL (SELECT * FROM solvency_checks ORDER BY id DESC LIMIT 1) l ON true WHERE c.id = 1`)
	if err != nil {
		unavailable(w, "the settlement state")
		return
	}
	if rows, ok := out["solvency"].([]map[string]any); ok && len(rows) == 1 {
		out["solvency"] = rows[0]
	}
	httpx.JSON(w, http.StatusOK, out)
}

// adminOnly gates h behind X-Admin-Token, checked like the gateway checks
// it (shared/httpx.AdminToken: constant-time on SHA-256 sums); without a
// configured token the admin routes do not exist (404, as on the gateway).
func (s *Service) adminOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.admin.Enabled() {
			httpx.Error(w, http.StatusNotFound, "not_found", "no such endpoint")
			return
		}
		if !s.admin.Match(r.Header.Get(shttpx.AdminHeader)) {
			// The presented value is never logged: it may be a near-miss of the real token.
			httpx.Error(w, http.StatusUnauthorized, "invalid_admin_token", "X-Admin-Token is missing or wrong")
			return
		}
		h(w, r)
	})
}

// optional body: {"reason": "...", "by": "..."}; empty body allowed.
func adminBody(w http.ResponseWriter, r *http.Request) (reason, by string, ok bool) {
	var req struct {
		Reason string `json:"reason"`
		By     string `json:"by"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpx.MaxBody))
	if err != nil {
		httpx.Error(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is over 64 KiB")
		return "", "", false
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		if !httpx.Decode(w, r, &req) {
			return "", "", false
		}
	}
	if req.By == "" {
		req.By = "admin"
	}
	if req.Reason == "" {
		req.Reason = "admin action"
	}
	return req.Reason, "admin:" + req.By, true
}

func (s *Service) claimsState(ctx context.Context) (map[string]any, error) {
	rows, err := s.query(ctx, `SELECT paused, reason, incident, paused_at, paused_by, onchain_paused, unpaused_at, unpaused_by FROM claims_state WHERE id = 1`)
	if err != nil || len(rows) != 1 {
		return nil, errors.Join(err, errors.New("no claims_state row"))
	}
	return rows[0], nil
}

func (s *Service) pause(w http.ResponseWriter, r *http.Request) {
	reason, by, ok := adminBody(w, r)
	if !ok {
		return
	}
	var err error
	if s.cfg.Solvency != nil {
		err = s.cfg.Solvency.Pause(r.Context(), by, reason, s.cfg.OnChain)
	} else {
		_, err = s.cfg.Pool.Exec(r.Context(), `UPDATE claims_state SET paused = true, reason = $2, incident = incident + 1, paused_at = now(),
			paused_by = $1, alert_sent_at = now(), updated_at = now() WHERE id = 1 AND NOT paused`, by, "paused by "+by+": "+reason)
	}
	s.answerState(w, r, "pause", err)
}

func (s *Service) unpause(w http.ResponseWriter, r *http.Request) {
	_, by, ok := adminBody(w, r)
	if !ok {
		return
	}
	var err error
	if s.cfg.Solvency != nil {
		err = s.cfg.Solvency.Unpause(r.Context(), by)
	} else {
		_, err = s.cfg.Pool.Exec(r.Context(), `UPDATE claims_state SET paused = false, onchain_paused = false, unpaused_at = now(),
			unpaused_by = $1, updated_at = now() WHERE id = 1 AND paused`, by)
	}
	s.answerState(w, r, "unpause", err)
}

func (s *Service) answerState(w http.ResponseWriter, r *http.Request, what string, err error) {
	if err != nil {
		s.cfg.Log.Error("admin "+what+" failed", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, what+"_failed", err.Error())
		return
	}
	st, err := s.claimsState(r.Context())
	if err != nil {
		unavailable(w, "the claims state")
		return
	}
	s.cfg.Log.Warn("admin "+what+" of claims", zap.Any("state", st["paused"]))
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "claims": st})
}

func (s *Service) runSettlement(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Settle == nil {
		httpx.Error(w, http.StatusServiceUnavailable, "settlement_not_configured", "the settlement job is not configured (chain RPC, treasury and relayer keys)")
		return
	}
	if !s.cfg.IsLeader() {
		httpx.Error(w, http.StatusConflict, "not_leader", "this replica is not the leader; ask the leader (see /health)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	if err := s.cfg.Settle.Run(ctx); err != nil {
		s.cfg.Log.Error("admin settlement run failed", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "settlement_failed", err.Error())
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "duration_ms": time.Since(began).Milliseconds()})
}

func (s *Service) epochs(w http.ResponseWriter, r *http.Request) {
	limit, cur, ok := page(w, r, "cursor", 50, 500)
	if !ok {
		return
	}
	epochs, err := s.query(r.Context(), `SELECT `+epochCols+`, (SELECT batch_id FROM settled_epochs s WHERE s.epoch_id = e.id) AS batch_id
		FROM epochs e WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, cur, limit)
	if err != nil {
		unavailable(w, "epochs")
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"epochs": epochs, "next_cursor": nextCursor(epochs, limit)})
}
