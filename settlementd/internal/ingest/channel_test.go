package ingest

import (
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// A batch-settlement channel's states (migration 0072): PostgreSQL keeps the
// newest seq per channel whatever order and however often the states are
// delivered, and every deposit transaction once.
func TestChannelStatesKeepTheNewest(t *testing.T) {
	e := newEnv(t)
	ms := time.Now().UnixMilli()
	const a = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const b = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	w := settletest.Wallet(7)
	st := func(ch string, seq int64, charged int64, tx string) *events.ChannelState {
		return &events.ChannelState{Channel: ch, Seq: seq, TimeMs: ms + seq, Wallet: w, Balance: 1000, Claimed: 100,
			Charged: money.Units(charged), Signed: money.Units(charged), Signature: "0xsig" + string(rune('0'+seq)), Config: `{"salt":"0x01"}`, DepositTx: tx}
	}
	evs := []events.Event{st(a, 1, 0, "0xd1"), st(a, 3, 300, ""), st(b, 1, 0, "0xd2"), st(a, 2, 200, ""), st(b, 2, 100, "")}
	// Twice (a retrying writer), in batches of two, so the older states of a
	// land in later transactions than the newest.
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	e.start(t, Config{Batch: 2})
	e.drained(t)
	for _, c := range []struct {
		ch      string
		seq     int64
		charged int64
		sig     string
	}{{a, 3, 300, "0xsig3"}, {b, 2, 100, "0xsig2"}} {
		if n := e.count(t, `SELECT count(*) FROM x402_channels WHERE channel_id = $1 AND seq = $2 AND charged = $3 AND signed = $3
			AND signature = $4 AND wallet = $5 AND balance = 1000 AND claimed = 100 AND config = '{"salt":"0x01"}' AND NOT closed`,
			c.ch, c.seq, c.charged, c.sig, w); n != 1 {
			t.Errorf("channel %s: not at seq %d, charged %d, %s", c.ch, c.seq, c.charged, c.sig)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM x402_channel_deposits WHERE (channel_id, tx_hash) IN (($1, '0xd1'), ($2, '0xd2'))`, a, b); n != 2 {
		t.Fatalf("%d deposit transactions, want 2", n)
	}
	if n := e.count(t, `SELECT count(*) FROM x402_channel_deposits`); n != 2 {
		t.Fatalf("%d deposit rows, want 2", n)
	}
	if n := e.count(t, `SELECT count(*) FROM dead_letters`); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
}
