// Command bench measures what the gateway costs on the data path (`make
// bench`). In one run it starts a fast local JSON-RPC
// upstream (in this process), a plain Caddy reverse_proxy to it and our
// gateway (both the real bin/caddy), then drives each with wrk at the same
// concurrency levels for the same duration:
//
//	(a) the upstream directly
//	(b) plain Caddy reverse_proxy → upstream
//	(c) our gateway, funded API key (metering on, Redis on)
//	(d) our gateway, anonymous free tier (limits set so it never answers 402)
//
// and prints req/s, p50, p99 and the ratios (c)/(b), (d)/(b). The cells are
// measured in rounds, the four setups back to back within each, and each
// figure is the median over the rounds: on a shared machine other work
// drifts in and out, and interleaving spreads it over every setup instead of
// landing on one. The call is
// eth_blockNumber, which the edge cache never serves, so every request of
// (c) and (d) goes through metering and to the upstream like (b)'s.
//
// Environment: REDIS_URL (scripts/services.sh), CADDY_BIN (default
// bin/caddy), WRK (default wrk), BENCH_DURATION (10s), BENCH_WARMUP (3s),
// BENCH_CONCURRENCY ("16 64"), BENCH_ROUNDS (3), BENCH_THREADS (wrk
// threads, default nproc),
// BENCH_OUT (results directory, default .run/bench), BENCH_PROFILE=1 (take
// a 10 s CPU profile of the gateway under load at the highest concurrency,
// of setup (c) or BENCH_PROFILE_SETUP's,
// from Caddy's admin /debug/pprof; BENCH_PROFILE_ROUNDS=all profiles every
// round, not only the first; the report then splits each profiled setup's
// CPU between our code, the MCP SDK, Caddy and the runtime: split.go), BENCH_UPDATE_DOCS=1 (replace the
// results block of docs/benchmarks.md), BENCH_BASELINE_BIN (another caddy
// build, e.g. of an earlier commit: its gateway is measured too, as (c0) and
// (d0), interleaved with the others, so a before/after comparison sees the
// same machine conditions), BENCH_SETUPS (the setup ids to measure, e.g.
// "b c c0"; default all).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

