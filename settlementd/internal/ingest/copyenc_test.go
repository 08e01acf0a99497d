package ingest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestCopyStoresWhatTheStatementsStore: the fast path's hand-encoded binary
// COPY (copyEnc) stores exactly the rows the ON CONFLICT statements store
// from the same batch — every column, NULLs (free tier without account,
// revenue without node), timestamps to the millisecond, booked epochs and
// ledger rows — each written in a transaction that is then rolled back.
func TestCopyStoresWhatTheStatementsStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(7, 600, now.Add(-50*time.Hour), now)
	msgs := make([]redis.XMessage, len(evs))
	for i, ev := range evs {
		f, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{}
		for k := 0; k+1 < len(f); k += 2 {
			vals[f[k].(string)] = fmt.Sprint(f[k+1])
		}
		msgs[i] = redis.XMessage{ID: fmt.Sprintf("1-%d", i), Values: vals}
	}
	b := newBatch(msgs)
	if len(b.dead) > 0 || len(b.rev.id) == 0 || len(b.deb.id) == 0 || len(b.ref.id) == 0 {
		t.Fatalf("batch: %d revenue, %d debits, %d refunds, %d dead", len(b.rev.id), len(b.deb.id), len(b.ref.id), len(b.dead))
	}
	const rows = `
SELECT 'r' || row(id, ts, epoch_id, booked_epoch, chain_id, payer, account, asset, amount_units, calls, upstream, node_id, method)::text FROM revenue_events
UNION ALL SELECT 'd' || row(id, ts, chain_id, payer, account, asset, amount_units, calls)::text FROM debits
UNION ALL SELECT 'f' || row(id, ts, payer, account, amount_units, calls)::text FROM refunds
UNION ALL SELECT 'l' || row(account, kind, ref, units, calls, ts)::text FROM account_ledger
UNION ALL SELECT 'h' || row(account, hour, chain_id, method, payer, requests, calls, amount_units)::text FROM usage_hourly
UNION ALL SELECT 'n' || row(node_id, hour, chain_id, requests, calls, amount_units)::text FROM node_usage_hourly
ORDER BY 1`
	stored := func(write func(pgx.Tx) error) []string {
		tx, err := e.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := write(tx); err != nil {
			t.Fatal(err)
		}
		r, err := tx.Query(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	copied := stored(func(tx pgx.Tx) error { return b.copyWrite(ctx, tx, "t") })
	stmts := stored(func(tx pgx.Tx) error { return b.write(ctx, tx, "t") })
	if want := len(b.rev.id) + len(b.deb.id) + len(b.ref.id); len(copied) < want {
		t.Fatalf("%d rows stored, want at least %d", len(copied), want)
	}
	if !slices.Equal(copied, stmts) {
		for i := range min(len(copied), len(stmts)) {
			if copied[i] != stmts[i] {
				t.Fatalf("row %d:\n copy       %s\n statements %s", i, copied[i], stmts[i])
			}
		}
		t.Fatalf("copy stored %d rows, the statements %d", len(copied), len(stmts))
	}
}
