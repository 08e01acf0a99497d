package balances_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

func TestCreditIsIdempotentPerDeposit(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	ctx := context.Background()
	id := accounts.NewID()
	applied, bal, err := balances.Credit(ctx, rdb, prefix, id, 1_000_000, "0xabc:3")
	if err != nil || !applied || bal != 1_000_000 {
		t.Fatalf("first credit: %v %d %v", applied, bal, err)
	}
	// The listener re-processing the same log credits nothing.
	applied, bal, err = balances.Credit(ctx, rdb, prefix, id, 1_000_000, "0xabc:3")
	if err != nil || applied || bal != 1_000_000 {
		t.Fatalf("replayed credit: %v %d %v", applied, bal, err)
	}
	applied, bal, err = balances.Credit(ctx, rdb, prefix, id, 500, "0xabc:4")
	if err != nil || !applied || bal != 1_000_500 {
		t.Fatalf("second deposit: %v %d %v", applied, bal, err)
	}
	if b, _ := balances.Balance(ctx, rdb, prefix, id); b != 1_000_500 {
		t.Fatalf("balance %d", b)
	}
	if b, err := balances.Balance(ctx, rdb, prefix, accounts.NewID()); b != 0 || err != nil {
		t.Fatalf("unknown account: %d %v", b, err)
	}
	for _, c := range []struct {
		id    string
		units int64
		dep   string
	}{{"nope", 1, "d"}, {id, 0, "d"}, {id, -5, "d"}, {id, 1, ""}} {
		if _, _, err := balances.Credit(ctx, rdb, prefix, c.id, money.Units(c.units), c.dep); !errors.Is(err, balances.ErrInvalid) {
			t.Errorf("Credit(%q, %d, %q): %v", c.id, c.units, c.dep, err)
		}
	}
}

func TestConcurrentReplaysCreditOnce(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	id := accounts.NewID()
	var applied atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range 10 {
				ok, _, err := balances.Credit(context.Background(), rdb, prefix, id, 100, fmt.Sprintf("0xtx:%d", d))
				if err != nil {
					t.Error(g, err)
				}
				if ok {
					applied.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if b, _ := balances.Balance(context.Background(), rdb, prefix, id); applied.Load() != 10 || b != 1000 {
		t.Fatalf("applied %d times, balance %d", applied.Load(), b)
	}
}

func TestDefaultLayoutMatchesEventsStream(t *testing.T) {
	if got := (balances.Layout{Prefix: balances.DefaultPrefix}).Stream(0); got != events.Stream {
		t.Fatalf("%q != %q", got, events.Stream)
	}
}
