package recovery

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Two watchers (two replicas: a stale leader and the new one) rebuild the
// same wiped Redis at once while paid traffic runs on the keys as soon as
// they are back. Every call is either paid or answered "recovering", and
// afterwards every balance is exactly its deposit minus what was paid:
// no record was written twice, so no call paid after its key came back was
// given back by the other run. The marker is set; a later check is a no-op.
func TestOverlappingRebuildsUnderTraffic(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	const accounts, payers = 3000, 16
	const deposit = 1000 * money.PricePerCall
	secrets := make([]string, payers)
	for i := range secrets {
		if secrets[i], err = meter.NewKey(); err != nil {
			t.Fatal(err)
		}
	}
	// PostgreSQL holds the keys and their deposits; Redis holds nothing.
	for i := range accounts {
		hash := fmt.Sprintf("%064x", i)
		if i < payers {
			hash = meter.HashKey(secrets[i])
		}
		id := fmt.Sprintf("key_%026d", i)
		if _, err := pool.Exec(ctx, `INSERT INTO api_keys (key_id, key_hash, kind, label, tier, created_at) VALUES ($1, $2, 'api', 'r', 'free', now())`, id, hash); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', $2, $3, now())`,
			id, "0xdep"+id, int64(deposit)); err != nil {
			t.Fatal(err)
		}
	}

	var paid [payers]atomic.Int64
	var other atomic.Int64
	stop := make(chan struct{})
	var traffic sync.WaitGroup
	for k := range payers {
		traffic.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.1"), KeyHash: meter.HashKey(secrets[k]), Calls: 1})
				switch {
				case err != nil:
					t.Error(err)
					return
				case d.Outcome == meter.Paid:
					paid[k].Add(1)
				case d.Outcome != meter.Recovering:
					other.Add(1)
				}
			}
		})
	}
	log := zaptest.NewLogger(t)
	var runs sync.WaitGroup
	for range 2 {
		w := New(pool, rdb, prefix, log)
		w.Grace = 0
		runs.Go(func() {
			if err := w.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	runs.Wait()
	// Traffic keeps going a little after both runs, against rebuilt keys.
	settletest.Eventually(t, 10*time.Second, "every key paid after the rebuild", func() (bool, error) {
		for k := range payers {
			if paid[k].Load() == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	close(stop)
	traffic.Wait()
	if n := other.Load(); n != 0 {
		t.Fatalf("%d calls were neither paid nor answered recovering", n)
	}
	if ok, err := reconcile.MarkerPresent(ctx, rdb, prefix); err != nil || !ok {
		t.Fatalf("marker after the rebuilds: %v %v", ok, err)
	}
	var total int64
	for k := range payers {
		id := fmt.Sprintf("key_%026d", k)
		bal, err := balances.Balance(ctx, rdb, prefix, id)
		if err != nil {
			t.Fatal(err)
		}
		n := paid[k].Load()
		total += n
		if want := deposit - money.PricePerCall*money.Units(n); bal != want {
			t.Errorf("key %d: balance %d after %d paid calls, want %d", k, bal, n, want)
		}
	}
	if bal, _ := balances.Balance(ctx, rdb, prefix, fmt.Sprintf("key_%026d", accounts-1)); bal != deposit {
		t.Errorf("the last account's balance %d, want %d", bal, deposit)
	}
	t.Logf("%d calls paid during and after two overlapping rebuilds of %d accounts", total, accounts)
	// With the marker present the watcher only looks.
	before := rdb.Get(ctx, balances.Layout{Prefix: prefix}.Generation()).Val()
	if err := New(pool, rdb, prefix, log).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if after := rdb.Get(ctx, balances.Layout{Prefix: prefix}.Generation()).Val(); after != before {
		t.Fatalf("a check with the marker present rebuilt (%q → %q)", before, after)
	}
}

// The rebuild waits for the marker to stay missing for Grace (so ingest
// batches read before a loss can commit first), then runs once.
func TestRebuildWaitsForGrace(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = time.Hour
	for range 2 {
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); ok {
			t.Fatal("rebuilt within the grace period")
		}
	}
	w.missingSince = time.Now().Add(-time.Hour)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); !ok {
		t.Fatal("not rebuilt after the grace period")
	}
	if !w.missingSince.IsZero() {
		t.Fatal("the grace clock was not reset by the rebuild")
	}
}
