// Package rediscluster runs a real Redis Cluster (three masters, one replica
// each) for tests and benchmarks, through scripts/cluster.sh — the same
// script `make cluster-test` uses — and fails over its masters on demand.
//
// Start picks six free loopback ports, so parallel test runs (and several
// checkouts) do not meet; the cluster lives under t.TempDir() and is stopped
// when the test ends. Without redis-server the test is skipped, or fails when
// services are required (testenv.Required: CI or TOLLGATE_REQUIRE_SERVICES).
//
// What a failover may lose, and the bound the tests hold it to: Redis
// replicates asynchronously, so a master killed with kill -9 may take with it
// the writes it acknowledged in its last moments that its replica had not
// yet received. On loopback the replica is a few microseconds behind, and
// Tollgate's own design (docs/decisions.md, "Redis Cluster failover") bounds
// what that costs: a debit lost with its event is a call served unbilled; a
// debit whose event is lost is repaired by reconcile from PostgreSQL; a caller
// is never charged twice because a lost write is never replayed.
package rediscluster

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

// Nodes is the cluster's size: three masters and one replica each.
const Nodes = 6

// Cluster is one running cluster.
type Cluster struct {
	Dir  string // <dir>/<port>/ holds each node's pid file, log and nodes.conf
	Base int    // ports Base..Base+5
	URL  string // redis://127.0.0.1:<Base>?addr=…: what go-redis's ParseClusterURL reads

	script string
	env    []string
	lock   *os.File // holds the port range picked by New (freeBase) until Stop
}

// Start starts a cluster for t and stops it when t ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if testenv.Required() {
			t.Fatalf("rediscluster: redis-server is not installed, and services are required; run `make cluster-test` once (it apt-get installs it)")
		}
		t.Skip("rediscluster: redis-server is not installed; skipping")
	}
	c, err := New(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("rediscluster: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// New describes a cluster under dir on ports base..base+5 (0: free ports
// picked at random) without starting it.
func New(dir string, base int) (*Cluster, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	var lock *os.File
	if base == 0 {
		if base, lock, err = freeBase(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Dir: dir, Base: base, script: filepath.Join(root, "scripts", "cluster.sh"), lock: lock}
	c.env = append(os.Environ(), "TOLLGATE_CLUSTER_DIR="+dir, "TOLLGATE_CLUSTER_PORT="+strconv.Itoa(base),
		"TOLLGATE_CLUSTER_NODE_TIMEOUT=1000")
	return c, nil
}

// Start runs scripts/cluster.sh start and waits for cluster_state:ok.
func (c *Cluster) Start(ctx context.Context) error {
	out, err := c.run(ctx, "start")
	if err != nil {
		return err
	}
	line := strings.TrimSpace(out)
	if !strings.HasPrefix(line, "export TOLLGATE_CLUSTER_URL=") {
		return fmt.Errorf("rediscluster: unexpected output of cluster.sh start: %q", line)
	}
	c.URL = strings.TrimPrefix(line, "export TOLLGATE_CLUSTER_URL=")
	return nil
}

// Stop kills every node and removes the data.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := c.run(ctx, "stop")
	if c.lock != nil {
		_ = c.lock.Close()
	}
	return err
}

func (c *Cluster) run(ctx context.Context, verb string) (string, error) {
	cmd := exec.CommandContext(ctx, c.script, verb)
	cmd.Env = c.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("rediscluster: cluster.sh %s: %v: %s", verb, err, stderr.String())
	}
	return string(out), nil
}

// Client is a cluster client with go-redis's defaults but one: the slot map
// is reloaded every second. go-redis reloads it on MOVED, but a dead master
// answers nothing (connection refused), so with the default 60 s interval a
// client keeps sending a failed master's slots to it for up to a minute after
// its replica took over.
func (c *Cluster) Client() *redis.ClusterClient {
	o, err := redis.ParseClusterURL(c.URL)
	if err != nil {
		panic(err) // the URL is ours
	}
	o.ClusterStateReloadInterval = time.Second
	return redis.NewClusterClient(o)
}

// Node is one node as CLUSTER NODES describes it.
type Node struct {
	ID     string
	Addr   string // 127.0.0.1:port
	Port   int
	Master bool
	Of     string // a replica's master id
	Slots  string // a master's slot ranges
	Failed bool
}

// Nodes asks the first node that answers for the cluster's view.
func (c *Cluster) Nodes(ctx context.Context) ([]Node, error) {
	var last error
	for p := c.Base; p < c.Base+Nodes; p++ {
		r := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
		s, err := r.ClusterNodes(ctx).Result()
		_ = r.Close()
		if err != nil {
			last = err
			continue
		}
		return parseNodes(s), nil
	}
	return nil, fmt.Errorf("rediscluster: no node answers: %v", last)
}

func parseNodes(s string) []Node {
	var out []Node
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		_, port, _ := net.SplitHostPort(addr)
		n := Node{ID: f[0], Addr: addr, Master: strings.Contains(f[2], "master"), Failed: strings.Contains(f[2], "fail")}
		n.Port, _ = strconv.Atoi(port)
		if f[3] != "-" {
			n.Of = f[3]
		}
		if len(f) > 8 {
			n.Slots = strings.Join(f[8:], " ")
		}
		out = append(out, n)
	}
	return out
}

