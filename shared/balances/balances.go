// Package balances is the Redis key layout of Tollgate's hot metering state
// and the one balance operation settlementd performs on it: crediting a
// confirmed deposit. The gateway (shared/meter) debits and refunds with
// its own scripts over the same layout; both sides import this package so a
// key name can never drift between them.
//
// Every key is the deployment's prefix followed by a fixed shape:
//
//	<p>events                        stream of shared/events records (= events.Stream for the default prefix)
//	<p>key:<sha256 hex>              string: account id of an API key (the secret itself is never stored)
//	<p>acct:{<id>}                   hash: st, tier, kind, label, ts, bal, spent (see the Field constants)
//	<p>acct:{<id>}:deposits          set: deposit ids already credited (idempotency of Credit)
//	<p>acct:{<id>}:day:<date>        string: calls the key made on a UTC day (expires)
//	<p>acct:{<id>}:rl                string: GCRA state of the key's request rate
//	<p>free:<date>:ip:<prefix>       string: free calls of an IPv4 address or IPv6 /64 on a UTC day
//	<p>free:<date>:net:<prefix>      string: free calls of an IPv4 /24 or IPv6 /48 on a UTC day
//	<p>free:<date>:stats             hash: calls, ips, near (free-tier statistics of the day)
//	<p>requests:<date>               string: metered calls served on a UTC day (for /api/status)
//	<p>rl:ip:<prefix>                string: GCRA state of an IP's request rate
//	<p>rl:create:<prefix>            sorted set: key creations of an IP in the last window
//	<p>refund:<request id>           string: guard making a request's refund happen once
//	<p>config:free                   hash: ip, net — free-tier limits set at runtime by an operator (absent = config)
//	<p>adjustments                   hash: admin adjustment id → "<account> <signed units>" (applies each id once)
//	<p>adjustment-ids                hash: the same, on shard 0 for every shard (an id names one adjustment)
//	<p>bundle:{<wallet>}             hash: calls, granted, used — a wallet's x402 bundle (wallet = lower-case 0x hex)
//	<p>bundle:{<wallet>}:grants      set: settlement tx hashes already granted (idempotency of a grant)
//	<p>siwx:<nonce>                  string: a Sign-In-With-X nonce already used: "1", or the random session of the
//	                                 socket it signed in (meter.SignInSIWX); expires with the message's age limit
//	<p>generation                    string: present once settlementd has (re)built keys and balances from PostgreSQL;
//	                                 absent = Redis lost its data and is not rebuilt yet (see Layout.Generation);
//	                                 value: the rebuild's UTC RFC 3339 time and token (GenerationValue)
//	<p>rebuilding                    string: token of the rebuild in progress (settlementd)
//	<p>seq                           string: the shard's state counter (Layout.Seq); -1 = older than the ledger
//	<p>ledger-seq                    string: the Seq count PostgreSQL has caught up with (settlementd)
//	<p>keep                          hash: gateway id → the oldest stream entry (ms) it may still look up (Layout.Keep)
//
// An account hash of kind "bundle" (an X-Tollgate-Bundle-Key) carries the
// field w = the wallet whose bundle it draws on; such a key has no credits.
//
// That is one shard. A sharded deployment (Layout.Shards > 1, shard.go)
// has one such set of keys per shard, each under the shard's hash tag
// (<prefix>{<tag>}:…), and puts each payer's and each address's keys on
// their shard, so one Redis Cluster slot holds everything a metering script
// touches and the shards spread over the cluster's masters. An unsharded
// deployment on a Cluster puts a hash tag in the prefix itself (for example
// "{tollgate}:"), which makes it one slot. See docs/decisions.md, "Metering".
package balances

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// DefaultPrefix is the key prefix of a single-instance deployment. With it,
// the stream is events.Stream.
const DefaultPrefix = "tollgate:"

// Fields of the account hash.
const (
	FieldStatus = "st"    // StatusActive or StatusRevoked
	FieldTier   = "tier"  // "free"
	FieldKind   = "kind"  // events.KeyKind
	FieldLabel  = "label" // the creator's label
	FieldTime   = "ts"    // creation, unix milliseconds
	FieldBal    = "bal"   // spendable credits, base units (absent = 0)
	FieldSpent  = "spent" // credits spent over the key's life, base units
	// FieldWallet is set on a bundle key's account: the (lower-case) wallet
	// whose x402 bundle the key draws on.
	FieldWallet = "w"
)

// Fields of a wallet's bundle hash (Layout.Bundle).
const (
	BundleCalls   = "calls"   // calls left
	BundleGranted = "granted" // calls granted over the wallet's life
	BundleUsed    = "used"    // calls drawn over the wallet's life
)

