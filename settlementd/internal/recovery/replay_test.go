package recovery

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A batch-settlement voucher drawn in the last moments before
// Redis restarts empty — booked in Redis, not yet ingested — is not lost.
// The gateway kept the draw's Debit and the channel's new state
// (meter.Retention) and appends them to the empty Redis; the rebuild waits
// until they are ingested, so it restores the channel at that voucher:
// charged total and signature (what the claim pays out) exact, the old
// voucher refused, the client's next voucher accepted.
func TestVoucherDrawnJustBeforeALossIsKept(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	l := balances.Layout{Prefix: prefix}
	ret := meter.NewRetention(1, 0, 0)
	m.SetRetention(ret)
	gw := meter.NewReplayer(rdb, l, ret, "gw-1", 0, nil)
	w := New(pool, rdb, prefix, zaptest.NewLogger(t))
	w.Grace = 0
	if err := w.Run(ctx); err != nil { // a fresh deployment: the marker
		t.Fatal(err)
	}
	if err := gw.Tick(ctx, 0); err != nil {
		t.Fatal(err)
	}

	const (
		ch     = "0x67fbb0303ffc45d512915ac4de5035f0707d477a85152c4c023b182f4cbc401c"
		wallet = "0x00000000000000000000000000000000a11e7002"
		cfg    = `{"payer":"0x00000000000000000000000000000000a11e7002","salt":"0x02"}`
	)
	p := money.BundleCallRevenue
	req := meter.Request{ChainID: 8453, IP: netip.MustParseAddr("192.0.2.8"), Calls: 1, Method: "eth_blockNumber"}
	sig := func(i int) string { return "0x5162" + string(rune('a'+i)) }
	draw := func(cum money.Units, s string) (meter.Decision, meter.ChannelState) {
		t.Helper()
		d, st, err := m.AuthorizeVoucher(ctx, req, meter.Voucher{ChannelID: ch, Wallet: wallet, Cumulative: cum, Signature: s})
		if err != nil {
			t.Fatal(err)
		}
		return d, st
	}
	if _, err := m.RecordDeposit(ctx, meter.ChannelDeposit{ChannelID: ch, Wallet: wallet, Config: cfg, TxHash: "0xe1", Balance: 10 * p}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if d, st := draw(money.Units(i)*p, sig(i)); d.Outcome != meter.Bundle {
			t.Fatalf("voucher %d: %v %q %+v", i, d.Outcome, d.Reason, st)
		}
	}
	ingesting(t, rdb, pool, l)() // vouchers 1–3 stored; ingest stops
	// Voucher 4: served, booked in Redis, never ingested before the loss.
	if d, _ := draw(4*p, sig(4)); d.Outcome != meter.Bundle {
		t.Fatalf("voucher 4: %v %q", d.Outcome, d.Reason)
	}
	if n := ret.Facts(0); n < 2 {
		t.Fatalf("the gateway keeps %d facts, want at least voucher 4's debit and channel state", n)
	}

	wipe(t, prefix)
	// settlementd notices; its rebuild waits for the replay of every gateway
	// alive: this one has beaten on the new Redis (within its 200 ms, before
	// settlementd's grace of a watch interval ends) but not replayed yet.
	rdb.ZAdd(ctx, l.Gateways(), redis.Z{Score: float64(time.Now().UnixMilli()), Member: "gw-1"})
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rdb.Exists(ctx, l.Generation()).Result(); ok != 0 {
		t.Fatal("rebuilt before the gateway replayed")
	}
	if err := gw.Tick(ctx, 0); err != nil { // the gateway appends what it keeps
		t.Fatal(err)
	}
	drain := ingesting(t, rdb, pool, l)
	settletest.Eventually(t, 30*time.Second, "the rebuild after the replay is ingested", func() (bool, error) {
		if err := w.Run(ctx); err != nil {
			return false, err
		}
		n, err := rdb.Exists(ctx, l.Generation()).Result()
		return n == 1, err
	})
	st, ok, err := m.Channel(ctx, ch)
	if err != nil || !ok || st.Charged != 4*p || st.Signed != 4*p || st.Signature != sig(4) || st.Balance != 10*p {
		t.Fatalf("channel after the loss: %+v %v %v, want voucher 4 (charged %d, its signature)", st, ok, err, 4*p)
	}
	var charged int64
	var signature string
	if err := pool.QueryRow(ctx, `SELECT charged, signature FROM x402_channels WHERE channel_id = $1`, ch).Scan(&charged, &signature); err != nil {
		t.Fatal(err)
	}
	if charged != int64(4*p) || signature != sig(4) {
		t.Fatalf("PostgreSQL's channel: charged %d signature %q, want voucher 4's", charged, signature)
	}
	if d, _ := draw(4*p, sig(4)); d.Reason != meter.ReasonCumulativeMismatch {
		t.Fatalf("voucher 4 again: %v %q, want refused", d.Outcome, d.Reason)
	}
	if d, st := draw(5*p, sig(5)); d.Outcome != meter.Bundle || st.Charged != 5*p || st.Signature != sig(5) {
		t.Fatalf("the next voucher: %v %q %+v", d.Outcome, d.Reason, st)
	}
	drain()
	var debits int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM debits WHERE payer = 'channel' AND account = $1`, wallet).Scan(&debits); err != nil {
		t.Fatal(err)
	}
	if debits != 5 {
		t.Fatalf("%d channel debits in PostgreSQL, want one per voucher drawn (5)", debits)
	}
}
