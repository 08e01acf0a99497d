package meter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// ChannelClosed reports whether the gateway has closed the channel for a
// cooperative refund (CloseChannel): no voucher is drawn from it since, so
// what it charged is final. settlementd refunds no channel that is open.
func (m *Meter) ChannelClosed(ctx context.Context, id string) (bool, error) {
	if !channelIDRe.MatchString(id) {
		return false, ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	n, err := m.cmd.HExists(ctx, l.Channel(id), "closed").Result()
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return n, nil
}

// FollowChain brings a channel's known balance down to what the chain will
// hold: after a payer's withdrawal request, the on-chain balance less the
// pending withdrawal; after a refund or a finished withdrawal, the on-chain
// balance. The known balance only falls here (deposits raise it,
// RecordDeposit), so no voucher above what will remain is drawn from the
// next request on; totalClaimed rises to the chain's. A change is a
// ChannelState event (PostgreSQL keeps it, a rebuild restores it). ok is
// false when this Redis does not know the channel.
func (m *Meter) FollowChain(ctx context.Context, id string, balance, claimed money.Units) (st ChannelState, ok bool, err error) {
	if !channelIDRe.MatchString(id) {
		return ChannelState{}, false, ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	v, err := followScript.Run(ctx, m.rdb, []string{l.Channel(id), l.Stream(0)}, int64(balance), int64(claimed), id, m.cfg.Now().UnixMilli()).Slice()
	if err != nil {
		return ChannelState{}, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if len(v) != 2 || toInt(v[0]) == 0 {
		return ChannelState{}, false, nil
	}
	fs, _ := v[1].([]any)
	return parseChannel(fs), true, nil
}

// followScript lowers a known channel's balance and raises its totalClaimed
// to the chain's (KEYS: 1 channel hash, 2 the shard's stream; ARGV: 1
// balance, 2 totalClaimed, 3 channel id, 4 now ms). Reply: {0} unknown
// channel, else {1, channel fields}.
var followScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local changed = false
if tonumber(redis.call('HGET', KEYS[1], 'bal') or '0') > tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'bal', ARGV[1])
  changed = true
end
if tonumber(redis.call('HGET', KEYS[1], 'claimed') or '0') < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'claimed', ARGV[2])
  changed = true
end
if changed then emitChannel(KEYS[2], KEYS[1], ARGV[3], nil, ARGV[4]) end
return {1, redis.call('HMGET', KEYS[1], 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg')}
`)

// VoidVoucherIfBooked gives back a voucher draw whose reply was lost
// (MaybeBooked: the request was answered 503): when d's Debit is in the
// channel's stream, the channel's charged total goes back down by what it
// took, so what settlementd claims
// — the charged total, not the latest signed voucher — does not include
// it, and the client's next voucher at the old cumulative amount is drawn.
// If the chain has claimed it meanwhile, it cannot be unclaimed: the call
// is given back as a bundle call of the wallet instead. The Refund event (payer "channel") books it in PostgreSQL against the
// Debit. Idempotent per request (the refund guard). found says whether the
// draw had been booked.
func (m *Meter) VoidVoucherIfBooked(ctx context.Context, d *Decision, channelID string) (found bool, err error) {
	if d.ID == "" || d.calls <= 0 || !channelIDRe.MatchString(channelID) {
		return false, errors.New("meter: not a voucher decision")
	}
	// A void settled lets go of the stream it held (ledger.go).
	defer func() {
		if err == nil {
			m.cfg.Retain.releaseVoid(d.ID)
		}
	}()
	shard := m.layout.ShardOfPayer(channelID)
	// No upper bound, as in voidOn: a script Redis ran late is stamped late.
	start := strconv.FormatInt(d.time.Add(-voidBefore).UnixMilli(), 10)
	end := "+"
	for {
		msgs, err := m.cmd.XRangeN(ctx, m.layout.Stream(shard), start, end, 1000).Result()
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		for _, msg := range msgs {
			if msg.Values["t"] != events.TypeDebit {
				continue
			}
			ev, err := events.Decode(msg.Values)
			deb, ok := ev.(*events.Debit)
			if err != nil || !ok || deb.ID != d.ID || deb.Payer != events.PayerChannel {
				continue
			}
			data, err := events.Payload(&events.Refund{ID: d.ID, TimeMs: m.cfg.Now().UnixMilli(), Payer: events.PayerChannel,
				Account: deb.Account, Amount: deb.Amount, Calls: deb.Calls})
			if err != nil {
				return true, err
			}
			l := m.layout.Shard(shard)
			code, err := voidVoucherScript.Run(ctx, m.rdb, []string{l.Stream(0), l.RefundGuard(d.ID), l.Channel(channelID)},
				int64(deb.Amount), events.TypeRefund, events.Version, data, int64(refundGuardTTL/time.Second), channelID,
				m.cfg.Now().UnixMilli()).Int()
			if err != nil {
				return true, fmt.Errorf("%w: void voucher: %v", ErrUnavailable, err)
			}
			if code == 2 {
				// A claim reached the chain before the void (settlementd
				// holds back claims of fresh draws, so only a long
				// outage gets here): the money is the receiver's now, so
				// the call is given back as a bundle call of the wallet,
				// as a call the upstream failed is.
				booked := *d
				booked.shard, booked.Outcome, booked.Wallet = shard, Bundle, deb.Account
				booked.calls, booked.amount = deb.Calls, deb.Amount
				return true, m.Refund(ctx, &booked, deb.Calls)
			}
			return true, nil
		}
		if len(msgs) < 1000 {
			return false, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// voidVoucherScript lowers a channel's charged total by a voided draw's
// amount (not below its known totalClaimed) and records the Refund, once
// per request (KEYS: 1 the shard's stream, 2 the request's refund guard, 3
// the channel hash; ARGV: 1 amount, 2 event type, 3 event version, 4 refund
// payload, 5 guard TTL s, 6 channel id, 7 now ms). Reply: 1 voided, 0
// voided before, 2 the chain has claimed it already (nothing changed).
var voidVoucherScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local charged = tonumber(redis.call('HGET', KEYS[3], 'charged') or '0')
local floor = tonumber(redis.call('HGET', KEYS[3], 'claimed') or '0')
local new = charged - tonumber(ARGV[1])
if new < floor then return 2 end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[5])
redis.call('HSET', KEYS[3], 'charged', new)
emitChannel(KEYS[1], KEYS[3], ARGV[6], nil, ARGV[7])
redis.call('XADD', KEYS[1], '*', 't', ARGV[2], 'v', ARGV[3], 'd', ARGV[4])
return 1
`)

// ChannelLastDraw is when a voucher was last drawn on the channel (zero if
// never): settlementd's claims hold back a draw that a lost reply may still
// void.
func (m *Meter) ChannelLastDraw(ctx context.Context, id string) (time.Time, error) {
	if !channelIDRe.MatchString(id) {
		return time.Time{}, ErrBadChannel
	}
	l := m.layout.Shard(m.layout.ShardOfPayer(id))
	v, err := m.cmd.HGet(ctx, l.Channel(id), "ts").Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}
