// Package chainjobs builds settlementd's chain-facing jobs (deposits,
// settlement, solvency) from one set of settings, so the daemon wires them
// with a few lines:
//
//	s, err := chainjobs.FromEnv(os.Getenv)
//	cj, err := chainjobs.Build(ctx, s, chainjobs.Deps{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Fence: d.Elector(), Log: log})
//	defer cj.Close()
//	for _, j := range cj.Scheduled() { d.Scheduler().Add(j.Schedule, j.Job) }
//
// A job whose settings are missing is left out (and said so in the log):
// no RPC URL → none of them; no treasury or relayer key → no settlement.
package chainjobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/deposits"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settle"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/solvency"
)

// Settings of the chain jobs. Env is the environment variable FromEnv reads.
type Settings struct {
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

	// TxPolicy prices every transaction settlementd signs and unsticks it:
	//   TOLLGATE_TX_STUCK_AFTER       not mined this long after broadcast → replaced (Go duration, default 3m)
	//   TOLLGATE_TX_FEE_BUMP_PERCENT  tip and fee cap raise per replacement (default 20, at least 10)
	//   TOLLGATE_TX_MAX_FEE_GWEI      ceiling of any fee cap, decimal gwei (default 1000); reaching it alerts
	TxPolicy chain.TxPolicy
}

// Default schedules (jobs.Parser syntax, seconds first).
const (
	DefaultDepositSchedule    = "*/5 * * * * *"
	DefaultSettlementSchedule = "0 */5 * * * *"
	DefaultSolvencySchedule   = "30 */5 * * * *"
)

// FromEnv reads the settings from the environment (getenv is os.Getenv).
// Keys and URLs are read here and nowhere else, so they never pass through
// flags or config files.
func FromEnv(getenv func(string) string) (Settings, error) {
	s := Settings{
		RPCURL: getenv("TOLLGATE_CHAIN_RPC_URL"), USDT: getenv("TOLLGATE_USDT_ADDRESS"), Vault: getenv("TOLLGATE_VAULT_ADDRESS"),
		Claims: getenv("TOLLGATE_CLAIMS_ADDRESS"), PlatformWallet: getenv("TOLLGATE_PLATFORM_WALLET"), PoolWallet: getenv("TOLLGATE_POOL_WALLET"),
		TreasuryKey: getenv("TOLLGATE_TREASURY_KEY"), RelayerKey: getenv("TOLLGATE_RELAYER_KEY"), GovernorKey: getenv("TOLLGATE_GOVERNOR_KEY"),
		WebhookURL: getenv("TOLLGATE_ALERT_WEBHOOK_URL"), DepositSchedule: getenv("TOLLGATE_DEPOSIT_SCHEDULE"),
		SettlementSchedule: getenv("TOLLGATE_SETTLEMENT_SCHEDULE"), SolvencySchedule: getenv("TOLLGATE_SOLVENCY_SCHEDULE"),
	}
	var errs []error
	for name, p := range map[string]*uint64{"TOLLGATE_CHAIN_ID": &s.ChainID, "TOLLGATE_VAULT_START_BLOCK": &s.VaultStartBlock,
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": &s.Confirmations} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s must be a non-negative integer", name))
			}
			*p = n
		}
	}
	var err error
	if s.TxPolicy, err = TxPolicyFromEnv(getenv); err != nil {
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

// TxPolicyFromEnv reads TOLLGATE_TX_STUCK_AFTER, TOLLGATE_TX_FEE_BUMP_PERCENT
// and TOLLGATE_TX_MAX_FEE_GWEI (unset: the chain package's defaults). The
// x402 facilitator's transactions on Base follow the same policy.
func TxPolicyFromEnv(getenv func(string) string) (chain.TxPolicy, error) {
	var p chain.TxPolicy
	var errs []error
	if v := strings.TrimSpace(getenv("TOLLGATE_TX_STUCK_AFTER")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, errors.New("TOLLGATE_TX_STUCK_AFTER must be a positive duration (e.g. 3m)"))
		}
		p.StuckAfter = d
	}
	if v := strings.TrimSpace(getenv("TOLLGATE_TX_FEE_BUMP_PERCENT")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < chain.MinBumpPercent || n > 1000 {
			errs = append(errs, fmt.Errorf("TOLLGATE_TX_FEE_BUMP_PERCENT must be an integer from %d to 1000 (nodes refuse smaller replacements)",
				chain.MinBumpPercent))
		}
		p.BumpPercent = n
	}
	if v := strings.TrimSpace(getenv("TOLLGATE_TX_MAX_FEE_GWEI")); v != "" {
		w, err := chain.ParseGwei(v)
		if err != nil || w.Sign() <= 0 {
			errs = append(errs, errors.New("TOLLGATE_TX_MAX_FEE_GWEI must be a positive decimal amount of gwei"))
		}
		p.MaxFeePerGas = w
	}
	return p, errors.Join(errs...)
}

// Deps are the daemon's shared clients.
type Deps struct {
	Pool   *pgxpool.Pool
	Redis  redis.Scripter
	Prefix string       // Redis key prefix (the daemon's -prefix)
	Fence  chain.Fencer // the leader elector
	// Registry receives the transaction metrics (nil: not exported).
	Registry prometheus.Registerer
	Log      *zap.Logger
}

// Scheduled is a job and its schedule.
type Scheduled struct {
	Schedule string
	Job      interface {
		Name() string
		Run(ctx context.Context) error
	}
}

// Jobs are the built jobs; a nil field was not configured.
type Jobs struct {
	Deposits   *deposits.Listener
	Settlement *settle.Job
	Solvency   *solvency.Checker

	s      Settings
	client *ethclient.Client
}

