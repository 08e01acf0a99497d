package config

import (
	"errors"
	"fmt"
	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
)

// The settings below come from the environment only: they are keys, secrets,
// RPC URLs (which often hold an API key) or belong with them, so they never
// pass through flags (visible in ps) or config files. Load reads them once;
// the daemon passes the sub-structs down.

// Chain is the chain-137 side: the chain jobs (deposits, settlement,
// solvency), the claims watcher and the chain id of sign-in messages.
type Chain struct {
	// Dev (TOLLGATE_DEV=1): the dev chains' accounts, whose keys are public,
	// may be money settings; without it chainjobs refuses them (and
	// addresses not in their EIP-55 form).
	Dev     bool
	RPCURL  string // TOLLGATE_CHAIN_RPC_URL: chain-137 JSON-RPC (http(s) or ws(s)); secret-bearing, never logged
	ChainID uint64 // TOLLGATE_CHAIN_ID (default 137)

	USDT            string // TOLLGATE_USDT_ADDRESS
	Vault           string // TOLLGATE_VAULT_ADDRESS (RevenueVault)
	VaultStartBlock uint64 // TOLLGATE_VAULT_START_BLOCK: the vault's deployment block (first scan)
	Claims          string // TOLLGATE_CLAIMS_ADDRESS (ClaimsContract)
	Confirmations   uint64 // TOLLGATE_DEPOSIT_CONFIRMATIONS (default 25)

	PlatformWallet string // TOLLGATE_PLATFORM_WALLET: receives the 30 % platform share
	PoolWallet     string // TOLLGATE_POOL_WALLET: receives the 20 % pool share

	TreasuryKey string // TOLLGATE_TREASURY_KEY: hex private key of the treasury (sends the transfers)
	RelayerKey  string // TOLLGATE_RELAYER_KEY: hex private key with CLAIM_CREATOR_ROLE (setNodeWallet, createClaim)
	GovernorKey string // TOLLGATE_GOVERNOR_KEY: optional, GOVERNOR_ROLE (on-chain pause/unpause)
	WebhookURL  string // TOLLGATE_ALERT_WEBHOOK_URL: optional Slack/Discord webhook for solvency alerts

	DepositSchedule    string // TOLLGATE_DEPOSIT_SCHEDULE (default "*/5 * * * * *": every 5 s)
	SettlementSchedule string // TOLLGATE_SETTLEMENT_SCHEDULE (default "0 */5 * * * *": every 5 min)
	SolvencySchedule   string // TOLLGATE_SOLVENCY_SCHEDULE (default "30 */5 * * * *": every 5 min, offset)
	// SettlementHold (TOLLGATE_SETTLEMENT_HOLD, a Go duration; default the
	// evidence lookback) keeps closed epochs out of settlement batches
	// until evidence within the lookback can no longer withhold from them
	// (settle.Config.Hold). 0: every closed epoch is settled at the next
	// run (development, demos), and evidence withholds only from epochs
	// not yet settled.
	SettlementHold time.Duration

	// TxPolicy prices every transaction settlementd signs and unsticks it
	// (Config.TxPolicy; the x402 facilitator's transactions on Base follow
	// the same one).
	TxPolicy chain.TxPolicy
}

// Default schedules of the chain jobs (jobs.Parser syntax, seconds first).
const (
	DefaultDepositSchedule    = "*/5 * * * * *"
	DefaultSettlementSchedule = "0 */5 * * * *"
	DefaultSolvencySchedule   = "30 */5 * * * *"
)

// DefaultEvidenceLookback is the default -evidence-lookback (and so the
// default settlement hold): epochs.DefaultLookback.
const DefaultEvidenceLookback = 10 * time.Minute

// Intel configures the funding-rate job (package intel).
type Intel struct {
	BinanceURL string        // TOLLGATE_VENUE_BINANCE_URL, e.g. https://fapi.binance.com; "" = off
	BybitURL   string        // TOLLGATE_VENUE_BYBIT_URL, e.g. https://api.bybit.com; "" = off
	Interval   time.Duration // TOLLGATE_INTEL_INTERVAL (Go duration, ≥ 1 s; default 60 s)
	Symbols    []string      // TOLLGATE_INTEL_SYMBOLS (comma list; default DefaultIntelSymbols)
}

