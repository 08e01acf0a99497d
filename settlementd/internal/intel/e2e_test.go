package intel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

const gatewayCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			free_daily_limit 0
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
			usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
			x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
			heatmap_price 0.002
		}
		respond 404
	}
}
`

// TestJobToGateway: what the job publishes from the venues is what our real
// gateway sells, at the configured price, and a venue that went down shows
// as stale through the gateway too.
func TestJobToGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	bn := newVenue(t, "/fapi/v1/premiumIndex", fmt.Sprintf(binanceBody, "0.00012500"))
	bb := newVenue(t, "/v5/market/tickers", fmt.Sprintf(bybitBody, "-0.000075"))
	s, err := fromEnv(envMap{"TOLLGATE_VENUE_BINANCE_URL": bn.srv.URL, "TOLLGATE_VENUE_BYBIT_URL": bb.srv.URL,
		"TOLLGATE_INTEL_SYMBOLS": "BTCUSDT,ETHUSDT", "TOLLGATE_INTEL_INTERVAL": "60s"}.get)
	if err != nil {
		t.Fatal(err)
	}
	j := New(s, pool, rdb, prefix, nil)
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	gw := caddyrun.Start(t, strings.ReplaceAll(gatewayCaddyfile, "@PREFIX@", prefix), "TG_REDIS_URL="+os.Getenv("REDIS_URL"))
	do := func(method, path, body string, hdr ...string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, gw.URL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for _, h := range hdr {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	st, b := do(http.MethodPost, "/api/keys", `{"label":"e2e","tier":"free"}`)
	var key struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	if err := json.Unmarshal(b, &key); err != nil || st != http.StatusCreated {
		t.Fatalf("key: %d %s", st, b)
	}
	if _, _, err := balances.Credit(ctx, rdb, prefix, key.KeyID, 10_000, "0xe2e:1"); err != nil {
		t.Fatal(err)
	}
	type heatmap struct {
		Stale  bool
		Venues []struct {
			Venue string
			Stale bool
		}
		Rates map[string]map[string][]*struct {
			PPB  int64
			Rate string
		}
	}
	get := func(q string) heatmap {
		t.Helper()
		st, b := do(http.MethodGet, "/v1/intelligence/funding-rate-heatmap"+q, "", "X-API-Key: "+key.APIKey)
		var hm heatmap
		if err := json.Unmarshal(b, &hm); err != nil || st != http.StatusOK {
			t.Fatalf("heatmap: %d %s", st, b)
		}
		return hm
	}
	hm := get("?window=1h&symbols=BTCUSDT")
	cells := hm.Rates["BTCUSDT"]
	bnc, byc := cells["binance"][len(cells["binance"])-1], cells["bybit"][len(cells["bybit"])-1]
	if hm.Stale || bnc == nil || byc == nil || bnc.Rate != "0.000125" || bnc.PPB != 125_000 || byc.Rate != "-0.000075" || len(hm.Rates) != 1 {
		t.Fatalf("heatmap through the gateway: %+v", hm)
	}
	if bal, _ := balances.Balance(ctx, rdb, prefix, key.KeyID); bal != 8_000 {
		t.Fatalf("balance %d, want 8000 (heatmap_price 0.002)", bal)
	}

	// Binance goes down for more than 3 intervals (the job's clock moves on).
	bn.body.Store("")
	start := time.Now()
	for i := 1; i <= 4; i++ {
		j.Now = func() time.Time { return start.Add(time.Duration(i) * time.Minute) }
		if err := j.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	hm = get("?venues=binance")
	if !hm.Stale || len(hm.Venues) != 1 || !hm.Venues[0].Stale {
		t.Fatalf("binance down, presented as fresh: %+v", hm)
	}
}
