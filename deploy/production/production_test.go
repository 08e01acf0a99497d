// Package production holds the production configuration (Caddyfile,
// settlementd's environment template, systemd units); its tests check them
// with the real tools: our Caddy adapts the Caddyfile, systemd-analyze
// verifies the units, and the template names every variable settlementd
// reads.
package production

import (
	"encoding/json"
	"fmt"
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
	// The contracts come from the deploy command's settings file, as the
	// unit's second EnvironmentFile= gives them (here Caddy's --envfile).
	cmd := exec.Command(caddyrun.Binary(t), "adapt", "--config", "Caddyfile", "--adapter", "caddyfile", "--envfile", "deploy.env.example")
	cmd.Env = append(os.Environ(), "TOLLGATE_DOMAIN=rpc.example.com", "TOLLGATE_ACME_EMAIL=ops@example.com",
		"TOLLGATE_X402_PAY_TO=0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5",
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
					TrustedStrict    int             `json:"trusted_proxies_strict"`
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
		// Behind a balancer that appends X-Forwarded-For, only the
		// right-most untrusted address is the caller's
		// (docs/client-address.md); settlementd gets that address.
		if fmt.Sprint(s.TrustedProxies["ranges"]) != "[127.0.0.1/32]" || s.TrustedStrict != 1 {
			t.Errorf("%s: trusted proxies %v, strict %d: want loopback by default and trusted_proxies_strict", name, s.TrustedProxies, s.TrustedStrict)
		}
		if !strings.Contains(string(s.Routes), `"handler":"reverse_proxy","headers":{"request":{"set":{"X-Forwarded-For":["{http.vars.client_ip}"]}}}`) {
			t.Errorf("%s: settlementd's reverse_proxy does not set X-Forwarded-For to the client IP", name)
		}
		for _, want := range []string{`"handler":"tollgate"`, `"public_url":"https://rpc.example.com"`, `"host":["rpc.example.com"]`,
			`"vault_address":"0x1111111111111111111111111111111111111111"`, `"usdt_address":"0xc2132D05D31c914a87C6611C10748AEb04B58e8F"`,
			`"min_deposit":"1"`} {
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

// TestSystemdInstallAsDocumented runs docs/running.md's install commands
// in a scratch root instead of / (the reader runs them as root on the host):
// `install -m 0644 tollgate-*.service …/etc/systemd/system/`, then
// `systemctl --root … enable tollgate-settlementd tollgate-caddy`, which
// must link both units into multi-user.target.wants. The guide's
// `systemctl daemon-reload` and `enable --now` also start the units, which
// needs a running systemd (PID 1) that a test machine has not.
func TestSystemdInstallAsDocumented(t *testing.T) {
	sc, err := exec.LookPath("systemctl")
	if err != nil {
		if testenv.Required() {
			t.Fatal("systemctl is required (make test installs systemd when missing)")
		}
		t.Skip("no systemctl")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "etc", "systemd", "system")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	units, err := filepath.Glob("tollgate-*.service")
	if err != nil || len(units) != 2 {
		t.Fatalf("units %v %v", units, err)
	}
	if out, err := exec.Command("install", append(append([]string{"-m", "0644"}, units...), dir+"/")...).CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if out, err := exec.Command(sc, "--root", root, "enable", "tollgate-settlementd", "tollgate-caddy").CombinedOutput(); err != nil {
		t.Fatalf("systemctl enable: %v\n%s", err, out)
	}
	for _, u := range units {
		fi, err := os.Stat(filepath.Join(dir, u))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s installed: %v %v", u, fi, err)
		}
		link, err := os.Readlink(filepath.Join(dir, "multi-user.target.wants", u))
		if err != nil || link != "/etc/systemd/system/"+u {
			t.Errorf("%s not enabled: %q %v", u, link, err)
		}
	}
}

// envNames are the variables an environment file sets.
func envNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			names[strings.TrimSpace(name)] = true
		}
	}
	return names
}

// Every variable settlementd reads is in its environment template or in the
// deploy command's settings file (deploy.env.example; the unit reads both),
// never in both (one would silently override the other), and neither names
// a variable nobody reads: settlementd, or the production Caddyfile for the
// settings file.
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
	listed, deployed := envNames(t, "settlementd.env.example"), envNames(t, "deploy.env.example")
	caddyfile, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	for name := range read {
		if !listed[name] && !deployed[name] {
			t.Errorf("settlementd reads %s, which neither settlementd.env.example nor deploy.env.example lists", name)
		}
	}
	for name := range listed {
		// settlementd reads every setting NAME also as NAME_FILE (its
		// config's one _FILE layer), so NAME_FILE is read where NAME is.
		if base, ok := strings.CutSuffix(name, "_FILE"); ok && read[base] {
			continue
		}
		if !read[name] {
			t.Errorf("settlementd.env.example lists %s, which settlementd does not read", name)
		}
		if deployed[name] {
			t.Errorf("%s is in settlementd.env.example and in deploy.env.example", name)
		}
	}
	for name := range deployed {
		if !read[name] && !strings.Contains(string(caddyfile), "{$"+name+"}") {
			t.Errorf("deploy.env.example lists %s, which neither settlementd nor the production Caddyfile reads", name)
		}
	}
	for _, unit := range []string{"tollgate-settlementd.service", "tollgate-caddy.service"} {
		b, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		// The settings file last: a stale address in the unit's own file
		// cannot override what was deployed.
		var files []string
		for _, line := range strings.Split(string(b), "\n") {
			if f, ok := strings.CutPrefix(line, "EnvironmentFile="); ok {
				files = append(files, f)
			}
		}
		if len(files) < 2 || files[len(files)-1] != "/etc/tollgate/deploy.env" {
			t.Errorf("%s reads %v: want its own file, then /etc/tollgate/deploy.env last", unit, files)
		}
	}
}
