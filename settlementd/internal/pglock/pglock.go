// Package pglock names settlementd's Postgres advisory locks. They use the
// two-int4 key form, whose lock space (objsubid 2 in pg_locks) cannot collide
// with golang-migrate's single-bigint migration lock.
package pglock

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Namespace is the first key of every settlementd lock ("Toll" in ASCII).
const Namespace int32 = 0x546f6c6c

// Key is the second half of an advisory lock key.
type Key int32

const (
	// Leader is held, session-level, by the replica that runs the jobs.
	Leader Key = 1
	// Booking orders revenue ingest against epoch closing: ingest batches
	// take it shared, the closer exclusively, so an event is either visible
	// to the close of its epoch or sees that epoch CLOSED and books into the
	// next one — never neither.
	Booking Key = 2
)

// XactShared takes k in shared mode until the transaction ends.
func XactShared(ctx context.Context, tx pgx.Tx, k Key) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1, $2)`, Namespace, int32(k))
	return err
}

// Xact takes k exclusively until the transaction ends.
func Xact(ctx context.Context, tx pgx.Tx, k Key) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, Namespace, int32(k))
	return err
}
