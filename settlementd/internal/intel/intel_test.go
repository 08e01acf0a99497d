package intel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	shared "github.com/tollgate-rpc/tollgate/shared/intel"
)

// Real wire formats (trimmed to a few symbols; fields as the venues send them).
const binanceBody = `[
 {"symbol":"BTCUSDT","markPrice":"97123.45000000","indexPrice":"97150.12345678","estimatedSettlePrice":"97140.00000000",
  "lastFundingRate":"%s","interestRate":"0.00010000","nextFundingTime":1763712000000,"time":1763700000000},
 {"symbol":"ETHUSDT","markPrice":"3050.12000000","indexPrice":"3051.00000000","estimatedSettlePrice":"3050.50000000",
  "lastFundingRate":"-0.00005000","interestRate":"0.00010000","nextFundingTime":1763712000000,"time":1763700000000},
 {"symbol":"PEPEUSDT","markPrice":"0.00001000","indexPrice":"0.00001000","estimatedSettlePrice":"0.00001000",
  "lastFundingRate":"0.00020000","interestRate":"0.00010000","nextFundingTime":1763712000000,"time":1763700000000}
]`

const bybitBody = `{"retCode":0,"retMsg":"OK","result":{"category":"linear","list":[
 {"symbol":"BTCUSDT","lastPrice":"97120.50","indexPrice":"97150.12","markPrice":"97121.00","prevPrice24h":"96000.00",
  "price24hPcnt":"0.011672","highPrice24h":"98000.00","lowPrice24h":"95500.00","prevPrice1h":"97000.00",
  "openInterest":"55000.123","openInterestValue":"5341735000.00","turnover24h":"12345678901.2345","volume24h":"127000.456",
  "fundingRate":"%s","nextFundingTime":"1763712000000","predictedDeliveryPrice":"","basisRate":"","deliveryFeeRate":"",
  "deliveryTime":"0","ask1Size":"1.234","bid1Price":"97120.40","ask1Price":"97120.50","bid1Size":"2.5","basis":""},
 {"symbol":"ETHUSDT","lastPrice":"3050.10","indexPrice":"3051.00","markPrice":"3050.20","prevPrice24h":"3000.00",
  "price24hPcnt":"0.0167","highPrice24h":"3100.00","lowPrice24h":"2990.00","prevPrice1h":"3040.00",
  "openInterest":"900000","openInterestValue":"2745000000","turnover24h":"1","volume24h":"1",
  "fundingRate":"0.00001","nextFundingTime":"1763712000000","predictedDeliveryPrice":"","basisRate":"","deliveryFeeRate":"",
  "deliveryTime":"0","ask1Size":"1","bid1Price":"3050.00","ask1Price":"3050.10","bid1Size":"1","basis":""}
]},"retExtInfo":{},"time":1763700000123}`

// venue is a local server replaying a venue; its answer can be switched.
type venue struct {
	srv  *httptest.Server
	body atomic.Value // string; "" answers 502
	path string
	hits atomic.Int64
}

func newVenue(t *testing.T, path, body string) *venue {
	v := &venue{path: path}
	v.body.Store(body)
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.hits.Add(1)
		if r.URL.Path != path || (path == "/v5/market/tickers" && r.URL.Query().Get("category") != "linear") {
			http.NotFound(w, r)
			return
		}
		b := v.body.Load().(string)
		if b == "" {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(b))
	}))
	t.Cleanup(v.srv.Close)
	return v
}

func sprintf(f, a string) string { return fmt.Sprintf(f, a) }

func TestFundingJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)

	bn := newVenue(t, "/fapi/v1/premiumIndex", sprintf(binanceBody, "0.00010000"))
	bb := newVenue(t, "/v5/market/tickers", sprintf(bybitBody, "-0.001212"))
	s, err := fromEnv(envMap{"TOLLGATE_VENUE_BINANCE_URL": bn.srv.URL + "/", "TOLLGATE_VENUE_BYBIT_URL": bb.srv.URL,
		"TOLLGATE_INTEL_SYMBOLS": "BTCUSDT, ethusdt", "TOLLGATE_INTEL_INTERVAL": "60s"}.get)
	if err != nil {
		t.Fatal(err)
	}
	j := New(s, pool, rdb, prefix, nil)
	t0 := time.Date(2026, 11, 21, 10, 0, 10, 0, time.UTC)
	now := t0
	j.Now = func() time.Time { return now }
	read := func() *shared.Heatmap {
		t.Helper()
		b, err := rdb.Get(ctx, shared.LatestKey(prefix)).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		var hm shared.Heatmap
		if err := json.Unmarshal(b, &hm); err != nil {
			t.Fatal(err)
		}
		return &hm
	}
	cell := func(hm *shared.Heatmap, window, sym, ven string, i int) string {
		g := hm.Windows[window]
		if i < 0 {
			i += len(g.Buckets)
		}
		r := g.Rates[sym][ven][i]
		if r == nil {
			return "-"
		}
		return r.Decimal
	}

	// 1. Both venues up: ingested, stored as ppb, published.
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	var ppb int64
	if err := pool.QueryRow(ctx, `SELECT count(*), sum(rate_ppb) FILTER (WHERE venue='bybit' AND symbol='BTCUSDT') FROM funding_snapshots`).Scan(&n, &ppb); err != nil {
		t.Fatal(err)
	}
	if n != 4 || ppb != -1_212_000 { // PEPEUSDT is not tracked
		t.Fatalf("snapshots %d, bybit BTC ppb %d", n, ppb)
	}
	hm := read()
	if !hm.GeneratedAt.Equal(t0) || hm.PollIntervalS != 60 || len(hm.Venues) != 2 || hm.Venues["binance"].Stale || hm.Venues["bybit"].Stale {
		t.Fatalf("heatmap header %+v", hm)
	}
	g := hm.Windows["1h"]
	if len(g.Buckets) != 12 || g.BucketSeconds != 300 || !g.Buckets[11].Equal(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("1h buckets %v", g.Buckets)
	}
	for _, c := range []struct{ w, s, v, want string }{
		{"1h", "BTCUSDT", "binance", "0.0001"}, {"1h", "BTCUSDT", "bybit", "-0.001212"},
		{"1h", "ETHUSDT", "binance", "-0.00005"}, {"1h", "ETHUSDT", "bybit", "0.00001"},
		{"24h", "BTCUSDT", "binance", "0.0001"}, {"8h", "ETHUSDT", "bybit", "0.00001"},
	} {
		if got := cell(hm, c.w, c.s, c.v, -1); got != c.want {
			t.Errorf("%s %s %s = %s, want %s", c.w, c.s, c.v, got, c.want)
		}
	}
	if cell(hm, "1h", "BTCUSDT", "binance", -2) != "-" {
		t.Fatal("an empty bucket has a value")
	}

	// 2. Known input over time: a new bucket gets the new rate, and within a
	// bucket the latest observation wins.
	now = t0.Add(5 * time.Minute) // 10:05:10 — the next 5-minute bucket
	bn.body.Store(sprintf(binanceBody, "0.00020000"))
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(6 * time.Minute) // same bucket, later
	bn.body.Store(sprintf(binanceBody, "0.00030000"))
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	hm = read()
	if a, b := cell(hm, "1h", "BTCUSDT", "binance", -2), cell(hm, "1h", "BTCUSDT", "binance", -1); a != "0.0001" || b != "0.0003" {
		t.Fatalf("1h binance BTC buckets …%s, %s", a, b)
	}
	if got := cell(hm, "8h", "BTCUSDT", "binance", -1); got != "0.0003" { // one 30-minute bucket holds all three
		t.Fatalf("8h last bucket %s", got)
	}

	// 3. Binance goes down, then answers garbage; Bybit keeps working and
	// Binance is marked stale once its last success is 3 intervals old.
	bn.body.Store("")
	for i, body := range []string{"", `{"code":-1003,"msg":"Too many requests"}`, `[{"symbol":"BTCUSDT","lastFundingRate":"1e-4","time":1}]`} {
		bn.body.Store(body)
		bb.body.Store(sprintf(bybitBody, []string{"0.0002", "0.0003", "0.0004"}[i]))
		now = t0.Add(time.Duration(7+i) * time.Minute)
		if err := j.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(10 * time.Minute)
	bn.body.Store("not json")
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	hm = read()
	bs, ys := hm.Venues["binance"], hm.Venues["bybit"]
	if !bs.Stale || bs.LastError == "" || bs.LastSuccess == nil || !bs.LastSuccess.Equal(t0.Add(6*time.Minute)) {
		t.Fatalf("binance status %+v", bs)
	}
	if ys.Stale || ys.LastError != "" || !ys.LastSuccess.Equal(now) {
		t.Fatalf("bybit status %+v", ys)
	}
	if got := cell(hm, "1h", "BTCUSDT", "bybit", -1); got != "0.0004" {
		t.Fatalf("bybit kept working: %s", got)
	}
	if got := cell(hm, "1h", "BTCUSDT", "binance", -1); got != "-" { // 10:10 bucket: binance has nothing
		t.Fatalf("binance cell %s", got)
	}
	// Bybit's own garbage (retCode ≠ 0) is rejected too.
	bb.body.Store(`{"retCode":10006,"retMsg":"Too many visits!","result":{},"time":1763700000123}`)
	now = t0.Add(11 * time.Minute)
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if hm = read(); hm.Venues["bybit"].LastError == "" || hm.Venues["bybit"].Stale {
		t.Fatalf("bybit after one failure %+v", hm.Venues["bybit"])
	}
	if bn.hits.Load() == 0 || bb.hits.Load() == 0 {
		t.Fatal("venues not polled")
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

// fromEnv reads the settings from getenv the way the daemon does, with
// config.Load (the database URL only has to parse).
func fromEnv(getenv func(string) string) (Settings, error) {
	c, err := config.Load([]string{"-database-url", "postgres://localhost/x"}, getenv, io.Discard)
	if c == nil {
		return Settings{}, err
	}
	return c.Intel, err
}
