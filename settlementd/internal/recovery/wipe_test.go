package recovery

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/intel"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// The wipe of a shard older than the ledger deletes its metering state only:
// on an unsharded deployment the node registry, the used wallet-key nonces
// and the funding intelligence share the prefix, and are kept — the gateway
// would otherwise route to no operator node until the prober's next run,
// and a wallet's create or rotate signature could be used a second time.
func TestWipeKeepsWhatIsNotMetering(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	nodes := prefix + registry.NodesKey
	nonce := prefix + "walletkey:{0xabc}:nonce:n1"
	latest := intel.LatestKey(prefix)
	acct := l.Account("key_00000000000000000000000004")
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, nodes, "node-1", `{"id":"node-1"}`)
		p.Set(ctx, nonce, 1, 0)
		p.Set(ctx, latest, "{}", 0)
		p.HSet(ctx, acct, balances.FieldBal, 100)
		// Older than the ledger.
		p.Set(ctx, l.Seq(), 1_000_000, 0)
		p.Set(ctx, l.LedgerSeq(), 2_000_000, 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if value(w.olderTotal) != 1 {
		t.Fatal("not found older")
	}
	if n, _ := rdb.Exists(ctx, acct).Result(); n != 0 {
		t.Fatal("the snapshot's account survived the wipe")
	}
	for _, k := range []string{nodes, nonce, latest} {
		if n, _ := rdb.Exists(ctx, k).Result(); n != 1 {
			t.Errorf("%s deleted by the wipe", k)
		}
	}
}