// Defaults of the funding-rate job.
var (
	DefaultIntelInterval = 60 * time.Second
	DefaultIntelSymbols  = []string{"BTCUSDT", "ETHUSDT", "SOLUSDT", "BNBUSDT", "XRPUSDT", "DOGEUSDT", "ADAUSDT", "AVAXUSDT", "LINKUSDT", "LTCUSDT"}
)

// Enabled reports whether any venue is configured.
func (s Intel) Enabled() bool { return s.BinanceURL != "" || s.BybitURL != "" }

// Schedule is the cron spec of the interval.
func (s Intel) Schedule() string { return "@every " + s.Interval.String() }

// DefaultX402ClaimSchedule is when batch-settlement vouchers are claimed:
// every minute, far inside the channels' one-day withdraw delay.
const DefaultX402ClaimSchedule = "0 * * * * *"

// X402 configures the x402 facilitator on Base (package facilitator).
type X402 struct {
	RPCURL       string // TOLLGATE_X402_RPC_URL: chain-8453 JSON-RPC; "" = no facilitator
	RelayerKey   string // TOLLGATE_X402_RELAYER_KEY: hex key that sends transferWithAuthorization and pays its gas
	TokenName    string // TOLLGATE_X402_TOKEN_NAME: EIP-712 domain name of the token (default "USD Coin")
	TokenVersion string // TOLLGATE_X402_TOKEN_VERSION: EIP-712 domain version (default "2")
	// ReceiverAuthorizerKey (TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY) signs the
	// batch-settlement claim batches; its address is the gateway's
	// x402_receiver_authorizer. "" = no claims job.
	ReceiverAuthorizerKey string
	// ClaimSchedule (TOLLGATE_X402_CLAIM_SCHEDULE, cron with seconds) is when
	// the vouchers are claimed and settled (default every minute).
	ClaimSchedule string
	// WatchSchedule (TOLLGATE_X402_WATCH_SCHEDULE, cron with seconds) is when
	// the settlement contract's withdraw and refund events are followed
	// (default every 5 s).
	WatchSchedule string
	// Asset and PayTo are the operator's offer (TOLLGATE_X402_ASSET,
	// TOLLGATE_X402_PAY_TO: the same variables the shipped Caddyfiles give
	// the gateway's x402_asset and x402_pay_to); the facilitator settles
	// nothing else (shared/x402.Offer).
	Asset, PayTo string
	// GatewaySecret authenticates the gateway's calls (refunds, and no rate
	// limit): TOLLGATE_GATEWAY_SECRET or the file TOLLGATE_GATEWAY_SECRET_FILE
	// names; GatewaySecretPrevious (TOLLGATE_GATEWAY_SECRET_PREVIOUS[_FILE])
	// is still accepted while a rotation is under way.
	GatewaySecret, GatewaySecretPrevious string
	// GasCap (TOLLGATE_X402_GAS_CAP) is the most gas one facilitator
	// transaction may use (default 1,000,000); RateLimit
	// (TOLLGATE_X402_RATE_LIMIT) the verify/settle calls per second taken
	// from callers other than the gateway (default 5, burst 4×).
	GasCap    uint64
	RateLimit float64
}

// DefaultX402WatchSchedule: the withdraw/refund events are followed every 5 s.
const DefaultX402WatchSchedule = "*/5 * * * * *"

// Defaults of the facilitator's limits.
const (
	DefaultX402GasCap    = 1_000_000
	DefaultX402RateLimit = 5
)

// Auth is wallet sign-in: operator logins and the console's wallet keys.
type Auth struct {
	JWTSecret string // TOLLGATE_JWT_SECRET: HS256 key (≥ 32 bytes); "" = the operator routes and the wallet-key routes answer 503 (it also keys the sign-in challenges' signed nonces)
	Domain    string // TOLLGATE_AUTH_DOMAIN: EIP-4361 domain sign-in messages must name
	Dev       bool   // TOLLGATE_DEV=1: an unset Domain falls back to the request's Host (development only)
	// KeyCreateLimit is TOLLGATE_KEY_CREATE_LIMIT: wallet keys per client IP
	// per hour (0: the default, 10; -1: "off", unlimited).
	KeyCreateLimit int
}

