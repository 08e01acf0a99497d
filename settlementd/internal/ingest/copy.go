package ingest

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// The fast path (issue 22): the bulk of a batch — revenue events, debits,
// refunds and their ledger rows — is written with binary COPY straight into
// the tables instead of INSERT … SELECT FROM unnest(…) ON CONFLICT DO
// NOTHING. COPY skips the executor and the speculative-insertion dance that
// ON CONFLICT costs per row, and ships no text SQL per batch.
//
// Exactly-once is still the primary keys' job: COPY has no ON CONFLICT, so
// a batch holding an entry that is already stored (a redelivery after a
// crash between commit and XACK, an event XADDed twice) fails the COPY
// with unique_violation, its transaction rolls back whole, and the batch
// is written again by the ON CONFLICT statements (batch.write), which skip
// what is stored. Redeliveries are rare, so the common batch pays for one
// transaction, and the rare one for two. The ledger rows are written from
// the same column arrays as their debits and refunds in the same
// transaction, so a ledger entry still exists exactly when its event does.

// isUniqueViolation: the fast path met a row that is already stored.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// copyRows is how many rows the fast path would COPY.
func (b *batch) copyRows() int { return len(b.rev.id) + len(b.deb.id) + len(b.ref.id) }

var (
	revenueCopyCols = []string{"id", "ts", "epoch_id", "booked_epoch", "chain_id", "payer", "account", "asset",
		"amount_units", "calls", "upstream", "node_id", "method"}
	debitCopyCols  = []string{"id", "ts", "chain_id", "payer", "account", "asset", "amount_units", "calls"}
	refundCopyCols = []string{"id", "ts", "payer", "account", "amount_units", "calls"}
	ledgerCopyCols = []string{"account", "kind", "ref", "units", "calls", "ts"}
)

// nullIfEmpty mirrors the statements' NULLIF(x, ”): an absent account or
// node is NULL in Postgres.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// rowSource feeds CopyFrom one reused row slice (CopyFrom encodes each row
// before asking for the next).
type rowSource struct {
	n, i int
	row  []any
	fill func(i int, row []any)
}

func (s *rowSource) Next() bool {
	s.i++
	return s.i <= s.n
}

func (s *rowSource) Values() ([]any, error) {
	s.fill(s.i-1, s.row)
	return s.row, nil
}

func (s *rowSource) Err() error { return nil }

func copyIn(ctx context.Context, tx pgx.Tx, table string, cols []string, n int, fill func(i int, row []any)) error {
	if n == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, &rowSource{n: n, row: make([]any, len(cols)), fill: fill})
	return err
}

// ledgerKind is the ledger kind of a debit (or, refund true, a refund) by
// payer; "" when the payer has no ledger (the free tier). Same mapping as
// insertDebits / insertRefunds.
func ledgerKind(payer string, refund bool) string {
	switch events.Payer(payer) {
	case events.PayerCredits:
		if refund {
			return "refund"
		}
		return "debit"
	case events.PayerBundle:
		if refund {
			return "bundle_refund"
		}
		return "bundle_debit"
	}
	return ""
}

// copyWrite stores the batch in one transaction by the fast path: COPY for
// revenue, debits, refunds and ledger rows, the usual statements for the
// rest. A unique violation means part of the batch is already stored; the
// caller then writes it again with batch.write.
func (b *batch) copyWrite(ctx context.Context, tx pgx.Tx, consumer string) error {
	if len(b.rev.id) > 0 || len(b.ev.id) > 0 {
		// Taken before the open epoch is read: see pglock.Booking.
		if err := pglock.XactShared(ctx, tx, pglock.Booking); err != nil {
			return err
		}
	}
	if r := &b.rev; len(r.id) > 0 {
		// booked_epoch as insertRevenue computes it: the event's own epoch,
		// or the open one when its own has already closed.
		var open *int64
		if err := tx.QueryRow(ctx, `SELECT max(id) FROM epochs WHERE state = 'open'`).Scan(&open); err != nil {
			return err
		}
		err := copyIn(ctx, tx, "revenue_events", revenueCopyCols, len(r.id), func(i int, row []any) {
			booked := r.epoch[i]
			if open != nil && *open > booked {
				booked = *open
			}
			row[0], row[1], row[2], row[3], row[4] = r.id[i], r.ts[i], r.epoch[i], booked, r.chain[i]
			row[5], row[6], row[7], row[8], row[9] = r.payer[i], nullIfEmpty(r.account[i]), r.asset[i], r.amount[i], r.calls[i]
			row[10], row[11], row[12] = r.upstream[i], nullIfEmpty(r.node[i]), r.method[i]
		})
		if err != nil {
			return err
		}
	}
	d, f := &b.deb, &b.ref
	if err := copyIn(ctx, tx, "debits", debitCopyCols, len(d.id), func(i int, row []any) {
		row[0], row[1], row[2], row[3] = d.id[i], d.ts[i], d.chain[i], d.payer[i]
		row[4], row[5], row[6], row[7] = nullIfEmpty(d.account[i]), d.asset[i], d.amount[i], d.calls[i]
	}); err != nil {
		return err
	}
	if err := copyIn(ctx, tx, "refunds", refundCopyCols, len(f.id), func(i int, row []any) {
		row[0], row[1], row[2], row[3] = f.id[i], f.ts[i], f.payer[i], nullIfEmpty(f.account[i])
		row[4], row[5] = f.amount[i], f.calls[i]
	}); err != nil {
		return err
	}
	// Ledger rows: one per debit or refund of a paying payer, in the batch's
	// order (debits, then refunds).
	var led []ledgerRow
	for i, p := range d.payer {
		if k := ledgerKind(p, false); k != "" {
			led = append(led, ledgerRow{kind: k, src: i})
		}
	}
	for i, p := range f.payer {
		if k := ledgerKind(p, true); k != "" {
			led = append(led, ledgerRow{kind: k, src: i, refund: true})
		}
	}
	if err := copyIn(ctx, tx, "account_ledger", ledgerCopyCols, len(led), func(i int, row []any) {
		l := led[i]
		if l.refund {
			row[0], row[2], row[3], row[4], row[5] = nullIfEmpty(f.account[l.src]), f.id[l.src], f.amount[l.src], int64(f.calls[l.src]), f.ts[l.src]
		} else {
			row[0], row[2], row[3], row[4], row[5] = nullIfEmpty(d.account[l.src]), d.id[l.src], -d.amount[l.src], -int64(d.calls[l.src]), d.ts[l.src]
		}
		row[1] = l.kind
	}); err != nil {
		return err
	}
	// Everything else (rare types, dead letters) by its statement.
	if q := b.statements(consumer, false); q.Len() > 0 {
		if err := tx.SendBatch(ctx, q).Close(); err != nil {
			return err
		}
	}
	// The usage rollups last, in the same transaction as the rows, summed
	// per key in Go (rollup.go): every ingester updates the same few rollup
	// rows, and their row locks are held from here to the commit, so the
	// later they are taken the less concurrent batches wait on each other.
	if len(b.rev.id) > 0 {
		return writeRollups(ctx, tx, &b.rev)
	}
	return nil
}

type ledgerRow struct {
	kind   string
	src    int
	refund bool
}
