package migrations

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

func TestUpIsIdempotent(t *testing.T) {
	dsn := testenv.Postgres(t)
	for range 2 {
		if err := Up(dsn); err != nil {
			t.Fatal(err)
		}
	}
	v, dirty, err := Version(dsn)
	if err != nil || dirty || v == 0 {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM settlement_meta`).Scan(&n); err != nil {
		t.Fatal(err)
	}
}

// migrator opens golang-migrate on dsn, to step to a given version.
func migrator(t *testing.T, dsn string) *migrate.Migrate {
	t.Helper()
	src, err := iofs.New(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL(dsn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// ledgerAt72 is a ledger as the ingest, the deposit listener and the admin
// adjustments wrote it before migration 0073: every debit of the credits and
// bundle payers twice, in debits and in account_ledger.
const ledgerAt72 = `
INSERT INTO debits (id, ts, chain_id, payer, account, asset, amount_units, calls) VALUES
    ('r1', '2026-01-01 00:00:01+00', 1, 'credits', 'key_a', 'USDT', 300, 3),
    ('r2', '2026-01-01 00:00:02+00', 1, 'credits', 'key_a', 'USDT', 100, 1),
    ('r3', '2026-01-01 00:00:03+00', 8453, 'bundle', '0xw', 'USDC', 20, 2),
    ('r4', '2026-01-01 00:00:04+00', 1, 'free', NULL, 'USDT', 0, 1),
    ('r5', '2026-01-01 00:00:05+00', 1, 'free', 'key_a', 'USDT', 0, 4),
    ('r6', '2026-01-01 00:00:06+00', 1, 'credits', 'key_b', 'USDT', 50, 5);
INSERT INTO account_ledger (account, kind, ref, units, calls, ts)
SELECT account, CASE payer WHEN 'credits' THEN 'debit' ELSE 'bundle_debit' END, id, -amount_units, -calls, ts
FROM debits WHERE payer IN ('credits', 'bundle') ORDER BY id;
INSERT INTO refunds (id, ts, payer, account, amount_units, calls) VALUES
    ('r2', '2026-01-01 00:00:07+00', 'credits', 'key_a', 100, 1), ('r3', '2026-01-01 00:00:08+00', 'bundle', '0xw', 10, 1);
INSERT INTO account_ledger (account, kind, ref, units, calls, ts)
SELECT account, CASE payer WHEN 'credits' THEN 'refund' ELSE 'bundle_refund' END, id, amount_units, calls, ts FROM refunds;
INSERT INTO account_ledger (account, kind, ref, units, calls, ts) VALUES
    ('key_a', 'deposit', '0xd1:0', 10000, 0, '2026-01-01'), ('key_b', 'deposit', '0xd2:3', 500, 0, '2026-01-01'),
    ('key_a', 'adjustment', 'adj1', -25, 0, '2026-01-02'), ('0xw', 'bundle_grant', '0xg1', 1000, 100, '2026-01-01')`

// seededAt72 is a fresh database at migration 72 with seed run on it.
func seededAt72(t *testing.T, seed string) (*migrate.Migrate, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	m := migrator(t, dsn)
	if err := m.Migrate(72); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, seed); err != nil {
		t.Fatal(err)
	}
	return m, conn
}

// Migration 0073 (a debit stored once) changes no ledger entry and no
// balance, up or down: the debit rows leave the ledger table for the view,
// and come back on the way down.
func TestLedgerDebitsMigration(t *testing.T) {
	ctx := context.Background()
	m, conn := seededAt72(t, ledgerAt72)
	rows := func(sql string) []string {
		t.Helper()
		r, err := conn.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	const ledger = `SELECT row(account, kind, ref, units, calls, ts)::text FROM account_ledger ORDER BY kind, ref`
	const balances = `SELECT row(b.*)::text FROM account_balances b ORDER BY account`
	wantLedger, wantBalances := rows(ledger), rows(balances)
	if len(wantLedger) != 10 || len(wantBalances) != 3 {
		t.Fatalf("seeded %d ledger rows, %d balances", len(wantLedger), len(wantBalances))
	}
	same := func(step string) {
		t.Helper()
		if got := rows(ledger); !slices.Equal(got, wantLedger) {
			t.Errorf("%s: ledger\n%v\nwant\n%v", step, got, wantLedger)
		}
		if got := rows(balances); !slices.Equal(got, wantBalances) {
			t.Errorf("%s: balances\n%v\nwant\n%v", step, got, wantBalances)
		}
	}

	if err := m.Migrate(73); err != nil {
		t.Fatal(err)
	}
	same("up")
	if got := rows(`SELECT kind FROM account_ledger_entries ORDER BY kind, ref`); !slices.Equal(got,
		[]string{"adjustment", "bundle_grant", "bundle_refund", "deposit", "deposit", "refund"}) {
		t.Errorf("stored after up: %v", got)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM debits WHERE id = 'r1'`); err == nil {
		t.Error("a debit was deleted: the ledger is append-only")
	}

	if err := m.Migrate(72); err != nil {
		t.Fatal(err)
	}
	same("down")
	if got := rows(`SELECT kind FROM account_ledger WHERE kind LIKE '%debit' ORDER BY ref`); !slices.Equal(got,
		[]string{"debit", "debit", "bundle_debit", "debit"}) {
		t.Errorf("debit rows stored after down: %v", got)
	}
	if err := m.Migrate(73); err != nil {
		t.Fatal(err)
	}
	same("up again")
}

