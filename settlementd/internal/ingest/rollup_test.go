package ingest

import (
	"math"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// The rollups hold exactly what revenue_events holds, however the batches
// were written: summed in Go on the COPY path, grouped in SQL on the ON
// CONFLICT path (redeliveries), by concurrent workers, across hour and day
// boundaries. Compared both ways with the rollups' own definition
// (migration 0046) over the stored rows.
func TestRollupsEqualTheRevenueRows(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	evs := settletest.Traffic(7, 3000, now.Add(-75*time.Hour), now)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs[:len(evs)/3]...) // redelivered: the ON CONFLICT path
	e.start(t, Config{Batch: 97, Workers: 3})
	e.drained(t)

	checks := []struct{ name, rollup, want string }{
		{"usage_hourly", `SELECT account, hour, chain_id, method, payer, requests, calls, amount_units FROM usage_hourly`,
			`SELECT account, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', chain_id, method, payer, count(*), sum(calls), sum(amount_units)
			 FROM revenue_events WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5`},
		{"usage_daily", `SELECT account, day, chain_id, method, payer, requests, calls, amount_units FROM usage_daily`,
			`SELECT account, (ts AT TIME ZONE 'UTC')::date, chain_id, method, payer, count(*), sum(calls), sum(amount_units)
			 FROM revenue_events WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5`},
		{"node_usage_hourly", `SELECT node_id, hour, chain_id, requests, calls, amount_units FROM node_usage_hourly`,
			`SELECT node_id, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', chain_id, count(*), sum(calls), sum(amount_units)
			 FROM revenue_events WHERE node_id IS NOT NULL GROUP BY 1, 2, 3`},
	}
	for _, c := range checks {
		n := e.count(t, `SELECT count(*) FROM (`+c.rollup+`) x`)
		if n < 10 {
			t.Errorf("%s: %d rows, want many", c.name, n)
		}
		if d := e.count(t, `SELECT count(*) FROM ((`+c.rollup+` EXCEPT `+c.want+`) UNION ALL (`+c.want+` EXCEPT `+c.rollup+`)) x`); d != 0 {
			t.Errorf("%s: %d rows differ from the revenue rows' sums", c.name, d)
		}
	}
	if days := e.count(t, `SELECT count(DISTINCT day) FROM usage_daily`); days < 3 {
		t.Errorf("usage over %d days, want the traffic's 4", days)
	}
}

// A sum that would leave int64 is not wrapped around in Go: the batch's
// rollups go to PostgreSQL's sum(), which refuses it as before.
func TestRollupSumOverflowIsNotSummedInGo(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	r := revenueCols{
		id: []string{"a", "b"}, ts: []time.Time{at, at}, account: []string{"key_A", "key_A"}, node: []string{"", ""},
		method: []string{"eth_call", "eth_call"}, payer: []string{"credits", "credits"}, chain: []int64{1, 1},
		amount: []int64{math.MaxInt64, 1}, calls: []int32{1, 1},
	}
	if _, ok := r.sumRollups(); ok {
		t.Fatal("an int64 overflow was summed")
	}
	r.amount[0] = math.MaxInt64 - 1
	ru, ok := r.sumRollups()
	if !ok {
		t.Fatal("a sum within int64 refused")
	}
	k := usageKey{account: "key_A", at: at.Truncate(time.Hour).UnixMilli(), chain: 1, method: "eth_call", payer: "credits"}
	if s := ru.hourly[k]; s == nil || *s != (usageSum{requests: 2, calls: 2, amount: math.MaxInt64}) {
		t.Errorf("hourly sum %+v", s)
	}
	k.at = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	if s := ru.daily[k]; s == nil || s.requests != 2 {
		t.Errorf("daily sum %+v", s)
	}
}
