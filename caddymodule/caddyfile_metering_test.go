package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestCaddyfileMeteringOptions(t *testing.T) {
	var h Handler
	d := caddyfile.NewTestDispenser(`tollgate {
		metering on
		redis_cluster
		free_daily_limit 0
		free_subnet_limit 2500
		rate_limit_ip 20 1s 40
		rate_limit_key off
		key_create_limit 10 1h
		ip_concurrency off
		vault_address {env.VAULT}
		usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
		min_deposit 2.5
		max_deposit 100
		explorer_url https://amoy.polygonscan.com
		x402_asset 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913
		x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
		public_url https://rpc.example.com
	}`)
	if err := h.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if h.MeteringOff || !h.RedisCluster || *h.FreeDailyLimit != 0 || *h.FreeSubnetLimit != 2500 ||
		*h.RateLimitIP != (RateConfig{Rate: 20, Per: caddyDur("1s"), Burst: 40}) || h.RateLimitKey.Rate != 0 ||
		*h.KeyCreateLimit != (RateConfig{Rate: 10, Per: caddyDur("1h"), Burst: 10}) || *h.IPConcurrency != 0 ||
		h.VaultAddress != "{env.VAULT}" || h.MinDeposit != "2.5" || h.MaxDeposit != "100" || h.PublicURL != "https://rpc.example.com" {
		t.Fatalf("%+v", h)
	}
	for _, bad := range []string{
		"metering maybe", "free_daily_limit -1", "free_daily_limit x", "rate_limit_ip 10", "rate_limit_ip 0 1s",
		"rate_limit_ip 10 1s 0", "rate_limit_ip 10 nope", "key_create_limit 10 1h 5", "ip_concurrency 0", "redis_cluster yes",
		"vault_address", "min_deposit 1 2",
	} {
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("tollgate {\n" + bad + "\n}")); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var off Handler
	if err := off.UnmarshalCaddyfile(caddyfile.NewTestDispenser("tollgate {\nmetering off\n}")); err != nil || !off.MeteringOff {
		t.Fatal(err)
	}
}

func caddyDur(s string) caddy.Duration {
	d, err := caddy.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return caddy.Duration(d)
}
