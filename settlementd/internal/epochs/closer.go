package epochs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/crashhook"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Fencer proves, inside a transaction, that this replica still leads.
type Fencer interface {
	Fence(ctx context.Context, q interface {
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}) error
}

// Closer closes due epochs, oldest first, one transaction each. It is the
// "epoch-close" job; run it on the leader only.
type Closer struct {
	Pool   *pgxpool.Pool
	Fence  Fencer        // nil: no fencing (single-process tools and tests)
	Grace  time.Duration // how long after its end an epoch stays open
	Stream string        // ingest_watermark row to wait for (a single-shard deployment)
	// Streams: every shard's stream, whose ingest_watermark rows all must
	// have passed an epoch's end before it closes (overrides Stream).
	Streams []string
	// Lookback is how far before a piece of evidence the node's lies may
	// reach. The close of the epoch evidence is booked into also withholds
	// the node's share of every closed epoch not yet in a settlement batch
	// that overlaps [min(ts − Lookback, suspect_since), ts] (window.go).
	// 0: DefaultLookback; negative: no lookback (the window is then
	// [suspect_since, ts], or the evidence's own epoch).
	Lookback time.Duration
	Now      func() time.Time
	Log      *zap.Logger

	once sync.Once
	m    *closerMetrics
}

// Name implements jobs.Job.
func (c *Closer) Name() string { return "epoch-close" }

// Run closes every due epoch.
func (c *Closer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		closed, err := c.CloseNext(ctx)
		if err != nil || !closed {
			return err
		}
	}
	return ctx.Err()
}

// Register adds the closer's metrics to reg.
func (c *Closer) Register(reg prometheus.Registerer) {
	c.metrics()
	reg.MustRegister(c.m.closed, c.m.last, c.m.lag, c.m.carry, c.m.seconds)
}

func (c *Closer) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Closer) log() *zap.Logger {
	if c.Log == nil {
		return zap.NewNop()
	}
	return c.Log
}

// Start and end of an epoch.
func epochStart(id int64) time.Time { return time.Unix(id*events.EpochSeconds, 0).UTC() }
func epochEnd(id int64) time.Time   { return epochStart(id + 1) }

// CloseNext closes the open epoch if it is due and reports whether it did.
// Due means: its end has passed by Grace, and the ingest watermark has passed
// its end by Grace too (every stream entry written up to then is in
// Postgres). The first call on an empty database opens the genesis epoch.
func (c *Closer) CloseNext(ctx context.Context) (bool, error) {
	c.metrics()
	streams := c.Streams
	if len(streams) == 0 {
		streams = []string{c.Stream}
	}
	// The watermark is the lowest of every shard's: an epoch closes only
	// when every stream has been ingested past its end. A shard that has
	// not reported yet holds everything back.
	var openP, lowP *int64
	var reported int
	err := c.Pool.QueryRow(ctx, `SELECT
		(SELECT id FROM epochs WHERE state = 'open'),
		(SELECT min(low_ms) FROM ingest_watermark WHERE stream = ANY($1)),
		(SELECT count(*) FROM ingest_watermark WHERE stream = ANY($1))`, streams).Scan(&openP, &lowP, &reported)
	if err != nil {
		return false, fmt.Errorf("epochs: reading state: %w", err)
	}
	var lowMs int64
	if lowP != nil && reported == len(streams) {
		lowMs = *lowP
	}
	if openP == nil {
		if lowMs <= 0 {
			return false, nil // ingest has not reported yet: nothing to anchor genesis to
		}
		if err := c.genesis(ctx, lowMs); err != nil {
			return false, err
		}
		return true, nil
	}
	open := *openP
	if !c.due(open, lowMs) {
		return false, nil
	}
	start := time.Now()
	var s Split
	err = pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		var err error
		s, err = c.close(ctx, tx, open)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("epochs: closing %d: %w", open, err)
	}
	c.m.seconds.Observe(time.Since(start).Seconds())
	c.m.closed.Inc()
	c.m.last.Set(float64(open))
	c.m.lag.Set(c.now().Sub(epochEnd(open)).Seconds())
	c.m.carry.Set(float64(s.CarryOut))
	c.log().Info("epoch closed", zap.Int64("epoch", open), zap.Int64("total_units", int64(s.Total)),
		zap.Int64("carry_in_units", int64(s.CarryIn)), zap.Int64("distributed_units", int64(s.Distributed)),
		zap.Int64("carry_out_units", int64(s.CarryOut)), zap.Int64("withheld_units", int64(s.Withheld)), zap.Int("nodes", len(s.Shares)))
	return true, nil
}

