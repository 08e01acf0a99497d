package epochs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Deregistered nodes (nodes.deregistered_at) earn nothing for
// what they served at or after their deregistration (the gateway may still
// route to one until its next registry refresh). That revenue stays in the
// epoch's total and counts as served by no registered node, so its
// operators' half is the platform's like the providers' (Compute). What
// the node served before its deregistration is owed, however late it is
// ingested and booked. Revenue event time (the gateway's clock) is compared
// with deregistered_at (Postgres's clock): docs/decisions.md.
//
// The close reads the epoch's events once: when any node is
// deregistered, the grouped scan joins the deregistration times and sums
// what each node served after its own beside its total, so a million
// events are not read a second time.

// gone is every deregistered or quarantined node and the earlier of its
// deregistration and quarantine times.
type gone struct {
	nodes []string
	at    []time.Time
}

func deregisteredNodes(ctx context.Context, tx pgx.Tx) (gone, error) {
	var g gone
	// A quarantined node is treated the same from its quarantine on:
	// nothing it serves after it — a feed or a call a
	// gateway still routed before it heard — earns, in any later epoch.
	// LEAST ignores a NULL; a lift clears quarantined_at.
	err := tx.QueryRow(ctx, `SELECT COALESCE(array_agg(node_id ORDER BY node_id), '{}'),
		COALESCE(array_agg(LEAST(deregistered_at, quarantined_at) ORDER BY node_id), '{}')
		FROM nodes WHERE deregistered_at IS NOT NULL OR quarantined_at IS NOT NULL`).Scan(&g.nodes, &g.at)
	return g, err
}

// epochRevenue is the close's one grouped scan: per node (NULL: not a
// registered node's), its revenue, calls and events, and what it served at
// or after its deregistration.
func epochRevenue(ctx context.Context, tx pgx.Tx, epoch int64, g gone) (pgx.Rows, error) {
	if len(g.nodes) == 0 {
		return tx.Query(ctx, `SELECT node_id, sum(amount_units)::bigint, sum(calls)::bigint, count(*), 0::bigint, 0::bigint
			FROM revenue_events WHERE booked_epoch = $1 GROUP BY node_id`, epoch)
	}
	return tx.Query(ctx, `SELECT r.node_id, sum(r.amount_units)::bigint, sum(r.calls)::bigint, count(*),
			COALESCE(sum(r.amount_units) FILTER (WHERE r.ts >= g.at), 0)::bigint,
			COALESCE(sum(r.calls) FILTER (WHERE r.ts >= g.at), 0)::bigint
		FROM revenue_events r LEFT JOIN unnest($2::text[], $3::timestamptz[]) AS g(node_id, at) ON g.node_id = r.node_id
		WHERE r.booked_epoch = $1 GROUP BY r.node_id`, epoch, g.nodes, g.at)
}

// withholdAfterDeregistration takes what each deregistered node served
// after its deregistration out of its weight (a weight of zero is ignored
// by Compute).
func withholdAfterDeregistration(epoch int64, w Weight, afterUnits, afterCalls int64, log *zap.Logger) Weight {
	if afterUnits == 0 && afterCalls == 0 {
		return w
	}
	log.Info("a deregistered node earns nothing for what it served after its deregistration",
		zap.Int64("epoch", epoch), zap.String("node", w.NodeID), zap.Int64("withheld_units", afterUnits), zap.Int64("calls", afterCalls))
	w.Units -= money.Units(afterUnits)
	w.Calls -= afterCalls
	return w
}
