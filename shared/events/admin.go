package events

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TypeAdjustment is the type of an Adjustment event.
const TypeAdjustment = "adjustment"

// MaxReasonLen bounds the reason of an operator action, in characters.
const MaxReasonLen = 200

func init() {
	Register(TypeAdjustment, func() Event { return new(Adjustment) })
}

// Adjustment is an operator's manual change to a prepaid balance (gateway
// admin: credit or debit with a reason). Units is signed: positive credits,
// negative debits. Like a debit it is written by the script that changes the
// Redis balance, in the same atomic step, so Postgres can rebuild every
// balance; it is booked as account_ledger kind 'adjustment' with ref = ID,
// which makes it idempotent on ID. It is not spending: it moves the balance,
// never the account's spent total.
type Adjustment struct {
	ID      string      `json:"id"`
	Account string      `json:"account"` // key_…
	Units   money.Units `json:"units,string"`
	Reason  string      `json:"reason"`
	TimeMs  int64       `json:"ts"`
}

func (a *Adjustment) EventType() string { return TypeAdjustment }
func (a *Adjustment) EventID() string   { return "adjust:" + a.ID }

// Validate rejects adjustments settlement must never book. The reason is
// required: a balance changed by hand must say why.
func (a *Adjustment) Validate() error {
	switch {
	case a.ID == "" || len(a.ID) > 64:
		return errors.New("adjustment: id missing or too long")
	case accounts.Validate(a.Account) != nil:
		return errors.New("adjustment: account must be a key_… account id")
	case a.Units == 0:
		return errors.New("adjustment: units must not be zero")
	case a.TimeMs <= 0:
		return errors.New("adjustment: ts missing")
	}
	return ValidReason(a.Reason)
}

// ValidReason checks the free-text reason of an operator action: 1 to
// MaxReasonLen characters of UTF-8, not only spaces, no control characters
// (it ends up in logs and in Postgres text).
func ValidReason(s string) error {
	switch {
	case !utf8.ValidString(s) || strings.TrimSpace(s) == "":
		return errors.New("reason is required")
	case utf8.RuneCountInString(s) > MaxReasonLen:
		return errors.New("reason is longer than 200 characters")
	case strings.ContainsFunc(s, unicode.IsControl):
		return errors.New("reason contains control characters")
	}
	return nil
}

// Compile-time check that Adjustment is an Event.
var _ Event = (*Adjustment)(nil)
