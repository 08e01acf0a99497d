// Package reconcile rebuilds the gateway's Redis key records and balances
// from Postgres, the system of record (DESIGN §1): `settlementd reconcile`.
//
// For every API key it writes, in the shared/balances layout, the hash lookup
// (<p>key:<sha256> → account id), the account hash's record fields (st, tier,
// kind, label, ts) and its money (bal = deposits − debits + refunds, spent =
// debits − refunds, from the account ledger), and the set of deposit ids
// already credited (so a replayed deposit log still credits once).
//
// Each account is compared and written in one Lua script, and only fields
// that differ are written: on a healthy system a run changes nothing. Fields
// the gateway keeps only in Redis (daily counters, rate-limit state) are not
// touched, and nothing is deleted.
//
// Redis balances run ahead of Postgres by the events not yet ingested, so a
// run refuses to start unless the event stream is fully ingested (or gone,
// as after losing Redis); -force overrides. Run it with the gateways paused
// or right after a Redis loss: under live traffic a debit can land between
// the check and the write.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// Options of one run.
type Options struct {
	Prefix string // Redis key prefix (balances.Layout)
	Group  string // consumer group whose progress proves the stream ingested
	Apply  bool   // false: report what would change, write nothing
	Force  bool   // run even though the stream is not fully ingested
}

// Report says what a run found.
type Report struct {
	Accounts int            // accounts examined
	Changed  int            // accounts with at least one difference
	Fields   map[string]int // differences by field (lookup, st, tier, kind, label, ts, bal, spent, deposits)
}

// ErrNotIngested is returned when the stream still holds events Postgres
// does not have.
var ErrNotIngested = errors.New("reconcile: the event stream is not fully ingested; Redis balances are ahead of Postgres (use -force to run anyway)")

// Run reconciles every account.
func Run(ctx context.Context, pool *pgxpool.Pool, rdb redis.UniversalClient, opts Options, log *zap.Logger) (Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Group == "" {
		opts.Group = "settlementd"
	}
	l := balances.Layout{Prefix: opts.Prefix}
	if !opts.Force {
		if err := checkIngested(ctx, rdb, l.Stream(), opts.Group); err != nil {
			return Report{}, err
		}
	}
	rows, err := pool.Query(ctx, accountsSQL)
	if err != nil {
		return Report{}, fmt.Errorf("reconcile: reading accounts: %w", err)
	}
	defer rows.Close()

	rep := Report{Fields: map[string]int{}}
	apply := "0"
	if opts.Apply {
		apply = "1"
	}
	var batch []account
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		p := rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(batch))
		for i, a := range batch {
			keys, args := a.script(l, apply)
			cmds[i] = reconcileScript.Eval(ctx, p, keys, args...)
		}
		if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			// EVAL, not EVALSHA: a pipeline cannot retry on NOSCRIPT.
			return fmt.Errorf("reconcile: writing Redis: %w", err)
		}
		for i, c := range cmds {
			diffs, err := c.StringSlice()
			if err != nil {
				return fmt.Errorf("reconcile: account %s: %w", batch[i].id, err)
			}
			rep.Accounts++
			if len(diffs) > 0 {
				rep.Changed++
				for _, f := range diffs {
					rep.Fields[f]++
				}
				log.Info("account differs", zap.String("account", batch[i].id), zap.Strings("fields", diffs), zap.Bool("applied", opts.Apply))
			}
		}
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		var a account
		var created *time.Time
		if err := rows.Scan(&a.id, &a.hash, &a.kind, &a.label, &a.tier, &created, &a.revoked, &a.bal, &a.spent, &a.hasBal, &a.hasSpent, &a.deposits); err != nil {
			return rep, fmt.Errorf("reconcile: %w", err)
		}
		if created != nil {
			a.ts = strconv.FormatInt(created.UnixMilli(), 10)
		}
		batch = append(batch, a)
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	if err := flush(); err != nil {
		return rep, err
	}
	return rep, nil
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
const accountsSQL = `
WITH led AS (
    SELECT account,
           bool_or(kind IN ('deposit', 'debit', 'refund')) AS has_bal,
           bool_or(kind IN ('debit', 'refund'))            AS has_spent,
           COALESCE(array_agg(ref ORDER BY ref) FILTER (WHERE kind = 'deposit'), '{}') AS deposits
    FROM account_ledger WHERE account LIKE 'key\_%' GROUP BY account)
SELECT COALESCE(k.key_id, b.account), COALESCE(k.key_hash, ''), COALESCE(k.kind, ''), COALESCE(k.label, ''),
       COALESCE(k.tier, ''), k.created_at, k.revoked_at IS NOT NULL,
       COALESCE(b.credit_units, 0), COALESCE(b.spent_units, 0),
       COALESCE(l.has_bal, false), COALESCE(l.has_spent, false), COALESCE(l.deposits, '{}')
FROM api_keys k
FULL JOIN (SELECT * FROM account_balances WHERE account LIKE 'key\_%') b ON b.account = k.key_id
LEFT JOIN led l ON l.account = COALESCE(k.key_id, b.account)
ORDER BY 1`

type account struct {
	id, hash, kind, label, tier, ts string
	revoked                         bool
	bal, spent                      int64
	hasBal, hasSpent                bool
	deposits                        []string
}

// script returns the keys and arguments of reconcileScript for a.
func (a *account) script(l balances.Layout, apply string) ([]string, []any) {
	keys := []string{l.Account(a.id), l.Deposits(a.id)}
	if a.hash != "" {
		keys = append(keys, l.KeyLookup(a.hash))
	}
	args := []any{apply, a.id}
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
	// Money fields: absent means 0. A field the gateway would not have
	// created yet is not given an explicit zero (that would differ from a
	// healthy Redis); one it would have is written even when it is 0.
	fields = append(fields,
		balances.FieldBal, strconv.FormatInt(a.bal, 10), mode(a.hasBal),
		balances.FieldSpent, strconv.FormatInt(a.spent, 10), mode(a.hasSpent))
	args = append(args, len(fields)/3)
	args = append(args, fields...)
	for _, d := range a.deposits {
		args = append(args, d)
	}
	return keys, args
}

func mode(present bool) string {
	if present {
		return "x"
	}
	return "z"
}

// reconcileScript compares one account with what Postgres says and, when
// ARGV[1] is "1", writes the differences. It returns the names of the
// differing fields.
//
// KEYS: 1 account hash, 2 deposits set, 3 the key's hash lookup (absent for
// an account whose key_created is not in Postgres).
// ARGV: 1 apply, 2 account id, 3 number of fields n, then n triples (field,
// value, mode: "x" exact, "z" absent counts as "0"), then the deposit ids.
var reconcileScript = redis.NewScript(`
local apply = ARGV[1] == '1'
local diffs = {}
if KEYS[3] then
  if redis.call('GET', KEYS[3]) ~= ARGV[2] then
    table.insert(diffs, 'lookup')
    if apply then redis.call('SET', KEYS[3], ARGV[2]) end
  end
end
local n = tonumber(ARGV[3])
local i = 4
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
if missing > 0 then table.insert(diffs, 'deposits') end
return diffs`)