// A ledger whose debit rows do not match debits is not migrated: balances
// would change. The migration fails whole and leaves the ledger as it was.
func TestLedgerDebitsMigrationRefusesAMismatch(t *testing.T) {
	ctx := context.Background()
	for name, breakIt := range map[string]string{
		"units differ": `INSERT INTO account_ledger (account, kind, ref, units, calls, ts) VALUES ('key_c', 'debit', 'r7', -9, -1, '2026-01-01');
			INSERT INTO debits (id, ts, chain_id, payer, account, asset, amount_units, calls) VALUES ('r7', '2026-01-01', 1, 'credits', 'key_c', 'USDT', 8, 1)`,
		"no ledger row": `INSERT INTO debits (id, ts, chain_id, payer, account, asset, amount_units, calls) VALUES ('r7', '2026-01-01', 1, 'bundle', '0xw', 'USDC', 8, 1)`,
		"no debit":      `INSERT INTO account_ledger (account, kind, ref, units, calls, ts) VALUES ('key_c', 'debit', 'r7', -9, -1, '2026-01-01')`,
	} {
		t.Run(name, func(t *testing.T) {
			m, conn := seededAt72(t, ledgerAt72+";"+breakIt)
			if err := m.Migrate(73); err == nil || !strings.Contains(err.Error(), "do not match debits") {
				t.Fatalf("migrated: %v", err)
			}
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM account_ledger WHERE kind IN ('debit', 'bundle_debit')`).Scan(&n); err != nil || n < 4 {
				t.Fatalf("%d debit rows left in the ledger table (%v)", n, err)
			}
		})
	}
}

// TestForceOnlyRecoversADirtySchema: `settlementd migrate force N` is the
// recovery from a failed migration, and nothing else. On a clean schema it
// would record migrations as applied that never ran (forward: replicas start
// on tables that are not there) or forget applied ones (backward: the next
// `migrate up` runs them again over the existing schema), so it is refused
// there; on a dirty schema only the failed version (fixed by hand) or the one
// before it (to run it again) may be forced.
func TestForceOnlyRecoversADirtySchema(t *testing.T) {
	dsn := testenv.Postgres(t)
	all := All()
	newest, good, older := all[len(all)-1].Version, all[len(all)-2].Version, all[len(all)-5].Version
	if err := Up(dsn); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{int(good), int(older), -1} {
		if err := Force(dsn, v); err == nil || !strings.Contains(err.Error(), "not dirty") {
			t.Errorf("force %d on a clean schema at %d: %v, want a refusal saying it is not dirty", v, newest, err)
		}
	}
	if v, dirty, err := Version(dsn); err != nil || dirty || v != newest {
		t.Fatalf("after the refused forces: version %d dirty %v (%v), want %d clean", v, dirty, err, newest)
	}
	// The state a failed newest migration leaves: its version, dirty.
	if err := To(dsn, good); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE schema_migrations SET version = $1, dirty = true`, newest); err != nil {
		t.Fatal(err)
	}
	if err := Force(dsn, int(older)); err == nil || !strings.Contains(err.Error(), "dirty at") {
		t.Errorf("force %d on a schema dirty at %d: %v, want a refusal", older, newest, err)
	}
	if err := Force(dsn, int(good)); err != nil {
		t.Fatalf("force %d (the last good) on a schema dirty at %d: %v", good, newest, err)
	}
	if err := Up(dsn); err != nil {
		t.Fatal(err)
	}
	if v, dirty, err := Version(dsn); err != nil || dirty || v != newest {
		t.Fatalf("after the recovery: version %d dirty %v (%v)", v, dirty, err)
	}
}
