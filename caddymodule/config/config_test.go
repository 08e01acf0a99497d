package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func parse(t *testing.T, src string) (Gateway, error) {
	t.Helper()
	var g Gateway
	err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src))
	return g, err
}

// sectioned and flatSpelled say the same in the two spellings.
const sectioned = `tollgate {
	redis_url {env.REDIS_URL}
	redis_cluster
	max_body 2MiB
	request_timeout 20s
	upstreams {
		timeout 4s
		max_attempts 2
		max_batch 50
		probe_interval 3s
		lag_threshold 7
		breaker_failures 4
		breaker_open_for 9s
		registry_refresh 2s
		allow_private_nodes
		node_allow_cidrs 10.1.0.0/16
		node_resolver 127.0.0.1:5353
	}
	metering on {
		free_daily_limit 0
		free_subnet_limit 2500
		rate_limit_ip 20 1s 40
		rate_limit_key off
		key_create_limit 10 1h
		ip_concurrency off
		event_pack off
	}
	payments {
		vault_address {env.VAULT}
		usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
		min_deposit 2.5
		max_deposit 100
		explorer_url https://amoy.polygonscan.com
		x402_asset 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913
		x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
		public_url https://rpc.example.com
		facilitator_url https://rpc.example.com/x402
		settlementd_url http://127.0.0.1:8081
	}
	intelligence {
		heatmap_price 0.002
	}
	chain 137 {
		provider dev http://127.0.0.1:18545 {
			header Authorization "Bearer {env.TOKEN}"
			ws ws://127.0.0.1:18545
		}
	}
}`

const flatSpelled = `tollgate {
	redis_url {env.REDIS_URL}
	redis_cluster
	max_body 2MiB
	request_timeout 20s
	upstream_timeout 4s
	max_attempts 2
	upstream_max_batch 50
	probe_interval 3s
	lag_threshold 7
	breaker_failures 4
	breaker_open_for 9s
	registry_refresh 2s
	allow_private_nodes
	node_allow_cidrs 10.1.0.0/16
	node_resolver 127.0.0.1:5353
	metering on
	free_daily_limit 0
	free_subnet_limit 2500
	rate_limit_ip 20 1s 40
	rate_limit_key off
	key_create_limit 10 1h
	ip_concurrency off
	event_pack off
	vault_address {env.VAULT}
	usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
	min_deposit 2.5
	max_deposit 100
	explorer_url https://amoy.polygonscan.com
	x402_asset 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913
	x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
	public_url https://rpc.example.com
	x402_facilitator_url https://rpc.example.com/x402
	settlementd_url http://127.0.0.1:8081
	heatmap_price 0.002
	chain 137 {
		provider dev http://127.0.0.1:18545 {
			header Authorization "Bearer {env.TOKEN}"
			ws ws://127.0.0.1:18545
		}
	}
}`

func dur(s string) caddy.Duration {
	d, err := caddy.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return caddy.Duration(d)
}

