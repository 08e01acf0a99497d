package meter

import "time"

// AsUnanswered is d as a caller holds it when the metering script's reply
// was lost (Authorize returned an error): the request's id, time and calls,
// but no outcome and no charge. VoidIfBooked must price the refund from the
// Debit event it finds, not from the decision.
func AsUnanswered(d Decision) Decision {
	d.Outcome, d.amount, d.Balance, d.Account = 0, 0, 0, ""
	return d
}

// SeenRun makes p believe it last saw shard s on the Redis process run
// (a test plays a promoted replica without restarting Redis).
func (p *Replayer) SeenRun(s int, run string) { p.state[s].run = run }

// SetHold changes how long p keeps facts settlementd has stored (AckHold).
func (p *Replayer) SetHold(d time.Duration) { p.hold = d }

// HoldVoid plays a request whose metering reply was lost on shard at ms.
func (r *Retention) HoldVoid(shard int, id string, ms int64) { r.holdVoid(shard, id, ms) }

// ReleaseVoid plays its void settled.
func (r *Retention) ReleaseVoid(id string) { r.releaseVoid(id) }
