package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// A debit is stored once (migration 0073): the ingest writes no ledger row
// for it, and the account_ledger view shows exactly one entry per debit of a
// paying payer, of the kind ledgerKind gives, with the debit's account,
// negated amount and calls, and time. Payers without a ledger (the free
// tier, batch-settlement channels, any other) show none.
func TestDebitIsStoredOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(3, 600, now.Add(-time.Hour), now)
	// Twice, so batches fall back to the ON CONFLICT statements too.
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	e.start(t, Config{Batch: 100})
	e.drained(t)
	// A batch-settlement channel's draw (payer channel), stored as a debit:
	// no ledger entry either.
	if _, err := e.pool.Exec(ctx, `INSERT INTO debits (id, ts, chain_id, payer, account, asset, amount_units, calls)
		VALUES ('chan-1', now(), 1, 'channel', '0x01', 'USDC', 5, 1)`); err != nil {
		t.Fatal(err)
	}

	if n := e.count(t, `SELECT count(*) FROM account_ledger_entries WHERE kind IN ('debit', 'bundle_debit')`); n != 0 {
		t.Errorf("%d debit rows stored in the ledger table, want 0 (a debit is a debits row)", n)
	}
	var paid int64
	for _, ev := range evs {
		if d, ok := ev.(*events.Debit); ok && ledgerKind(string(d.Payer), false) != "" {
			paid++
		}
	}
	if paid == 0 {
		t.Fatal("no paid debits in the traffic")
	}
	if n := e.count(t, `SELECT count(*) FROM account_ledger WHERE kind IN ('debit', 'bundle_debit')`); n != paid {
		t.Errorf("%d debit entries in the ledger, want %d", n, paid)
	}
	// Every debit against its ledger entry.
	rows, err := e.pool.Query(ctx, `SELECT d.payer, d.amount_units, d.calls, l.kind, l.units, l.calls,
		d.account IS NOT DISTINCT FROM l.account AND d.ts = l.ts, count(l.ref) OVER (PARTITION BY d.id)
		FROM debits d LEFT JOIN account_ledger l ON l.ref = d.id AND l.kind IN ('debit', 'bundle_debit')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]int{}
	for rows.Next() {
		var (
			payer, kind      *string
			amount, calls    int64
			units, ledgCalls *int64
			same             *bool
			entries          int64
		)
		if err := rows.Scan(&payer, &amount, &calls, &kind, &units, &ledgCalls, &same, &entries); err != nil {
			t.Fatal(err)
		}
		seen[*payer]++
		want := ledgerKind(*payer, false)
		switch {
		case want == "" && entries != 0:
			t.Errorf("payer %s: %d ledger entries, want none", *payer, entries)
		case want == "":
		case entries != 1 || kind == nil || *kind != want:
			t.Errorf("payer %s: %d ledger entries of kind %v, want one %s", *payer, entries, kind, want)
		case *units != -amount || *ledgCalls != -calls || !*same:
			t.Errorf("payer %s: entry %d units %d calls (same account and time %v), debit %d units %d calls",
				*payer, *units, *ledgCalls, *same, amount, calls)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"credits", "bundle", "free", "channel"} {
		if seen[p] == 0 {
			t.Errorf("no %s debit in the test data", p)
		}
	}
	// The ledger refuses a debit row of its own; a plain INSERT into the
	// view stores other kinds.
	if _, err := e.pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, calls, ts)
		VALUES ('key_x', 'debit', 'dup', -1, -1, now())`); err == nil {
		t.Error("a debit row was stored in the ledger table")
	}
	var id int64
	if err := e.pool.QueryRow(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts)
		VALUES ('key_x', 'deposit', '0xd:0', 7, now()) RETURNING id`).Scan(&id); err != nil || id == 0 {
		t.Fatalf("deposit through the view: id %d, %v", id, err)
	}
	if n := e.count(t, `SELECT credit_units FROM account_balances WHERE account = 'key_x'`); n != 7 {
		t.Errorf("key_x balance %d, want 7", n)
	}
}