const body = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`

// stateBody is a read at the head (t)'s warm-up sends as shadow material.
// (e), (e1) and (e0) send callBody (trust.go): a balance is now proved
// before delivery by the node's eth_getProof, which the fast node does not
// serve, so a balance would measure the proofs' reroutes, not the checks.
const stateBody = `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`

// benchNode is the registered node of (e), (e1) and (e0): the fast upstream.
const benchNode = "NODE-EU-BENCHABC"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type config struct {
	caddyBin, wrk, out string
	baselineBin        string
	duration, warmup   time.Duration
	conc               []int
	threads, rounds    int
	profile, docs      bool
	profileSetup       string // the setups profiled (BENCH_PROFILE_SETUP, default c; several: "c c0")
	profileAll         bool   // BENCH_PROFILE_ROUNDS=all: profile every round, not only the first
	redisURL           string
	only               map[string]bool // BENCH_SETUPS: the setups measured (nil: all)
}

// measures reports whether setup id is measured in this run.
func (c config) measures(id string) bool { return c.only == nil || c.only[id] }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func loadConfig() (config, error) {
	c := config{caddyBin: env("CADDY_BIN", "bin/caddy"), wrk: env("WRK", "wrk"), out: env("BENCH_OUT", ".run/bench"),
		profile: env("BENCH_PROFILE", "") == "1", profileSetup: env("BENCH_PROFILE_SETUP", "c"), profileAll: env("BENCH_PROFILE_ROUNDS", "") == "all", docs: env("BENCH_UPDATE_DOCS", "") == "1", redisURL: os.Getenv("REDIS_URL")}
	var err error
	if c.duration, err = time.ParseDuration(env("BENCH_DURATION", "10s")); err != nil {
		return c, fmt.Errorf("BENCH_DURATION: %w", err)
	}
	if c.warmup, err = time.ParseDuration(env("BENCH_WARMUP", "3s")); err != nil {
		return c, fmt.Errorf("BENCH_WARMUP: %w", err)
	}
	for _, f := range strings.Fields(env("BENCH_CONCURRENCY", "16 64")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return c, fmt.Errorf("BENCH_CONCURRENCY: %q", f)
		}
		c.conc = append(c.conc, n)
	}
	if c.threads, err = strconv.Atoi(env("BENCH_THREADS", strconv.Itoa(runtime.NumCPU()))); err != nil || c.threads < 1 {
		return c, fmt.Errorf("BENCH_THREADS: %q", os.Getenv("BENCH_THREADS"))
	}
	if c.rounds, err = strconv.Atoi(env("BENCH_ROUNDS", "3")); err != nil || c.rounds < 1 {
		return c, fmt.Errorf("BENCH_ROUNDS: %q", os.Getenv("BENCH_ROUNDS"))
	}
	if f := strings.Fields(env("BENCH_SETUPS", "")); len(f) > 0 {
		c.only = map[string]bool{}
		for _, id := range f {
			c.only[id] = true
		}
	}
	if c.redisURL == "" {
		return c, errors.New("REDIS_URL is not set; run: eval \"$(scripts/services.sh start)\"")
	}
	if c.caddyBin, err = filepath.Abs(c.caddyBin); err != nil {
		return c, err
	}
	if b := os.Getenv("BENCH_BASELINE_BIN"); b != "" {
		if c.baselineBin, err = filepath.Abs(b); err != nil {
			return c, err
		}
	}
	return c, os.MkdirAll(c.out, 0o755)
}

func run() error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	up, err := startUpstream()
	if err != nil {
		return err
	}
	defer up.Close()

	ropts, err := redis.ParseURL(cfg.redisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	prefix := fmt.Sprintf("bench:%d:", time.Now().UnixNano())
	defer dropPrefix(rdb, prefix)

	plain, err := startCaddy(ctx, cfg, cfg.caddyBin, "plain", plainCaddyfile, map[string]string{"UPSTREAM": up.addr})
	if err != nil {
		return err
	}
	defer plain.stop()
	gw, err := startCaddy(ctx, cfg, cfg.caddyBin, "gateway", gatewayCaddyfile, map[string]string{"UPSTREAM": up.addr, "PREFIX": prefix}, "BENCH_REDIS_URL="+cfg.redisURL)
	if err != nil {
		return err
	}
	defer gw.stop()
	if err := gw.waitUpstreamHealthy(ctx); err != nil {
		return err
	}
	key, err := fundedKey(ctx, gw, rdb, prefix)
	if err != nil {
		return err
	}
	var base *caddyProc
	if cfg.baselineBin != "" {
		// Same Redis prefix: the funded key works on both gateways.
		if base, err = startCaddy(ctx, cfg, cfg.baselineBin, "baseline", gatewayCaddyfile, map[string]string{"UPSTREAM": up.addr, "PREFIX": prefix}, "BENCH_REDIS_URL="+cfg.redisURL); err != nil {
			return err
		}
		defer base.stop()
		if err := base.waitUpstreamHealthy(ctx); err != nil {
			return err
		}
	}

	// (h)/(h0): two providers, one of which adds 250 ms to a random 5 % of
	// calls, with hedged reads on and off. Each gateway has its
	// own pair of upstreams, so their calls can be counted per setup.
	var hedgeGW [2]*caddyProc
	var hedgeUps [2][2]*upstream
	for i, hedge := range []string{"0.1", "off"} {
		if !cfg.measures("h") && !cfg.measures("h0") {
			break
		}
		fast, err := startCountingUpstream(0, 0)
		if err != nil {
			return err
		}
		defer fast.Close()
		slow, err := startCountingUpstream(250*time.Millisecond, 0.05)
		if err != nil {
			return err
		}
		defer slow.Close()
		hedgeUps[i] = [2]*upstream{fast, slow}
		vars := map[string]string{"FAST": fast.addr, "SLOW": slow.addr, "PREFIX": prefix, "HEDGE": hedge}
		if hedgeGW[i], err = startCaddy(ctx, cfg, cfg.caddyBin, "hedge-"+hedge, hedgeGatewayCaddyfile, vars, "BENCH_REDIS_URL="+cfg.redisURL); err != nil {
			return err
		}
		defer hedgeGW[i].stop()
		if err := hedgeGW[i].waitUpstreamHealthy(ctx); err != nil {
			return err
		}
	}

	// (e)/(e0): the same gateway build with the upstream registered as a
	// node (and also configured as the provider the verifier asks), with
	// answer verification at its defaults and off. Their own key prefix:
	// the node must not join (c)/(d)'s pool.
	nodePrefix := prefix + "nodes:"
	defer dropPrefix(rdb, nodePrefix)
	rec, err := registry.Encode(&registry.Node{ID: benchNode, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: "http://" + up.addr, ChainIDs: []uint64{137}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		return err
	}
	if err := rdb.HSet(ctx, nodePrefix+registry.NodesKey, benchNode, rec).Err(); err != nil {
		return err
	}
	// (e) checks at the default floor (a node with a long clean history),
	// (e1) every answer checked (a node fresh out of probation), (e0) no
	// checks. Probation is off so the node serves from the start: it is a
	// transient, measured by the trust tests, not a steady state.
	var nodeGW [3]*caddyProc
	for i, verify := range []string{"0.05", "off", "1"} {
		if !cfg.measures("e") && !cfg.measures("e0") && !cfg.measures("e1") {
			break
		}
		vars := map[string]string{"UPSTREAM": up.addr, "PREFIX": nodePrefix, "VERIFY": verify}
		if nodeGW[i], err = startCaddy(ctx, cfg, cfg.caddyBin, "node-verify-"+strings.Fields(verify)[0], nodeGatewayCaddyfile, vars, "BENCH_REDIS_URL="+cfg.redisURL); err != nil {
			return err
		}
		defer nodeGW[i].stop()
		if err := nodeGW[i].waitNodeServing(ctx); err != nil {
			return err
		}
	}
	var nodeKey string
	if nodeGW[0] != nil {
		if nodeKey, err = fundedKey(ctx, nodeGW[0], rdb, nodePrefix); err != nil {
			return err
		}
	}

	// (t)/(t0): trust at its defaults against the node unjudged, each with
	// its own node and provider (trust.go). Opt-in: the node must pass
	// probation first (seconds to a minute).
	var trustRigs []*trustRig
	trustKeys := map[string]string{}
	for _, t := range []struct {
		id     string
		judged bool
	}{{"t", true}, {"t0", false}} {
		if cfg.only == nil || !cfg.only[t.id] {
			continue
		}
		tp := prefix + "trust-" + t.id + ":"
		defer dropPrefix(rdb, tp)
		rig, k, err := startTrustRig(ctx, cfg, rdb, tp, t.id, t.judged, func(p *caddyProc) (string, error) { return fundedKey(ctx, p, rdb, tp) })
		if err != nil {
			return err
		}
		defer rig.close()
		rig.standing = rig.trustView()
		rig.mark()
		trustRigs = append(trustRigs, rig)
		trustKeys[t.id] = k
	}

	// (c-unix): the same gateway and key, Redis reached over its Unix
	// socket instead of loopback TCP (a Redis on the gateway's host).
	var unixGW *caddyProc
	if sock := os.Getenv("BENCH_REDIS_SOCKET"); sock != "" && cfg.measures("c-unix") {
		if unixGW, err = startCaddy(ctx, cfg, cfg.caddyBin, "gateway-unix", gatewayCaddyfile, map[string]string{"UPSTREAM": up.addr, "PREFIX": prefix},
			"BENCH_REDIS_URL=unix://"+sock+"?db="+strconv.Itoa(ropts.DB)); err != nil {
			return err
		}
		defer unixGW.stop()
		if err := unixGW.waitUpstreamHealthy(ctx); err != nil {
			return err
		}
	}

	// (f): the same build with metering off: what the handler costs
	// without the meter (parse, forward, answer), so (c) − (f) is what
	// metering a paid call costs.
	var open *caddyProc
	if cfg.measures("f") {
		if open, err = startCaddy(ctx, cfg, cfg.caddyBin, "open", openGatewayCaddyfile, map[string]string{"UPSTREAM": up.addr}); err != nil {
			return err
		}
		defer open.stop()
		if err := open.waitUpstreamHealthy(ctx); err != nil {
			return err
		}
	}

	setups := []setup{
		{id: "a", name: "upstream directly", url: "http://" + up.addr + "/"},
		{id: "b", name: "plain Caddy reverse_proxy", url: plain.url + "/", pid: plain.cmd.Process.Pid},
		{id: "c", name: "gateway, funded API key", url: gw.url + "/rpc", key: key, pid: gw.cmd.Process.Pid},
		{id: "d", name: "gateway, anonymous free tier", url: gw.url + "/rpc", pid: gw.cmd.Process.Pid},
		// The same call as an MCP tool call (caddymodule/mcp): what the
		// protocol and the translation add to a paid /rpc call.
		{id: "m", name: "gateway, funded API key, MCP tool call (rpc eth_blockNumber)", url: gw.url + "/mcp", key: key, body: mcpBody,
			headers: map[string]string{"Accept": "application/json, text/event-stream"}, pid: gw.cmd.Process.Pid},
		// The same call over a WebSocket (caddymodule/wsrpc), one call in
		// flight per socket.
		{id: "w", name: "gateway, funded API key, WebSocket call", url: gw.url + "/rpc", key: key, ws: true, pid: gw.cmd.Process.Pid},
	}
	if unixGW != nil {
		setups = append(setups, setup{id: "c-unix", name: "gateway, funded API key, Redis over a Unix socket", url: unixGW.url + "/rpc", key: key, pid: unixGW.cmd.Process.Pid})
	}
	if open != nil {
		setups = append(setups, setup{id: "f", name: "gateway, metering off", url: open.url + "/rpc", pid: open.cmd.Process.Pid})
	}
	if hedgeGW[0] != nil {
		setups = append(setups,
			setup{id: "h", name: "gateway, funded key, two providers (one +250 ms on 5 %), hedged reads", url: hedgeGW[0].url + "/rpc", key: key, pid: hedgeGW[0].cmd.Process.Pid},
			setup{id: "h0", name: "gateway, funded key, two providers (one +250 ms on 5 %), no hedging", url: hedgeGW[1].url + "/rpc", key: key, pid: hedgeGW[1].cmd.Process.Pid})
	}
	if nodeGW[0] != nil {
		setups = append(setups,
			setup{id: "e", name: "gateway, node-served, pinned, checked at the floor (5 %)", url: nodeGW[0].url + "/rpc", key: nodeKey, body: callBody, pid: nodeGW[0].cmd.Process.Pid, proc: nodeGW[0]},
			setup{id: "e1", name: "gateway, node-served, pinned, every answer checked", url: nodeGW[2].url + "/rpc", key: nodeKey, body: callBody, pid: nodeGW[2].cmd.Process.Pid, proc: nodeGW[2]},
			setup{id: "e0", name: "gateway, node-served, pinned, verification off", url: nodeGW[1].url + "/rpc", key: nodeKey, body: callBody, pid: nodeGW[1].cmd.Process.Pid, proc: nodeGW[1]})
	}
	for _, rig := range trustRigs {
		name := "gateway, node-served eth_call, trust at its defaults (probation, ladder, check rate)"
		if rig.id == "t0" {
			name = "gateway, node-served eth_call, the node unjudged (probation off, verify off)"
		}
		setups = append(setups, setup{id: rig.id, name: name, url: rig.gw.url + "/rpc", key: trustKeys[rig.id], body: callBody, pid: rig.gw.cmd.Process.Pid})
	}
	if base != nil {
		setups = append(setups,
			setup{id: "c0", name: "baseline build, funded API key", url: base.url + "/rpc", key: key, pid: base.cmd.Process.Pid, proc: base},
			setup{id: "d0", name: "baseline build, free tier", url: base.url + "/rpc", pid: base.cmd.Process.Pid, proc: base},
			// (m) on the baseline build: an MCP tool call's cost before and
			// after, in the same rounds.
			setup{id: "m0", name: "baseline build, funded API key, MCP tool call (rpc eth_blockNumber)", url: base.url + "/mcp", key: key, body: mcpBody,
				headers: map[string]string{"Accept": "application/json, text/event-stream"}, pid: base.cmd.Process.Pid, proc: base},
			setup{id: "w0", name: "baseline build, funded API key, WebSocket call", url: base.url + "/rpc", key: key, ws: true, pid: base.cmd.Process.Pid, proc: base})
	}
	var cluster *benchCluster
	if env("BENCH_CLUSTER", "1") != "0" && cfg.measures("c-cl") {
		if cluster, err = startBenchCluster(ctx, cfg, up); err != nil {
			return fmt.Errorf("the Redis Cluster row: %w", err)
		}
		defer cluster.stop()
		setups = append(setups, setup{id: "c-cl", name: fmt.Sprintf("gateway, funded API key, Redis Cluster (3 masters, %d shard(s))", cluster.shards),
			url: cluster.gw.url + "/rpc", key: cluster.key, pid: cluster.gw.cmd.Process.Pid, redisPIDs: cluster.redises})
	}
	setups = slices.DeleteFunc(setups, func(s setup) bool { return !cfg.measures(s.id) })
	if len(setups) == 0 {
		return fmt.Errorf("BENCH_SETUPS %q names no setup", os.Getenv("BENCH_SETUPS"))
	}
	rpid, err := redisPID(ctx, rdb)
	if err != nil {
		return fmt.Errorf("finding the Redis process for CPU accounting: %w", err)
	}
	load := loadAvg()
	var results []result
	var splits []profiled
	for round := 1; round <= cfg.rounds; round++ {
		for _, c := range cfg.conc {
			for _, s := range setups {
				// Each measurement starts with an empty event stream, so Redis'
				// memory and XADD cost do not grow across the run.
				_ = rdb.Del(ctx, balances.Layout{Prefix: prefix}.Stream(0)).Err()
				if _, err := cfg.runWrk(ctx, s, c, cfg.warmup); err != nil {
					return fmt.Errorf("warm-up %s c=%d: %w", s.id, c, err)
				}
				var prof chan error
				var profProc *caddyProc
				var allocFile, profFile string
				if cfg.profile && (round == 1 || cfg.profileAll) && slices.Contains(strings.Fields(cfg.profileSetup), s.id) && c == cfg.conc[len(cfg.conc)-1] {
					// The setup's own gateway (the baseline build's for (c0)),
					// one file per setup: (c)'s keeps the old name.
					p, file := gw, "gateway-cpu.pprof"
					if s.proc != nil {
						p = s.proc
					}
					if s.id != "c" {
						file = "gateway-cpu-" + s.id + ".pprof"
					}
					if round > 1 {
						file = strings.TrimSuffix(file, ".pprof") + "-r" + strconv.Itoa(round) + ".pprof"
					}
					profFile = filepath.Join(cfg.out, file)
					prof = p.cpuProfile(profFile, cfg.duration)
					// The heap's allocations around the measured run too:
					// bytes and objects per request do not depend on the
					// machine's load, as CPU time does (go tool pprof
					// -diff_base before after).
					profProc, allocFile = p, filepath.Join(cfg.out, strings.TrimSuffix(file, ".pprof"))
					if err := p.heapSnapshot(allocFile + "-allocs-before.pprof"); err != nil {
						fmt.Fprintln(os.Stderr, "bench: allocs profile:", err)
					}
				}
				rpids := s.redisPIDs
				if rpids == nil {
					rpids = []int{rpid}
				}
				p0, err1 := procCPU(s.pid)
				q0, err2 := procsCPU(rpids)
				r, err := cfg.runWrk(ctx, s, c, cfg.duration)
				if err != nil {
					return fmt.Errorf("%s c=%d: %w", s.id, c, err)
				}
				p1, err3 := procCPU(s.pid)
				q1, err4 := procsCPU(rpids)
				if err := errors.Join(err1, err2, err3, err4); err != nil {
					return fmt.Errorf("CPU accounting of %s c=%d: %w", s.id, c, err)
				}
				r.proxyCPU, r.redisCPU = p1-p0, q1-q0
				if prof != nil {
					if err := profProc.heapSnapshot(allocFile + "-allocs-after.pprof"); err != nil {
						fmt.Fprintln(os.Stderr, "bench: allocs profile:", err)
					}
					fmt.Fprintf(os.Stderr, "bench: (%s) c=%d measured run: %d requests (allocations per request: the allocs profiles' difference / this)\n", s.id, c, r.Requests)
					if err := <-prof; err != nil {
						fmt.Fprintln(os.Stderr, "bench: profile:", err)
					} else if sp, err := splitProfile(profFile); err != nil {
						fmt.Fprintln(os.Stderr, "bench: profile split:", err)
					} else {
						splits = append(splits, profiled{id: s.id, round: round, cpuUs: r.perReq(r.proxyCPU), split: sp})
					}
				}
				r.setup, r.conc = s, c
				fmt.Fprintf(os.Stderr, "bench: round %d (%s) %-30s c=%-3d %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  CPU/req %5.1f + %5.1f µs  non-2xx %d\n",
					round, s.id, s.name, c, r.rps(), r.P50Us/1000, r.P99Us/1000, r.perReq(r.proxyCPU), r.perReq(r.redisCPU),
					r.Status+r.Connect+r.Read+r.Write+r.Timeout)
				results = append(results, r)
			}
		}
	}
	for _, r := range results {
		if bad := r.Status + r.Connect + r.Read + r.Write + r.Timeout; bad > 0 {
			return fmt.Errorf("(%s) c=%d: %d non-2xx or socket errors: the figures would not be honest", r.setup.id, r.conc, bad)
		}
	}
	report := renderReport(cfg, results, append(machine(cfg), fmt.Sprintf("1-minute load average when the run started: %s, when it ended: %s (other work on the machine shows here).", load, loadAvg())))
	report += splitReport(splits)
	if cfg.measures("ws") && env("BENCH_WS", "1") != "0" {
		n, err := strconv.Atoi(env("BENCH_WS_SUBSCRIBERS", "1000"))
		if err != nil || n < 1 {
			return fmt.Errorf("BENCH_WS_SUBSCRIBERS: %q", os.Getenv("BENCH_WS_SUBSCRIBERS"))
		}
		wsPrefix := prefix + "ws:"
		defer dropPrefix(rdb, wsPrefix)
		fo, err := runFanout(ctx, cfg, up, rdb, rpid, wsPrefix, n)
		if err != nil {
			return fmt.Errorf("the WebSocket fan-out row: %w", err)
		}
		fmt.Fprint(os.Stderr, "bench:", fo.String())
		report += fo.String()
	}
	if cluster != nil {
		// Redis alone: metering decisions per second, no gateway.
		single, err := decisionsPerSecond(ctx, rdb, prefix+"dec:", 1, 64, 64, cfg.duration)
		if err != nil {
			return fmt.Errorf("decisions on the single Redis: %w", err)
		}
		clustered, err := decisionsPerSecond(ctx, cluster.rdb, clusterPrefix(cluster.shards)+"dec:", cluster.shards, 64, 64, cfg.duration)
		if err != nil {
			return fmt.Errorf("decisions on the cluster: %w", err)
		}
		report += fmt.Sprintf("\nRedis alone (the metering script called directly, 64 funded keys, 64 callers, %v): "+
			"%.0f decisions/s on the single Redis, %.0f decisions/s on the cluster of 3 masters with %d shard(s) (%.2f×).\n",
			cfg.duration, single, clustered, cluster.shards, clustered/single)
	}
	if hedgeGW[0] != nil {
		report += hedgeReport(results, hedgeGW, hedgeUps)
	}
	for _, rig := range trustRigs {
		report += rig.report()
	}
	for i, id := range []string{"e", "e0", "e1"} {
		if nodeGW[i] != nil && cfg.measures(id) {
			report += nodeGW[i].checkCost(id)
		}
	}
	fmt.Print(report)
	if err := os.WriteFile(filepath.Join(cfg.out, "latest.md"), []byte(report), 0o644); err != nil {
		return err
	}
	if cfg.docs {
		return updateDocs("docs/benchmarks.md", report)
	}
	return nil
}

// ---- the fast upstream ----

type upstream struct {
	srv   *http.Server
	addr  string
	calls atomic.Int64 // HTTP requests (startCountingUpstream only)
}

// startCountingUpstream is startUpstream that counts its requests and, when
// share > 0, adds delay to that random share of them: a provider with
// hiccups, slow now and then without failing.
func startCountingUpstream(delay time.Duration, share float64) (*upstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{addr: l.Addr().String()}
	u.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		if share > 0 && rand.Float64() < share {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		serveRPC(w, r)
	})}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

// hedgeReport is the hedging table: read latency with and without hedges,
// the fast upstream's own figures from (a), and the extra upstream calls.
func hedgeReport(rs []result, gws [2]*caddyProc, ups [2][2]*upstream) string {
	med := func(id string, conc int, f func(result) float64) float64 {
		var xs []float64
		for _, r := range rs {
			if r.setup.id == id && r.conc == conc {
				xs = append(xs, f(r))
			}
		}
		if len(xs) == 0 {
			return 0
		}
		return median(xs)
	}
	var concs []int
	for _, r := range rs {
		if r.setup.id == "h" && !slices.Contains(concs, r.conc) {
			concs = append(concs, r.conc)
		}
	}
	var b strings.Builder
	b.WriteString("\nHedged reads: two providers, one adding 250 ms to a random 5 % of calls; (a) is the fast upstream alone:\n\n" +
		"| concurrency | setup | p50 ms | p99 ms | p99.9 ms | CPU µs/req | p99 / (a) p99 |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, c := range concs {
		a99 := med("a", c, func(r result) float64 { return r.P99Us })
		for _, id := range []string{"a", "h", "h0"} {
			p50, p99, p999 := med(id, c, func(r result) float64 { return r.P50Us }), med(id, c, func(r result) float64 { return r.P99Us }),
				med(id, c, func(r result) float64 { return r.P999Us })
			if p50 == 0 {
				continue
			}
			cpu := med(id, c, func(r result) float64 {
				return float64((r.proxyCPU + r.redisCPU).Microseconds()) / float64(max(r.Requests, 1))
			})
			ratio := "—"
			if a99 > 0 && id != "a" {
				ratio = fmt.Sprintf("%.2f", p99/a99)
			}
			fmt.Fprintf(&b, "| %d | (%s) | %.2f | %.2f | %.2f | %.1f | %s |\n", c, id, p50/1000, p99/1000, p999/1000, cpu, ratio)
		}
	}
	for i, id := range []string{"h", "h0"} {
		calls := ups[i][0].calls.Load() + ups[i][1].calls.Load()
		fmt.Fprintf(&b, "\n(%s) hedges: %s; upstream requests over the whole run, warm-ups and health probes included: %d.\n",
			id, hedgeCounters(gws[i]), calls)
	}
	return b.String()
}

// hedgeCounters reads a gateway's hedge counters from /rpc/stats.
func hedgeCounters(p *caddyProc) string {
	resp, err := http.Get(p.url + "/rpc/stats/polygon")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	var s struct {
		Hedges map[string]float64 `json:"hedges"`
	}
	if json.NewDecoder(resp.Body).Decode(&s) != nil {
		return "?"
	}
	if s.Hedges["reads"] == 0 {
		return "none (off)"
	}
	return fmt.Sprintf("%.0f reads (warm-ups included), %.0f hedges sent (%.1f extra upstream calls per 100 reads), %.0f won", s.Hedges["reads"],
		s.Hedges["hedges_sent"], 100*s.Hedges["hedges_sent"]/s.Hedges["reads"], s.Hedges["hedges_won"])
}

// startUpstream serves eth_chainId (Polygon, 137) and eth_blockNumber at
// once, singly or in batches: the cheapest honest JSON-RPC server, so the
// figures measure the proxies, not the upstream.
func startUpstream() (*upstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{addr: l.Addr().String()}
	u.srv = &http.Server{Handler: http.HandlerFunc(serveRPC), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

func (u *upstream) Close() { _ = u.srv.Close() }

type rpcCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func serveRPC(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	b = bytes.TrimSpace(b)
	w.Header().Set("Content-Type", "application/json")
	if len(b) > 0 && b[0] == '[' {
		var calls []rpcCall
		if json.Unmarshal(b, &calls) != nil {
			http.Error(w, "bad batch", http.StatusBadRequest)
			return
		}
		out := []byte{'['}
		for i, c := range calls {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendAnswer(out, c)
		}
		_, _ = w.Write(append(out, ']'))
		return
	}
	var c rpcCall
	if json.Unmarshal(b, &c) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	_, _ = w.Write(appendAnswer(nil, c))
}

func appendAnswer(dst []byte, c rpcCall) []byte {
	id := c.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	switch c.Method {
	case "eth_chainId":
		return append(dst, `,"result":"0x89"}`...)
	case "eth_blockNumber":
		return append(dst, `,"result":"0x4b7c3a1"}`...)
	case "eth_getBalance", "eth_getTransactionCount":
		return append(dst, `,"result":"0x0"}`...)
	case "eth_call": // (t)'s call: a uint256
		return append(dst, `,"result":"0x0000000000000000000000000000000000000000000000000000000000000001"}`...)
	case "eth_getBlockByNumber": // the head the gateway pins reads at
		return append(dst, `,"result":{"number":"0x4b7c3a1","hash":"0x`+strings.Repeat("ab", 32)+`","parentHash":"0x`+strings.Repeat("cd", 32)+`"}}`...)
	}
	return append(dst, `,"error":{"code":-32601,"message":"method not found"}}`...)
}

// ---- Caddy processes ----

// globalOptions opens every Caddyfile of the bench: the admin endpoint on
// its own port, nothing persisted, no certificates.
const globalOptions = `{
	admin 127.0.0.1:{ADMIN_PORT}
	persist_config off
	auto_https off
}
`

// plainCaddyfile is Caddy's standard reverse_proxy and nothing else: the
// baseline the gateway is compared with. No access log in either config.
const plainCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	reverse_proxy {UPSTREAM}
}
`

