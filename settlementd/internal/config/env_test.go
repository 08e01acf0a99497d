package config

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
)

// load runs Load with a valid database URL and env as the whole environment.
func load(t *testing.T, m map[string]string) (*Config, error) {
	t.Helper()
	e := map[string]string{"DATABASE_URL": dsn}
	for k, v := range m {
		e[k] = v
	}
	return Load(nil, env(e), &bytes.Buffer{})
}

// Unset, every environment-only setting has its documented default.
func TestEnvDefaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Chain.ChainID != 137 || c.Chain.RPCURL != "" || c.Chain.DepositSchedule != DefaultDepositSchedule ||
		c.Chain.SettlementSchedule != DefaultSettlementSchedule || c.Chain.SolvencySchedule != DefaultSolvencySchedule {
		t.Errorf("chain %+v", c.Chain)
	}
	if c.RedisWatchInterval != time.Second || c.AdminToken != "" || c.X402 != (X402{ClaimSchedule: DefaultX402ClaimSchedule, WatchSchedule: DefaultX402WatchSchedule, GasCap: DefaultX402GasCap, RateLimit: DefaultX402RateLimit}) {
		t.Errorf("watch %v admin %q x402 %+v", c.RedisWatchInterval, c.AdminToken, c.X402)
	}
	if c.Claims.Validity != 48*time.Hour || c.Claims.Confirmations != 5 || c.Claims.WatchSchedule != DefaultClaimWatchSchedule ||
		c.Claims.SweepSchedule != DefaultClaimSweepSchedule || c.Nodes.ProbeSchedule != DefaultNodeProbeSchedule ||
		c.Gateway.ProbeSchedule != DefaultGatewayProbeSchedule || c.Auth.KeyCreateLimit != 0 || c.Auth.Dev || c.Nodes.AllowPrivate {
		t.Errorf("claims %+v nodes %+v gateway %+v auth %+v", c.Claims, c.Nodes, c.Gateway, c.Auth)
	}
	// Moved from package intel with the code it tests.
	if c.Intel.Enabled() || c.Intel.Interval != time.Minute || len(c.Intel.Symbols) != len(DefaultIntelSymbols) {
		t.Errorf("intel %+v", c.Intel)
	}
}

