package caddymodule_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// TestSecretsStayOutOfConfigAndLogs: a provider token and the Redis password
// given as {env.*} placeholders reach their destination but never appear in
// Caddy's live config (GET /config/) or in its log output.
func TestSecretsStayOutOfConfigAndLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := faultproxy.New(d.Manifest.Polygon.RPCURL)
	defer p.Close()

	const token = "s3cr3t-provider-token-5f1e"
	const redisPass = "s3cr3t-redis-pass-77aa"
	caddyfile := fmt.Sprintf(`{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	log
	route {
		tollgate {
			redis_url {env.TG_TEST_REDIS_URL}
			metering off
			probe_interval 100ms
			chain 137 {
				provider keyed %s {
					header Authorization "Bearer {env.TG_TEST_TOKEN}"
				}
			}
		}
	}
}
`, p.URL())
	gw := caddyrun.Start(t, caddyfile,
		"TG_TEST_TOKEN="+token,
		// Nothing listens there: the registry refresher fails and logs, which
		// is exactly when a careless error message would print the URL.
		"TG_TEST_REDIS_URL=redis://:"+redisPass+"@127.0.0.1:1/0")

	r := post(t, gw.URL()+"/rpc", getBalance)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if got := p.LastHeader("Authorization"); got != "Bearer "+token {
		t.Fatalf("provider got Authorization %q", got)
	}
	// Wait for the registry refresher's failure to be logged.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(gw.Output(), "node registry unavailable") {
		if time.Now().After(deadline) {
			t.Fatalf("the Redis failure was never logged:\n%s", gw.Output())
		}
		time.Sleep(20 * time.Millisecond) // polling the log
	}
	resp, err := http.Get("http://" + gw.AdminAddr + "/config/")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{token, redisPass} {
		if strings.Contains(string(cfg), secret) {
			t.Errorf("secret %q is in /config/", secret)
		}
		if strings.Contains(gw.Output(), secret) {
			t.Errorf("secret %q is in Caddy's log output", secret)
		}
	}
	if !strings.Contains(string(cfg), "{env.TG_TEST_TOKEN}") {
		t.Errorf("config should keep the placeholder, got %s", cfg)
	}
}