// gatewayCaddyfile is our gateway with metering on against the real Redis.
// Rate and concurrency limits are off and the free tier is effectively
// unlimited, so (d) is never answered 402/429: the bench measures the
// metering round trip, not a refusal.
const gatewayCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.BENCH_REDIS_URL}
			key_prefix {PREFIX}
			free_daily_limit 1099511627776
			free_subnet_limit 1099511627776
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
			usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
			x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
			chain 137 {
				provider bench http://{UPSTREAM}
			}
		}
		respond 404
	}
}
`

// openGatewayCaddyfile is our gateway with metering off: no Redis, every
// call forwarded free.
const openGatewayCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			chain 137 {
				provider bench http://{UPSTREAM}
			}
		}
		respond 404
	}
}
`

// hedgeGatewayCaddyfile is gatewayCaddyfile with two providers: {FAST}
// and {SLOW} (hiccups), and hedged reads at {HEDGE} (a share, or off).
const hedgeGatewayCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.BENCH_REDIS_URL}
			key_prefix {PREFIX}
			upstreams {
				hedge {HEDGE}
			}
			free_daily_limit 1099511627776
			free_subnet_limit 1099511627776
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
			usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
			x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
			chain 137 {
				provider bench http://{SLOW}
				provider fast http://{FAST}
			}
		}
		respond 404
	}
}
`

// nodeGatewayCaddyfile is gatewayCaddyfile with the registry read (the
// fast upstream is a registered node as well as the provider) and answer
// verification at {VERIFY}.
const nodeGatewayCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.BENCH_REDIS_URL}
			key_prefix {PREFIX}
			upstreams {
				allow_private_nodes
				verify {VERIFY}
				probation off
			}
			metering on {
				free_daily_limit 1099511627776
				free_subnet_limit 1099511627776
				rate_limit_ip off
				rate_limit_key off
				key_create_limit off
				ip_concurrency off
			}
			payments {
				vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
				usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
				x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
			}
			chain 137 {
				provider bench http://{UPSTREAM}
			}
		}
		respond 404
	}
}
`

