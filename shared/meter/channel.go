package meter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Reasons of a PaymentRequired decision on the batch-settlement path; they
// are the scheme's error codes, so the official client's corrective
// handling recognises the mismatch.
const (
	ReasonChannelUnknown     = "invalid_batch_settlement_evm_missing_channel"
	ReasonCumulativeMismatch = "invalid_batch_settlement_evm_cumulative_amount_mismatch"
	ReasonOverDeposit        = "invalid_batch_settlement_evm_cumulative_exceeds_balance"
	// ReasonChannelRefunded is ours (the scheme's server forgets a refunded
	// channel and answers missing_channel): a voucher on a channel a
	// cooperative refund closed; a new deposit reopens it.
	ReasonChannelRefunded = "invalid_batch_settlement_evm_channel_refunded"
)

// channelIDRe is the channel id form channels are keyed by.
var channelIDRe = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

// ErrBadChannel is returned for a channel id that is not lower-case 0x hex of 32 bytes.
var ErrBadChannel = errors.New("meter: channel id must be lower-case 0x hex of 32 bytes")

// ChannelState is what the gateway knows of a batch-settlement channel.
type ChannelState struct {
	Wallet    string      // payer, lower-case 0x hex
	Balance   money.Units // the channel's on-chain balance as last reported by the facilitator
	Claimed   money.Units // on-chain totalClaimed as last reported
	Charged   money.Units // chargedCumulativeAmount: what vouchers drawn so far add up to
	Signed    money.Units // the latest voucher's maxClaimableAmount (== Charged at the flat price)
	Signature string      // its signature, 0x hex
	Config    string      // the channel config (JSON) the claims need
}

func parseChannel(v []any) ChannelState {
	s := func(i int) string {
		if i < len(v) {
			if x, ok := v[i].(string); ok {
				return x
			}
		}
		return ""
	}
	n := func(i int) money.Units { x, _ := strconv.ParseInt(s(i), 10, 64); return money.Units(x) }
	return ChannelState{Wallet: s(0), Balance: n(1), Claimed: n(2), Charged: n(3), Signed: n(4), Signature: s(5), Config: s(6)}
}

var channelFields = []string{"w", "bal", "claimed", "charged", "signed", "sig", "cfg"}

