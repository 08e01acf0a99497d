package batchsettle

import (
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Payload is the scheme's payment payload as clients write it (the
// `payload` member of an x402 PaymentPayload): a deposit, a voucher or a
// refund. The gateway reads it from a caller's payment header and the
// facilitator from a settle request, so both read it through this one
// type and this one Config reader: a payload the gateway took is never one
// the facilitator reads otherwise.
type Payload struct {
	Type          string      `json:"type"`
	ChannelConfig *ConfigWire `json:"channelConfig"`
	Voucher       *Voucher    `json:"voucher"`
	Amount        *string     `json:"amount"` // refunds: a partial refund; absent is all that is left
	Deposit       *Deposit    `json:"deposit"`
}

// ConfigWire is a ChannelConfig as JSON spells it.
type ConfigWire struct {
	Payer              string `json:"payer"`
	PayerAuthorizer    string `json:"payerAuthorizer"`
	Receiver           string `json:"receiver"`
	ReceiverAuthorizer string `json:"receiverAuthorizer"`
	Token              string `json:"token"`
	WithdrawDelay      uint64 `json:"withdrawDelay"`
	Salt               string `json:"salt"`
}

// Voucher is a signed voucher as JSON spells it.
type Voucher struct {
	ChannelID          string `json:"channelId"`
	MaxClaimableAmount string `json:"maxClaimableAmount"`
	Signature          string `json:"signature"`
}

// Deposit is a deposit's amount and its ERC-3009 authorization.
type Deposit struct {
	Amount        string `json:"amount"`
	Authorization struct {
		ERC3009 *struct {
			ValidAfter  string `json:"validAfter"`
			ValidBefore string `json:"validBefore"`
			Salt        string `json:"salt"`
			Signature   string `json:"signature"`
		} `json:"erc3009Authorization"`
	} `json:"authorization"`
}

// Config reads the five addresses (the one address reader: 0x and 40 hex
// digits, a mixed-case spelling's EIP-55 checksum right) and the 32-byte
// salt; ok is false if any is not well-formed. Whether they match an
// offer is the caller's to check.
func (c *ConfigWire) Config() (cfg Config, ok bool) {
	var errs [5]error
	cfg.Payer, errs[0] = ethparse.Address(c.Payer)
	cfg.PayerAuthorizer, errs[1] = ethparse.Address(c.PayerAuthorizer)
	cfg.Receiver, errs[2] = ethparse.Address(c.Receiver)
	cfg.ReceiverAuthorizer, errs[3] = ethparse.Address(c.ReceiverAuthorizer)
	cfg.Token, errs[4] = ethparse.Address(c.Token)
	salt, ok := ParseHash(c.Salt)
	if !ok || errs != [5]error{} {
		return Config{}, false
	}
	cfg.Salt, cfg.WithdrawDelay = salt, c.WithdrawDelay
	return cfg, true
}

// ParseHash reads 32 bytes in 0x hex (a salt, a channel id).
func ParseHash(s string) (common.Hash, bool) {
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != 32 {
		return common.Hash{}, false
	}
	return common.BytesToHash(b), true
}
