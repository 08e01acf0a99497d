package epochs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// A node deregistered in the middle of an epoch is paid for what it served
// before its deregistration — including an event served before it but
// ingested after that epoch closed (booked forward) — and nothing for what
// it served at or after it (the gateway routes to it until its next registry
// refresh): that revenue counts as served by no registered node, so its
// operators' half is the platform's, and every epoch still sums exactly.
func TestDeregisteredNodeEarnsNothingAfter(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	e0 := events.EpochOf(time.Now()) - 10
	at := func(epoch int64, sec int) time.Time { return epochStart(epoch).Add(time.Duration(sec) * time.Second) }
	const A, B = "NODE-EU-AAAAAAAA", "NODE-US-BBBBBBBB"
	deregAt := at(e0, 30)
	if _, err := w.pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status, deregistered_at) VALUES
		($1, '0xaa', 'EU', 'http://a.example', '{137}', 'deregistered', $3),
		($2, '0xbb', 'US', 'http://b.example', '{137}', 'online', NULL)`, A, B, deregAt); err != nil {
		t.Fatal(err)
	}
	evs := []events.Event{
		rev("p1", at(e0, 5), "", 50, 1),   // a provider
		rev("a1", at(e0, 10), A, 100, 1),  // A, before its deregistration: owed
		rev("b1", at(e0, 20), B, 300, 1),  // B
		rev("a2", deregAt, A, 200, 1),     // A, at the deregistration instant: not owed
		rev("a3", at(e0, 45), A, 40, 1),   // A, after: not owed
		rev("b2", at(e0+1, 50), B, 20, 1), // keeps e0+1 non-empty for B
	}
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	w.ingest(t)
	w.drained(t)
	w.closeUntil(t, epochEnd(e0).Add(5*time.Second)) // e0 closes; e0+1 is open

	// Served by A before its deregistration, ingested only now: booked
	// into the open epoch, still A's. And A after it in e0+1: nothing.
	late := []events.Event{rev("a4", at(e0, 25), A, 60, 1), rev("a5", at(e0+1, 5), A, 80, 1)}
	settletest.XAdd(t, w.rdb, w.stream, late...)
	w.drained(t)
	if got := settletest.Count(t, w.pool, `SELECT booked_epoch FROM revenue_events WHERE id = 'a4'`); got != e0+1 {
		t.Fatalf("late event booked into %d, want %d", got, e0+1)
	}
	w.closeUntil(t, epochEnd(e0+1).Add(5*time.Second))

	//  epoch  total ops plat pool | W (owed)          pot  shares                    plat-ops
	//  e0      690  345  207  138 | A 100 + B 300=400  200  A 200·100/400=50, B 150   345−200=145
	//  e0+1    160   80   48   32 | A 60 + B 20 = 80   40  A 40·60/80=30,  B 10       80−40=40
	want := []epochRow{
		{ID: e0, State: "CLOSED", Total: 690, NodeUnits: 400, Operators: 345, Platform: 207, Pool: 138, Dist: 200, Events: 5, Calls: 5, PlatformOps: 145},
		{ID: e0 + 1, State: "CLOSED", Total: 160, NodeUnits: 80, Operators: 80, Platform: 48, Pool: 32, Dist: 40, Events: 3, Calls: 3, PlatformOps: 40},
		{ID: e0 + 2, State: "open"},
	}
	got := w.epochs(t)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("epochs\n got %+v\nwant %+v", got, want)
	}
	for id, ws := range map[int64]map[string]int64{e0: {A: 50, B: 150}, e0 + 1: {A: 30, B: 10}} {
		if gs := w.shares(t, id); fmt.Sprint(gs) != fmt.Sprint(ws) {
			t.Errorf("epoch %d shares %v, want %v", id, gs, ws)
		}
	}
	// A earned half of the 160 units it served before its deregistration,
	// nothing of the 320 after; every unit is accounted for.
	if got := settletest.Count(t, w.pool, `SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1`, A); got != 80 {
		t.Errorf("A earned %d, want 80", got)
	}
	for _, e := range got[:2] {
		if e.Operators+e.Platform+e.Pool != e.Total || e.Dist+e.CarryOut+e.PlatformOps != e.Operators+e.CarryIn {
			t.Errorf("epoch %d does not sum: %+v", e.ID, e)
		}
	}
}

// A quarantined node earns nothing for what it served at or after its
// quarantine, in that epoch and every later one (found when a node's
// subscription feed outlived its quarantine by 5,807 notifications and 405
// units): the revenue stays in the epoch as served by no registered node.
// What it served before is decided by the evidence window (window.go), not
// here: this node has no evidence row, so it is paid for that.
func TestQuarantinedNodeEarnsNothingAfter(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	e0 := events.EpochOf(time.Now()) - 10
	at := func(epoch int64, sec int) time.Time { return epochStart(epoch).Add(time.Duration(sec) * time.Second) }
	const Q, B = "NODE-EU-QQQQQQQQ", "NODE-US-BBBBBBBB"
	qAt := at(e0, 30)
	if _, err := w.pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status, quarantined_at, quarantine_reason) VALUES
		($1, '0xaa', 'EU', 'http://q.example', '{137}', 'quarantined', $3, 'forged logs'),
		($2, '0xbb', 'US', 'http://b.example', '{137}', 'online', NULL, NULL)`, Q, B, qAt); err != nil {
		t.Fatal(err)
	}
	evs := []events.Event{
		rev("q1", at(e0, 10), Q, 100, 1),   // before its quarantine: owed
		rev("b1", at(e0, 20), B, 100, 1),   // B
		rev("q2", at(e0, 40), Q, 300, 3),   // after, same epoch: not owed
		rev("q3", at(e0+1, 5), Q, 500, 5),  // a later epoch: not owed
		rev("b2", at(e0+1, 50), B, 100, 1), // B
	}
	settletest.XAddIDs(t, w.rdb, w.stream, settletest.TimeIDs(evs), evs...)
	w.ingest(t)
	w.drained(t)
	w.closeUntil(t, epochEnd(e0+1).Add(5*time.Second))
	if got := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1 AND epoch_id = $2`, Q, e0+1); got != 0 {
		t.Errorf("Q earned %d in the epoch after its quarantine, want 0", got)
	}
	// e0: total 500, operators 250, pot = W/2 with W = Q 100 + B 100: Q 50.
	if got := settletest.Count(t, w.pool, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1`, Q); got != 50 {
		t.Errorf("Q earned %d in all, want 50 (half of the 100 it served before its quarantine)", got)
	}
	for _, e := range w.epochs(t)[:2] {
		if e.Operators+e.Platform+e.Pool != e.Total || e.Dist+e.CarryOut+e.PlatformOps != e.Operators+e.CarryIn {
			t.Errorf("epoch %d does not sum: %+v", e.ID, e)
		}
	}
}
