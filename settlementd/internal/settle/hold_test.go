package settle

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/epochs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// planner is a settlement job that only plans (no chain).
func planner(pool *pgxpool.Pool, hold time.Duration) *Job {
	return &Job{cfg: Config{Pool: pool, ChainID: 137, Hold: hold}, log: zap.NewNop()}
}

// closed records CLOSED epoch id as the closer does (nodeA served 100,
// nodeB 60: shares 50 and 30), withholding nodeB's share when lied.
func closed(t *testing.T, pool *pgxpool.Pool, id int64, lied bool) {
	t.Helper()
	ctx := context.Background()
	var liars []string
	if lied {
		liars = []string{nodeB}
	}
	s := epochs.Compute(200, 0, []epochs.Weight{{NodeID: nodeA, Units: 100}, {NodeID: nodeB, Units: 60}}, liars...)
	start := time.Unix(id*60, 0).UTC()
	if _, err := pool.Exec(ctx, `DELETE FROM epochs WHERE id = $1 AND state = 'open'`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, carry_in_units, events, calls, total_units,
			node_units, operators_units, platform_units, pool_units, distributed_units, carry_out_units, platform_operators_units,
			withheld_units, closed_at)
		VALUES ($1, 'CLOSED', $2, $3, 0, 2, 2, $4, $5, $6, $7, $8, $9, $10, $11, $12, now())`, id, start, start.Add(time.Minute),
		int64(s.Total), int64(s.NodeUnits), int64(s.Operators), int64(s.Platform), int64(s.Pool), int64(s.Distributed), int64(s.CarryOut),
		int64(s.PlatformOperators), int64(s.Withheld)); err != nil {
		t.Fatal(err)
	}
	for _, sh := range s.Shares {
		if _, err := pool.Exec(ctx, `INSERT INTO epoch_node_shares (epoch_id, node_id, weight_units, calls, share_units, withheld_units)
			VALUES ($1, $2, $3, 1, $4, $5)`, id, sh.NodeID, int64(sh.Weight), int64(sh.Units), int64(sh.Withheld)); err != nil {
			t.Fatal(err)
		}
		if sh.Units > 0 {
			if _, err := pool.Exec(ctx, `INSERT INTO node_earnings (node_id, kind, ref, amount_units, epoch_id)
				VALUES ($1, 'epoch_share', $2, $3, $4)`, sh.NodeID, strconv.FormatInt(id, 10), int64(sh.Units), id); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func openEpoch(t *testing.T, pool *pgxpool.Pool, id int64) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `DELETE FROM epochs WHERE state = 'open'`); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(id*60, 0).UTC()
	if _, err := pool.Exec(context.Background(), `INSERT INTO epochs (id, state, starts_at, ends_at) VALUES ($1, 'open', $2, $3)`,
		id, start, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// batches lists the planned batches as "first-last n claims/platform/pool".
func batches(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT first_epoch, last_epoch, epochs, claims_units, platform_units, pool_units,
		(SELECT count(*) FROM settled_epochs s WHERE s.batch_id = b.id) FROM settlement_batches b ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f, l, c, p, q, n, settled int64
		if err := rows.Scan(&f, &l, &n, &c, &p, &q, &settled); err != nil {
			t.Fatal(err)
		}
		if settled != n {
			t.Fatalf("batch %d-%d: %d epochs, %d settled_epochs rows", f, l, n, settled)
		}
		out = append(out, fmt.Sprintf("%d-%d %d %d/%d/%d", f, l, n, c, p, q))
	}
	return fmt.Sprint(out)
}

func forwardAll(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `UPDATE settlement_batches SET state = 'forwarded', forwarded_at = now() WHERE state = 'open'`); err != nil {
		t.Fatal(err)
	}
}

// The plan holds node shares in escrow: it takes an epoch only once the
// epoch holding its end + the hold has closed, so evidence within the
// lookback always finds it unsettled; stored evidence not yet applied
// (booked into the open epoch) holds back every epoch its window reaches;
// the node shares a batch forwards are net of withheld shares (credit +
// reversal); and a hold of 0 takes every closed epoch, as before.
func TestPlanHoldsEpochsYoungerThanTheHold(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	e0 := int64(29_000_000)
	for e := e0; e <= e0+5; e++ {
		closed(t, pool, e, false)
	}
	openEpoch(t, pool, e0+6)
	j := planner(pool, 3*time.Minute)
	plan := func() {
		t.Helper()
		if err := j.plan(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Open e6 starts at e6·60 s; minus 3 min is e3's start = e2's end: e0…e2.
	// Per epoch: node shares 80, platform 60 + its operators' part 20,
	// pool 40.
	plan()
	want := []string{fmt.Sprintf("%d-%d 3 240/240/120", e0, e0+2)}
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("batches %s, want %v", got, want)
	}
	plan() // the batch is not forwarded: nothing more
	forwardAll(t, pool)
	plan() // e3 ends at e4's start, after the cut: nothing
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("batches %s, want %v", got, want)
	}

	// e6 closes (e7 open): e3 is past the hold. Meanwhile e3's nodeB share
	// was withheld after its close (as the closer's window does): the
	// credit's reversal nets it out of the node shares, its pool carries it.
	closed(t, pool, e0+6, false)
	openEpoch(t, pool, e0+7)
	withhold(t, pool, e0+3)
	plan()
	want = append(want, fmt.Sprintf("%d-%d 1 50/80/70", e0+3, e0+3))
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("batches %s, want %v", got, want)
	}
	forwardAll(t, pool)

	// e7 closes (e8 open): the frontier would take e4, but late evidence
	// dated in e5, stored while e8 is open and not applied yet, reaches back
	// to e2+30s: e4 waits.
	closed(t, pool, e0+7, false)
	openEpoch(t, pool, e0+8)
	evidence(t, pool, "late", time.Unix((e0+5)*60+30, 0), e0+8, nil)
	plan()
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("planned past pending evidence: %s, want %v", got, want)
	}
	// e8's close applied it (e9 open): e4 and e5 join.
	closed(t, pool, e0+8, false)
	openEpoch(t, pool, e0+9)
	plan()
	want = append(want, fmt.Sprintf("%d-%d 2 160/160/80", e0+4, e0+5))
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("batches %s, want %v", got, want)
	}
	forwardAll(t, pool)

	// e9 closes (e10 open): the frontier would take e6, but evidence
	// pending in e10 says the lies may have started at e6+30s.
	closed(t, pool, e0+9, false)
	openEpoch(t, pool, e0+10)
	since := time.Unix((e0+6)*60+30, 0)
	evidence(t, pool, "suspect", time.Unix((e0+10)*60+1, 0), e0+10, &since)
	plan()
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("planned past a pending suspect_since: %s, want %v", got, want)
	}

	// A hold of 0 is the plan as it was: every closed epoch, at once.
	if err := planner(pool, 0).plan(ctx); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("%d-%d 4 320/320/160", e0+6, e0+9))
	if got := batches(t, pool); got != fmt.Sprint(want) {
		t.Fatalf("batches %s, want %v", got, want)
	}
	// Every batch's node shares are net of what was withheld.
	if got := settletest.Count(t, pool, `SELECT sum(claims_units) FROM settlement_batches`); got !=
		settletest.Count(t, pool, `SELECT sum(distributed_units) FROM epochs WHERE state = 'CLOSED'`) {
		t.Fatalf("claims %d != distributed", got)
	}
}

// withhold withholds nodeB's share of a closed epoch as the closer's window
// does (share → withheld and pool, the credit reversed).
func withhold(t *testing.T, q interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, epoch int64) {
	t.Helper()
	if _, err := q.Exec(context.Background(), `WITH s AS (UPDATE epoch_node_shares SET withheld_units = share_units, share_units = 0
			WHERE epoch_id = $1 AND node_id = $2 RETURNING 1),
		e AS (UPDATE epochs SET distributed_units = distributed_units - 30, withheld_units = withheld_units + 30, pool_units = pool_units + 30
			WHERE id = $1)
		INSERT INTO node_earnings (node_id, kind, ref, amount_units, epoch_id) VALUES ($2, 'epoch_share', $3, -30, $1)`,
		epoch, nodeB, fmt.Sprintf("%d:withheld", epoch)); err != nil {
		t.Fatal(err)
	}
}

// evidence stores a piece of evidence against nodeB booked into booked.
func evidence(t *testing.T, pool *pgxpool.Pool, id string, ts time.Time, booked int64, since *time.Time) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO node_evidence (id, ts, epoch_id, booked_epoch, chain_id, node_id, method, block,
			node_answer, trusted_answer, trusted_by, suspect_since)
		VALUES ($1, $2, $3, $4, 137, $5, 'eth_getBalance', 1, '"0x0"', '"0x1"', 'provider-a', $6)`,
		id, ts, ts.Unix()/60, booked, nodeB, since); err != nil {
		t.Fatal(err)
	}
}

