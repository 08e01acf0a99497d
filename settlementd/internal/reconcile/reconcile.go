// Package reconcile rebuilds the gateway's Redis key records and balances
// from Postgres, the system of record: `settlementd reconcile`.
//
// For every API key it writes, in the shared/balances layout, the hash lookup
// (<p>key:<sha256> → account id), the account hash's record fields (st, tier,
// kind, label, ts) and its money (bal = deposits − debits + refunds, spent =
// debits − refunds, from the account ledger), and the set of deposit ids
// already credited (so a replayed deposit log still credits once).
//
// A bundle key (kind "bundle", an X-Tollgate-Bundle-Key) also gets w = its
// wallet (api_keys.wallet) and never a credit balance: its calls are the
// wallet's x402 bundle, so bal and spent are neither compared nor written for
// it (credit-side ledger money on one is logged, not written).
//
// For every wallet with an x402 bundle it writes the bundle hash
// (<p>bundle:{<wallet>}) and the grants set (<p>bundle:{<wallet>}:grants):
//
//	granted = Σ bundle_grants.calls of the wallet
//	used    = calls drawn net of refunds = −Σ ledger calls of bundle_debit and bundle_refund
//	calls   = granted − used (= account_balances.bundle_calls)
//	grants  = the settlement tx hashes of its bundle_grants (so a replayed
//	          grant still grants once)
//
// matching the gateway's scripts: a grant HINCRBYs calls and granted, a draw
// moves n from calls to used, a refund moves it back. As for bal and spent,
// a field the gateway would not have created yet (calls and granted before
// any grant, used before any draw) is not given an explicit zero.
//
// Each account and each wallet is compared and written in one Lua script,
// and only fields that differ are written: on a healthy system a run changes
// nothing. Fields the gateway keeps only in Redis (daily counters,
// rate-limit state, used SIWX nonces) are not touched, and nothing is
// deleted.
//
// Redis balances run ahead of Postgres by the events not yet ingested, so a
// run refuses to start unless the event stream is fully ingested (or gone,
// as after losing Redis); -force overrides. Run it with the gateways paused
// or right after a Redis loss: under live traffic a debit can land between
// the check and the write.
//
// A run that applies ends by setting the generation marker
// (balances.Layout.Generation): Redis now holds what Postgres has, so the
// gateway may again tell a caller that a key it cannot find is unknown. The
// marker is set only if no second loss wiped Redis during the run (the
// run's token in balances.Layout.Rebuilding must still be there).
//
// Rebuild is the automatic form settlementd's leader runs when the marker
// is missing (package recovery). It is the same run with one difference,
// which makes it safe under live traffic and when repeated by another
// leader after a crash: a record the gateway already holds live is left
// alone — an account whose key lookup exists (written atomically with its
// record by this rebuild, an earlier attempt of it, or the gateway's own key
// creation since the loss), a wallet whose grants set already holds every
// grant Postgres has. Such a record may have been debited since it was
// written, and those debits are not in Postgres yet. Every other record has
// seen no traffic since the loss: the gateway answers its key "recovering"
// (503) and books nothing for it until it is rebuilt. So a rebuild needs no
// stream check, and running it twice, or two at once, writes each record
// at most once with Postgres' values.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Options of one run.
type Options struct {
	Prefix string // Redis key prefix (balances.Layout)
	Shards int    // metering shards (balances.Layout; 0 or 1: one)
	Group  string // consumer group whose progress proves the stream ingested
	Apply  bool   // false: report what would change, write nothing
	Force  bool   // run even though the stream is not fully ingested
	// Rebuild: the automatic rebuild after a loss (see the package comment):
	// applies, skips records the gateway holds live, needs no stream check.
	Rebuild bool
}

