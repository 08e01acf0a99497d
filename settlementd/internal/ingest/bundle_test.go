package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// x402 accounting: every grant is one bundle_grants row with its
// bundle key and one ledger entry however often it is delivered, and every
// wallet's ledger holds exactly its grants, bundle debits and refunds; a
// draw from one of its batch-settlement channels is a debit without a ledger
// row.
func TestBundleGrantsAndDrawsAreBookedOncePerWallet(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	ms := now.UnixMilli()

	type grant struct{ id, wallet, key string }
	wallets := []string{settletest.Wallet(100), settletest.Wallet(101), settletest.Wallet(102)}
	grants := []grant{
		{fmt.Sprintf("0x%064x", 1), wallets[0], accounts.NewID()},
		{fmt.Sprintf("0x%064x", 2), wallets[0], accounts.NewID()},
		{fmt.Sprintf("0x%064x", 3), wallets[1], accounts.NewID()},
		{fmt.Sprintf("0x%064x", 4), wallets[2], ""}, // a grant that made no key
	}
	var grantEvs []events.Event
	for i, g := range grants {
		grantEvs = append(grantEvs, &events.BundleGranted{ID: g.id, Wallet: g.wallet, Calls: money.BundleCalls, Amount: money.BundlePrice,
			Network: "eip155:8453", KeyID: g.key, TimeMs: ms + int64(i)})
		if g.key != "" {
			grantEvs = append(grantEvs, &events.KeyCreated{KeyID: g.key, KeyHash: strings.Repeat(fmt.Sprintf("%02x", i+1), 32), Kind: events.KeyBundle,
				Label: "x402 bundle", Tier: "free", Wallet: g.wallet, TimeMs: ms + int64(i)})
		}
	}
	evs := slices.Clone(grantEvs)
	granted, drawn := map[string]int64{}, map[string]int64{}
	for _, g := range grants {
		granted[g.wallet] += money.BundleCalls
	}
	for i := range 60 {
		w, calls := wallets[i%len(wallets)], 1+i%3
		id := fmt.Sprintf("bundle-req-%d", i)
		units := money.BundleCallRevenue * money.Units(calls)
		evs = append(evs, &events.Debit{ID: id, TimeMs: ms + 10 + int64(i), ChainID: 8453, Payer: events.PayerBundle, Account: w,
			Asset: events.AssetUSDC, Amount: units, Calls: calls})
		drawn[w] += int64(calls)
		if i%5 == 0 { // failed upstream: the draw is given back
			evs = append(evs, &events.Refund{ID: id, TimeMs: ms + 10 + int64(i), Payer: events.PayerBundle, Account: w, Amount: units, Calls: calls})
			drawn[w] -= int64(calls)
		}
	}
	// Draws from batch-settlement channels of the same wallets: debits of
	// their own payer, which never touch the bundle; a failed one is given
	// back as a bundle call (meter.Refund), which does.
	channelDraws := 0
	for i := range 12 {
		w := wallets[i%2]
		id := fmt.Sprintf("channel-req-%d", i)
		units := money.BundleCallRevenue
		evs = append(evs, &events.Debit{ID: id, TimeMs: ms + 100 + int64(i), ChainID: 8453, Payer: events.PayerChannel, Account: w,
			Asset: events.AssetUSDC, Amount: units, Calls: 1})
		channelDraws++
		if i%4 == 0 {
			evs = append(evs, &events.Refund{ID: id, TimeMs: ms + 100 + int64(i), Payer: events.PayerBundle, Account: w, Amount: units, Calls: 1})
			drawn[w]--
		}
	}
	// Other traffic in the same batches: credits, free tier, and the
	// generator's own bundle calls (wallets 0..4, no grants).
	traffic := settletest.Traffic(11, 300, now.Add(-time.Minute), now)
	for _, ev := range traffic {
		switch ev := ev.(type) {
		case *events.Debit:
			if ev.Payer == events.PayerBundle {
				drawn[ev.Account] += int64(ev.Calls)
			}
		case *events.Refund:
			if ev.Payer == events.PayerBundle {
				drawn[ev.Account] -= int64(ev.Calls)
			}
		}
	}
	evs = append(evs, traffic...)

	// Every entry twice (a retrying writer), in small batches so copies
	// land in different transactions.
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	// Bundle records the gateway can never have written: parked, not booked.
	bad := []map[string]any{
		{"t": events.TypeBundleGrant, "v": events.Version, "d": `{"id":"0xbad1","wallet":"0x70997970C51812dc3a010c7d01b50e0d17dc79c8",` +
			`"calls":1000,"amount_units":"100000","network":"eip155:8453","ts":` + fmt.Sprint(ms) + `}`}, // mixed case
		{"t": events.TypeDebit, "v": events.Version, "d": `{"id":"bad-req","ts":` + fmt.Sprint(ms) +
			`,"chain_id":8453,"payer":"bundle","account":"key_X","asset":"USDC","amount_units":"100","calls":1}`}, // not a wallet
		{"t": events.TypeDebit, "v": events.Version, "d": `{"id":"bad-chan","ts":` + fmt.Sprint(ms) +
			`,"chain_id":8453,"payer":"channel","account":"key_X","asset":"USDC","amount_units":"100","calls":1}`}, // not a wallet
		{"t": events.TypeKeyCreated, "v": events.Version, "d": `{"key_id":"key_B","key_hash":"` + strings.Repeat("ef", 32) +
			`","kind":"bundle","label":"x","tier":"free","ts":` + fmt.Sprint(ms) + `}`}, // a bundle key without its wallet
	}
	for _, v := range bad {
		if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	e.start(t, Config{Batch: 7})
	e.drained(t)
	// The grants once more after they were committed (a stream replayed).
	settletest.XAdd(t, e.rdb, e.stream, grantEvs...)
	e.drained(t)

	// bundle_grants: exactly the grants, each with its key.
	rows, err := e.pool.Query(ctx, `SELECT id, wallet, calls, amount_units, network, COALESCE(key_id, '') FROM bundle_grants ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, wallet, network, key string
		var calls, amount int64
		if err := rows.Scan(&id, &wallet, &calls, &amount, &network, &key); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %d %d %s %q", id, wallet, calls, amount, network, key))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, g := range grants {
		want = append(want, fmt.Sprintf("%s %s %d %d %s %q", g.id, g.wallet, money.BundleCalls, money.BundlePrice, "eip155:8453", g.key))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bundle_grants\n got %q\nwant %q", got, want)
	}
	if n := e.count(t, `SELECT count(*) FROM account_ledger WHERE kind = 'bundle_grant'`); n != int64(len(grants)) {
		t.Errorf("bundle_grant ledger rows %d, want %d", n, len(grants))
	}
	// The bundle keys: kind bundle, bound to the grant's wallet.
	for _, g := range grants {
		if g.key == "" {
			continue
		}
		if n := e.count(t, `SELECT count(*) FROM api_keys WHERE key_id = $1 AND kind = 'bundle' AND wallet = $2`, g.key, g.wallet); n != 1 {
			t.Errorf("bundle key %s of %s: %d rows", g.key, g.wallet, n)
		}
	}
	// Per wallet, exactly: calls = granted − drawn (net of refunds), units
	// at 100,000 per grant and 100 per call; nothing on the credit side.
	if len(drawn) < len(wallets)+2 {
		t.Fatalf("the generator drew from %d wallets; the test means more", len(drawn))
	}
	for w, d := range drawn {
		g := granted[w]
		if n := e.count(t, `SELECT COALESCE(sum(calls), 0) FROM account_ledger WHERE account = $1`, w); n != g-d {
			t.Errorf("%s: ledger calls %d, want %d − %d", w, n, g, d)
		}
		wantUnits := g/money.BundleCalls*int64(money.BundlePrice) - d*int64(money.BundleCallRevenue)
		if n := e.count(t, `SELECT COALESCE(sum(units), 0) FROM account_ledger WHERE account = $1`, w); n != wantUnits {
			t.Errorf("%s: ledger units %d, want %d", w, n, wantUnits)
		}
		if n := e.count(t, `SELECT bundle_calls FROM account_balances WHERE account = $1`, w); n != g-d {
			t.Errorf("%s: bundle_calls %d, want %d", w, n, g-d)
		}
		if n := e.count(t, `SELECT credit_units + spent_units FROM account_balances WHERE account = $1`, w); n != 0 {
			t.Errorf("%s: credit-side units %d on a bundle wallet", w, n)
		}
		if n := e.count(t, `SELECT count(*) FROM account_ledger WHERE account = $1 AND kind NOT LIKE 'bundle\_%'`, w); n != 0 {
			t.Errorf("%s: %d non-bundle ledger rows", w, n)
		}
	}
	// The channel draws are stored once each, as debits with no ledger row.
	if n := e.count(t, `SELECT count(*) FROM debits WHERE payer = 'channel'`); n != int64(channelDraws) {
		t.Errorf("channel debits %d, want %d", n, channelDraws)
	}
	if n := e.count(t, `SELECT count(*) FROM account_ledger WHERE ref LIKE 'channel-req-%' AND kind <> 'bundle_refund'`); n != 0 {
		t.Errorf("%d ledger rows of channel draws", n)
	}
	if n := e.count(t, `SELECT count(*) FROM account_ledger WHERE kind LIKE 'bundle\_%' AND account NOT LIKE '0x%'`); n != 0 {
		t.Errorf("%d bundle ledger rows on a non-wallet account", n)
	}
	if n := e.count(t, `SELECT count(*) FROM dead_letters WHERE reason LIKE '%not a lower-case 0x wallet%'`); n != int64(len(bad)) {
		t.Errorf("parked bundle records %d, want %d", n, len(bad))
	}
	if n := e.count(t, `SELECT count(*) FROM dead_letters`); n != int64(len(bad)) {
		t.Errorf("dead letters %d, want %d", n, len(bad))
	}
	if n := e.count(t, `SELECT count(*) FROM api_keys WHERE key_id = 'key_B'`); n != 0 {
		t.Errorf("a bundle key without a wallet was stored")
	}
}
