// Command settlementd is Tollgate's settlement daemon: it ingests the
// gateway's event stream into PostgreSQL, closes 60-second epochs with the
// 50/30/20 split and node shares, and runs the leader-elected jobs.
// `settlementd -h` lists the subcommands and every setting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chainjobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/statemetrics"
	"github.com/tollgate-rpc/tollgate/settlementd/migrations"
	tgversion "github.com/tollgate-rpc/tollgate/shared/version"
)

// version may be set at build time with -ldflags "-X main.version=…";
// otherwise it is shared/version's (make build and make release stamp that
// one from git describe --tags --always).
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "run"
	var migrateCmd []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, "settlementd", buildVersion())
		return 0
	case "help":
		args = []string{"-h"}
		cmd = "run"
	case "run", "reconcile":
	case "migrate":
		// migrate [up | status | force N]; bare: up.
		var err error
		if migrateCmd, args, err = migrateArgs(args); err != nil {
			fmt.Fprintln(stderr, "settlementd:", err)
			return 2
		}
	default:
		fmt.Fprintf(stderr, "settlementd: unknown command %q (run, migrate, reconcile, version; -h for help)\n", cmd)
		return 2
	}
	cfg, err := config.Load(args, getenv, stderr)
	if err == nil && cmd == "migrate" && cfg.DatabaseURL == "" {
		err = errors.New("migrate needs DATABASE_URL")
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "settlementd:", err)
		return 2
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "settlementd:", err)
		return 2
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "migrate":
		err = runMigrate(cfg.DatabaseURL, migrateCmd, stdout, log)
	case "reconcile":
		err = runReconcile(ctx, cfg, log)
	default:
		err = runDaemon(ctx, cfg, log)
	}
	if err != nil {
		log.Error("settlementd failed", zap.String("command", cmd), zap.Error(err))
		return 1
	}
	return 0
}

// runDaemon wires every part from cfg, which config.Load read once: nothing
// below reads the environment.
func runDaemon(ctx context.Context, cfg *config.Config, log *zap.Logger) error {
	// The ingester allocates per stream entry; a higher GC target than
	// Go's 100 trades memory for its CPU (docs/decisions.md).
	if !cfg.GOGCFromEnv {
		debug.SetGCPercent(cfg.GCPercent)
	}
	d, err := daemon.New(ctx, cfg, log, buildVersion())
	if err != nil {
		return err
	}
	if err := registerRecovery(d, cfg, log); err != nil {
		return err
	}
	// One chain-137 client, dialled once (its chain id checked) and shared
	// by the chain jobs and the HTTP API (claims, their watcher).
	var client *ethclient.Client
	if cfg.Chain.RPCURL != "" {
		if client, err = chain.Dial(ctx, cfg.Chain.RPCURL, cfg.Chain.ChainID); err != nil {
			return err
		}
		defer client.Close()
	}
	cj, err := registerChainJobs(ctx, d, cfg, log, client)
	if err != nil {
		return err
	}
	if cj != nil {
		defer cj.Close()
	}
	d.Registry().MustRegister(statemetrics.New(statemetrics.Config{Pool: d.Pool(), Redis: d.Redis(), Streams: cfg.Streams(),
		Settlement: cj != nil && cj.Settlement != nil}))
	closeNodeAPI, err := registerNodeAPI(ctx, d, cfg, log, cj, client, watchChains(ctx, cfg, log))
	if err != nil {
		return err
	}
	defer closeNodeAPI()
	if err := registerIntelJob(d, cfg, log); err != nil {
		return err
	}
	closeX402, err := registerX402(ctx, d, cfg, log)
	if err != nil {
		return err
	}
	defer closeX402()
	if err := registerConsole(d, cfg, log); err != nil {
		return err
	}
	return d.Run(ctx)
}

