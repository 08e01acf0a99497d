// Package config reads every setting of settlementd, once, in Load. The
// options come from, in increasing priority: built-in defaults, an optional
// config file (JSON, or YAML by extension), the environment, and
// command-line flags. Every option has one name used everywhere: the flag
// "-ingest-batch" is the file key "ingest-batch" and the variable
// TOLLGATE_INGEST_BATCH (the connection strings keep their conventional
// names DATABASE_URL and REDIS_URL). Keys, secrets and RPC URLs, and the
// settings that go with them, come from the environment only (env.go) and
// are grouped by what uses them: Chain, Intel, X402, Auth, Nodes, Claims,
// Gateway.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// Config is every setting of settlementd.
type Config struct {
	DatabaseURL string
	RedisURL    string
	Prefix      string
	// RedisCluster: REDIS_URL names a Redis Cluster (go-redis
	// ParseClusterURL: redis://host:port?addr=host2:port2&…); also assumed
	// when the URL lists addr= seeds.
	RedisCluster bool
	// RedisShards is the number of metering shards the gateways spread
	// payers over (the same value as their redis_shards): every shard has
	// its own event stream, and settlementd consumes each.
	RedisShards int
	HTTPAddr    string

	Consumer      string
	IngestWorkers int
	IngestBatch   int
	IngestBlock   time.Duration
	// GCPercent is the daemon's Go GC target (as GOGC), set at start
	// unless GOGC is in the environment (GOGCFromEnv), which then wins.
	GCPercent    int
	GOGCFromEnv  bool
	ClaimMinIdle time.Duration
	ClaimEvery   time.Duration

	EpochGrace         time.Duration
	EpochCloseSchedule string
	// EvidenceLookback is how far before a piece of evidence against a node
	// its lies are presumed to reach: the close of the epoch the evidence
	// is booked into withholds the node's share of every unsettled epoch
	// within [min(ts − lookback, suspect_since), ts] (epochs.Closer.Lookback).
	// It is also the default settlement hold (Chain.SettlementHold).
	EvidenceLookback time.Duration

	LeaderHeartbeat time.Duration
	LeaderRetry     time.Duration

	ShutdownTimeout time.Duration
	Migrate         bool
	LogLevel        string
	LogFormat       string

	Apply bool // reconcile: write the differences
	Force bool // reconcile: run although the stream is not fully ingested

	ConfigFile string
	// ChainsFile (TOLLGATE_CHAINS_FILE) is the chains file (shared/chains
	// File, JSON): chains served beyond the built-in five, as in the
	// gateway's configuration. Chains is the table it gives (the built-in
	// one without a file); SIGHUP reads the file again (ReloadChains).
	ChainsFile string
	Chains     *chains.Table

	// Environment-only settings (env.go): read here once and passed down,
	// never from flags or files.
	AdminToken         string        // TOLLGATE_ADMIN_TOKEN: X-Admin-Token of /admin/*; "" = /admin/* is 404
	RedisWatchInterval time.Duration // TOLLGATE_REDIS_WATCH_INTERVAL: how often the leader checks for Redis loss
	// TxPolicy (TOLLGATE_TX_*) prices and unsticks every transaction
	// settlementd signs: chain 137's (Chain.TxPolicy) and x402's on Base.
	TxPolicy chain.TxPolicy
	Chain    Chain
	Intel    Intel
	X402     X402
	Auth     Auth
	Nodes    Nodes
	Claims   Claims
	Gateway  Gateway
}

// Stream is the event stream key of a single-shard deployment (shard 0's).
func (c *Config) Stream() string { return c.Prefix + "events" }

// Streams are every shard's event stream, which the ingest consumes and the
// epoch closer waits for.
func (c *Config) Streams() []string { return shardStreams(c.Prefix, c.RedisShards) }

// Cluster reports whether REDIS_URL names a Redis Cluster.
func (c *Config) Cluster() bool { return IsClusterURL(c.RedisURL, c.RedisCluster) }

// IsClusterURL: cluster is set, or the URL lists addr= seed nodes (which
// only a cluster URL can).
func IsClusterURL(raw string, cluster bool) bool {
	if cluster {
		return true
	}
	u, err := url.Parse(raw)
	return err == nil && u.Query().Has("addr")
}

// option binds one setting to its flag, file key and environment variable.
type option struct {
	name, env string
}

