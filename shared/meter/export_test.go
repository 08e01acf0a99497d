package meter

// AsUnanswered is d as a caller holds it when the metering script's reply
// was lost (Authorize returned an error): the request's id, time and calls,
// but no outcome and no charge. VoidIfBooked must price the refund from the
// Debit event it finds, not from the decision.
func AsUnanswered(d Decision) Decision {
	d.Outcome, d.amount, d.Balance, d.Account = 0, 0, 0, ""
	return d
}
