// Package events defines the records the gateway writes to the Redis stream and
// settlementd persists to Postgres, and their stream encoding. Both binaries
// import it so the two sides can never disagree on a field.
//
// A stream entry has three fields: "t" (event type), "v" (schema version) and
// "d" (the JSON payload); a packed entry also has "n" and holds several
// events of one type (pack.go). Every payload carries its own id, generated
// by the writer, which is the idempotency key in Postgres: a re-delivered or
// re-claimed entry is stored once.
package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Stream is the default Redis stream key for all events.
const Stream = "tollgate:events"

// Version is the schema version written in every entry.
const Version = "1"

// EpochSeconds is the length of a settlement epoch.
const EpochSeconds = 60

// EpochOf returns the epoch id of a moment: floor(unix seconds / 60).
func EpochOf(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - EpochSeconds + 1) / EpochSeconds
	}
	return s / EpochSeconds
}

// Event is anything that travels on the stream.
type Event interface {
	EventType() string
	EventID() string
	Validate() error
}

// Payer says how a call was paid.
type Payer string

const (
	PayerCredits Payer = "credits" // prepaid USDT balance of an API key
	PayerBundle  Payer = "bundle"  // x402 USDC bundle of a wallet
	PayerFree    Payer = "free"    // IP free tier; amount is 0

	// PayerChannel is the payer of a Debit drawn from an x402
	// batch-settlement channel: the wallet's deposit held by the escrow
	// contract, not its bundle, so it has no ledger row (the channel's
	// state is kept in x402_channels) and a bundle rebuilt after a Redis
	// loss does not count it as used. The request's Revenue and the Refund
	// of a call the upstream failed are bundle calls of the wallet (a
	// failed call is given back as a bundle call, as the voucher's
	// cumulative amount cannot be signed back down). A draw voided after a
	// lost Redis reply is a Refund of payer "channel": the channel's
	// charged total goes back down, so it is never claimed
	// (meter.VoidVoucherIfBooked); it has no ledger row either.
	PayerChannel Payer = "channel"
)

// Asset of a revenue amount; USDC is accounted at par with USDT.
const (
	AssetUSDT = "USDT"
	AssetUSDC = "USDC"
)

// TypeRevenue is the type of a Revenue event.
const TypeRevenue = "revenue"

// MaxMethodLen bounds Revenue.Method.
const MaxMethodLen = 64

// MethodBatch is Revenue.Method of a batch whose calls name different methods.
const MethodBatch = "batch"

// Revenue is one processed request (a batch counts as one request carrying
// Calls calls): the original specification's revenue_event. Amount is what the caller paid for
// the calls that were served (its debit minus any refund), in base units.
// It is written after the upstream answered, so it names who served it;
// epochs sum these, and node shares are proportional to Amount per NodeID.
//
// EpochID is always EpochOf(Time()); Method is the request's JSON-RPC method
// as a bounded label (the gateway's well-known names, "other", or
// MethodBatch for a mixed batch). Entries written before these fields
// existed decode with EpochID derived from ts and Method "".
type Revenue struct {
	ID       string      `json:"id"`
	TimeMs   int64       `json:"ts"` // unix milliseconds when the request was served
	EpochID  int64       `json:"epoch_id"`
	ChainID  uint64      `json:"chain_id"`
	Method   string      `json:"method"`
	Payer    Payer       `json:"payer"`
	Account  string      `json:"account,omitempty"` // key_… for credits, 0x wallet for bundles
	Asset    string      `json:"asset"`
	Amount   money.Units `json:"amount_units,string"`
	Calls    int         `json:"calls"`
	Upstream string      `json:"upstream"`          // provider name, node id, "cache" or "fanout"
	NodeID   string      `json:"node_id,omitempty"` // set when a registered node served it
}

func (r *Revenue) EventType() string { return TypeRevenue }
func (r *Revenue) EventID() string   { return r.ID }

// Time returns the serving time.
func (r *Revenue) Time() time.Time { return time.UnixMilli(r.TimeMs).UTC() }

// UnmarshalJSON decodes a revenue payload; an entry without epoch_id (written
// before the field existed) gets the epoch of its ts.
func (r *Revenue) UnmarshalJSON(b []byte) error {
	// One pass over the payload (settlementd decodes every entry): an
	// epoch_id absent or null leaves the sentinel in place.
	type plain Revenue
	r.EpochID = noEpoch
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.EpochID == noEpoch {
		r.EpochID = 0
		if r.TimeMs > 0 {
			r.EpochID = EpochOf(r.Time())
		}
	}
	return nil
}

// noEpoch marks "no epoch_id in the payload" while decoding a Revenue. No
// real epoch is near it (EpochOf of any representable time is far above).
const noEpoch = math.MinInt64