// Nodes is the node registry and its prober.
type Nodes struct {
	AllowPrivate  bool           // TOLLGATE_ALLOW_PRIVATE_NODES=1: node URLs may be loopback/private (dev, tests)
	AllowCIDRs    []netip.Prefix // TOLLGATE_NODE_ALLOW_CIDRS: addresses nodes may use whatever the policy says
	ProbeSchedule string         // TOLLGATE_NODE_PROBE_SCHEDULE (default every 30 s)
	MaxFailures   int            // TOLLGATE_NODE_MAX_FAILURES (0: the nodes package's default, 3)
	// Proof: registration asks the endpoint for the ownership proof
	// (TOLLGATE_NODE_PROOF=required|off; default required, off only
	// allowed — and the default — with AllowPrivate).
	Proof bool
	// RegisterPerHour: TOLLGATE_NODE_REGISTER_PER_HOUR (0: the nodes
	// package's default, 10; -1: no limit).
	RegisterPerHour int
}

// Claims is the claim signer and its jobs.
type Claims struct {
	SignerKey     string        // TOLLGATE_CLAIM_SIGNER_KEY: hex key with CLAIM_CREATOR_ROLE; "" = claims answer 503
	Validity      time.Duration // TOLLGATE_CLAIM_VALIDITY (default 48h)
	WatchSchedule string        // TOLLGATE_CLAIM_WATCH_SCHEDULE (default every 5 s)
	Confirmations uint64        // TOLLGATE_CLAIM_CONFIRMATIONS (default 5)
	StartBlock    uint64        // TOLLGATE_CLAIMS_START_BLOCK: first block without a checkpoint
	SweepSchedule string        // TOLLGATE_CLAIM_SWEEP_SCHEDULE (default every 30 s)
}

// Gateway is how settlementd samples the gateway's health for /api/status.
type Gateway struct {
	URL           string // TOLLGATE_GATEWAY_URL: base URL, no trailing slash; "" = no samples
	AdminToken    string // TOLLGATE_GATEWAY_ADMIN_TOKEN (default TOLLGATE_ADMIN_TOKEN)
	ProbeSchedule string // TOLLGATE_GATEWAY_PROBE_SCHEDULE (default every 30 s)
}

// Defaults of the node API's settings.
const (
	DefaultNodeProbeSchedule    = "*/30 * * * * *"
	DefaultClaimWatchSchedule   = "*/5 * * * * *"
	DefaultClaimSweepSchedule   = "*/30 * * * * *"
	DefaultGatewayProbeSchedule = "*/30 * * * * *"
	DefaultClaimConfirmations   = 5
	DefaultClaimValidity        = time.Duration(claim.Validity) * time.Second
	DefaultRedisWatchInterval   = time.Second // recovery.DefaultInterval
)

