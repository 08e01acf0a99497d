package epochs

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// DefaultLookback is how far before a piece of evidence a node's lies are
// presumed to reach when the evidence does not say.
const DefaultLookback = 10 * time.Minute

func (c *Closer) lookback() time.Duration {
	switch {
	case c.Lookback == 0:
		return DefaultLookback
	case c.Lookback < 0:
		return 0
	}
	return c.Lookback
}

// windowHitsSQL finds, for the evidence booked into epoch $1, the node's
// share of every earlier epoch that overlaps the evidence's window
// [min(ts − lookback, suspect_since), ts] — epoch X overlaps it when X
// starts at or before ts (X ≤ the evidence's epoch_id) and ends after the
// window's start (X ≥ floor(start / epoch length)) — and is not in a
// settlement batch, with the earliest such evidence. Shares already
// withheld (share_units 0) are not found again, so redelivered or further
// evidence never withholds twice.
const windowHitsSQL = `
SELECT DISTINCT ON (sh.epoch_id, sh.node_id) sh.epoch_id, sh.node_id, sh.share_units, ev.id
FROM node_evidence ev
JOIN epoch_node_shares sh ON sh.node_id = ev.node_id AND sh.epoch_id < $1 AND sh.epoch_id <= ev.epoch_id
	AND sh.epoch_id >= floor(extract(epoch FROM LEAST(ev.ts - $2::bigint * interval '1 millisecond',
		COALESCE(ev.suspect_since, ev.ts))) / $3)::bigint
	-- Batches take epochs oldest first, so everything up to the newest
	-- settled epoch is settled: a window reaching far back (a suspect_since
	-- at the node's first service) scans only the unsettled epochs.
	AND sh.epoch_id > COALESCE((SELECT max(epoch_id) FROM settled_epochs), -1)
WHERE ev.booked_epoch = $1 AND sh.share_units > 0
	AND NOT EXISTS (SELECT 1 FROM settled_epochs s WHERE s.epoch_id = sh.epoch_id)
ORDER BY sh.epoch_id, sh.node_id, ev.ts, ev.id`

// withholdSQL withholds the found shares, each exactly as the close of its
// epoch would have (Compute's withhold): the share row's share moves to
// withheld, the epoch's distributed amount moves to withheld and to the
// pool (so operators + platform + pool = total + withheld and
// distributed + carry_out + platform_operators + withheld = operators +
// carry_in still hold, and the carry is untouched), the earnings ledger
// gets the credit's reversal (kind epoch_share, ref "<epoch>:withheld",
// amount −share: every reader that sums the node's epoch_share rows —
// settlement, claims, history — sees the epoch's net 0, and the ledger
// stays append-only), and node_withholdings records it for the operator.
// share_units = the found share guards against any change in between.
const withholdSQL = `
WITH h AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[]) AS h(epoch_id, node_id, units, evidence_id)),
sh AS (
	UPDATE epoch_node_shares s SET withheld_units = s.withheld_units + s.share_units, share_units = 0
	FROM h WHERE s.epoch_id = h.epoch_id AND s.node_id = h.node_id AND s.share_units = h.units AND h.units > 0
	RETURNING s.epoch_id, s.node_id, h.units, h.evidence_id),
ep AS (
	UPDATE epochs e SET distributed_units = e.distributed_units - x.units, withheld_units = e.withheld_units + x.units,
		pool_units = e.pool_units + x.units
	FROM (SELECT epoch_id, sum(units)::bigint AS units FROM sh GROUP BY epoch_id) x
	WHERE e.id = x.epoch_id AND e.state = 'CLOSED'
	RETURNING e.id),
ne AS (
	INSERT INTO node_earnings (node_id, kind, ref, amount_units, epoch_id)
	SELECT node_id, 'epoch_share', epoch_id::text || ':withheld', -units, epoch_id FROM sh)
INSERT INTO node_withholdings (epoch_id, node_id, evidence_id, units, kind)
SELECT epoch_id, node_id, evidence_id, units, 'window' FROM sh
RETURNING epoch_id, node_id, units, evidence_id`

// withholdWindow withholds, inside the close of epoch id (under the
// exclusive Booking lock, which the settlement plan takes shared, so no
// batch takes these epochs meanwhile), the node's share of every earlier,
// unsettled epoch within the window of each piece of evidence booked into
// id. Settled epochs are final: their node shares may already be allocated
// on chain, where allocations only rise.
func (c *Closer) withholdWindow(ctx context.Context, tx pgx.Tx, id int64) error {
	rows, err := tx.Query(ctx, windowHitsSQL, id, c.lookback().Milliseconds(), int64(events.EpochSeconds))
	if err != nil {
		return err
	}
	var (
		epochIDs []int64
		nodes    []string
		units    []int64
		evidence []string
	)
	for rows.Next() {
		var (
			e, u   int64
			n, evd string
		)
		if err := rows.Scan(&e, &n, &u, &evd); err != nil {
			rows.Close()
			return err
		}
		epochIDs, nodes, units, evidence = append(epochIDs, e), append(nodes, n), append(units, u), append(evidence, evd)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(epochIDs) == 0 {
		return nil
	}
	rows, err = tx.Query(ctx, withholdSQL, epochIDs, nodes, units, evidence)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			e, u      int64
			node, evd string
		)
		if err := rows.Scan(&e, &node, &u, &evd); err != nil {
			return err
		}
		n++
		c.log().Warn("share withheld for evidence of a lie within the lookback", zap.Int64("epoch", e), zap.String("node", node),
			zap.Int64("withheld_units", u), zap.String("evidence", evd), zap.Int64("booked_epoch", id))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != len(epochIDs) {
		// Nothing else writes these rows while the Booking lock is held.
		return errWindowRace
	}
	return nil
}

var errWindowRace = errors.New("epochs: a share to withhold changed during the close")
