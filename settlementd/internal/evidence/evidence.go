// Package evidence is settlementd's side of answer verification.
// The gateway re-asks a trusted provider a sample of the
// deterministic questions registered nodes answered and appends a
// node_mismatch event when the answers differ. From there:
//
//   - ingest stores each event once in node_evidence and, in the same
//     transaction, quarantines the node (nodes.status 'quarantined',
//     quarantined_at, quarantine_reason, a node_quarantine_log row);
//   - after the commit ingest calls Publish, which rewrites the node's
//     registry record in Redis with status quarantined, so every gateway
//     drops it at its next registry refresh (only online nodes serve);
//   - the epoch close withholds the node's share of every epoch evidence is
//     booked into, and of every earlier epoch not yet settled within the
//     evidence's window (its lookback, or its suspect_since), and books it
//     to the pool (package epochs); settlement holds epochs back for the
//     lookback so that the window finds them unsettled (package settle);
//   - the operator reads the quarantine, the evidence and every epoch whose
//     share was withheld (node_withholdings) on the earnings route (Of) and
//     GET /api/nodes/{id}/evidence (List); an admin lifts it after review
//     with POST /admin/nodes/{id}/unquarantine (Lift).
//
// Postgres is the truth and Redis follows it: a quarantine stays in
// Postgres whatever another writer sets (a trigger, migration 0045), and the
// node prober, which republishes every node's status from Postgres, repairs
// a registry record a failed Publish left behind.
package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Querier is a pool or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// MaxIDs bounds the evidence ids listed in a Quarantine (newest first).
const MaxIDs = 100

// Quarantine is a node's quarantine as its operator and /api/status see it.
type Quarantine struct {
	Quarantined bool    `json:"quarantined"`
	Since       *string `json:"since"`  // RFC 3339; null when not quarantined
	Reason      *string `json:"reason"` // which call, unlike whom, which evidence
	// EvidenceIDs are the node's evidence, newest first (at most MaxIDs;
	// EvidenceCount counts all), readable on EvidenceURL.
	EvidenceIDs   []string `json:"evidence_ids"`
	EvidenceCount int64    `json:"evidence_count"`
	EvidenceURL   string   `json:"evidence_url"`
	// Withheld is what closed epochs withheld from the node for its lies
	// (booked to the pool).
	WithheldUnits money.Units `json:"withheld_units,string"`
	WithheldUSDT  money.USDT  `json:"withheld_usdt"`
	// WithheldEpochs are the epochs whose share was withheld, newest first
	// (at most MaxIDs; WithheldEpochCount counts all), each with its amount
	// and the evidence that withheld it.
	WithheldEpochs     []Withholding `json:"withheld_epochs"`
	WithheldEpochCount int64         `json:"withheld_epoch_count"`
	Review             string        `json:"review"`
}

// Withholding is one epoch's share withheld from a node (node_withholdings).
type Withholding struct {
	EpochID  int64  `json:"epoch_id"`
	StartsAt string `json:"starts_at"` // RFC 3339; the epoch ends 60 s later
	// Units is the node's would-be share of the epoch, booked to the pool.
	Units      money.Units `json:"withheld_units,string"`
	USDT       money.USDT  `json:"withheld_usdt"`
	EvidenceID string      `json:"evidence_id"`
	// Kind is "booked" (the epoch the evidence is booked into, withheld at
	// its close) or "window" (an earlier epoch within the evidence's
	// lookback, withheld before it was settled).
	Kind string `json:"kind"`
	At   string `json:"at"` // RFC 3339: when it was withheld
}

// withholdingsSQL reads withholdings newest epoch first; $1 filters by
// node, $2 by evidence ids (either may be NULL), $3 limits.
const withholdingsSQL = `SELECT epoch_id, node_id, evidence_id, units, kind, at FROM node_withholdings
	WHERE ($1::text IS NULL OR node_id = $1) AND ($2::text[] IS NULL OR evidence_id = ANY($2))
	ORDER BY epoch_id DESC, node_id LIMIT $3`