// Report says what a run found.
type Report struct {
	Accounts        int            // accounts examined
	Changed         int            // accounts with at least one difference
	Wallets         int            // wallets with an x402 bundle examined
	WalletsChanged  int            // wallets with at least one difference
	Fields          map[string]int // differences by field: lookup, pointer (a key lookup pointing to its account's home shard), st, tier, kind, label, ts, w, bal, spent, deposits; bundle.calls, bundle.granted, bundle.used, bundle.grants
	Live            int            // records left alone because the gateway holds them live (Rebuild)
	Channels        int            // x402 batch-settlement channels PostgreSQL knows
	ChannelsWritten int            // channels written to Redis (absent, or older than PostgreSQL's state)
	Generation      string         // the generation marker set (an applied run)
}

// ErrLostDuringRun is returned when the run's rebuild token vanished before
// the marker was set: Redis lost its data again during the run (or another
// rebuild took over). The marker is not set; run again.
var ErrLostDuringRun = errors.New("reconcile: Redis lost its data (or another rebuild started) during the run; the generation marker was not set")

// ErrNotIngested is returned when the stream still holds events Postgres
// does not have.
var ErrNotIngested = errors.New("reconcile: the event stream is not fully ingested; Redis balances are ahead of Postgres (use -force to run anyway)")

// Run reconciles every account, then every wallet's x402 bundle.
func Run(ctx context.Context, pool *pgxpool.Pool, rdb redis.UniversalClient, opts Options, log *zap.Logger) (Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Group == "" {
		opts.Group = "settlementd"
	}
	l, shards := layouts(opts.Prefix, opts.Shards)
	if opts.Rebuild {
		opts.Apply = true
	} else if !opts.Force {
		for _, sh := range shards {
			if err := checkIngested(ctx, rdb, shardStream(sh), opts.Group); err != nil {
				return Report{}, err
			}
		}
	}
	rep := Report{Fields: map[string]int{}}
	mode := "0"
	switch {
	case opts.Rebuild:
		mode = "r"
	case opts.Apply:
		mode = "1"
	}
	var token string
	if opts.Apply {
		// Every shard has its own rebuild token and marker: a shard whose
		// master lost its data is rebuilt while the others keep serving.
		token = ulid.Make().String()
		for _, sh := range shards {
			if err := rdb.Set(ctx, sh.Rebuilding(), token, 0).Err(); err != nil {
				return rep, fmt.Errorf("reconcile: writing Redis: %w", err)
			}
		}
	}
	w := &writer{rdb: rdb, l: l, mode: mode, log: log, rep: &rep}
	if err := w.accounts(ctx, pool); err != nil {
		return rep, err
	}
	if err := w.bundles(ctx, pool); err != nil {
		return rep, err
	}
	if err := w.channels(ctx, pool, opts.Apply); err != nil {
		return rep, err
	}
	if !opts.Apply {
		return rep, nil
	}
	gen := balances.GenerationValue(time.Now(), token) // its time is read by the gateway's sign-ins
	lost := false
	for _, sh := range shards {
		ok, err := markScript.Run(ctx, rdb, []string{sh.Rebuilding(), sh.Generation(), sh.Seq()}, token, gen).Int()
		if err != nil {
			return rep, fmt.Errorf("reconcile: setting the generation marker: %w", err)
		}
		lost = lost || ok != 1
	}
	if lost {
		return rep, ErrLostDuringRun // the shards that were marked are whole; the next run marks the others
	}
	rep.Generation = gen
	return rep, nil
}

// MarkerPresent reports whether a single-shard deployment's Redis holds the
// generation marker.
func MarkerPresent(ctx context.Context, rdb redis.UniversalClient, prefix string) (bool, error) {
	return MarkersPresent(ctx, rdb, prefix, 1)
}

// MarkersPresent reports whether every shard holds its generation marker.
func MarkersPresent(ctx context.Context, rdb redis.UniversalClient, prefix string, shards int) (bool, error) {
	_, ls := layouts(prefix, shards)
	for _, sh := range ls {
		// One EXISTS per shard: the markers are in different slots.
		n, err := rdb.Exists(ctx, sh.Generation()).Result()
		if err != nil || n != 1 {
			return false, err
		}
	}
	return true, nil
}

