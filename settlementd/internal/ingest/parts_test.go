package ingest

import (
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestRevenuePartsAreStoredPerServer: a request served by several servers
// reaches the stream as one revenue event per server (meter.RevenueParts:
// the request id for the largest part, "<id>/<n>" for the others). Each is
// stored once under its own id, so a node's revenue is exactly the calls it
// served: 99 cached calls and 1 node call credit the node 1 call; a
// notification fanned out to 10 subscribers credits the node once.
func TestRevenuePartsAreStoredPerServer(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	const node = "NODE-EU-PARTPART"
	rev := func(id, upstream, nodeID string, calls int) *events.Revenue {
		return &events.Revenue{ID: id, TimeMs: now.UnixMilli(), EpochID: events.EpochOf(time.UnixMilli(now.UnixMilli())), ChainID: 137,
			Method: "batch", Payer: events.PayerCredits, Account: "key_01JABCDEFGHJKMNPQRSTVWXYZ0", Asset: events.AssetUSDT,
			Amount: money.PricePerCall * money.Units(calls), Calls: calls, Upstream: upstream, NodeID: nodeID}
	}
	evs := []events.Event{
		rev("01JREQUESTAAAAAAAAAAAAAAAA", "cache", "", 99),
		rev("01JREQUESTAAAAAAAAAAAAAAAA/1", node, node, 1),
		rev("01JNOTIFYAAAAAAAAAAAAAAAAA", node, node, 1),
	}
	for i := range 9 {
		evs = append(evs, rev("01JNOTIFYAAAAAAAAAAAAAAAA"+string(rune('B'+i)), "fanout", "", 1))
	}
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs[:2]...) // redelivered: stored once
	e.start(t, Config{})
	e.drained(t)
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != int64(len(evs)) {
		t.Fatalf("%d revenue rows, want %d", got, len(evs))
	}
	if got := e.count(t, `SELECT COALESCE(sum(calls), 0)::bigint FROM revenue_events WHERE node_id = $1`, node); got != 2 {
		t.Fatalf("the node is credited %d calls, want 2 (1 of the batch, 1 for the notification)", got)
	}
	if got := e.count(t, `SELECT COALESCE(sum(amount_units), 0)::bigint FROM revenue_events WHERE id LIKE '01JREQUESTAAAAAAAAAAAAAAAA%'`); got != int64(100*money.PricePerCall) {
		t.Fatalf("the split request's revenue sums to %d units, want %d", got, 100*money.PricePerCall)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != 0 {
		t.Fatalf("dead letters %d", got)
	}
}