// Every variable lands in its sub-struct, read once by Load.
func TestEnvSettings(t *testing.T) {
	c, err := load(t, map[string]string{
		"TOLLGATE_CHAIN_RPC_URL": " http://chain:8545/KEY ", "TOLLGATE_CHAIN_ID": "31337", "TOLLGATE_VAULT_START_BLOCK": "12",
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": "3", "TOLLGATE_TREASURY_KEY": "0xaa", "TOLLGATE_SOLVENCY_SCHEDULE": "@every 1m",
		"TOLLGATE_ADMIN_TOKEN": "adm", "TOLLGATE_REDIS_WATCH_INTERVAL": "3s",
		"TOLLGATE_VENUE_BYBIT_URL": "https://bybit.example/", "TOLLGATE_INTEL_SYMBOLS": "btcusdt, ETHUSDT", "TOLLGATE_INTEL_INTERVAL": "30s",
		"TOLLGATE_X402_RPC_URL": "http://base:8545", "TOLLGATE_X402_RELAYER_KEY": "0xbb", "TOLLGATE_X402_TOKEN_NAME": "USDC",
		"TOLLGATE_JWT_SECRET": "j", "TOLLGATE_AUTH_DOMAIN": " tollgate.example ", "TOLLGATE_DEV": "1", "TOLLGATE_KEY_CREATE_LIMIT": "off",
		"TOLLGATE_ALLOW_PRIVATE_NODES": "1", "TOLLGATE_NODE_ALLOW_CIDRS": "10.0.0.0/8, 192.168.1.0/24", "TOLLGATE_NODE_MAX_FAILURES": "4",
		"TOLLGATE_CLAIM_SIGNER_KEY": "0xcc", "TOLLGATE_CLAIM_VALIDITY": "1h", "TOLLGATE_CLAIM_CONFIRMATIONS": "0",
		"TOLLGATE_CLAIMS_START_BLOCK": "99", "TOLLGATE_GATEWAY_URL": "http://gw:8080/",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Chain.RPCURL != "http://chain:8545/KEY" || c.Chain.ChainID != 31337 || c.Chain.VaultStartBlock != 12 || c.Chain.Confirmations != 3 ||
		c.Chain.TreasuryKey != "0xaa" || c.Chain.SolvencySchedule != "@every 1m" || c.Chain.DepositSchedule != DefaultDepositSchedule {
		t.Errorf("chain %+v", c.Chain)
	}
	if c.AdminToken != "adm" || c.RedisWatchInterval != 3*time.Second {
		t.Errorf("admin %q watch %v", c.AdminToken, c.RedisWatchInterval)
	}
	if !c.Intel.Enabled() || c.Intel.BybitURL != "https://bybit.example" || c.Intel.Schedule() != "@every 30s" ||
		strings.Join(c.Intel.Symbols, ",") != "BTCUSDT,ETHUSDT" {
		t.Errorf("intel %+v", c.Intel)
	}
	if c.X402 != (X402{RPCURL: "http://base:8545", RelayerKey: "0xbb", TokenName: "USDC", ClaimSchedule: DefaultX402ClaimSchedule,
		WatchSchedule: DefaultX402WatchSchedule, GasCap: DefaultX402GasCap, RateLimit: DefaultX402RateLimit}) {
		t.Errorf("x402 %+v", c.X402)
	}
	if c.Auth != (Auth{JWTSecret: "j", Domain: "tollgate.example", Dev: true, KeyCreateLimit: -1}) {
		t.Errorf("auth %+v", c.Auth)
	}
	if !c.Nodes.AllowPrivate || c.Nodes.MaxFailures != 4 || len(c.Nodes.AllowCIDRs) != 2 ||
		c.Nodes.AllowCIDRs[1] != netip.MustParsePrefix("192.168.1.0/24") {
		t.Errorf("nodes %+v", c.Nodes)
	}
	if c.Claims.SignerKey != "0xcc" || c.Claims.Validity != time.Hour || c.Claims.Confirmations != 0 || c.Claims.StartBlock != 99 {
		t.Errorf("claims %+v", c.Claims)
	}
	// The gateway's admin token defaults to settlementd's own.
	if c.Gateway.URL != "http://gw:8080" || c.Gateway.AdminToken != "adm" {
		t.Errorf("gateway %+v", c.Gateway)
	}
	c, err = load(t, map[string]string{"TOLLGATE_ADMIN_TOKEN": "adm", "TOLLGATE_GATEWAY_ADMIN_TOKEN": "gw", "TOLLGATE_KEY_CREATE_LIMIT": "7"})
	if err != nil || c.Gateway.AdminToken != "gw" || c.AdminToken != "adm" || c.Auth.KeyCreateLimit != 7 {
		t.Fatalf("%+v %+v %v", c.Gateway, c.Auth, err)
	}
}

// A bad value fails Load with the message each part gave before it moved
// here, naming the variable and never quoting the value.
func TestEnvRejectsBadValues(t *testing.T) {
	for k, tc := range map[string]struct{ v, msg string }{
		"TOLLGATE_CHAIN_ID":              {"secret137", "TOLLGATE_CHAIN_ID must be a non-negative integer"},
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": {"many", "TOLLGATE_DEPOSIT_CONFIRMATIONS must be a non-negative integer"},
		"TOLLGATE_VAULT_START_BLOCK":     {"-1", "TOLLGATE_VAULT_START_BLOCK must be a non-negative integer"},
		"TOLLGATE_REDIS_WATCH_INTERVAL":  {"500ms", "TOLLGATE_REDIS_WATCH_INTERVAL must be a whole number of seconds"},
		"TOLLGATE_INTEL_INTERVAL":        {"1.5s", "TOLLGATE_INTEL_INTERVAL must be a whole number of seconds"},
		"TOLLGATE_VENUE_BYBIT_URL":       {"ftp://x", "TOLLGATE_VENUE_BYBIT_URL must be an http(s) URL"},
		"TOLLGATE_INTEL_SYMBOLS":         {"BTC-USDT", "TOLLGATE_INTEL_SYMBOLS: \"BTC-USDT\" is not a symbol"},
		"TOLLGATE_KEY_CREATE_LIMIT":      {"0", "TOLLGATE_KEY_CREATE_LIMIT must be a positive integer or off"},
		"TOLLGATE_NODE_ALLOW_CIDRS":      {"10.0.0.0/33", "TOLLGATE_NODE_ALLOW_CIDRS: "},
		"TOLLGATE_CLAIM_VALIDITY":        {"-1h", "TOLLGATE_CLAIM_VALIDITY must be a positive duration"},
		"TOLLGATE_CLAIM_CONFIRMATIONS":   {"secret", "TOLLGATE_CLAIM_CONFIRMATIONS must be a non-negative integer"},
		"TOLLGATE_SETTLEMENT_HOLD":       {"-1m", "TOLLGATE_SETTLEMENT_HOLD must be a duration ≥ 0"},
	} {
		_, err := load(t, map[string]string{k: tc.v})
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s=%q: %v", k, tc.v, err)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes the value: %v", k, err)
		}
	}
	// Moved from package recovery: the watch interval is whole seconds ≥ 1 s.
	for _, bad := range []string{"500ms", "1.5s", "-1s", "soon"} {
		if _, err := load(t, map[string]string{"TOLLGATE_REDIS_WATCH_INTERVAL": bad}); err == nil {
			t.Errorf("watch interval %q accepted", bad)
		}
	}
	// Both kinds of error are reported at once.
	_, err := Load([]string{"-ingest-batch", "0"}, env(map[string]string{"DATABASE_URL": dsn, "TOLLGATE_CHAIN_ID": "x"}), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ingest-batch") || !strings.Contains(err.Error(), "TOLLGATE_CHAIN_ID") {
		t.Fatalf("%v", err)
	}
}

