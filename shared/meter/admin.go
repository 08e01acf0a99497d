package meter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Operator actions of the gateway admin (/admin/*): revoking keys,
// adjusting balances, changing the free-tier limits. Each balance or key
// change is one script that writes its event to the stream in the same
// atomic step, like the per-request booking, so settlementd records it.

// MaxFreeLimit bounds a free-tier limit (the Caddyfile's bound too).
const MaxFreeLimit = 1 << 40

// FreeLimits are free-tier limits: calls per IP (IPv6 /64) and per /24
// (IPv6 /48) per UTC day. 0 switches the free tier off.
type FreeLimits struct {
	DailyPerIP int64
	Subnet     int64
}

func (m *Meter) configLimits() FreeLimits {
	return FreeLimits{DailyPerIP: m.cfg.FreeDailyLimit, Subnet: m.cfg.FreeSubnetLimit}
}

// mergeLimits lays an HMGET of the runtime limits over the configured
// ones, field by field; override is true when any field came from Redis.
func (m *Meter) mergeLimits(vals []any) (l FreeLimits, override bool) {
	l = m.configLimits()
	for i, dst := range []*int64{&l.DailyPerIP, &l.Subnet} {
		if i >= len(vals) {
			break
		}
		if s, ok := vals[i].(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
				*dst, override = n, true
			}
		}
	}
	return l, override
}

// FreeLimits returns the free-tier limits in force and whether they are an
// operator's runtime override (else the configured ones).
func (m *Meter) FreeLimits(ctx context.Context) (FreeLimits, bool, error) {
	vals, err := m.cmd.HMGet(ctx, m.layout.FreeConfig(), balances.FreeConfigIP, balances.FreeConfigNet).Result()
	if err != nil {
		return FreeLimits{}, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	l, override := m.mergeLimits(vals)
	return l, override, nil
}

// ConfigLimits are the limits of the configuration, in force when no
// override is set.
func (m *Meter) ConfigLimits() FreeLimits { return m.configLimits() }

// SetFreeLimits stores limits in Redis, where every gateway instance's
// metering script reads them from its next request on.
func (m *Meter) SetFreeLimits(ctx context.Context, l FreeLimits) error {
	if l.DailyPerIP < 0 || l.Subnet < 0 || l.DailyPerIP > MaxFreeLimit || l.Subnet > MaxFreeLimit {
		return fmt.Errorf("meter: free-tier limits must be between 0 and %d", int64(MaxFreeLimit))
	}
	// Every shard's scripts read their own copy (shard.go).
	_, err := m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range m.layout.N() {
			p.HSet(ctx, m.layout.Shard(i).FreeConfig(), balances.FreeConfigIP, l.DailyPerIP, balances.FreeConfigNet, l.Subnet)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// ClearFreeLimits removes the runtime override: the configured limits apply
// again.
func (m *Meter) ClearFreeLimits(ctx context.Context) error {
	_, err := m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range m.layout.N() {
			p.Del(ctx, m.layout.Shard(i).FreeConfig())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// claimIDScript claims KEYS[1]'s field ARGV[1] for value ARGV[2]: 1 when it
// is now (or already was) that value, 0 when it holds another.
var claimIDScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and v ~= ARGV[2] then return 0 end
if not v then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
`)

// revokeScript revokes a key: its account status and the KeyRevoked event,
// atomically. A repeat changes nothing and writes no event.
//
// KEYS: 1 account hash, 2 stream. ARGV: 1 event type, 2 event version,
// 3 payload. Reply: 0 unknown account, 1 revoked now, 2 already revoked.
var revokeScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return 0 end
if st == 'revoked' then return 2 end
redis.call('HSET', KEYS[1], 'st', 'revoked')
redis.call('XADD', KEYS[2], '*', 't', ARGV[1], 'v', ARGV[2], 'd', ARGV[3])
return 1
`)

// ErrUnknownAccount is returned for an account id no key was created with.
var ErrUnknownAccount = errors.New("meter: unknown account")

// Revoke revokes the key of account id. changed is false when it was
// revoked already. The key's lookup stays, so the key is answered as
// revoked (not unknown) from the next request on.
func (m *Meter) Revoke(ctx context.Context, id, reason string) (changed bool, err error) {
	if err := accounts.Validate(id); err != nil {
		return false, fmt.Errorf("meter: %w", err)
	}
	data, err := events.Payload(&events.KeyRevoked{KeyID: id, Reason: reason, TimeMs: m.cfg.Now().UnixMilli()})
	if err != nil {
		return false, err
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	res, err := revokeScript.Run(ctx, m.rdb, []string{l.Account(id), l.Stream(0)},
		events.TypeKeyRevoked, events.Version, data).Int64()
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	switch res {
	case 0:
		return false, ErrUnknownAccount
	case 1:
		return true, nil
	}
	return false, nil
}

// adjustScript applies an admin credit or debit: the balance change, the
// record of its id and the Adjustment event, all or nothing. A debit never
// takes the balance below zero. The same id again with the same account
// and units is a no-op (a retried call); with anything else, a conflict.
//
// KEYS: 1 account hash, 2 adjustments hash, 3 stream.
// ARGV: 1 adjustment id, 2 "<account> <units>", 3 signed units, 4 event
// type, 5 event version, 6 payload.
// Reply: {code, balance, status}: code 0 unknown account, 1 applied,
// 2 applied before, 3 balance too low, 4 id used for another adjustment.
var adjustScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {0, 0, ''} end
local bal = tonumber(redis.call('HGET', KEYS[1], 'bal') or '0')
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  if prev ~= ARGV[2] then return {4, bal, st} end
  return {2, bal, st}
end
local u = tonumber(ARGV[3])
if bal + u < 0 then return {3, bal, st} end
bal = redis.call('HINCRBY', KEYS[1], 'bal', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('XADD', KEYS[3], '*', 't', ARGV[4], 'v', ARGV[5], 'd', ARGV[6])
return {1, bal, st}
`)

// Adjustment is an admin credit (Units > 0) or debit (Units < 0).
type Adjustment struct {
	// ID makes the adjustment idempotent: a retried call with the same id
	// applies once. Empty means a fresh one.
	ID      string
	Account string
	Units   money.Units
	Reason  string
}

// AdjustResult is the outcome of an applied (or earlier applied) adjustment.
type AdjustResult struct {
	ID      string
	Applied bool        // false: this id had been applied before; nothing changed now
	Balance money.Units // the balance now
	Revoked bool        // the account's key is revoked (adjustments still apply)
}

// ErrInsufficientBalance refuses a debit larger than the balance.
type ErrInsufficientBalance struct{ Balance money.Units }

func (e *ErrInsufficientBalance) Error() string {
	return "meter: the debit would take the balance (" + e.Balance.Decimal() + " USDT) below zero"
}

// ErrAdjustmentConflict is returned when an adjustment id was already used
// for another account or amount.
var ErrAdjustmentConflict = errors.New("meter: adjustment id already used for another account or amount")

var adjustmentID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// ValidAdjustmentID reports whether s may name an adjustment.
func ValidAdjustmentID(s string) bool { return adjustmentID.MatchString(s) }

// NewAdjustmentID returns a fresh adjustment id.
func NewAdjustmentID() string { return "adj_" + ulid.Make().String() }

// Adjust applies a. Errors: ErrUnknownAccount, *ErrInsufficientBalance,
// ErrAdjustmentConflict, ErrUnavailable, or a validation error.
func (m *Meter) Adjust(ctx context.Context, a Adjustment) (AdjustResult, error) {
	if a.ID == "" {
		a.ID = NewAdjustmentID()
	}
	if !ValidAdjustmentID(a.ID) {
		return AdjustResult{}, errors.New("meter: adjustment id must be 1 to 64 of A-Z a-z 0-9 . _ : -")
	}
	ev := &events.Adjustment{ID: a.ID, Account: a.Account, Units: a.Units, Reason: a.Reason, TimeMs: m.cfg.Now().UnixMilli()}
	data, err := events.Payload(ev)
	if err != nil {
		return AdjustResult{}, fmt.Errorf("meter: %w", err)
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(a.Account))
	units := strconv.FormatInt(int64(a.Units), 10)
	// The id is claimed for this account and amount first, on shard 0 (an
	// admin call, off the hot path: two round trips). A claim that stays
	// after the adjustment failed is the same adjustment retried later.
	claimed, err := claimIDScript.Run(ctx, m.rdb, []string{m.layout.AdjustmentIDs()}, a.ID, a.Account+" "+units).Int64()
	if err != nil {
		return AdjustResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if claimed == 0 {
		return AdjustResult{ID: a.ID}, ErrAdjustmentConflict
	}
	res, err := adjustScript.Run(ctx, m.rdb, []string{l.Account(a.Account), l.Adjustments(), l.Stream(0)},
		a.ID, a.Account+" "+units, units, events.TypeAdjustment, events.Version, data).Slice()
	if err != nil {
		return AdjustResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	st, _ := res[2].(string)
	out := AdjustResult{ID: a.ID, Balance: money.Units(toInt(res[1])), Revoked: st == balances.StatusRevoked}
	switch toInt(res[0]) {
	case 0:
		return AdjustResult{}, ErrUnknownAccount
	case 1:
		out.Applied = true
	case 3:
		return out, &ErrInsufficientBalance{Balance: out.Balance}
	case 4:
		return out, ErrAdjustmentConflict
	}
	return out, nil
}
