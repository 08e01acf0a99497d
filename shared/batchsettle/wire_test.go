package batchsettle

import (
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// TestConfigWire: the one reader of a channel config from JSON, which the
// gateway and the facilitator share: a good config reads whole; any bad
// address (wrong length, bad EIP-55 checksum, no 0x) or a salt that is not
// 32 bytes refuses the whole config.
func TestConfigWire(t *testing.T) {
	good := ConfigWire{
		Payer:              "0x1111111111111111111111111111111111111111",
		PayerAuthorizer:    "0x2222222222222222222222222222222222222222",
		Receiver:           "0x3333333333333333333333333333333333333333",
		ReceiverAuthorizer: "0x4444444444444444444444444444444444444444",
		Token:              "0x5555555555555555555555555555555555555555",
		WithdrawDelay:      900,
		Salt:               "0x" + "ab" + "00000000000000000000000000000000000000000000000000000000000000",
	}
	cfg, ok := good.Config()
	if !ok || cfg.Payer != common.HexToAddress(good.Payer) || cfg.Token != common.HexToAddress(good.Token) ||
		cfg.WithdrawDelay != 900 || cfg.Salt[0] != 0xab {
		t.Fatalf("good config read as %+v, %v", cfg, ok)
	}
	for name, bad := range map[string]func(*ConfigWire){
		"short payer":          func(c *ConfigWire) { c.Payer = "0x1111" },
		"bad checksum":         func(c *ConfigWire) { c.Receiver = "0xAbCdEF0000000000000000000000000000000000" },
		"no 0x":                func(c *ConfigWire) { c.Token = "5555555555555555555555555555555555555555" },
		"empty authorizer":     func(c *ConfigWire) { c.ReceiverAuthorizer = "" },
		"short salt":           func(c *ConfigWire) { c.Salt = "0xab" },
		"long salt":            func(c *ConfigWire) { c.Salt = good.Salt + "00" },
		"salt not hex":         func(c *ConfigWire) { c.Salt = "0x" + string(make([]byte, 64)) },
		"payer authorizer bad": func(c *ConfigWire) { c.PayerAuthorizer = "0xzz22222222222222222222222222222222222222" },
	} {
		c := good
		bad(&c)
		if got, ok := c.Config(); ok || got != (Config{}) {
			t.Errorf("%s: read as %+v, %v", name, got, ok)
		}
	}
	// The payload's members are optional: a client that leaves one out is
	// told, never panicked on.
	var p Payload
	if err := json.Unmarshal([]byte(`{"type":"voucher"}`), &p); err != nil || p.ChannelConfig != nil || p.Voucher != nil || p.Amount != nil || p.Deposit != nil {
		t.Fatalf("a bare payload: %+v %v", p, err)
	}
}