// Masters are the live masters that own slots.
func (c *Cluster) Masters(ctx context.Context) ([]Node, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	var m []Node
	for _, n := range nodes {
		if n.Master && !n.Failed && n.Slots != "" {
			m = append(m, n)
		}
	}
	return m, nil
}

// Pid is the process id of the node on port.
func (c *Cluster) Pid(port int) (int, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, strconv.Itoa(port), "redis.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// KillMaster kills the master on port with SIGKILL (no goodbye to its
// replica, as a crashed machine) and returns at once; WaitPromoted waits for
// its replica to take over.
func (c *Cluster) KillMaster(port int) error {
	pid, err := c.Pid(port)
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// LagReplica makes the replica of the master on port provably miss the
// master's next writes: the master refuses to replicate to anyone (ACL:
// the default user, which replicas connect as, loses PSYNC and SYNC) and
// drops its replication link (CLIENT KILL TYPE replica). The replica keeps
// its data and retries in vain; clients are not affected. Killed then, the
// master takes every write since with it, and the promoted replica lacks
// them: the failover that loses acknowledged writes, made certain instead of
// left to a few microseconds of replication lag. (Stopping the replica
// instead, SIGSTOP, made the cluster hand it a fresh, empty dataset.)
//
// It first waits until the replica holds everything the master wrote so
// far (its link up, its offset at the master's), so what it lacks is
// exactly what comes after.
func (c *Cluster) LagReplica(ctx context.Context, port int) error {
	m := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer m.Close()
	rport, err := c.ReplicaOf(ctx, port)
	if err != nil {
		return err
	}
	r := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", rport)})
	defer r.Close()
	field := func(info, name string) string {
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	for {
		mi, err := m.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		ri, err := r.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		mo, _ := strconv.ParseInt(field(mi, "master_repl_offset"), 10, 64)
		ro, _ := strconv.ParseInt(field(ri, "slave_repl_offset"), 10, 64)
		if field(ri, "master_link_status") == "up" && ro > 0 && ro >= mo-64<<10 && field(ri, "master_sync_in_progress") == "0" {
			break // within the writes of the last instant: they stream on until the cut
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica :%d never caught up with master :%d: %w", rport, port, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := m.Do(ctx, "ACL", "SETUSER", "default", "-psync", "-sync").Err(); err != nil {
		return err
	}
	return m.ClientKillByFilter(ctx, "TYPE", "replica").Err()
}

// ReplicaOf is the port of the replica of the master on port.
func (c *Cluster) ReplicaOf(ctx context.Context, port int) (int, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return 0, err
	}
	var id string
	for _, n := range nodes {
		if n.Port == port {
			id = n.ID
		}
	}
	for _, n := range nodes {
		if id != "" && n.Of == id && !n.Failed {
			return n.Port, nil
		}
	}
	return 0, fmt.Errorf("rediscluster: the node on %d has no live replica", port)
}

// WaitPromoted waits until the node on replica is a master owning slots and
// every live master reports cluster_state:ok.
func (c *Cluster) WaitPromoted(ctx context.Context, replica int) error {
	for {
		if masters, err := c.Masters(ctx); err == nil && len(masters) == 3 {
			promoted, ok := false, true
			for _, m := range masters {
				promoted = promoted || m.Port == replica
				ok = ok && c.stateOK(ctx, m.Port)
			}
			if promoted && ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("rediscluster: the replica on %d was not promoted: %w", replica, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) stateOK(ctx context.Context, port int) bool {
	r := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer r.Close()
	s, err := r.ClusterInfo(ctx).Result()
	return err == nil && strings.Contains(s, "cluster_state:ok")
}

// KeysPerMaster is DBSIZE of every live master, by address.
func (c *Cluster) KeysPerMaster(ctx context.Context) (map[string]int64, error) {
	masters, err := c.Masters(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, m := range masters {
		r := redis.NewClient(&redis.Options{Addr: m.Addr, MaxRetries: -1})
		n, err := r.DBSize(ctx).Result()
		_ = r.Close()
		if err != nil {
			return nil, fmt.Errorf("rediscluster: DBSIZE of %s: %w", m.Addr, err)
		}
		out[m.Addr] = n
	}
	return out, nil
}

// freeBase finds six consecutive free ports whose cluster-bus ports
// (+10000) are free too, and claims them for this process (the returned
// file holds a lock on the range until it is closed).
//
// Every port stays below the kernel's ephemeral range (32768 and up on
// Linux): an ephemeral port is free when checked and may be any outgoing
// connection's a moment later, before redis-server binds it. Clusters
// started at the same time by tests in other packages (go test runs
// packages in parallel) lock their ranges, so two never pick the same one.
func freeBase() (int, *os.File, error) {
	const lowest, highest = 20000, 32768 - 10000 - Nodes
	for range 200 {
		base := lowest + rand.IntN((highest-lowest)/10)*10
		f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("tollgate-rediscluster-%d.lock", base)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return 0, nil, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || !portsFree(base) {
			_ = f.Close()
			continue
		}
		return base, f, nil
	}
	return 0, nil, fmt.Errorf("rediscluster: no free port range found")
}

func portsFree(base int) bool {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for p := base; p < base+Nodes; p++ {
		for _, q := range []int{p, p + 10000} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				return false
			}
			ls = append(ls, l)
		}
	}
	return true
}

// moduleRoot is the directory holding go.mod, found upward from the working
// directory (a test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("rediscluster: go.mod not found above the working directory")
		}
		dir = parent
	}
}