// markScript sets the generation marker if the run's token is still the
// rebuild token (nothing wiped Redis, no later run started), and clears it.
// A shard that kept its marker keeps its value: gateways take a new value on
// a shard without having seen it missing for a rebuild they missed
// (meter.Replayer), so only a shard that lost its data gets a new one.
// KEYS: 1 rebuild token, 2 generation marker. ARGV: 1 token, 2 marker value.
// KEYS[3], the shard's state count (balances.Layout.Seq), is given its
// start (Redis's clock in µs, as meter's seqLua) if it has none: a built
// shard without a count is taken for a snapshot from before counts.
var markScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[3]) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[3], string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2])))
end
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('SET', KEYS[2], ARGV[2]) end
redis.call('DEL', KEYS[1])
return 1`)

// writer runs reconcileScript over batches of records, pipelined.
type writer struct {
	rdb  redis.UniversalClient
	l    balances.Layout
	mode string // reconcileScript's ARGV[1]: "0" dry run, "1" apply, "r" rebuild
	log  *zap.Logger
	rep  *Report
}

// record is one Redis record set to reconcile: an account or a wallet.
type record interface {
	name() string
	script(l balances.Layout, apply string) (keys []string, args []any)
}

// flush reconciles batch and counts the differences; wallets says which
// half of the report they belong to.
func (w *writer) flush(ctx context.Context, batch []record, wallets bool) error {
	if len(batch) == 0 {
		return nil
	}
	p := w.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	pointers := map[int]*redis.Cmd{} // an account's key pointer on another shard (its own slot, so its own script)
	for i, r := range batch {
		keys, args := r.script(w.l, w.mode)
		cmds[i] = reconcileScript.Eval(ctx, p, keys, args...)
		if a, ok := r.(*account); ok {
			if key, value, ok := a.pointer(w.l); ok {
				pointers[i] = pointerScript.Eval(ctx, p, []string{key}, w.mode, value)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		// EVAL, not EVALSHA: a pipeline cannot retry on NOSCRIPT.
		return fmt.Errorf("reconcile: writing Redis: %w", err)
	}
	for i, c := range cmds {
		diffs, err := c.StringSlice()
		if err != nil {
			return fmt.Errorf("reconcile: %s: %w", batch[i].name(), err)
		}
		if len(diffs) == 1 && diffs[0] == liveRecord {
			w.rep.Live++
			continue
		}
		if pc := pointers[i]; pc != nil {
			if n, err := pc.Int(); err != nil {
				return fmt.Errorf("reconcile: %s: key pointer: %w", batch[i].name(), err)
			} else if n == 1 {
				diffs = append(diffs, "pointer")
			}
		}
		if wallets {
			w.rep.Wallets++
			for j := range diffs {
				diffs[j] = "bundle." + diffs[j]
			}
		} else {
			w.rep.Accounts++
		}
		if len(diffs) == 0 {
			continue
		}
		if wallets {
			w.rep.WalletsChanged++
		} else {
			w.rep.Changed++
		}
		for _, f := range diffs {
			w.rep.Fields[f]++
		}
		what := "account differs"
		if wallets {
			what = "bundle differs"
		}
		// After a loss every record differs: the rebuild's summary line says
		// how many, and each one is only worth a debug line.
		logf := w.log.Info
		if w.mode == "r" {
			logf = w.log.Debug
		}
		logf(what, zap.String("account", batch[i].name()), zap.Strings("fields", diffs), zap.Bool("applied", w.mode != "0"))
	}
	return nil
}

const batchSize = 500

// accounts reconciles every key_… account.
func (w *writer) accounts(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, accountsSQL)
	if err != nil {
		return fmt.Errorf("reconcile: reading accounts: %w", err)
	}
	defer rows.Close()
	var batch []record
	for rows.Next() {
		a := &account{}
		var created *time.Time
		if err := rows.Scan(&a.id, &a.hash, &a.kind, &a.label, &a.tier, &a.wallet, &created, &a.revoked, &a.bal, &a.spent, &a.hasBal, &a.hasSpent, &a.deposits); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		if created != nil {
			a.ts = strconv.FormatInt(created.UnixMilli(), 10)
		}
		if a.kind == string(events.KeyBundle) && (a.bal != 0 || a.spent != 0) {
			w.log.Warn("bundle key has credit-side ledger entries; a bundle key holds no credits, so they are not written to Redis",
				zap.String("account", a.id), zap.Int64("bal", a.bal), zap.Int64("spent", a.spent))
		}
		batch = append(batch, a)
		if len(batch) == batchSize {
			if err := w.flush(ctx, batch, false); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return w.flush(ctx, batch, false)
}

// bundles reconciles every wallet that has an x402 bundle.
func (w *writer) bundles(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, bundlesSQL)
	if err != nil {
		return fmt.Errorf("reconcile: reading bundles: %w", err)
	}
	defer rows.Close()
	var batch []record
	for rows.Next() {
		b := &bundle{}
		if err := rows.Scan(&b.wallet, &b.granted, &b.used, &b.drawn, &b.grants); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		batch = append(batch, b)
		if len(batch) == batchSize {
			if err := w.flush(ctx, batch, true); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return w.flush(ctx, batch, true)
}

// checkIngested refuses while the stream holds entries not yet in Postgres.
// A stream that does not exist holds none (Redis was lost or never used).
func checkIngested(ctx context.Context, rdb redis.UniversalClient, stream, group string) error {
	n, err := rdb.Exists(ctx, stream).Result()
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if n == 0 {
		return nil
	}
	w, err := ingest.GroupWatermark(ctx, rdb, stream, group)
	if errors.Is(err, ingest.ErrNoGroup) {
		return ErrNotIngested // a stream nobody has consumed yet
	}
	if err != nil {
		return fmt.Errorf("reconcile: reading stream progress: %w", err)
	}
	if !w.Drained() {
		return ErrNotIngested
	}
	return nil
}

// accountsSQL: every key with its record, and every key_… account the
// ledger knows (a deposit may precede its key_created's ingestion). has_bal
// and has_spent say whether the gateway's scripts would have created those
// hash fields (its HINCRBYs), so a rebuilt hash matches a lived one exactly.
// credit_units and spent_units are the account_balances view's sums, taken
// in the same pass over the ledger: since migration 0073 the ledger is a
// view reading the debits table, which a second reference would scan again.
const accountsSQL = `
WITH led AS (
    SELECT account,
           COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund', 'adjustment')), 0)::bigint AS credit_units,
           COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint                        AS spent_units,
           bool_or(kind IN ('deposit', 'debit', 'refund')) AS has_bal,
           bool_or(kind IN ('debit', 'refund'))            AS has_spent,
           COALESCE(array_agg(ref ORDER BY ref) FILTER (WHERE kind = 'deposit'), '{}') AS deposits
    FROM account_ledger WHERE account LIKE 'key\_%' GROUP BY account)