// Without an open epoch row (a database the closer has not opened the next
// epoch in, as the chain tests build it) the frontier is the newest
// closed epoch's end.
func TestPlanHoldWithoutAnOpenEpoch(t *testing.T) {
	_, pool := settletest.DB(t)
	e0 := int64(29_000_000)
	for e := e0; e <= e0+3; e++ {
		closed(t, pool, e, e == e0+1)
	}
	if err := planner(pool, 2*time.Minute).plan(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Frontier e4's start − 2 min = e2's start: e0, e1 (nodeB's e1 share
	// withheld at its close: claims 80 + 50, pool 40 + 70).
	if got, want := batches(t, pool), fmt.Sprint([]string{fmt.Sprintf("%d-%d 2 130/160/110", e0, e0+1)}); got != want {
		t.Fatalf("batches %s, want %s", got, want)
	}
}

// The plan waits for an epoch close in progress (it takes the Booking lock
// the closer holds exclusively), so it never sums an epoch a close is
// withholding from.
func TestPlanWaitsForAClose(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	closed(t, pool, 29_000_000, false)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := pglock.Xact(ctx, tx, pglock.Booking); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- planner(pool, 0).plan(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("the plan ran during a close: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The "close" withholds nodeB's share, then commits.
	withhold(t, tx, 29_000_000)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := batches(t, pool), fmt.Sprint([]string{"29000000-29000000 1 50/80/70"}); got != want {
		t.Fatalf("batches %s, want %s (the plan saw the withholding)", got, want)
	}
}
