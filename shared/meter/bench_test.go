package meter_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// The metering decision's round trip against the real Redis: what a request
// pays in latency for being metered.
func benchMeter(b *testing.B) (*meter.Meter, string) {
	rdb := testenv.Redis(b)
	prefix := testenv.KeyPrefix(b)
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, FreeDailyLimit: 1 << 40, FreeSubnetLimit: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	k, err := m.CreateKey(context.Background(), meter.NewKeyRequest{Kind: events.KeyAPI, Label: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := balances.Credit(context.Background(), rdb, prefix, k.ID, 1<<50, "bench"); err != nil {
		b.Fatal(err)
	}
	return m, meter.HashKey(k.Secret)
}

func BenchmarkAuthorize(b *testing.B) {
	for _, c := range []struct {
		name  string
		keyed bool
		calls int
	}{{"paid", true, 1}, {"paid-batch10", true, 10}, {"free", false, 1}} {
		b.Run(c.name, func(b *testing.B) {
			m, hash := benchMeter(b)
			req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.1"), Calls: c.calls}
			if c.keyed {
				req.KeyHash = hash
			}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				d, err := m.Authorize(ctx, req)
				if err != nil || (d.Outcome != meter.Paid && d.Outcome != meter.Free) {
					b.Fatal(d, err)
				}
			}
		})
	}
}

// BenchmarkAuthorizeParallel is many requests in flight at once, as under
// load: Redis executes scripts one at a time, so this is the throughput
// ceiling of one Redis for metering.
func BenchmarkAuthorizeParallel(b *testing.B) {
	m, hash := benchMeter(b)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			req := meter.Request{ChainID: 137, IP: netip.MustParseAddr(fmt.Sprintf("192.0.2.%d", i%250)), KeyHash: hash, Calls: 1}
			if _, err := m.Authorize(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}