type caddyProc struct {
	name, url, admin string
	cmd              *exec.Cmd
	log              *os.File
	done             chan error
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startCaddy(ctx context.Context, cfg config, bin, name, tmpl string, vars map[string]string, extraEnv ...string) (*caddyProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	adminPort, err := freePort()
	if err != nil {
		return nil, err
	}
	vars["PORT"], vars["ADMIN_PORT"] = strconv.Itoa(port), strconv.Itoa(adminPort)
	cf := tmpl
	for k, v := range vars {
		cf = strings.ReplaceAll(cf, "{"+k+"}", v)
	}
	dir, err := filepath.Abs(filepath.Join(cfg.out, name))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(cf), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return nil, err
	}
	p := &caddyProc{name: name, url: fmt.Sprintf("http://127.0.0.1:%d", port), admin: fmt.Sprintf("http://127.0.0.1:%d", adminPort),
		log: logf, done: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, bin, "run", "--config", path, "--adapter", "caddyfile")
	p.cmd.Env = append(append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TOLLGATE_DEV=1"), extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s caddy: %w", name, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	// Ready when the admin endpoint answers /config/ (config loaded).
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("%s caddy exited during start-up (%v); see %s", name, err, logf.Name())
		default:
		}
		if resp, err := http.Get(p.admin + "/config/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s caddy not ready after 30 s; see %s", name, logf.Name())
		}
		time.Sleep(25 * time.Millisecond) // polling the listener, not synchronising on time
	}
}

