// Package meter decides who pays for each JSON-RPC request and books it in
// Redis: API-key credits, the per-IP free tier with its subnet cap, request
// rate limits, key creation, refunds, and the event stream settlementd
// persists. The key layout is shared/balances'.
//
// Every decision is one Redis round trip: one Lua script checks the key, its
// rate, its balance and the caller's free allowance, debits, and appends the
// Debit event, atomically (scripts.go). A refund is a second script call, on
// the failure path only. Revenue events, written after serving, go through
// EventWriter off the request path.
package meter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Defaults (the abuse-limit numbers are Tollgate's own choice,
// docs/decisions.md "Metering").
const (
	DefaultFreeDailyLimit  = 500
	DefaultFreeSubnetLimit = 2_500
	DefaultIPRate          = 50  // requests per second per IP (IPv6 /64)
	DefaultIPBurst         = 100 // requests an idle IP may send at once
	DefaultKeyRate         = 250 // requests per second per API key
	DefaultKeyBurst        = 500
	DefaultCreatePerWindow = 10 // keys or machine registrations per IP …
	DefaultCreateWindow    = time.Hour
	// NearLimitPercent is the share of the daily limit from which an IP
	// counts as "near the limit" in the free-tier statistics.
	NearLimitPercent = 80
)

// dayTTL keeps a day's counters past its end, so a refund or a stats read
// right after midnight still finds yesterday's; they expire on their own.
const dayTTL = 48 * time.Hour

// refundGuardTTL bounds how long a refund stays idempotent: far longer than
// any request can take.
const refundGuardTTL = 24 * time.Hour

// Rate is a GCRA limit: Rate requests per Per, bursts of up to Burst.
// A zero Rate means unlimited.
type Rate struct {
	Rate  int
	Per   time.Duration
	Burst int
}

// interval is the emission interval in milliseconds.
func (r Rate) interval() float64 {
	if r.Rate <= 0 || r.Per <= 0 {
		return 0
	}
	return float64(r.Per.Milliseconds()) / float64(r.Rate)
}

func (r Rate) burst() int {
	if r.Burst < 1 {
		return 1
	}
	return r.Burst
}

// Config is the metering policy of one deployment.
type Config struct {
	Prefix          string // Redis key prefix (balances.Layout)
	Shards          int    // shards payers and addresses are spread over (balances.Layout; 0 or 1: one)
	FreeDailyLimit  int64  // free calls per IP (IPv6 /64) per UTC day; 0 disables the free tier
	FreeSubnetLimit int64  // free calls per /24 (IPv6 /48) per UTC day
	IPRate          Rate   // anonymous requests and requests with a bad key, per IP
	KeyRate         Rate   // requests per valid API key
	CreateLimit     int    // key creations per IP per CreateWindow; 0 = unlimited
	CreateWindow    time.Duration
	// ReplicaWait, when positive, follows every script that may book money
	// with WAIT 1 <ReplicaWait> (failover.go): the bound on what a master
	// failover can lose. 0: no WAIT (a Redis without replicas).
	ReplicaWait time.Duration
	// OnUnreplicated, if set, is called for each such decision (a metric).
	OnUnreplicated func()
	// OnOlderThanLedger, if set, is called when a metering script finds its
	// shard's Redis older than the ledger (seqLua): restored from a snapshot
	// or missing acknowledged writes. That shard answers "recovering" until
	// settlementd rebuilds it. The gateway alerts (metric and log).
	OnOlderThanLedger func(shard int)
	// Retain, if set, keeps every money fact booked (paid debits, their
	// refunds) until settlementd has stored it, for Replayer (retain.go).
	Retain *Retention
	// Now is the clock; nil means time.Now. Tests move it across midnight.
	Now func() time.Time
}

// Meter books requests against one Redis.
type Meter struct {
	rdb    redis.Scripter
	cmd    redis.Cmdable
	uc     redis.UniversalClient
	layout balances.Layout
	cfg    Config
	hints  hints // what this process learned of keys (shard.go)
	// unreplicated counts money-booking decisions no replica acknowledged in time (failover.go).
	unreplicated atomic.Uint64
	day          atomic.Pointer[dayName] // the last UTC date formatted, reused by every request that day
}

// dayName caches balances.DateOf for one UTC day: formatting the date on
// every request showed up in the gateway's CPU profile (make bench).
type dayName struct {
	day  int64 // unix seconds / 86400
	name string
}

// date is balances.DateOf(t), formatted once per UTC day.
func (m *Meter) date(t time.Time) string {
	day := t.Unix() / 86400
	if t.Unix() < 0 {
		return balances.DateOf(t) // never cached: integer division rounds toward zero
	}
	if c := m.day.Load(); c != nil && c.day == day {
		return c.name
	}
	name := balances.DateOf(t)
	m.day.Store(&dayName{day: day, name: name})
	return name
}

// New returns a Meter. rdb is usually a redis.UniversalClient.
func New(rdb redis.UniversalClient, cfg Config) (*Meter, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = balances.DefaultPrefix
	}
	if cfg.FreeDailyLimit < 0 || cfg.FreeSubnetLimit < 0 {
		return nil, errors.New("meter: free-tier limits must not be negative")
	}
	if cfg.CreateWindow <= 0 {
		cfg.CreateWindow = DefaultCreateWindow
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	layout := balances.Layout{Prefix: cfg.Prefix, Shards: cfg.Shards}
	if err := layout.Validate(); err != nil {
		return nil, fmt.Errorf("meter: %w", err)
	}
	if asCluster(rdb) != nil && !layout.Sharded() && !balances.HasHashTag(cfg.Prefix) {
		return nil, fmt.Errorf("meter: on Redis Cluster an unsharded key prefix %q needs a hash tag such as \"{tollgate}:\", "+
			"so the metering script's keys share one slot (or set shards to spread payers over the cluster)", cfg.Prefix)
	}
	return &Meter{rdb: rdb, cmd: rdb, uc: rdb, layout: layout, cfg: cfg}, nil
}

// nearThreshold is the call count from which an IP is near its limit.
func nearThreshold(limit int64) int64 {
	if limit <= 0 {
		return 1
	}
	return (limit*NearLimitPercent + 99) / 100
}

// Layout returns the key layout in use.
func (m *Meter) Layout() balances.Layout { return m.layout }

// Config returns the policy in use.
func (m *Meter) Config() Config { return m.cfg }

// Now is the meter's clock.
func (m *Meter) Now() time.Time { return m.cfg.Now() }

// Outcome is the kind of a Decision.
type Outcome int

const (
	Paid            Outcome = iota + 1 // credits debited
	Free                               // free allowance drawn
	PaymentRequired                    // 402
	RateLimited                        // 429
	Unauthorized                       // 401: unknown or revoked key
	Bundle                             // x402 bundle calls drawn (SIWX, a payment, or a bundle key)
	// Recovering (503 with Retry-After, ReasonRecovering): Redis lost its
	// data and settlementd has not rebuilt it yet (no generation marker), so
	// a key that looks unknown, or a bundle that looks missing, may well
	// exist. Nothing was booked; the caller retries after RecoveryRetryAfter.
	Recovering
)

// ReasonRecovering is the error code of a Recovering answer.
const ReasonRecovering = "metering_recovering"

// RecoveryRetryAfter is the Retry-After of a Recovering answer: settlementd
// notices the loss within its watch interval (1 s by default) and rebuilds
// from PostgreSQL account by account, each key usable as soon as its own
// record is back (100,000 accounts took 3.4 s on a shared 2-core machine).
const RecoveryRetryAfter = 2 * time.Second

func (o Outcome) String() string {
	switch o {
	case Paid:
		return "paid"
	case Free:
		return "free"
	case PaymentRequired:
		return "payment_required"
	case RateLimited:
		return "rate_limited"
	case Unauthorized:
		return "unauthorized"
	case Bundle:
		return "bundle"
	case Recovering:
		return "recovering"
	}
	return "unknown"
}

// Request is what a decision needs to know about a request.
type Request struct {
	ChainID uint64
	IP      netip.Addr
	KeyHash string // hex SHA-256 of the X-API-Key secret; "" when none was sent
	// Calls is what the request counts as at the flat price: one per valid
	// item of a batch, or its method's weight where the operator weights
	// methods (caddymodule/evm). Everything below counts in these units.
	Calls int
	// Method labels the request in its revenue event: jsonrpc.RequestLabel
	// of the calls (a well-known method, "other", or "batch").
	Method string
}

// Decision is the booked outcome of a request.
type Decision struct {
	Outcome Outcome
	ID      string // request id: the Debit's, later the Refund's and Revenue's
	Account string // key_… when a valid key was sent
	// Wallet is the (lower-case) wallet whose x402 bundle paid (Bundle).
	Wallet string
	// BundleLeft is the wallet's bundle calls left after the draw (Bundle).
	BundleLeft int64
	// Balance is the credit balance after the debit (Paid).
	Balance money.Units
	// FreeLeft is the IP's free calls left today (Free).
	FreeLeft int64
	// Reason says which limit refused a PaymentRequired ("ip", "subnet") or
	// why a key was refused ("unknown_key", "revoked_key").
	Reason string
	// RetryAfter is when a RateLimited caller may try again.
	RetryAfter time.Duration
	// Limits are the free-tier limits the decision was made under (Free and
	// PaymentRequired): the configured ones or an operator's override.
	Limits FreeLimits

	calls  int
	amount money.Units
	time   time.Time
	chain  uint64
	method string
	date   string
	ipKey  string
	netKey string
	// shard is where the decision was booked: its debit's stream, the
	// payer's keys (Paid, Bundle) or the address's (Free). ipShard is the
	// address's shard.
	shard   int
	ipShard int
}

// Shard is the shard the decision was booked on (its Debit's stream).
func (d *Decision) Shard() int { return d.shard }

// Calls is the number of calls the decision covers.
func (d *Decision) Calls() int { return d.calls }

// Amount is what the request was charged (0 for the free tier).
func (d *Decision) Amount() money.Units { return d.amount }

// Time is when the request was booked.
func (d *Decision) Time() time.Time { return d.time }

// Payer is the event payer of a served decision.
func (d *Decision) Payer() events.Payer {
	switch d.Outcome {
	case Paid:
		return events.PayerCredits
	case Bundle:
		return events.PayerBundle
	}
	return events.PayerFree
}

// served reports whether the decision let the request through (it is then
// refundable and earns revenue).
func (d *Decision) served() bool {
	return d.Outcome == Paid || d.Outcome == Free || d.Outcome == Bundle
}

// walletPlaceholder stands for the wallet in a bundle key's debit payload
// until the script has looked the wallet up (like placeholder for the id).
const walletPlaceholder = "0x0000000000000000000000000000000000000000"

// bundleDebit is the Debit event of calls drawn from a wallet's bundle
// (payer PayerBundle) or, at the bundle price, from one of its
// batch-settlement channels (PayerChannel).
func bundleDebit(id string, ms int64, chain uint64, payer events.Payer, wallet string, calls int) *events.Debit {
	return &events.Debit{ID: id, TimeMs: ms, ChainID: chain, Payer: payer, Account: wallet,
		Asset: events.AssetUSDC, Amount: money.BundleCallRevenue * money.Units(calls), Calls: calls}
}

// placeholder stands for the account id in the debit payloads until the
// script knows it; it is a well-formed id (events validate the shape of
// what they carry) that NewID can never return (ULID time 0).
const placeholder = "key_00000000000000000000000000"

// ErrUnavailable wraps every Redis failure: the caller answers 503 and does
// not serve the request (metering fails closed).
var ErrUnavailable = errors.New("metering unavailable")

// newDecision is a decision for req booked at now: a fresh request id and
// the subjects and day its counters are kept under.
func (m *Meter) newDecision(req Request, now time.Time) Decision {
	ipKey, netKey := Subjects(req.IP)
	return Decision{ID: NewRequestID(), calls: req.Calls, time: now, chain: req.ChainID, method: req.Method, date: m.date(now),
		ipKey: ipKey, netKey: netKey, ipShard: m.layout.ShardOfIP(netKey)}
}

// NewRequestID returns a fresh request id.
func NewRequestID() string { return ulid.Make().String() }

// Authorize decides and books a request: one script call, or two sent at
// once when the key's shard is not the address's (see authorizeKeyed). A
// non-nil error (always ErrUnavailable) means nothing was booked.
func (m *Meter) Authorize(ctx context.Context, req Request) (Decision, error) {
	now := m.cfg.Now()
	d := m.newDecision(req, now)
	if req.Calls <= 0 {
		return d, fmt.Errorf("meter: a request without calls is not metered")
	}
	cost := money.PricePerCall * money.Units(req.Calls)
	if cost/money.PricePerCall != money.Units(req.Calls) {
		return d, fmt.Errorf("meter: %d calls overflow", req.Calls)
	}
	c := scriptCall{ms: now.UnixMilli(), keyHash: req.KeyHash, freeConfig: m.layout.Shard(d.ipShard).FreeConfig(), calls: req.Calls,
		unitPrice: money.PricePerCall, freeDaily: m.cfg.FreeDailyLimit, freeSubnet: m.cfg.FreeSubnetLimit}
	enc := func(c *scriptCall, id string, freeAccount string) error {
		// The credits payload is only ever booked for a request with a key;
		// an anonymous request does not pay for encoding and sending it.
		c.paid, c.bundle = "", ""
		if req.KeyHash != "" {
			paid, err := events.Encode(&events.Debit{ID: id, TimeMs: c.ms, ChainID: req.ChainID, Payer: events.PayerCredits,
				Account: placeholder, Asset: events.AssetUSDT, Amount: cost, Calls: req.Calls})
			if err != nil {
				return err
			}
			bundle, err := events.Encode(bundleDebit(id, c.ms, req.ChainID, events.PayerBundle, walletPlaceholder, req.Calls))
			if err != nil {
				return err
			}
			c.paid, c.bundle = paid[5], bundle[5]
		}
		c.free = ""
		if freeAccount != "-" {
			free, err := events.Encode(&events.Debit{ID: id, TimeMs: c.ms, ChainID: req.ChainID, Payer: events.PayerFree,
				Account: freeAccount, Asset: events.AssetUSDT, Amount: 0, Calls: req.Calls})
			if err != nil {
				return err
			}
			c.free = free[5]
		}
		return nil
	}
	return m.authorize(ctx, &d, c, enc, func(d *Decision, res []any, code int64) error {
		switch code {
		case 1:
			d.Outcome, d.amount = Paid, cost
			d.Balance = money.Units(toInt(res[1]))
			d.Account, _ = res[2].(string)
		case 2:
			d.Outcome = Free
			d.FreeLeft = toInt(res[1])
			if a, _ := res[2].(string); a != "" {
				d.Account = a
			}
			d.Limits = m.limitsOf(res[3:])
		case 3:
			d.Outcome = PaymentRequired
			d.Reason = map[int64]string{1: "ip", 2: "subnet"}[toInt(res[1])]
			if a, _ := res[2].(string); a != "" {
				d.Account = a
			}
			d.Limits = m.limitsOf(res[3:])
		case 6:
			d.Outcome = Bundle
			d.BundleLeft = toInt(res[1])
			d.Account, _ = res[2].(string)
			d.Wallet, _ = res[3].(string)
		default:
			return fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
		}
		return nil
	})
}

// scriptCall is what one metering decision hands meterScript beyond what
// every call shares; Authorize and AuthorizeMetric differ only in these.
type scriptCall struct {
	ms                    int64
	keyHash               string // "" for an anonymous caller
	freeConfig            string // Redis key of the runtime free-tier limits (on the address's shard)
	calls                 int
	unitPrice             money.Units
	freeDaily, freeSubnet int64 // 0 disables the free tier for this call
	paid, free            any   // encoded Debit payloads ("" when not bookable)
	bundle                any   // a bundle key's Debit payload ("" or nil: bundle keys may not draw)
}

// Script modes (meterScript ARGV[22]).
const (
	modeAll   = "all"
	modePayer = "payer"
	modeIP    = "ip"
)

// meterRun builds one meterScript call on shard for mode: the keys and
// positional arguments it expects (their order is the script's contract,
// so it is written down once, here).
func (m *Meter) meterRun(d *Decision, c *scriptCall, shard int, mode string, checkIPRate bool) *run {
	l := m.layout.Shard(shard)
	keys := make([]string, 0, 9)
	keys = append(keys, l.Stream(0), l.Requests(d.date), l.Generation())
	if c.keyHash != "" && mode != modeIP {
		keys = append(keys, l.Prefix+"key:"+c.keyHash)
	}
	ipk := 0
	if mode != modePayer {
		ipk = len(keys) + 1
		keys = append(keys, l.IPRate(d.ipKey), l.FreeIP(d.date, d.ipKey), l.FreeNet(d.date, d.netKey), l.FreeStats(d.date), c.freeConfig)
	}
	rate, countShort := "0", "0"
	if checkIPRate {
		rate = "1"
	}
	if c.freeDaily > 0 || c.freeSubnet > 0 {
		countShort = "1"
	}
	args := []any{
		l.AccountPrefix(), c.ms, c.calls, int64(c.unitPrice),
		c.freeDaily, c.freeSubnet, NearLimitPercent, int64(dayTTL / time.Second),
		m.cfg.IPRate.interval(), m.cfg.IPRate.burst(), m.cfg.KeyRate.interval(), m.cfg.KeyRate.burst(),
		d.date, events.TypeDebit, events.Version, c.paid, c.free, placeholder,
		l.BundlePrefix(), bundleArg(c.bundle), walletPlaceholder, mode, ipk, rate, countShort, m.cfg.Retain.Floor(shard),
	}
	return &run{script: meterScript, keys: keys, args: args, wait: c.keyHash != "" && mode != modeIP,
		seqShard: shard + 1, id: d.ID, ms: c.ms}
}

// limitsOf reads the {IP limit, subnet limit} tail of a script reply.
func (m *Meter) limitsOf(v []any) FreeLimits {
	l := m.configLimits()
	if len(v) >= 2 {
		l.DailyPerIP, l.Subnet = toInt(v[0]), toInt(v[1])
	}
	return l
}

func bundleArg(v any) any {
	if v == nil {
		return ""
	}
	return v
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// Refund gives back the charge for failed of the decision's calls (those the
// upstream did not answer) and records the Refund event. It is idempotent
// per request. Only Paid and Free decisions are refundable.
func (m *Meter) Refund(ctx context.Context, d *Decision, failed int) error {
	if !d.served() {
		return errors.New("meter: only served decisions are refunded")
	}
	if failed <= 0 || failed > d.calls {
		return fmt.Errorf("meter: refund of %d of %d calls", failed, d.calls)
	}
	units, account := d.price(failed), d.Account
	if d.Outcome == Bundle {
		account = d.Wallet
	}
	ev := &events.Refund{ID: d.ID, TimeMs: m.cfg.Now().UnixMilli(), Payer: d.Payer(), Account: account, Amount: units, Calls: failed}
	data, err := events.Payload(ev)
	if err != nil {
		return err
	}
	// The refund goes where the debit was booked: the payer's shard or
	// the address's.
	shard := d.shard
	if d.Outcome == Bundle {
		// A bundle is on its wallet's shard; a batch-settlement voucher's
		// draw was booked on its channel's, and its refund is a bundle call
		// of the wallet all the same.
		shard = m.layout.ShardOfPayer(d.Wallet)
	}
	l := m.layout.Shard(shard)
	keys := []string{l.Stream(0), l.RefundGuard(d.ID)}
	mode := "free"
	switch d.Outcome {
	case Paid:
		mode = "credits"
		keys = append(keys, l.AccountPrefix()+d.Account+"}")
	case Bundle:
		mode = "bundle"
		keys = append(keys, l.BundlePrefix()+d.Wallet+"}")
	default:
		keys = append(keys, l.FreeIP(d.date, d.ipKey), l.FreeNet(d.date, d.netKey), l.FreeStats(d.date))
	}
	xid, err := refundScript.Run(ctx, m.rdb, keys, mode, int64(units), failed, events.TypeRefund, events.Version,
		data, nearThreshold(d.Limits.DailyPerIP), int64(refundGuardTTL/time.Second)).Result()
	if err != nil {
		return fmt.Errorf("%w: refund: %v", ErrUnavailable, err)
	}
	switch d.Outcome {
	case Paid:
		m.keepRefund(shard, xid, data, factCreditsRefund, d.Account, int64(units))
	case Bundle:
		m.keepRefund(shard, xid, data, factBundleRefund, d.Wallet, int64(failed))
	}
	return nil
}

// Revenue is the revenue event of a served decision: failed of its calls
// were refunded, upstream served the rest (a node id, a provider name, or
// "cache"). ok is false when nothing was served (every call failed), which
// records no revenue.
func (d *Decision) Revenue(failed int, upstream, nodeID string, served time.Time) (ev *events.Revenue, ok bool) {
	n := d.calls - failed
	if n <= 0 || !d.served() {
		return nil, false
	}
	amount, asset, account := d.price(n), events.AssetUSDT, d.Account
	if d.Outcome == Bundle {
		asset, account = events.AssetUSDC, d.Wallet
	}
	if upstream == "" {
		upstream = "unknown"
	}
	method := d.method
	if len(method) > events.MaxMethodLen {
		method = "other" // never the case for jsonrpc.RequestLabel; the event must stay valid
	}
	ms := served.UnixMilli()
	return &events.Revenue{ID: d.ID, TimeMs: ms, EpochID: events.EpochOf(time.UnixMilli(ms)), ChainID: d.chain, Method: method,
		Payer: d.Payer(), Account: account, Asset: asset, Amount: amount, Calls: n, Upstream: upstream, NodeID: nodeID}, true
}

// FreeStats is the free tier's state today.
type FreeStats struct {
	Date          string
	ActiveIPs     int64
	Calls         int64
	NearLimitIPs  int64
	NearThreshold int64
	Limits        FreeLimits // in force now
}

// Stats reads today's free-tier statistics and the limits in force.
func (m *Meter) Stats(ctx context.Context) (FreeStats, error) {
	date := m.date(m.cfg.Now())
	stats := make([]*redis.SliceCmd, m.layout.N())
	var lims *redis.SliceCmd
	_, err := m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range stats {
			stats[i] = p.HMGet(ctx, m.layout.Shard(i).FreeStats(date), balances.StatIPs, balances.StatCalls, balances.StatNear)
		}
		lims = p.HMGet(ctx, m.layout.FreeConfig(), balances.FreeConfigIP, balances.FreeConfigNet)
		return nil
	})
	if err != nil {
		return FreeStats{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	n := func(v any) int64 {
		s, _ := v.(string)
		x, _ := strconv.ParseInt(s, 10, 64)
		return max(x, 0)
	}
	// Each address is counted on its shard only, so the shards' sums are
	// the day's.
	var ips, calls, near int64
	for _, c := range stats {
		vals := c.Val()
		ips, calls, near = ips+n(vals[0]), calls+n(vals[1]), near+n(vals[2])
	}
	l, _ := m.mergeLimits(lims.Val())
	return FreeStats{Date: date, ActiveIPs: ips, Calls: calls, NearLimitIPs: near,
		NearThreshold: nearThreshold(l.DailyPerIP), Limits: l}, nil
}

// NextReset is the next UTC midnight after t.
func NextReset(t time.Time) time.Time {
	y, mo, d := t.UTC().Date()
	return time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
}

// RetrySeconds rounds a wait up to whole seconds for Retry-After.
func RetrySeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}
