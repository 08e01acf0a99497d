package recovery

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A batch-settlement channel's state lives in Redis; its latest voucher's
// signature nowhere else. After several accepted vouchers, a claim and a
// top-up, Redis loses its data: until the rebuild a voucher is answered
// "recovering" (never "missing channel", which sends the client to a new
// deposit that would restart charging at the on-chain totalClaimed) and no
// deposit is recorded; the rebuild restores the channel exactly (wallet,
// balance, claimed, charged, latest voucher and signature, config, deposit
// transactions, a refund's close), so a replayed old voucher is refused, an
// old deposit is not applied twice and the next voucher is accepted at the
// right cumulative amount. The wallet's bundle comes back as it was: holding
// only a refunded voucher call, none of the channel draws counted as used.
func TestRedisLossRebuildsBatchSettlementChannels(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	l := balances.Layout{Prefix: prefix}
	drainIngest := ingesting(t, rdb, pool, l)
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil { // a fresh deployment: the marker
		t.Fatal(err)
	}

	const (
		ch     = "0x67fbb0303ffc45d512915ac4de5035f0707d477a85152c4c023b182f4cbc401b"
		closed = "0x1111111111111111111111111111111111111111111111111111111111111111"
		wallet = "0x00000000000000000000000000000000a11e7001"
		cfg    = `{"payer":"0x00000000000000000000000000000000a11e7001","salt":"0x01"}`
	)
	p := money.BundleCallRevenue
	req := meter.Request{ChainID: 8453, IP: netip.MustParseAddr("192.0.2.7"), Calls: 1, Method: "eth_blockNumber"}
	sig := func(i int) string { return "0x5161" + string(rune('a'+i)) }
	draw := func(id string, cum money.Units, s string) (meter.Decision, meter.ChannelState) {
		t.Helper()
		d, st, err := m.AuthorizeVoucher(ctx, req, meter.Voucher{ChannelID: id, Wallet: wallet, Cumulative: cum, Signature: s})
		if err != nil {
			t.Fatal(err)
		}
		return d, st
	}
	deposit := func(id, tx string, bal, claimed money.Units) (meter.ChannelState, error) {
		return m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: id, Wallet: wallet, Config: cfg, TxHash: tx, Balance: bal, Claimed: claimed})
	}
	if _, err := deposit(ch, "0xd1", 5*p, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if d, st := draw(ch, money.Units(i)*p, sig(i)); d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %q %+v", i, d.Outcome, d.Reason, st)
		}
	}
	if err := m.MarkClaimed(ctx, ch, 2*p); err != nil { // the claim job claimed the second voucher
		t.Fatal(err)
	}
	if _, err := deposit(ch, "0xd2", 9*p, 2*p); err != nil { // a top-up
		t.Fatal(err)
	}
	for i := 4; i <= 5; i++ {
		d, st := draw(ch, money.Units(i)*p, sig(i))
		if d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %q %+v", i, d.Outcome, d.Reason, st)
		}
		if i == 5 {
			// The upstream failed the call: it is given back as a bundle
			// call of the wallet (the voucher cannot be signed back down).
			if err := m.Refund(ctx, &d, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A second channel a cooperative refund closed.
	if _, err := deposit(closed, "0xd3", 4*p, 0); err != nil {
		t.Fatal(err)
	}
	if d, _ := draw(closed, p, sig(9)); d.Outcome != meter.Bundle {
		t.Fatalf("voucher on the second channel: %v %q", d.Outcome, d.Reason)
	}
	if _, reason, err := m.CloseChannel(ctx, closed, wallet, p); err != nil || reason != "" {
		t.Fatalf("close: %q %v", reason, err)
	}
	if err := m.RefundDone(ctx, closed, p, p, false); err != nil {
		t.Fatal(err)
	}

	hashes := func() map[string]any {
		out := map[string]any{}
		for _, id := range []string{ch, closed} {
			h := rdb.HGetAll(ctx, l.Channel(id)).Val()
			delete(h, "ts") // the last draw's time: a field nothing reads
			out[id] = h
			deps := rdb.SMembers(ctx, l.ChannelDeposits(id)).Val()
			slices.Sort(deps)
			out[id+":deposits"] = deps
		}
		// The wallet's bundle: only the refunded call. Its six channel
		// draws were never the bundle's, so the rebuild must not count
		// them as used bundle calls.
		out["bundle"] = rdb.HGetAll(ctx, l.Bundle(wallet)).Val()
		ids, err := m.Channels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		out["channels"] = ids
		return out
	}
	before, _, _ := m.Channel(ctx, ch)
	if before.Charged != 5*p || before.Signed != 5*p || before.Signature != sig(5) || before.Claimed != 2*p || before.Balance != 9*p {
		t.Fatalf("channel before the loss: %+v", before)
	}
	hashesBefore := hashes()
	if left, err := m.BundleLeft(ctx, wallet); err != nil || left != 1 {
		t.Fatalf("bundle calls before the loss: %d %v, want the refunded one", left, err)
	}
	drainIngest()

	wipe(t, prefix)
	// Until the rebuild: "recovering", and nothing recorded.
	if d, _ := draw(ch, 6*p, sig(6)); d.Outcome != meter.Recovering {
		t.Fatalf("voucher before the rebuild: %v %q, want recovering", d.Outcome, d.Reason)
	}
	if _, err := deposit(ch, "0xd4", 20*p, 0); err == nil {
		t.Fatal("a deposit was recorded before the rebuild")
	}
	if n := rdb.Exists(ctx, l.Channel(ch)).Val(); n != 0 {
		t.Fatal("the channel exists before the rebuild")
	}

	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	after, ok, err := m.Channel(ctx, ch)
	if err != nil || !ok || after != before {
		t.Fatalf("channel after the rebuild: %+v %v %v, want %+v", after, ok, err, before)
	}
	if got := hashes(); !equalJSON(t, got, hashesBefore) {
		t.Fatalf("Redis after the rebuild:\n%v\nbefore the loss:\n%v", got, hashesBefore)
	}
	// Replayed old vouchers are refused; so is a voucher on the closed channel.
	for _, i := range []int{1, 5} {
		if d, st := draw(ch, money.Units(i)*p, sig(i)); d.Reason != meter.ReasonCumulativeMismatch || st.Charged != 5*p {
			t.Fatalf("replayed voucher %d: %v %q %+v", i, d.Outcome, d.Reason, st)
		}
	}
	if d, _ := draw(closed, 2*p, sig(8)); d.Reason != meter.ReasonChannelRefunded {
		t.Fatalf("voucher on the refunded channel: %v %q", d.Outcome, d.Reason)
	}
	// An old deposit retried is not applied again.
	if st, err := deposit(ch, "0xd1", 50*p, 0); err != nil || st.Balance != 9*p || st.Charged != 5*p {
		t.Fatalf("old deposit retried: %+v %v", st, err)
	}
	// The next voucher is accepted at the right cumulative amount.
	if d, st := draw(ch, 6*p, sig(6)); d.Outcome != meter.Bundle || st.Charged != 6*p || st.Signature != sig(6) {
		t.Fatalf("next voucher: %v %q %+v", d.Outcome, d.Reason, st)
	}
}

// ingesting runs an ingester on l's stream. The function it returns waits
// until everything the stream holds so far is stored, then stops it.
func ingesting(t *testing.T, rdb *redis.Client, pool *pgxpool.Pool, l balances.Layout) (drain func()) {
	t.Helper()
	ctx := context.Background()
	in, err := ingest.New(rdb, pool, ingest.Config{Stream: l.Stream(0), Consumer: "t", Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ictx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { in.Run(ictx) })
	t.Cleanup(func() { stop(); running.Wait() })
	return func() {
		t.Helper()
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		settletest.Eventually(t, 30*time.Second, "stream ingested", func() (bool, error) {
			var low int64
			err := pool.QueryRow(ctx, `SELECT low_ms FROM ingest_watermark WHERE stream = $1`, l.Stream(0)).Scan(&low)
			return err == nil && low > now.UnixMilli(), nil
		})
		stop()
		running.Wait()
	}
}

// wipe deletes every key under prefix, as a Redis restarted empty has none.
func wipe(t *testing.T, prefix string) {
	t.Helper()
	ctx := context.Background()
	rdb := testenv.Redis(t)
	for _, k := range rdb.Keys(ctx, prefix+"*").Val() {
		rdb.Del(ctx, k)
	}
	if n := len(rdb.Keys(ctx, prefix+"*").Val()); n != 0 {
		t.Fatalf("%d keys left after the wipe", n)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(ja) == string(jb)
}

// A channel drawn from before the gateway recorded channel states (a hash
// with no seq, and no channel_state event ever written) has no PostgreSQL
// row. The watcher records it once it sees the marker, so a Redis loss
// afterwards rebuilds it with its latest voucher and deposit transactions.
func TestChannelsPostgreSQLLacksAreRecorded(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	drainIngest := ingesting(t, rdb, pool, l)
	testenv.MarkRebuilt(t, rdb, prefix)

	const (
		old  = "0x2222222222222222222222222222222222222222222222222222222222222222"
		seen = "0x3333333333333333333333333333333333333333333333333333333333333333"
	)
	p := money.BundleCallRevenue
	// As a gateway from before channel states left it: the hash, its
	// deposits and the channel set, nothing in the stream.
	state := map[string]any{"w": "0x00000000000000000000000000000000a11e7002", "bal": int64(9 * p), "claimed": int64(2 * p),
		"charged": int64(4 * p), "signed": int64(4 * p), "sig": "0x5164", "cfg": `{"salt":"0x02"}`}
	if err := rdb.HSet(ctx, l.Channel(old), state).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.SAdd(ctx, l.ChannelDeposits(old), "0xd5", "0xd6")
	rdb.SAdd(ctx, l.Channels(), old)
	// A channel PostgreSQL already holds is not recorded again.
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: seen, Wallet: "0x00000000000000000000000000000000a11e7003",
		Config: "{}", TxHash: "0xd7", Balance: 3 * p}); err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 30*time.Second, "the deposit's state ingested", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM x402_channels WHERE channel_id = $1`, seen) == 1, nil
	})
	streamed := rdb.XLen(ctx, l.Stream(0)).Val()

	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rdb.XLen(ctx, l.Stream(0)).Val() - streamed; n != 2 {
		t.Fatalf("%d channel states appended, want 2 (one per deposit of the unrecorded channel)", n)
	}
	settletest.Eventually(t, 30*time.Second, "the old channel's state ingested", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM x402_channel_deposits WHERE channel_id = $1`, old) == 2, nil
	})
	var charged, signed int64
	var sig string
	if err := pool.QueryRow(ctx, `SELECT charged, signed, signature FROM x402_channels WHERE channel_id = $1`, old).Scan(&charged, &signed, &sig); err != nil ||
		charged != int64(4*p) || signed != int64(4*p) || sig != "0x5164" {
		t.Fatalf("recorded state: %d %d %q %v", charged, signed, sig, err)
	}
	// Once per watcher: the next check appends nothing.
	streamed = rdb.XLen(ctx, l.Stream(0)).Val()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rdb.XLen(ctx, l.Stream(0)).Val(); n != streamed {
		t.Fatalf("a second check appended %d entries", n-streamed)
	}

	// A loss now rebuilds the old channel as it was.
	before, _, _ := m.Channel(ctx, old)
	drainIngest()
	wipe(t, prefix)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	after, ok, err := m.Channel(ctx, old)
	if err != nil || !ok || after != before {
		t.Fatalf("old channel after the rebuild: %+v %v %v, want %+v", after, ok, err, before)
	}
	deps := rdb.SMembers(ctx, l.ChannelDeposits(old)).Val()
	slices.Sort(deps)
	if !slices.Equal(deps, []string{"0xd5", "0xd6"}) {
		t.Fatalf("deposits after the rebuild %v", deps)
	}
}
