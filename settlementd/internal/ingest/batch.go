package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Bounds of an event time settlement will book. Anything outside is a
// gateway bug or garbage, and a timestamptz out of Postgres' range would fail
// the whole batch, so it is parked instead.
var (
	minEventMs = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxEventMs = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

// Dead-letter reason classes (the metric label; the full reason is stored).
const (
	deadUnknown  = "unknown_type"
	deadDecode   = "decode"
	deadRange    = "out_of_range"
	deadRejected = "db_rejected"
	deadDeleted  = "deleted"
)

// batch is one set of stream entries turned into column arrays, ready for a
// single transaction. The arrays feed unnest(), so a batch of thousands of
// events costs a handful of statements.
type batch struct {
	ids      []string // stream ids to acknowledge after commit
	maxEvent int64    // newest event time in the batch (ms)

	rev     revenueCols
	deb     debitCols
	ref     refundCols
	keys    []*events.KeyCreated
	revokes []*events.KeyRevoked
	bundles []*events.BundleGranted
	adj     adjustmentCols
	ev      evidenceCols
	chans   map[string]*events.ChannelState // the newest state of each channel in the batch
	chanTxs [][2]string                     // (channel, deposit tx) of the batch's deposit states
	dead    []deadLetter
	scratch []events.Event // the events of the entry being added

	counts map[string]int // events per type, for metrics
}

type deadLetter struct {
	streamID string
	class    string
	reason   string
	fields   []byte
}

type revenueCols struct {
	id, method, payer, account, asset, upstream, node []string
	ts                                                []time.Time
	epoch, chain, amount                              []int64
	calls                                             []int32
}

type debitCols struct {
	id, payer, account, asset []string
	ts                        []time.Time
	chain, amount             []int64
	calls                     []int32
}

type refundCols struct {
	id, payer, account []string
	ts                 []time.Time
	amount             []int64
	calls              []int32
}

type evidenceCols struct {
	id, node, request, method, params, nodeAnswer, trustedAnswer, trustedBy []string
	ts                                                                      []time.Time
	epoch, chain, block                                                     []int64
	suspect                                                                 []int64 // suspect_since_ms; 0: none
}

type adjustmentCols struct {
	id, account, reason []string
	ts                  []time.Time
	units               []int64
}

func (b *batch) len() int {
	return len(b.rev.id) + len(b.deb.id) + len(b.ref.id) + len(b.keys) + len(b.revokes) + len(b.bundles) + len(b.adj.id) + len(b.ev.id) +
		len(b.chans) + len(b.dead)
}

// evidenceNodes lists the nodes with evidence in the batch (registry
// records to republish after the commit).
func (b *batch) evidenceNodes() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range b.ev.node {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// newBatch decodes stream entries. Entries this build cannot book become dead
// letters in the same batch: parked and acknowledged, never dropped, never
// blocking the entries behind them.
func newBatch(msgs []redis.XMessage) *batch { return batchOf(entriesOf(msgs)) }

// batchOf is newBatch of entries as the ingester reads them.
func batchOf(msgs []entry) *batch {
	b := batches.Get().(*batch)
	for _, m := range msgs {
		b.add(m)
	}
	return b
}

// batches recycles batches: a batch's column arrays are
// appended to one entry at a time, and growing a dozen of them from nothing
// for every batch of thousands was a fifth of the ingester's allocations.
var batches = sync.Pool{New: func() any { return &batch{counts: map[string]int{}} }}

// release empties b and hands it back for reuse: only once nothing refers to
// it any more (the batch has been committed and acknowledged, or given up).
// Entries are cleared, not just truncated, so a recycled batch does not keep
// the last batch's strings alive.
func (b *batch) release() {
	b.ids = reuse(b.ids)
	b.maxEvent = 0
	r := &b.rev
	r.id, r.method, r.payer, r.account, r.asset, r.upstream, r.node = reuse(r.id), reuse(r.method), reuse(r.payer),
		reuse(r.account), reuse(r.asset), reuse(r.upstream), reuse(r.node)
	r.ts, r.epoch, r.chain, r.amount, r.calls = r.ts[:0], r.epoch[:0], r.chain[:0], r.amount[:0], r.calls[:0]
	d := &b.deb
	d.id, d.payer, d.account, d.asset = reuse(d.id), reuse(d.payer), reuse(d.account), reuse(d.asset)
	d.ts, d.chain, d.amount, d.calls = d.ts[:0], d.chain[:0], d.amount[:0], d.calls[:0]
	f := &b.ref
	f.id, f.payer, f.account = reuse(f.id), reuse(f.payer), reuse(f.account)
	f.ts, f.amount, f.calls = f.ts[:0], f.amount[:0], f.calls[:0]
	// The rare types are not worth keeping.
	b.keys, b.revokes, b.bundles, b.adj, b.ev, b.dead = nil, nil, nil, adjustmentCols{}, evidenceCols{}, nil
	clear(b.counts)
	batches.Put(b)
}

func reuse[T any](s []T) []T {
	clear(s)
	return s[:0]
}

func (b *batch) add(m entry) {
	b.ids = append(b.ids, m.id)
	if m.deleted() {
		// A pending entry trimmed from the stream before it was stored:
		// its content is gone, but its loss is recorded.
		b.park(m, deadDeleted, "entry deleted from the stream before it was ingested")
		return
	}
	evs, err := m.appendEvents(b.scratch[:0])
	b.scratch = evs
	if err != nil {
		class := deadDecode
		if errors.Is(err, events.ErrUnknownType) {
			class = deadUnknown
		}
		b.park(m, class, err.Error())
		return
	}
	// A packed entry is booked or parked whole: all its events are checked
	// before any is booked.
	for i, e := range evs {
		if err := bookable(e); err != nil {
			class := deadRange
			if errors.Is(err, errNoTable) {
				class = deadUnknown
			}
			reason := err.Error()
			if len(evs) > 1 {
				reason = fmt.Sprintf("packed entry, event %d of %d: %s", i+1, len(evs), reason)
			}
			b.park(m, class, reason)
			return
		}
	}
	for _, e := range evs {
		b.book(e)
	}
	clear(evs) // the scratch slice must not keep the events alive
}

// book adds one decoded, bookable event to the batch's columns.
func (b *batch) book(e events.Event) {
	b.counts[e.EventType()]++
	switch e := e.(type) {
	case *events.Revenue:
		r := &b.rev
		r.id = append(r.id, e.ID)
		r.ts = append(r.ts, time.UnixMilli(e.TimeMs))
		r.epoch = append(r.epoch, events.EpochOf(time.UnixMilli(e.TimeMs)))
		r.chain = append(r.chain, int64(e.ChainID))
		r.method = append(r.method, e.Method)
		r.payer = append(r.payer, string(e.Payer))
		r.account = append(r.account, e.Account)
		r.asset = append(r.asset, e.Asset)
		r.amount = append(r.amount, int64(e.Amount))
		r.calls = append(r.calls, int32(e.Calls))
		r.upstream = append(r.upstream, e.Upstream)
		r.node = append(r.node, e.NodeID)
		b.seen(e.TimeMs)
	case *events.Debit:
		d := &b.deb
		d.id = append(d.id, e.ID)
		d.ts = append(d.ts, time.UnixMilli(e.TimeMs))
		d.chain = append(d.chain, int64(e.ChainID))
		d.payer = append(d.payer, string(e.Payer))
		d.account = append(d.account, e.Account)
		d.asset = append(d.asset, e.Asset)
		d.amount = append(d.amount, int64(e.Amount))
		d.calls = append(d.calls, int32(e.Calls))
		b.seen(e.TimeMs)
	case *events.Refund:
		r := &b.ref
		r.id = append(r.id, e.ID)
		r.ts = append(r.ts, time.UnixMilli(e.TimeMs))
		r.payer = append(r.payer, string(e.Payer))
		r.account = append(r.account, e.Account)
		r.amount = append(r.amount, int64(e.Amount))
		r.calls = append(r.calls, int32(e.Calls))
		b.seen(e.TimeMs)
	case *events.KeyCreated:
		b.keys = append(b.keys, e)
		b.seen(e.TimeMs)
	case *events.KeyRevoked:
		b.revokes = append(b.revokes, e)
		b.seen(e.TimeMs)
	case *events.BundleGranted:
		b.bundles = append(b.bundles, e)
		b.seen(e.TimeMs)
	case *events.Adjustment:
		a := &b.adj
		a.id = append(a.id, e.ID)
		a.account = append(a.account, e.Account)
		a.units = append(a.units, int64(e.Units))
		a.reason = append(a.reason, e.Reason)
		a.ts = append(a.ts, time.UnixMilli(e.TimeMs))
		b.seen(e.TimeMs)
	case *events.ChannelState:
		// Only the newest state of a channel matters; the upsert keeps the
		// newest across batches.
		if b.chans == nil {
			b.chans = map[string]*events.ChannelState{}
		}
		if old := b.chans[e.Channel]; old == nil || e.Seq > old.Seq {
			b.chans[e.Channel] = e
		}
		if e.DepositTx != "" {
			b.chanTxs = append(b.chanTxs, [2]string{e.Channel, e.DepositTx})
		}
		b.seen(e.TimeMs)
	case *events.NodeMismatch:
		v := &b.ev
		v.id = append(v.id, e.ID)
		v.ts = append(v.ts, time.UnixMilli(e.TimeMs))
		v.epoch = append(v.epoch, events.EpochOf(time.UnixMilli(e.TimeMs)))
		v.chain = append(v.chain, int64(e.ChainID))
		v.node = append(v.node, e.NodeID)
		v.request = append(v.request, e.RequestID)
		v.method = append(v.method, e.Method)
		v.params = append(v.params, string(e.Params))
		v.block = append(v.block, int64(e.Block))
		v.nodeAnswer = append(v.nodeAnswer, string(e.NodeAnswer))
		v.trustedAnswer = append(v.trustedAnswer, string(e.TrustedAnswer))
		v.trustedBy = append(v.trustedBy, e.TrustedBy)
		// Kept only when it is not after the evidence (a later one says
		// nothing the lookback does not).
		var since int64
		if e.SuspectSinceMs > 0 && e.SuspectSinceMs <= e.TimeMs {
			since = e.SuspectSinceMs
		}
		v.suspect = append(v.suspect, since)
		b.seen(e.TimeMs)
	}
}

func (b *batch) seen(ms int64) { b.maxEvent = max(b.maxEvent, ms) }

func (b *batch) park(m entry, class, reason string) {
	values := m.valueMap()
	raw, err := json.Marshal(values)
	if err != nil {
		raw = []byte(fmt.Sprintf("%q", fmt.Sprint(values)))
	}
	b.dead = append(b.dead, deadLetter{streamID: m.id, class: class, reason: clean(reason), fields: raw})
}

// clean makes s storable as Postgres text (valid UTF-8, no NUL).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", `\x00`)
}

// errNoTable: a type registered in shared/events that this ingest has no
// table for yet. Parked rather than acknowledged into nothing.
var errNoTable = errors.New("no table for this event type")

// bookable rejects what Validate allows but Postgres cannot store: NUL bytes
// in text, integers beyond the column types, times outside timestamptz
// sanity. Without it one such entry would fail its batch forever.
func bookable(e events.Event) error {
	var (
		ms      int64
		calls   int
		chainID uint64
		texts   []string
	)
	switch e := e.(type) {
	case *events.Revenue:
		ms, calls, chainID = e.TimeMs, e.Calls, e.ChainID
		texts = []string{e.ID, e.Method, string(e.Payer), e.Account, e.Asset, e.Upstream, e.NodeID}
	case *events.Debit:
		ms, calls, chainID = e.TimeMs, e.Calls, e.ChainID
		texts = []string{e.ID, string(e.Payer), e.Account, e.Asset}
	case *events.Refund:
		ms, calls = e.TimeMs, e.Calls
		texts = []string{e.ID, string(e.Payer), e.Account}
	case *events.KeyCreated:
		ms = e.TimeMs
		texts = []string{e.KeyID, e.KeyHash, string(e.Kind), e.Label, e.Tier, e.Email, e.Wallet}
	case *events.KeyRevoked:
		ms = e.TimeMs
		texts = []string{e.KeyID, e.Reason}
	case *events.BundleGranted:
		ms, calls = e.TimeMs, e.Calls
		texts = []string{e.ID, e.Wallet, e.Network, e.KeyID}
	case *events.Adjustment:
		ms = e.TimeMs
		texts = []string{e.ID, e.Account, e.Reason}
	case *events.ChannelState:
		ms = e.TimeMs
		texts = []string{e.Channel, e.Wallet, e.Signature, e.Config, e.DepositTx}
		if !utf8.ValidString(e.Config) {
			return fmt.Errorf("%s: config is not UTF-8", e.EventType())
		}
	case *events.NodeMismatch:
		ms, chainID = e.TimeMs, e.ChainID
		texts = []string{e.ID, e.NodeID, e.RequestID, e.Method, e.TrustedBy, string(e.Params), string(e.NodeAnswer), string(e.TrustedAnswer)}
		if e.Block > math.MaxInt64 {
			return fmt.Errorf("%s: block %d too large", e.EventType(), e.Block)
		}
		// Postgres json is UTF-8 text; Go's json.Valid lets invalid bytes
		// inside strings through.
		for _, s := range texts {
			if !utf8.ValidString(s) {
				return fmt.Errorf("%s: a field is not UTF-8", e.EventType())
			}
		}
	default:
		return fmt.Errorf("%s: %w", e.EventType(), errNoTable)
	}
	switch {
	case ms < minEventMs || ms > maxEventMs:
		return fmt.Errorf("%s: ts %d outside 2000..2200", e.EventType(), ms)
	case calls > math.MaxInt32:
		return fmt.Errorf("%s: calls %d too large", e.EventType(), calls)
	case chainID > math.MaxInt64:
		return fmt.Errorf("%s: chain_id %d too large", e.EventType(), chainID)
	}
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%s: NUL byte in a text field", e.EventType())
		}
	}
	return nil
}