func (p *caddyProc) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	p.log.Close()
}

// waitUpstreamHealthy waits until the gateway's health probe has found the
// upstream healthy, so no measured call waits on a first probe.
func (p *caddyProc) waitUpstreamHealthy(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/rpc/stats/polygon")
		if err == nil {
			var s struct {
				Breakers []struct{ Name, Health string } `json:"circuit_breakers"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&s)
			resp.Body.Close()
			for _, b := range s.Breakers {
				if b.Name == "bench" && b.Health == "healthy" {
					return nil
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("the gateway never found the bench upstream healthy; see " + p.log.Name())
		}
		time.Sleep(25 * time.Millisecond) // polling observable state
	}
}

// cpuProfile fetches a CPU profile from Caddy's admin /debug/pprof while
// the measurement runs.
// waitNodeServing waits until the registered node serves calls (nodes are
// preferred once their first probe passed).
func (p *caddyProc) waitNodeServing(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Post(p.url+"/rpc", "application/json", strings.NewReader(body))
		if err == nil {
			by := resp.Header.Get("X-Tollgate-Upstream")
			resp.Body.Close()
			if by == benchNode {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling the pool through the API
		}
	}
	return fmt.Errorf("%s: the registered node never served", p.name)
}

// checkCost reads what the node's checks cost the providers, from the
// gateway's /rpc/health after the rounds: calls the provider served (the
// verifier's replays and the head's polls) per call the node served.
func (p *caddyProc) checkCost(id string) string {
	resp, err := http.Get(p.url + "/rpc/health")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []struct {
					Kind      string `json:"kind"`
					Successes uint64 `json:"successes"`
				} `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if json.NewDecoder(resp.Body).Decode(&h) != nil {
		return ""
	}
	var prov, node uint64
	for _, c := range h.Chains {
		if c.ChainID != 137 {
			continue
		}
		for _, u := range c.Pool.Upstreams {
			if u.Kind == "node" {
				node += u.Successes
			} else {
				prov += u.Successes
			}
		}
	}
	if node == 0 {
		return ""
	}
	return fmt.Sprintf("\n(%s) provider calls per node-served call: %.4f (%d provider calls — checks and head polls — for %d node-served calls).\n",
		id, float64(prov)/float64(node), prov, node)
}

// heapSnapshot writes the gateway's allocations so far (pprof allocs).
func (p *caddyProc) heapSnapshot(path string) error {
	resp, err := http.Get(p.admin + "/debug/pprof/allocs")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof allocs: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *caddyProc) cpuProfile(path string, d time.Duration) chan error {
	ch := make(chan error, 1)
	go func() {
		secs := max(1, int(d.Seconds())-1)
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.admin, secs))
		if err != nil {
			ch <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			ch <- fmt.Errorf("pprof: %s", resp.Status)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			ch <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			fmt.Fprintln(os.Stderr, "bench: gateway CPU profile written to", path)
		}
		ch <- err
	}()
	return ch
}