SELECT COALESCE(k.key_id, l.account), COALESCE(k.key_hash, ''), COALESCE(k.kind, ''), COALESCE(k.label, ''),
       COALESCE(k.tier, ''), COALESCE(k.wallet, ''), k.created_at, k.revoked_at IS NOT NULL,
       COALESCE(l.credit_units, 0), COALESCE(l.spent_units, 0),
       COALESCE(l.has_bal, false), COALESCE(l.has_spent, false), COALESCE(l.deposits, '{}')
FROM api_keys k
FULL JOIN led l ON l.account = k.key_id
ORDER BY 1`

type account struct {
	id, hash, kind, label, tier, wallet, ts string
	revoked                                 bool
	bal, spent                              int64
	hasBal, hasSpent                        bool
	deposits                                []string
}

func (a *account) name() string { return a.id }

// bundleWallet is a bundle key's wallet ("" for any other account).
func (a *account) bundleWallet() string {
	if a.kind == string(events.KeyBundle) {
		return a.wallet
	}
	return ""
}

// pointer is the lookup record on the key's own shard pointing to the
// account's home shard, when they differ (an account migrated from an
// unsharded layout: balances.KeyRecords).
func (a *account) pointer(l balances.Layout) (key, value string, ok bool) {
	if a.hash == "" {
		return "", "", false
	}
	home := l.HomeOfAccount(a.id, a.bundleWallet())
	if l.ShardOfKey(a.hash) == home {
		return "", "", false
	}
	return l.KeyLookup(a.hash), balances.KeyPointer(home), true
}

// script returns the keys and arguments of reconcileScript for a.
func (a *account) script(l balances.Layout, apply string) ([]string, []any) {
	// The account, its deposit ids and its key's lookup record live on its
	// home shard (a bundle key's: its wallet's), so one script covers them.
	home := l.Shard(l.HomeOfAccount(a.id, a.bundleWallet()))
	keys := []string{home.AccountPrefix() + a.id + "}", home.AccountPrefix() + a.id + "}:deposits"}
	if a.hash != "" {
		keys = append(keys, home.Prefix+"key:"+a.hash)
	}
	args := []any{apply, a.id, "deposits"}
	var fields []any
	if a.hash != "" || a.revoked {
		st := balances.StatusActive
		if a.revoked {
			st = balances.StatusRevoked
		}
		fields = append(fields, balances.FieldStatus, st, "x")
	}
	if a.hash != "" {
		fields = append(fields,
			balances.FieldTier, a.tier, "x",
			balances.FieldKind, a.kind, "x",
			balances.FieldLabel, a.label, "x",
			balances.FieldTime, a.ts, "x")
	}
	if a.kind == string(events.KeyBundle) {
		// A bundle key draws on its wallet's bundle and has no credits:
		// the gateway would pay from a bal field, so none is given.
		if a.hash != "" && a.wallet != "" {
			fields = append(fields, balances.FieldWallet, a.wallet, "x")
		}
	} else {
		// Money fields: absent means 0. A field the gateway would not have
		// created yet is not given an explicit zero (that would differ from a
		// healthy Redis); one it would have is written even when it is 0.
		fields = append(fields,
			balances.FieldBal, strconv.FormatInt(a.bal, 10), mode(a.hasBal),
			balances.FieldSpent, strconv.FormatInt(a.spent, 10), mode(a.hasSpent))
	}
	args = append(args, len(fields)/3)
	args = append(args, fields...)
	for _, d := range a.deposits {
		args = append(args, d)
	}
	return keys, args
}

// bundlesSQL: every wallet with a grant or a bundle draw, its calls granted,
// its calls used net of refunds, whether it ever drew (the gateway's first
// draw creates the used field), and its grants' tx hashes.
const bundlesSQL = `
WITH g AS (
    SELECT wallet, sum(calls)::bigint AS granted, array_agg(id ORDER BY id) AS grants
    FROM bundle_grants GROUP BY wallet),
