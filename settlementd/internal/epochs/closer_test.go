package epochs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// world is a migrated database fed by a real ingester from a real stream,
// with a closer whose clock the test sets.
type world struct {
	rdb    *redis.Client
	pool   *pgxpool.Pool
	stream string
	closer *Closer
	now    time.Time
}

func newWorld(t *testing.T) *world {
	_, pool := settletest.DB(t)
	w := &world{rdb: testenv.Redis(t), pool: pool, stream: testenv.KeyPrefix(t) + "events"}
	w.closer = &Closer{Pool: pool, Grace: 5 * time.Second, Stream: w.stream, Now: func() time.Time { return w.now }}
	return w
}

func (w *world) ingest(t *testing.T) {
	in, err := ingest.New(w.rdb, w.pool, ingest.Config{Stream: w.stream, Consumer: "t", Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// drained waits until everything XADDed so far is in Postgres, as the
// recorded watermark (the only one the closer reads) says: it must pass the
// Redis clock as of now.
func (w *world) drained(t *testing.T) {
	t.Helper()
	now, err := w.rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 30*time.Second, "stream ingested", func() (bool, error) {
		var low int64
		err := w.pool.QueryRow(context.Background(), `SELECT low_ms FROM ingest_watermark WHERE stream = $1`, w.stream).Scan(&low)
		return err == nil && low > now.UnixMilli(), nil
	})
}

// closeUntil sets the clock and closes every due epoch.
func (w *world) closeUntil(t *testing.T, now time.Time) {
	t.Helper()
	w.now = now
	if err := w.closer.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type epochRow struct {
	ID                                                         int64
	State                                                      string
	CarryIn, Total, NodeUnits, Operators, Platform, Pool, Dist int64
	CarryOut, Events, Calls, PlatformOps, Withheld             int64
}

func (w *world) epochs(t *testing.T) []epochRow {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT id, state, carry_in_units,
		COALESCE(total_units, 0), COALESCE(node_units, 0), COALESCE(operators_units, 0), COALESCE(platform_units, 0),
		COALESCE(pool_units, 0), COALESCE(distributed_units, 0), COALESCE(carry_out_units, 0),
		COALESCE(events, 0), COALESCE(calls, 0), platform_operators_units, withheld_units FROM epochs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []epochRow
	for rows.Next() {
		var e epochRow
		if err := rows.Scan(&e.ID, &e.State, &e.CarryIn, &e.Total, &e.NodeUnits, &e.Operators, &e.Platform,
			&e.Pool, &e.Dist, &e.CarryOut, &e.Events, &e.Calls, &e.PlatformOps, &e.Withheld); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func (w *world) shares(t *testing.T, epoch int64) map[string]int64 {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT node_id, share_units FROM epoch_node_shares WHERE epoch_id = $1`, epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var n string
		var s int64
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		m[n] = s
	}
	return m
}

// withheld reads the per-node withheld amounts of a closed epoch.
func (w *world) withheld(t *testing.T, epoch int64) map[string]int64 {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT node_id, withheld_units FROM epoch_node_shares WHERE epoch_id = $1`, epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var n string
		var s int64
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		m[n] = s
	}
	return m
}

// liars lists the nodes with evidence booked into epoch.
func (w *world) liars(t *testing.T, epoch int64) []string {
	t.Helper()
	var out []string
	if err := w.pool.QueryRow(context.Background(), `SELECT COALESCE(array_agg(DISTINCT node_id), '{}') FROM node_evidence WHERE booked_epoch = $1`,
		epoch).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// evidenceRow is a stored piece of evidence, as the window needs it.
type evidenceRow struct {
	node          string
	ts            time.Time
	since         *time.Time
	epoch, booked int64
}

func (w *world) evidence(t *testing.T) []evidenceRow {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT node_id, ts, suspect_since, epoch_id, booked_epoch FROM node_evidence`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []evidenceRow
	for rows.Next() {
		var e evidenceRow
		if err := rows.Scan(&e.node, &e.ts, &e.since, &e.epoch, &e.booked); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// liarsOf computes, independently of the closer's SQL, whose share of
// epoch the closes withheld when nothing is settled: nodes with evidence
// booked into it, and nodes with evidence booked into a later epoch that
// has closed (before open) whose window [min(ts − lookback,
// suspect_since), ts] overlaps it.
func liarsOf(evs []evidenceRow, epoch, open int64, lookback time.Duration) []string {
	var out []string
	for _, ev := range evs {
		in := ev.booked == epoch
		if ev.booked > epoch && ev.booked < open {
			start := ev.ts.Add(-lookback)
			if ev.since != nil && ev.since.Before(start) {
				start = *ev.since
			}
			in = !epochStart(epoch).After(ev.ts) && epochEnd(epoch).After(start)
		}
		if in && !slices.Contains(out, ev.node) {
			out = append(out, ev.node)
		}
	}
	return out
}

// lie is the gateway's evidence that node answered a numbered-block
// question unlike a provider at at.
func lie(id string, at time.Time, node string) *events.NodeMismatch {
	return &events.NodeMismatch{ID: id, TimeMs: at.UnixMilli(), ChainID: 137, NodeID: node, RequestID: "r-" + id, Method: "eth_getBalance",
		Params: json.RawMessage(`["0x00000000000000000000000000000000000000aa","0x10"]`), Block: 16,
		NodeAnswer: json.RawMessage(`"0x1"`), TrustedAnswer: json.RawMessage(`"0x2"`), TrustedBy: "provider-a"}
}

func rev(id string, at time.Time, node string, amount money.Units, calls int) *events.Revenue {
	up := node
	if up == "" {
		up = "cache"
	}
	return &events.Revenue{ID: id, TimeMs: at.UnixMilli(), EpochID: events.EpochOf(time.UnixMilli(at.UnixMilli())), ChainID: 137,
		Method: "eth_call", Payer: events.PayerCredits, Account: "key_X",
		Asset: events.AssetUSDT, Amount: amount, Calls: calls, Upstream: up, NodeID: node}
}

// The MUST-SHOW example: events in, epochs closed, shares exact to the unit —
// each node half of what it served, the operators' half of cache and
// provider revenue the platform's (a node-less epoch carries nothing) — and
// a late event booked forward.
func TestCloseHandComputedExampleWithCarry(t *testing.T) {
	w := newWorld(t)
	e0 := events.EpochOf(time.Now()) - 10
	at := func(epoch int64, sec int) time.Time { return epochStart(epoch).Add(time.Duration(sec) * time.Second) }
	const A, B = "NODE-EU-AAAAAAAA", "NODE-US-BBBBBBBB"
	evs := []events.Event{
		// e0: A 100, B 210, cache 30 → total 340.
		rev("a1", at(e0, 1), A, 100, 1), rev("b1", at(e0, 2), B, 210, 7), rev("c1", at(e0, 3), "", 30, 1),
		// e0+1: cache 60 and a provider 30 → total 90, no node served.
		rev("c2", at(e0+1, 10), "", 60, 2), rev("p2", at(e0+1, 20), "", 30, 1),
		// e0+2: A 90, B 30 → total 120.
		rev("a3", at(e0+2, 5), A, 90, 3), rev("b3", at(e0+2, 59), B, 30, 1),
	}
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	w.ingest(t)
	w.drained(t)
	// Clock just past e0+3's end + grace: e0..e0+2 close, e0+3 stays open.
	w.closeUntil(t, epochEnd(e0+2).Add(5*time.Second))

	// A late event for e0 (already CLOSED) arrives while e0+3 is open.
	settletest.XAdd(t, w.rdb, w.stream, rev("late", at(e0, 30), B, 300, 10))
	w.drained(t)
	if got := settletest.Count(t, w.pool, `SELECT booked_epoch FROM revenue_events WHERE id = 'late'`); got != e0+3 {
		t.Fatalf("late event booked into %d, want the open epoch %d", got, e0+3)
	}
	w.closeUntil(t, epochEnd(e0+3).Add(5*time.Second))

	// The operators' half of what nodes served is the nodes' pot; the rest of
	// the half (cache and provider revenue) is the platform's (plat-ops).
	//  epoch  total ops plat pool plat-ops | carry in  pot  W   shares                  dist carry out
	//  e0      340  170  102  68   15      |   0       155  310 A floor(155·100/310)=50  155   0
	//                                      |                    B floor(155·210/310)=105
	//  e0+1     90   45   27  18   45      |   0         0    0 (no node)                  0   0
	//  e0+2    120   60   36  24    0      |   0        60  120 A floor(60·90/120)=45     60   0
	//                                      |                    B floor(60·30/120)=15
	//  e0+3    300  150   90  60    0      |   0       150  300 B 150 (the late event)   150   0
	want := []epochRow{
		{ID: e0, State: "CLOSED", CarryIn: 0, Total: 340, NodeUnits: 310, Operators: 170, Platform: 102, Pool: 68, Dist: 155, CarryOut: 0, Events: 3, Calls: 9, PlatformOps: 15},
		{ID: e0 + 1, State: "CLOSED", CarryIn: 0, Total: 90, NodeUnits: 0, Operators: 45, Platform: 27, Pool: 18, Dist: 0, CarryOut: 0, Events: 2, Calls: 3, PlatformOps: 45},
		{ID: e0 + 2, State: "CLOSED", CarryIn: 0, Total: 120, NodeUnits: 120, Operators: 60, Platform: 36, Pool: 24, Dist: 60, CarryOut: 0, Events: 2, Calls: 4},
		{ID: e0 + 3, State: "CLOSED", CarryIn: 0, Total: 300, NodeUnits: 300, Operators: 150, Platform: 90, Pool: 60, Dist: 150, CarryOut: 0, Events: 1, Calls: 10},
		{ID: e0 + 4, State: "open"},
	}
	got := w.epochs(t)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("epochs\n got %+v\nwant %+v", got, want)
	}
	wantShares := map[int64]map[string]int64{e0: {A: 50, B: 105}, e0 + 1: {}, e0 + 2: {A: 45, B: 15}, e0 + 3: {B: 150}}
	for id, ws := range wantShares {
		if gs := w.shares(t, id); fmt.Sprint(gs) != fmt.Sprint(ws) {
			t.Errorf("epoch %d shares %v, want %v", id, gs, ws)
		}
	}
	// The earnings ledger: A 50+45, B 105+15+150 — half of what each served.
	for node, want := range map[string]int64{A: 95, B: 270} {
		if got := settletest.Count(t, w.pool, `SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1 AND kind = 'epoch_share'`, node); got != want {
			t.Errorf("%s earned %d, want %d", node, got, want)
		}
	}
	// Revenue 850 = nodes 365 + platform 255 + platform's operators' part 60 + pool 170 + carry 0.
}

// Two nodes serve one epoch and one of them lied in it: the liar is
// credited nothing, its would-be share is booked to the pool (and recorded
// as withheld on the epoch and on the node's share row), the honest node
// gets half of what it served within rounding, and the epoch sums exactly.
// Evidence that arrives after its epoch closed is booked into the open
// epoch and withholds the node's share of that epoch at its close, and —
// the evidence's own epoch being within its lookback and not settled — of
// the evidence's own epoch too (window.go).
func TestCloseWithholdsTheLiarsShare(t *testing.T) {
	w := newWorld(t)
	e0 := events.EpochOf(time.Now()) - 10
	at := func(epoch int64, sec int) time.Time { return epochStart(epoch).Add(time.Duration(sec) * time.Second) }
	const A, B, L = "NODE-EU-AAAAAAAA", "NODE-US-BBBBBBBB", "NODE-EU-LLLLLLLL"
	evs := []events.Event{
		// e0: A 301, L 201, a provider 30 → total 532; L lied at second 20.
		rev("a1", at(e0, 1), A, 301, 10), rev("l1", at(e0, 2), L, 201, 7), rev("p1", at(e0, 3), "", 30, 1),
		lie("lie-1", at(e0, 20), L),
	}
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	settletest.XAdd(t, w.rdb, w.stream, lie("lie-1", at(e0, 20), L)) // the same evidence again
	w.ingest(t)
	w.drained(t)
	w.closeUntil(t, epochEnd(e0).Add(5*time.Second))

	// Evidence against A about e0, after e0 closed, and e0+1's traffic.
	settletest.XAdd(t, w.rdb, w.stream, lie("lie-late", at(e0, 40), A), rev("a2", at(e0+1, 1), A, 100, 3), rev("b2", at(e0+1, 2), B, 60, 2))
	w.drained(t)
	w.closeUntil(t, epochEnd(e0+1).Add(5*time.Second))

	//  epoch  total ops plat pool plat-ops | carry in pot  W   shares                               dist withheld carry out
	//  e0      532  266  159  107  15      |   0      251  502 A floor(251·301/502)=150 → the pool   0   250      1
	//                                      |                   L floor(251·201/502)=100 → the pool
	//  e0+1    160   80   48   32   0      |   1       81  160 A floor(81·100/160)=50 → the pool    30   50       1
	//                                      |                   B floor(81·60/160)=30
	// (A's e0 share is withheld by e0+1's close, where lie-late is booked.)
	want := []epochRow{
		{ID: e0, State: "CLOSED", CarryIn: 0, Total: 532, NodeUnits: 502, Operators: 266, Platform: 159, Pool: 107 + 100 + 150, Dist: 0, CarryOut: 1,
			Events: 3, Calls: 18, PlatformOps: 15, Withheld: 100 + 150},
		{ID: e0 + 1, State: "CLOSED", CarryIn: 1, Total: 160, NodeUnits: 160, Operators: 80, Platform: 48, Pool: 32 + 50, Dist: 30, CarryOut: 1,
			Events: 2, Calls: 5, Withheld: 50},
		{ID: e0 + 2, State: "open", CarryIn: 1},
	}
	if got := w.epochs(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("epochs\n got %+v\nwant %+v", got, want)
	}
	for _, e := range want[:2] {
		if e.Operators+e.Platform+e.Pool != e.Total+e.Withheld || e.Dist+e.CarryOut+e.PlatformOps+e.Withheld != e.Operators+e.CarryIn {
			t.Fatalf("epoch %d does not sum: %+v", e.ID, e)
		}
	}
	if got, want := fmt.Sprint(w.shares(t, e0), w.withheld(t, e0)), fmt.Sprint(map[string]int64{A: 0, L: 0}, map[string]int64{A: 150, L: 100}); got != want {
		t.Fatalf("e0 shares and withheld %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(w.shares(t, e0+1), w.withheld(t, e0+1)), fmt.Sprint(map[string]int64{A: 0, B: 30}, map[string]int64{A: 50, B: 0}); got != want {
		t.Fatalf("e0+1 shares and withheld %s, want %s", got, want)
	}
	// The honest node: half of what it served within rounding.
	// The liars have no earnings at all: e0 credited A 150 at its close,
	// and e0+1's close reversed it (an epoch_share row of −150).
	for node, want := range map[string]int64{A: 0, B: 30, L: 0} {
		if got := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1`, node); got != want {
			t.Errorf("%s earned %d, want %d", node, got, want)
		}
	}
	if n := settletest.Count(t, w.pool, `SELECT count(*) FROM node_evidence`); n != 2 {
		t.Fatalf("%d evidence rows, want 2", n)
	}
	// Each withheld share, with the evidence that withheld it, for the
	// operators.
	if got, want := w.withholdings(t), fmt.Sprint([]string{
		fmt.Sprintf("%d %s lie-late 150 window", e0, A), fmt.Sprintf("%d %s lie-1 100 booked", e0, L),
		fmt.Sprintf("%d %s lie-late 50 booked", e0+1, A)}); got != want {
		t.Fatalf("withholdings %s, want %s", got, want)
	}
}

// withholdings lists node_withholdings as "epoch node evidence units kind".
func (w *world) withholdings(t *testing.T) string {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT epoch_id, node_id, evidence_id, units, kind FROM node_withholdings ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			e, u        int64
			n, ev, kind string
		)
		if err := rows.Scan(&e, &n, &ev, &u, &kind); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %s %d %s", e, n, ev, u, kind))
	}
	return fmt.Sprint(out)
}

// Property test against real Postgres: random traffic over several epochs,
// late events after some epochs closed; every epoch's row must equal the
// pure Compute over its booked events, the carry must chain, epochs must be
// gapless, and every unit of revenue must be accounted for.
func TestClosePropertiesAgainstPostgres(t *testing.T) {
	cases := 30
	if testing.Short() {
		cases = 3
	}
	for seed := range cases {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			n := 2 + r.IntN(6)
			e0 := events.EpochOf(time.Now()) - int64(n) - 3
			var evs []events.Event
			for e := range int64(n) {
				k := r.IntN(40)
				if r.IntN(5) == 0 {
					k = 0 // an empty epoch
				}
				for i := range k {
					node := ""
					if r.IntN(4) > 0 {
						node = settletest.Nodes[r.IntN(len(settletest.Nodes))]
					}
					calls := 1 + r.IntN(5)
					evs = append(evs, rev(fmt.Sprintf("s%d-e%d-%d", seed, e, i),
						epochStart(e0+e).Add(time.Duration(i)*time.Second), node, money.Units(30*calls), calls))
				}
			}
			// Evidence against a random node in some epochs (the node may
			// or may not have served in it).
			var lies []events.Event
			for e := range int64(n) {
				if r.IntN(3) == 0 {
					lies = append(lies, lie(fmt.Sprintf("s%d-lie-%d", seed, e), epochStart(e0+e).Add(7*time.Second),
						settletest.Nodes[r.IntN(len(settletest.Nodes))]))
				}
			}
			settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
			settletest.XAdd(t, w.rdb, w.stream, lies...)
			w.ingest(t)
			w.drained(t)
			mid := e0 + int64(r.IntN(n))
			w.closeUntil(t, epochEnd(mid).Add(5*time.Second))

			// Late events for random past epochs (some already CLOSED), plus
			// duplicates of events already stored.
			var late []events.Event
			for i := range 1 + r.IntN(15) {
				e := e0 + int64(r.IntN(n))
				late = append(late, rev(fmt.Sprintf("s%d-late-%d", seed, i), epochStart(e).Add(30*time.Second),
					settletest.Nodes[r.IntN(len(settletest.Nodes))], 30, 1))
			}
			if len(evs) > 0 {
				late = append(late, evs[r.IntN(len(evs))])
			}
			if len(lies) > 0 {
				late = append(late, lies[r.IntN(len(lies))]) // redelivered evidence
			}
			if r.IntN(2) == 0 { // late evidence: booked into the open epoch
				late = append(late, lie(fmt.Sprintf("s%d-late-lie", seed), epochStart(e0).Add(9*time.Second),
					settletest.Nodes[r.IntN(len(settletest.Nodes))]))
			}
			settletest.XAdd(t, w.rdb, w.stream, late...)
			w.drained(t)
			if got := settletest.Count(t, w.pool, `SELECT count(*) FROM revenue_events r JOIN epochs e ON e.id = r.epoch_id
				WHERE r.booked_epoch <> r.epoch_id AND e.state <> 'CLOSED'`); got != 0 {
				t.Fatalf("%d events booked forward although their epoch was open", got)
			}
			w.closeUntil(t, epochEnd(e0+int64(n)+1).Add(5*time.Second))

			rows := w.epochs(t)
			evidence := w.evidence(t)
			var carry, totals, withheldAll int64
			for i, e := range rows {
				if i > 0 && e.ID != rows[i-1].ID+1 {
					t.Fatalf("gap between epochs %d and %d", rows[i-1].ID, e.ID)
				}
				if e.CarryIn != carry {
					t.Fatalf("epoch %d carry in %d, previous carry out %d", e.ID, e.CarryIn, carry)
				}
				if e.State == "open" {
					if i != len(rows)-1 {
						t.Fatalf("open epoch %d is not the last", e.ID)
					}
					continue
				}
				// Recompute from the booked events with the pure function.
				var weights []Weight
				nodeRows, err := w.pool.Query(context.Background(), `SELECT node_id, sum(amount_units)::bigint
					FROM revenue_events WHERE booked_epoch = $1 AND node_id IS NOT NULL GROUP BY node_id`, e.ID)
				if err != nil {
					t.Fatal(err)
				}
				for nodeRows.Next() {
					var wt Weight
					if err := nodeRows.Scan(&wt.NodeID, &wt.Units); err != nil {
						t.Fatal(err)
					}
					weights = append(weights, wt)
				}
				nodeRows.Close()
				total := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM revenue_events WHERE booked_epoch = $1`, e.ID)
				// Evidence booked into the epoch, and evidence booked into a
				// later closed epoch whose window reaches it (nothing here
				// is settled).
				liars := liarsOf(evidence, e.ID, rows[len(rows)-1].ID, DefaultLookback)
				s := Compute(money.Units(total), money.Units(carry), weights, liars...)
				checkSplit(t, s, weights, liars...)
				if e.Total != int64(s.Total) || e.Dist != int64(s.Distributed) || e.CarryOut != int64(s.CarryOut) ||
					e.Platform != int64(s.Platform) || e.Pool != int64(s.Pool) || e.Operators != int64(s.Operators) ||
					e.PlatformOps != int64(s.PlatformOperators) || e.Withheld != int64(s.Withheld) {
					t.Fatalf("epoch %d row %+v, pure split %+v", e.ID, e, s)
				}
				shares, withheld := w.shares(t, e.ID), w.withheld(t, e.ID)
				for _, sh := range s.Shares {
					if shares[sh.NodeID] != int64(sh.Units) || withheld[sh.NodeID] != int64(sh.Withheld) {
						t.Fatalf("epoch %d node %s share %d withheld %d, want %d and %d", e.ID, sh.NodeID, shares[sh.NodeID],
							withheld[sh.NodeID], sh.Units, sh.Withheld)
					}
				}
				if e.Dist+e.Platform+e.PlatformOps+e.Pool+e.CarryOut != e.Total+e.CarryIn ||
					e.Dist+e.CarryOut+e.PlatformOps+e.Withheld != e.Operators+e.CarryIn {
					t.Fatalf("epoch %d not conserved: %+v", e.ID, e)
				}
				withheldAll += e.Withheld
				carry = e.CarryOut
				totals += e.Total
			}
			if all := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM revenue_events`); all != totals {
				t.Fatalf("revenue %d, closed epochs account for %d", all, totals)
			}
			if paid := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings`); paid !=
				settletest.Count(t, w.pool, `SELECT COALESCE(sum(distributed_units), 0) FROM epochs`) {
				t.Fatalf("earnings ledger %d != distributed", paid)
			}
			// No liar is credited for an epoch its evidence is booked into.
			if n := settletest.Count(t, w.pool, `SELECT count(*) FROM node_earnings ne JOIN node_evidence ev
				ON ev.node_id = ne.node_id AND ev.booked_epoch = ne.epoch_id`); n != 0 {
				t.Fatalf("%d earnings rows for epochs in which the node lied", n)
			}
			if got := settletest.Count(t, w.pool, `SELECT COALESCE(sum(withheld_units), 0) FROM epoch_node_shares`); got != withheldAll {
				t.Fatalf("per-node withheld %d != epochs' withheld %d", got, withheldAll)
			}
			// Per node and epoch, the earnings ledger nets to the share row
			// (a share withheld after its close: credit + reversal), and
			// every withheld share is recorded once for the operator.
			if n := settletest.Count(t, w.pool, `SELECT count(*) FROM epoch_node_shares sh
				LEFT JOIN (SELECT node_id, epoch_id, sum(amount_units) AS net FROM node_earnings GROUP BY 1, 2) ne USING (node_id, epoch_id)
				WHERE COALESCE(ne.net, 0) <> sh.share_units`); n != 0 {
				t.Fatalf("%d share rows whose earnings do not net to the share", n)
			}
			if got := settletest.Count(t, w.pool, `SELECT COALESCE(sum(units), 0) FROM node_withholdings`); got != withheldAll {
				t.Fatalf("withholdings record %d, epochs withheld %d", got, withheldAll)
			}
		})
	}
}

// Two closers racing on one database (a stale leader and a new one) never
// close an epoch twice.
func TestConcurrentClosersCloseOnce(t *testing.T) {
	w := newWorld(t)
	e0 := events.EpochOf(time.Now()) - 8
	var evs []events.Event
	for i := range 6 * 20 {
		evs = append(evs, rev(fmt.Sprint("r", i), epochStart(e0).Add(time.Duration(i)*3*time.Second), settletest.Nodes[i%3], 30, 1))
	}
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	w.ingest(t)
	w.drained(t)
	w.now = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		c := &Closer{Pool: w.pool, Grace: 5 * time.Second, Stream: w.stream}
		wg.Go(func() {
			for {
				ok, err := c.CloseNext(context.Background())
				if err != nil && !errorsIsNotOpen(err) {
					errs <- err
					return
				}
				if !ok && err == nil {
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := settletest.Count(t, w.pool, `SELECT count(*) FROM node_earnings`); got != settletest.Count(t, w.pool, `SELECT count(*) FROM epoch_node_shares WHERE share_units > 0`) {
		t.Fatalf("earnings rows %d differ from shares", got)
	}
	if got := settletest.Count(t, w.pool, `SELECT sum(total_units) FROM epochs`); got != 30*int64(len(evs)) {
		t.Fatalf("closed totals %d, want %d", got, 30*len(evs))
	}
}

func errorsIsNotOpen(err error) bool { return errors.Is(err, ErrNotOpen) }
