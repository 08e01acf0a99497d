package caddymodule_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
)

// refusalSite is a metered gateway whose money settings and chain lines
// come from the case. Redis is never dialled by caddy validate.
const refusalSite = `{
	admin off
	persist_config off
	auto_https off
}
http://127.0.0.1:9 {
	tollgate {
		redis_url redis://127.0.0.1:1
		payments {
			vault_address @VAULT@
			usdt_address @USDT@
			x402_pay_to @PAYTO@
		}
		@LINES@
	}
}
`

// Addresses of the refusal table: good ones (EIP-55, nobody's dev key) and
// the dev chain's own, derived as the dev chain derives them.
const (
	goodVault = "0x1111111111111111111111111111111111111111"
	goodUSDT  = "0xc2132D05D31c914a87C6611C10748AEb04B58e8F" // USDT on Polygon
	goodPayTo = "0x3333333333333333333333333333333333333333"
)

// TestConfigurationRefusals is the refusal table of docs/operators.md: our
// Caddy (caddy validate provisions the handler as a load or a reload does)
// refuses each bad setting outside the dev profile, with an error naming
// the setting; the same dev addresses pass under TOLLGATE_DEV=1, and an
// optional provider may be unset.
func TestConfigurationRefusals(t *testing.T) {
	bin := caddyrun.Binary(t)
	dir := t.TempDir()
	devUSDT := crypto.CreateAddress(devaccounts.Address("deployer"), 0).Hex() // the dev deployment's first contract
	treasury := devaccounts.Address("treasury").Hex()
	polygon := "chain 137 {\n provider polygon-primary https://polygon.example\n}"
	for _, c := range []struct {
		name, vault, usdt, payTo, lines, dev, want string // want "": validates
	}{
		{"dev contract as usdt on 137", goodVault, devUSDT, goodPayTo, polygon, "0",
			"payments usdt_address " + devUSDT + " is the dev chain's deployer's contract, whose key is public"},
		{"dev treasury as x402 pay_to", goodVault, goodUSDT, treasury, polygon, "0",
			"payments x402_pay_to " + treasury + " is the dev chain's treasury, whose key is public"},
		{"zero address", goodVault, goodUSDT, "0x0000000000000000000000000000000000000000", polygon, "0",
			"payments x402_pay_to is the zero address"},
		{"bad checksum", goodVault, strings.ToLower(goodUSDT), goodPayTo, polygon, "0",
			`payments usdt_address "` + strings.ToLower(goodUSDT) + `" is not in its EIP-55 checksummed form`},
		{"one changed letter", goodVault, strings.Replace(goodUSDT, "D05D", "D05d", 1), goodPayTo, polygon, "0",
			"payments usdt_address \"" + strings.Replace(goodUSDT, "D05D", "D05d", 1) + "\" is not in its EIP-55 checksummed form"},
		{"not an address", "0x1234", goodUSDT, goodPayTo, polygon, "0", `payments vault_address "0x1234" is not an address`},
		{"unset vault", "{env.TOLLGATE_TEST_UNSET_VAULT}", goodUSDT, goodPayTo, polygon, "0",
			`payments vault_address is empty (written "{env.TOLLGATE_TEST_UNSET_VAULT}")`},
		{"missing provider", goodVault, goodUSDT, goodPayTo, "chain 137 {\n provider polygon-primary {env.TOLLGATE_TEST_UNSET_RPC}\n}", "0",
			`chain 137: provider polygon-primary: url "{env.TOLLGATE_TEST_UNSET_RPC}" is empty after placeholder expansion (set it, or mark the provider optional)`},
		{"unknown chain", goodVault, goodUSDT, goodPayTo, "chain 99999 {\n provider mystery https://mystery.example\n}", "0",
			"chain 99999: name and block_time and finality are missing: a chain that is not built in needs name, block_time and finality"},
		// The controls: the same dev addresses and unset provider in the dev
		// profile, an optional unset provider, and good settings, pass.
		{"dev profile accepts dev addresses", goodVault, devUSDT, treasury, "chain 137 {\n provider polygon-primary {env.TOLLGATE_TEST_UNSET_RPC}\n}", "1", ""},
		{"optional provider unset", goodVault, goodUSDT, goodPayTo, polygon + "\nchain 1 {\n provider eth {env.TOLLGATE_TEST_UNSET_RPC} {\n optional\n }\n}", "0", ""},
		{"good settings", goodVault, goodUSDT, goodPayTo, polygon, "0", ""},
	} {
		site := strings.NewReplacer("@VAULT@", c.vault, "@USDT@", c.usdt, "@PAYTO@", c.payTo, "@LINES@", c.lines).Replace(refusalSite)
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".Caddyfile")
		if err := os.WriteFile(path, []byte(site), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "validate", "--config", path, "--adapter", "caddyfile")
		cmd.Env = append(os.Environ(), "TOLLGATE_DEV="+c.dev)
		out, err := cmd.CombinedOutput()
		out = unquoteLog(out)
		switch {
		case strings.Contains(string(out), "panic"):
			t.Errorf("%s: panic:\n%s", c.name, out)
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v\n%s", c.name, err, out)
		case c.want != "" && (err == nil || !strings.Contains(string(out), c.want)):
			t.Errorf("%s: caddy validate: %v, output lacks %q:\n%s", c.name, err, c.want, out)
		case c.want != "":
			t.Logf("%-28s → %s", c.name, c.want)
		}
	}
}