// SQL of the bulk writes. Each inserts with ON CONFLICT DO NOTHING on the
// event id, so a redelivered entry is a no-op; the ledger rows (refunds,
// grants, adjustments) are written by the same statement from the rows
// actually inserted (RETURNING), so a ledger entry exists exactly when its
// event does. Debits have no ledger row of their own: the account_ledger
// view reads them from debits (migration 0073).
const (
	// booked_epoch: the event's own epoch, or the open epoch when its own
	// has already CLOSED (a late event is booked forward, never dropped).
	// Runs under the shared Booking lock; see pglock.Booking.
	insertRevenue = `
INSERT INTO revenue_events (id, ts, epoch_id, booked_epoch, chain_id, payer, account, asset, amount_units, calls, upstream, node_id, method)
SELECT r.id, r.ts, r.epoch_id, GREATEST(r.epoch_id, COALESCE(o.id, r.epoch_id)), r.chain_id, r.payer,
       NULLIF(r.account, ''), r.asset, r.amount_units, r.calls, r.upstream, NULLIF(r.node_id, ''), r.method
FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[],
            $8::bigint[], $9::int[], $10::text[], $11::text[], $12::text[])
     AS r(id, ts, epoch_id, chain_id, payer, account, asset, amount_units, calls, upstream, node_id, method)
LEFT JOIN (SELECT id FROM epochs WHERE state = 'open') o ON true
ON CONFLICT (id) DO NOTHING
RETURNING ts, chain_id, payer, account, amount_units, calls, node_id, method`

	// The usage rollups (migration 0046) are added to from the revenue
	// rows the insert actually made, in the same statement: a redelivered
	// event inserts nothing and so adds nothing (exactly once). Rows are
	// upserted in key order, text bytewise (COLLATE "C", as the fast path's
	// sums in rollup.go are sorted), so concurrent ingesters lock them in
	// the same order.
	insertRevenueRollups = `
WITH ins AS (` + insertRevenue + `),` + revenueRollups

	// copiedRevenueRollups adds to the rollups from the revenue rows the
	// fast path COPYed: a COPY inserts every row of the batch or fails the
	// transaction, so the batch's own arrays are exactly the rows inserted.
	copiedRevenueRollups = `
WITH ins AS (
    SELECT r.ts, r.chain_id, r.payer, NULLIF(r.account, '') AS account, r.amount_units, r.calls,
           NULLIF(r.node_id, '') AS node_id, r.method
    FROM unnest($1::timestamptz[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::int[], $7::text[], $8::text[])
         AS r(ts, chain_id, payer, account, amount_units, calls, node_id, method)),` + revenueRollups

	// revenueRollups: the usage rollups' upserts from a CTE named ins.
	revenueRollups = `
hourly AS (
    INSERT INTO usage_hourly AS u (account, hour, chain_id, method, payer, requests, calls, amount_units)
    SELECT account, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour, chain_id, method, payer,
           count(*), sum(calls), sum(amount_units)
    FROM ins WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY account COLLATE "C", 2, 3, method COLLATE "C", payer COLLATE "C"
    ON CONFLICT (account, hour, chain_id, method, payer) DO UPDATE SET requests = u.requests + EXCLUDED.requests,
        calls = u.calls + EXCLUDED.calls, amount_units = u.amount_units + EXCLUDED.amount_units),
daily AS (
    INSERT INTO usage_daily AS u (account, day, chain_id, method, payer, requests, calls, amount_units)
    SELECT account, (ts AT TIME ZONE 'UTC')::date AS day, chain_id, method, payer, count(*), sum(calls), sum(amount_units)
    FROM ins WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY account COLLATE "C", 2, 3, method COLLATE "C", payer COLLATE "C"
    ON CONFLICT (account, day, chain_id, method, payer) DO UPDATE SET requests = u.requests + EXCLUDED.requests,
        calls = u.calls + EXCLUDED.calls, amount_units = u.amount_units + EXCLUDED.amount_units)
INSERT INTO node_usage_hourly AS u (node_id, hour, chain_id, requests, calls, amount_units)
SELECT node_id, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour, chain_id, count(*), sum(calls), sum(amount_units)
FROM ins WHERE node_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY node_id COLLATE "C", 2, 3
ON CONFLICT (node_id, hour, chain_id) DO UPDATE SET requests = u.requests + EXCLUDED.requests,
    calls = u.calls + EXCLUDED.calls, amount_units = u.amount_units + EXCLUDED.amount_units`

	// A debit is one row (migration 0073): the ledger's debit and
	// bundle_debit entries are the debits of the credits and bundle payers,
	// read through the account_ledger view.
	insertDebits = `
INSERT INTO debits (id, ts, chain_id, payer, account, asset, amount_units, calls)
SELECT d.id, d.ts, d.chain_id, d.payer, NULLIF(d.account, ''), d.asset, d.amount_units, d.calls
FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::int[])
     AS d(id, ts, chain_id, payer, account, asset, amount_units, calls)
ON CONFLICT (id) DO NOTHING`

	insertRefunds = `
WITH ins AS (
    INSERT INTO refunds (id, ts, payer, account, amount_units, calls)
    SELECT r.id, r.ts, r.payer, NULLIF(r.account, ''), r.amount_units, r.calls
    FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::bigint[], $6::int[])
         AS r(id, ts, payer, account, amount_units, calls)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, ts, payer, account, amount_units, calls)
INSERT INTO account_ledger_entries (account, kind, ref, units, calls, ts)
SELECT account, CASE payer WHEN 'credits' THEN 'refund' ELSE 'bundle_refund' END, id, amount_units, calls, ts
FROM ins WHERE payer IN ('credits', 'bundle')
ON CONFLICT (kind, ref) DO NOTHING`

	// A key row may already exist as a bare revocation (ingested first); the
	// creation fills it in. A complete row is left alone (redelivery).
	upsertKey = `
INSERT INTO api_keys (key_id, key_hash, kind, label, tier, email, email_consent, wallet, created_at)
VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), $7, NULLIF($8, ''), $9)
ON CONFLICT (key_id) DO UPDATE SET
    key_hash = EXCLUDED.key_hash, kind = EXCLUDED.kind, label = EXCLUDED.label, tier = EXCLUDED.tier,
    email = EXCLUDED.email, email_consent = EXCLUDED.email_consent, wallet = EXCLUDED.wallet,
    created_at = EXCLUDED.created_at
WHERE api_keys.key_hash IS NULL`

	// The first revocation wins; a repeat changes nothing.
	upsertRevoke = `
INSERT INTO api_keys (key_id, revoked_at, revoke_reason)
VALUES ($1, $2, NULLIF($3, ''))
ON CONFLICT (key_id) DO UPDATE SET
    revoked_at = COALESCE(api_keys.revoked_at, EXCLUDED.revoked_at),
    revoke_reason = COALESCE(api_keys.revoke_reason, EXCLUDED.revoke_reason)`

	// An x402 grant (id = settlement tx hash) and the bundle key created
	// with it (key_id, migration 0040). A replayed entry inserts nothing, so
	// neither does its ledger row.
	insertBundle = `
WITH ins AS (
    INSERT INTO bundle_grants (id, wallet, calls, amount_units, network, ts, key_id)
    VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''))
    ON CONFLICT (id) DO NOTHING
    RETURNING id, wallet, calls, amount_units, ts)
INSERT INTO account_ledger_entries (account, kind, ref, units, calls, ts)
SELECT wallet, 'bundle_grant', id, amount_units, calls, ts FROM ins
ON CONFLICT (kind, ref) DO NOTHING`

	// Admin credits and debits (migration 0020): ledger kind 'adjustment'.
	insertAdjustments = `
WITH ins AS (
    INSERT INTO adjustments (id, account, units, reason, ts)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::timestamptz[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id, account, units, ts)
INSERT INTO account_ledger_entries (account, kind, ref, units, ts)
SELECT account, 'adjustment', id, units, ts FROM ins
ON CONFLICT (kind, ref) DO NOTHING`

	// Evidence that a node answered unlike a trusted provider (migration
	// 0045). booked_epoch as for revenue: the evidence's own epoch, or the
	// open one when its own has closed (the close withholds the node's
	// share of the booked epoch). A newly stored piece of evidence
	// quarantines its node in the same statement, unless it already is
	// (the first evidence gives the reason) or is deregistered; each
	// quarantine is logged. A redelivered entry inserts nothing and so
	// changes nothing. suspect_since (migration 0080) is the event's
	// optional suspect_since_ms, which widens the window of epochs the close
	// withholds.
	insertEvidence = `
WITH ins AS (
    INSERT INTO node_evidence (id, ts, epoch_id, booked_epoch, chain_id, node_id, request_id, method, params, block,
                               node_answer, trusted_answer, trusted_by, suspect_since)
    SELECT e.id, e.ts, e.epoch_id, GREATEST(e.epoch_id, COALESCE(o.id, e.epoch_id)), e.chain_id, e.node_id, e.request_id, e.method,
           NULLIF(e.params, '')::json, e.block, e.node_answer::json, e.trusted_answer::json, e.trusted_by,
           CASE WHEN e.suspect > 0 THEN LEAST(e.ts, timestamptz 'epoch' + e.suspect * interval '1 millisecond') END
    FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
                $9::bigint[], $10::text[], $11::text[], $12::text[], $13::bigint[])
         AS e(id, ts, epoch_id, chain_id, node_id, request_id, method, params, block, node_answer, trusted_answer, trusted_by, suspect)
    LEFT JOIN (SELECT id FROM epochs WHERE state = 'open') o ON true
    ON CONFLICT (id) DO NOTHING
    RETURNING id, ts, node_id, chain_id, method, block, trusted_by),
first AS (
    SELECT DISTINCT ON (node_id) * FROM ins ORDER BY node_id, ts, id),
q AS (
    UPDATE nodes n SET status = 'quarantined', quarantined_at = now(), updated_at = now(),
        quarantine_reason = format('answered %s (chain %s, block %s) unlike the trusted provider %s at %s; evidence %s',
            f.method, f.chain_id, f.block, f.trusted_by, to_char(f.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), f.id)
    FROM first f
    WHERE n.node_id = f.node_id AND n.quarantined_at IS NULL AND n.status IN ('online', 'offline')
    RETURNING n.node_id, n.quarantine_reason, f.id)
INSERT INTO node_quarantine_log (node_id, action, by, reason, evidence_id)
SELECT node_id, 'quarantined', 'verifier', quarantine_reason, id FROM q`

	// A batch-settlement channel's state (migration 0072): the newest seq
	// wins, so a redelivered or late older state changes nothing.
	upsertChannel = `
INSERT INTO x402_channels AS c (channel_id, seq, wallet, balance, claimed, charged, signed, signature, config, closed, ts)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (channel_id) DO UPDATE SET
    seq = EXCLUDED.seq, wallet = EXCLUDED.wallet, balance = EXCLUDED.balance, claimed = EXCLUDED.claimed,
    charged = EXCLUDED.charged, signed = EXCLUDED.signed, signature = EXCLUDED.signature, config = EXCLUDED.config,
    closed = EXCLUDED.closed, ts = EXCLUDED.ts
WHERE c.seq < EXCLUDED.seq`

	insertChannelDeposits = `
INSERT INTO x402_channel_deposits (channel_id, tx_hash)
SELECT * FROM unnest($1::text[], $2::text[])
ON CONFLICT DO NOTHING`

	insertDead = `
INSERT INTO dead_letters (stream_id, reason, fields, consumer)
SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[])
ON CONFLICT (stream_id) DO NOTHING`
)

