package meter_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/rediscluster"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// noResend is a cluster client that never re-sends, as the gateway's.
func noResend(t *testing.T, c *rediscluster.Cluster, readTimeout time.Duration) *redis.ClusterClient {
	t.Helper()
	o, err := redis.ParseClusterURL(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	o.MaxRetries, o.MaxRedirects, o.ReadTimeout, o.ClusterStateReloadInterval = -1, -1, readTimeout, time.Second
	cc := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// The cluster auto-pipeline on a real cluster of three masters (one
// cluster for both checks: each takes seconds to start).
func TestClusterAutoPipeline(t *testing.T) {
	c := rediscluster.Start(t)
	t.Run("BatchesPerMaster", func(t *testing.T) { batchesPerMaster(t, c) })
	t.Run("NeverSendsTwice", func(t *testing.T) { neverSendsTwice(t, c) })
	t.Run("TwoShardsOneRoundTrip", func(t *testing.T) { twoShardsOneRoundTrip(t, c) })
	t.Run("EventsRidePerMaster", func(t *testing.T) { eventsRidePerMaster(t, c) })
}

// Revenue events ride the masters' auto-pipelines: each event's XADD goes
// to the master that holds its shard's stream (another would answer MOVED
// and the writer would retry) and lands there once. The writer's own
// client is dead here, so an event that was not carried could not land.
func eventsRidePerMaster(t *testing.T, c *rediscluster.Cluster) {
	ctx := context.Background()
	ap, err := meter.NewClusterAutoPipeline(noResend(t, c, time.Second), meter.AutoPipelineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l := balances.Layout{Prefix: "evc:", Shards: 6}
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = dead.Close() })
	w := meter.NewEventWriter(dead, meter.WriterConfig{Stream: l.Stream(0), Layout: l, Carrier: ap, MaxPack: 1})
	b0, _ := ap.Stats()
	const n = 60
	evs := make([]*events.Revenue, n)
	for i := range evs {
		evs[i] = revenue(i)
		if !w.Enqueue(evs[i]) {
			t.Fatalf("event %d dropped", i)
		}
	}
	waitWritten(t, w, n)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if _, dropped, retries, pending := w.Stats(); dropped != 0 || retries != 0 || pending != 0 {
		t.Fatalf("dropped %d retries %d pending %d", dropped, retries, pending)
	}
	if b1, _ := ap.Stats(); b1 == b0 {
		t.Fatal("the events went in no auto-pipeline batch")
	}
	found := map[string]int{}
	for _, s := range l.Streams() {
		for _, e := range ap.XRange(ctx, s, "-", "+").Val() {
			ev, err := events.Decode(e.Values)
			if err != nil {
				t.Fatal(err)
			}
			if l.Stream(l.ShardOfPayer(ev.EventID())) != s {
				t.Fatalf("event %s in %s, want its shard's stream", ev.EventID(), s)
			}
			found[ev.EventID()]++
		}
	}
	for _, e := range evs {
		if found[e.ID] != 1 {
			t.Fatalf("event %s landed %d times", e.ID, found[e.ID])
		}
	}
}

// A key without funds whose account and address are on different masters
// falls back to the free tier. Once the gateway knows the key is short,
// each call sends the payer's script and the free tier's together, and both
// go through their masters' auto-pipelines (not a pipeline of their own):
// 2 script calls for the first call (one round trip, then a second once it
// learns), 2 for every call after; each booked once.
func twoShardsOneRoundTrip(t *testing.T, c *rediscluster.Cluster) {
	ctx := context.Background()
	ap, err := meter.NewClusterAutoPipeline(noResend(t, c, time.Second), meter.AutoPipelineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l := balances.Layout{Prefix: "two:", Shards: 6}
	testenv.MarkRebuiltLayout(t, ap, l)
	m, err := meter.New(ap, meter.Config{Prefix: l.Prefix, Shards: l.Shards, FreeDailyLimit: 100, FreeSubnetLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "unfunded"})
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("192.0.2.1")
	for i := 1; ; i++ {
		_, subnet := meter.Subjects(ip)
		if l.ShardOfIP(subnet) != l.ShardOfPayer(k.ID) {
			break
		}
		ip = netip.AddrFrom4([4]byte{192, 0, byte(2 + i), 1})
	}
	_, c0 := ap.Stats()
	for i := 1; i <= 3; i++ {
		d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: ip, KeyHash: meter.HashKey(k.Secret), Calls: 1, Method: "eth_blockNumber"})
		if err != nil || d.Outcome != meter.Free || d.FreeLeft != int64(100-i) {
			t.Fatalf("call %d: %v, %d free calls left, %v", i, d.Outcome, d.FreeLeft, err)
		}
	}
	if _, c1 := ap.Stats(); c1-c0 != 6 {
		t.Fatalf("%d script calls through the auto-pipelines, want 6", c1-c0)
	}
}

