package core

import (
	"context"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Ticket closes the books of one charged call: revenue for by when
// delivered, a refund when not. credit, when set, takes the upstream's one
// credit for a fanned-out message.
type Ticket func(by events.ServedBy, delivered bool, credit func() bool)

// Charge books one call of method on cs for caller, the way Serve books a
// request's calls (the same payers, order, rate limits and refusals), and
// returns the ticket that closes the books, or the typed refusal, which the
// door renders. It is how a subscription's notifications are paid for.
// Without metering every ticket is free.
func (c *Core) Charge(ctx context.Context, caller *payment.Caller, cs *Chain, method string) (Ticket, *payment.Refusal) {
	if c.Payers == nil || cs == nil {
		return func(events.ServedBy, bool, func() bool) {}, nil
	}
	msg := &jsonrpc.Message{Items: []jsonrpc.Item{{ID: []byte("1"), Method: method}}}
	calls, _ := msg.Calls()
	units := cs.units(calls, nil)
	// A socket has no headers to send once open: what a payer hands the
	// caller (a request id, remaining credits) is not sent.
	d, ref := c.Payers.Authorize(ctx, caller, nil, cs.ID, msg, calls, units)
	if ref != nil {
		return nil, ref
	}
	// A copy that pays: a free copy earns no one anything, so it must not
	// take the upstream's one credit for a fanned-out message (strangers
	// on the free tier would take a node's earnings by delivery order).
	pays := d.Outcome == meter.Bundle || (d.Outcome == meter.Paid && d.Amount() > 0)
	return func(by events.ServedBy, delivered bool, credit func() bool) {
		failed := 0
		if !delivered {
			failed = units
		}
		if delivered && credit != nil && (!pays || !credit()) {
			by = events.ServedByFanout
		}
		c.Payers.Settle(ctx, nil, &d, []meter.Served{{By: by, Units: units - failed}}, failed)
	}, nil
}
