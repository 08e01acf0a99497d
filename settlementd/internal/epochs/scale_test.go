package epochs

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestCloseAtScale times the close of an epoch holding 1.2M revenue events
// (20,000 events/s for 60 s). Run with TOLLGATE_SCALE=1.
func TestCloseAtScale(t *testing.T) {
	if os.Getenv("TOLLGATE_SCALE") == "" {
		t.Skip("set TOLLGATE_SCALE=1")
	}
	_, pool := settletest.DB(t)
	ctx := context.Background()
	e := events.EpochOf(time.Now()) - 5
	if _, err := pool.Exec(ctx, `INSERT INTO revenue_events (id, ts, epoch_id, booked_epoch, chain_id, payer, account, asset, amount_units, calls, upstream, node_id)
		SELECT 'r' || g, now(), $1, $1, 137, 'credits', 'key_X', 'USDT', 30, 1, 'n', 'NODE-' || (g % 50)
		FROM generate_series(1, 1200000) g`, e); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE revenue_events`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at) VALUES ($1, 'open', now(), now())`, e); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO ingest_watermark (stream, low_ms) VALUES ('s', $1)`, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	c := &Closer{Pool: pool, Grace: time.Second, Stream: "s"}
	start := time.Now()
	ok, err := c.CloseNext(ctx)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	t.Logf("closed an epoch of 1.2M events in %v", time.Since(start))
}
