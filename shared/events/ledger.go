package events

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The gateway's money facts, written to the stream by the same Lua script that
// changes the Redis balance, so a balance change and its event are atomic:
//
//	debit   — calls reserved/paid before forwarding (credits, bundle, a
//	          batch-settlement channel or free tier)
//	refund  — a debit given back because the upstream failed
//	revenue — the request was served (who served it); see Revenue
//
// A request's revenue amount is its debit minus its refund. Postgres rebuilds
// every balance from debits, refunds and deposits; epochs sum revenue events.
const (
	TypeDebit       = "debit"
	TypeRefund      = "refund"
	TypeKeyCreated  = "key_created"
	TypeKeyRevoked  = "key_revoked"
	TypeBundleGrant = "bundle_granted"
)

func init() {
	Register(TypeDebit, func() Event { return new(Debit) })
	Register(TypeRefund, func() Event { return new(Refund) })
	Register(TypeKeyCreated, func() Event { return new(KeyCreated) })
	Register(TypeKeyRevoked, func() Event { return new(KeyRevoked) })
	Register(TypeBundleGrant, func() Event { return new(BundleGranted) })
}

// Debit is a charge taken before a request is forwarded. ID is the request
// id, shared by the request's refund and revenue events.
type Debit struct {
	ID      string      `json:"id"`
	TimeMs  int64       `json:"ts"`
	ChainID uint64      `json:"chain_id"`
	Payer   Payer       `json:"payer"`
	Account string      `json:"account,omitempty"` // key_… (credits) or 0x wallet (bundle, channel)
	Asset   string      `json:"asset"`
	Amount  money.Units `json:"amount_units,string"` // credits: units; bundle: units at 100/call; free: 0
	Calls   int         `json:"calls"`
}

func (d *Debit) EventType() string { return TypeDebit }
func (d *Debit) EventID() string   { return d.ID }
func (d *Debit) Validate() error {
	r := Revenue{ID: d.ID, TimeMs: d.TimeMs, EpochID: EpochOf(time.UnixMilli(d.TimeMs)), ChainID: d.ChainID, Payer: d.Payer, Account: d.Account, Asset: d.Asset, Amount: d.Amount, Calls: d.Calls}
	if d.Payer == PayerChannel {
		// Checked as what it is paid as: a bundle call of the wallet.
		r.Payer = PayerBundle
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("debit: %w", err)
	}
	return nil
}

// Refund returns part or all of a debit. ID is the debit's id: one refund per
// request at most, so it is idempotent on that id.
type Refund struct {
	ID      string      `json:"id"`
	TimeMs  int64       `json:"ts"`
	Payer   Payer       `json:"payer"`
	Account string      `json:"account,omitempty"`
	Amount  money.Units `json:"amount_units,string"`
	Calls   int         `json:"calls"`
}

func (r *Refund) EventType() string { return TypeRefund }
func (r *Refund) EventID() string   { return "refund:" + r.ID }
func (r *Refund) Validate() error {
	switch {
	case r.ID == "" || len(r.ID) > 64:
		return errors.New("refund: id missing or too long")
	case r.TimeMs <= 0 || r.Amount < 0 || r.Calls <= 0:
		return errors.New("refund: bad ts, amount or calls")
	case r.Payer != PayerCredits && r.Payer != PayerBundle && r.Payer != PayerFree && r.Payer != PayerChannel:
		return fmt.Errorf("refund: unknown payer %q", r.Payer)
	case r.Payer != PayerFree && r.Account == "":
		return errors.New("refund: paid refund without account")
	case (r.Payer == PayerBundle || r.Payer == PayerChannel) && !ValidWallet(r.Account):
		return fmt.Errorf("refund: bundle refund account %.80q is not a lower-case 0x wallet", r.Account)
	}
	return nil
}

// KeyKind says how an API key came to be.
type KeyKind string

const (
	KeyAPI     KeyKind = "api"     // POST /api/keys
	KeyMachine KeyKind = "machine" // POST /v1/machine/register
	KeyWallet  KeyKind = "wallet"  // wallet-bound key from the console
	KeyBundle  KeyKind = "bundle"  // X-Tollgate-Bundle-Key of an x402 bundle
)