// Account status values.
const (
	StatusActive  = "active"
	StatusRevoked = "revoked"
)

// Fields of the runtime free-tier limits hash (Layout.FreeConfig).
const (
	FreeConfigIP  = "ip"  // free calls per IP (IPv6 /64) per UTC day
	FreeConfigNet = "net" // free calls per /24 (IPv6 /48) per UTC day
)

// Fields of the daily free-tier statistics hash.
const (
	StatCalls = "calls" // free calls served
	StatIPs   = "ips"   // addresses (IPv6: /64s) with at least one free call
	StatNear  = "near"  // addresses at or above the near-limit threshold
)

// Layout names the keys of one deployment: Prefix, then, when the
// deployment is sharded (Shards > 1), the hash tag of a shard. See shard.go
// for how payers and addresses are spread over shards. A Layout with
// Shards 0 or 1 is a single shard whose keys are exactly those named above
// (Prefix + the fixed shape), so a deployment from before sharding keeps its
// keys.
//
// The methods naming a payer's keys (Account, Deposits, AccountDay,
// AccountRate, KeyLookup, Bundle, BundleGrants, Channel, ChannelDeposits)
// and an address's keys (FreeIP, FreeNet, IPRate, CreateRate) put them on
// the payer's or the address's shard. The per-shard keys (Stream, Requests,
// FreeStats, FreeConfig, Generation, Rebuilding, Adjustments, Channels,
// RefundGuard, SIWXNonce, AccountPrefix, BundlePrefix) exist once per shard:
// call them on Shard(i); on a sharded root Layout they name shard 0's.
type Layout struct {
	Prefix string
	// Shards is the fixed number of shards payers and addresses are spread
	// over (0 or 1: one).
	Shards int
}

// Stream is the event stream key of a shard.
func (l Layout) Stream(shard int) string { return l.Shard(shard).Prefix + "events" }

// Streams is every shard's event stream key, in shard order.
func (l Layout) Streams() []string {
	out := make([]string, l.N())
	for i := range out {
		out[i] = l.Stream(i)
	}
	return out
}

// KeyLookup maps the SHA-256 (hex) of an API key to its account id. It is
// on the key's shard (ShardOfKey); see KeyPointer for an account whose home
// is another shard.
func (l Layout) KeyLookup(sha256hex string) string {
	return l.Shard(l.ShardOfKey(sha256hex)).Prefix + "key:" + sha256hex
}

// AccountPrefix is what every key of an account starts with; the metering
// script derives an account's keys from it once it knows the id.
func (l Layout) AccountPrefix() string { return l.Shard(0).Prefix + "acct:{" }

// Account is the account hash, on the account's home shard (ShardOfPayer of
// its id; a bundle key's account is on its wallet's shard: BundleKeyAccount).
func (l Layout) Account(id string) string {
	return l.Shard(l.ShardOfPayer(id)).AccountPrefix() + id + "}"
}

// BundleKeyAccount is the account hash of a bundle key drawing on wallet's
// bundle: it lives with the bundle, on the wallet's shard.
func (l Layout) BundleKeyAccount(id, wallet string) string {
	return l.Shard(l.ShardOfPayer(wallet)).AccountPrefix() + id + "}"
}

// Deposits is the set of deposit ids credited to an account.
func (l Layout) Deposits(id string) string { return l.Account(id) + ":deposits" }

// AccountDay counts an account's calls on a UTC day.
func (l Layout) AccountDay(id, date string) string { return l.Account(id) + ":day:" + date }

// AccountRate is the account's GCRA state.
func (l Layout) AccountRate(id string) string { return l.Account(id) + ":rl" }

// Adjustments records every admin adjustment applied, by its id, so a
// retried admin call applies once. It is one hash for all accounts because
// the id is also the adjustment's key in Postgres, where it must be unique.
func (l Layout) Adjustments() string { return l.Shard(0).Prefix + "adjustments" }

// AdjustmentIDs claims every admin adjustment id for one account and
// amount across shards ("<account> <signed units>"), on shard 0: an
// account's Adjustments hash is on its own shard, so it alone cannot see an
// id already used on another shard.
func (l Layout) AdjustmentIDs() string { return l.Shard(0).Prefix + "adjustment-ids" }

// FreeConfig holds free-tier limits an operator set at runtime; every
// gateway instance's metering script reads it, falling back to its own
// configuration for a field that is absent.
func (l Layout) FreeConfig() string { return l.Shard(0).Prefix + "config:free" }