// TestSectionsAndFlatSpellingsAgree: the sectioned Caddyfile sets every
// field where it belongs, and the flat spelling of earlier versions gives
// the identical configuration (existing Caddyfiles keep working).
func TestSectionsAndFlatSpellingsAgree(t *testing.T) {
	g, err := parse(t, sectioned)
	if err != nil {
		t.Fatal(err)
	}
	u, m, p := g.Upstreams, g.Metering, g.Payments
	if !g.RedisCluster || g.RedisURL != "{env.REDIS_URL}" || g.MaxBodyBytes != 2<<20 || g.RequestTimeout != dur("20s") ||
		u.Timeout != dur("4s") || u.MaxAttempts != 2 || u.MaxBatch != 50 || u.ProbeInterval != dur("3s") || u.LagThreshold != 7 ||
		u.BreakerFailures != 4 || u.BreakerOpenFor != dur("9s") || u.RegistryRefresh != dur("2s") || !u.AllowPrivateNodes ||
		len(u.NodeAllowCIDRs) != 1 || u.NodeResolver != "127.0.0.1:5353" ||
		m.Off || *m.FreeDailyLimit != 0 || *m.FreeSubnetLimit != 2500 || *m.RateLimitIP != (RateConfig{Rate: 20, Per: dur("1s"), Burst: 40}) ||
		m.RateLimitKey.Rate != 0 || *m.KeyCreateLimit != (RateConfig{Rate: 10, Per: dur("1h"), Burst: 10}) || *m.IPConcurrency != 0 || *m.EventPack != 1 ||
		p.VaultAddress != "{env.VAULT}" || p.MinDeposit != "2.5" || p.MaxDeposit != "100" || p.PublicURL != "https://rpc.example.com" ||
		p.Facilitator != "https://rpc.example.com/x402" || p.SettlementdURL != "http://127.0.0.1:8081" ||
		g.Intelligence.HeatmapPrice != "0.002" || len(g.Chains) != 1 || g.Chains[0].Providers[0].Headers["Authorization"] != "Bearer {env.TOKEN}" ||
		g.Chains[0].Providers[0].WS != "ws://127.0.0.1:18545" {
		t.Fatalf("%+v", g)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	f, err := parse(t, flatSpelled)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, f) {
		a, _ := json.Marshal(g)
		b, _ := json.Marshal(f)
		t.Fatalf("the flat spelling differs:\nsections %s\nflat     %s", a, b)
	}
	// The JSON Caddy stores is grouped the same way.
	raw, _ := json.Marshal(g)
	for _, want := range []string{`"upstreams":{"timeout"`, `"metering":{"free_daily_limit":0`, `"payments":{"vault_address"`, `"intelligence":{"heatmap_price":"0.002"}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("JSON %s lacks %s", raw, want)
		}
	}
}

func TestCaddyfileRefusesBadValues(t *testing.T) {
	for _, bad := range []string{
		"metering maybe", "metering on off", "free_daily_limit -1", "metering {\nfree_daily_limit x\n}", "rate_limit_ip 10",
		"metering {\nrate_limit_ip 0 1s\n}", "rate_limit_ip 10 1s 0", "rate_limit_ip 10 nope", "key_create_limit 10 1h 5",
		"ip_concurrency 0", "event_pack 0", "event_pack 1025", "metering {\nevent_pack many\n}", "redis_cluster yes", "vault_address", "min_deposit 1 2", "payments {\nvault\n}",
		"upstreams {\nfree_daily_limit 5\n}", "upstreams extra {\n}", "upstreams {\ntimeout 0s\n}", "max_batch 0",
		"intelligence {\nheatmap_price 1 2\n}", "allow_private_nodes maybe", "no_such_option 1",
		"chain 137 {\nmethod eth_getLogs\n}", "chain 137 {\nmethod eth_getLogs max_block_range 0\n}",
		"chain 137 {\nmethod eth_call sometimes\n}", "chain 137 {\nmethod eth_call allow now\n}",
		"chain 137 {\nmethod eth_call weight 0\n}", "chain 137 {\nmethod eth_call weight 1.5\n}",
		"chain 137 {\nmethod eth_call weight 10001\n}", "chain 137 {\nmethod eth_call weight\n}",
		"chain 137 {\nmethod eth_call max_response_bytes lots\n}",
		"chain 137 {\nprovider a http://x {\nws\n}\n}", "chain 137 {\nprovider a http://x {\nws ws://x ws://y\n}\n}",
		"chain 137 {\nprovider a http://x {\nws ws://x\nws ws://y\n}\n}", "chain 137 {\nmethod eth_call max_response_bytes 0\n}",
		"upstreams {\ncheck_qps 0\n}", "upstreams {\ncheck_qps -5\n}", "upstreams {\ncheck_qps 10 0\n}", "upstreams {\ncheck_qps\n}",
		"upstreams {\ncheck_qps 10 20 30\n}", "upstreams {\ncheck_qps lots\n}",
	} {
		if _, err := parse(t, "tollgate {\n"+bad+"\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	g, err := parse(t, "tollgate {\nmetering off\n}")
	if err != nil || !g.Metering.Off {
		t.Fatalf("metering off: %+v %v", g.Metering, err)
	}
	if g, err = parse(t, "tollgate {\nupstreams {\ncheck_qps 12.5 40\n}\n}"); err != nil || g.Upstreams.CheckQPS != 12.5 || g.Upstreams.CheckBurst != 40 || g.Upstreams.CheckQPSOff {
		t.Fatalf("check_qps 12.5 40: %+v %v", g.Upstreams, err)
	}
	if g, err = parse(t, "tollgate {\nupstreams {\ncheck_qps off\n}\n}"); err != nil || !g.Upstreams.CheckQPSOff {
		t.Fatalf("check_qps off: %+v %v", g.Upstreams, err)
	}
}

// TestValidate: what the configuration alone can be checked on is checked
// before the handler provisions anything.
func TestValidate(t *testing.T) {
	for _, bad := range []string{
		"chain 999 {\n}", "chain 137 {\n}\nchain 137 {\n}", "max_batch 20000", "upstreams {\nmax_batch 20000\n}",
		"upstreams {\nnode_allow_cidrs 10.0.0.0/99\n}", "upstreams {\nnode_resolver nope\n}",
		"payments {\nmin_deposit -1\n}", "payments {\nmax_deposit abc\n}", "intelligence {\nheatmap_price 0\n}",
		"payments {\npublic_url ftp://x\n}", "payments {\nfacilitator_url example.com\n}",
		"chain 137 {\nmethod eth_call max_block_range 5\n}", "chain 137 {\nmethod admin_peers allow\nmethod admin_peers deny no\n}",
		"chain 137 {\nprovider a http://x {\nws http://x\n}\n}",
	} {
		g, err := parse(t, "tollgate {\n"+bad+"\n}")
		if err != nil {
			t.Fatalf("%q: %v", bad, err)
		}
		if err := g.Validate(); err == nil {
			t.Errorf("%q validated", bad)
		}
	}
	g, _ := parse(t, "tollgate {\npayments {\nmin_deposit {env.MIN}\npublic_url {env.URL}\n}\n}")
	if err := g.Validate(); err != nil {
		t.Fatalf("placeholders are checked at provision time: %v", err)
	}
}

// TestMethodWeightAndCapParse: weight and max_response_bytes lines land on
// the method's override (sizes in Caddy's usual units), beside its other
// settings.
func TestMethodWeightAndCapParse(t *testing.T) {
	g, err := parse(t, "tollgate {\nchain 137 {\nmethod eth_getLogs weight 4\nmethod eth_getLogs max_response_bytes 2MiB\nmethod eth_getLogs max_block_range 500\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Chains) != 1 || len(g.Chains[0].Methods) != 1 {
		t.Fatalf("chains: %+v", g.Chains)
	}
	if o := g.Chains[0].Methods[0]; o.Weight != 4 || o.MaxResponseBytes != 2<<20 || o.MaxBlockRange != 500 {
		t.Fatalf("override: %+v", o)
	}
}