// EnvUsage lists the environment-only settings for -h.
const EnvUsage = `
Environment-only settings (keys, secrets and RPC URLs never pass through flags or files):
  TOLLGATE_ADMIN_TOKEN            X-Admin-Token of /admin/*; unset: /admin/* is 404
  TOLLGATE_REDIS_WATCH_INTERVAL   Redis-loss check, whole seconds (default 1s)
 chain 137 (deposits, settlement, solvency, claims):
  TOLLGATE_CHAIN_RPC_URL, TOLLGATE_CHAIN_ID (default 137), TOLLGATE_USDT_ADDRESS, TOLLGATE_VAULT_ADDRESS,
  TOLLGATE_VAULT_START_BLOCK, TOLLGATE_CLAIMS_ADDRESS, TOLLGATE_DEPOSIT_CONFIRMATIONS (default 25),
  TOLLGATE_PLATFORM_WALLET, TOLLGATE_POOL_WALLET, TOLLGATE_TREASURY_KEY, TOLLGATE_RELAYER_KEY,
  TOLLGATE_GOVERNOR_KEY, TOLLGATE_ALERT_WEBHOOK_URL, TOLLGATE_DEPOSIT_SCHEDULE, TOLLGATE_SETTLEMENT_SCHEDULE,
  TOLLGATE_SOLVENCY_SCHEDULE, TOLLGATE_SETTLEMENT_HOLD (default: -evidence-lookback; 0 settles closed epochs at once)
 transactions (chain 137 and x402 on Base):
  TOLLGATE_TX_STUCK_AFTER (default 3m), TOLLGATE_TX_FEE_BUMP_PERCENT (default 20, at least 10),
  TOLLGATE_TX_MAX_FEE_GWEI (default 1000)
 sign-in and nodes:
  TOLLGATE_JWT_SECRET, TOLLGATE_AUTH_DOMAIN, TOLLGATE_DEV, TOLLGATE_KEY_CREATE_LIMIT (default 10; off),
  TOLLGATE_ALLOW_PRIVATE_NODES, TOLLGATE_NODE_ALLOW_CIDRS, TOLLGATE_NODE_PROBE_SCHEDULE, TOLLGATE_NODE_MAX_FAILURES
 claims:
  TOLLGATE_CLAIM_SIGNER_KEY, TOLLGATE_CLAIM_VALIDITY (default 48h), TOLLGATE_CLAIM_WATCH_SCHEDULE,
  TOLLGATE_CLAIM_CONFIRMATIONS (default 5), TOLLGATE_CLAIMS_START_BLOCK, TOLLGATE_CLAIM_SWEEP_SCHEDULE
 gateway health samples:
  TOLLGATE_GATEWAY_URL, TOLLGATE_GATEWAY_ADMIN_TOKEN (default TOLLGATE_ADMIN_TOKEN), TOLLGATE_GATEWAY_PROBE_SCHEDULE
 funding-rate job:
  TOLLGATE_VENUE_BINANCE_URL, TOLLGATE_VENUE_BYBIT_URL, TOLLGATE_INTEL_INTERVAL (default 60s), TOLLGATE_INTEL_SYMBOLS
 x402 facilitator (Base):
  TOLLGATE_X402_RPC_URL, TOLLGATE_X402_RELAYER_KEY, TOLLGATE_X402_TOKEN_NAME, TOLLGATE_X402_TOKEN_VERSION,
  TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY, TOLLGATE_X402_CLAIM_SCHEDULE (default "0 * * * * *"),
  TOLLGATE_X402_WATCH_SCHEDULE (default "*/5 * * * * *"), TOLLGATE_X402_ASSET (default Base USDC),
  TOLLGATE_X402_PAY_TO (required with TOLLGATE_X402_RPC_URL), TOLLGATE_GATEWAY_SECRET[_FILE],
  TOLLGATE_GATEWAY_SECRET_PREVIOUS[_FILE], TOLLGATE_X402_GAS_CAP (default 1000000),
  TOLLGATE_X402_RATE_LIMIT (default 5 per second)
`

