package ingest

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

type env struct {
	rdb    *redis.Client
	pool   *pgxpool.Pool
	stream string
}

func newEnv(t testing.TB) *env {
	_, pool := settletest.DB(t)
	return &env{rdb: testenv.Redis(t), pool: pool, stream: testenv.KeyPrefix(t) + "events"}
}

// start runs an ingester until the test ends.
func (e *env) start(t *testing.T, cfg Config) *Ingester {
	t.Helper()
	cfg.Stream = e.stream
	if cfg.Consumer == "" {
		cfg.Consumer = "test"
	}
	if cfg.Block == 0 {
		cfg.Block = 100 * time.Millisecond
	}
	in, err := New(e.rdb, e.pool, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return in
}

// grouped is an ingester on the env's stream that is not running: its
// consumer group exists, and a test drives its workers by hand (a consumer
// that reads and then dies, one that is pruned).
func (e *env) grouped(t *testing.T, cfg Config) *Ingester {
	t.Helper()
	cfg.Stream = e.stream
	in, err := New(e.rdb, e.pool, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.ensureGroup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return in
}

// drained waits until every stream entry is committed and acknowledged.
func (e *env) drained(t *testing.T) {
	t.Helper()
	settletest.Eventually(t, 30*time.Second, "stream drained", func() (bool, error) {
		w, err := GroupWatermark(context.Background(), e.rdb, e.stream, "settlementd")
		return err == nil && w.Drained(), err
	})
}

func (e *env) count(t *testing.T, sql string, args ...any) int64 {
	return settletest.Count(t, e.pool, sql, args...)
}

func TestIngestStoresEveryEventOnce(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	evs := settletest.Traffic(1, 500, now.Add(-time.Minute), now)
	hash := strings.Repeat("ab", 32)
	evs = append(evs,
		&events.KeyCreated{KeyID: "key_A", KeyHash: hash, Kind: events.KeyAPI, Label: "a", Tier: "free", Email: "a@x", EmailConsent: true, TimeMs: now.UnixMilli()},
		&events.BundleGranted{ID: "0xtx1", Wallet: settletest.Wallet(1), Calls: 1000, Amount: 100_000, Network: "eip155:8453", TimeMs: now.UnixMilli()},
	)
	// Every event twice: XADDed twice by a retrying writer.
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	in := e.start(t, Config{Batch: 128})
	e.drained(t)
	// The second copies reach batches whose COPY meets stored rows: those
	// batches went through the ON CONFLICT statements (copy.go).
	reg := prometheus.NewRegistry()
	reg.MustRegister(in.m.copyConflicts)
	if mfs, err := reg.Gather(); err != nil || len(mfs) != 1 || mfs[0].GetMetric()[0].GetCounter().GetValue() == 0 {
		t.Errorf("no batch fell back from COPY to ON CONFLICT (%v)", err)
	}

	var nRev, nDeb, nRef int64
	var sumRev int64
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *events.Revenue:
			nRev++
			sumRev += int64(ev.Amount)
		case *events.Debit:
			nDeb++
		case *events.Refund:
			nRef++
		}
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != nRev {
		t.Errorf("revenue rows %d, want %d", got, nRev)
	}
	if got := e.count(t, `SELECT COALESCE(sum(amount_units), 0) FROM revenue_events`); got != sumRev {
		t.Errorf("revenue units %d, want %d", got, sumRev)
	}
	if got := e.count(t, `SELECT count(*) FROM debits`); got != nDeb {
		t.Errorf("debit rows %d, want %d", got, nDeb)
	}
	if got := e.count(t, `SELECT count(*) FROM refunds`); got != nRef {
		t.Errorf("refund rows %d, want %d", got, nRef)
	}
	// Ledger: one row per paid debit / refund and the grant, never doubled.
	want := e.count(t, `SELECT count(*) FROM debits WHERE payer <> 'free'`) + e.count(t, `SELECT count(*) FROM refunds WHERE payer <> 'free'`) + 1
	if got := e.count(t, `SELECT count(*) FROM account_ledger`); got != want {
		t.Errorf("ledger rows %d, want %d", got, want)
	}
	// A credits account's balance is minus (debits − refunds).
	if got, want := e.count(t, `SELECT COALESCE(sum(credit_units), 0) FROM account_balances WHERE account LIKE 'key\_%'`),
		-e.count(t, `SELECT COALESCE(sum(amount_units), 0) FROM debits WHERE payer = 'credits'`)+
			e.count(t, `SELECT COALESCE(sum(amount_units), 0) FROM refunds WHERE payer = 'credits'`); got != want {
		t.Errorf("credit balances sum %d, want %d", got, want)
	}
	if got := e.count(t, `SELECT bundle_calls FROM account_balances WHERE account = $1`, settletest.Wallet(1)); got > 1000 {
		t.Errorf("bundle calls %d above the grant", got)
	}
	if got := e.count(t, `SELECT count(*) FROM api_keys WHERE key_hash = $1 AND email_consent AND revoked_at IS NULL`, hash); got != 1 {
		t.Errorf("api key rows %d", got)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != 0 {
		t.Errorf("dead letters %d", got)
	}
	// The watermark has caught up with the clock (nothing left to ingest).
	if low := e.count(t, `SELECT low_ms FROM ingest_watermark WHERE stream = $1`, e.stream); low < now.UnixMilli() {
		t.Errorf("watermark %d behind %d", low, now.UnixMilli())
	}
}

// A consumer that crashed (read, maybe committed, never acknowledged) leaves
// entries pending; another consumer takes them over with XAUTOCLAIM and each
// event is still stored exactly once.
func TestRedeliveryAfterCrashIsStoredOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(2, 300, now.Add(-time.Minute), now)
	settletest.XAdd(t, e.rdb, e.stream, evs...)

	// Consumer "dead-1" reads the first half and commits it, but dies before
	// XACK; "dead-2" reads the rest and dies before even committing.
	crashed := e.grouped(t, Config{Consumer: "dead"})
	half := len(evs) / 2
	w1 := &worker{in: crashed, name: "dead-1"}
	crashed.cfg.Batch = half
	first, err := w1.read(ctx, ">")
	if err != nil || len(first) != half {
		t.Fatalf("read %d, %v", len(first), err)
	}
	if err := crashed.commit(ctx, newBatch(first), "dead-1"); err != nil {
		t.Fatal(err)
	}
	committed := e.count(t, `SELECT count(*) FROM revenue_events`)
	w2 := &worker{in: crashed, name: "dead-2"}
	crashed.cfg.Batch = len(evs)
	if rest, err := w2.read(ctx, ">"); err != nil || len(rest) != len(evs)-half {
		t.Fatalf("read %d, %v", len(rest), err)
	}
	if p := e.rdb.XPending(ctx, e.stream, "settlementd").Val(); p.Count != int64(len(evs)) {
		t.Fatalf("pending %d, want %d", p.Count, len(evs))
	}
	// Nothing else may advance the watermark past the pending entries.
	if w, err := GroupWatermark(ctx, e.rdb, e.stream, "settlementd"); err != nil || w.Drained() || w.LowMs > idMs(first[0].ID) {
		t.Fatalf("watermark %+v %v while entries are pending", w, err)
	}

	e.start(t, Config{Consumer: "survivor", ClaimMinIdle: 50 * time.Millisecond, ClaimEvery: 50 * time.Millisecond})
	e.drained(t)

	var nRev int64
	for _, ev := range evs {
		if _, ok := ev.(*events.Revenue); ok {
			nRev++
		}
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != nRev || committed == 0 {
		t.Fatalf("revenue rows %d (first commit %d), want %d", got, committed, nRev)
	}
	want := e.count(t, `SELECT count(*) FROM debits WHERE payer <> 'free'`) + e.count(t, `SELECT count(*) FROM refunds WHERE payer <> 'free'`)
	if got := e.count(t, `SELECT count(*) FROM account_ledger`); got != want {
		t.Fatalf("ledger rows %d, want %d", got, want)
	}
	// The dead consumers have nothing pending any more.
	cons := e.rdb.XInfoConsumers(ctx, e.stream, "settlementd").Val()
	for _, c := range cons {
		if c.Pending != 0 {
			t.Errorf("consumer %s still has %d pending", c.Name, c.Pending)
		}
	}
}

// Entries that cannot be booked are parked, acknowledged and do not block
// the good entries around them.
func TestUndecodableEntriesAreParked(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	good := settletest.Traffic(3, 50, now.Add(-time.Minute), now)
	settletest.XAdd(t, e.rdb, e.stream, good[:10]...)
	hash := strings.Repeat("cd", 32)
	bad := []map[string]any{
		{"t": "mystery", "v": "1", "d": "{}"},         // unknown type
		{"t": "revenue", "v": "9", "d": "{}"},         // unknown version
		{"t": "revenue", "v": "1", "d": "{not json"},  // bad JSON
		{"t": "revenue", "v": "1", "d": `{"id":"x"}`}, // invalid
		{"t": "revenue", "v": "1", "d": "{\"id\":\"n\\u0000l\",\"ts\":1700000000000,\"chain_id\":137,\"payer\":\"free\",\"asset\":\"USDT\",\"amount_units\":\"0\",\"calls\":1,\"upstream\":\"x\"}"}, // NUL byte
		{"t": "revenue", "v": "1", "d": `{"id":"old","ts":5,"chain_id":137,"payer":"free","asset":"USDT","amount_units":"0","calls":1,"upstream":"x"}`},                                             // year 1970
		{"junk": "\x00\xff"},
	}
	for _, v := range bad {
		if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Two keys with the same hash: Postgres refuses the second (unique
	// key_hash), which must park that one entry, not stall its batch.
	settletest.XAdd(t, e.rdb, e.stream,
		&events.KeyCreated{KeyID: "key_1", KeyHash: hash, Kind: events.KeyAPI, Tier: "free", TimeMs: now.UnixMilli()},
		&events.KeyCreated{KeyID: "key_2", KeyHash: hash, Kind: events.KeyAPI, Tier: "free", TimeMs: now.UnixMilli()})
	settletest.XAdd(t, e.rdb, e.stream, good[10:]...)

	e.start(t, Config{})
	e.drained(t)

	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != int64(len(bad))+1 {
		t.Errorf("dead letters %d, want %d", got, len(bad)+1)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters WHERE reason LIKE '%unique%' OR reason LIKE '%duplicate%'`); got != 1 {
		t.Errorf("db-rejected dead letters %d, want 1", got)
	}
	if got := e.count(t, `SELECT count(*) FROM api_keys`); got != 1 {
		t.Errorf("api keys %d, want 1", got)
	}
	var nRev int64
	for _, ev := range good {
		if _, ok := ev.(*events.Revenue); ok {
			nRev++
		}
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events`); got != nRev {
		t.Errorf("revenue rows %d, want %d", got, nRev)
	}
}

// The method label of a revenue event is stored with it; an entry written by
// a gateway older than epoch_id and method is booked with its ts's epoch and
// an empty method.
func TestRevenueMethodIsStored(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(5, 40, now.Add(-time.Minute), now)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	oldMs := now.Add(-30 * time.Second).UnixMilli()
	old := `{"id":"req-old","ts":` + strconv.FormatInt(oldMs, 10) + `,"chain_id":137,"payer":"free","asset":"USDT",` +
		`"amount_units":"0","calls":2,"upstream":"cache"}`
	if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: map[string]any{"t": "revenue", "v": "1", "d": old}}).Err(); err != nil {
		t.Fatal(err)
	}
	e.start(t, Config{})
	e.drained(t)

	var ids, methods []string
	for _, ev := range evs {
		if r, ok := ev.(*events.Revenue); ok {
			ids, methods = append(ids, r.ID), append(methods, r.Method)
		}
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events r JOIN unnest($1::text[], $2::text[]) AS w(id, method)
		ON r.id = w.id AND r.method = w.method AND r.epoch_id = floor(extract(epoch FROM r.ts) / 60)`, ids, methods); got != int64(len(ids)) {
		t.Errorf("%d of %d revenue rows carry their event's method and epoch", got, len(ids))
	}
	if got := e.count(t, `SELECT count(DISTINCT method) FROM revenue_events WHERE id = ANY($1)`, ids); got < 2 {
		t.Errorf("%d distinct methods stored, want several", got)
	}
	if got := e.count(t, `SELECT count(*) FROM revenue_events WHERE id = 'req-old' AND method = '' AND epoch_id = $1 AND calls = 2`,
		events.EpochOf(time.UnixMilli(oldMs))); got != 1 {
		t.Errorf("older entry stored %d times with method '' and its epoch, want 1", got)
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != 0 {
		t.Errorf("dead letters %d", got)
	}
}

// A revocation ingested before its key (another consumer was slower) still
// ends with one complete, revoked key.
func TestKeyRevokedBeforeCreated(t *testing.T) {
	e := newEnv(t)
	now := time.Now().UnixMilli()
	hash := strings.Repeat("ef", 32)
	settletest.XAdd(t, e.rdb, e.stream,
		&events.KeyRevoked{KeyID: "key_R", Reason: "leaked", TimeMs: now + 5},
		&events.KeyCreated{KeyID: "key_R", KeyHash: hash, Kind: events.KeyMachine, Label: "bot", Tier: "free", TimeMs: now},
		&events.KeyRevoked{KeyID: "key_R", Reason: "again", TimeMs: now + 9},
	)
	e.start(t, Config{Batch: 1})
	e.drained(t)
	var (
		gotHash, reason string
		revoked         time.Time
	)
	if err := e.pool.QueryRow(context.Background(), `SELECT key_hash, revoke_reason, revoked_at FROM api_keys WHERE key_id = 'key_R'`).Scan(&gotHash, &reason, &revoked); err != nil {
		t.Fatal(err)
	}
	if gotHash != hash || reason != "leaked" || revoked.UnixMilli() != now+5 {
		t.Fatalf("key %s %s %v", gotHash, reason, revoked)
	}
}

// Consumers of processes that went away are removed from the group once
// idle with nothing pending; one holding entries is kept until they are
// taken over.
func TestStaleConsumersArePruned(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.grouped(t, Config{Consumer: "live", Batch: 1, ClaimMinIdle: time.Hour, StaleConsumer: 50 * time.Millisecond})
	settletest.XAdd(t, e.rdb, e.stream, settletest.Traffic(5, 1, time.Now(), time.Now().Add(time.Second))[0])
	e.rdb.XGroupCreateConsumer(ctx, e.stream, "settlementd", "gone-empty")
	holder := &worker{in: in, name: "gone-holding"}
	if msgs, err := holder.read(ctx, ">"); err != nil || len(msgs) != 1 {
		t.Fatalf("read %d %v", len(msgs), err)
	}
	settletest.Eventually(t, 30*time.Second, "consumers idle", func() (bool, error) {
		for _, c := range e.rdb.XInfoConsumers(ctx, e.stream, "settlementd").Val() {
			if c.Idle < 60*time.Millisecond {
				return false, nil
			}
		}
		return true, nil
	})
	live := &worker{in: in, name: "live", claims: true}
	if err := live.claim(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range e.rdb.XInfoConsumers(ctx, e.stream, "settlementd").Val() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "gone-holding" {
		t.Fatalf("consumers left: %v", names)
	}
}

// A consumer restarted under the same (stable) name stores what it had read
// before it died at once, without waiting for the XAUTOCLAIM idle time.
func TestRestartUnderSameNameRecoversOwnPending(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	evs := settletest.Traffic(6, 100, now.Add(-time.Minute), now)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	dead := e.grouped(t, Config{Consumer: "stable", Batch: len(evs)})
	if msgs, err := (&worker{in: dead, name: "stable"}).read(ctx, ">"); err != nil || len(msgs) != len(evs) {
		t.Fatalf("read %d %v", len(msgs), err)
	}
	e.start(t, Config{Consumer: "stable", ClaimMinIdle: time.Hour})
	e.drained(t)
	if got, want := e.count(t, `SELECT count(*) FROM debits`), int64(100); got != want {
		t.Fatalf("debits %d, want %d", got, want)
	}
}

// Admin adjustments (credit and debit with a reason) are booked once each as
// ledger kind 'adjustment': they move the account's balance, not its spend.
func TestAdjustmentsAreBookedOnce(t *testing.T) {
	e := newEnv(t)
	now := time.Now().UnixMilli()
	acct := accounts.NewID()
	evs := []events.Event{
		&events.Adjustment{ID: "adj_1", Account: acct, Units: 5_000_000, Reason: "support credit", TimeMs: now},
		&events.Debit{ID: "req_1", TimeMs: now + 1, ChainID: 137, Payer: events.PayerCredits, Account: acct, Asset: events.AssetUSDT, Amount: 30, Calls: 1},
		&events.Adjustment{ID: "adj_2", Account: acct, Units: -1_000_000, Reason: "chargeback", TimeMs: now + 2},
	}
	// Twice: a retried admin call or a redelivered entry books nothing twice.
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	settletest.XAdd(t, e.rdb, e.stream, evs...)
	e.start(t, Config{Batch: 2})
	e.drained(t)

	if got := e.count(t, `SELECT count(*) FROM adjustments WHERE account = $1`, acct); got != 2 {
		t.Errorf("adjustment rows %d, want 2", got)
	}
	if got := e.count(t, `SELECT count(*) FROM account_ledger WHERE kind = 'adjustment' AND account = $1`, acct); got != 2 {
		t.Errorf("adjustment ledger rows %d, want 2", got)
	}
	if got := e.count(t, `SELECT units FROM account_ledger WHERE kind = 'adjustment' AND ref = 'adj_2'`); got != -1_000_000 {
		t.Errorf("debit adjustment booked as %d units", got)
	}
	if got := e.count(t, `SELECT credit_units FROM account_balances WHERE account = $1`, acct); got != 5_000_000-30-1_000_000 {
		t.Errorf("balance %d", got)
	}
	if got := e.count(t, `SELECT spent_units FROM account_balances WHERE account = $1`, acct); got != 30 {
		t.Errorf("spent %d: an adjustment is not spending", got)
	}
	if got := e.count(t, `SELECT count(*) FROM adjustments WHERE id = 'adj_2' AND reason = 'chargeback'`); got != 1 {
		t.Errorf("reason not stored")
	}
	if got := e.count(t, `SELECT count(*) FROM dead_letters`); got != 0 {
		t.Errorf("dead letters %d", got)
	}
}
