package caddymodule_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

// secretCaddyfile is a gateway with settlementd_secret written as @SECRET@,
// with Caddy's config persistence on (the default): what Caddy stores in
// autosave.json is the adapted JSON.
const secretCaddyfile = `{
	admin {ADMIN}
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			vault_address 0x2222222222222222222222222222222222222222
			usdt_address 0x3333333333333333333333333333333333333333
			x402_pay_to 0x1111111111111111111111111111111111111111
			settlementd_url http://127.0.0.1:1
			settlementd_secret @SECRET@
			chain 137 {
				provider alpha http://127.0.0.1:1
			}
		}
	}
}
`

// The gateway's secret for settlementd never lands in Caddy's persisted
// config (autosave.json) or its admin API: written as a runtime placeholder
// it is expanded at provision time only, and a value the Caddyfile adapter
// would write into the JSON — a literal, or {$VAR}, which the adapter
// substitutes (the form the rest of the shipped Caddyfiles use) — is
// refused with an error that does not hold it.
func TestSettlementdSecretNeverInCaddysConfig(t *testing.T) {
	testenv.Redis(t)
	const secret = "gateway-secret-never-persisted-0123456789abcdef"
	cf := strings.NewReplacer("@PREFIX@", testenv.KeyPrefix(t)).Replace(secretCaddyfile)
	env := []string{"TG_REDIS_URL=" + os.Getenv("REDIS_URL"), "TG_SECRET=" + secret}

	// The placeholder form: the secret is used, and stored nowhere.
	// (a later XDG_CONFIG_HOME wins over caddyrun's: os/exec keeps the last)
	cfgHome := t.TempDir()
	caddyrun.Start(t, strings.ReplaceAll(cf, "@SECRET@", "{env.TG_SECRET}"), append(env, "XDG_CONFIG_HOME="+cfgHome)...)
	var autosave []byte
	if err := filepath.WalkDir(cfgHome, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "autosave.json" {
			autosave, err = os.ReadFile(p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(autosave) == 0 {
		t.Fatal("Caddy persisted no autosave.json: the test checks nothing")
	}
	if strings.Contains(string(autosave), secret) || !strings.Contains(string(autosave), "{env.TG_SECRET}") {
		t.Fatalf("autosave.json: %s", autosave)
	}

	// Forms the adapter expands into the JSON are refused.
	for _, form := range []string{"{$TG_SECRET}", secret} {
		dir := t.TempDir()
		path := filepath.Join(dir, "Caddyfile")
		c := strings.NewReplacer("{ADMIN}", "127.0.0.1:0", "{PORT}", "0", "@SECRET@", form).Replace(cf)
		if err := os.WriteFile(path, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, caddyrun.Binary(t), "validate", "--config", path, "--adapter", "caddyfile")
		cmd.Env = append(append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir), env...)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "settlementd_secret") {
			t.Fatalf("settlementd_secret %s was accepted (it would be stored in autosave.json): %v\n%s", form, err, out)
		}
		if strings.Contains(string(out), secret) && form != secret {
			t.Fatalf("the refusal shows the secret: %s", out)
		}
	}
}
