// Package caddyrun starts our custom Caddy build as a real process for
// integration tests: the binary operators run, configured by a Caddyfile,
// on free loopback ports, with its output kept for failure messages.
package caddyrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of the caddy binary: $TOLLGATE_CADDY_BIN when set
// (make test builds bin/caddy first), otherwise one built once per test
// binary from ./caddymodule/cmd/caddy.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TOLLGATE_CADDY_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TOLLGATE_CADDY_BIN=%s: %v", p, err)
		}
		return p
	}
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "tollgate-caddy-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "caddy")
		cmd := exec.Command("go", "build", "-o", binPath, "./caddymodule/cmd/caddy")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build caddy: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the tollgate module")
	}
	return filepath.Dir(mod), nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Server is a running Caddy.
type Server struct {
	t         testing.TB
	bin       string
	dir       string
	AdminAddr string
	Port      int
	cmd       *exec.Cmd
	out       *syncBuffer
	// exited is closed when the process has ended (waitErr is then set), so
	// start-up and Stop can both observe the exit.
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Start runs caddy with caddyfile, in which {ADMIN} and {PORT} are replaced by
// the admin address and HTTP port picked here. It waits until the site answers
// and stops the process at the end of the test.
func Start(t testing.TB, caddyfile string, env ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t), dir: t.TempDir(), AdminAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t)), Port: FreePort(t), out: &syncBuffer{}, exited: make(chan struct{})}
	path := s.write(caddyfile)
	s.cmd = exec.Command(s.bin, "run", "--config", path, "--adapter", "caddyfile")
	// The tests run on the dev chains, whose accounts are refused as money
	// addresses outside the dev profile; a test of the refusals passes
	// TOLLGATE_DEV=0 in env, which comes later and wins.
	s.cmd.Env = append(append(os.Environ(), "HOME="+s.dir, "XDG_DATA_HOME="+s.dir, "XDG_CONFIG_HOME="+s.dir, "TOLLGATE_DEV=1"), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start caddy: %v", err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.Stop)
	s.waitReady()
	return s
}

func (s *Server) write(caddyfile string) string {
	path, err := s.tryWrite(caddyfile)
	if err != nil {
		s.t.Fatal(err)
	}
	return path
}

func (s *Server) tryWrite(caddyfile string) (string, error) {
	c := strings.NewReplacer("{ADMIN}", s.AdminAddr, "{PORT}", fmt.Sprint(s.Port)).Replace(caddyfile)
	path := filepath.Join(s.dir, "Caddyfile")
	return path, os.WriteFile(path, []byte(c), 0o600)
}

// URL returns the site's base URL.
func (s *Server) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.Port) }

// ChainHealthy reports whether the gateway's /rpc/health lists chain id as
// healthy (for polling until its upstreams are up).
func (s *Server) ChainHealthy(id uint64) (bool, error) {
	resp, err := http.Get(s.URL() + "/rpc/health")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Healthy bool   `json:"healthy"`
		} `json:"chains"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return false, err
	}
	for _, c := range h.Chains {
		if c.ChainID == id {
			return c.Healthy, nil
		}
	}
	return false, nil
}

// Output is everything Caddy printed so far.
func (s *Server) Output() string { return s.out.String() }

func (s *Server) waitReady() {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			s.t.Fatalf("caddy exited during start-up: %v\n%s", s.waitErr, s.Output())
		default:
		}
		resp, err := http.Get(s.URL() + "/rpc/health")
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(25 * time.Millisecond) // polling the listener, not synchronising on time
	}
	s.t.Fatalf("caddy did not answer within 30s\n%s", s.Output())
}

// Reload applies a new Caddyfile through `caddy reload`, as an operator would.
func (s *Server) Reload(caddyfile string) {
	s.t.Helper()
	if err := s.TryReload(caddyfile); err != nil {
		s.t.Fatal(err)
	}
}

// TryReload is Reload for a goroutine other than the test's: it returns
// the failure instead of ending the test.
func (s *Server) TryReload(caddyfile string) error {
	path, err := s.tryWrite(caddyfile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, "reload", "--config", path, "--adapter", "caddyfile", "--address", s.AdminAddr)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("caddy reload: %v\n%s\n%s", err, out, s.Output())
	}
	// The old configuration's server closes its idle keep-alive
	// connections as it shuts down; a POST written on one as that close
	// arrives sees EOF and is not retried (net/http retries only
	// idempotent requests), as with any server's graceful shutdown. The
	// tests' client starts on fresh connections, as a client retrying
	// would.
	http.DefaultClient.CloseIdleConnections()
	return nil
}

// Kill ends the process with SIGKILL, as a crashed machine: nothing is
// flushed, requests in flight get no answer. It waits for the exit.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// Stop ends the process (gracefully, then by force).
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if s.t.Failed() {
			s.t.Logf("caddy output:\n%s", s.Output())
		}
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// CPU is the CPU time (user and system) the Caddy process has spent so
// far, from /proc/<pid>/stat (Linux): a test's measure of the gateway's
// own cost per call.
func (s *Server) CPU() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: the fields after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", s.cmd.Process.Pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", s.cmd.Process.Pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", s.cmd.Process.Pid, f[11], f[12])
	}
	// USER_HZ is 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)).
	return time.Duration(utime+stime) * (time.Second / 100), nil
}