// FreeIP counts an address's (IPv6: a /64's) free calls on a UTC day.
func (l Layout) FreeIP(date, prefix string) string {
	return l.Shard(l.ShardOfIP(prefix)).Prefix + "free:" + date + ":ip:" + prefix
}

// FreeNet counts a /24's (IPv6: a /48's) free calls on a UTC day.
func (l Layout) FreeNet(date, prefix string) string {
	return l.Shard(l.ShardOfIP(prefix)).Prefix + "free:" + date + ":net:" + prefix
}

// FreeStats is the free-tier statistics hash of a UTC day.
func (l Layout) FreeStats(date string) string { return l.Shard(0).Prefix + "free:" + date + ":stats" }

// Requests counts all metered calls served on a UTC day.
func (l Layout) Requests(date string) string { return l.Shard(0).Prefix + "requests:" + date }

// IPRate is an address's GCRA state.
func (l Layout) IPRate(prefix string) string {
	return l.Shard(l.ShardOfIP(prefix)).Prefix + "rl:ip:" + prefix
}

// CreateRate is the sliding log of an address's key creations.
func (l Layout) CreateRate(prefix string) string {
	return l.Shard(l.ShardOfIP(prefix)).Prefix + "rl:create:" + prefix
}

// RefundGuard makes a request's refund idempotent.
func (l Layout) RefundGuard(requestID string) string {
	return l.Shard(0).Prefix + "refund:" + requestID
}

// BundlePrefix is what a wallet's bundle keys start with; the metering
// script derives them from it for a bundle key's wallet.
func (l Layout) BundlePrefix() string { return l.Shard(0).Prefix + "bundle:{" }

// Bundle is a wallet's x402 bundle hash. wallet is lower-case 0x hex.
func (l Layout) Bundle(wallet string) string {
	return l.Shard(l.ShardOfPayer(wallet)).BundlePrefix() + wallet + "}"
}

// BundleGrants is the set of settlement tx hashes granted to a wallet.
func (l Layout) BundleGrants(wallet string) string { return l.Bundle(wallet) + ":grants" }

// Channel is an x402 batch-settlement channel's hash (what the gateway knows
// of its deposit and the latest voucher). id is the lower-case 0x channel id.
func (l Layout) Channel(id string) string {
	return l.Shard(l.ShardOfPayer(id)).Prefix + "bschan:{" + id + "}"
}

// ChannelDeposits is the set of deposit transactions a channel's known
// balance was raised by (a deposit is recorded once).
func (l Layout) ChannelDeposits(id string) string { return l.Channel(id) + ":deposits" }

// Channels is the set of channel ids with vouchers, for settlementd's claims.
func (l Layout) Channels() string { return l.Shard(0).Prefix + "bschannels" }

// SIWXNonce marks a Sign-In-With-X nonce as used.
func (l Layout) SIWXNonce(nonce string) string { return l.Shard(0).Prefix + "siwx:" + nonce }

// Generation is the marker settlementd writes once this Redis holds the
// keys, balances and bundles of PostgreSQL (after its start-up check, after
// an automatic rebuild, after `settlementd reconcile -apply`). It is never
// expired or deleted by Tollgate, so its absence means this Redis lost its
// data (or never had it): the gateway then answers an unknown key "retry
// shortly" (503), not "unknown key" (401). Its value is GenerationValue.
func (l Layout) Generation() string { return l.Shard(0).Prefix + "generation" }

// GenerationValue is the generation marker a rebuild at at writes: the UTC
// RFC 3339 time of the rebuild, then its token. The time is a fact the
// gateway reads (meter.SignInSIWX, to the second: the value's first 19
// characters): a Sign-In-With-X message issued before it may have been used
// in the Redis that was lost, whose used nonces died with it.
func GenerationValue(at time.Time, token string) string {
	return at.UTC().Format(time.RFC3339Nano) + " " + token
}

// Rebuilding holds the token of the rebuild in progress: the marker is set
// only by the rebuild whose token is still there, so a rebuild that raced a
// second loss (the token vanished with the data) never declares Redis whole.
func (l Layout) Rebuilding() string { return l.Shard(0).Prefix + "rebuilding" }

// Ingested is settlementd's acknowledgement of a shard's stream: "<low ms>
// <run id>", every entry of the stream with an id below <low ms> is stored
// in PostgreSQL, as the consumer group on the Redis process <run id> (INFO
// server) says. Gateways read it to let go of the money facts they keep for
// replay (meter.Retention); an acknowledgement made on another process (a
// replica promoted since) is not used.
func (l Layout) Ingested() string { return l.Shard(0).Prefix + "ingested" }