// readEnv fills the environment-only settings. Errors name the variable,
// never its value (it may be a key).
func (c *Config) readEnv(getenv func(string) string) error {
	var errs []error
	trimmed := func(k string) string { return strings.TrimSpace(getenv(k)) }
	schedule := func(k, def string) string {
		if v := trimmed(k); v != "" {
			return v
		}
		return def
	}
	c.AdminToken = getenv("TOLLGATE_ADMIN_TOKEN")

	c.RedisWatchInterval = DefaultRedisWatchInterval
	if v := trimmed("TOLLGATE_REDIS_WATCH_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d%time.Second != 0 {
			errs = append(errs, errors.New("TOLLGATE_REDIS_WATCH_INTERVAL must be a whole number of seconds ≥ 1s, e.g. 1s"))
		}
		c.RedisWatchInterval = d
	}

	c.Chain = Chain{
		Dev:    getenv("TOLLGATE_DEV") == "1",
		RPCURL: trimmed("TOLLGATE_CHAIN_RPC_URL"), USDT: getenv("TOLLGATE_USDT_ADDRESS"), Vault: getenv("TOLLGATE_VAULT_ADDRESS"),
		Claims: getenv("TOLLGATE_CLAIMS_ADDRESS"), PlatformWallet: getenv("TOLLGATE_PLATFORM_WALLET"), PoolWallet: getenv("TOLLGATE_POOL_WALLET"),
		TreasuryKey: getenv("TOLLGATE_TREASURY_KEY"), RelayerKey: getenv("TOLLGATE_RELAYER_KEY"), GovernorKey: getenv("TOLLGATE_GOVERNOR_KEY"),
		WebhookURL:         getenv("TOLLGATE_ALERT_WEBHOOK_URL"),
		DepositSchedule:    schedule("TOLLGATE_DEPOSIT_SCHEDULE", DefaultDepositSchedule),
		SettlementSchedule: schedule("TOLLGATE_SETTLEMENT_SCHEDULE", DefaultSettlementSchedule),
		SolvencySchedule:   schedule("TOLLGATE_SOLVENCY_SCHEDULE", DefaultSolvencySchedule),
		SettlementHold:     c.EvidenceLookback,
	}
	if v := trimmed("TOLLGATE_SETTLEMENT_HOLD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, errors.New("TOLLGATE_SETTLEMENT_HOLD must be a duration ≥ 0, e.g. 10m"))
		}
		c.Chain.SettlementHold = d
	}
	for _, u := range []struct {
		name string
		p    *uint64
	}{{"TOLLGATE_CHAIN_ID", &c.Chain.ChainID}, {"TOLLGATE_VAULT_START_BLOCK", &c.Chain.VaultStartBlock},
		{"TOLLGATE_DEPOSIT_CONFIRMATIONS", &c.Chain.Confirmations}} {
		if v := trimmed(u.name); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s must be a non-negative integer", u.name))
			}
			*u.p = n
		}
	}
	if c.Chain.ChainID == 0 {
		c.Chain.ChainID = 137
	}
	policy, err := readTxPolicy(trimmed)
	if err != nil {
		errs = append(errs, err)
	}
	c.TxPolicy, c.Chain.TxPolicy = policy, policy

	intel, err := readIntel(trimmed)
	if err != nil {
		errs = append(errs, err)
	}
	c.Intel = intel

	c.X402 = X402{RPCURL: trimmed("TOLLGATE_X402_RPC_URL"), RelayerKey: trimmed("TOLLGATE_X402_RELAYER_KEY"),
		TokenName: trimmed("TOLLGATE_X402_TOKEN_NAME"), TokenVersion: trimmed("TOLLGATE_X402_TOKEN_VERSION"),
		ReceiverAuthorizerKey: trimmed("TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY"), ClaimSchedule: trimmed("TOLLGATE_X402_CLAIM_SCHEDULE")}
	if c.X402.ClaimSchedule == "" {
		c.X402.ClaimSchedule = DefaultX402ClaimSchedule
	}
	c.X402.WatchSchedule = schedule("TOLLGATE_X402_WATCH_SCHEDULE", DefaultX402WatchSchedule)
	c.X402.Asset, c.X402.PayTo = trimmed("TOLLGATE_X402_ASSET"), trimmed("TOLLGATE_X402_PAY_TO")
	// The offer's addresses receive money: outside the dev profile they are
	// refused as chainjobs refuses its own (a dev account, whose key is
	// public; the zero address; a spelling without its EIP-55 checksum).
	if !c.Chain.Dev {
		for _, v := range []struct{ name, val string }{{"TOLLGATE_X402_ASSET", c.X402.Asset}, {"TOLLGATE_X402_PAY_TO", c.X402.PayTo}} {
			if err := moneyAddress(v.name, v.val); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// getenv is Load's withFiles: a secret may come from NAME_FILE too (both
	// set, or an unreadable file, is an error naming the variable only).
	for _, s := range []struct {
		k   string
		dst *string
	}{{"TOLLGATE_GATEWAY_SECRET", &c.X402.GatewaySecret}, {"TOLLGATE_GATEWAY_SECRET_PREVIOUS", &c.X402.GatewaySecretPrevious}} {
		if v := trimmed(s.k); v != "" && len(v) < 32 {
			errs = append(errs, fmt.Errorf("%s must be at least 32 characters", s.k))
		} else {
			*s.dst = v
		}
	}
	c.X402.GasCap, c.X402.RateLimit = DefaultX402GasCap, DefaultX402RateLimit
	if v := trimmed("TOLLGATE_X402_GAS_CAP"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 100_000 {
			errs = append(errs, fmt.Errorf("TOLLGATE_X402_GAS_CAP must be an integer of at least 100000"))
		}
		c.X402.GasCap = n
	}
	if v := trimmed("TOLLGATE_X402_RATE_LIMIT"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("TOLLGATE_X402_RATE_LIMIT must be a positive number of calls per second"))
		}
		c.X402.RateLimit = n
	}

	c.Auth = Auth{JWTSecret: getenv("TOLLGATE_JWT_SECRET"), Domain: trimmed("TOLLGATE_AUTH_DOMAIN"), Dev: getenv("TOLLGATE_DEV") == "1"}
	switch v := trimmed("TOLLGATE_KEY_CREATE_LIMIT"); v {
	case "":
	case "off":
		c.Auth.KeyCreateLimit = -1
	default:
		if n, err := strconv.Atoi(v); err != nil || n <= 0 {
			errs = append(errs, errors.New("TOLLGATE_KEY_CREATE_LIMIT must be a positive integer or off"))
		} else {
			c.Auth.KeyCreateLimit = n
		}
	}

	// A value that is not a number leaves the nodes package's default, as
	// it always has.
	maxFail, _ := strconv.Atoi(getenv("TOLLGATE_NODE_MAX_FAILURES"))
	c.Nodes = Nodes{AllowPrivate: getenv("TOLLGATE_ALLOW_PRIVATE_NODES") == "1", MaxFailures: maxFail,
		ProbeSchedule: schedule("TOLLGATE_NODE_PROBE_SCHEDULE", DefaultNodeProbeSchedule)}
	switch v := getenv("TOLLGATE_NODE_PROOF"); v {
	case "required":
		c.Nodes.Proof = true
	case "off":
		if !c.Nodes.AllowPrivate {
			errs = append(errs, errors.New("TOLLGATE_NODE_PROOF=off is for development only (with TOLLGATE_ALLOW_PRIVATE_NODES=1)"))
		}
	case "":
		c.Nodes.Proof = !c.Nodes.AllowPrivate
	default:
		errs = append(errs, errors.New("TOLLGATE_NODE_PROOF must be required or off"))
	}
	if v := getenv("TOLLGATE_NODE_REGISTER_PER_HOUR"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < -1 {
			errs = append(errs, errors.New("TOLLGATE_NODE_REGISTER_PER_HOUR must be an integer >= -1"))
		} else {
			c.Nodes.RegisterPerHour = n
		}
	}
	if c.Nodes.AllowCIDRs, err = netpolicy.ParsePrefixes(strings.Fields(strings.ReplaceAll(getenv("TOLLGATE_NODE_ALLOW_CIDRS"), ",", " "))); err != nil {
		errs = append(errs, fmt.Errorf("TOLLGATE_NODE_ALLOW_CIDRS: %w", err))
	}

	start, _ := strconv.ParseUint(getenv("TOLLGATE_CLAIMS_START_BLOCK"), 10, 64) // not a number: from block 0, as always
	c.Claims = Claims{SignerKey: trimmed("TOLLGATE_CLAIM_SIGNER_KEY"), Validity: DefaultClaimValidity, StartBlock: start,
		Confirmations: DefaultClaimConfirmations, WatchSchedule: schedule("TOLLGATE_CLAIM_WATCH_SCHEDULE", DefaultClaimWatchSchedule),
		SweepSchedule: schedule("TOLLGATE_CLAIM_SWEEP_SCHEDULE", DefaultClaimSweepSchedule)}
	if v := getenv("TOLLGATE_CLAIM_VALIDITY"); v != "" {
		if c.Claims.Validity, err = time.ParseDuration(v); err != nil || c.Claims.Validity <= 0 {
			errs = append(errs, errors.New("TOLLGATE_CLAIM_VALIDITY must be a positive duration"))
		}
	}
	if v := getenv("TOLLGATE_CLAIM_CONFIRMATIONS"); v != "" {
		if c.Claims.Confirmations, err = strconv.ParseUint(v, 10, 64); err != nil {
			errs = append(errs, errors.New("TOLLGATE_CLAIM_CONFIRMATIONS must be a non-negative integer"))
		}
	}

	c.Gateway = Gateway{URL: strings.TrimRight(trimmed("TOLLGATE_GATEWAY_URL"), "/"), AdminToken: getenv("TOLLGATE_GATEWAY_ADMIN_TOKEN"),
		ProbeSchedule: schedule("TOLLGATE_GATEWAY_PROBE_SCHEDULE", DefaultGatewayProbeSchedule)}
	if c.Gateway.AdminToken == "" {
		c.Gateway.AdminToken = c.AdminToken // the root Caddyfile gives the gateway this one
	}
	return errors.Join(errs...)
}

