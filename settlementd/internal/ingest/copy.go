package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// The fast path: the bulk of a batch — revenue events, debits,
// refunds and the refunds' ledger rows — is written with binary COPY
// straight into the tables instead of INSERT … SELECT FROM unnest(…) ON
// CONFLICT DO NOTHING. COPY skips the executor and the
// speculative-insertion dance that ON CONFLICT costs per row, and ships no
// text SQL per batch.
//
// Exactly-once is still the primary keys' job: COPY has no ON CONFLICT, so
// a batch holding an entry that is already stored (a redelivery after a
// crash between commit and XACK, an event XADDed twice) fails the COPY
// with unique_violation, its transaction rolls back whole, and the batch
// is written again by the ON CONFLICT statements (batch.write), which skip
// what is stored. Redeliveries are rare, so the common batch pays for one
// transaction, and the rare one for two. A refund's ledger row is written
// from the same column arrays as the refund in the same transaction, so it
// exists exactly when its refund does; a debit has no ledger row of its own
// (the account_ledger view reads it from debits, migration 0073).

// isUniqueViolation: the fast path met a row that is already stored.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// copyRows is how many rows the fast path would COPY.
func (b *batch) copyRows() int { return len(b.rev.id) + len(b.deb.id) + len(b.ref.id) }

// The COPY statements of the fast path, in binary format; the rows are
// encoded by copyEnc in exactly these column orders.
const (
	copyRevenueSQL = `COPY revenue_events (id, ts, epoch_id, booked_epoch, chain_id, payer, account, asset, amount_units, calls, upstream, node_id, method) FROM STDIN (FORMAT binary)`
	copyDebitsSQL  = `COPY debits (id, ts, chain_id, payer, account, asset, amount_units, calls) FROM STDIN (FORMAT binary)`
	copyRefundsSQL = `COPY refunds (id, ts, payer, account, amount_units, calls) FROM STDIN (FORMAT binary)`
	copyLedgerSQL  = `COPY account_ledger_entries (account, kind, ref, units, calls, ts) FROM STDIN (FORMAT binary)`
)

// copyEnc writes PostgreSQL's binary COPY format directly: the
// columns are only text, integer, bigint and timestamptz, whose binary forms
// are fixed (text: its bytes; integers: big-endian; timestamptz: µs since
// 2000-01-01 UTC), so pgx's per-value type planning and the boxing of every
// value into an interface — a tenth of the ingester's CPU and most of its
// garbage in the profile — buy nothing here. PostgreSQL checks what it
// receives as it did before (text must be valid UTF-8, types by column).
type copyEnc struct{ buf []byte }

// copyBufs recycles the encoding buffers (hundreds of kB per batch).
var copyBufs = sync.Pool{New: func() any { return &copyEnc{} }}

// pgEpochMicros is 2000-01-01T00:00:00Z in µs since the Unix epoch: the zero
// of PostgreSQL's binary timestamptz.
const pgEpochMicros = 946_684_800_000_000

func (c *copyEnc) begin() {
	// Signature, flags (no OIDs), header extension length.
	c.buf = append(c.buf[:0], "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"...)
}

func (c *copyEnc) row(fields int) { c.buf = binary.BigEndian.AppendUint16(c.buf, uint16(fields)) }

func (c *copyEnc) text(s string) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(len(s)))
	c.buf = append(c.buf, s...)
}

// textOrNull writes an empty string as NULL, as the statements' NULLIF
// does: an absent account or node is NULL in Postgres.
func (c *copyEnc) textOrNull(s string) {
	if s == "" {
		c.null()
		return
	}
	c.text(s)
}

func (c *copyEnc) null() { c.buf = binary.BigEndian.AppendUint32(c.buf, 0xffffffff) }

func (c *copyEnc) int8(v int64) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, 8)
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(v))
}

func (c *copyEnc) int4(v int32) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, 4)
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(v))
}

func (c *copyEnc) timestamptz(t time.Time) { c.int8(t.UnixMicro() - pgEpochMicros) }

// copyIn runs sql (a COPY … FROM STDIN binary) with the n rows fill encodes.
func copyIn(ctx context.Context, tx pgx.Tx, sql string, n int, fill func(c *copyEnc, i int)) error {
	if n == 0 {
		return nil
	}
	c := copyBufs.Get().(*copyEnc)
	defer copyBufs.Put(c)
	c.begin()
	for i := range n {
		fill(c, i)
	}
	c.buf = append(c.buf, 0xff, 0xff) // trailer
	_, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(c.buf), sql)
	return err
}

// copyRevenue COPYs the batch's revenue rows, booked into the epoch open
// (open) when their own is older, as insertRevenue books them.
func copyRevenue(ctx context.Context, tx pgx.Tx, r *revenueCols, open *int64) error {
	return copyIn(ctx, tx, copyRevenueSQL, len(r.id), func(c *copyEnc, i int) {
		booked := r.epoch[i]
		if open != nil && *open > booked {
			booked = *open
		}
		c.row(13)
		c.text(r.id[i])
		c.timestamptz(r.ts[i])
		c.int8(r.epoch[i])
		c.int8(booked)
		c.int8(r.chain[i])
		c.text(r.payer[i])
		c.textOrNull(r.account[i])
		c.text(r.asset[i])
		c.int8(r.amount[i])
		c.int4(r.calls[i])
		c.text(r.upstream[i])
		c.textOrNull(r.node[i])
		c.text(r.method[i])
	})
}

// ledgerKind is the ledger kind of a debit (or, refund true, a refund) by
// payer; "" when the payer has no ledger: the free tier, and a
// batch-settlement channel's draw (its deposit is the escrow contract's,
// kept in x402_channels; counted as a bundle draw it would be taken from the
// wallet's bundle when the bundle is rebuilt). Same mapping as
// insertRefunds and, for debits, the account_ledger view (migration 0073),
// which a test holds it to.
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
// revenue, debits, refunds and the refunds' ledger rows, the usual
// statements for the rest. A unique violation means part of the batch is already stored; the
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
		if err := copyRevenue(ctx, tx, r, open); err != nil {
			return err
		}
	}
	d, f := &b.deb, &b.ref
	if err := copyIn(ctx, tx, copyDebitsSQL, len(d.id), func(c *copyEnc, i int) {
		c.row(8)
		c.text(d.id[i])
		c.timestamptz(d.ts[i])
		c.int8(d.chain[i])
		c.text(d.payer[i])
		c.textOrNull(d.account[i])
		c.text(d.asset[i])
		c.int8(d.amount[i])
		c.int4(d.calls[i])
	}); err != nil {
		return err
	}
	if err := copyIn(ctx, tx, copyRefundsSQL, len(f.id), func(c *copyEnc, i int) {
		c.row(6)
		c.text(f.id[i])
		c.timestamptz(f.ts[i])
		c.text(f.payer[i])
		c.textOrNull(f.account[i])
		c.int8(f.amount[i])
		c.int4(f.calls[i])
	}); err != nil {
		return err
	}
	// Ledger rows: one per refund of a paying payer, in the batch's order.
	var led []int
	for i, p := range f.payer {
		if ledgerKind(p, true) != "" {
			led = append(led, i)
		}
	}
	if err := copyIn(ctx, tx, copyLedgerSQL, len(led), func(c *copyEnc, i int) {
		j := led[i]
		c.row(6)
		c.textOrNull(f.account[j])
		c.text(ledgerKind(f.payer[j], true))
		c.text(f.id[j])
		c.int8(f.amount[j])
		c.int8(int64(f.calls[j]))
		c.timestamptz(f.ts[j])
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
