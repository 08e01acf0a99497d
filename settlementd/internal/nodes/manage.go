package nodes

// Operators manage their nodes: GET /api/nodes lists the
// token's wallet's nodes, DELETE /api/nodes/{id} deregisters one.
//
// Deregistration sets status 'deregistered' and deregistered_at in Postgres
// (final: a trigger refuses any later change of either) and removes the
// node's registry record in the same transaction, so the gateway drops it
// from every pool at its next registry refresh. The row stays: earnings
// already credited remain claimable through the earnings and claim routes,
// and the epoch close gives the node no share of revenue it served at or
// after deregistered_at (docs/decisions.md).

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// StatusDeregistered is a node's Postgres status after DELETE
// /api/nodes/{id}; it has no registry record.
const StatusDeregistered = "deregistered"

// MaxList bounds GET /api/nodes (oldest first; truncated says more exist).
const MaxList = 1000

// Managed is a node as its own wallet sees it in GET /api/nodes and the
// DELETE answer.
type Managed struct {
	Node
	DeregisteredAt *string `json:"deregistered_at"`
	LastProbeAt    *string `json:"last_probe_at"`
	LastProbeError *string `json:"last_probe_error"`
	ProbeFailures  int     `json:"probe_failures"`
	// Credited by closed epochs (the earnings route's total_earned);
	// claimable, claimed and reserved are on EarningsURL.
	TotalEarned      money.USDT  `json:"total_earned"`
	TotalEarnedUnits money.Units `json:"total_earned_units,string"`
	LastEpochEarned  *int64      `json:"last_epoch_earned"`
	EarningsURL      string      `json:"earnings_url"`
	// Standing is the wallet's trust on each of the node's chains, as the
	// gateways share it (standing.go): every node of a wallet shows the
	// same, since probation and the ladder's share are the wallet's.
	Standing []Standing `json:"standing,omitempty"`
}

// List is the GET /api/nodes answer.
type List struct {
	Wallet    string     `json:"wallet"`
	Nodes     []*Managed `json:"nodes"`
	Truncated bool       `json:"truncated"`
}

// managedSQL reads nodes with their credited earnings (node_earnings is
// indexed by node id through its unique key).
const managedSQL = `SELECT n.node_id, lower(COALESCE(n.wallet, '')), COALESCE(n.region, ''), COALESCE(n.url, ''), n.chain_ids, n.label,
	n.status, n.created_at, n.deregistered_at, n.last_probe_at, n.last_probe_error, n.probe_failures,
	COALESCE(e.units, 0)::bigint, e.last_epoch, COALESCE(n.ws_url, '')
	FROM nodes n LEFT JOIN LATERAL (SELECT sum(amount_units) AS units, max(epoch_id) AS last_epoch FROM node_earnings
		WHERE node_id = n.node_id AND kind = 'epoch_share') e ON true `

func scanManaged(row pgx.Row) (*Managed, error) {
	var (
		m                Managed
		ids              []int64
		created          time.Time
		dereg, probed    *time.Time
		earned           int64
		failures         int32
		probeErr         *string
		lastEpochEarned  *int64
		wallet, rpc, reg string
	)
	if err := row.Scan(&m.NodeID, &wallet, &reg, &rpc, &ids, &m.Label, &m.Status, &created, &dereg, &probed, &probeErr, &failures,
		&earned, &lastEpochEarned, &m.WSURL); err != nil {
		return nil, err
	}
	m.Wallet, m.Region, m.RPCURL, m.CreatedAt = wallet, reg, rpc, created.UTC().Format(time.RFC3339)
	m.ChainIDs = make([]uint64, 0, len(ids))
	for _, id := range ids {
		m.ChainIDs = append(m.ChainIDs, uint64(id))
	}
	m.DeregisteredAt, m.LastProbeAt = rfc3339(dereg), rfc3339(probed)
	m.LastProbeError, m.ProbeFailures, m.LastEpochEarned = probeErr, int(failures), lastEpochEarned
	m.TotalEarnedUnits = money.Units(earned)
	m.TotalEarned = money.USDT(m.TotalEarnedUnits)
	m.EarningsURL = "/api/nodes/" + m.NodeID + "/earnings"
	return &m, nil
}

func rfc3339(t *time.Time) *string {
	if t == nil {
		return nil
	}
	v := t.UTC().Format(time.RFC3339Nano)
	return &v
}