func (c *Closer) due(id, lowMs int64) bool {
	cut := epochEnd(id).Add(c.Grace)
	return !c.now().Before(cut) && lowMs >= cut.UnixMilli()
}

// genesis opens the first epoch: the earliest epoch of any stored revenue
// event, or the watermark's epoch when it is earlier. It holds the Booking
// lock, so no revenue event commits with an epoch before it unseen.
func (c *Closer) genesis(ctx context.Context, lowMs int64) error {
	return pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		if err := c.fence(ctx, tx); err != nil {
			return err
		}
		if err := pglock.Xact(ctx, tx, pglock.Booking); err != nil {
			return err
		}
		id := events.EpochOf(time.UnixMilli(lowMs))
		var first *int64
		if err := tx.QueryRow(ctx, `SELECT min(booked_epoch) FROM revenue_events`).Scan(&first); err != nil {
			return err
		}
		if first != nil && *first < id {
			id = *first
		}
		tag, err := tx.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, carry_in_units)
			SELECT $1, 'open', $2, $3, 0 WHERE NOT EXISTS (SELECT 1 FROM epochs)`,
			id, epochStart(id), epochEnd(id))
		if err == nil && tag.RowsAffected() == 1 {
			c.log().Info("genesis epoch opened", zap.Int64("epoch", id))
		}
		return err
	})
}

func (c *Closer) fence(ctx context.Context, tx pgx.Tx) error {
	if c.Fence == nil {
		return nil
	}
	return c.Fence.Fence(ctx, tx)
}

// ErrNotOpen is returned when the epoch to close is no longer the open one
// (another closer got there first).
var ErrNotOpen = errors.New("epochs: epoch is not open")

// close does the whole close of epoch id inside tx: totals, split, node
// shares (withheld for nodes with evidence booked into it), earnings
// ledger, CLOSED state, the window withholdings of that evidence in
// earlier unsettled epochs (window.go), next open epoch. Nothing of it is
// visible until tx commits, so an epoch is either fully closed or open.
func (c *Closer) close(ctx context.Context, tx pgx.Tx, id int64) (Split, error) {
	if err := c.fence(ctx, tx); err != nil {
		return Split{}, err
	}
	// Exclusive: waits for revenue batches that may still book into this
	// epoch; batches after the commit see it CLOSED and book forward.
	// It also keeps the settlement plan (which takes it shared) from putting
	// an epoch into a batch while this close withholds from it.
	if err := pglock.Xact(ctx, tx, pglock.Booking); err != nil {
		return Split{}, err
	}
	var carryIn int64
	err := tx.QueryRow(ctx, `SELECT carry_in_units FROM epochs WHERE id = $1 AND state = 'open' FOR UPDATE`, id).Scan(&carryIn)
	if errors.Is(err, pgx.ErrNoRows) {
		return Split{}, ErrNotOpen
	}
	if err != nil {
		return Split{}, err
	}

	g, err := deregisteredNodes(ctx, tx)
	if err != nil {
		return Split{}, err
	}
	rows, err := epochRevenue(ctx, tx, id, g)
	if err != nil {
		return Split{}, err
	}
	var (
		total         money.Units
		calls, nevent int64
		weights       []Weight
	)
	for rows.Next() {
		var (
			node                    *string
			u, k, n, afterU, afterK int64
		)
		if err := rows.Scan(&node, &u, &k, &n, &afterU, &afterK); err != nil {
			rows.Close()
			return Split{}, err
		}
		total += money.Units(u)
		calls += k
		nevent += n
		if node != nil {
			w := Weight{NodeID: *node, Units: money.Units(u), Calls: k}
			weights = append(weights, withholdAfterDeregistration(id, w, afterU, afterK, c.log()))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Split{}, err
	}

	// Nodes with evidence of a lie booked into this epoch (node_evidence,
	// ingested under the same Booking lock): their share is withheld.
	var liars []string
	if err := tx.QueryRow(ctx, `SELECT COALESCE(array_agg(DISTINCT node_id), '{}') FROM node_evidence WHERE booked_epoch = $1`,
		id).Scan(&liars); err != nil {
		return Split{}, err
	}

	s := Compute(total, money.Units(carryIn), weights, liars...)
	if n := len(s.Shares); n > 0 {
		nodes, w, k, sh, wh := make([]string, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		for i, x := range s.Shares {
			nodes[i], w[i], k[i], sh[i], wh[i] = x.NodeID, int64(x.Weight), x.Calls, int64(x.Units), int64(x.Withheld)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO epoch_node_shares (epoch_id, node_id, weight_units, calls, share_units, withheld_units)
			SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])`, id, nodes, w, k, sh, wh); err != nil {
			return Split{}, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO node_earnings (node_id, kind, ref, amount_units, epoch_id)
			SELECT node_id, 'epoch_share', $1, share, $2
			FROM unnest($3::text[], $4::bigint[]) AS s(node_id, share) WHERE share > 0`,
			strconv.FormatInt(id, 10), id, nodes, sh); err != nil {
			return Split{}, err
		}
		if s.Withheld > 0 {
			// What the liars forfeit here, for their operators to read,
			// with the first evidence booked into the epoch.
			if _, err := tx.Exec(ctx, `INSERT INTO node_withholdings (epoch_id, node_id, evidence_id, units, kind)
				SELECT $1, w.node_id, ev.id, w.units, 'booked' FROM unnest($2::text[], $3::bigint[]) AS w(node_id, units)
				JOIN LATERAL (SELECT v.id FROM node_evidence v WHERE v.booked_epoch = $1 AND v.node_id = w.node_id
					ORDER BY v.ts, v.id LIMIT 1) ev ON true
				WHERE w.units > 0`, id, nodes, wh); err != nil {
				return Split{}, err
			}
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE epochs SET state = 'CLOSED', events = $2, calls = $3,
		total_units = $4, node_units = $5, operators_units = $6, platform_units = $7, pool_units = $8,
		distributed_units = $9, carry_out_units = $10, platform_operators_units = $11, withheld_units = $12, closed_at = now()
		WHERE id = $1`, id, nevent, calls, int64(s.Total), int64(s.NodeUnits), int64(s.Operators),
		int64(s.Platform), int64(s.Pool), int64(s.Distributed), int64(s.CarryOut), int64(s.PlatformOperators), int64(s.Withheld)); err != nil {
		return Split{}, err
	}
	// The evidence booked into this epoch also withholds the node's share
	// of the earlier epochs within its window that are not settled yet.
	if err := c.withholdWindow(ctx, tx, id); err != nil {
		return Split{}, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, carry_in_units)
		VALUES ($1, 'open', $2, $3, $4)`, id+1, epochStart(id+1), epochEnd(id+1), int64(s.CarryOut)); err != nil {
		return Split{}, err
	}
	crashhook.Point("close-before-commit")
	return s, nil
}

type closerMetrics struct {
	closed  prometheus.Counter
	last    prometheus.Gauge
	lag     prometheus.Gauge
	carry   prometheus.Gauge
	seconds prometheus.Histogram
}

func (c *Closer) metrics() {
	c.once.Do(c.newMetrics)
}

func (c *Closer) newMetrics() {
	c.m = &closerMetrics{
		closed: prometheus.NewCounter(prometheus.CounterOpts{Name: "settlementd_epochs_closed_total", Help: "Epochs closed by this replica."}),
		last:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_epoch_last_closed", Help: "Id of the last epoch this replica closed."}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_epoch_close_delay_seconds",
			Help: "How long after its end the last epoch was closed."}),
		carry: prometheus.NewGauge(prometheus.GaugeOpts{Name: "settlementd_epoch_carry_units", Help: "Carry out of the last closed epoch, base units."}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "settlementd_epoch_close_seconds",
			Help: "Duration of one epoch-close transaction.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
	}
}
