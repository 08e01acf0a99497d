package ingest

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The gateways let go of a money fact once settlementd's acknowledgement
// (balances.Layout.Ingested) passes it. A Redis restored from a snapshot
// whose state count is at or above the ledger floor is not refused, and
// relies on the gateways booking again every fact it lacks — so no
// acknowledgement may pass a decision the floor published with it does not
// count. Paid calls run one after another (each one's count and entry time
// recorded) while the test reads the acknowledgement and the floor together:
// no call counted above the floor may be below the acknowledgement.
func TestAckStaysBelowTheFloor(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	prefix := e.stream[:len(e.stream)-len("events")]
	l := balances.Layout{Prefix: prefix}
	secret, err := meter.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	id := "key_00000000000000000000000003"
	if _, err := e.pool.Exec(ctx, `INSERT INTO api_keys (key_id, key_hash, kind, label, tier, created_at) VALUES ($1, $2, 'api', 'r', 'free', now())`, id, meter.HashKey(secret)); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Set(ctx, l.KeyLookup(meter.HashKey(secret)), id, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(ctx, l.Account(id), balances.FieldStatus, balances.StatusActive, balances.FieldBal, int64(1_000_000*money.PricePerCall)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Set(ctx, l.Generation(), "g1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	m, err := meter.New(e.rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.11"), Calls: 1, KeyHash: meter.HashKey(secret)}
	type call struct{ seq, ms int64 }
	var (
		mu    sync.Mutex
		calls []call
	)
	e.start(t, Config{WatermarkEvery: 10 * time.Millisecond, Block: 20 * time.Millisecond, Linger: -1})
	done := make(chan error, 1)
	go func() {
		end := time.Now().Add(4 * time.Second)
		for time.Now().Before(end) {
			if d, err := m.Authorize(ctx, req); err != nil || d.Outcome != meter.Paid {
				done <- err
				return
			}
			var seq *redis.StringCmd
			var last *redis.XMessageSliceCmd
			if _, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				seq = p.Get(ctx, l.Seq())
				last = p.XRevRangeN(ctx, e.stream, "+", "-", 1)
				return nil
			}); err != nil {
				done <- err
				return
			}
			s, _ := seq.Int64()
			mu.Lock()
			calls = append(calls, call{s, idMs(last.Val()[0].ID)})
			mu.Unlock()
		}
		done <- nil
	}()
	type pair struct{ ack, floor int64 }
	var seen []pair
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		var ack, floor *redis.StringCmd
		if _, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			ack = p.Get(ctx, l.Ingested())
			floor = p.Get(ctx, l.LedgerSeq())
			return nil
		}); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		ms, _, _ := strings.Cut(ack.Val(), " ")
		a, _ := strconv.ParseInt(ms, 10, 64)
		f, _ := strconv.ParseInt(floor.Val(), 10, 64)
		if a > 0 {
			seen = append(seen, pair{a, f})
		}
		time.Sleep(3 * time.Millisecond) // sampling pace, not a sync
	}
	if len(seen) == 0 || len(calls) < 100 {
		t.Fatalf("%d acknowledgements seen, %d calls made", len(seen), len(calls))
	}
	bad := 0
	for _, p := range seen {
		for _, c := range calls {
			if c.seq > p.floor && c.ms < p.ack {
				bad++
				if bad <= 3 {
					t.Errorf("acknowledged up to %d ms with floor %d: call counted %d at %d ms is let go but not under the floor", p.ack, p.floor, c.seq, c.ms)
				}
				break
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d acknowledgements passed calls the floor does not count (%d calls)", bad, len(seen), len(calls))
	}
	t.Logf("%d calls, %d acknowledgements checked", len(calls), len(seen))
}
