package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/rediscluster"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The cluster row: the same wrk load through one gateway whose
// metering Redis is a Redis Cluster of three masters (one replica each),
// and the Redis-only figure: metering decisions per second from a driver
// that calls the metering script directly, against the single Redis and
// against the cluster. BENCH_CLUSTER=0 leaves both out.

// clusterShards is the metering shard count on the cluster
// (BENCH_CLUSTER_SHARDS, default 6: two per master; 1 keeps every key in
// one slot, on one master).
func clusterShards() int {
	n, err := strconv.Atoi(env("BENCH_CLUSTER_SHARDS", "6"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// clusterPrefix: one shard needs the prefix itself to be the hash tag.
func clusterPrefix(shards int) string {
	if shards > 1 {
		return "bench:"
	}
	return "{bench}:"
}

// benchCluster is a cluster and a gateway on it.
type benchCluster struct {
	cl      *rediscluster.Cluster
	rdb     *redis.ClusterClient
	gw      *caddyProc
	key     string
	shards  int
	redises []int // the masters' pids, for CPU accounting
}

func (b *benchCluster) stop() {
	if b.gw != nil {
		b.gw.stop()
	}
	if b.rdb != nil {
		_ = b.rdb.Close()
	}
	_ = b.cl.Stop()
}

// startBenchCluster starts the cluster under <out>/cluster and a gateway
// on it with a funded key.
func startBenchCluster(ctx context.Context, cfg config, up *upstream) (*benchCluster, error) {
	dir, err := filepath.Abs(filepath.Join(cfg.out, "cluster"))
	if err != nil {
		return nil, err
	}
	_ = os.RemoveAll(dir)
	cl, err := rediscluster.New(dir, 0)
	if err != nil {
		return nil, err
	}
	b := &benchCluster{cl: cl, shards: clusterShards()}
	if err := cl.Start(ctx); err != nil {
		return nil, err
	}
	b.rdb = cl.Client()
	masters, err := cl.Masters(ctx)
	if err != nil {
		b.stop()
		return nil, err
	}
	for _, m := range masters {
		pid, err := cl.Pid(m.Port)
		if err != nil {
			b.stop()
			return nil, err
		}
		b.redises = append(b.redises, pid)
	}
	settings := "redis_url {env.BENCH_REDIS_URL}\n\t\t\tredis_cluster"
	if b.shards > 1 {
		settings += fmt.Sprintf("\n\t\t\tredis_shards %d", b.shards)
	}
	tmpl := strings.Replace(gatewayCaddyfile, "redis_url {env.BENCH_REDIS_URL}", settings, 1)
	prefix := clusterPrefix(b.shards)
	if b.gw, err = startCaddy(ctx, cfg, cfg.caddyBin, "gateway-cluster", tmpl, map[string]string{"UPSTREAM": up.addr, "PREFIX": prefix}, "BENCH_REDIS_URL="+cl.URL); err != nil {
		b.stop()
		return nil, err
	}
	if err := b.gw.waitUpstreamHealthy(ctx); err != nil {
		b.stop()
		return nil, err
	}
	if b.key, err = fundedKeyAt(ctx, b.gw, b.rdb, balances.Layout{Prefix: prefix, Shards: b.shards}); err != nil {
		b.stop()
		return nil, err
	}
	return b, nil
}

// decisionsPerSecond runs workers goroutines calling the metering script
// (meter.Meter.Authorize, a funded key each, round-robin over keys) for d
// and returns decisions per second. No gateway: this is what Redis alone
// sustains, the ceiling of every gateway sharing it.
func decisionsPerSecond(ctx context.Context, rdb redis.UniversalClient, prefix string, shards, keys, workers int, d time.Duration) (float64, error) {
	m, err := meter.New(rdb, meter.Config{Prefix: prefix, Shards: shards})
	if err != nil {
		return 0, err
	}
	ip := netip.MustParseAddr("10.0.0.1")
	hashes := make([]string, keys)
	for i := range hashes {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "bench", IP: ip})
		if err != nil {
			return 0, fmt.Errorf("creating key %d: %w", i, err)
		}
		if _, _, err := balances.CreditAt(ctx, rdb, m.Layout(), k.ID, 1_000_000*money.Scale, "bench:"+k.ID); err != nil {
			return 0, err
		}
		sum := sha256.Sum256([]byte(k.Secret))
		hashes[i] = hex.EncodeToString(sum[:])
	}
	var n, failed atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; time.Now().Before(stop); i++ {
				dec, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: hashes[i%keys], Calls: 1, Method: "eth_blockNumber"})
				if err != nil || dec.Outcome != meter.Paid {
					failed.Add(1)
					continue
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		return 0, fmt.Errorf("%d of %d decisions failed or were refused: the figure would not be honest", f, f+n.Load())
	}
	return float64(n.Load()) / d.Seconds(), nil
}
