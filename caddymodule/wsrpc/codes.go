package wsrpc

// Close codes a socket ends with. 1000-1011 are RFC 6455's; the 4xxx codes
// are the gateway's own (RFC 6455 leaves 4000-4999 to applications), each
// the HTTP status of the same refusal plus 4000 where one exists.
const (
	CloseNormal       = 1000 // the client closed, or eth_unsubscribe'd and closed
	CloseGoingAway    = 1001 // the gateway reloads its configuration or shuts down: reconnect
	CloseTooBig       = 1009 // a message larger than the gateway's max body
	CloseInternal     = 1011 // a subscription ended for a reason the client cannot fix
	CloseSlowReader   = 4008 // the client did not read: its send buffer filled up
	CloseUnauthorized = 4401 // the API key became unknown or was revoked
	CloseNoPayment    = 4402 // the payer can no longer pay for notifications (credits, free tier)
	CloseIdle         = 4408 // no subscription and no message for idle_timeout
	CloseRateLimited  = 4429 // the payer's rate limit refused a notification
	CloseMeterDown    = 4503 // metering unavailable: nothing can be paid for, so nothing is delivered
)

// CloseCodes documents the codes (service.json lists them).
var CloseCodes = map[int]string{
	CloseNormal:       "normal closure",
	CloseGoingAway:    "the gateway reloads or shuts down; reconnect",
	CloseTooBig:       "a message was larger than the gateway's maximum body",
	CloseInternal:     "a subscription's upstream ended it",
	CloseSlowReader:   "slow reader: the client's send buffer filled up",
	CloseUnauthorized: "the API key is unknown or was revoked",
	CloseNoPayment:    "payment required: the payer cannot pay for the next notification (a tollgate_closing message with the 402 onboarding precedes it)",
	CloseIdle:         "idle: no subscription and no message for the idle timeout",
	CloseRateLimited:  "the payer's rate limit refused a notification",
	CloseMeterDown:    "metering unavailable; retry shortly",
}

// closeFor maps the HTTP status of a refused notification to its close code.
func closeFor(status int) int {
	switch status {
	case 401:
		return CloseUnauthorized
	case 402:
		return CloseNoPayment
	case 429:
		return CloseRateLimited
	}
	return CloseMeterDown
}