// Scheduled lists the configured jobs with their schedules.
func (j *Jobs) Scheduled() []Scheduled {
	var out []Scheduled
	if j.Deposits != nil {
		out = append(out, Scheduled{j.s.DepositSchedule, j.Deposits})
	}
	if j.Settlement != nil {
		out = append(out, Scheduled{j.s.SettlementSchedule, j.Settlement})
	}
	if j.Solvency != nil {
		out = append(out, Scheduled{j.s.SolvencySchedule, j.Solvency})
	}
	return out
}

// Close releases the RPC client.
func (j *Jobs) Close() {
	if j.client != nil {
		j.client.Close()
	}
}

func addr(name, v string, required bool) (common.Address, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		if required {
			return common.Address{}, fmt.Errorf("%s is required", name)
		}
		return common.Address{}, nil
	}
	if !common.IsHexAddress(v) {
		return common.Address{}, fmt.Errorf("%s is not an address", name)
	}
	a := common.HexToAddress(v)
	if a == (common.Address{}) {
		return a, fmt.Errorf("%s is the zero address", name)
	}
	return a, nil
}

// Build dials the RPC (checking the chain id) and builds every job whose
// settings are present. Errors name settings, never their secret values.
func Build(ctx context.Context, s Settings, d Deps) (*Jobs, error) {
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	log := d.Log.Named("chainjobs")
	if s.ChainID == 0 {
		s.ChainID = 137
	}
	if s.DepositSchedule == "" {
		s.DepositSchedule = DefaultDepositSchedule
	}
	if s.SettlementSchedule == "" {
		s.SettlementSchedule = DefaultSettlementSchedule
	}
	if s.SolvencySchedule == "" {
		s.SolvencySchedule = DefaultSolvencySchedule
	}
	out := &Jobs{s: s}
	if strings.TrimSpace(s.RPCURL) == "" {
		log.Warn("TOLLGATE_CHAIN_RPC_URL is not set: the deposit listener, settlement and solvency jobs are off")
		return out, nil
	}
	var errs []error
	check := func(a common.Address, err error) common.Address {
		if err != nil {
			errs = append(errs, err)
		}
		return a
	}
	usdt := check(addr("TOLLGATE_USDT_ADDRESS", s.USDT, true))
	vault := check(addr("TOLLGATE_VAULT_ADDRESS", s.Vault, true))
	claims := check(addr("TOLLGATE_CLAIMS_ADDRESS", s.Claims, true))
	settling := s.TreasuryKey != "" || s.RelayerKey != ""
	platform := check(addr("TOLLGATE_PLATFORM_WALLET", s.PlatformWallet, settling))
	pool := check(addr("TOLLGATE_POOL_WALLET", s.PoolWallet, settling))
	var treasury, relayer, governor *chain.Signer
	parse := func(role, env, v string) *chain.Signer {
		if v == "" {
			return nil
		}
		k, err := chain.ParseSigner(role, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
		}
		return k
	}
	treasury = parse("treasury", "TOLLGATE_TREASURY_KEY", s.TreasuryKey)
	relayer = parse("relayer", "TOLLGATE_RELAYER_KEY", s.RelayerKey)
	governor = parse("governor", "TOLLGATE_GOVERNOR_KEY", s.GovernorKey)
	if settling && (s.TreasuryKey == "" || s.RelayerKey == "") {
		errs = append(errs, errors.New("settlement needs both TOLLGATE_TREASURY_KEY and TOLLGATE_RELAYER_KEY"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("chainjobs: %w", errors.Join(errs...))
	}

	client, err := chain.Dial(ctx, s.RPCURL, s.ChainID)
	if err != nil {
		return nil, err
	}
	out.client = client
	if out.Deposits, err = deposits.New(deposits.Config{Pool: d.Pool, Redis: d.Redis, Prefix: d.Prefix, Client: client,
		ChainID: s.ChainID, Vault: vault, Confirmations: s.Confirmations, StartBlock: s.VaultStartBlock, Fence: d.Fence, Log: d.Log}); err != nil {
		client.Close()
		return nil, err
	}
	if settling {
		if out.Settlement, err = settle.New(settle.Config{Pool: d.Pool, Client: client, ChainID: s.ChainID, USDT: usdt, Claims: claims,
			PlatformWallet: platform, PoolWallet: pool, Treasury: treasury, Relayer: relayer, TxPolicy: s.TxPolicy, Fence: d.Fence,
			Log: d.Log}); err != nil {
			client.Close()
			return nil, err
		}
	} else {
		log.Warn("TOLLGATE_TREASURY_KEY / TOLLGATE_RELAYER_KEY are not set: the settlement job is off")
	}
	if out.Solvency, err = solvency.New(solvency.Config{Pool: d.Pool, Client: client, ChainID: s.ChainID, USDT: usdt, Claims: claims,
		WebhookURL: s.WebhookURL, Governor: governor, TxPolicy: s.TxPolicy, Fence: d.Fence, Log: d.Log}); err != nil {
		client.Close()
		return nil, err
	}
	fields := []zap.Field{zap.String("rpc", chain.Redact(s.RPCURL)), zap.Uint64("chain_id", s.ChainID), zap.String("vault", vault.Hex()),
		zap.String("claims", claims.Hex()), zap.Bool("settlement", out.Settlement != nil), zap.Bool("alert_webhook", s.WebhookURL != "")}
	if treasury != nil {
		fields = append(fields, zap.Stringer("treasury", treasury), zap.Stringer("relayer", relayer))
	}
	if governor != nil {
		fields = append(fields, zap.Stringer("governor", governor))
	}
	if d.Registry != nil {
		chain.RegisterMetrics(d.Registry)
	}
	log.Info("chain jobs configured", fields...)
	return out, nil
}
