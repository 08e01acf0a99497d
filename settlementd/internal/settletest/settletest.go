// Package settletest holds helpers for settlementd's tests: a migrated
// database, stream writes, a seeded event generator and polling. It is
// imported only by _test files.
package settletest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/migrations"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// DB returns the DSN of a fresh, migrated database and a pool on it.
func DB(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	dsn := testenv.Postgres(t)
	if err := migrations.Up(dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return dsn, pool
}

// XAdd appends events with auto ids, pipelined.
func XAdd(t testing.TB, rdb redis.UniversalClient, stream string, evs ...events.Event) {
	t.Helper()
	XAddIDs(t, rdb, stream, nil, evs...)
}

// XAddIDs appends events with explicit stream ids (nil: auto). Tests that
// replay the past use ids at the events' own times, as the gateway's XADD *
// would have produced them.
func XAddIDs(t testing.TB, rdb redis.UniversalClient, stream string, ids []string, evs ...events.Event) {
	t.Helper()
	ctx := context.Background()
	for off := 0; off < len(evs); off += 5000 {
		p := rdb.Pipeline()
		for i := off; i < min(off+5000, len(evs)); i++ {
			f, err := events.Encode(evs[i])
			if err != nil {
				t.Fatal(err)
			}
			id := "*"
			if ids != nil {
				id = ids[i]
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: f})
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// XAddPacked appends events as the gateways do: Revenue events packed
// up to pack per stream entry (the event writer, events.EncodePack), every
// other event in an entry of its own (the metering scripts' XADDs). A pack
// is written when it is full, and the last one at the end.
func XAddPacked(t testing.TB, rdb redis.UniversalClient, stream string, pack int, evs ...events.Event) {
	t.Helper()
	ctx := context.Background()
	var payloads []string
	p := rdb.Pipeline()
	flush := func(force bool) {
		if len(payloads) > 0 && (force || len(payloads) >= pack) {
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: events.EncodePack(events.TypeRevenue, payloads)})
			payloads = payloads[:0]
		}
		if n := p.Len(); n > 0 && (force || n >= 5000) {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range evs {
		if _, ok := e.(*events.Revenue); ok && pack > 1 {
			d, err := events.Payload(e)
			if err != nil {
				t.Fatal(err)
			}
			payloads = append(payloads, d)
		} else {
			f, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: f})
		}
		flush(false)
	}
	flush(true)
}

// TimeIDs returns stream ids at each event's time (ms-seq, increasing).
func TimeIDs(evs []events.Event) []string {
	ids := make([]string, len(evs))
	var lastMs, seq int64 = -1, 0
	for i, e := range evs {
		ms := TimeMs(e)
		if ms <= lastMs {
			ms, seq = lastMs, seq+1
		} else {
			seq = 0
		}
		lastMs = ms
		ids[i] = fmt.Sprintf("%d-%d", ms, seq)
	}
	return ids
}

// TimeMs is an event's time.
func TimeMs(e events.Event) int64 {
	switch e := e.(type) {
	case *events.Revenue:
		return e.TimeMs
	case *events.Debit:
		return e.TimeMs
	case *events.Refund:
		return e.TimeMs
	case *events.KeyCreated:
		return e.TimeMs
	case *events.KeyRevoked:
		return e.TimeMs
	case *events.BundleGranted:
		return e.TimeMs
	case *events.NodeMismatch:
		return e.TimeMs
	}
	return 0
}

// Eventually polls cond every 20 ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, lastErr)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

// Count runs a single-value query.
func Count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Wallet is the i-th test wallet: a lower-case 0x address, as the gateway
// keys x402 bundles (events.ValidWallet). The generator's bundle calls are
// drawn by Wallet(0) to Wallet(4).
func Wallet(i int) string { return fmt.Sprintf("0x%040x", 0xa11e7000+i) }

// Nodes used by the generator.
var Nodes = []string{"NODE-EU-AAAAAAAA", "NODE-US-BBBBBBBB", "NODE-AP-CCCCCCCC", "NODE-EU-DDDDDDDD"}

// methods label the generated revenue events (by index, so the random
// sequence, and every figure derived from a seed, is unchanged).
var methods = []string{"eth_call", "eth_getBalance", "eth_blockNumber", "batch", "other"}

// Traffic generates a realistic request stream from a seed: per request a
// debit, then (unless it failed upstream, ~5%) a revenue event naming who
// served it, or a refund. Requests are spread evenly over [from, to).
func Traffic(seed uint64, n int, from, to time.Time) []events.Event {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	span := to.Sub(from).Milliseconds()
	out := make([]events.Event, 0, 2*n)
	for i := range n {
		ms := from.UnixMilli() + int64(i)*span/int64(n)
		id := fmt.Sprintf("req-%d-%d", seed, i)
		calls := 1 + r.IntN(3)
		payer, asset, unit, account := events.PayerCredits, events.AssetUSDT, money.PricePerCall, fmt.Sprintf("key_ACCOUNT%02d", r.IntN(20))
		switch r.IntN(10) {
		case 0:
			payer, asset, unit, account = events.PayerBundle, events.AssetUSDC, money.BundleCallRevenue, Wallet(r.IntN(5))
		case 1:
			payer, unit, account = events.PayerFree, 0, ""
		}
		amount := unit * money.Units(calls)
		out = append(out, &events.Debit{ID: id, TimeMs: ms, ChainID: 137, Payer: payer, Account: account, Asset: asset, Amount: amount, Calls: calls})
		if r.IntN(20) == 0 {
			out = append(out, &events.Refund{ID: id, TimeMs: ms, Payer: payer, Account: account, Amount: amount, Calls: calls})
			continue
		}
		up, node := "alchemy", ""
		switch k := r.IntN(10); {
		case k < 7:
			node = Nodes[r.IntN(len(Nodes))]
			up = node
		case k == 7:
			up = "cache"
		}
		out = append(out, &events.Revenue{ID: id, TimeMs: ms, EpochID: events.EpochOf(time.UnixMilli(ms)), ChainID: 137,
			Method: methods[i%len(methods)], Payer: payer, Account: account, Asset: asset,
			Amount: amount, Calls: calls, Upstream: up, NodeID: node})
	}
	return out
}