// write stores the batch in one transaction (all of it or none of it) with
// ON CONFLICT statements only: the path for a batch part of which may
// already be stored (copyWrite is the fast path tried first).
func (b *batch) write(ctx context.Context, tx pgx.Tx, consumer string) error {
	q := b.statements(consumer, true)
	if q.Len() == 0 {
		return nil
	}
	if len(b.rev.id) > 0 || len(b.ev.id) > 0 {
		// Taken before the revenue and evidence inserts read which epoch
		// is open.
		if err := pglock.XactShared(ctx, tx, pglock.Booking); err != nil {
			return err
		}
	}
	return tx.SendBatch(ctx, q).Close()
}

// statements queues the batch's ON CONFLICT statements; bulk says whether
// revenue, debits and refunds are among them (copyWrite COPYs those).
func (b *batch) statements(consumer string, bulk bool) *pgx.Batch {
	q := &pgx.Batch{}
	if n := len(b.rev.id); n > 0 && bulk {
		r := &b.rev
		q.Queue(insertRevenueRollups, r.id, r.ts, r.epoch, r.chain, r.payer, r.account, r.asset, r.amount, r.calls, r.upstream, r.node, r.method)
	}
	if len(b.deb.id) > 0 && bulk {
		d := &b.deb
		q.Queue(insertDebits, d.id, d.ts, d.chain, d.payer, d.account, d.asset, d.amount, d.calls)
	}
	if len(b.ref.id) > 0 && bulk {
		r := &b.ref
		q.Queue(insertRefunds, r.id, r.ts, r.payer, r.account, r.amount, r.calls)
	}
	for _, k := range b.keys {
		q.Queue(upsertKey, k.KeyID, k.KeyHash, string(k.Kind), k.Label, k.Tier, k.Email, k.EmailConsent, k.Wallet, time.UnixMilli(k.TimeMs))
	}
	for _, k := range b.revokes {
		q.Queue(upsertRevoke, k.KeyID, time.UnixMilli(k.TimeMs), k.Reason)
	}
	for _, g := range b.bundles {
		q.Queue(insertBundle, g.ID, g.Wallet, g.Calls, int64(g.Amount), g.Network, time.UnixMilli(g.TimeMs), g.KeyID)
	}
	if a := &b.adj; len(a.id) > 0 {
		q.Queue(insertAdjustments, a.id, a.account, a.units, a.reason, a.ts)
	}
	if v := &b.ev; len(v.id) > 0 {
		q.Queue(insertEvidence, v.id, v.ts, v.epoch, v.chain, v.node, v.request, v.method, v.params, v.block,
			v.nodeAnswer, v.trustedAnswer, v.trustedBy, v.suspect)
	}
	// In channel id order, so concurrent ingesters lock the rows in the
	// same order.
	chans := make([]string, 0, len(b.chans))
	for id := range b.chans {
		chans = append(chans, id)
	}
	slices.Sort(chans)
	for _, id := range chans {
		c := b.chans[id]
		q.Queue(upsertChannel, c.Channel, c.Seq, c.Wallet, int64(c.Balance), int64(c.Claimed), int64(c.Charged), int64(c.Signed),
			c.Signature, c.Config, c.Closed, time.UnixMilli(c.TimeMs))
	}
	if len(b.chanTxs) > 0 {
		ch, tx := make([]string, len(b.chanTxs)), make([]string, len(b.chanTxs))
		for i, d := range b.chanTxs {
			ch[i], tx[i] = d[0], d[1]
		}
		q.Queue(insertChannelDeposits, ch, tx)
	}
	if len(b.dead) > 0 {
		ids, reasons, fields, cons := make([]string, len(b.dead)), make([]string, len(b.dead)), make([][]byte, len(b.dead)), make([]string, len(b.dead))
		for i, d := range b.dead {
			ids[i], reasons[i], fields[i], cons[i] = d.streamID, d.reason, d.fields, consumer
		}
		q.Queue(insertDead, ids, reasons, fields, cons)
	}
	return q
}
