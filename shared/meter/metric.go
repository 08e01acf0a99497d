package meter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// ReasonCredits is Decision.Reason of a metric call refused for want of
// credits (metrics are paid from credits only, never from the free tier).
const ReasonCredits = "credits"

// AuthorizeMetric decides and books one paid intelligence call at price
// units (req.Calls and req.ChainID are ignored: one call, chain 137;
// req.Method labels the revenue event), with the same script — one round trip — as Authorize: the key
// lookup and its rate, the debit of the balance and the Debit event. The
// free tier does not pay for metrics: the script is handed a free-tier
// limit of zero (and a limits key no operator writes), so a caller without
// a key, or whose balance is short, gets PaymentRequired with Reason
// ReasonCredits. Refund with RefundMetric; the revenue event is
// d.Revenue(…) with Amount d.Amount(). The events carry the default chain
// (137), where credits are deposited.
func (m *Meter) AuthorizeMetric(ctx context.Context, req Request, price money.Units) (Decision, error) {
	keyHash := req.KeyHash
	now := m.cfg.Now()
	ipKey, netKey := Subjects(req.IP)
	d := Decision{ID: NewRequestID(), calls: 1, time: now, chain: chains.Default, method: req.Method, date: m.date(now), ipKey: ipKey, netKey: netKey}
	if price <= 0 {
		return d, errors.New("meter: a metric needs a positive price")
	}
	ms := now.UnixMilli()
	d.ipShard = m.layout.ShardOfIP(netKey)
	enc := func(c *scriptCall, id, _ string) error {
		c.paid, c.free, c.bundle = "", "", ""
		if keyHash != "" {
			paid, err := events.Encode(&events.Debit{ID: id, TimeMs: ms, ChainID: chains.Default, Payer: events.PayerCredits,
				Account: placeholder, Asset: events.AssetUSDT, Amount: price, Calls: 1})
			if err != nil {
				return err
			}
			c.paid = paid[5]
		}
		return nil
	}
	c := scriptCall{ms: ms, keyHash: keyHash, freeConfig: m.layout.Shard(d.ipShard).Prefix + "config:metric-no-free", calls: 1,
		unitPrice: price, freeDaily: 0, freeSubnet: 0}
	return m.authorize(ctx, &d, c, enc, func(d *Decision, res []any, code int64) error {
		switch code {
		case 1:
			d.Outcome, d.amount = Paid, price
			d.Balance = money.Units(toInt(res[1]))
			d.Account, _ = res[2].(string)
		case 3:
			d.Outcome, d.Reason = PaymentRequired, ReasonCredits
			if a, _ := res[2].(string); a != "" {
				d.Account = a
			}
			d.Limits = m.configLimits() // for the onboarding's free-tier note: RPC's limits
		default: // 2 (free) cannot happen with a zero limit
			return fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
		}
		return nil
	})
}

// RefundMetric gives back a paid metric call that could not be served, with
// its Refund event; idempotent per request like Refund.
func (m *Meter) RefundMetric(ctx context.Context, d *Decision) error {
	if d.Outcome != Paid || d.calls != 1 {
		return errors.New("meter: only a paid metric call is refunded here")
	}
	ev := &events.Refund{ID: d.ID, TimeMs: m.cfg.Now().UnixMilli(), Payer: events.PayerCredits, Account: d.Account, Amount: d.amount, Calls: 1}
	data, err := events.Payload(ev)
	if err != nil {
		return err
	}
	l := m.layout.Shard(d.shard)
	keys := []string{l.Stream(0), l.RefundGuard(d.ID), l.AccountPrefix() + d.Account + "}"}
	xid, err := refundScript.Run(ctx, m.rdb, keys, "credits", int64(d.amount), 1, events.TypeRefund, events.Version,
		data, nearThreshold(d.Limits.DailyPerIP), int64(refundGuardTTL/time.Second)).Result()
	if err != nil {
		return fmt.Errorf("%w: refund: %v", ErrUnavailable, err)
	}
	m.keepRefund(d.shard, xid, data, factCreditsRefund, d.Account, int64(d.amount))
	return nil
}
