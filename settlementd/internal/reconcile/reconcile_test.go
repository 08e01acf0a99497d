package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// dump renders every key record, balance and x402 bundle of the prefix (not
// the gateway's transient counters: daily calls, rate-limit state, free tier).
func dump(t *testing.T, rdb *redis.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	for _, pat := range []string{prefix + "key:*", prefix + "acct:*", prefix + "bundle:*"} {
		keys, err := rdb.Keys(ctx, pat).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if strings.Contains(k, ":day:") || strings.HasSuffix(k, ":rl") {
				continue
			}
			switch rdb.Type(ctx, k).Val() {
			case "string":
				lines = append(lines, k+" = "+rdb.Get(ctx, k).Val())
			case "hash":
				lines = append(lines, fmt.Sprintf("%s = %v", k, rdb.HGetAll(ctx, k).Val())) // fmt sorts map keys
			case "set":
				m := rdb.SMembers(ctx, k).Val()
				sort.Strings(m)
				lines = append(lines, fmt.Sprintf("%s = %v", k, m))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A healthy system — keys, deposits, debits and refunds all made by the
// gateway's own metering code, then ingested — is left exactly as it is by
// reconcile, run twice; after Redis loses the records, reconcile rebuilds
// them identically.
func TestReconcileHealthyIsNoOpAndRebuildsLostRedis(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}

	m, err := meter.New(rdb, meter.Config{Prefix: prefix, FreeDailyLimit: 500, FreeSubnetLimit: 2500})
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("192.0.2.7")
	var keys []meter.CreatedKey
	for i := range 5 {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: fmt.Sprint("key ", i), Tier: "free", IP: ip})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// Deposits as the deposit listener books them: Redis credit + ledger.
	for i, k := range keys[:4] {
		for j := range i + 1 {
			id := fmt.Sprintf("0xdeposit%d:%d", i, j)
			if _, _, err := balances.Credit(ctx, rdb, prefix, k.ID, 1_000, id); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', $2, 1000, now())`, k.ID, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Traffic: paid calls until balances run low, free calls after, some
	// refunds; revenue events as the gateway writes them.
	var revs []events.Event
	for i := range 300 {
		k := keys[i%len(keys)]
		d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(k.Secret), Calls: 1 + i%3})
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		if i%7 == 0 && (d.Outcome == meter.Paid || d.Outcome == meter.Free) {
			failed = 1
			if err := m.Refund(ctx, &d, failed); err != nil {
				t.Fatal(err)
			}
		}
		if ev, ok := d.Revenue(failed, "NODE-EU-AAAAAAAA", "NODE-EU-AAAAAAAA", time.Now()); ok {
			revs = append(revs, ev)
		}
	}
	settletest.XAdd(t, rdb, l.Stream(0), revs...)
	// A revocation: the gateway's admin path is not built yet, so do what it
	// will do — flag the account and write the event.
	rdb.HSet(ctx, l.Account(keys[4].ID), balances.FieldStatus, balances.StatusRevoked)
	settletest.XAdd(t, rdb, l.Stream(0), &events.KeyRevoked{KeyID: keys[4].ID, TimeMs: time.Now().UnixMilli()})

	// Before ingest, reconcile refuses: Redis is ahead of Postgres.
	if _, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil); !errors.Is(err, ErrNotIngested) {
		t.Fatalf("reconcile before ingest: %v", err)
	}
	ingestAll(t, rdb, pool, l.Stream(0))

	before := dump(t, rdb, prefix)
	if !strings.Contains(before, ":deposits = [") || !strings.Contains(before, "spent:") {
		t.Fatalf("test did not build the state it means to check:\n%s", before)
	}
	for run := range 2 {
		rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Changed != 0 || rep.Accounts != len(keys) {
			t.Fatalf("run %d on a healthy system: %+v", run, rep)
		}
		if after := dump(t, rdb, prefix); after != before {
			t.Fatalf("run %d changed Redis:\nbefore\n%s\nafter\n%s", run, before, after)
		}
	}

	// Redis loses every key record and balance.
	for _, pat := range []string{prefix + "key:*", prefix + "acct:*"} {
		for _, k := range rdb.Keys(ctx, pat).Val() {
			rdb.Del(ctx, k)
		}
	}
	rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix}, nil) // dry run writes nothing
	if err != nil || rep.Changed != len(keys) || rep.Fields["lookup"] != len(keys) {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if d := dump(t, rdb, prefix); d != "" {
		t.Fatalf("dry run wrote:\n%s", d)
	}
	if _, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Apply: true}, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt := dump(t, rdb, prefix); rebuilt != before {
		t.Fatalf("rebuilt Redis differs:\nwant\n%s\ngot\n%s", before, rebuilt)
	}
	// The rebuilt records work for the gateway: the key still pays.
	d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(keys[3].Secret), Calls: 1})
	if err != nil || d.Outcome != meter.Paid {
		t.Fatalf("rebuilt key: %+v %v", d, err)
	}
	if d, _ := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(keys[4].Secret), Calls: 1}); d.Outcome != meter.Unauthorized {
		t.Fatalf("revoked key after rebuild: %+v", d)
	}
	// A replayed deposit is still credited once.
	if applied, _, err := balances.Credit(ctx, rdb, prefix, keys[0].ID, 1_000, "0xdeposit0:0"); err != nil || applied {
		t.Fatalf("replayed deposit applied=%v err=%v", applied, err)
	}
}

func ingestAll(t *testing.T, rdb *redis.Client, pool *pgxpool.Pool, stream string) {
	t.Helper()
	in, err := ingest.New(rdb, pool, ingest.Config{Stream: stream, Consumer: "t", Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	settletest.Eventually(t, 30*time.Second, "stream ingested", func() (bool, error) {
		w, err := ingest.GroupWatermark(context.Background(), rdb, stream, "settlementd")
		return err == nil && w.Drained(), err
	})
}