// Usage is the text above the option list of -h.
const Usage = `settlementd — Tollgate's settlement daemon: stream ingest, epochs, leader-elected jobs.

Usage:
  settlementd [run] [flags]     run the daemon (default)
  settlementd migrate [flags]   apply the database migrations and exit
  settlementd reconcile [flags] rebuild Redis key records and balances from Postgres
                                (dry run unless -apply)
  settlementd version           print the version

Settings come from flags, then the environment, then the -config file, then
the defaults shown. File keys are the flag names. Durations are Go durations
("5s", "1m30s"). Secrets (DATABASE_URL, REDIS_URL passwords) are never logged.

Flags:
`

// Load parses args (the flags after the subcommand) with the environment
// from getenv. A -h/-help request returns flag.ErrHelp after writing the
// usage to out.
func Load(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	getenv, fileErr := withFiles(getenv)
	host, _ := os.Hostname()
	if host == "" {
		host = "settlementd"
	}
	c := &Config{GOGCFromEnv: getenv("GOGC") != ""}
	fs := flag.NewFlagSet("settlementd", flag.ContinueOnError)
	fs.SetOutput(out)
	var opts []option
	add := func(name, env string) string {
		opts = append(opts, option{name, env})
		return " (env " + env + ")"
	}
	str := func(p *string, name, env, def, help string) { fs.StringVar(p, name, def, help+add(name, env)) }
	dur := func(p *time.Duration, name, env string, def time.Duration, help string) {
		fs.DurationVar(p, name, def, help+add(name, env))
	}
	num := func(p *int, name, env string, def int, help string) { fs.IntVar(p, name, def, help+add(name, env)) }
	boo := func(p *bool, name, env string, def bool, help string) { fs.BoolVar(p, name, def, help+add(name, env)) }

	str(&c.ConfigFile, "config", "TOLLGATE_CONFIG", "", "config file, JSON or YAML (.yaml/.yml); keys are these flag names")
	str(&c.ChainsFile, "chains-file", "TOLLGATE_CHAINS_FILE", "",
		"chains file (JSON): chains served beyond the built-in ones, as in the gateway's configuration; SIGHUP re-reads it")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL connection string (required)")
	str(&c.RedisURL, "redis-url", "REDIS_URL", "redis://127.0.0.1:6379/0", "Redis URL")
	str(&c.Prefix, "prefix", "TOLLGATE_PREFIX", "tollgate:", "Redis key prefix shared with the gateway; the event stream is <prefix>events")
	boo(&c.RedisCluster, "redis-cluster", "TOLLGATE_REDIS_CLUSTER", false,
		"REDIS_URL names a Redis Cluster (redis://host:port?addr=host2:port2&...; assumed when it lists addr= seeds)")
	num(&c.RedisShards, "redis-shards", "TOLLGATE_REDIS_SHARDS", 1,
		"metering shards the gateways spread payers over (their redis_shards); settlementd consumes every shard's event stream")
	str(&c.HTTPAddr, "http-addr", "TOLLGATE_HTTP_ADDR", "127.0.0.1:8081", "HTTP listen address (/health, /metrics, API)")
	str(&c.Consumer, "consumer", "TOLLGATE_CONSUMER", "",
		"consumer name in the stream's consumer group, unique per process (default <hostname>-<pid>; a stable name lets a restart recover its own pending entries at once)")
	num(&c.IngestWorkers, "ingest-workers", "TOLLGATE_INGEST_WORKERS", 2, "stream consumers in this process")
	num(&c.IngestBatch, "ingest-batch", "TOLLGATE_INGEST_BATCH", 4000, "stream entries per read and per Postgres transaction")
	dur(&c.IngestBlock, "ingest-block", "TOLLGATE_INGEST_BLOCK", time.Second, "how long a stream read waits for new entries")
	num(&c.GCPercent, "gc-percent", "TOLLGATE_GC_PERCENT", 400,
		"the daemon's Go GC target percentage, as GOGC (a GOGC variable takes precedence); higher spends memory to save the ingester's CPU, GOMEMLIMIT caps it")
	dur(&c.ClaimMinIdle, "claim-min-idle", "TOLLGATE_CLAIM_MIN_IDLE", 30*time.Second,
		"idle time after which another consumer's pending entries are taken over (XAUTOCLAIM)")
	dur(&c.ClaimEvery, "claim-every", "TOLLGATE_CLAIM_EVERY", 5*time.Second, "how often pending entries are checked for takeover")
	dur(&c.EpochGrace, "epoch-grace", "TOLLGATE_EPOCH_GRACE", 5*time.Second,
		"how long after its end an epoch waits for late stream entries before it closes")
	str(&c.EpochCloseSchedule, "epoch-close-schedule", "TOLLGATE_EPOCH_CLOSE_SCHEDULE", "*/2 * * * * *",
		"cron schedule of the epoch closer (seconds field first)")
	dur(&c.EvidenceLookback, "evidence-lookback", "TOLLGATE_EVIDENCE_LOOKBACK", DefaultEvidenceLookback,
		"how far before evidence of a lie the node's share of unsettled epochs is withheld too (also the default TOLLGATE_SETTLEMENT_HOLD)")
	dur(&c.LeaderHeartbeat, "leader-heartbeat", "TOLLGATE_LEADER_HEARTBEAT", time.Second,
		"how often the leader checks its lock connection; it steps down when a check fails")
	dur(&c.LeaderRetry, "leader-retry", "TOLLGATE_LEADER_RETRY", 2*time.Second, "how often a follower tries to become leader")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "TOLLGATE_SHUTDOWN_TIMEOUT", 30*time.Second,
		"how long SIGINT/SIGTERM waits for running jobs and the in-flight ingest batch")
	boo(&c.Migrate, "migrate", "TOLLGATE_MIGRATE", false,
		"apply database migrations on start: on ONE replica only (or run `settlementd migrate up` before upgrading); without it a replica refuses a schema older than it needs")
	str(&c.LogLevel, "log-level", "TOLLGATE_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "TOLLGATE_LOG_FORMAT", "json", "json or console")
	boo(&c.Apply, "apply", "TOLLGATE_RECONCILE_APPLY", false, "reconcile: write the differences (default: report only)")
	boo(&c.Force, "force", "TOLLGATE_RECONCILE_FORCE", false, "reconcile: run although the event stream is not fully ingested")

	fs.Usage = func() {
		fmt.Fprint(fs.Output(), Usage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), EnvUsage)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })

	// The config file's own path may come from the environment.
	if !explicit["config"] && getenv("TOLLGATE_CONFIG") != "" {
		c.ConfigFile = getenv("TOLLGATE_CONFIG")
	}
	file := map[string]string{}
	if c.ConfigFile != "" {
		var err error
		if file, err = readFile(c.ConfigFile); err != nil {
			return nil, err
		}
		known := map[string]bool{}
		for _, o := range opts {
			known[o.name] = true
		}
		for k := range file {
			if !known[k] || k == "config" {
				return nil, fmt.Errorf("config file %s: unknown key %q", c.ConfigFile, k)
			}
		}
	}
	for _, o := range opts {
		if explicit[o.name] || o.name == "config" {
			continue
		}
		v, from := getenv(o.env), "environment variable "+o.env
		if v == "" {
			v, from = file[o.name], "config file key "+o.name
		}
		if v == "" {
			continue
		}
		if err := fs.Set(o.name, v); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	if c.Consumer == "" {
		c.Consumer = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	envErr := c.readEnv(getenv)
	var chainsErr error
	c.Chains, chainsErr = c.ReloadChains()
	return c, errors.Join(c.validate(), envErr, chainsErr, fileErr())
}

// withFiles lets every setting come from a file: NAME_FILE=/path reads the
// value of NAME from that file (its trailing newline dropped), as with
// systemd's LoadCredential= (NAME_FILE=%d/name) or a mounted secret, so no
// key has to sit in the environment. NAME and NAME_FILE together is an
// error, as is a file that cannot be read; errors name the variable and the
// path, never the content. Each file is read once.
func withFiles(getenv func(string) string) (func(string) string, func() error) {
	type read struct {
		v   string
		err error
	}
	cache := map[string]read{}
	var errs []error
	get := func(k string) string {
		if r, ok := cache[k]; ok {
			return r.v
		}
		v, path := getenv(k), getenv(k+"_FILE")
		if path == "" {
			return v
		}
		var r read
		switch b, err := os.ReadFile(path); {
		case v != "":
			r.err = fmt.Errorf("%s and %s are both set: use one", k, k+"_FILE")
		case err != nil:
			r.err = fmt.Errorf("%s=%s: %w", k+"_FILE", path, errors.Unwrap(err))
		default:
			r.v = strings.TrimRight(string(b), "\r\n")
		}
		cache[k] = r
		if r.err != nil {
			errs = append(errs, r.err)
		}
		return r.v
	}
	return get, func() error { return errors.Join(errs...) }
}

// ReloadChains reads the chains file (the built-in table without one). Its
// errors name the file and the chain.
func (c *Config) ReloadChains() (*chains.Table, error) {
	if c.ChainsFile == "" {
		return chains.Builtin(), nil
	}
	return chains.LoadFile(c.ChainsFile)
}

func (c *Config) validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL (or -database-url) is required"))
	} else if _, err := pgx.ParseConfig(c.DatabaseURL); err != nil {
		errs = append(errs, errors.New("DATABASE_URL is not a valid PostgreSQL connection string")) // the error may quote the secret
	}
	if c.Cluster() {
		if _, err := redis.ParseClusterURL(c.RedisURL); err != nil {
			errs = append(errs, errors.New("REDIS_URL is not a valid Redis Cluster URL (redis://host:port?addr=host2:port2)"))
		}
	} else if _, err := redis.ParseURL(c.RedisURL); err != nil {
		errs = append(errs, errors.New("REDIS_URL is not a valid redis:// URL"))
	}
	if c.RedisShards < 1 || c.RedisShards > MaxShards {
		errs = append(errs, fmt.Errorf("redis-shards must be 1 to %d", MaxShards))
	} else if err := validLayout(c.Prefix, c.RedisShards); err != nil {
		errs = append(errs, err)
	}
	if c.IngestWorkers < 1 || c.IngestBatch < 1 {
		errs = append(errs, errors.New("ingest-workers and ingest-batch must be at least 1"))
	}
	if c.GCPercent < 1 {
		errs = append(errs, errors.New("gc-percent must be at least 1 (GOGC=off turns the GC off)"))
	}
	for name, d := range map[string]time.Duration{"ingest-block": c.IngestBlock, "claim-min-idle": c.ClaimMinIdle,
		"claim-every": c.ClaimEvery, "leader-heartbeat": c.LeaderHeartbeat, "leader-retry": c.LeaderRetry,
		"shutdown-timeout": c.ShutdownTimeout} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	if c.EpochGrace < 0 {
		errs = append(errs, errors.New("epoch-grace must not be negative"))
	}
	if c.EvidenceLookback <= 0 {
		errs = append(errs, errors.New("evidence-lookback must be positive (1ms: only the epoch of the evidence)"))
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		errs = append(errs, errors.New("log-format must be json or console"))
	}
	return errors.Join(errs...)
}

