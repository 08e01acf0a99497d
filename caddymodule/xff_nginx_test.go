package caddymodule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// xffCaddyfile: our gateway with the root Caddyfile's trusted-proxy lines
// (@TRUST@, copied from it as shipped) and its settlementd route
// (@SETTLEMENT@, the reverse_proxy block as shipped, to an echo server), a
// free tier of 5 calls, an address rate of 8 requests (1 an hour after the
// burst) and 2 key creations an hour per address.
const xffCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
	servers {
@TRUST@
	}
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			request_timeout 10s
			upstream_timeout 3s
			probe_interval 100ms
			free_daily_limit 5
			free_subnet_limit 1000
			rate_limit_ip 1 1h 8
			rate_limit_key off
			key_create_limit 2 1h
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			min_deposit 1
			max_deposit 1000
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			chain 137 {
				provider dev @POLYGON@
			}
		}
		@settlement path /api/status
@SETTLEMENT@
		respond 404
	}
}
`

// shippedLines returns the root Caddyfile's trusted_proxies lines and its
// settlementd reverse_proxy block, as shipped.
func shippedLines(t *testing.T) (trust, settlement string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^\s*trusted_proxies.*$`).FindAllString(string(b), -1)
	if len(lines) != 2 || !strings.Contains(strings.Join(lines, "\n"), "trusted_proxies_strict") {
		t.Fatalf("the root Caddyfile's trusted_proxies lines %q: want the ranges and trusted_proxies_strict", lines)
	}
	block := regexp.MustCompile(`(?s)\n(\t*reverse_proxy @settlement) \S+ (\{.*?\n\t*\})`).FindStringSubmatch(string(b))
	if block == nil {
		t.Fatal("the root Caddyfile has no `reverse_proxy @settlement <addr> { … }` block")
	}
	return strings.Join(lines, "\n"), block[1] + " @ECHO@ " + block[2]
}