// Gateways is the sorted set of the gateways keeping money facts for replay
// (meter.Retention), scored by their last heartbeat (unix ms). settlementd's
// rebuild after a loss waits for the ones alive to have replayed
// (Replayed).
func (l Layout) Gateways() string { return l.Shard(0).Prefix + "gateways" }

// Replayed is the set of gateways that appended the money facts they keep
// to this Redis since it last lost its data: a Redis that comes back empty
// has none, and each gateway adds itself once it has replayed.
func (l Layout) Replayed() string { return l.Shard(0).Prefix + "replayed" }

// Seq is the shard's state counter: every metering decision, SIWX draw and
// voucher draw adds one (meter's seqLua). settlementd acknowledges the count
// PostgreSQL has caught up with (Ingested's third field); a Redis whose
// count is below it is older than the ledger (restored from a snapshot) and
// serves no money until it is rebuilt. -1 marks a shard found so and not yet
// wiped by settlementd. It is the generation marker's name with "seq" for
// "generation", in the same slot.
func (l Layout) Seq() string { return l.Shard(0).Prefix + "seq" }

// LedgerSeq is the highest Seq count settlementd knows PostgreSQL has caught
// up with on this shard: every decision counted up to it has its events
// stored. Gateways raise their floor to it (meter.Retention.Floor) and send
// the floor with every metering script.
func (l Layout) LedgerSeq() string { return l.Shard(0).Prefix + "ledger-seq" }

// Keep holds, per gateway id (as in Gateways), the oldest stream entry time
// (unix ms) the gateway may still look up: the money facts it keeps for
// replay and the requests it may still void. settlementd trims the stream
// below the lowest of these and of what it has stored (XTRIM MINID).
func (l Layout) Keep() string { return l.Shard(0).Prefix + "keep" }

// DateOf is the UTC day a counter is kept under: daily counters are keyed
// by it, so they reset at UTC midnight without any job running, and expire
// on their own.
func DateOf(t time.Time) string { return t.UTC().Format("2006-01-02") }

// HasHashTag reports whether s contains a non-empty Redis Cluster hash tag,
// the condition for every key under prefix s to share one slot.
func HasHashTag(s string) bool {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(s[i+1:], '}')
	return j > 0
}

// ErrInvalid is returned for arguments Credit refuses before touching Redis.
var ErrInvalid = errors.New("balances: invalid credit")

// credit adds units once per deposit id: the SADD both records the deposit
// and tells whether it was new, in the same atomic step as the INCRBY, so a
// listener that re-processes a log (restart, reorg replay) cannot credit twice.
var credit = redis.NewScript(`
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'bal') or '0')}
end
return {1, redis.call('HINCRBY', KEYS[1], 'bal', ARGV[1])}
`)

// Credit adds units to account's spendable balance, once per depositID (for
// a RevenueVault deposit: "<tx hash>:<log index>"). applied is false when
// that deposit was already credited; balance is the balance afterwards.
func Credit(ctx context.Context, rdb redis.Scripter, prefix, account string, units money.Units, depositID string) (applied bool, balance money.Units, err error) {
	return CreditAt(ctx, rdb, Layout{Prefix: prefix}, account, units, depositID)
}

// CreditAt is Credit on a (possibly sharded) layout: the account's home shard.
func CreditAt(ctx context.Context, rdb redis.Scripter, l Layout, account string, units money.Units, depositID string) (applied bool, balance money.Units, err error) {
	if err := accounts.Validate(account); err != nil {
		return false, 0, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if units <= 0 {
		return false, 0, fmt.Errorf("%w: amount %d is not positive", ErrInvalid, units)
	}
	if depositID == "" || len(depositID) > 200 {
		return false, 0, fmt.Errorf("%w: deposit id missing or too long", ErrInvalid)
	}
	res, err := credit.Run(ctx, rdb, []string{l.Account(account), l.Deposits(account)}, int64(units), depositID).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("balances: credit %s: %w", account, err)
	}
	return res[0] == 1, money.Units(res[1]), nil
}

// Balance reads an account's spendable balance (0 for an unknown account).
func Balance(ctx context.Context, rdb redis.Cmdable, prefix, account string) (money.Units, error) {
	return BalanceAt(ctx, rdb, Layout{Prefix: prefix}, account)
}

// BalanceAt is Balance on a (possibly sharded) layout.
func BalanceAt(ctx context.Context, rdb redis.Cmdable, l Layout, account string) (money.Units, error) {
	v, err := rdb.HGet(ctx, l.Account(account), FieldBal).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("balances: read %s: %w", account, err)
	}
	return money.Units(v), nil
}
