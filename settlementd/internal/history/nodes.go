package history

// A node operator's nodes: GET /api/nodes/overview (the JWT wallet's nodes
// with traffic, probes, verification state and earnings per day and per
// epoch) and GET /api/nodes/{id}/epochs (one node's epochs, paginated).

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/claims"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/evidence"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Served is what a node served, from the ingest's rollup.
type Served struct {
	Requests    int64       `json:"requests"`
	Calls       int64       `json:"calls"`
	Calls24h    int64       `json:"calls_24h"`
	RevenueUnit money.Units `json:"revenue_units,string"` // what callers paid for it
	RevenueUSDT money.USDT  `json:"revenue_usdt"`
}

// Probes are settlementd's eth_chainId probes of the node over 24 hours.
type Probes struct {
	Samples24h      int64    `json:"samples_24h"`
	Uptime24h       *float64 `json:"uptime_24h"`         // fraction of good probes, 0…1; null without samples
	P50LatencyMs24h *float64 `json:"p50_latency_ms_24h"` // of good probes
	LastProbeAt     *string  `json:"last_probe_at"`
	LastProbeError  *string  `json:"last_probe_error"`
	ProbeFailures   int32    `json:"probe_failures"` // consecutive
}

// Day is one UTC day of a node: its traffic and what closed epochs
// credited it.
type Day struct {
	Day          string      `json:"day"` // YYYY-MM-DD
	Requests     int64       `json:"requests"`
	Calls        int64       `json:"calls"`
	RevenueUnits money.Units `json:"revenue_units,string"`
	EarnedUnits  money.Units `json:"earned_units,string"`
	EarnedUSDT   money.USDT  `json:"earned_usdt"`
}

// Epoch is one closed epoch of a node and the epoch's split.
type Epoch struct {
	EpochID          int64       `json:"epoch_id"`
	StartsAt         string      `json:"starts_at"`
	Calls            int64       `json:"calls"`
	WeightUnits      money.Units `json:"weight_units,string"` // revenue it served
	ShareUnits       money.Units `json:"share_units,string"`  // its earnings
	ShareUSDT        money.USDT  `json:"share_usdt"`
	WithheldUnits    money.Units `json:"withheld_units,string"`
	TotalUnits       money.Units `json:"epoch_total_units,string"` // the epoch's revenue and its 50/30/20 split
	OperatorsUnits   money.Units `json:"epoch_operators_units,string"`
	PlatformUnits    money.Units `json:"epoch_platform_units,string"`
	PoolUnits        money.Units `json:"epoch_pool_units,string"`
	DistributedUnits money.Units `json:"epoch_distributed_units,string"`
}

// NodeOverview is one node in GET /api/nodes/overview.
type NodeOverview struct {
	NodeID         string               `json:"node_id"`
	Label          string               `json:"label"`
	Region         string               `json:"region"`
	RPCURL         string               `json:"rpc_url"`
	ChainIDs       []int64              `json:"chain_ids"`
	Status         string               `json:"status"` // online | offline | quarantined | deregistered
	CreatedAt      string               `json:"created_at"`
	DeregisteredAt *string              `json:"deregistered_at"`
	Served         Served               `json:"served"`
	Probes         Probes               `json:"probes"`
	Verification   *evidence.Quarantine `json:"verification"`
	Earnings       *claims.Earnings     `json:"earnings"`
	Daily          []Day                `json:"daily"`  // the last days, oldest first, every day listed
	Epochs         []Epoch              `json:"epochs"` // the node's latest closed epochs with a share, oldest first
}

// Overview is the GET /api/nodes/overview answer.
type Overview struct {
	Wallet     string          `json:"wallet"`
	Days       int             `json:"days"`
	Nodes      []*NodeOverview `json:"nodes"`
	NextCursor *string         `json:"next_cursor"`
}

