package caddymodule_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
)

// badChainsSite wraps a tollgate block's chain lines in a site.
const badChainsSite = `{
	admin off
	persist_config off
	auto_https off
}
http://127.0.0.1:9 {
	tollgate {
		metering off
		@LINES@
	}
}
`

// TestBadChainConfigurationsRefused: our Caddy refuses each bad chain
// configuration at load (caddy validate provisions the handler, as a load
// or a reload does), with an error that names the chain — from the
// Caddyfile and from JSON.
func TestBadChainConfigurationsRefused(t *testing.T) {
	bin := caddyrun.Binary(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, lines, want string }{
		{"duplicate id", "chain 31337 {\n name devchain\n block_time 1s\n finality 2\n}\nchain 31337 {\n name devchain\n}",
			"chain 31337 (devchain): configured twice (duplicate id 31337)"},
		{"duplicate name", "chain 10 {\n name base\n block_time 2s\n finality tag\n}",
			`chain 10 (base): name "base" is already chain 8453's (duplicate name)`},
		{"unknown default", "default_chain bsc",
			`default chain "bsc" is not configured (unknown default; configured: polygon, ethereum, arbitrum, base, amoy)`},
		{"two defaults", "chain 1 {\n default\n}\nchain 8453 {\n default\n}", "chain 8453: default, but chain 1 is already the default"},
		{"missing block time", "chain 10 {\n name optimism\n finality tag\n}",
			"chain 10 (optimism): block_time is missing: a chain that is not built in needs name, block_time and finality"},
		{"missing finality", "chain 10 {\n name optimism\n block_time 2s\n}", "chain 10 (optimism): finality is missing"},
		{"missing name", "chain 56 {\n block_time 3s\n finality 15\n}", "chain 56: name is missing"},
		{"explorer not https", "chain 10 {\n name optimism\n block_time 2s\n finality tag\n explorer http://optimistic.etherscan.io\n}",
			`chain 10 (optimism): explorer "http://optimistic.etherscan.io" must be an https:// URL`},
		{"explorer on a built-in chain", "chain 137 {\n explorer ftp://polygonscan.com\n}", `chain 137: explorer "ftp://polygonscan.com" must be an https:// URL`},
		{"bad finality", "chain 10 {\n name optimism\n block_time 2s\n finality soon\n}", `chain 10: finality "soon": want a depth in blocks (a positive integer) or tag`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".Caddyfile")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(badChainsSite, "@LINES@", c.lines)), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "validate", "--config", path, "--adapter", "caddyfile").CombinedOutput()
		out = unquoteLog(out)
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: caddy validate: %v, output lacks %q:\n%s", c.name, err, c.want, out)
		}
		if strings.Contains(string(out), "panic") {
			t.Errorf("%s: panic:\n%s", c.name, out)
		}
	}
	// The same check for a JSON config.
	path := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(path, []byte(`{"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:9"],"routes":[{"handle":[
		{"handler":"tollgate","metering":{"off":true},"chains":[{"id":10,"name":"optimism","finality":"tag"}]}]}]}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "validate", "--config", path).CombinedOutput()
	out = unquoteLog(out)
	if want := "chain 10 (optimism): block_time is missing"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("JSON: caddy validate: %v, output lacks %q:\n%s", err, want, out)
	}
	// And a good one passes.
	good := filepath.Join(dir, "good.Caddyfile")
	if err := os.WriteFile(good, []byte(strings.ReplaceAll(badChainsSite, "@LINES@",
		"chain 31337 {\n name devchain\n display_name Dev Chain\n testnet\n block_time 1s\n finality 2\n explorer https://explorer.example\n currency DEV 18\n default\n}")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "validate", "--config", good, "--adapter", "caddyfile").CombinedOutput(); err != nil {
		t.Errorf("a good chain: %v\n%s", err, out)
	}
}

// unquoteLog undoes the JSON log's escaping of quotes in error messages.
func unquoteLog(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), `\"`, `"`)) }
