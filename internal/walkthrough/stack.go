package walkthrough

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
)

// StackConfig describes the local stack the walkthrough runs against: the
// dev chains (bin/devchain), settlementd and our Caddy with the root
// Caddyfile, on the given Redis and PostgreSQL. Zero ports pick free ones.
type StackConfig struct {
	Caddy, Settlementd, Devchain string // binaries

	RepoRoot string // holds the root Caddyfile
	RunDir   string // logs, the dev-chain manifest, Caddy's data dir

	RedisURL, DatabaseURL string
	// Prefix is the Redis key prefix of the gateway and settlementd. Empty:
	// the root Caddyfile as it is (prefix "tollgate:"). Set: the root
	// Caddyfile with one `key_prefix` line added (tests share one Redis).
	Prefix string

	HTTPPort, AdminPort, SettlementdPort, PolygonPort, BasePort int

	// TokensOnly starts the dev chains with the tokens and funded accounts
	// but neither RevenueVault nor ClaimsContract (devchain -tokens-only):
	// a chain the deploy command starts from. Use StartChains, deploy, then
	// StartServices with Settings.
	TokensOnly bool
	// Settings is a settings file written by tollgate-deploy. Set, the
	// contracts' addresses, start blocks and the minimum deposit reach
	// settlementd (its environment, as systemd's EnvironmentFile= gives it)
	// and Caddy (`caddy run --envfile`) from this file only — never from the
	// dev chains' manifest.
	Settings string

	// NodeProof makes settlementd ask a registering node's endpoint for
	// the ownership proof (TOLLGATE_NODE_PROOF=required), as production
	// does; off, the dev profile's default, registration skips it.
	NodeProof bool

	// BlockInterval is the dev chains' empty-block cadence (default 500ms, so
	// the 25 deposit confirmations take about 12 s). A simulated block's
	// timestamp is max(now, parent + 1 s), so below 1 s the chains' clocks
	// run ahead of real time (here by up to 1 s per second): fine for a run
	// of a few minutes (x402 authorizations allow 300 s, claims 48 h), not for
	// a stack left running — `up` uses 1 s.
	BlockInterval time.Duration
}