// OverviewOf reads wallet's nodes (ordered by node id; a page of limit
// after the cursor) with days days of history each.
func (s *Service) OverviewOf(ctx context.Context, wallet string, days, limit int, after string) (*Overview, error) {
	rows, err := s.cfg.Pool.Query(ctx, `SELECT node_id, label, COALESCE(region, ''), COALESCE(url, ''), chain_ids, status, created_at, deregistered_at,
		last_probe_at, last_probe_error, probe_failures
		FROM nodes WHERE lower(wallet) = $1 AND node_id > $2 ORDER BY node_id LIMIT $3`, wallet, after, limit+1)
	if err != nil {
		return nil, err
	}
	out := &Overview{Wallet: wallet, Days: days, Nodes: []*NodeOverview{}}
	for rows.Next() {
		var (
			n              NodeOverview
			created        time.Time
			dereg, probed  *time.Time
			probeErr       *string
			failures       int32
			chainIDs       []int64
			label, region  string
			rpcURL, status string
		)
		if err := rows.Scan(&n.NodeID, &label, &region, &rpcURL, &chainIDs, &status, &created, &dereg, &probed, &probeErr, &failures); err != nil {
			rows.Close()
			return nil, err
		}
		n.Label, n.Region, n.RPCURL, n.ChainIDs, n.Status, n.CreatedAt = label, region, rpcURL, chainIDs, status, rfc3339(created)
		if n.ChainIDs == nil {
			n.ChainIDs = []int64{}
		}
		n.DeregisteredAt = optTime(dereg)
		n.Probes = Probes{LastProbeAt: optTime(probed), LastProbeError: probeErr, ProbeFailures: failures}
		out.Nodes = append(out.Nodes, &n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out.Nodes) > limit {
		out.Nodes = out.Nodes[:limit]
		c := encodeCursor(out.Nodes[limit-1].NodeID)
		out.NextCursor = &c
	}
	for _, n := range out.Nodes {
		if err := s.fill(ctx, n, days); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	v := rfc3339(*t)
	return &v
}

// fill reads one node's traffic, probes, verification, earnings, days and
// latest epochs: each an indexed read of that node's rows.
func (s *Service) fill(ctx context.Context, n *NodeOverview, days int) error {
	now := s.cfg.Now().UTC()
	var rev int64
	if err := s.cfg.Pool.QueryRow(ctx, `SELECT COALESCE(sum(requests), 0)::bigint, COALESCE(sum(calls), 0)::bigint, COALESCE(sum(amount_units), 0)::bigint,
		COALESCE(sum(calls) FILTER (WHERE hour >= $2), 0)::bigint,
		(SELECT count(*) FROM node_probe_samples WHERE node_id = $1 AND at > $3),
		(SELECT avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END)::float8 FROM node_probe_samples WHERE node_id = $1 AND at > $3),
		(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM node_probe_samples WHERE node_id = $1 AND at > $3 AND ok)
		FROM node_usage_hourly WHERE node_id = $1`, n.NodeID, now.Truncate(time.Hour).Add(-23*time.Hour), now.Add(-24*time.Hour)).
		Scan(&n.Served.Requests, &n.Served.Calls, &rev, &n.Served.Calls24h, &n.Probes.Samples24h, &n.Probes.Uptime24h, &n.Probes.P50LatencyMs24h); err != nil {
		return err
	}
	n.Served.RevenueUnit, n.Served.RevenueUSDT = money.Units(rev), money.USDT(rev)
	var err error
	if n.Verification, err = evidence.Of(ctx, s.cfg.Pool, n.NodeID); err != nil {
		return err
	}
	if n.Earnings, err = s.cfg.Claims.Compute(ctx, s.cfg.Pool, n.NodeID, 0); err != nil {
		return err
	}

	// Days: every day of the window, traffic from the hourly rollup and
	// earnings from node_earnings by the epoch they were credited for.
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	from := today.AddDate(0, 0, -(days - 1))
	n.Daily = make([]Day, days)
	index := map[string]int{}
	for i := range n.Daily {
		d := from.AddDate(0, 0, i).Format(time.DateOnly)
		n.Daily[i] = Day{Day: d, EarnedUSDT: money.USDT(0)}
		index[d] = i
	}
	rows, err := s.cfg.Pool.Query(ctx, `SELECT (hour AT TIME ZONE 'UTC')::date, sum(requests)::bigint, sum(calls)::bigint, sum(amount_units)::bigint
		FROM node_usage_hourly WHERE node_id = $1 AND hour >= $2 GROUP BY 1`, n.NodeID, from)
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			d                    time.Time
			req, calls, revUnits int64
		)
		if err := rows.Scan(&d, &req, &calls, &revUnits); err != nil {
			rows.Close()
			return err
		}
		if i, ok := index[d.Format(time.DateOnly)]; ok {
			n.Daily[i].Requests, n.Daily[i].Calls, n.Daily[i].RevenueUnits = req, calls, money.Units(revUnits)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = s.cfg.Pool.Query(ctx, `SELECT (to_timestamp(epoch_id * $3) AT TIME ZONE 'UTC')::date, sum(amount_units)::bigint
		FROM node_earnings WHERE node_id = $1 AND kind = 'epoch_share' AND epoch_id >= $2 GROUP BY 1`,
		n.NodeID, events.EpochOf(from), int64(events.EpochSeconds))
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			d      time.Time
			earned int64
		)
		if err := rows.Scan(&d, &earned); err != nil {
			rows.Close()
			return err
		}
		if i, ok := index[d.Format(time.DateOnly)]; ok {
			n.Daily[i].EarnedUnits, n.Daily[i].EarnedUSDT = money.Units(earned), money.USDT(earned)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ep, _, err := s.epochs(ctx, n.NodeID, OverviewEpochs, nil)
	if err != nil {
		return err
	}
	// Oldest first, for a chart.
	for i, j := 0, len(ep)-1; i < j; i, j = i+1, j-1 {
		ep[i], ep[j] = ep[j], ep[i]
	}
	n.Epochs = ep
	return nil
}

// epochs reads a node's closed epochs newest first (before the cursor
// epoch id when set); more says another page exists.
func (s *Service) epochs(ctx context.Context, node string, limit int, before *int64) ([]Epoch, bool, error) {
	rows, err := s.cfg.Pool.Query(ctx, `SELECT e.id, e.starts_at, sh.calls, sh.weight_units, sh.share_units, sh.withheld_units,
		e.total_units, e.operators_units, e.platform_units, e.pool_units, e.distributed_units
		FROM epoch_node_shares sh JOIN epochs e ON e.id = sh.epoch_id
		WHERE sh.node_id = $1 AND ($2::bigint IS NULL OR sh.epoch_id < $2)
		ORDER BY sh.epoch_id DESC LIMIT $3`, node, before, limit+1)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out := []Epoch{}
	for rows.Next() {
		var (
			e                                                 Epoch
			starts                                            time.Time
			weight, share, withheld, total, ops, plat, pl, di int64
		)
		if err := rows.Scan(&e.EpochID, &starts, &e.Calls, &weight, &share, &withheld, &total, &ops, &plat, &pl, &di); err != nil {
			return nil, false, err
		}
		e.StartsAt = rfc3339(starts)
		e.WeightUnits, e.ShareUnits, e.ShareUSDT, e.WithheldUnits = money.Units(weight), money.Units(share), money.USDT(share), money.Units(withheld)
		e.TotalUnits, e.OperatorsUnits, e.PlatformUnits, e.PoolUnits, e.DistributedUnits = money.Units(total), money.Units(ops), money.Units(plat), money.Units(pl), money.Units(di)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func (s *Service) overview(w http.ResponseWriter, r *http.Request) {
	days, err := intParam(r, "days", 14, MaxDays)
	if err == nil {
		var limit int
		if limit, err = intParam(r, "limit", DefaultNodes, MaxNodes); err == nil {
			after := ""
			if c := r.URL.Query().Get("cursor"); c != "" {
				var p []string
				if p, err = decodeCursor(c, 1); err == nil {
					after = p[0]
				}
			}
			if err == nil {
				var o *Overview
				if o, err = s.OverviewOf(r.Context(), auth.WalletFrom(r.Context()), days, limit, after); err == nil {
					writeJSON(w, o)
					return
				}
			}
		}
	}
	fail(w, s.cfg.Log, "the nodes", err)
}

// NodeEpochs is the GET /api/nodes/{id}/epochs answer.
type NodeEpochs struct {
	NodeID     string  `json:"node_id"`
	Epochs     []Epoch `json:"epochs"` // newest first
	NextCursor *string `json:"next_cursor"`
}

var (
	errNodeNotFound = &apiError{http.StatusNotFound, "node_not_found", "no such node"}
	errNotOwner     = &apiError{http.StatusForbidden, "not_node_owner", "this node belongs to another wallet"}
)

// owner checks that wallet owns node.
func (s *Service) owner(ctx context.Context, node, wallet string) error {
	if !registry.ValidID(node) {
		return errNodeNotFound
	}
	var owner string
	err := s.cfg.Pool.QueryRow(ctx, `SELECT lower(COALESCE(wallet, '')) FROM nodes WHERE node_id = $1`, node).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errNodeNotFound
	case err != nil:
		return err
	case owner == "" || owner != wallet:
		return errNotOwner
	}
	return nil
}

func (s *Service) nodeEpochs(w http.ResponseWriter, r *http.Request) {
	node := r.PathValue("id")
	err := s.owner(r.Context(), node, auth.WalletFrom(r.Context()))
	var limit int
	if err == nil {
		limit, err = intParam(r, "limit", DefaultEpochs, MaxEpochs)
	}
	var before *int64
	if c := r.URL.Query().Get("cursor"); err == nil && c != "" {
		var p []string
		if p, err = decodeCursor(c, 1); err == nil {
			v, perr := strconv.ParseInt(p[0], 10, 64)
			if perr != nil {
				err = &apiError{http.StatusBadRequest, "invalid_cursor", "cursor is not a cursor this API returned"}
			}
			before = &v
		}
	}
	if err != nil {
		fail(w, s.cfg.Log, "the epochs", err)
		return
	}
	ep, more, err := s.epochs(r.Context(), node, limit, before)
	if err != nil {
		fail(w, s.cfg.Log, "the epochs", err)
		return
	}
	out := &NodeEpochs{NodeID: node, Epochs: ep}
	if more {
		c := encodeCursor(strconv.FormatInt(ep[len(ep)-1].EpochID, 10))
		out.NextCursor = &c
	}
	writeJSON(w, out)
}