// On a Redis Cluster, concurrent metering calls share round trips per
// master: 400 paid decisions of payers spread over the three masters are
// each booked once and exactly, in fewer batches than calls, through one
// auto-pipeline per master. A client that could re-send is refused.
func batchesPerMaster(t *testing.T, c *rediscluster.Cluster) {
	ctx := context.Background()
	if _, err := meter.NewClusterAutoPipeline(c.Client(), meter.AutoPipelineConfig{}); err == nil {
		t.Fatal("a cluster client that re-sends was accepted")
	}
	ap, err := meter.NewClusterAutoPipeline(noResend(t, c, time.Second), meter.AutoPipelineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l := balances.Layout{Prefix: "apc:", Shards: 6}
	testenv.MarkRebuiltLayout(t, ap, l)
	m, err := meter.New(ap, meter.Config{Prefix: l.Prefix, Shards: l.Shards})
	if err != nil {
		t.Fatal(err)
	}
	const payers, each = 40, 10
	hashes, ids := make([]string, payers), make([]string, payers)
	for i := range payers {
		k, err := m.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyAPI, Label: "cluster", IP: netip.AddrFrom4([4]byte{198, 51, 100, byte(i)})})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := balances.CreditAt(ctx, ap, l, k.ID, 1000*money.PricePerCall, "0xc:"+k.ID); err != nil {
			t.Fatal(err)
		}
		hashes[i], ids[i] = meter.HashKey(k.Secret), k.ID
	}
	b0, c0 := ap.Stats()
	var wg sync.WaitGroup
	errs := make(chan error, payers*each)
	for i := range payers * each {
		wg.Go(func() {
			// Each payer's calls come from its own address: payer and
			// address may be on different masters.
			d, err := m.Authorize(ctx, meter.Request{ChainID: 137, IP: netip.AddrFrom4([4]byte{203, 0, 113, byte(i % payers)}),
				KeyHash: hashes[i%payers], Calls: 1, Method: "eth_blockNumber"})
			if err != nil || d.Outcome != meter.Paid {
				errs <- fmt.Errorf("call %d: %v %v", i, d.Outcome, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, id := range ids {
		bal, err := ap.HGet(ctx, l.Account(id), balances.FieldBal).Int64()
		if err != nil || money.Units(bal) != (1000-each)*money.PricePerCall {
			t.Fatalf("payer %d: balance %d %v, want %d", i, bal, err, (1000-each)*money.PricePerCall)
		}
	}
	b1, c1 := ap.Stats()
	batches, calls := b1-b0, c1-c0
	if calls < payers*each || batches >= calls {
		t.Fatalf("%d batches for %d calls: nothing shared a round trip", batches, calls)
	}
	t.Logf("%d script calls in %d batches", calls, batches)
	var debits int64
	for _, s := range l.Streams() {
		for _, e := range ap.XRange(ctx, s, "-", "+").Val() {
			if e.Values["t"] == events.TypeDebit {
				debits++
			}
		}
	}
	if debits != payers*each {
		t.Fatalf("%d debits in the streams, want %d", debits, payers*each)
	}
}

// A call whose answer is lost may have run: through the cluster
// auto-pipeline it is answered with the error and never sent again.
func neverSendsTwice(t *testing.T, c *rediscluster.Cluster) {
	ctx := context.Background()
	// A short read timeout keeps the busy script inside the cluster's node
	// timeout (1 s: a master silent for longer is failed over).
	ap, err := meter.NewClusterAutoPipeline(noResend(t, c, 150*time.Millisecond), meter.AutoPipelineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	slow := redis.NewScript(`
redis.call('INCR', KEYS[1])
local t = redis.call('TIME')
local start = t[1] * 1000 + math.floor(t[2] / 1000)
repeat t = redis.call('TIME') until t[1] * 1000 + math.floor(t[2] / 1000) - start >= tonumber(ARGV[1])
return 1`)
	if err := slow.Run(ctx, ap, []string{"{once}:runs"}, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := slow.Run(ctx, ap, []string{"{once}:runs"}, 250).Err(); err == nil {
		t.Fatal("the late answer was read")
	}
	n, err := ap.Get(ctx, "{once}:runs").Int()
	for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
		n, err = ap.Get(ctx, "{once}:runs").Int() // times out while the script still runs
	}
	if err != nil || n != 2 {
		t.Fatalf("the script ran %d times (%v), want 2 (once, then once more)", n, err)
	}
}