// fundedKey creates an API key through the gateway and credits it the way
// settlementd's deposit listener does (shared/balances.Credit), with enough
// for any run.
func fundedKey(ctx context.Context, gw *caddyProc, rdb redis.UniversalClient, prefix string) (string, error) {
	return fundedKeyAt(ctx, gw, rdb, balances.Layout{Prefix: prefix})
}

// fundedKeyAt creates a key through gw and credits it in layout l.
func fundedKeyAt(ctx context.Context, gw *caddyProc, rdb redis.UniversalClient, l balances.Layout) (string, error) {
	resp, err := http.Post(gw.url+"/api/keys", "application/json", strings.NewReader(`{"label":"bench","tier":"free"}`))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var k struct {
		Key string `json:"api_key"`
		ID  string `json:"key_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&k); err != nil || resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("creating the bench key: %s %v", resp.Status, err)
	}
	if _, _, err := balances.CreditAt(ctx, rdb, l, k.ID, 1_000_000*money.Scale, "bench:"+k.ID); err != nil {
		return "", err
	}
	return k.Key, nil
}

func dropPrefix(rdb *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		_ = rdb.Unlink(ctx, keys...).Err()
	}
}

// ---- wrk ----

type setup struct {
	redisPIDs          []int // the Redis processes whose CPU is counted (nil: the single Redis)
	id, name, url, key string
	body               string            // the call; "" is eth_blockNumber
	headers            map[string]string // more request headers
	pid                int               // the proxy process whose CPU is counted (0: none, the upstream directly)
	ws                 bool              // the call goes over a WebSocket to url (runWSCalls), not a POST
	proc               *caddyProc        // the gateway BENCH_PROFILE profiles for it (nil: the (c) gateway)
}

// result is what the wrk script's done() prints (latencies in µs).
type result struct {
	Requests   int64   `json:"requests"`
	DurationUs int64   `json:"duration_us"`
	Connect    int64   `json:"connect"`
	Read       int64   `json:"read"`
	Write      int64   `json:"write"`
	Status     int64   `json:"status"`
	Timeout    int64   `json:"timeout"`
	P50Us      float64 `json:"p50"`
	P90Us      float64 `json:"p90"`
	P99Us      float64 `json:"p99"`
	P999Us     float64 `json:"p999"`
	MeanUs     float64 `json:"mean"`

	setup setup
	conc  int
	// CPU (user + system) the proxy process and Redis spent during the
	// measured run, from /proc/<pid>/stat.
	proxyCPU, redisCPU time.Duration
}

func (r result) rps() float64 { return float64(r.Requests) / (float64(r.DurationUs) / 1e6) }

// perReq is d spent per request served, in µs.
func (r result) perReq(d time.Duration) float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(r.Requests)
}

// clockTick is the unit of /proc/<pid>/stat's utime and stime (USER_HZ).
var clockTick = func() time.Duration {
	if n, err := strconv.Atoi(cmdOut("getconf", "CLK_TCK")); err == nil && n > 0 {
		return time.Second / time.Duration(n)
	}
	return 10 * time.Millisecond
}()

// procCPU is the user + system CPU time of a process, all threads, so far.
// pid 0 is no process (0).
// procsCPU is the CPU time of several processes together.
func procsCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		d, err := procCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// redisPID is the Redis server's process id (its INFO server section).
func redisPID(ctx context.Context, rdb *redis.Client) (int, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("redis INFO server has no process_id")
}

// mcpBody is eth_blockNumber as an MCP tools/call of the rpc tool.
const mcpBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_blockNumber"}}}`

// wrkScript POSTs the JSON-RPC call and reports the summary as one JSON
// line (wrk's --latency table rounds; its Lua API gives exact figures).
const wrkScript = `wrk.method = "POST"
wrk.body = '%s'
wrk.headers["Content-Type"] = "application/json"
%s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d,"p50":%%.1f,"p90":%%.1f,"p99":%%.1f,"p999":%%.1f,"mean":%%f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.mean))
end
`

func (cfg config) runWrk(ctx context.Context, s setup, conc int, d time.Duration) (result, error) {
	if s.ws {
		return runWSCalls(ctx, s, conc, d)
	}
	hdr := ""
	if s.key != "" {
		hdr = fmt.Sprintf(`wrk.headers["X-API-Key"] = %q`, s.key)
	}
	for _, k := range slices.Sorted(maps.Keys(s.headers)) {
		hdr += fmt.Sprintf("\nwrk.headers[%q] = %q", k, s.headers[k])
	}
	script := filepath.Join(cfg.out, "post-"+s.id+".lua")
	b := body
	if s.body != "" {
		b = s.body
	}
	if err := os.WriteFile(script, []byte(fmt.Sprintf(wrkScript, b, hdr)), 0o600); err != nil {
		return result{}, err
	}
	threads := min(cfg.threads, conc)
	cmd := exec.CommandContext(ctx, cfg.wrk, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conc),
		"-d", fmt.Sprintf("%ds", max(1, int(d.Seconds()))), "--latency", "-s", script, s.url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "BENCH_RESULT "); ok {
			var r result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return result{}, fmt.Errorf("wrk summary %q: %w", line, err)
			}
			return r, nil
		}
	}
	return result{}, fmt.Errorf("no summary in wrk's output:\n%s", out)
}

