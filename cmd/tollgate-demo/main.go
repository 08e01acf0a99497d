// Command tollgate-demo starts Tollgate's local stack and walks the money
// loop (internal/walkthrough); scripts/demo.sh runs it for `make demo`.
//
//	tollgate-demo run   start the stack, walk, stop (exit 1 if a step fails)
//	tollgate-demo up    start the stack and leave it running (pid file in -run-dir)
//	tollgate-demo walk  walk once against a fresh stack started by `up` (a second walk finds
//	                   the x402 payer's bundle and earlier epochs, and fails its exact checks)
//
// Redis and PostgreSQL come from REDIS_URL and DATABASE_URL; the binaries
// from -caddy, -settlementd, -devchain (default bin/…).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/walkthrough"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("tollgate-demo "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", ".", "repository root (the root Caddyfile, tests/x402)")
	runDir := fs.String("run-dir", ".run/demo", "logs, manifest, pid file")
	bin := fs.String("bin", "bin", "directory of caddy, settlementd and devchain")
	httpPort := fs.Int("http-port", 28080, "gateway port")
	adminPort := fs.Int("admin-port", 22019, "Caddy admin port (127.0.0.1)")
	sdPort := fs.Int("settlementd-port", 28081, "settlementd port (127.0.0.1)")
	polyPort := fs.Int("polygon-port", 28545, "dev chain 137 port")
	basePort := fs.Int("base-port", 28546, "dev chain 8453 port")
	blocks := fs.Duration("block-interval", 0, "dev chains' empty-block cadence; 25 confirmations take 25 of these "+
		"(default: run 500ms; up 1s, which keeps the chains' clocks with real time)")
	x402 := fs.String("x402", walkthrough.X402Auto, "x402 step: auto (NOT RUN without the client), require, off")
	timeout := fs.Duration("timeout", 6*time.Minute, "the whole walkthrough")
	fresh := fs.Bool("fresh", false, "run/up: start from an empty state: FLUSHDB on REDIS_URL and a new database tollgate_demo "+
		"on DATABASE_URL's server (only for Redis/PostgreSQL dedicated to the demo)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *blocks == 0 && cmd == "up" {
		*blocks = time.Second
	}
	absRepo, _ := filepath.Abs(*repo)
	absRun, _ := filepath.Abs(*runDir)
	absBin, _ := filepath.Abs(*bin)
	sc := walkthrough.StackConfig{
		Caddy: filepath.Join(absBin, "caddy"), Settlementd: filepath.Join(absBin, "settlementd"), Devchain: filepath.Join(absBin, "devchain"),
		RepoRoot: absRepo, RunDir: absRun, RedisURL: os.Getenv("REDIS_URL"), DatabaseURL: os.Getenv("DATABASE_URL"),
		HTTPPort: *httpPort, AdminPort: *adminPort, SettlementdPort: *sdPort, PolygonPort: *polyPort, BasePort: *basePort,
		BlockInterval: *blocks,
	}
	wc := walkthrough.Config{RepoRoot: absRepo, X402: *x402}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "\ntollgate-demo: FAILED: %v\n", err)
		return 1
	}
	switch cmd {
	case "run", "up":
		if sc.RedisURL == "" || sc.DatabaseURL == "" {
			return fail(errors.New("REDIS_URL and DATABASE_URL must be set (eval \"$(scripts/services.sh start)\")"))
		}
		if *fresh {
			dsn, err := freshState(ctx, sc.RedisURL, sc.DatabaseURL)
			if err != nil {
				return fail(err)
			}
			sc.DatabaseURL = dsn
			fmt.Fprintln(stdout, "fresh state: Redis flushed, database tollgate_demo created")
		}
		fmt.Fprintln(stdout, "starting the stack (logs in "+absRun+")")
		st, err := walkthrough.StartStack(ctx, sc, stdout)
		if err != nil {
			return fail(err)
		}
		if cmd == "up" {
			if err := writeState(absRun, st); err != nil {
				st.Stop()
				return fail(err)
			}
			st.Release()
			printURLs(stdout, st, absRun)
			return 0
		}
		defer st.Stop()
		wc.Gateway, wc.Manifest = st.Gateway, st.Manifest
		wctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		sum, err := walkthrough.Run(wctx, wc, stdout)
		if err != nil {
			for _, p := range []string{"settlementd", "caddy"} {
				fmt.Fprintf(stderr, "\n--- last lines of %s.log ---\n%s\n", p, st.Log(p))
			}
			return fail(err)
		}
		printVerdict(stdout, sum)
		return 0
	case "walk":
		gw, err := os.ReadFile(filepath.Join(absRun, "gateway.url"))
		if err != nil {
			return fail(fmt.Errorf("no stack from `up` in %s: %w", absRun, err))
		}
		m, err := devnet.ReadManifest(filepath.Join(absRun, "devchain.json"))
		if err != nil {
			return fail(err)
		}
		wc.Gateway, wc.Manifest = strings.TrimSpace(string(gw)), m
		wctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		sum, err := walkthrough.Run(wctx, wc, stdout)
		if err != nil {
			return fail(err)
		}
		printVerdict(stdout, sum)
		return 0
	default:
		fmt.Fprintf(stderr, "tollgate-demo: unknown command %q (run, up, walk)\n", cmd)
		return 2
	}
}

