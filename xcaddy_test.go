package tollgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// xcaddyRecipe is xcaddy.json, the recipe the README tells operators to use.
type xcaddyRecipe struct {
	XcaddyVersion string `json:"xcaddy_version"`
	CaddyVersion  string `json:"caddy_version"`
	Env           map[string]string
	Command       string
}

func readRecipe(t *testing.T) xcaddyRecipe {
	t.Helper()
	raw, err := os.ReadFile("xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	var x xcaddyRecipe
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// runDir is where the xcaddy binary and its build are cached between runs:
// $TOLLGATE_RUN_DIR (make test's .run/), else .run/ in the checkout.
func runDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOLLGATE_RUN_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(wd, ".run")
	}
	return filepath.Join(dir, "xcaddy")
}

// xcaddyBuild installs xcaddy at the recipe's pinned version from the Go
// module proxy (go install, into a cache dir: once per version) and runs the
// recipe's command from this checkout, with its environment, writing the
// binary to out. GOCACHE is the user's, so a warm cache makes this mostly a
// link.
func xcaddyBuild(t *testing.T, x xcaddyRecipe, out string) {
	t.Helper()
	gobin := filepath.Join(runDir(t), "bin", x.XcaddyVersion)
	xcaddy := filepath.Join(gobin, "xcaddy")
	if _, err := os.Stat(xcaddy); err != nil {
		cmd := exec.Command("go", "install", "github.com/caddyserver/xcaddy/cmd/xcaddy@"+x.XcaddyVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go install xcaddy@%s: %v\n%s", x.XcaddyVersion, err, b)
		}
	}
	args := strings.Fields(x.Command)
	if len(args) < 2 || args[0] != "xcaddy" || args[1] != "build" {
		t.Fatalf("xcaddy.json command %q is not an xcaddy build", x.Command)
	}
	// The recipe's command as written, but the binary goes to out.
	if i := slices.Index(args, "--output"); i >= 0 && i+1 < len(args) {
		args[i+1] = out
	} else {
		args = append(args, "--output", out)
	}
	cmd := exec.Command(xcaddy, args[1:]...)
	cmd.Env = os.Environ()
	for k, v := range x.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", x.Command, err, log.String())
	}
	t.Logf("xcaddy build took %s", time.Since(began).Round(time.Second))
}

// moduleIDs is the list of Caddy modules a binary registers.
func moduleIDs(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command(bin, "list-modules").Output()
	if err != nil {
		t.Fatalf("%s list-modules: %v", bin, err)
	}
	var ids []string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.Contains(l, ":") { // "Standard modules: 123" and the like
			continue
		}
		ids = append(ids, l)
	}
	slices.Sort(ids)
	return ids
}