// KeyCreated records a new key. Only the SHA-256 of the secret travels; the
// secret itself is shown to its owner once and never stored.
type KeyCreated struct {
	KeyID        string  `json:"key_id"`   // key_<ULID>, also the account id
	KeyHash      string  `json:"key_hash"` // hex SHA-256 of the secret
	Kind         KeyKind `json:"kind"`
	Label        string  `json:"label"`
	Tier         string  `json:"tier"`
	Email        string  `json:"email,omitempty"`
	EmailConsent bool    `json:"email_consent,omitempty"`
	Wallet       string  `json:"wallet,omitempty"` // bound wallet (wallet and bundle keys)
	TimeMs       int64   `json:"ts"`
}

func (k *KeyCreated) EventType() string { return TypeKeyCreated }
func (k *KeyCreated) EventID() string   { return "key:" + k.KeyID }
func (k *KeyCreated) Validate() error {
	switch {
	case k.KeyID == "" || len(k.KeyHash) != 64 || k.TimeMs <= 0:
		return errors.New("key_created: key_id, key_hash (64 hex) and ts are required")
	case k.Kind != KeyAPI && k.Kind != KeyMachine && k.Kind != KeyWallet && k.Kind != KeyBundle:
		return fmt.Errorf("key_created: unknown kind %q", k.Kind)
	case k.Kind == KeyBundle && !ValidWallet(k.Wallet):
		// Its account hash's w field, rebuilt from this, names the bundle.
		return fmt.Errorf("key_created: bundle key wallet %.80q is not a lower-case 0x wallet", k.Wallet)
	}
	return nil
}

// KeyRevoked records a revocation.
type KeyRevoked struct {
	KeyID  string `json:"key_id"`
	Reason string `json:"reason,omitempty"`
	TimeMs int64  `json:"ts"`
}

func (k *KeyRevoked) EventType() string { return TypeKeyRevoked }
func (k *KeyRevoked) EventID() string   { return "revoke:" + k.KeyID }
func (k *KeyRevoked) Validate() error {
	if k.KeyID == "" || k.TimeMs <= 0 {
		return errors.New("key_revoked: key_id and ts are required")
	}
	return nil
}

// BundleGranted records an x402 payment settled on chain that bought bundle
// calls for a wallet. ID is the settlement transaction hash (idempotency).
type BundleGranted struct {
	ID      string      `json:"id"` // settlement tx hash
	Wallet  string      `json:"wallet"`
	Calls   int         `json:"calls"`
	Amount  money.Units `json:"amount_units,string"` // USDC units paid
	Network string      `json:"network"`             // eip155:8453
	// KeyID is the X-Tollgate-Bundle-Key created with the grant (key_…),
	// drawing on the same bundle; "" when none was.
	KeyID  string `json:"key_id,omitempty"`
	TimeMs int64  `json:"ts"`
}

func (b *BundleGranted) EventType() string { return TypeBundleGrant }
func (b *BundleGranted) EventID() string   { return "bundle:" + b.ID }
func (b *BundleGranted) Validate() error {
	switch {
	case b.ID == "" || b.Wallet == "" || b.Calls <= 0 || b.Amount <= 0 || b.TimeMs <= 0:
		return errors.New("bundle_granted: id, wallet, calls, amount and ts are required")
	case len(b.ID) > MaxBundleIDLen:
		return fmt.Errorf("bundle_granted: id longer than %d", MaxBundleIDLen)
	case !ValidWallet(b.Wallet):
		return fmt.Errorf("bundle_granted: wallet %.80q is not a lower-case 0x wallet", b.Wallet)
	case b.KeyID != "" && (!strings.HasPrefix(b.KeyID, "key_") || len(b.KeyID) > 64):
		return fmt.Errorf("bundle_granted: key_id %.80q is not a key_… id", b.KeyID)
	}
	return nil
}

// MaxBundleIDLen bounds BundleGranted.ID (a transaction hash has 66).
const MaxBundleIDLen = 100