func readIntel(trimmed func(string) string) (Intel, error) {
	s := Intel{BinanceURL: strings.TrimRight(trimmed("TOLLGATE_VENUE_BINANCE_URL"), "/"),
		BybitURL: strings.TrimRight(trimmed("TOLLGATE_VENUE_BYBIT_URL"), "/"), Interval: DefaultIntelInterval, Symbols: DefaultIntelSymbols}
	for _, v := range []struct{ name, url string }{{"TOLLGATE_VENUE_BINANCE_URL", s.BinanceURL}, {"TOLLGATE_VENUE_BYBIT_URL", s.BybitURL}} {
		if v.url != "" && !strings.HasPrefix(v.url, "http://") && !strings.HasPrefix(v.url, "https://") {
			return s, fmt.Errorf("%s must be an http(s) URL", v.name)
		}
	}
	if v := trimmed("TOLLGATE_INTEL_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return s, errors.New("TOLLGATE_INTEL_INTERVAL must be a whole number of seconds ≥ 1s, e.g. 60s")
		}
		s.Interval = d
	}
	if v := trimmed("TOLLGATE_INTEL_SYMBOLS"); v != "" {
		s.Symbols = nil
		for _, p := range strings.Split(v, ",") {
			p = strings.ToUpper(strings.TrimSpace(p))
			if !validSymbol(p) {
				return s, fmt.Errorf("TOLLGATE_INTEL_SYMBOLS: %q is not a symbol like BTCUSDT", p)
			}
			s.Symbols = append(s.Symbols, p)
		}
	}
	return s, nil
}