d AS (
    SELECT account AS wallet, (-sum(calls))::bigint AS used, bool_or(kind = 'bundle_debit') AS drawn
    FROM account_ledger WHERE kind IN ('bundle_debit', 'bundle_refund') GROUP BY account)
SELECT COALESCE(g.wallet, d.wallet), COALESCE(g.granted, 0), COALESCE(d.used, 0), COALESCE(d.drawn, false),
       COALESCE(g.grants, '{}')
FROM g FULL JOIN d ON d.wallet = g.wallet
ORDER BY 1`

// bundle is a wallet's x402 bundle as Postgres has it.
type bundle struct {
	wallet        string
	granted, used int64
	drawn         bool
	grants        []string
}

func (b *bundle) name() string { return b.wallet }

// script returns the keys and arguments of reconcileScript for b.
func (b *bundle) script(l balances.Layout, apply string) ([]string, []any) {
	keys := []string{l.Bundle(b.wallet), l.BundleGrants(b.wallet)}
	granted := mode(len(b.grants) > 0)
	args := []any{apply, b.wallet, "grants", 3,
		balances.BundleCalls, strconv.FormatInt(b.granted-b.used, 10), granted,
		balances.BundleGranted, strconv.FormatInt(b.granted, 10), granted,
		balances.BundleUsed, strconv.FormatInt(b.used, 10), mode(b.drawn)}
	for _, g := range b.grants {
		args = append(args, g)
	}
	return keys, args
}

func mode(present bool) string {
	if present {
		return "x"
	}
	return "z"
}

// liveRecord is reconcileScript's reply for a record a rebuild leaves alone.
const liveRecord = "=live"

// reconcileScript compares one record set (an account, or a wallet's
// bundle) with what Postgres says and, when ARGV[1] is "1" (apply) or "r"
// (rebuild), writes the differences. It returns the names of the differing
// fields, or {liveRecord} when a rebuild finds the gateway holding the
// record live: an account whose key lookup exists, a wallet whose grants
// set holds every grant Postgres has (see the package comment).
//
// KEYS: 1 hash (account or bundle), 2 set (deposits or grants), 3 the key's
// hash lookup (accounts only; absent for an account whose key_created is
// not in Postgres, and for a bundle).
// ARGV: 1 apply, 2 account id (the lookup's value), 3 the set's name in the
// diffs, 4 number of fields n, then n triples (field, value, mode: "x"
// exact, "z" absent counts as "0"), then the set's members.
// pointerScript compares (and, unless ARGV[1] is "0", sets) a key lookup
// pointer: KEYS[1] the lookup on the key's shard, ARGV[2] "@<home shard>".
// It answers 1 when the pointer differed.
var pointerScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[2] then return 0 end
if ARGV[1] ~= '0' then redis.call('SET', KEYS[1], ARGV[2]) end
return 1`)

