package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// MarkRebuilt writes the generation marker under prefix
// (balances.Layout.Generation), standing in for settlementd's start-up
// check in a test that runs the gateway (or the meter) without settlementd.
// Without it the gateway treats that Redis as one that lost its data: an
// unknown API key answers 503 metering_recovering, not 401, and x402
// payments wait. Tests of the recovery itself leave the marker out (or
// delete it) on purpose; every other gateway test calls this once, right
// after choosing its prefix. The value says who wrote it.
func MarkRebuilt(t testing.TB, rdb redis.Cmdable, prefix string) {
	t.Helper()
	// A generous deadline, not pingTimeout: Redis is known to be up here,
	// and a busy machine may stall one write for seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rdb.Set(ctx, balances.Layout{Prefix: prefix}.Generation(), "test: written by testenv.MarkRebuilt", 0).Err(); err != nil {
		t.Fatalf("testenv: writing the generation marker: %v", err)
	}
}

// MarkRebuiltLayout is MarkRebuilt for every shard of a (possibly sharded)
// layout: each shard's scripts read their own shard's marker.
func MarkRebuiltLayout(t testing.TB, rdb redis.Cmdable, l balances.Layout) {
	t.Helper()
	for i := range l.N() {
		MarkRebuilt(t, rdb, l.Shard(i).Prefix)
	}
}
