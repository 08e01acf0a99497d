package meter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// BenchmarkMeterDecisions is the Redis-only metering driver (no gateway):
// paid decisions of many payers from many addresses, 64 in flight per CPU,
// reported as decisions/s. It runs against REDIS_URL, or against a Redis
// Cluster when TOLLGATE_BENCH_REDIS_CLUSTER lists its nodes
// ("host:port,host:port"; make bench-meter), with TOLLGATE_BENCH_SHARDS
// shards (default 12 on a cluster, 1 otherwise) and, when
// TOLLGATE_BENCH_REPLICA_WAIT is a duration, WAIT 1 after each debit. Run it
// against one master and against three to see the writes spread.
//
//	go test ./shared/meter -run '^$' -bench BenchmarkMeterDecisions -benchtime 10s
func BenchmarkMeterDecisions(b *testing.B) {
	ctx := context.Background()
	var rdb redis.UniversalClient
	shards := 1
	var prefix string
	if nodes := os.Getenv("TOLLGATE_BENCH_REDIS_CLUSTER"); nodes != "" {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: splitComma(nodes), PoolSize: 256, MaxRetries: -1})
		b.Cleanup(func() { _ = cc.Close() })
		rdb, shards = cc, 12
		var r [8]byte
		_, _ = rand.Read(r[:])
		prefix = "bench:" + hex.EncodeToString(r[:]) + ":"
		b.Cleanup(func() {
			_ = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
				iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
				for iter.Next(ctx) {
					c.Unlink(ctx, iter.Val())
				}
				return nil
			})
		})
	} else {
		c := testenv.Redis(b)
		rdb, prefix = c, testenv.KeyPrefix(b)
	}
	if s := os.Getenv("TOLLGATE_BENCH_SHARDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		shards = n
	}
	var wait time.Duration
	if s := os.Getenv("TOLLGATE_BENCH_REPLICA_WAIT"); s != "" {
		var err error
		if wait, err = time.ParseDuration(s); err != nil {
			b.Fatal(err)
		}
	}
	l := balances.Layout{Prefix: prefix, Shards: shards}
	for i := range l.N() {
		if err := rdb.Set(ctx, l.Shard(i).Generation(), "bench", 0).Err(); err != nil {
			b.Fatal(err)
		}
	}
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, Shards: shards, FreeDailyLimit: 1 << 40, FreeSubnetLimit: 1 << 40,
		ReplicaWait: wait})
	if err != nil {
		b.Fatal(err)
	}
	const payers = 512
	hashes := make([]string, payers)
	for i := range hashes {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := balances.CreditAt(ctx, rdb, l, k.ID, 1<<50, "bench"); err != nil {
			b.Fatal(err)
		}
		hashes[i] = meter.HashKey(k.Secret)
	}
	var next atomic.Uint64
	b.SetParallelism(64)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			req := meter.Request{ChainID: 137, IP: netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}),
				KeyHash: hashes[i%payers], Calls: 1}
			d, err := m.Authorize(ctx, req)
			if err != nil || d.Outcome != meter.Paid {
				b.Fatal(d.Outcome, err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	b.ReportMetric(float64(shards), "shards")
}

func splitComma(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ',' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
