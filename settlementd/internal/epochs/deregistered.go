package epochs

import (
	"context"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// withholdAfterDeregistration takes out of the epoch's node weights what a
// deregistered node served at or after its deregistration (nodes.
// deregistered_at; the gateway may still route to it until its next
// registry refresh). That revenue stays in the epoch's total and counts as
// served by no registered node, so its operators' half is the platform's
// like the providers' (Compute). What the node served before its
// deregistration is owed, however late it is ingested and booked. Revenue
// event time (the gateway's clock) is compared with deregistered_at
// (Postgres's clock): docs/decisions.md.
//
// The common case costs one lookup of the epoch's nodes by primary key;
// the epoch's events are read again only when one of them names a
// deregistered node.
func withholdAfterDeregistration(ctx context.Context, tx pgx.Tx, epoch int64, weights []Weight, log *zap.Logger) ([]Weight, error) {
	if len(weights) == 0 {
		return weights, nil
	}
	ids := make([]string, len(weights))
	for i, w := range weights {
		ids[i] = w.NodeID
	}
	var gone []string
	if err := tx.QueryRow(ctx, `SELECT COALESCE(array_agg(node_id), '{}') FROM nodes
		WHERE node_id = ANY($1) AND deregistered_at IS NOT NULL`, ids).Scan(&gone); err != nil || len(gone) == 0 {
		return weights, err
	}
	rows, err := tx.Query(ctx, `SELECT r.node_id, sum(r.amount_units)::bigint, sum(r.calls)::bigint
		FROM revenue_events r JOIN nodes n ON n.node_id = r.node_id
		WHERE r.booked_epoch = $1 AND r.node_id = ANY($2) AND r.ts >= n.deregistered_at GROUP BY r.node_id`, epoch, gone)
	if err != nil {
		return nil, err
	}
	after := map[string]Weight{}
	for rows.Next() {
		var w Weight
		var u int64
		if err := rows.Scan(&w.NodeID, &u, &w.Calls); err != nil {
			rows.Close()
			return nil, err
		}
		w.Units = money.Units(u)
		after[w.NodeID] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := weights[:0]
	for _, w := range weights {
		if a, ok := after[w.NodeID]; ok {
			log.Info("a deregistered node earns nothing for what it served after its deregistration",
				zap.Int64("epoch", epoch), zap.String("node", w.NodeID), zap.Int64("withheld_units", int64(a.Units)), zap.Int64("calls", a.Calls))
			w.Units -= a.Units
			w.Calls -= a.Calls
		}
		out = append(out, w) // a weight of zero is ignored by Compute
	}
	return out, nil
}