// reloadSite is an open gateway (no metering) serving chain 137 from a
// provider the test never needs to reach, and @CHAIN10@.
const reloadSite = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	tollgate {
		metering off
		chain 137 {
			provider polygon-primary http://127.0.0.1:9
		}
		@CHAIN10@
	}
}
`

// TestReloadWithANewEnvProviderIsRefused is docs/operators.md's "reload or
// restart", as an operator following the README would do it: a chain added
// with a provider from {env.TOLLGATE_RPC_10}, the variable exported only to
// the `caddy reload` command (as systemd's ExecReload would), is refused
// with the error naming the provider — {env.*} is the running process's
// environment — and the running configuration keeps serving without it.
func TestReloadWithANewEnvProviderIsRefused(t *testing.T) {
	gw := caddyrun.Start(t, strings.ReplaceAll(reloadSite, "@CHAIN10@", ""), "TOLLGATE_DEV=0")
	chain10 := "chain 10 {\n name optimism\n block_time 2s\n finality tag\n provider optimism-primary {env.TOLLGATE_RPC_10}\n}"
	path := filepath.Join(t.TempDir(), "Caddyfile")
	site := strings.NewReplacer("{ADMIN}", gw.AdminAddr, "{PORT}", strconv.Itoa(gw.Port), "@CHAIN10@", chain10).Replace(reloadSite)
	if err := os.WriteFile(path, []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddyrun.Binary(t), "reload", "--config", path, "--adapter", "caddyfile", "--address", gw.AdminAddr)
	cmd.Env = append(os.Environ(), "TOLLGATE_RPC_10=https://optimism.example", "TOLLGATE_DEV=0")
	out, err := cmd.CombinedOutput()
	out = unquoteLog(out)
	// The reload's answer quotes the error twice over; match around the quotes.
	want := "chain 10: provider optimism-primary: url "
	if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "TOLLGATE_RPC_10") ||
		!strings.Contains(string(out), "is empty after placeholder expansion") {
		t.Fatalf("caddy reload with a provider only the reload's environment has: %v, output lacks %q:\n%s", err, want, out)
	}
	resp, err := http.Get(gw.URL() + "/rpc/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"chain_id":137`) || strings.Contains(string(b), `"chain_id":10,`) {
		t.Fatalf("after the refused reload: %d %s", resp.StatusCode, b)
	}
}