// Channel reads a channel's state; ok is false when the gateway does not know it.
func (m *Meter) Channel(ctx context.Context, id string) (ChannelState, bool, error) {
	if !channelIDRe.MatchString(id) {
		return ChannelState{}, false, ErrBadChannel
	}
	v, err := m.cmd.HMGet(ctx, m.layout.Channel(id), channelFields...).Result()
	if err != nil {
		return ChannelState{}, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if v[0] == nil {
		return ChannelState{}, false, nil
	}
	return parseChannel(v), true, nil
}

// ChannelDeposit is a deposit the facilitator made on chain, with the
// channel's state it read after it.
type ChannelDeposit struct {
	ChannelID string      // lower-case 0x hex
	Wallet    string      // payer, lower-case 0x hex
	Config    string      // channel config JSON, kept for the claims
	TxHash    string      // the deposit transaction (the record's idempotency key)
	Balance   money.Units // on-chain balance after the deposit
	Claimed   money.Units // on-chain totalClaimed
}

// RecordDeposit makes a deposit known to the hot path: the channel's known
// balance becomes the on-chain balance read after it (never lower), once
// per transaction. A channel the gateway did not know starts charging from
// the on-chain totalClaimed (the scheme's baseline after state loss). While
// Redis is being rebuilt after a loss nothing is recorded and the error
// wraps ErrUnavailable: the rebuild restores the channel from PostgreSQL
// first, and the payment retried then finds the same deposit.
func (m *Meter) RecordDeposit(ctx context.Context, dep ChannelDeposit) (ChannelState, error) {
	if !channelIDRe.MatchString(dep.ChannelID) {
		return ChannelState{}, ErrBadChannel
	}
	if !walletRe.MatchString(dep.Wallet) {
		return ChannelState{}, ErrBadWallet
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(dep.ChannelID))
	v, err := depositScript.Run(ctx, m.rdb, []string{l.Channel(dep.ChannelID), l.ChannelDeposits(dep.ChannelID), l.Channels(), l.Stream(0), l.Generation()},
		dep.TxHash, int64(dep.Balance), int64(dep.Claimed), dep.Wallet, dep.Config, dep.ChannelID, m.cfg.Now().UnixMilli()).Slice()
	if err != nil {
		return ChannelState{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return parseChannel(v), nil
}

// Voucher is a batch-settlement voucher checked offline (signature, channel).
type Voucher struct {
	ChannelID  string      // lower-case 0x hex
	Wallet     string      // the channel's payer, lower-case 0x hex
	Cumulative money.Units // maxClaimableAmount
	Signature  string      // 0x hex
}

// AuthorizeVoucher draws a request's calls from a batch-settlement channel
// in one script call: the caller's IP rate, the channel known, the
// voucher's cumulative amount exactly what was charged so far plus this
// request's price at the flat per-call price (so the same voucher twice, or
// an older one, is refused), within the deposit the gateway knows; then the
// voucher is stored as the channel's latest and the Debit event appended.
// The decision is a Bundle decision of the wallet, so revenue and epochs
// count it as bundle calls; its Debit's payer is PayerChannel, as the calls
// come from the channel's deposit, not from the wallet's bundle. Outcomes:
// Bundle, PaymentRequired (ReasonChannelUnknown, ReasonCumulativeMismatch,
// ReasonOverDeposit; the channel state is returned for the corrective 402),
// RateLimited.
func (m *Meter) AuthorizeVoucher(ctx context.Context, req Request, v Voucher) (Decision, ChannelState, error) {
	now := m.cfg.Now()
	d := m.newDecision(req, now)
	d.Wallet = v.Wallet
	if req.Calls <= 0 {
		return d, ChannelState{}, errors.New("meter: a request without calls is not metered")
	}
	if !channelIDRe.MatchString(v.ChannelID) {
		return d, ChannelState{}, ErrBadChannel
	}
	if !walletRe.MatchString(v.Wallet) {
		return d, ChannelState{}, ErrBadWallet
	}
	ms := now.UnixMilli()
	price := money.BundleCallRevenue * money.Units(req.Calls)
	data, err := events.Payload(bundleDebit(d.ID, ms, req.ChainID, events.PayerChannel, v.Wallet, req.Calls))
	if err != nil {
		return d, ChannelState{}, err
	}
	d.shard = m.layout.ShardOfPayer(v.ChannelID)
	l := m.layout.Shard(d.shard)
	draw := &run{script: voucherScript, keys: []string{l.Stream(0), l.Channel(v.ChannelID), l.Requests(d.date), l.Generation()},
		args: []any{ms, req.Calls, int64(price), int64(v.Cumulative), v.Signature, v.Wallet, events.TypeDebit, events.Version, data,
			int64(dayTTL / time.Second), v.ChannelID, m.cfg.Retain.Floor(d.shard)}, wait: true, seqShard: d.shard + 1, id: d.ID, ms: ms}
	gate := m.gateRun(d.ipShard, d.ipKey, ms)
	m.exec(ctx, draw, gate)
	if draw.err != nil {
		return d, ChannelState{}, draw.err
	}
	res := draw.res
	var st ChannelState
	if len(res) > 2 {
		if fs, ok := res[2].([]any); ok {
			st = parseChannel(fs)
		}
	}
	code := toInt(res[0])
	if code != 1 && gate.err == nil && gate.code == 4 {
		// A refused voucher from an address over its rate is a 429; a
		// drawn one is paid and served (shard.go).
		code, res = 4, gate.res
	}
	switch code {
	case 1:
		d.Outcome = Bundle
		d.BundleLeft = int64((st.Balance - st.Charged) / money.BundleCallRevenue)
		if len(res) >= 6 {
			// The draw's Debit and the channel's new state (the voucher's
			// amount and signature exist nowhere else) are kept until
			// settlementd has them (retain.go).
			dxid, _ := res[3].(string)
			cxid, _ := res[4].(string)
			cdata, _ := res[5].(string)
			m.cfg.Retain.keep(d.shard, fact{xid: dxid, data: data, typ: events.TypeDebit, payer: v.ChannelID})
			m.cfg.Retain.keep(d.shard, fact{xid: cxid, data: cdata, typ: events.TypeChannelState, kind: factChannelState, payer: v.ChannelID})
		}
	case 4:
		d.Outcome, d.RetryAfter = RateLimited, time.Duration(toInt(res[1]))*time.Millisecond
	case 8:
		// Redis lost its data and the channel may just not be rebuilt
		// yet: a "missing channel" now would send the client to a new
		// deposit that resets what it was charged.
		d.Outcome, d.Reason, d.RetryAfter = Recovering, ReasonRecovering, RecoveryRetryAfter
	case 9:
		d.Outcome, d.Reason = PaymentRequired, ReasonChannelUnknown
	case 10:
		d.Outcome, d.Reason = PaymentRequired, ReasonCumulativeMismatch
	case 11:
		d.Outcome, d.Reason = PaymentRequired, ReasonOverDeposit
	case 12:
		d.Outcome, d.Reason = PaymentRequired, ReasonChannelRefunded
	default:
		return d, st, fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
	}
	d.Limits = m.configLimits()
	return d, st, nil
}

// Channels lists the channels with recorded deposits (settlementd claims their vouchers).
func (m *Meter) Channels(ctx context.Context) ([]string, error) {
	cmds := make([]*redis.StringSliceCmd, m.layout.N())
	_, err := m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = p.SMembers(ctx, m.layout.Shard(i).Channels())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var ids []string
	for _, c := range cmds {
		ids = append(ids, c.Val()...)
	}
	return ids, nil
}

// RecordChannel appends a channel's whole state, as Redis holds it now, to
// its shard's stream (recordChannelScript); false when Redis does not hold
// the channel. settlementd calls it for the channels PostgreSQL has no state
// of, so a Redis loss cannot take them.
func (m *Meter) RecordChannel(ctx context.Context, id string) (bool, error) {
	if !channelIDRe.MatchString(id) {
		return false, ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	n, err := recordChannelScript.Run(ctx, m.rdb, []string{l.Channel(id), l.ChannelDeposits(id), l.Stream(0)}, id, m.cfg.Now().UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return n == 1, nil
}

// MarkClaimed raises a channel's known totalClaimed to claimed (never lowers it).
func (m *Meter) MarkClaimed(ctx context.Context, id string, claimed money.Units) error {
	if !channelIDRe.MatchString(id) {
		return ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	if err := claimedScript.Run(ctx, m.rdb, []string{l.Channel(id), l.Stream(0)}, int64(claimed), id, m.cfg.Now().UnixMilli()).Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// CloseChannel closes a channel for a cooperative refund, in one script: the
// channel must be known and the wallet's, and the refund voucher's amount
// exactly the charged total. From then on vouchers on it are refused
// (ReasonChannelRefunded) until a new deposit, so what the facilitator
// claims before refunding is final. reason is "" when it closed, else
// ReasonChannelUnknown, ReasonRecovering (unknown while Redis is not
// rebuilt yet) or ReasonCumulativeMismatch; the state is returned either
// way.
func (m *Meter) CloseChannel(ctx context.Context, id, wallet string, voucher money.Units) (ChannelState, string, error) {
	if !channelIDRe.MatchString(id) {
		return ChannelState{}, "", ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	res, err := closeScript.Run(ctx, m.rdb, []string{l.Channel(id), l.Stream(0), l.Generation()}, wallet, int64(voucher), id, m.cfg.Now().UnixMilli()).Slice()
	if err != nil || len(res) != 2 {
		return ChannelState{}, "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	fs, _ := res[1].([]any)
	st := parseChannel(fs)
	switch toInt(res[0]) {
	case 1:
		return st, "", nil
	case 8:
		return st, ReasonRecovering, nil
	case 9:
		return st, ReasonChannelUnknown, nil
	default:
		return st, ReasonCumulativeMismatch, nil
	}
}

// RefundDone records a cooperative refund's outcome on a closed channel:
// the on-chain balance (negative: unchanged) and totalClaimed read after
// it. reopen lets vouchers draw again: after a partial refund, or when the
// refund failed and nothing moved.
func (m *Meter) RefundDone(ctx context.Context, id string, balance, claimed money.Units, reopen bool) error {
	if !channelIDRe.MatchString(id) {
		return ErrBadChannel
	}
	r := "0"
	if reopen {
		r = "1"
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	if err := refundedScript.Run(ctx, m.rdb, []string{l.Channel(id), l.Stream(0)}, int64(balance), int64(claimed), r, id, m.cfg.Now().UnixMilli()).Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}