// Stack is the running stack.
type Stack struct {
	Gateway        string // e.g. http://localhost:28080
	Settlementd    string // settlementd's own address (the gateway proxies its API)
	Admin          string // Caddy's admin endpoint
	ManifestPath   string
	Manifest       *devnet.Manifest
	Pids           map[string]int
	AdminToken     string   // settlementd /admin/* and the gateway's; never printed
	SettlementdEnv []string // settlementd's environment (keys included; never printed)
	cfg            StackConfig
	procs          []*proc
	stoppedAlready bool
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

func (s *Stack) logTail(name string) string {
	for _, p := range s.procs {
		if p.name == name {
			return tail(p.log, 15)
		}
	}
	return ""
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = l[:400] + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartStack brings the stack up and waits until every part answers. On an
// error, whatever was started is stopped again.
func StartStack(ctx context.Context, cfg StackConfig, out io.Writer) (*Stack, error) {
	s, err := StartChains(ctx, cfg, out)
	if err != nil {
		return nil, err
	}
	if err := s.StartServices(ctx, out); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// StartChains starts the dev chains only (StartServices follows). On an
// error, whatever was started is stopped again.
func StartChains(ctx context.Context, cfg StackConfig, out io.Writer) (_ *Stack, err error) {
	if cfg.BlockInterval == 0 {
		cfg.BlockInterval = 500 * time.Millisecond
	}
	for _, p := range []*int{&cfg.HTTPPort, &cfg.AdminPort, &cfg.SettlementdPort, &cfg.PolygonPort, &cfg.BasePort} {
		if *p == 0 {
			if *p, err = FreePort(); err != nil {
				return nil, err
			}
		}
	}
	if err := os.MkdirAll(cfg.RunDir, 0o755); err != nil {
		return nil, err
	}
	for _, b := range []string{cfg.Caddy, cfg.Settlementd, cfg.Devchain} {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("binary: %w", err)
		}
	}
	s := &Stack{cfg: cfg, Pids: map[string]int{}, AdminToken: randomHex(24),
		Gateway:     fmt.Sprintf("http://localhost:%d", cfg.HTTPPort),
		Settlementd: fmt.Sprintf("http://127.0.0.1:%d", cfg.SettlementdPort),
		Admin:       fmt.Sprintf("http://127.0.0.1:%d", cfg.AdminPort),
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()

	// 1. The dev chains.
	s.ManifestPath = filepath.Join(cfg.RunDir, "devchain.json")
	_ = os.Remove(s.ManifestPath)
	chainArgs := []string{"-polygon-port", strconv.Itoa(cfg.PolygonPort),
		"-base-port", strconv.Itoa(cfg.BasePort), "-block-interval", cfg.BlockInterval.String(), "-manifest", s.ManifestPath}
	if cfg.TokensOnly {
		chainArgs = append(chainArgs, "-tokens-only")
	}
	chain, err := s.start("devchain", cfg.Devchain, chainArgs, nil)
	if err != nil {
		return nil, err
	}
	if err := poll(ctx, 60*time.Second, "the dev chains' manifest", chain, func() (bool, error) {
		m, err := devnet.ReadManifest(s.ManifestPath)
		if err != nil {
			return false, nil
		}
		s.Manifest = m
		return true, nil
	}); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(chain.log, 20))
	}
	m := s.Manifest
	fmt.Fprintf(out, "  dev chains up: chain 137 at %s, chain 8453 at %s (a block every %s)\n", m.Polygon.RPCURL, m.Base.RPCURL, cfg.BlockInterval)
	return s, nil
}

// StartServices starts settlementd and Caddy against the running dev chains
// and waits until both answer.
func (s *Stack) StartServices(ctx context.Context, out io.Writer) (err error) {
	cfg, m := s.cfg, s.Manifest
	// The contracts: from the settings file, or the dev chains' own.
	contracts := []string{"TOLLGATE_CHAIN_ID=137", "TOLLGATE_USDT_ADDRESS=" + m.Polygon.USDT,
		"TOLLGATE_VAULT_ADDRESS=" + m.Polygon.RevenueVault, "TOLLGATE_CLAIMS_ADDRESS=" + m.Polygon.ClaimsContract}
	caddyArgs := []string{}
	if cfg.Settings != "" {
		if contracts, err = ReadEnvFile(cfg.Settings); err != nil {
			return err
		}
		caddyArgs = []string{"--envfile", cfg.Settings}
	} else if m.Polygon.RevenueVault == "" {
		return errors.New("the dev chains have no contracts (tokens only): start the services from a settings file")
	}

	key := func(name string) string {
		a, err2 := m.Account(name)
		if err2 != nil {
			err = err2
		}
		return a.PrivateKey
	}
	addr := func(name string) string {
		a, err2 := m.Account(name)
		if err2 != nil {
			err = err2
		}
		return a.Address
	}
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = "tollgate:"
	}

	// 2. settlementd: every job on, at a demo pace (epochs stay 60 s).
	// One secret authenticates the gateway to settlementd (refunds).
	gatewaySecret := randomHex(32)
	sdEnv := []string{
		"DATABASE_URL=" + cfg.DatabaseURL, "TOLLGATE_MIGRATE=true", "TOLLGATE_DEV=1", "REDIS_URL=" + cfg.RedisURL, "TOLLGATE_PREFIX=" + prefix,
		"TOLLGATE_HTTP_ADDR=" + strings.TrimPrefix(s.Settlementd, "http://"), "TOLLGATE_CONSUMER=demo",
		"TOLLGATE_EPOCH_GRACE=1s", "TOLLGATE_EPOCH_CLOSE_SCHEDULE=* * * * * *", "TOLLGATE_INGEST_BLOCK=200ms",
		"TOLLGATE_LOG_LEVEL=info",
		"TOLLGATE_CHAIN_RPC_URL=" + m.Polygon.RPCURL,
		"TOLLGATE_PLATFORM_WALLET=" + addr("platform"), "TOLLGATE_POOL_WALLET=" + addr("pool"),
		"TOLLGATE_TREASURY_KEY=" + key("treasury"), "TOLLGATE_RELAYER_KEY=" + key("relayer"),
		"TOLLGATE_GOVERNOR_KEY=" + key("governor"), "TOLLGATE_CLAIM_SIGNER_KEY=" + key("claim-signer"),
		"TOLLGATE_DEPOSIT_SCHEDULE=* * * * * *", "TOLLGATE_SETTLEMENT_SCHEDULE=* * * * * *",
		"TOLLGATE_SETTLEMENT_HOLD=0s", // the demo settles its epoch at once (production holds node shares for the evidence lookback)
		"TOLLGATE_SOLVENCY_SCHEDULE=*/10 * * * * *",
		"TOLLGATE_CLAIM_WATCH_SCHEDULE=* * * * * *", "TOLLGATE_CLAIM_SWEEP_SCHEDULE=*/5 * * * * *",
		"TOLLGATE_JWT_SECRET=" + randomHex(32), "TOLLGATE_ALLOW_PRIVATE_NODES=1",
		"TOLLGATE_NODE_PROBE_SCHEDULE=*/5 * * * * *",
		"TOLLGATE_GATEWAY_URL=" + s.Gateway, "TOLLGATE_GATEWAY_PROBE_SCHEDULE=*/5 * * * * *",
		"TOLLGATE_ADMIN_TOKEN=" + s.AdminToken,
		// The sign-in domain is the gateway's host, as a browser names it.
		"TOLLGATE_AUTH_DOMAIN=" + strings.TrimPrefix(s.Gateway, "http://"),
		"TOLLGATE_X402_RPC_URL=" + m.Base.RPCURL, "TOLLGATE_X402_RELAYER_KEY=" + key("relayer"),
		// The facilitator settles only the gateway's own offer (the same
		// variables the gateway's Caddyfile reads), and knows the gateway
		// by its secret.
		"TOLLGATE_X402_ASSET=" + m.Base.USDC, "TOLLGATE_X402_PAY_TO=" + addr("treasury"),
		"TOLLGATE_GATEWAY_SECRET=" + gatewaySecret,
	}
	if cfg.NodeProof {
		sdEnv = append(sdEnv, "TOLLGATE_NODE_PROOF=required")
	}
	sdEnv = append(sdEnv, contracts...)
	s.SettlementdEnv = sdEnv
	if err != nil {
		return err
	}
	sd, err := s.start("settlementd", cfg.Settlementd, []string{"run"}, sdEnv)
	if err != nil {
		return err
	}
	if err := poll(ctx, 60*time.Second, "settlementd /health", sd, func() (bool, error) {
		return get(s.Settlementd+"/health") == http.StatusOK, nil
	}); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(sd.log, 30))
	}
	fmt.Fprintf(out, "  settlementd up at %s (deposits, settlement, claims, x402 facilitator; epochs of 60 s)\n", s.Settlementd)

	// 3. Our Caddy with the root Caddyfile.
	caddyfile := filepath.Join(cfg.RepoRoot, "Caddyfile")
	if cfg.Prefix != "" {
		b, err := os.ReadFile(caddyfile)
		if err != nil {
			return err
		}
		const anchor = "redis_url {env.REDIS_URL}"
		if !bytes.Contains(b, []byte(anchor)) {
			return errors.New("the root Caddyfile has no `redis_url {env.REDIS_URL}` line to add key_prefix after")
		}
		b = bytes.Replace(b, []byte(anchor), []byte(anchor+"\n\t\t\tkey_prefix "+cfg.Prefix), 1)
		caddyfile = filepath.Join(cfg.RunDir, "Caddyfile")
		if err := os.WriteFile(caddyfile, b, 0o600); err != nil {
			return err
		}
	}
	home := filepath.Join(cfg.RunDir, "caddy-home")
	caddyEnv := []string{
		"HOME=" + home, "XDG_DATA_HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"REDIS_URL=" + cfg.RedisURL, "TOLLGATE_HTTP_PORT=" + strconv.Itoa(cfg.HTTPPort),
		"TOLLGATE_ADMIN_LISTEN=" + strings.TrimPrefix(s.Admin, "http://"), "TOLLGATE_ADMIN_TOKEN=" + s.AdminToken,
		"TOLLGATE_RPC_137=" + m.Polygon.RPCURL, "TOLLGATE_RPC_8453=" + m.Base.RPCURL,
		"TOLLGATE_WS_137=" + m.Polygon.WSURL, "TOLLGATE_WS_8453=" + m.Base.WSURL,
		"TOLLGATE_X402_ASSET=" + m.Base.USDC, "TOLLGATE_X402_PAY_TO=" + addr("treasury"),
		"TOLLGATE_GATEWAY_SECRET=" + gatewaySecret,
		"SETTLEMENTD_ADDR=" + strings.TrimPrefix(s.Settlementd, "http://"),
		"TOLLGATE_ALLOW_PRIVATE_NODES=1", // the walkthrough's node runs on loopback
		// The demo's own setting, explicit: its front proxy (startFront)
		// runs on loopback and names the developer's address in
		// X-Forwarded-For, so loopback is the one trusted proxy.
		"TOLLGATE_TRUSTED_PROXIES=127.0.0.1/32 ::1/128",
		"TOLLGATE_DEV=1", // the dev chains' accounts are the money addresses here
	}
	if cfg.Settings == "" {
		caddyEnv = append(caddyEnv, "TOLLGATE_VAULT_ADDRESS="+m.Polygon.RevenueVault, "TOLLGATE_USDT_ADDRESS="+m.Polygon.USDT)
	}
	cd, err := s.start("caddy", cfg.Caddy, append([]string{"run", "--config", caddyfile, "--adapter", "caddyfile"}, caddyArgs...), caddyEnv)
	if err != nil {
		return err
	}
	if err := poll(ctx, 60*time.Second, "the gateway /rpc/health", cd, func() (bool, error) {
		return get(s.Gateway+"/rpc/health") == http.StatusOK && get(s.Gateway+"/health") == http.StatusOK, nil
	}); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(cd.log, 30))
	}
	fmt.Fprintf(out, "  gateway up at %s (our Caddy, %s)\n", s.Gateway, caddyfile)
	return nil
}