// TestXcaddyBuild is the operator's path: our Caddy built with xcaddy
// exactly as xcaddy.json (and the README) say registers the same modules as
// `make build`'s, adapts and validates both shipped Caddyfiles with the
// example production settings, and, started with the root Caddyfile,
// serves a paid call.
func TestXcaddyBuild(t *testing.T) {
	rdb := testenv.Redis(t) // skips or fails (make test) before the long build when Redis is missing
	x := readRecipe(t)
	bin := filepath.Join(t.TempDir(), "caddy")
	xcaddyBuild(t, x, bin)

	// 1. The same modules as make build's binary.
	ours := caddyrun.Binary(t)
	got, want := moduleIDs(t, bin), moduleIDs(t, ours)
	if !slices.Equal(got, want) {
		t.Errorf("xcaddy's modules differ from make build's:\nonly xcaddy: %v\nonly make build: %v", minus(got, want), minus(want, got))
	}
	for _, m := range []string{"http.handlers.tollgate", "caddy.listeners.tollgate_conn_limit"} {
		if !slices.Contains(got, m) {
			t.Errorf("the xcaddy build lacks %s", m)
		}
	}

	// 2. Both shipped Caddyfiles adapt and validate with the example
	// production settings (not the dev profile).
	examples := []string{"--envfile", "deploy/production/caddy.env.example", "--envfile", "deploy/production/deploy.env.example"}
	env := append(os.Environ(), "TOLLGATE_DEV=0")
	for _, cf := range []string{"Caddyfile", "deploy/production/Caddyfile"} {
		for _, verb := range []string{"adapt", "validate"} {
			cmd := exec.Command(bin, append([]string{verb, "--config", cf, "--adapter", "caddyfile"}, examples...)...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("caddy %s %s: %v\n%s", verb, cf, err, out)
			}
		}
	}

	// 3. The root Caddyfile serves a paid call on the dev chain (the dev
	// profile: its accounts are the money addresses).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	prefix := testenv.KeyPrefix(t)
	layout := balances.Layout{Prefix: prefix, Shards: 1}
	testenv.MarkRebuiltLayout(t, rdb, layout) // no settlementd here: an unknown key is unknown, not "recovering"
	root, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "redis_url {env.REDIS_URL}"
	if !bytes.Contains(root, []byte(anchor)) {
		t.Fatal("the root Caddyfile has no `redis_url {env.REDIS_URL}` line to add key_prefix after")
	}
	root = bytes.Replace(root, []byte(anchor), []byte(anchor+"\n\t\t\tkey_prefix "+prefix), 1) // this test's keys only
	treasury, _ := d.Manifest.Account("treasury")
	port, admin := caddyrun.FreePort(t), caddyrun.FreePort(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, root, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TOLLGATE_DEV=1",
		fmt.Sprintf("TOLLGATE_HTTP_PORT=%d", port), fmt.Sprintf("TOLLGATE_ADMIN_LISTEN=127.0.0.1:%d", admin),
		"TOLLGATE_RPC_137="+d.Manifest.Polygon.RPCURL, "TOLLGATE_RPC_8453="+d.Manifest.Base.RPCURL,
		"TOLLGATE_VAULT_ADDRESS="+d.Manifest.Polygon.RevenueVault, "TOLLGATE_USDT_ADDRESS="+d.Manifest.Polygon.USDT,
		"TOLLGATE_X402_ASSET="+d.Manifest.Base.USDC, "TOLLGATE_X402_PAY_TO="+treasury.Address)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("caddy output:\n%s", log.String())
		}
	})
	base := fmt.Sprintf("http://localhost:%d", port)
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, p, body string, hdr ...string) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, base+p, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, []byte(err.Error())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	// Ready when chain 137's provider has been probed healthy.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-exited:
			t.Fatalf("caddy exited:\n%s", log.String())
		default:
		}
		if st, _, b := do(http.MethodGet, "/rpc/health", ""); st == http.StatusOK && bytes.Contains(b, []byte(`"chain_id":137`)) && healthy(b, 137) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chain 137 not healthy within 2m:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a condition, not synchronising on time
	}
	st, _, b := do(http.MethodPost, "/api/keys", `{"label":"xcaddy","tier":"free"}`)
	if st != http.StatusCreated {
		t.Fatalf("create key: %d %s", st, b)
	}
	var key struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	if err := json.Unmarshal(b, &key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := balances.CreditAt(ctx, rdb, layout, key.KeyID, 330, "0xxcaddytest"); err != nil {
		t.Fatal(err)
	}
	st, h, b := do(http.MethodPost, "/rpc/137", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`, "X-Api-Key", key.APIKey)
	if st != http.StatusOK || h.Get("X-Tollgate-Payer") != "credits" || h.Get("X-Tollgate-Credits-Remaining") != "0.0003" || !bytes.Contains(b, []byte(`"result":"0x`)) {
		t.Fatalf("paid call through the xcaddy build: %d %v %s", st, h, b)
	}
}

// healthy says whether /rpc/health's body lists chain id as healthy.
func healthy(body []byte, id uint64) bool {
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Healthy bool   `json:"healthy"`
		} `json:"chains"`
	}
	if json.Unmarshal(body, &h) != nil {
		return false
	}
	for _, c := range h.Chains {
		if c.ChainID == id {
			return c.Healthy
		}
	}
	return false
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestXcaddyDocsShowTheRecipe: the xcaddy command docs/running.md and
// docs/operators.md print is xcaddy.json's — its environment and its command
// — so the build an operator copies is the one TestXcaddyBuild runs.
func TestXcaddyDocsShowTheRecipe(t *testing.T) {
	x := readRecipe(t)
	for _, doc := range []string{"docs/running.md", "docs/operators.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The shell line continuation is layout, not part of the command.
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(raw), "\\\n", " ")), " ")
		i := strings.Index(text, x.Command)
		if i < 0 {
			t.Errorf("%s does not print xcaddy.json's command %q", doc, x.Command)
			continue
		}
		line := text[max(0, i-300):i] // the environment is written before the command
		for k, v := range x.Env {
			if !strings.Contains(line, k+"="+v) && !strings.Contains(line, k+`="`+v+`"`) {
				t.Errorf("%s: the xcaddy command lacks xcaddy.json's %s=%s", doc, k, v)
			}
		}
	}
}