// ListFor returns wallet's nodes, deregistered ones included (their
// earnings remain claimable), oldest first.
func (s *Service) ListFor(ctx context.Context, wallet string) (*List, error) {
	rows, err := s.cfg.Pool.Query(ctx, managedSQL+`WHERE lower(n.wallet) = $1 ORDER BY n.created_at, n.node_id LIMIT $2`, wallet, MaxList+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &List{Wallet: wallet, Nodes: []*Managed{}}
	for rows.Next() {
		m, err := scanManaged(rows)
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out.Nodes) > MaxList {
		out.Nodes, out.Truncated = out.Nodes[:MaxList], true
	}
	s.addStandings(ctx, wallet, out.Nodes)
	return out, nil
}

func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	l, err := s.ListFor(r.Context(), auth.WalletFrom(r.Context()))
	if err != nil {
		s.cfg.Log.Error("listing nodes failed", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", "the nodes could not be read")
		return
	}
	httpx.JSON(w, http.StatusOK, l)
}

var (
	errNotFound = &apiError{http.StatusNotFound, "node_not_found", "no such node"}
	errNotOwner = &apiError{http.StatusForbidden, "not_node_owner", "this node belongs to another wallet"}
)

// Deregister takes wallet's node id out of service: Postgres first (status,
// deregistered_at), its registry record removed before the commit. changed
// is false when it was already deregistered (the answer is the same node,
// deregistered_at unchanged); the record is removed again then, which heals
// a removal lost to a Redis failure.
func (s *Service) Deregister(ctx context.Context, wallet, id string) (*Managed, bool, error) {
	if !registry.ValidID(id) {
		return nil, false, errNotFound
	}
	var owner, url string
	err := s.cfg.Pool.QueryRow(ctx, `SELECT lower(COALESCE(wallet, '')), COALESCE(url, '') FROM nodes WHERE node_id = $1`, id).Scan(&owner, &url)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, errNotFound
	case err != nil:
		return nil, false, err
	case owner == "" || owner != wallet:
		return nil, false, errNotOwner
	}
	changed := false
	err = pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		// The URL lock orders this after any registration of the URL in
		// flight, and the row lock (the update) after any record write of
		// a re-probe or registration, which hold the row while they write:
		// the record removed below is never written back by either.
		if err := lockURL(ctx, tx, url); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE nodes SET status = 'deregistered', deregistered_at = now(), updated_at = now()
			WHERE node_id = $1 AND status <> 'deregistered'`, id)
		if err != nil {
			return err
		}
		changed = tag.RowsAffected() == 1
		return s.cfg.Redis.HDel(ctx, s.cfg.Prefix+registry.NodesKey, id).Err()
	})
	if err != nil {
		return nil, false, err
	}
	m, err := scanManaged(s.cfg.Pool.QueryRow(ctx, managedSQL+`WHERE n.node_id = $1`, id))
	if err != nil {
		return nil, false, err
	}
	if changed {
		s.cfg.Log.Info("node deregistered", zap.String("node", id), zap.String("wallet", wallet))
	}
	return m, changed, nil
}

func (s *Service) deregister(w http.ResponseWriter, r *http.Request) {
	m, _, err := s.Deregister(r.Context(), auth.WalletFrom(r.Context()), r.PathValue("id"))
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		httpx.Error(w, ae.status, ae.code, ae.text)
	case err != nil:
		s.cfg.Log.Error("node deregistration failed", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "deregistration_unavailable", "the node could not be deregistered; try again")
	default:
		httpx.JSON(w, http.StatusOK, m)
	}
}

// unpublishDeregistered removes the registry records of deregistered nodes
// (one a lost Redis write left behind), so Redis follows Postgres. It reads
// only the ids the registry holds, however many nodes were deregistered.
func (s *Service) unpublishDeregistered(ctx context.Context) error {
	ids, err := s.cfg.Redis.HKeys(ctx, s.cfg.Prefix+registry.NodesKey).Result()
	if err != nil || len(ids) == 0 {
		return err
	}
	rows, err := s.cfg.Pool.Query(ctx, `SELECT node_id FROM nodes WHERE node_id = ANY($1) AND status = 'deregistered'`, ids)
	if err != nil {
		return err
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(gone) == 0 {
		return err
	}
	s.cfg.Log.Warn("removing registry records of deregistered nodes", zap.Strings("nodes", gone))
	return s.cfg.Redis.HDel(ctx, s.cfg.Prefix+registry.NodesKey, gone...).Err()
}
