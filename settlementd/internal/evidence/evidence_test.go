package evidence

import (
	"context"
	"errors"
	"testing"

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