// registerChainJobs adds the leader-only chain jobs (deposits, settlement,
// solvency) that cfg.Chain configures; without a chain RPC URL there are
// none and settlementd only ingests and closes epochs.
func registerChainJobs(ctx context.Context, d *daemon.Daemon, cfg *config.Config, log *zap.Logger, client *ethclient.Client) (*chainjobs.Jobs, error) {
	cj, err := chainjobs.Build(ctx, cfg.Chain, chainjobs.Deps{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Shards: cfg.RedisShards, Client: client,
		Fence: d.Elector(), Registry: d.Registry(), Log: log})
	if err != nil {
		return nil, err
	}
	for _, j := range cj.Scheduled() {
		if err := d.Scheduler().Add(j.Schedule, j.Job); err != nil {
			cj.Close()
			return nil, fmt.Errorf("schedule %s: %w", j.Job.Name(), err)
		}
		log.Info("chain job scheduled", zap.String("job", j.Job.Name()), zap.String("schedule", j.Schedule))
	}
	if cj.Deposits != nil {
		cj.Deposits.Register(d.Registry())
	}
	return cj, nil
}

func runReconcile(ctx context.Context, cfg *config.Config, log *zap.Logger) error {
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return errors.New("opening the PostgreSQL pool failed (check DATABASE_URL)")
	}
	defer pool.Close()
	rdb, err := daemon.NewRedis(cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if err := daemon.Ping(ctx, pool, rdb); err != nil {
		return err
	}
	rep, err := reconcile.Run(ctx, pool, rdb, reconcile.Options{Prefix: cfg.Prefix, Shards: cfg.RedisShards, Apply: cfg.Apply, Force: cfg.Force}, log.Named("reconcile"))
	if err != nil {
		return err
	}
	log.Info("reconcile finished", zap.Bool("applied", cfg.Apply), zap.Int("accounts", rep.Accounts),
		zap.Int("accounts_differing", rep.Changed), zap.Any("fields_differing", rep.Fields), zap.String("generation", rep.Generation))
	return nil
}

func newLogger(cfg *config.Config, stderr io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(cfg.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("log-level: %w", err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if cfg.LogFormat == "console" {
		encoder = zapcore.NewConsoleEncoder(enc)
	} else {
		encoder = zapcore.NewJSONEncoder(enc)
	}
	core := zapcore.NewCore(encoder, zapcore.AddSync(stderr), level)
	return zap.New(core).Named("settlementd"), nil
}

func buildVersion() string {
	if version != "" {
		return version
	}
	return tgversion.String()
}

// migrateArgs splits `migrate [up | status | force N] [flags]` into the
// migrate command and the flags.
func migrateArgs(args []string) ([]string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return []string{"up"}, args, nil
	}
	switch args[0] {
	case "up", "status":
		return args[:1], args[1:], nil
	case "force":
		if len(args) < 2 {
			return nil, nil, errors.New("migrate force needs the version to record (the last one that applied fully; see migrate status)")
		}
		if _, err := strconv.Atoi(args[1]); err != nil {
			return nil, nil, fmt.Errorf("migrate force %q: want a version number", args[1])
		}
		return args[:2], args[2:], nil
	}
	return nil, nil, fmt.Errorf("unknown migrate command %q (up, status, force N)", args[0])
}

// runMigrate runs `settlementd migrate up|status|force N`.
func runMigrate(dsn string, cmd []string, stdout io.Writer, log *zap.Logger) error {
	switch cmd[0] {
	case "status":
		st, err := migrations.Status(dsn)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, st)
		return nil
	case "force":
		v, _ := strconv.Atoi(cmd[1])
		if err := migrations.Force(dsn, v); err != nil {
			return err
		}
		log.Warn("schema version forced: nothing was run; `settlementd migrate up` applies what follows it", zap.Int("version", v))
		return nil
	}
	if err := migrations.Up(dsn); err != nil {
		return err
	}
	st, err := migrations.Status(dsn)
	if err != nil {
		return err
	}
	log.Info("migrations applied", zap.Uint("version", st.Version))
	fmt.Fprintln(stdout, st)
	return nil
}
