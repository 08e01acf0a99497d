// Package statemetrics exports what an operator watches in settlementd —
// ingest lag, epochs closing, settlement, our chain transactions, solvency,
// the claims pause, nodes by status — read from PostgreSQL and Redis, the
// system of record, when Prometheus scrapes. Gauges set by the jobs
// themselves live on the replica that ran them and freeze when a job stops
// running; these do not: every replica reports the same values whether or
// not it leads, and a stalled job shows as a growing age, not a stale
// number. One scrape costs one PostgreSQL round trip (a batch of indexed
// reads) and one Redis MULTI.
package statemetrics

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
)

// Config of the collector.
type Config struct {
	Pool   *pgxpool.Pool
	Redis  redis.UniversalClient
	Stream string // the event stream (<prefix>events) of a single-shard deployment
	// Streams: every shard's event stream (overrides Stream); the lag is
	// the largest of theirs.
	Streams []string
	Group   string // its consumer group (default ingest.DefaultGroup)
	// Settlement is on (treasury and relayer keys configured): only then
	// are unsettled epochs exported, since without it every closed epoch
	// stays unsettled by design.
	Settlement bool
	// Timeout bounds one scrape's reads (default 3 s, under Prometheus'
	// default 10 s scrape timeout).
	Timeout time.Duration
}

// NodeStatuses are the node states always exported (0 when none), so a
// panel or an alert has a series before the first node reaches the state.
var NodeStatuses = []string{"online", "offline", "quarantined", "deregistered"}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	postgresUp = desc("settlementd_postgres_up",
		"1 when this scrape read settlementd's state from PostgreSQL, else 0 (the state gauges are then left out).")
	redisUp = desc("settlementd_redis_up",
		"1 when this scrape read the event stream's consumer group from Redis, else 0.")
	ingestLag = desc("settlementd_ingest_lag_seconds",
		"Age of the oldest event-stream entry not yet committed to PostgreSQL, read from the consumer group at scrape time (0 when drained).")
	epochOverdue = desc("settlementd_epoch_overdue_seconds",
		"How long ago the oldest epoch still open ended (0 while it runs); grows when epochs stop closing.")
	lastClosedUnits = desc("settlementd_epoch_last_closed_units",
		"The last closed epoch's revenue in base units (1e-6 USDT), by share: total, operators (50 %), platform (30 %), pool (20 %), distributed (to nodes).",
		"share")
	lastClosedID = desc("settlementd_epoch_last_closed_id",
		"Id of the last closed epoch (unix minute), whichever replica closed it.")
	unsettledEpochs = desc("settlementd_settlement_unsettled_epochs",
		"Closed epochs whose money is not yet forwarded on chain (in no forwarded settlement batch); exported while settlement is configured.")
	unsettledAge = desc("settlementd_settlement_oldest_unsettled_seconds",
		"How long ago the oldest closed epoch not yet forwarded ended (0 when none); exported while settlement is configured.")
	txUnmined = desc("settlementd_chain_txs_unmined",
		"Our chain transactions signed and not yet mined, failed or conflicted.")
	txUnminedAge = desc("settlementd_chain_tx_oldest_unmined_seconds",
		"Age of the oldest of our chain transactions not yet mined (0 when none).")
	claimsPaused = desc("settlementd_claims_paused",
		"1 while new claim signatures are paused (by the solvency check or an admin); only an admin unpause resumes them.")
	solvent = desc("settlementd_solvency_solvent",
		"1 when the last solvency check found ClaimsContract holding at least what it owes, else 0; absent before the first check.")
	solvencyBalance = desc("settlementd_solvency_balance_units",
		"ClaimsContract's USDT balance at the last solvency check, base units.")
	solvencyOwed = desc("settlementd_solvency_owed_units",
		"What ClaimsContract owes (allocated minus claimed) at the last solvency check, base units.")
	solvencyAt = desc("settlementd_solvency_checked_timestamp_seconds",
		"Unix time of the last solvency check.")
	nodes = desc("settlementd_nodes",
		"Registered nodes by status (online, offline, quarantined, deregistered).", "status")
)

type collector struct{ cfg Config }