// readFile reads a flat object of settings. Values may be strings, numbers
// or booleans; they are applied as if given as flags.
func readFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	raw := map[string]any{}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		err = yaml.Unmarshal(b, &raw)
	default:
		d := json.NewDecoder(strings.NewReader(string(b)))
		d.UseNumber()
		err = d.Decode(&raw)
	}
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch v.(type) {
		case string, bool, int, int64, uint64, float64, json.Number:
			out[k] = fmt.Sprint(v)
		default:
			return nil, fmt.Errorf("config file %s: key %q must be a string, number or boolean", path, k)
		}
	}
	return out, nil
}

// Describe lists the effective settings for the start-up log, with the
// connection strings reduced to where they point (no user, no password).
func (c *Config) Describe() map[string]string {
	return map[string]string{
		"database":          describeDB(c.DatabaseURL),
		"redis":             describeRedis(c.RedisURL, c.Cluster()),
		"redis_shards":      strconv.Itoa(c.RedisShards),
		"prefix":            c.Prefix,
		"http-addr":         c.HTTPAddr,
		"consumer":          c.Consumer,
		"ingest-workers":    fmt.Sprint(c.IngestWorkers),
		"ingest-batch":      fmt.Sprint(c.IngestBatch),
		"gc-percent":        c.gcDescription(),
		"claim-min-idle":    c.ClaimMinIdle.String(),
		"epoch-grace":       c.EpochGrace.String(),
		"epoch-schedule":    c.EpochCloseSchedule,
		"evidence-lookback": c.EvidenceLookback.String(),
		"settlement-hold":   c.Chain.SettlementHold.String(),
		"config-file":       c.ConfigFile,
		"chains":            c.chainIDs(),
	}
}

func (c *Config) chainIDs() string {
	if c.Chains == nil {
		return chains.Builtin().IDs()
	}
	return c.Chains.IDs()
}

func describeDB(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "(invalid)"
	}
	return fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
}

func describeRedis(raw string, cluster bool) string {
	if cluster {
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return "(invalid)"
		}
		return "cluster " + strings.Join(o.Addrs, ",")
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return "(invalid)"
	}
	return fmt.Sprintf("%s/%d", o.Addr, o.DB)
}

func (c *Config) gcDescription() string {
	if c.GOGCFromEnv {
		return "GOGC from the environment"
	}
	return strconv.Itoa(c.GCPercent)
}