// Keys and RPC URLs never come from a config file: such a key is unknown.
func TestEnvOnlyNotInFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(f, []byte(`{"database-url": "`+dsn+`", "treasury-key": "0xaa"}`), 0o600)
	if _, err := Load([]string{"-config", f}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `unknown key "treasury-key"`) {
		t.Fatalf("%v", err)
	}
	var out bytes.Buffer
	Load([]string{"-h"}, env(nil), &out)
	for _, v := range []string{"TOLLGATE_CHAIN_RPC_URL", "TOLLGATE_TREASURY_KEY", "TOLLGATE_ADMIN_TOKEN", "TOLLGATE_INTEL_SYMBOLS",
		"TOLLGATE_X402_RELAYER_KEY", "TOLLGATE_CLAIM_SIGNER_KEY", "TOLLGATE_REDIS_WATCH_INTERVAL", "TOLLGATE_GATEWAY_URL"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("-h does not list %s", v)
		}
	}
}

// The stuck-transaction policy is read once, for chain 137 and x402 alike;
// bad values are refused with the variable's name, never taken as a
// default.
func TestTxPolicyEnv(t *testing.T) {
	c, err := load(t, map[string]string{"TOLLGATE_TX_STUCK_AFTER": "90s", "TOLLGATE_TX_FEE_BUMP_PERCENT": "12",
		"TOLLGATE_TX_MAX_FEE_GWEI": "0.05"})
	if err != nil || c.TxPolicy.StuckAfter != 90*time.Second || c.TxPolicy.BumpPercent != 12 || c.TxPolicy.MaxFeePerGas.Int64() != 50_000_000 ||
		c.Chain.TxPolicy.BumpPercent != 12 {
		t.Fatalf("policy %+v, %v", c, err)
	}
	for name, bad := range map[string]string{"TOLLGATE_TX_STUCK_AFTER": "soon", "TOLLGATE_TX_FEE_BUMP_PERCENT": "9",
		"TOLLGATE_TX_MAX_FEE_GWEI": "0.0000000001"} {
		if _, err := load(t, map[string]string{name: bad}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, bad, err)
		}
	}
	for _, bad := range []string{"-1", "1e3", "abc", "0"} {
		if _, err := load(t, map[string]string{"TOLLGATE_TX_MAX_FEE_GWEI": bad}); err == nil {
			t.Errorf("TOLLGATE_TX_MAX_FEE_GWEI=%s accepted", bad)
		}
	}
}

