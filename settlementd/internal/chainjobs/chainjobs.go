// Package chainjobs builds settlementd's chain-facing jobs (deposits,
// settlement, solvency) from one set of settings, so the daemon wires them
// with a few lines:
//
//	cj, err := chainjobs.Build(ctx, cfg.Chain, chainjobs.Deps{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix,
//		Client: client, Fence: d.Elector(), Log: log})
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
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/deposits"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settle"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/solvency"
	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
)

// Settings of the chain jobs: config.Chain, which config.Load reads from
// the environment (keys and URLs never pass through flags or files).
type Settings = config.Chain

// Default schedules (jobs.Parser syntax, seconds first).
const (
	DefaultDepositSchedule    = config.DefaultDepositSchedule
	DefaultSettlementSchedule = config.DefaultSettlementSchedule
	DefaultSolvencySchedule   = config.DefaultSolvencySchedule
)

// Deps are the daemon's shared clients.
type Deps struct {
	Pool   *pgxpool.Pool
	Redis  redis.Scripter
	Prefix string       // Redis key prefix (the daemon's -prefix)
	Shards int          // metering shards (the daemon's -redis-shards)
	Fence  chain.Fencer // the leader elector
	// Registry receives the transaction metrics (nil: not exported).
	Registry prometheus.Registerer
	Log      *zap.Logger
	// Client is the daemon's chain client for s.RPCURL, dialled once and
	// shared with the HTTP API; the caller closes it. Nil: Build dials
	// s.RPCURL itself and Jobs.Close closes that client.
	Client *ethclient.Client
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

// addr checks one money setting by the one money-address rule
// (devaccounts.MoneyAddress), as the gateway's payments settings
// (docs/operators.md, "Configuration refusals").
func addr(name, v string, required, dev bool) (common.Address, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		if required {
			return common.Address{}, fmt.Errorf("%s is required", name)
		}
		return common.Address{}, nil
	}
	a, err := devaccounts.MoneyAddress(v, dev)
	if err != nil {
		return a, fmt.Errorf("%s %w", name, err)
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
	usdt := check(addr("TOLLGATE_USDT_ADDRESS", s.USDT, true, s.Dev))
	vault := check(addr("TOLLGATE_VAULT_ADDRESS", s.Vault, true, s.Dev))
	claims := check(addr("TOLLGATE_CLAIMS_ADDRESS", s.Claims, true, s.Dev))
	settling := s.TreasuryKey != "" || s.RelayerKey != ""
	platform := check(addr("TOLLGATE_PLATFORM_WALLET", s.PlatformWallet, settling, s.Dev))
	pool := check(addr("TOLLGATE_POOL_WALLET", s.PoolWallet, settling, s.Dev))
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

	client := d.Client
	if client == nil {
		c, err := chain.Dial(ctx, s.RPCURL, s.ChainID)
		if err != nil {
			return nil, err
		}
		client, out.client = c, c
	}
	var err error
	if out.Deposits, err = deposits.New(deposits.Config{Pool: d.Pool, Redis: d.Redis, Prefix: d.Prefix, Shards: d.Shards, Client: client,
		ChainID: s.ChainID, Vault: vault, Confirmations: s.Confirmations, StartBlock: s.VaultStartBlock, Fence: d.Fence, Log: d.Log}); err != nil {
		out.Close()
		return nil, err
	}
	if settling {
		if out.Settlement, err = settle.New(settle.Config{Pool: d.Pool, Client: client, ChainID: s.ChainID, USDT: usdt, Claims: claims,
			PlatformWallet: platform, PoolWallet: pool, Treasury: treasury, Relayer: relayer, TxPolicy: s.TxPolicy, Fence: d.Fence,
			Hold: s.SettlementHold, Log: d.Log}); err != nil {
			client.Close()
			return nil, err
		}
	} else {
		log.Warn("TOLLGATE_TREASURY_KEY / TOLLGATE_RELAYER_KEY are not set: the settlement job is off")
	}
	if out.Solvency, err = solvency.New(solvency.Config{Pool: d.Pool, Client: client, ChainID: s.ChainID, USDT: usdt, Claims: claims,
		WebhookURL: s.WebhookURL, Governor: governor, TxPolicy: s.TxPolicy, Fence: d.Fence, Log: d.Log}); err != nil {
		out.Close()
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