// ---- report ----

// cmdOut is the first line a command prints (wrk --version exits 1 after
// printing its version, so the exit status is not consulted).
func cmdOut(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	line := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if line == "" {
		return "unknown"
	}
	return line
}

func machine(cfg config) []string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					mem = fmt.Sprintf("%.1f GiB", kb/1024/1024)
				}
			}
		}
	}
	return []string{
		fmt.Sprintf("CPU: %d × %s (`nproc` = %s)", runtime.NumCPU(), cpu, cmdOut("nproc")),
		"Memory: " + mem,
		"OS: " + cmdOut("uname", "-sr"),
		"Go: " + runtime.Version() + "; Caddy: " + cmdOut(cfg.caddyBin, "version"),
		"Redis: " + cmdOut("redis-server", "--version") + " (its own instance, scripts/bench.sh: no persistence)",
		"Load generator: " + cmdOut(cfg.wrk, "--version") + fmt.Sprintf(", %d threads", cfg.threads),
		"Load generator, upstream, Caddy and Redis all share these cores.",
		fmt.Sprintf("Each cell: the median of %d rounds of %s of wrk, each after a %s warm-up, setups interleaved; call: eth_blockNumber (never served by the edge cache).",
			cfg.rounds, cfg.duration, cfg.warmup),
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// cell is one setup at one concurrency: the median of its rounds.
type cell struct {
	s              setup
	conc           int
	rps, p50, p99  float64 // req/s, ms, ms
	minRPS, maxRPS float64
	proxyCPU       float64 // µs of the proxy process's CPU per request
	redisCPU       float64 // µs of Redis' CPU per request
	totalCPU       float64 // median of proxy + Redis per request over the rounds
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func cells(rs []result) (order []string, out map[string]cell) {
	out = map[string]cell{}
	group := map[string][]result{}
	for _, r := range rs {
		k := fmt.Sprint(r.conc, r.setup.id)
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], r)
	}
	for k, g := range group {
		var rps, p50, p99, pc, rc, tc []float64
		for _, r := range g {
			rps, p50, p99 = append(rps, r.rps()), append(p50, r.P50Us/1000), append(p99, r.P99Us/1000)
			pc, rc = append(pc, r.perReq(r.proxyCPU)), append(rc, r.perReq(r.redisCPU))
			tc = append(tc, r.perReq(r.proxyCPU+r.redisCPU))
		}
		c := cell{s: g[0].setup, conc: g[0].conc, rps: median(rps), p50: median(p50), p99: median(p99), minRPS: slices.Min(rps), maxRPS: slices.Max(rps),
			proxyCPU: median(pc), redisCPU: median(rc), totalCPU: median(tc)}
		out[k] = c
	}
	sort.SliceStable(order, func(i, j int) bool { return out[order[i]].conc < out[order[j]].conc })
	return order, out
}