// The settlement hold defaults to the evidence lookback (10 min), follows
// it when only the lookback is set, and can be set on its own (0: no hold,
// for demos and tests that settle at once). The lookback must be positive.
func TestEvidenceLookbackAndSettlementHold(t *testing.T) {
	for _, tc := range []struct {
		env            map[string]string
		lookback, hold time.Duration
	}{
		{nil, 10 * time.Minute, 10 * time.Minute},
		{map[string]string{"TOLLGATE_EVIDENCE_LOOKBACK": "3m"}, 3 * time.Minute, 3 * time.Minute},
		{map[string]string{"TOLLGATE_SETTLEMENT_HOLD": "0"}, 10 * time.Minute, 0},
		{map[string]string{"TOLLGATE_EVIDENCE_LOOKBACK": "15m", "TOLLGATE_SETTLEMENT_HOLD": "16m"}, 15 * time.Minute, 16 * time.Minute},
	} {
		c, err := load(t, tc.env)
		if err != nil || c.EvidenceLookback != tc.lookback || c.Chain.SettlementHold != tc.hold {
			t.Errorf("%v: lookback %v hold %v (%v), want %v and %v", tc.env, c.EvidenceLookback, c.Chain.SettlementHold, err, tc.lookback, tc.hold)
		}
		if d := c.Describe(); d["evidence-lookback"] != tc.lookback.String() || d["settlement-hold"] != tc.hold.String() {
			t.Errorf("describe %v", d)
		}
	}
	c, err := Load([]string{"-evidence-lookback", "2m"}, env(map[string]string{"DATABASE_URL": dsn}), &bytes.Buffer{})
	if err != nil || c.EvidenceLookback != 2*time.Minute || c.Chain.SettlementHold != 2*time.Minute {
		t.Fatalf("flag: %+v %v", c, err)
	}
	for _, bad := range []string{"0", "-1m", "soon"} {
		if _, err := load(t, map[string]string{"TOLLGATE_EVIDENCE_LOOKBACK": bad}); err == nil {
			t.Errorf("lookback %q accepted", bad)
		}
	}
}

// The gateway secret comes from the variable or its _FILE (never both),
// the previous one too (rotation); a short or unreadable one is refused
// and the error never holds the value.
func TestGatewaySecret(t *testing.T) {
	dir := t.TempDir()
	cur, prev := strings.Repeat("c", 40), strings.Repeat("p", 40)
	path := dir + "/secret"
	if err := os.WriteFile(path, []byte(cur+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, map[string]string{"TOLLGATE_GATEWAY_SECRET_FILE": path, "TOLLGATE_GATEWAY_SECRET_PREVIOUS": prev})
	if err != nil || c.X402.GatewaySecret != cur || c.X402.GatewaySecretPrevious != prev {
		t.Fatalf("secrets %v", err)
	}
	for name, env := range map[string]map[string]string{
		"both":    {"TOLLGATE_GATEWAY_SECRET": cur, "TOLLGATE_GATEWAY_SECRET_FILE": path},
		"short":   {"TOLLGATE_GATEWAY_SECRET": "tooshort-secret"},
		"missing": {"TOLLGATE_GATEWAY_SECRET_FILE": dir + "/none"},
	} {
		_, err := load(t, env)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), cur) || strings.Contains(err.Error(), "tooshort-secret") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}

// The x402 offer's addresses receive money: outside the dev profile a dev
// account (whose key is public), the zero address or a spelling without its
// EIP-55 checksum is refused, naming the setting; TOLLGATE_DEV=1 accepts a
// dev account.
func TestX402OfferAddressesRefused(t *testing.T) {
	treasury := devaccounts.Address("treasury").Hex()
	usdc := "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" // Base USDC
	for name, c := range map[string]struct{ key, val, want string }{
		"dev payTo":       {"TOLLGATE_X402_PAY_TO", treasury, "whose key is public"},
		"lowercase payTo": {"TOLLGATE_X402_PAY_TO", strings.ToLower(usdc), "EIP-55"},
		"zero asset":      {"TOLLGATE_X402_ASSET", "0x0000000000000000000000000000000000000000", "zero address"},
		"not an address":  {"TOLLGATE_X402_ASSET", "0x1234", `"0x1234" is not an address`},
	} {
		_, err := load(t, map[string]string{c.key: c.val})
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s and %q", name, err, c.key, c.want)
		}
	}
	if _, err := load(t, map[string]string{"TOLLGATE_X402_PAY_TO": usdc, "TOLLGATE_X402_ASSET": usdc}); err != nil {
		t.Errorf("checksummed real addresses refused: %v", err)
	}
	if _, err := load(t, map[string]string{"TOLLGATE_X402_PAY_TO": treasury, "TOLLGATE_DEV": "1"}); err != nil {
		t.Errorf("the dev profile refused a dev account: %v", err)
	}
}
