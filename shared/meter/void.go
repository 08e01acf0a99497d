package meter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// MaybeBooked reports whether a failed Authorize (err wraps ErrUnavailable)
// may still have booked its request: the script was sent and Redis died (or
// the reply timed out) before the answer came back. A connection that was
// never made booked nothing, nor did a call the auto-pipeline never sent
// (its caller's deadline came while it was queued): under load a stalled
// Redis leaves thousands of those, and a void started for each would take
// the void slots (payment.voidLater) the calls that did run need; nor did
// one that found no free connection in the pool. Such a request was answered 503, so its debit,
// if any, must be given back: see VoidIfBooked.
func MaybeBooked(err error) bool {
	if err == nil || !errors.Is(err, ErrUnavailable) || errors.Is(err, errNeverSent) || errors.Is(err, redis.ErrPoolTimeout) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return true
}

// voidBefore is how far before the decision's time the request's Debit can
// be in the stream (stream ids are Redis's clock, NTP-synced with the
// gateway's). There is no bound after it: a script sent before the reply
// was lost runs whenever Redis reads it — a Redis stalled by a slow fsync,
// a paused VM or a SIGSTOP runs it seconds to minutes later, stamped with
// its clock then — so a look searches up to the newest entry, which is
// after the script whenever the script ran before the look.
const voidBefore = 2 * time.Second

// VoidIfBooked gives back whatever Authorize booked for d although the
// gateway never learned the outcome (MaybeBooked): it looks for d's Debit in
// the stream from just before d's time to the newest entry and, when it is
// there, refunds all its calls with Refund — idempotent per request, so running it twice, or after a
// refund, changes nothing. found says whether a debit was booked. Redis
// errors wrap ErrUnavailable; the caller retries once Redis answers.
func (m *Meter) VoidIfBooked(ctx context.Context, d *Decision) (found bool, err error) {
	if d.ID == "" || d.calls <= 0 {
		return false, errors.New("meter: not a decision of Authorize")
	}
	// A void settled lets go of the stream it held (ledger.go).
	defer func() {
		if err == nil {
			m.cfg.Retain.releaseVoid(d.ID)
		}
	}()
	// The Debit is on the payer's shard or on the address's.
	for _, shard := range []int{d.shard, d.ipShard} {
		found, err := m.voidOn(ctx, d, shard)
		if found || err != nil || d.ipShard == d.shard {
			return found, err
		}
	}
	return false, nil
}

func (m *Meter) voidOn(ctx context.Context, d *Decision, shard int) (found bool, err error) {
	start := strconv.FormatInt(d.time.Add(-voidBefore).UnixMilli(), 10)
	for {
		msgs, err := m.cmd.XRangeN(ctx, m.layout.Stream(shard), start, "+", 1000).Result()
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		for _, msg := range msgs {
			if msg.Values["t"] != events.TypeDebit {
				continue
			}
			ev, err := events.Decode(msg.Values)
			deb, ok := ev.(*events.Debit)
			if err != nil || !ok || deb.ID != d.ID {
				continue
			}
			booked := *d
			booked.shard = shard
			switch deb.Payer {
			case events.PayerCredits:
				booked.Outcome, booked.Account = Paid, deb.Account
			case events.PayerBundle, events.PayerChannel:
				// A voucher's draw is refunded as a bundle call of
				// its wallet, as Finish refunds it.
				booked.Outcome, booked.Wallet = Bundle, deb.Account
			default:
				booked.Outcome, booked.Account = Free, deb.Account
			}
			// The refund gives back what the debit took.
			booked.calls, booked.amount = deb.Calls, deb.Amount
			return true, m.Refund(ctx, &booked, deb.Calls)
		}
		if len(msgs) < 1000 {
			return false, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}