func renderReport(cfg config, rs []result, mach []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run of %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	for _, m := range mach {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	order, cs := cells(rs)
	b.WriteString("\n| concurrency | setup | req/s (median) | req/s range | p50 ms | p99 ms | proxy CPU µs/req | Redis CPU µs/req | total CPU µs/req |\n" +
		"|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range order {
		c := cs[k]
		fmt.Fprintf(&b, "| %d | (%s) %s | %.0f | %.0f–%.0f | %.2f | %.2f | %.1f | %.1f | %.1f |\n", c.conc, c.s.id, c.s.name, c.rps, c.minRPS, c.maxRPS,
			c.p50, c.p99, c.proxyCPU, c.redisCPU, c.totalCPU)
	}
	ratios := func(title, c, d string) {
		fmt.Fprintf(&b, "\n%s| concurrency | (%s)/(b) req/s | (%s)/(b) req/s | (%s) − (b) p99 ms | (%s) − (b) p99 ms | (%s)/(b) CPU/req | (%s)/(b) CPU/req |\n"+
			"|---:|---:|---:|---:|---:|---:|---:|\n", title, c, d, c, d, c, d)
		for _, n := range cfg.conc {
			pb, pc, pd := cs[fmt.Sprint(n, "b")], cs[fmt.Sprint(n, c)], cs[fmt.Sprint(n, d)]
			fmt.Fprintf(&b, "| %d | %.2f | %.2f | %+.2f | %+.2f | %.2f | %.2f |\n", n, pc.rps/pb.rps, pd.rps/pb.rps, pc.p99-pb.p99, pd.p99-pb.p99,
				ratio(pc.totalCPU, pb.totalCPU), ratio(pd.totalCPU, pb.totalCPU))
		}
	}
	ratios("", "c", "d")
	if _, ok := cs[fmt.Sprint(cfg.conc[0], "c0")]; ok {
		ratios("Baseline build, same rounds:\n\n", "c0", "d0")
	}
	if _, ok := cs[fmt.Sprint(cfg.conc[0], "f")]; ok {
		b.WriteString("\nWhere a paid call's cost lies: the gateway with metering off (f) against plain Caddy, and what metering adds to it ((c) − (f), gateway + Redis):\n\n" +
			"| concurrency | (f)/(b) req/s | (f)/(b) CPU/req | (c) − (f) CPU µs/req |\n|---:|---:|---:|---:|\n")
		for _, n := range cfg.conc {
			pb, pc, pf := cs[fmt.Sprint(n, "b")], cs[fmt.Sprint(n, "c")], cs[fmt.Sprint(n, "f")]
			fmt.Fprintf(&b, "| %d | %.2f | %.2f | %+.1f |\n", n, pf.rps/pb.rps, ratio(pf.totalCPU, pb.totalCPU), pc.totalCPU-pf.totalCPU)
		}
	}
	if _, ok := cs[fmt.Sprint(cfg.conc[0], "e")]; ok {
		b.WriteString("\nAnswer checks (a node-served read at the head, pinned to the head block's hash; funded key), at the default floor (e) vs off (e0):\n\n" +
			"| concurrency | (e)/(e0) req/s | (e) − (e0) p99 ms | (e)/(e0) CPU/req |\n|---:|---:|---:|---:|\n")
		for _, n := range cfg.conc {
			on, off := cs[fmt.Sprint(n, "e")], cs[fmt.Sprint(n, "e0")]
			fmt.Fprintf(&b, "| %d | %.2f | %+.2f | %.2f |\n", n, on.rps/off.rps, on.p99-off.p99, ratio(on.totalCPU, off.totalCPU))
		}
	}
	b.WriteString("\nCPU per request: user + system time of the proxy process (all threads) and of Redis over each measured run, " +
		"from /proc/<pid>/stat, divided by the requests served; medians over the rounds. (a) has no proxy; the load generator and " +
		"the upstream are not counted. CPU/req ratios compare proxy + Redis with plain Caddy's proxy.\n")
	return b.String()
}

const beginMark, endMark = "<!-- bench:begin -->", "<!-- bench:end -->"

// updateDocs replaces the generated block of the benchmarks page.
func updateDocs(path, report string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s … %s block", path, beginMark, endMark)
	}
	s = s[:i+len(beginMark)] + "\n" + report + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