// startNginx runs Debian's nginx (make nginx-deps) in front of target as a
// load balancer does: it appends the peer's address to X-Forwarded-For
// ($proxy_add_x_forwarded_for) and passes the Host on. It returns its URL.
func startNginx(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Fatal("nginx is not installed: run `make nginx-deps`")
		}
	}
	dir := t.TempDir()
	port := caddyrun.FreePort(t)
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
		listen 127.0.0.1:%[2]d;
		location / {
			proxy_pass %[3]s;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
		}
	}
}
`, dir, port, target)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
	var out syncedBuf
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx output:\n%s\nerror.log:\n%s", out.String(), log)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(readyWithin)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return url
		}
		select {
		case <-exited:
			t.Fatalf("nginx exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx not listening after %v: %s", readyWithin, out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for the listener
	}
}

type syncedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncedBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// from is an HTTP client whose connections come from the loopback address
// ip (Linux routes all of 127/8 to lo): a caller the gateway does not
// trust, as a caller on the internet is.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext}}
}

// send makes one request with the given X-Forwarded-For header lines.
func send(t *testing.T, c *http.Client, method, url, body string, xff ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, v := range xff {
		req.Header.Add("X-Forwarded-For", v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// TestClientAddressBehindAppendingProxy: nginx in front of our Caddy,
// appending X-Forwarded-For as a load balancer does, with the root
// Caddyfile's trusted-proxy lines. Whatever X-Forwarded-For a caller
// writes itself — another address, a trusted one, a list, several header
// lines, garbage, the address of another caller — its free tier, its rate
// limit and its key creations are counted under its own address, and the
// address settlementd reads (the last X-Forwarded-For entry the gateway's
// reverse_proxy sends) is that same address.
func TestClientAddressBehindAppendingProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx, our Caddy and a dev chain")
	}
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	testenv.MarkRebuiltLayout(t, rdb, balances.Layout{Prefix: prefix})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	payTo, _ := d.Manifest.Account("treasury")

	// settlementd stands in as an echo of the X-Forwarded-For it receives.
	var echoMu sync.Mutex
	var lastXFF []string
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echoMu.Lock()
		lastXFF = r.Header.Values("X-Forwarded-For")
		echoMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(echo.Close)

	trust, settlement := shippedLines(t)
	cf := strings.NewReplacer("@TRUST@", trust, "@SETTLEMENT@", strings.ReplaceAll(settlement, "@ECHO@", strings.TrimPrefix(echo.URL, "http://")),
		"@PREFIX@", prefix, "@VAULT@", d.Manifest.Polygon.RevenueVault, "@USDT@", d.Manifest.Polygon.USDT,
		"@USDC@", d.Manifest.Base.USDC, "@PAYTO@", payTo.Address, "@POLYGON@", d.Manifest.Polygon.RPCURL).Replace(xffCaddyfile)
	// TOLLGATE_TRUSTED_PROXIES unset: the root Caddyfile's default (loopback).
	t.Setenv("TOLLGATE_TRUSTED_PROXIES", "") // restored after the test
	os.Unsetenv("TOLLGATE_TRUSTED_PROXIES")
	gw := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))
	deadline := time.Now().Add(readyWithin)
	for ok, _ := gw.ChainHealthy(137); !ok; ok, _ = gw.ChainHealthy(137) {
		if time.Now().After(deadline) {
			t.Fatalf("chain 137 not healthy within %v", readyWithin)
		}
		time.Sleep(50 * time.Millisecond) // polling the probe
	}
	lb := startNginx(t, gw.URL())

	// A caller at 127.0.0.2 (untrusted: only 127.0.0.1 and ::1 are).
	a := from("127.0.0.2")
	forged := [][]string{
		{"198.51.100.1"},
		{"127.0.0.1"},               // a trusted address
		{"198.51.100.2, 127.0.0.1"}, // a list ending in a trusted one
		{"198.51.100.3", "198.51.100.4"},
		{"not an address"},
		{"127.0.0.3"}, // another caller's address
		{"::1, 203.0.113.9"},
		{"198.51.100.5:4711"},
	}
	for i, xff := range forged[:5] {
		r := send(t, a, http.MethodPost, lb+"/rpc", blockNumber, xff...)
		if r.status != http.StatusOK || r.header.Get("X-Tollgate-Payer") != "free" || r.header.Get("X-Tollgate-Free-Remaining") != fmt.Sprint(4-i) {
			t.Fatalf("call %d with X-Forwarded-For %q: %d %v %s; want free with %d left", i+1, xff, r.status, r.header, r.body, 4-i)
		}
	}
	// The allowance is spent: a new forged address does not buy another.
	for i, xff := range forged[5:] {
		if r := send(t, a, http.MethodPost, lb+"/rpc", blockNumber, xff...); r.status != http.StatusPaymentRequired {
			t.Fatalf("call %d with X-Forwarded-For %q after the free tier: %d %s; want 402", 6+i, xff, r.status, r.body)
		}
	}
	// Eight requests so far: the address's burst is spent too.
	if r := send(t, a, http.MethodPost, lb+"/rpc", blockNumber, "198.51.100.6"); r.status != http.StatusTooManyRequests {
		t.Fatalf("9th request with a fresh X-Forwarded-For: %d %s; want 429", r.status, r.body)
	}
	// Around the balancer (straight to Caddy) the caller is not trusted:
	// its header is ignored, the address is the same.
	if r := send(t, a, http.MethodPost, gw.URL()+"/rpc", blockNumber, "198.51.100.7"); r.status != http.StatusTooManyRequests {
		t.Fatalf("straight to the gateway with X-Forwarded-For: %d %s; want 429", r.status, r.body)
	}

	// Another caller, naming the first one's address, has its own allowance.
	b := from("127.0.0.3")
	if r := send(t, b, http.MethodPost, lb+"/rpc", blockNumber, "127.0.0.2"); r.status != http.StatusOK ||
		r.header.Get("X-Tollgate-Free-Remaining") != "4" {
		t.Fatalf("a second caller naming the first's address: %d %v %s; want free with 4 left", r.status, r.header, r.body)
	}

	// Key creation: two per address an hour, whatever the header says.
	c := from("127.0.0.4")
	for i, xff := range []string{"198.51.100.10", "198.51.100.11", "198.51.100.12"} {
		want := http.StatusCreated
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if r := send(t, c, http.MethodPost, lb+"/api/keys", `{"label":"xff","tier":"free"}`, xff); r.status != want {
			t.Fatalf("key creation %d with X-Forwarded-For %s: %d %s; want %d", i+1, xff, r.status, r.body, want)
		}
	}
	if r := send(t, from("127.0.0.5"), http.MethodPost, lb+"/api/keys", `{"label":"xff","tier":"free"}`, "127.0.0.4"); r.status != http.StatusCreated {
		t.Fatalf("another caller's key creation: %d %s", r.status, r.body)
	}

	// settlementd's routes: the last X-Forwarded-For entry it receives is
	// the caller's address the gateway derived, not the balancer's, not
	// what the caller wrote.
	for _, xff := range [][]string{{"198.51.100.20"}, {"198.51.100.21, 127.0.0.1"}, nil} {
		if r := send(t, a, http.MethodGet, lb+"/api/status", "", xff...); r.status != http.StatusOK {
			t.Fatalf("GET /api/status through the gateway: %d %s", r.status, r.body)
		}
		echoMu.Lock()
		got := lastXFF
		echoMu.Unlock()
		parts := strings.Split(strings.Join(got, ","), ",")
		if last := strings.TrimSpace(parts[len(parts)-1]); last != "127.0.0.2" {
			t.Fatalf("caller wrote X-Forwarded-For %q; settlementd received %q (last entry %q), want the caller's 127.0.0.2", xff, got, last)
		}
	}
}

// The root Caddyfile trusts loopback only unless TOLLGATE_TRUSTED_PROXIES
// names other ranges, always strictly (right-most untrusted address), and
// hands settlementd the client IP it derived.
func TestRootCaddyfileTrustsLoopbackStrictly(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "[127.0.0.1/32 ::1/128]"},
		{"10.0.0.0/8 192.168.0.0/16", "[10.0.0.0/8 192.168.0.0/16]"},
	} {
		cmd := exec.Command(caddyrun.Binary(t), "adapt", "--config", filepath.Join("..", "Caddyfile"), "--adapter", "caddyfile")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "TOLLGATE_TRUSTED_PROXIES=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		if c.env != "" {
			cmd.Env = append(cmd.Env, "TOLLGATE_TRUSTED_PROXIES="+c.env)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("caddy adapt: %v\n%s", err, out)
		}
		var cfg struct {
			Apps struct {
				HTTP struct {
					Servers map[string]struct {
						TrustedProxies struct{ Ranges []string } `json:"trusted_proxies"`
						Strict         int                       `json:"trusted_proxies_strict"`
						Routes         json.RawMessage
					}
				}
			}
		}
		if err := json.Unmarshal(out, &cfg); err != nil {
			t.Fatal(err)
		}
		if len(cfg.Apps.HTTP.Servers) == 0 {
			t.Fatal("no server in the adapted root Caddyfile")
		}
		for name, s := range cfg.Apps.HTTP.Servers {
			if fmt.Sprint(s.TrustedProxies.Ranges) != c.want || s.Strict != 1 {
				t.Errorf("TOLLGATE_TRUSTED_PROXIES=%q: %s trusts %v (strict %d), want %s strictly", c.env, name, s.TrustedProxies.Ranges, s.Strict, c.want)
			}
			if !strings.Contains(string(s.Routes), `"X-Forwarded-For":["{http.vars.client_ip}"]`) {
				t.Errorf("%s: settlementd's reverse_proxy does not set X-Forwarded-For to the client IP", name)
			}
		}
	}
}