// validMethod: a bounded label of letters, digits and underscores ("" for
// entries older than the field).
func validMethod(m string) bool {
	if len(m) > MaxMethodLen {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Validate rejects records that settlement must never book.
func (r *Revenue) Validate() error {
	switch {
	case r.ID == "" || len(r.ID) > 64:
		return errors.New("revenue: id missing or too long")
	case r.TimeMs <= 0:
		return errors.New("revenue: ts missing")
	case r.EpochID != EpochOf(r.Time()):
		return fmt.Errorf("revenue: epoch_id %d is not the epoch of ts (%d)", r.EpochID, EpochOf(r.Time()))
	case r.ChainID == 0:
		return errors.New("revenue: chain_id missing")
	case !validMethod(r.Method):
		return fmt.Errorf("revenue: method %.80q is not a label of at most %d letters, digits and underscores", r.Method, MaxMethodLen)
	case r.Amount < 0:
		return errors.New("revenue: negative amount")
	case r.Calls <= 0:
		return errors.New("revenue: calls must be positive")
	case r.Asset != AssetUSDT && r.Asset != AssetUSDC:
		return fmt.Errorf("revenue: unknown asset %q", r.Asset)
	}
	switch r.Payer {
	case PayerCredits:
		if r.Account == "" {
			return fmt.Errorf("revenue: %s payment without account", r.Payer)
		}
	case PayerBundle:
		if !ValidWallet(r.Account) {
			return fmt.Errorf("revenue: bundle payment account %.80q is not a lower-case 0x wallet", r.Account)
		}
	case PayerFree:
		if r.Amount != 0 {
			return errors.New("revenue: free call with an amount")
		}
	default:
		return fmt.Errorf("revenue: unknown payer %q", r.Payer)
	}
	return nil
}

// MaxWalletHexLen bounds the hex digits of a wallet (an address has 40).
const MaxWalletHexLen = 40

// ValidWallet reports whether s is a wallet as bundles are keyed by it: "0x"
// and 1 to MaxWalletHexLen lower-case hex digits. The gateway writes full
// addresses; the Redis bundle hash and the ledger account are named by this
// exact string, so a mixed-case spelling would name a second bundle.
func ValidWallet(s string) bool {
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok || hex == "" || len(hex) > MaxWalletHexLen {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decoders maps a type to a constructor; later event kinds register here.
var decoders = map[string]func() Event{
	TypeRevenue: func() Event { return new(Revenue) },
}

// Register adds an event type to the decoder table. It is meant for init().
func Register(typ string, mk func() Event) {
	if _, dup := decoders[typ]; dup {
		panic("events: duplicate type " + typ)
	}
	decoders[typ] = mk
}

// Encode returns the XADD field/value list of an event.
func Encode(e Event) ([]any, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if d, ok := encodeFlat(e); ok {
		return []any{"t", e.EventType(), "v", Version, "d", d}, nil
	}
	d, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", e.EventType(), err)
	}
	return []any{"t", e.EventType(), "v", Version, "d", string(d)}, nil
}

// ServedBy is who served a request's calls, as the revenue event records
// it (Revenue.Upstream, Revenue.NodeID): a configured provider by name, a
// registered node (Upstream is its id too), the gateway's edge cache or its
// intelligence data. It is the one form "who served" takes from the
// upstream pool to the epoch's split.
type ServedBy struct {
	Upstream string
	NodeID   string
}

// Servers that are not upstreams. ServedByFanout is the gateway's copy of
// an upstream's subscription notification to a further subscriber: the
// upstream (its node) earns once per message it sent, the fan-out is the
// platform's.
var (
	ServedByCache        = ServedBy{Upstream: "cache"}
	ServedByIntelligence = ServedBy{Upstream: "intelligence"}
	ServedByFanout       = ServedBy{Upstream: "fanout"}
)

// Payload is the "d" field of an event's stream entry: the metering scripts
// append it with the type and Version themselves (XADD in the same script
// as the balance change), so only this package knows how an event is
// encoded.
func Payload(e Event) (string, error) {
	enc, err := Encode(e)
	if err != nil {
		return "", err
	}
	return enc[5].(string), nil
}

// ErrUnknownType is returned for entries of a type this build does not know;
// the consumer parks them instead of dropping them.
var ErrUnknownType = errors.New("unknown event type")

// Decode parses the fields of a single-event stream entry (as go-redis
// returns them); a packed entry is an error (DecodeEntry reads both).
func Decode(values map[string]any) (Event, error) {
	if _, packed := values["n"]; packed {
		return nil, errors.New("a packed entry holds several events")
	}
	typ, _ := values["t"].(string)
	ver, _ := values["v"].(string)
	data, _ := values["d"].(string)
	return DecodeFields(typ, ver, data)
}

// DecodeEntry parses the fields of any stream entry (as go-redis returns
// them) into its events: one, or several when it is packed.
func DecodeEntry(values map[string]any) ([]Event, error) {
	s := func(k string) string { v, _ := values[k].(string); return v }
	return AppendDecoded(nil, s("t"), s("v"), s("n"), s("d"))
}

// DecodeFields is Decode given the entry's "t", "v" and "d" fields (empty
// when absent), for a reader that has them without a map.
func DecodeFields(typ, ver, data string) (Event, error) {
	if ver != Version {
		return nil, fmt.Errorf("event version %q: %w", ver, ErrUnknownType)
	}
	mk, ok := decoders[typ]
	if !ok {
		return nil, fmt.Errorf("event type %q: %w", typ, ErrUnknownType)
	}
	e := mk()
	if !decodeFlat(data, e) {
		e = mk() // the fast path may have filled part of it
		if err := json.Unmarshal([]byte(data), e); err != nil {
			return nil, fmt.Errorf("decode %s: %w", typ, err)
		}
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}
