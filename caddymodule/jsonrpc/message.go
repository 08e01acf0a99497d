package jsonrpc

import "encoding/json"

// Defaults for Options' zero values.
const (
	// DefaultMaxBatch is geth's own batch limit: clients batch up to it
	// (viem's http transport packs 1,000 calls by default), so a lower
	// limit breaks them (docs/decisions.md). Every batch item is a metered
	// call, so the limit bounds the work and the Redis script size one
	// HTTP request can cause; upstreams get sub-batches of their size.
	DefaultMaxBatch = 1000

	// DefaultMaxMethodLen bounds method names. The longest real EVM method
	// is under 50 bytes; the bound stops a caller from making the gateway
	// carry megabyte "method names" into logs, metrics labels and error
	// messages.
	DefaultMaxMethodLen = 256

	// DefaultMaxBodyBytes is the request body limit (1 MiB). Reading
	// is the caller's job (http.MaxBytesReader); this is the value to use,
	// and BodyTooLarge builds the matching rejection.
	DefaultMaxBodyBytes = 1 << 20
)

// Options tunes Parse. The zero value means the defaults above.
type Options struct {
	MaxBatch     int // maximum items in a batch; more → HTTP 413
	MaxMethodLen int // maximum method length in bytes; longer → invalid item
}

func (o Options) maxBatch() int {
	if o.MaxBatch > 0 {
		return o.MaxBatch
	}
	return DefaultMaxBatch
}

func (o Options) maxMethodLen() int {
	if o.MaxMethodLen > 0 {
		return o.MaxMethodLen
	}
	return DefaultMaxMethodLen
}

// Message is a parsed request body: a single request or a batch.
type Message struct {
	// Batch reports whether the caller sent an array. It decides the shape of
	// the answer: a batch of one is still answered with an array.
	Batch bool

	// Items are the calls in the caller's order. A single request has exactly
	// one Item, always valid (an invalid single request is a Rejection). A
	// batch may hold invalid items; they keep their position so the answer
	// can report them where the caller put them.
	Items []Item

	one [1]Item // backing store for a single request: saves an allocation
}

// Item is one call of a Message.
type Item struct {
	// ID is the raw id token exactly as the caller wrote it: a string
	// (quotes and escapes included), a number (1, 1.0 and 1e0 stay
	// distinct) or null. It is nil when the id member is absent, which is
	// what makes a request a notification: "id": null is a request whose
	// answer has id null. For an invalid item it is the id if it could be
	// read, else nil (answered as null).
	ID json.RawMessage

	// Method is the decoded method name (valid items only).
	Method string

	// Params is the raw params array or object, nil when absent.
	Params json.RawMessage

	// Err is non-nil when the item is not a valid request; the answer to the
	// item is then exactly this error (code -32600).
	Err *Error
}

// Valid reports whether the item is a well-formed request to be served.
func (it *Item) Valid() bool { return it.Err == nil }

// IsNotification reports whether the item is a valid request without an id.
// The gateway still serves (and meters) it, but sends no answer for it.
func (it *Item) IsNotification() bool { return it.Err == nil && it.ID == nil }

// ResponseID is the id its answer carries: the caller's raw id, or null.
func (it *Item) ResponseID() json.RawMessage {
	if it.ID == nil {
		return nullJSON
	}
	return it.ID
}

// Calls returns the items to serve (valid requests and notifications) and,
// for each, its index in m.Items, so the answers to the forwarded subset can
// be put back at the caller's positions for EncodeAnswer.
func (m *Message) Calls() (calls []Item, index []int) {
	calls = make([]Item, 0, len(m.Items))
	index = make([]int, 0, len(m.Items))
	for i := range m.Items {
		if m.Items[i].Err == nil {
			calls = append(calls, m.Items[i])
			index = append(index, i)
		}
	}
	return calls, index
}