// New returns the collector; register it in settlementd's registry.
func New(cfg Config) prometheus.Collector {
	if cfg.Group == "" {
		cfg.Group = ingest.DefaultGroup
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	return collector{cfg}
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{postgresUp, redisUp, ingestLag, epochOverdue, lastClosedUnits, lastClosedID,
		unsettledEpochs, unsettledAge, txUnmined, txUnminedAge, claimsPaused, solvent, solvencyBalance, solvencyOwed, solvencyAt, nodes} {
		ch <- d
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	streams := c.cfg.Streams
	if len(streams) == 0 {
		streams = []string{c.cfg.Stream}
	}
	up, lag := true, 0.0
	for _, stream := range streams {
		wm, err := ingest.GroupWatermark(ctx, c.cfg.Redis, stream, c.cfg.Group)
		switch {
		case errors.Is(err, ingest.ErrNoGroup): // nothing written yet: nothing to ingest
		case err != nil:
			up = false
		default:
			lag = max(lag, float64(time.Now().UnixMilli()-wm.LowMs)/1000)
		}
	}
	gauge(ch, redisUp, bit(up))
	if up {
		gauge(ch, ingestLag, lag)
	}
	ms, err := c.read(ctx)
	gauge(ch, postgresUp, bit(err == nil))
	if err != nil {
		return
	}
	for _, m := range ms {
		ch <- m
	}
}

// read does every PostgreSQL read in one batch (one round trip), all by
// index: the single open epoch, the newest closed epoch, the newest
// forwarded batch, the newest solvency check, the partial index of signed
// transactions; nodes is small.
func (c collector) read(ctx context.Context) ([]prometheus.Metric, error) {
	var out []prometheus.Metric
	add := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT (SELECT paused FROM claims_state WHERE id = 1),
		COALESCE((SELECT GREATEST(0, EXTRACT(EPOCH FROM now() - ends_at)) FROM epochs WHERE state = 'open'), 0)::float8,
		(SELECT count(*) FROM chain_txs WHERE state = 'signed'),
		COALESCE((SELECT GREATEST(0, EXTRACT(EPOCH FROM now() - min(created_at))) FROM chain_txs WHERE state = 'signed'), 0)::float8`).
		QueryRow(func(r pgx.Row) error {
			var paused bool
			var overdue, txAge float64
			var txs int64
			if err := r.Scan(&paused, &overdue, &txs, &txAge); err != nil {
				return err
			}
			add(claimsPaused, bit(paused))
			add(epochOverdue, overdue)
			add(txUnmined, float64(txs))
			add(txUnminedAge, txAge)
			return nil
		})
	b.Queue(`SELECT id, total_units, operators_units, platform_units, pool_units, distributed_units
		FROM epochs WHERE state = 'CLOSED' ORDER BY id DESC LIMIT 1`).QueryRow(func(r pgx.Row) error {
		var id, total, ops, plat, pool, dist int64
		err := r.Scan(&id, &total, &ops, &plat, &pool, &dist)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		add(lastClosedID, float64(id))
		for share, v := range map[string]int64{"total": total, "operators": ops, "platform": plat, "pool": pool, "distributed": dist} {
			add(lastClosedUnits, float64(v), share)
		}
		return nil
	})
	if c.cfg.Settlement {
		// Batches forward consecutive epochs one at a time, so everything
		// after the newest forwarded batch's last epoch is unsettled.
		b.Queue(`SELECT count(*), COALESCE(GREATEST(0, EXTRACT(EPOCH FROM now() - min(ends_at))), 0)::float8
			FROM epochs WHERE state = 'CLOSED' AND id > COALESCE((SELECT last_epoch FROM settlement_batches
				WHERE state = 'forwarded' ORDER BY id DESC LIMIT 1), -1)`).QueryRow(func(r pgx.Row) error {
			var n int64
			var age float64
			if err := r.Scan(&n, &age); err != nil {
				return err
			}
			add(unsettledEpochs, float64(n))
			add(unsettledAge, age)
			return nil
		})
	}
	b.Queue(`SELECT solvent, balance_raw::text, owed_raw::text, EXTRACT(EPOCH FROM checked_at)::float8
		FROM solvency_checks ORDER BY id DESC LIMIT 1`).QueryRow(func(r pgx.Row) error {
		var ok bool
		var bal, owed string
		var at float64
		err := r.Scan(&ok, &bal, &owed, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// Raw USDT amounts (6 decimals) fit a float64 exactly up to 2^53
		// units, 9 billion USDT; a gauge needs no more.
		fb, err1 := strconv.ParseFloat(bal, 64)
		fo, err2 := strconv.ParseFloat(owed, 64)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		add(solvent, bit(ok))
		add(solvencyBalance, fb)
		add(solvencyOwed, fo)
		add(solvencyAt, at)
		return nil
	})
	b.Queue(`SELECT status, count(*) FROM nodes GROUP BY status`).Query(func(rows pgx.Rows) error {
		counts := map[string]int64{}
		for _, s := range NodeStatuses {
			counts[s] = 0
		}
		for rows.Next() {
			var s string
			var n int64
			if err := rows.Scan(&s, &n); err != nil {
				return err
			}
			counts[s] = n
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for s, n := range counts {
			add(nodes, float64(n), s)
		}
		return nil
	})
	if err := c.cfg.Pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return out, nil
}
