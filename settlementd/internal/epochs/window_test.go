package epochs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// The patient-liar must-show: a patient liar — honest for a while,
// then lying — earns 0 for every epoch in which it may have delivered a
// lie. P serves in every epoch; evidence against it dated in e4 (lookback
// 3 min) reaches e1…e4: its share of e1, e2, e3 (closed, unsettled) is
// withheld by e4's close and e4's is withheld at that close as before;
// e0, outside the window, stays paid. Each withheld share moves to the
// pool exactly, every epoch still sums, the earnings ledger reverses the
// credit (append-only), and the operator's record names the evidence. The
// same evidence again, and a second piece, withhold nothing more. Then,
// with e0…e2 settled, evidence against Q whose suspect_since reaches back to
// e1 withholds Q's share of e3…e5 and e6, and leaves the settled e1 and e2
// as they were: settled epochs are final (and the database refuses to
// change them).
func TestPatientLiarEarnsNothingForTheEpochsItLied(t *testing.T) {
	w := newWorld(t)
	w.closer.Lookback = 3 * time.Minute
	ctx := context.Background()
	e0 := events.EpochOf(time.Now()) - 12
	at := func(epoch int64, sec int) time.Time { return epochStart(epoch).Add(time.Duration(sec) * time.Second) }
	const P, Q, H = "NODE-EU-PATIENTP", "NODE-US-QQQQQQQQ", "NODE-AP-HONESTHH"
	var evs []events.Event
	for e := e0; e <= e0+6; e++ {
		// Per epoch: P 100, Q 60, H 40 → total 200: operators 100,
		// platform 60, pool 40; shares P 50, Q 30, H 20.
		evs = append(evs, rev(fmt.Sprint("p", e), at(e, 1), P, 100, 1), rev(fmt.Sprint("q", e), at(e, 2), Q, 60, 1),
			rev(fmt.Sprint("h", e), at(e, 3), H, 40, 1))
	}
	evs = append(evs, lie("lie-p1", at(e0+4, 10), P))
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	w.ingest(t)
	w.drained(t)
	w.closeUntil(t, epochEnd(e0+4).Add(5*time.Second))

	// e0…e4 closed. P's window is [e4+10s − 3 min, e4+10s] = [e1+10s, e4+10s].
	type cell struct{ share, withheld int64 }
	state := func() map[int64]map[string]cell {
		out := map[int64]map[string]cell{}
		for e := e0; e <= e0+6; e++ {
			sh, wh := w.shares(t, e), w.withheld(t, e)
			if len(sh) == 0 {
				continue
			}
			out[e] = map[string]cell{}
			for n := range sh {
				out[e][n] = cell{sh[n], wh[n]}
			}
		}
		return out
	}
	check := func(want map[int64]map[string]cell) {
		t.Helper()
		if got := state(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("shares (share, withheld)\n got %v\nwant %v", got, want)
		}
		// Every closed epoch: pool = 40 + what it withheld, and both
		// invariants hold.
		for _, e := range w.epochs(t) {
			if e.State != "CLOSED" {
				continue
			}
			var wh int64
			for _, c := range want[e.ID] {
				wh += c.withheld
			}
			if e.Total != 200 || e.Withheld != wh || e.Pool != 40+wh || e.Dist != 100-wh ||
				e.Operators+e.Platform+e.Pool != e.Total+e.Withheld || e.Dist+e.CarryOut+e.PlatformOps+e.Withheld != e.Operators+e.CarryIn {
				t.Fatalf("epoch %d: %+v, withheld %d", e.ID, e, wh)
			}
		}
		// The earnings ledger nets to the share rows, node by node and
		// epoch by epoch.
		if n := settletest.Count(t, w.pool, `SELECT count(*) FROM epoch_node_shares sh
			LEFT JOIN (SELECT node_id, epoch_id, sum(amount_units) AS net FROM node_earnings WHERE kind = 'epoch_share' GROUP BY 1, 2) ne
				USING (node_id, epoch_id)
			WHERE COALESCE(ne.net, 0) <> sh.share_units`); n != 0 {
			t.Fatalf("%d share rows whose earnings do not net to the share", n)
		}
	}
	honest := cell{20, 0}
	paid := map[string]cell{P: {50, 0}, Q: {30, 0}, H: honest}
	pLied := map[string]cell{P: {0, 50}, Q: {30, 0}, H: honest}
	want := map[int64]map[string]cell{e0: paid, e0 + 1: pLied, e0 + 2: pLied, e0 + 3: pLied, e0 + 4: pLied}
	check(want)
	// P earned only e0; the reversals are epoch_share rows "<epoch>:withheld".
	if got := settletest.Count(t, w.pool, `SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1 AND kind = 'epoch_share'`, P); got != 50 {
		t.Fatalf("P earned %d, want 50 (e0 only)", got)
	}
	if got := settletest.Count(t, w.pool, `SELECT count(*) FROM node_earnings WHERE node_id = $1 AND ref LIKE '%:withheld' AND amount_units = -50`, P); got != 3 {
		t.Fatalf("%d reversals, want 3 (e1, e2, e3)", got)
	}
	wantRecords := []string{
		fmt.Sprintf("%d %s lie-p1 50 window", e0+1, P), fmt.Sprintf("%d %s lie-p1 50 window", e0+2, P),
		fmt.Sprintf("%d %s lie-p1 50 window", e0+3, P), fmt.Sprintf("%d %s lie-p1 50 booked", e0+4, P)}
	if got := w.withholdings(t); got != fmt.Sprint(wantRecords) {
		t.Fatalf("withholdings %s\nwant %v", got, wantRecords)
	}

	// The same evidence again and a second piece against P (booked into
	// e5; a suspect_since after its time is ignored): e1…e4 change no more,
	// e5 is withheld at its close.
	again := lie("lie-p2", at(e0+4, 20), P)
	again.SuspectSinceMs = again.TimeMs + 1000
	settletest.XAdd(t, w.rdb, w.stream, lie("lie-p1", at(e0+4, 10), P), again)
	w.drained(t)
	if got := settletest.Count(t, w.pool, `SELECT count(*) FROM node_evidence WHERE id = 'lie-p2' AND booked_epoch = $1 AND suspect_since IS NULL`,
		e0+5); got != 1 {
		t.Fatal("lie-p2 not booked into e5 without a suspect_since")
	}
	w.closeUntil(t, epochEnd(e0+5).Add(5*time.Second))
	want[e0+5] = pLied
	check(want)
	wantRecords = append(wantRecords, fmt.Sprintf("%d %s lie-p2 50 booked", e0+5, P))
	if got := w.withholdings(t); got != fmt.Sprint(wantRecords) {
		t.Fatalf("withholdings %s\nwant %v", got, wantRecords)
	}

	// e0…e2 settled (a batch took them). Evidence against Q, dated in e6,
	// says its lies may have started at e1's start.
	if _, err := w.pool.Exec(ctx, `WITH b AS (INSERT INTO settlement_batches (chain_id, first_epoch, last_epoch, epochs, claims_units,
			platform_units, pool_units, state) VALUES (137, $1, $2, 3, 0, 0, 0, 'forwarded') RETURNING id)
		INSERT INTO settled_epochs (epoch_id, batch_id) SELECT e, b.id FROM generate_series($1::bigint, $2::bigint) e, b`, e0, e0+2); err != nil {
		t.Fatal(err)
	}
	q := lie("lie-q", at(e0+6, 10), Q)
	q.SuspectSinceMs = epochStart(e0 + 1).UnixMilli()
	settletest.XAdd(t, w.rdb, w.stream, q)
	w.drained(t)
	w.closeUntil(t, epochEnd(e0+6).Add(5*time.Second))
	bothLied := map[string]cell{P: {0, 50}, Q: {0, 30}, H: honest}
	want[e0+3], want[e0+4], want[e0+5] = bothLied, bothLied, bothLied
	want[e0+6] = map[string]cell{P: {50, 0}, Q: {0, 30}, H: honest}
	check(want) // e1 and e2 keep Q's 30: they are settled
	wantRecords = []string{
		fmt.Sprintf("%d %s lie-p1 50 window", e0+1, P), fmt.Sprintf("%d %s lie-p1 50 window", e0+2, P),
		fmt.Sprintf("%d %s lie-p1 50 window", e0+3, P), fmt.Sprintf("%d %s lie-q 30 window", e0+3, Q),
		fmt.Sprintf("%d %s lie-p1 50 booked", e0+4, P), fmt.Sprintf("%d %s lie-q 30 window", e0+4, Q),
		fmt.Sprintf("%d %s lie-p2 50 booked", e0+5, P), fmt.Sprintf("%d %s lie-q 30 window", e0+5, Q),
		fmt.Sprintf("%d %s lie-q 30 booked", e0+6, Q)}
	if got := w.withholdings(t); got != fmt.Sprint(wantRecords) {
		t.Fatalf("withholdings %s\nwant %v", got, wantRecords)
	}

	// The database keeps settled epochs final and closed ones changing
	// only by a withholding.
	for name, sql := range map[string]string{
		"withholding from a settled epoch": fmt.Sprintf(`UPDATE epochs SET pool_units = pool_units + 20, withheld_units = withheld_units + 20,
			distributed_units = distributed_units - 20 WHERE id = %d`, e0+1),
		"a settled share":             fmt.Sprintf(`UPDATE epoch_node_shares SET withheld_units = 20, share_units = 0 WHERE epoch_id = %d AND node_id = '%s'`, e0+1, H),
		"a closed epoch's total":      fmt.Sprintf(`UPDATE epochs SET total_units = total_units + 1, pool_units = pool_units + 1 WHERE id = %d`, e0+6),
		"a pool raised without cause": fmt.Sprintf(`UPDATE epochs SET pool_units = pool_units + 1 WHERE id = %d`, e0+6),
		"half a share withheld":       fmt.Sprintf(`UPDATE epoch_node_shares SET withheld_units = 10, share_units = 10 WHERE epoch_id = %d AND node_id = '%s'`, e0+6, H),
		"a withheld share given back": fmt.Sprintf(`UPDATE epoch_node_shares SET withheld_units = 0, share_units = 30 WHERE epoch_id = %d AND node_id = '%s'`, e0+6, Q),
		"a withholding undone":        fmt.Sprintf(`DELETE FROM node_withholdings WHERE epoch_id = %d`, e0+6),
	} {
		if _, err := w.pool.Exec(ctx, sql); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "final") && !strings.Contains(err.Error(), "only a withholding") &&
			!strings.Contains(err.Error(), "append-only") && !strings.Contains(err.Error(), "check constraint") {
			t.Errorf("%s: %v", name, err)
		}
	}
	check(want)
}

// A lookback of its own: the zero value is DefaultLookback, a negative one
// none (the window is then the evidence's own epoch, or back to its
// suspect_since).
func TestLookbackDefaults(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: DefaultLookback, -1: 0, time.Minute: time.Minute} {
		if got := (&Closer{Lookback: in}).lookback(); got != want {
			t.Errorf("Lookback %v: %v, want %v", in, got, want)
		}
	}
}
