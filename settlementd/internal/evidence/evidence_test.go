package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Publish writes the records of routable nodes only, with the status
// Postgres holds; Lift refuses unknown and unquarantined nodes, and a lift
// whose registry write fails is still committed and says so.
func TestPublishAndLift(t *testing.T) {
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	key := testenv.KeyPrefix(t) + registry.NodesKey
	ctx := context.Background()
	const q, bare, free = "NODE-EU-QUARANTA", "NODE-EU-NOWALLET", "NODE-EU-HONESTAA"
	if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status) VALUES
		($1, $4, 'EU', 'https://q.example', '{137}', 'online'), ($2, NULL, 'EU', 'https://b.example', '{137}', 'online'),
		($3, $4, 'EU', 'https://h.example', '{137}', 'online')`, q, bare, free, settletest.Wallet(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE nodes SET quarantined_at = now(), quarantine_reason = 'test' WHERE node_id IN ($1, $2)`, q, bare); err != nil {
		t.Fatal(err)
	}
	if err := Publish(ctx, pool, rdb, key, []string{q, bare, "NODE-EU-UNKNOWNA"}); err != nil {
		t.Fatal(err)
	}
	all, err := rdb.HGetAll(ctx, key).Result()
	if err != nil || len(all) != 1 {
		t.Fatalf("records %v %v; want only %s", all, err, q)
	}
	if n, err := registry.Decode(all[q]); err != nil || n.Status != registry.StatusQuarantined || n.Serves(137) || n.URL != "https://q.example" {
		t.Fatalf("record %+v %v", n, err)
	}

	if err := Lift(ctx, pool, rdb, key, "NODE-EU-UNKNOWNA", "admin:t", "r"); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("lift unknown: %v", err)
	}
	if err := Lift(ctx, pool, rdb, key, free, "admin:t", "r"); !errors.Is(err, ErrNotQuarantined) {
		t.Fatalf("lift of a node that is not quarantined: %v", err)
	}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	if err := Lift(ctx, pool, down, key, q, "admin:t", "review"); !errors.Is(err, ErrNotPublished) {
		t.Fatalf("lift with Redis down: %v", err)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM nodes WHERE node_id = $1 AND status = 'online' AND quarantined_at IS NULL`, q); n != 1 {
		t.Fatal("the lift did not commit")
	}
	// The record still says quarantined until someone republishes it.
	if n, err := registry.Decode(rdb.HGet(ctx, key, q).Val()); err != nil || n.Status != registry.StatusQuarantined {
		t.Fatalf("record after the unpublished lift %+v %v", n, err)
	}
	if err := Publish(ctx, pool, rdb, key, []string{q}); err != nil {
		t.Fatal(err)
	}
	if n, err := registry.Decode(rdb.HGet(ctx, key, q).Val()); err != nil || !n.Serves(137) {
		t.Fatalf("republished %+v %v", n, err)
	}
	qs, err := Of(ctx, pool, q)
	if err != nil || qs.Quarantined || qs.Since != nil || qs.Reason != nil || len(qs.EvidenceIDs) != 0 {
		t.Fatalf("after the lift %+v %v", qs, err)
	}
}

// The operator sees every epoch whose share was withheld: on the earnings
// route's quarantine (newest first, with the amount and the evidence) and
// on each piece of evidence (the epochs it withheld, its suspect_since).
func TestOperatorSeesTheWithheldEpochs(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	const node = "NODE-EU-PATIENTP"
	e0 := int64(29_000_000)
	for e := e0; e <= e0+3; e++ {
		// total 200: operators 100, platform 60, pool 40, the platform's
		// operators' part 20; the node's share 50, withheld from e1 on.
		wh := int64(0)
		if e > e0 {
			wh = 50
		}
		start := time.Unix(e*60, 0).UTC()
		if _, err := pool.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, events, calls, total_units, node_units,
				operators_units, platform_units, pool_units, distributed_units, carry_out_units, platform_operators_units, withheld_units, closed_at)
			VALUES ($1, 'CLOSED', $2, $3, 1, 1, 200, 160, 100, 60, $4, $5, 0, 20, $6, now())`, e, start, start.Add(time.Minute), 40+wh, 80-wh, wh); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO epoch_node_shares (epoch_id, node_id, weight_units, calls, share_units, withheld_units)
			VALUES ($1, $2, 100, 1, $3, $4)`, e, node, 50-wh, wh); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Unix((e0+1)*60, 0).UTC()
	for i, ev := range []struct {
		id    string
		at    time.Time
		since *time.Time
	}{{"chk-1", time.Unix((e0+3)*60+10, 0).UTC(), &since}, {"chk-2", time.Unix((e0+3)*60+20, 0).UTC(), nil}} {
		if _, err := pool.Exec(ctx, `INSERT INTO node_evidence (id, ts, epoch_id, booked_epoch, chain_id, node_id, method, block,
				node_answer, trusted_answer, trusted_by, suspect_since, received_at)
			VALUES ($1, $2, $3, $3, 137, $4, 'eth_getBalance', 1, '"0x0"', '"0x1"', 'provider-a', $5, now() + $6 * interval '1 ms')`,
			ev.id, ev.at, e0+3, node, ev.since, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO node_withholdings (epoch_id, node_id, evidence_id, units, kind) VALUES
		($1, $4, 'chk-1', 50, 'window'), ($2, $4, 'chk-1', 50, 'window'), ($3, $4, 'chk-1', 50, 'booked')`, e0+1, e0+2, e0+3, node); err != nil {
		t.Fatal(err)
	}

	q, err := Of(ctx, pool, node)
	if err != nil {
		t.Fatal(err)
	}
	if q.WithheldUnits != 150 || q.WithheldEpochCount != 3 || len(q.WithheldEpochs) != 3 || q.EvidenceCount != 2 {
		t.Fatalf("quarantine %+v", q)
	}
	w := q.WithheldEpochs[0]
	if w.EpochID != e0+3 || w.Kind != "booked" || w.EvidenceID != "chk-1" || w.Units != 50 ||
		w.StartsAt != time.Unix((e0+3)*60, 0).UTC().Format(time.RFC3339) || q.WithheldEpochs[2].EpochID != e0+1 || q.WithheldEpochs[2].Kind != "window" {
		t.Fatalf("withheld epochs %+v", q.WithheldEpochs)
	}
	b, _ := json.Marshal(q)
	if !strings.Contains(string(b), `"withheld_epochs":[{"epoch_id":29000003,"starts_at":"`) ||
		!strings.Contains(string(b), `"withheld_units":"50","withheld_usdt":0.00005,"evidence_id":"chk-1","kind":"booked"`) {
		t.Fatalf("quarantine JSON %s", b)
	}

	items, err := List(ctx, pool, node, 10, nil)
	if err != nil || len(items) != 2 {
		t.Fatalf("%v %v", items, err)
	}
	if it := items[1]; it.ID != "chk-1" || it.SuspectSince == nil || *it.SuspectSince != since.Format(time.RFC3339Nano) ||
		len(it.Withheld) != 3 || it.Withheld[0].EpochID != e0+3 || it.Withheld[2].EpochID != e0+1 {
		t.Fatalf("chk-1 %+v", it)
	}
	if it := items[0]; it.ID != "chk-2" || it.SuspectSince != nil || it.Withheld == nil || len(it.Withheld) != 0 {
		t.Fatalf("chk-2 %+v", it)
	}
	if b, _ := json.Marshal(items[0]); !strings.Contains(string(b), `"suspect_since":null,"withheld":[]`) {
		t.Fatalf("chk-2 JSON %s", b)
	}
}