func withholdings(ctx context.Context, q Querier, node *string, evidence []string, limit int) (map[string][]Withholding, []Withholding, error) {
	rows, err := q.Query(ctx, withholdingsSQL, node, evidence, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	byEvidence := map[string][]Withholding{}
	all := []Withholding{}
	for rows.Next() {
		var (
			w     Withholding
			n     string
			units int64
			at    time.Time
		)
		if err := rows.Scan(&w.EpochID, &n, &w.EvidenceID, &units, &w.Kind, &at); err != nil {
			return nil, nil, err
		}
		w.StartsAt = time.Unix(w.EpochID*events.EpochSeconds, 0).UTC().Format(time.RFC3339)
		w.Units, w.USDT, w.At = money.Units(units), money.USDT(units), at.UTC().Format(time.RFC3339)
		byEvidence[w.EvidenceID] = append(byEvidence[w.EvidenceID], w)
		all = append(all, w)
	}
	return byEvidence, all, rows.Err()
}

// reviewText tells a quarantined operator what to do.
const reviewText = "A quarantined node gets no traffic and earns nothing for the epochs in which it may have answered unlike a trusted provider: " +
	"the epoch its evidence is booked into and every earlier epoch within the evidence's lookback not yet settled (withheld_epochs). " +
	"Fix the node, then ask the platform operator for a review; an admin lifts the quarantine after reading the evidence."

// Of reads node's quarantine state and evidence summary.
func Of(ctx context.Context, q Querier, node string) (*Quarantine, error) {
	var (
		at     *time.Time
		reason *string
		ids    []string
		n      int64
		wh     int64
		nw     int64
	)
	err := q.QueryRow(ctx, `SELECT
		(SELECT quarantined_at FROM nodes WHERE node_id = $1),
		(SELECT quarantine_reason FROM nodes WHERE node_id = $1),
		(SELECT COALESCE(array_agg(id ORDER BY ts DESC, id DESC), '{}') FROM
			(SELECT id, ts FROM node_evidence WHERE node_id = $1 ORDER BY ts DESC, id DESC LIMIT $2) x),
		(SELECT count(*) FROM node_evidence WHERE node_id = $1),
		(SELECT COALESCE(sum(withheld_units), 0) FROM epoch_node_shares WHERE node_id = $1)::bigint,
		(SELECT count(*) FROM node_withholdings WHERE node_id = $1)`, node, MaxIDs).
		Scan(&at, &reason, &ids, &n, &wh, &nw)
	if err != nil {
		return nil, err
	}
	_, epochs, err := withholdings(ctx, q, &node, nil, MaxIDs)
	if err != nil {
		return nil, err
	}
	out := &Quarantine{Quarantined: at != nil, Reason: reason, EvidenceIDs: ids, EvidenceCount: n,
		EvidenceURL: "/api/nodes/" + node + "/evidence", WithheldUnits: money.Units(wh), WithheldUSDT: money.USDT(wh),
		WithheldEpochs: epochs, WithheldEpochCount: nw}
	if at != nil {
		s := at.UTC().Format(time.RFC3339)
		out.Since = &s
		out.Review = reviewText
	}
	return out, nil
}

// Item is one piece of evidence as the operator and the admin read it.
type Item struct {
	ID            string          `json:"id"`
	Time          string          `json:"ts"`
	EpochID       int64           `json:"epoch_id"`
	BookedEpoch   int64           `json:"booked_epoch"`
	ChainID       int64           `json:"chain_id"`
	NodeID        string          `json:"node_id"`
	RequestID     string          `json:"request_id"`
	Method        string          `json:"method"`
	Params        json.RawMessage `json:"params"`
	Block         int64           `json:"block"`
	NodeAnswer    json.RawMessage `json:"node_answer"`
	TrustedAnswer json.RawMessage `json:"trusted_answer"`
	TrustedBy     string          `json:"trusted_by"`
	ReceivedAt    string          `json:"received_at"`
	// SuspectSince is the event's optional "the lies may start here"
	// (RFC 3339; null when it gave none): the window of epochs withheld
	// reaches back to it when that is earlier than the lookback.
	SuspectSince *string `json:"suspect_since"`
	// Withheld lists the epochs whose share this evidence withheld, newest
	// first: the epoch it is booked into (once closed) and the earlier,
	// not yet settled epochs within its window. Empty until the booked
	// epoch closes, and for shares another evidence withheld first.
	Withheld []Withholding `json:"withheld"`
}

// MaxList bounds one page of List.
const MaxList = 50

// List returns up to limit pieces of node's evidence older than the cursor
// (a (ts, id) pair from the previous page's last item; nil: the newest).
func List(ctx context.Context, q Querier, node string, limit int, before *Cursor) ([]Item, error) {
	if limit <= 0 || limit > MaxList {
		limit = MaxList
	}
	var ts *time.Time
	var id string
	if before != nil {
		ts, id = &before.TS, before.ID
	}
	// ::text keeps each json value as the text the gateway sent.
	rows, err := q.Query(ctx, `SELECT id, ts, epoch_id, booked_epoch, chain_id, node_id, request_id, method,
		COALESCE(params::text, 'null'), block, node_answer::text, trusted_answer::text, trusted_by, received_at, suspect_since
		FROM node_evidence WHERE node_id = $1 AND ($2::timestamptz IS NULL OR (ts, id) < ($2, $3))
		ORDER BY ts DESC, id DESC LIMIT $4`, node, ts, id, limit)
	if err != nil {
		return nil, err
	}
	out := []Item{}
	var ids []string
	for rows.Next() {
		var it Item
		var at, recv time.Time
		var since *time.Time
		var params, na, ta string
		if err := rows.Scan(&it.ID, &at, &it.EpochID, &it.BookedEpoch, &it.ChainID, &it.NodeID, &it.RequestID, &it.Method,
			&params, &it.Block, &na, &ta, &it.TrustedBy, &recv, &since); err != nil {
			rows.Close()
			return nil, err
		}
		it.Time, it.ReceivedAt = at.UTC().Format(time.RFC3339Nano), recv.UTC().Format(time.RFC3339Nano)
		it.Params, it.NodeAnswer, it.TrustedAnswer = json.RawMessage(params), json.RawMessage(na), json.RawMessage(ta)
		if since != nil {
			s := since.UTC().Format(time.RFC3339Nano)
			it.SuspectSince = &s
		}
		it.Withheld = []Withholding{}
		out = append(out, it)
		ids = append(ids, it.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return out, err
	}
	// A piece of evidence withholds at most one epoch per epoch it reaches;
	// the bound only guards against a pathological window.
	byEvidence, _, err := withholdings(ctx, q, &node, ids, MaxWithheldPerPage)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if w := byEvidence[out[i].ID]; w != nil {
			out[i].Withheld = w
		}
	}
	return out, nil
}

// MaxWithheldPerPage bounds the withholdings one page of List reads.
const MaxWithheldPerPage = 10_000

// Cursor is a position in List (the last item of a page).
type Cursor struct {
	TS time.Time
	ID string
}

// Publish rewrites the registry record of every node in nodes from its
// Postgres row, so Redis says what Postgres says (status quarantined after
// evidence, online after a lift). Nodes without a routable row (no URL or
// wallet, deregistered, unknown) are left alone: they have no record the
// gateway could route to. key is the registry hash (<prefix>nodes).
func Publish(ctx context.Context, q Querier, rdb redis.Cmdable, key string, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT node_id, wallet, COALESCE(region, ''), label, url, chain_ids, status FROM nodes
		WHERE node_id = ANY($1) AND url IS NOT NULL AND wallet IS NOT NULL AND status IN ($2, $3, $4)`,
		nodes, registry.StatusOnline, registry.StatusOffline, registry.StatusQuarantined)
	if err != nil {
		return err
	}
	var recs []*registry.Node
	for rows.Next() {
		var n registry.Node
		var ids []int64
		if err := rows.Scan(&n.ID, &n.Wallet, &n.Region, &n.Label, &n.URL, &ids, &n.Status); err != nil {
			rows.Close()
			return err
		}
		for _, id := range ids {
			n.ChainIDs = append(n.ChainIDs, uint64(id))
		}
		recs = append(recs, &n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var errs []error
	for _, n := range recs {
		n.UpdatedAt = time.Now().Unix()
		v, err := registry.Encode(n)
		if err != nil {
			continue // a row the gateway could never route to (no chain, odd id): nothing to quarantine there
		}
		if err := rdb.HSet(ctx, key, n.ID, v).Err(); err != nil {
			errs = append(errs, fmt.Errorf("evidence: publishing %s: %w", n.ID, err))
		}
	}
	return errors.Join(errs...)
}

// ErrNotQuarantined: Lift found the node, but it is not quarantined.
var ErrNotQuarantined = errors.New("evidence: node is not quarantined")

// ErrUnknownNode: Lift found no such node.
var ErrUnknownNode = errors.New("evidence: no such node")

// ErrNotPublished: Lift committed, but the registry record could not be
// rewritten (the node prober will).
var ErrNotPublished = errors.New("evidence: lifted, registry record not rewritten")

// Lift ends node's quarantine after an admin review: the node is online
// again (the prober takes it offline if it does not answer), the lift is
// logged with who and why, and its registry record is republished. The
// evidence and the shares already withheld stay as they are: a lift
// restores traffic, not money (docs/decisions.md).
func Lift(ctx context.Context, db interface {
	Querier
	Begin(ctx context.Context) (pgx.Tx, error)
}, rdb redis.Cmdable, key, node, by, reason string) error {
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var at *time.Time
		err := tx.QueryRow(ctx, `SELECT quarantined_at FROM nodes WHERE node_id = $1 FOR UPDATE`, node).Scan(&at)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrUnknownNode
		}
		if err != nil {
			return err
		}
		if at == nil {
			return ErrNotQuarantined
		}
		// A deregistered node stays deregistered; only its quarantine ends.
		if _, err := tx.Exec(ctx, `UPDATE nodes SET quarantined_at = NULL, quarantine_reason = NULL, updated_at = now(),
			status = CASE WHEN status = 'quarantined' THEN 'online' ELSE status END, probe_failures = 0 WHERE node_id = $1`, node); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO node_quarantine_log (node_id, action, by, reason) VALUES ($1, 'unquarantined', $2, $3)`,
			node, by, reason)
		return err
	})
	if err != nil {
		return err
	}
	if err := Publish(ctx, db, rdb, key, []string{node}); err != nil {
		return fmt.Errorf("%w: %v", ErrNotPublished, err)
	}
	return nil
}