var reconcileScript = redis.NewScript(`
local apply = ARGV[1] ~= '0'
local n = tonumber(ARGV[4])
local first = 5 + 3 * n
if ARGV[1] == 'r' then
  if KEYS[3] then
    if redis.call('EXISTS', KEYS[3]) == 1 then return {'` + liveRecord + `'} end
  elseif ARGV[3] == 'grants' and first <= #ARGV then
    local all = true
    for j = first, #ARGV do
      if redis.call('SISMEMBER', KEYS[2], ARGV[j]) == 0 then all = false break end
    end
    if all then return {'` + liveRecord + `'} end
  end
end
local diffs = {}
if KEYS[3] then
  if redis.call('GET', KEYS[3]) ~= ARGV[2] then
    table.insert(diffs, 'lookup')
    if apply then redis.call('SET', KEYS[3], ARGV[2]) end
  end
end
local i = 5
for _ = 1, n do
  local f, v, mode = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  local cur = redis.call('HGET', KEYS[1], f)
  if cur == false and mode == 'z' then cur = '0' end
  if cur ~= v then
    table.insert(diffs, f)
    if apply then redis.call('HSET', KEYS[1], f, v) end
  end
end
local missing = 0
for j = i, #ARGV do
  if redis.call('SISMEMBER', KEYS[2], ARGV[j]) == 0 then
    missing = missing + 1
    if apply then redis.call('SADD', KEYS[2], ARGV[j]) end
  end
end
if missing > 0 then table.insert(diffs, ARGV[3]) end
return diffs`)