// freshState empties the demo's Redis database and recreates the
// PostgreSQL database tollgate_demo, returning its DSN: a new dev chain
// starts at block 0, so no state of an earlier run may survive.
func freshState(ctx context.Context, redisURL, dsn string) (string, error) {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return "", errors.New("REDIS_URL is invalid")
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return "", fmt.Errorf("FLUSHDB: %w", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", errors.New("connecting to DATABASE_URL failed")
	}
	defer conn.Close(ctx)
	for _, q := range []string{`DROP DATABASE IF EXISTS tollgate_demo WITH (FORCE)`, `CREATE DATABASE tollgate_demo`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("DATABASE_URL is not a URL")
	}
	u.Path = "/tollgate_demo"
	return u.String(), nil
}

// writeState records what `up` started: pids (for demo.sh down), the
// gateway URL, the admin token (0600, never printed).
func writeState(dir string, st *walkthrough.Stack) error {
	names := make([]string, 0, len(st.Pids))
	for n := range st.Pids {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + " " + strconv.Itoa(st.Pids[n]) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.pids"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "gateway.url"), []byte(st.Gateway+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "admin.token"), []byte(st.AdminToken+"\n"), 0o600)
}

func printURLs(w io.Writer, st *walkthrough.Stack, dir string) {
	m := st.Manifest
	fmt.Fprintf(w, "\nthe stack is up:\n")
	fmt.Fprintf(w, "  gateway        %s  (POST /rpc, /rpc/8453, GET /.well-known/service.json, /rpc/health, /api/status, /console)\n", st.Gateway)
	fmt.Fprintf(w, "  settlementd    %s  (behind the gateway for /api/*, /health, /x402/*)\n", st.Settlementd)
	fmt.Fprintf(w, "  caddy admin    %s\n", st.Admin)
	fmt.Fprintf(w, "  chain 137      %s  (TestUSDT %s, RevenueVault %s, ClaimsContract %s)\n", m.Polygon.RPCURL, m.Polygon.USDT, m.Polygon.RevenueVault, m.Polygon.ClaimsContract)
	fmt.Fprintf(w, "  chain 8453     %s  (TestUSDC %s)\n", m.Base.RPCURL, m.Base.USDC)
	fmt.Fprintf(w, "  manifest       %s (dev accounts and their public dev keys)\n", st.ManifestPath)
	fmt.Fprintf(w, "  admin token    in %s (X-Admin-Token; not printed)\n", filepath.Join(dir, "admin.token"))
	fmt.Fprintf(w, "  pids           %s; logs %s/*.log\n", filepath.Join(dir, "stack.pids"), dir)
	fmt.Fprintf(w, "try:  curl -s %s/rpc -H 'content-type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"params\":[]}'\n", st.Gateway)
	fmt.Fprintf(w, "stop: make demo-down\n")
}

func printVerdict(w io.Writer, s walkthrough.Summary) {
	fmt.Fprintf(w, "\nsummary: %d free calls, deposit %s USDT credited, %d metered + %d by MCP tools + %d paid calls after probation (%d node-served), ", s.FreeCalls,
		s.Deposit.Decimal(), s.PaidCalls, s.MCPCalls, s.NodeStepCalls, s.NodeCalls)
	if s.X402.Ran {
		fmt.Fprintf(w, "x402: %d calls for one %s USDC payment, ", s.X402.OK, s.X402.PayerPaid.Decimal())
	} else {
		fmt.Fprintf(w, "x402: NOT CHECKED, ")
	}
	fmt.Fprintf(w, "revenue %s USDT → node %s claimed %s USDT on chain; %s\n", s.Revenue.Decimal(), s.NodeID, s.Claimed.Decimal(),
		s.Took.Round(time.Second))
	if s.X402.Ran {
		fmt.Fprintln(w, "demo: every step checked out")
	} else {
		fmt.Fprintf(w, "demo: every other step checked out; the x402 step was NOT CHECKED: %s\n", s.X402.NotRunWhy)
	}
}
