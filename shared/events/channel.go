package events

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TypeChannelState is the type of a ChannelState event.
const TypeChannelState = "channel_state"

func init() { Register(TypeChannelState, func() Event { return new(ChannelState) }) }

var channelIDRe = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

// ChannelState is a batch-settlement channel's state as the gateway holds it
// in Redis right after a change (a deposit recorded, a voucher drawn, a
// claim, a cooperative refund's close and outcome), written by the script
// that made the change. The latest voucher's signature exists nowhere else
// (the chain knows only what was claimed), so settlementd keeps the newest
// state per channel in PostgreSQL and rebuilds the channel from it after a
// Redis loss. Seq counts the channel's changes (carried over a rebuild), so
// the newest state wins whatever order the entries are stored in. The
// numbers travel as strings: the scripts build the payload in Lua, whose
// numbers are doubles.
type ChannelState struct {
	Channel   string      `json:"channel"` // lower-case 0x hex of 32 bytes
	Seq       int64       `json:"seq,string"`
	TimeMs    int64       `json:"ts,string"`
	Wallet    string      `json:"w"`
	Balance   money.Units `json:"bal,string"`
	Claimed   money.Units `json:"claimed,string"`
	Charged   money.Units `json:"charged,string"`
	Signed    money.Units `json:"signed,string"`
	Signature string      `json:"sig"`
	Config    string      `json:"cfg"`
	Closed    bool        `json:"closed"`
	DepositTx string      `json:"tx,omitempty"` // the deposit transaction this change recorded, if any
}

func (c *ChannelState) EventType() string { return TypeChannelState }
func (c *ChannelState) EventID() string   { return fmt.Sprintf("channel:%s:%d", c.Channel, c.Seq) }
func (c *ChannelState) Validate() error {
	switch {
	case !channelIDRe.MatchString(c.Channel):
		return fmt.Errorf("channel_state: channel %.80q is not lower-case 0x hex of 32 bytes", c.Channel)
	case c.Seq <= 0 || c.TimeMs <= 0:
		return errors.New("channel_state: bad seq or ts")
	case !ValidWallet(c.Wallet):
		return fmt.Errorf("channel_state: wallet %.80q is not a lower-case 0x wallet", c.Wallet)
	case c.Balance < 0 || c.Claimed < 0 || c.Charged < 0 || c.Signed < 0:
		return errors.New("channel_state: negative amount")
	case len(c.Signature) > 1024 || len(c.Config) > 8192 || len(c.DepositTx) > 130:
		return errors.New("channel_state: signature, config or tx too long")
	}
	return nil
}
