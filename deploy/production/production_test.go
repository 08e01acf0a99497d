// Package production holds the production configuration (Caddyfile,
// settlementd's environment template, systemd units); its tests check them
// with the real tools: our Caddy adapts the Caddyfile, systemd-analyze
// verifies the units, and the template names every variable settlementd
// reads.
package production

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

// The production Caddyfile adapts with our Caddy: HTTPS on the public host
// name (automatic HTTPS not disabled), the server timeouts, trusted proxies,
// the tollgate handler with its public URL — and no secret in the JSON.
func TestProductionCaddyfileAdapts(t *testing.T) {
	const redisSecret, adminSecret = "redis-secret-7f3a", "admin-secret-9c2e"
	cmd := exec.Command(caddyrun.Binary(t), "adapt", "--config", "Caddyfile", "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "TOLLGATE_DOMAIN=rpc.example.com", "TOLLGATE_ACME_EMAIL=ops@example.com",
		"TOLLGATE_VAULT_ADDRESS=0x07e145A59Eb7c67fF710f75246a3ee3001B78571", "TOLLGATE_X402_PAY_TO=0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5",
		"REDIS_URL=redis://:"+redisSecret+"@redis.internal:6379/0", "TOLLGATE_ADMIN_TOKEN="+adminSecret)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("caddy adapt: %v\n%s", err, out)
	}
	if strings.Contains(string(out), redisSecret) || strings.Contains(string(out), adminSecret) {
		t.Fatal("a secret from the environment is in the adapted config")
	}
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen            []string
					ReadTimeout       int64 `json:"read_timeout"`
					ReadHeaderTimeout int64 `json:"read_header_timeout"`
					WriteTimeout      int64 `json:"write_timeout"`
					IdleTimeout       int64 `json:"idle_timeout"`
					AutomaticHTTPS    *struct {
						Disable bool
					} `json:"automatic_https"`
					TrustedProxies   map[string]any  `json:"trusted_proxies"`
					ListenerWrappers json.RawMessage `json:"listener_wrappers"`
					Routes           json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Apps.HTTP.Servers) != 1 {
		t.Fatalf("%d servers, want 1", len(cfg.Apps.HTTP.Servers))
	}
	for name, s := range cfg.Apps.HTTP.Servers {
		const sec = int64(1e9)
		if !slices.Equal(s.Listen, []string{":443"}) || (s.AutomaticHTTPS != nil && s.AutomaticHTTPS.Disable) {
			t.Errorf("%s: listen %v, automatic HTTPS %+v: want HTTPS on :443", name, s.Listen, s.AutomaticHTTPS)
		}
		if s.ReadHeaderTimeout != 10*sec || s.ReadTimeout != 30*sec || s.WriteTimeout != 120*sec || s.IdleTimeout != 120*sec {
			t.Errorf("%s: timeouts header %d body %d write %d idle %d", name, s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
		}
		if s.TrustedProxies == nil {
			t.Errorf("%s: no trusted proxies", name)
		}
		for _, want := range []string{`"handler":"tollgate"`, `"public_url":"https://rpc.example.com"`, `"host":["rpc.example.com"]`} {
			if !strings.Contains(string(s.Routes), want) {
				t.Errorf("%s: the routes lack %s", name, want)
			}
		}
		if !strings.Contains(string(s.ListenerWrappers), `{"per_ip":256,"wrapper":"tollgate_conn_limit"},{"wrapper":"tls"}`) {
			t.Errorf("%s: listener wrappers %s, want the per-address connection cap, then TLS", name, s.ListenerWrappers)
		}
	}
}

// systemd-analyze verify accepts both units without a warning. The binaries
// they name are pointed at this build (verify checks they exist); nothing
// else in the units changes.
func TestSystemdUnitsVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if testenv.Required() {
			t.Fatal("systemd-analyze is required (make test installs systemd when missing)")
		}
		t.Skip("no systemd-analyze")
	}
	caddy := caddyrun.Binary(t)
	settlementd := os.Getenv("TOLLGATE_SETTLEMENTD_BIN")
	if settlementd == "" {
		settlementd = filepath.Join(t.TempDir(), "settlementd")
		if b, err := exec.Command("go", "build", "-o", settlementd, "../../settlementd").CombinedOutput(); err != nil {
			t.Fatalf("go build settlementd: %v\n%s", err, b)
		}
	}
	dir := t.TempDir()
	for _, unit := range []string{"tollgate-caddy.service", "tollgate-settlementd.service"} {
		b, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("/usr/local/bin/caddy", caddy, "/usr/local/bin/settlementd", settlementd).Replace(string(b))
		path := filepath.Join(dir, unit)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(sa, "verify", path).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) != 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
		}
	}
}

// Every variable settlementd reads is in the environment template, and the
// template names no variable settlementd does not read.
func TestEnvTemplateComplete(t *testing.T) {
	read := map[string]bool{}
	lit := regexp.MustCompile(`"((?:TOLLGATE_[A-Z0-9_]+)|DATABASE_URL|REDIS_URL)"`)
	err := filepath.WalkDir("../../settlementd", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
			strings.Contains(p, "crashhook") || strings.Contains(p, "settletest") {
			return err // crash hooks and test helpers are not production settings
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			read[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 40 {
		t.Fatalf("found only %d variables in settlementd's source: the scan is broken", len(read))
	}
	tpl, err := os.ReadFile("settlementd.env.example")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(tpl), "\n") {
		if name, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			listed[strings.TrimSpace(name)] = true
		}
	}
	for name := range read {
		if !listed[name] {
			t.Errorf("settlementd reads %s, which settlementd.env.example does not list", name)
		}
	}
	for name := range listed {
		if !read[name] {
			t.Errorf("settlementd.env.example lists %s, which settlementd does not read", name)
		}
	}
}