func get(url string) int {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func (s *Stack) start(name, bin string, args, env []string) (*proc, error) {
	logPath := filepath.Join(s.cfg.RunDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = s.cfg.RepoRoot
	// Its own process group: a terminal's Ctrl-C reaches only us (Stop ends
	// the parts in order), and after Release the parts outlive us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	s.procs = append(s.procs, p)
	s.Pids[name] = cmd.Process.Pid
	return p, nil
}

// Log returns the last lines of a part's log (devchain, settlementd, caddy).
func (s *Stack) Log(name string) string { return s.logTail(name) }

// Stop ends the processes, newest first: SIGTERM, then SIGKILL after 15 s.
func (s *Stack) Stop() {
	if s == nil || s.stoppedAlready {
		return
	}
	s.stoppedAlready = true
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// Release forgets the processes without stopping them (demo.sh up: they keep
// running after this process exits; the pid file names them).
func (s *Stack) Release() {
	s.stoppedAlready = true
	for _, p := range s.procs {
		_ = p.cmd.Process.Release()
	}
}

// poll calls cond until it reports true, the deadline passes, ctx ends or the
// watched process exits.
func poll(ctx context.Context, within time.Duration, what string, watch *proc, cond func() (bool, error)) error {
	deadline := time.Now().Add(within)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if watch != nil {
			select {
			case err := <-watch.done:
				watch.done <- err
				return fmt.Errorf("waiting for %s: %s exited (%v)", what, watch.name, err)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not within %s", what, within)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond): // poll interval, not a synchronisation
		}
	}
}

// ReadEnvFile reads a settings file as systemd's EnvironmentFile= does, in
// the subset every reader of it agrees on (systemd, `caddy run --envfile`,
// a shell's `set -a; . FILE`): KEY=VALUE lines, blank lines and # comments;
// no quotes, spaces or continuations, which the readers treat differently.
// It returns the KEY=VALUE lines.
func ReadEnvFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'\\$") || strings.ContainsAny(v, " \t\"'\\#;$") {
			return nil, fmt.Errorf("%s:%d: not a plain KEY=VALUE line: %q", path, i+1, line)
		}
		out = append(out, line)
	}
	return out, nil
}