func validSymbol(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

// readTxPolicy reads TOLLGATE_TX_STUCK_AFTER, TOLLGATE_TX_FEE_BUMP_PERCENT
// and TOLLGATE_TX_MAX_FEE_GWEI (unset: the chain package's defaults).
func readTxPolicy(trimmed func(string) string) (chain.TxPolicy, error) {
	var p chain.TxPolicy
	var errs []error
	if v := trimmed("TOLLGATE_TX_STUCK_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, errors.New("TOLLGATE_TX_STUCK_AFTER must be a positive duration (e.g. 3m)"))
		}
		p.StuckAfter = d
	}
	if v := trimmed("TOLLGATE_TX_FEE_BUMP_PERCENT"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < chain.MinBumpPercent || n > 1000 {
			errs = append(errs, fmt.Errorf("TOLLGATE_TX_FEE_BUMP_PERCENT must be an integer from %d to 1000 (nodes refuse smaller replacements)",
				chain.MinBumpPercent))
		}
		p.BumpPercent = n
	}
	if v := trimmed("TOLLGATE_TX_MAX_FEE_GWEI"); v != "" {
		w, err := chain.ParseGwei(v)
		if err != nil || w.Sign() <= 0 {
			errs = append(errs, errors.New("TOLLGATE_TX_MAX_FEE_GWEI must be a positive decimal amount of gwei"))
		}
		p.MaxFeePerGas = w
	}
	return p, errors.Join(errs...)
}

// moneyAddress checks a set money address outside the dev profile by the
// one money-address rule (devaccounts.MoneyAddress).
func moneyAddress(name, v string) error {
	if v == "" {
		return nil
	}
	if _, err := devaccounts.MoneyAddress(v, false); err != nil {
		return fmt.Errorf("%s %w", name, err)
	}
	return nil
}
