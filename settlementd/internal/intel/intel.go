// Package intel is settlementd's funding-rate job: on the leader, every
// interval it polls the configured perpetual-futures venues in their real
// public wire formats (Binance USDⓈ-M GET /fapi/v1/premiumIndex, Bybit v5
// GET /v5/market/tickers?category=linear), stores the snapshots in Postgres
// (funding_snapshots, migration 0030), builds the heatmap over each window
// from Postgres and publishes it to Redis (shared/intel.LatestKey) for the
// gateway. A venue that is down or answers garbage fails alone: its status
// row keeps its last success, and the heatmap marks it stale.
package intel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	shared "github.com/tollgate-rpc/tollgate/shared/intel"
)

// Retention of snapshots: the heatmap needs 24 h; a week stays for audit.
const (
	Retention    = 7 * 24 * time.Hour
	maxBodyBytes = 16 << 20 // Binance's full premiumIndex is ~200 KiB
)

// Settings configure the job: config.Intel, which config.Load reads
// (TOLLGATE_VENUE_BINANCE_URL, TOLLGATE_VENUE_BYBIT_URL,
// TOLLGATE_INTEL_INTERVAL, TOLLGATE_INTEL_SYMBOLS).
type Settings = config.Intel

// Observation is one venue's funding rate for one symbol.
type Observation struct {
	Symbol        string
	RatePPB       int64
	VenueTime     *time.Time
	NextFundingAt *time.Time
	MarkPrice     string // decimal string as sent; "" when absent
}

// Venue fetches one venue's observations for the tracked symbols.
type Venue struct {
	Name  string
	Fetch func(ctx context.Context, c *http.Client, symbols map[string]bool) ([]Observation, error)
}

// Job is the polling job.
type Job struct {
	Pool    *pgxpool.Pool
	Redis   redis.UniversalClient
	Prefix  string
	Set     Settings
	Venues  []Venue
	Client  *http.Client
	Log     *zap.Logger
	Now     func() time.Time
	symbols map[string]bool
}

// New builds the job from settings.
func New(s Settings, pool *pgxpool.Pool, rdb redis.UniversalClient, prefix string, log *zap.Logger) *Job {
	if log == nil {
		log = zap.NewNop()
	}
	j := &Job{Pool: pool, Redis: rdb, Prefix: prefix, Set: s, Client: &http.Client{Timeout: 10 * time.Second}, Log: log.Named("intel"), Now: time.Now}
	if s.BinanceURL != "" {
		j.Venues = append(j.Venues, Binance(s.BinanceURL))
	}
	if s.BybitURL != "" {
		j.Venues = append(j.Venues, Bybit(s.BybitURL))
	}
	return j
}

// Name is the job's name.
func (j *Job) Name() string { return "intel-funding" }

// Run polls every venue, stores what parsed, and publishes the heatmap. It
// fails only when storing or publishing fails; a venue's failure is
// recorded on its status row (and so in the heatmap), and logged.
func (j *Job) Run(ctx context.Context) error {
	now := j.Now().UTC().Truncate(time.Millisecond)
	if j.symbols == nil {
		j.symbols = map[string]bool{}
		for _, s := range j.Set.Symbols {
			j.symbols[s] = true
		}
	}
	for _, v := range j.Venues {
		obs, ferr := v.Fetch(ctx, j.Client, j.symbols)
		if ferr == nil && len(obs) == 0 {
			ferr = errors.New("no tracked symbol in the answer")
		}
		if err := j.store(ctx, v.Name, now, obs, ferr); err != nil {
			return err
		}
		if ferr != nil {
			j.Log.Warn("venue poll failed; its data goes stale", zap.String("venue", v.Name), zap.Error(ferr))
		}
	}
	hm, err := Build(ctx, j.Pool, now, j.Set.Interval, j.Set.Symbols)
	if err != nil {
		return err
	}
	b, err := json.Marshal(hm)
	if err != nil {
		return err
	}
	if err := j.Redis.Set(ctx, shared.LatestKey(j.Prefix), b, 0).Err(); err != nil {
		return fmt.Errorf("intel: publish: %w", err)
	}
	_, err = j.Pool.Exec(ctx, `DELETE FROM funding_snapshots WHERE observed_at < $1`, now.Add(-Retention))
	return err
}

// store writes a poll's snapshots and the venue's status in one transaction.
func (j *Job) store(ctx context.Context, venue string, now time.Time, obs []Observation, ferr error) error {
	tx, err := j.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("intel: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if ferr != nil {
		msg := ferr.Error()
		if len(msg) > 300 {
			msg = msg[:300]
		}
		_, err = tx.Exec(ctx, `INSERT INTO funding_venues (venue, last_attempt, last_error) VALUES ($1, $2, $3)
			ON CONFLICT (venue) DO UPDATE SET last_attempt = $2, last_error = $3`, venue, now, msg)
	} else {
		b := &pgx.Batch{}
		for _, o := range obs {
			var mark any
			if o.MarkPrice != "" {
				mark = o.MarkPrice
			}
			b.Queue(`INSERT INTO funding_snapshots (venue, symbol, observed_at, venue_time, rate_ppb, next_funding_at, mark_price)
				VALUES ($1, $2, $3, $4, $5, $6, $7::numeric) ON CONFLICT DO NOTHING`, venue, o.Symbol, now, o.VenueTime, o.RatePPB, o.NextFundingAt, mark)
		}
		b.Queue(`INSERT INTO funding_venues (venue, last_attempt, last_success, last_error) VALUES ($1, $2, $2, NULL)
			ON CONFLICT (venue) DO UPDATE SET last_attempt = $2, last_success = $2, last_error = NULL`, venue, now)
		err = tx.SendBatch(ctx, b).Close()
	}
	if err != nil {
		return fmt.Errorf("intel: store %s: %w", venue, err)
	}
	return tx.Commit(ctx)
}

// Build reads the last 24 h of snapshots and builds every window's grid.
// A bucket holds the latest observation in [start, start+width); bucket
// starts are aligned to the width (UTC), the last bucket contains now.
func Build(ctx context.Context, pool *pgxpool.Pool, now time.Time, poll time.Duration, symbols []string) (*shared.Heatmap, error) {
	hm := &shared.Heatmap{GeneratedAt: now.UTC(), PollIntervalS: int64(poll / time.Second), Symbols: symbols,
		Venues: map[string]shared.VenueStatus{}, Windows: map[string]shared.Grid{}}
	rows, err := pool.Query(ctx, `SELECT venue, last_attempt, last_success, coalesce(last_error, '') FROM funding_venues ORDER BY venue`)
	if err != nil {
		return nil, fmt.Errorf("intel: venues: %w", err)
	}
	for rows.Next() {
		var v string
		var st shared.VenueStatus
		if err := rows.Scan(&v, &st.LastAttempt, &st.LastSuccess, &st.LastError); err != nil {
			rows.Close()
			return nil, err
		}
		st.Stale = st.LastSuccess == nil || now.Sub(*st.LastSuccess) > shared.StaleAfter(poll)
		hm.Venues[v] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	longest := shared.Windows[len(shared.Windows)-1]
	from := now.Add(-longest.Span).Truncate(longest.Bucket)
	type obs struct {
		venue, symbol string
		at            time.Time
		ppb           int64
	}
	var all []obs
	rows, err = pool.Query(ctx, `SELECT venue, symbol, observed_at, rate_ppb FROM funding_snapshots
		WHERE observed_at >= $1 AND observed_at <= $2 AND symbol = ANY($3) ORDER BY observed_at`, from, now, symbols)
	if err != nil {
		return nil, fmt.Errorf("intel: snapshots: %w", err)
	}
	for rows.Next() {
		var o obs
		if err := rows.Scan(&o.venue, &o.symbol, &o.at, &o.ppb); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	venues := make([]string, 0, len(hm.Venues))
	for v := range hm.Venues {
		venues = append(venues, v)
	}
	sort.Strings(venues)
	for _, w := range shared.Windows {
		n := int(w.Span / w.Bucket)
		last := now.UTC().Truncate(w.Bucket)
		first := last.Add(-time.Duration(n-1) * w.Bucket)
		g := shared.Grid{BucketSeconds: int64(w.Bucket / time.Second), Rates: map[string]map[string][]*shared.Rate{}}
		for i := 0; i < n; i++ {
			g.Buckets = append(g.Buckets, first.Add(time.Duration(i)*w.Bucket))
		}
		for _, s := range symbols {
			g.Rates[s] = map[string][]*shared.Rate{}
			for _, v := range venues {
				g.Rates[s][v] = make([]*shared.Rate, n)
			}
		}
		for _, o := range all { // ascending time: a later observation overwrites
			if o.at.Before(first) {
				continue
			}
			i := int(o.at.Sub(first) / w.Bucket)
			if i >= n || g.Rates[o.symbol] == nil || g.Rates[o.symbol][o.venue] == nil {
				continue
			}
			g.Rates[o.symbol][o.venue][i] = shared.NewRate(o.ppb)
		}
		hm.Windows[w.Name] = g
	}
	return hm, nil
}

// get fetches url and returns the body (bounded), failing on non-200.
func get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("request failed: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxBodyBytes {
		return nil, errors.New("answer too large")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return b, nil
}

// decodeStrict decodes one JSON value with nothing after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed JSON: %w", err)
	}
	if dec.More() {
		return errors.New("malformed JSON: trailing data")
	}
	return nil
}

// millis reads a Unix-milliseconds timestamp sent as a JSON number or a
// string of digits ("0" or absent: nil).
func millis(v json.RawMessage) (*time.Time, error) {
	s := strings.Trim(string(v), `"`)
	if s == "" || s == "null" || s == "0" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1e14 {
		return nil, fmt.Errorf("bad millisecond timestamp %s", v)
	}
	t := time.UnixMilli(n).UTC()
	return &t, nil
}

func checkPrice(s string) error {
	if s == "" {
		return nil
	}
	if _, err := shared.ParseRate(s); err != nil && !isDecimal(s) {
		return fmt.Errorf("bad price %q", s)
	}
	return nil
}

func isDecimal(s string) bool {
	w, f, dot := strings.Cut(s, ".")
	if w == "" || (dot && f == "") {
		return false
	}
	for _, p := range []string{w, f} {
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return len(s) <= 40
}

// binanceEntry is one element of GET /fapi/v1/premiumIndex.
type binanceEntry struct {
	Symbol          string          `json:"symbol"`
	MarkPrice       string          `json:"markPrice"`
	IndexPrice      string          `json:"indexPrice"`
	LastFundingRate string          `json:"lastFundingRate"`
	NextFundingTime json.RawMessage `json:"nextFundingTime"`
	Time            json.RawMessage `json:"time"`
}

// Binance is the Binance USDⓈ-M futures venue (base e.g. https://fapi.binance.com).
func Binance(base string) Venue {
	return Venue{Name: "binance", Fetch: func(ctx context.Context, c *http.Client, symbols map[string]bool) ([]Observation, error) {
		b, err := get(ctx, c, base+"/fapi/v1/premiumIndex")
		if err != nil {
			return nil, err
		}
		var list []binanceEntry
		if err := decodeStrict(b, &list); err != nil {
			return nil, err
		}
		var out []Observation
		for _, e := range list {
			if !symbols[e.Symbol] {
				continue
			}
			if e.LastFundingRate == "" { // delivery contracts in the list carry no funding
				continue
			}
			r, err := shared.ParseRate(e.LastFundingRate)
			if err != nil {
				return nil, fmt.Errorf("%s lastFundingRate: %w", e.Symbol, err)
			}
			vt, err := millis(e.Time)
			if err != nil {
				return nil, fmt.Errorf("%s time: %w", e.Symbol, err)
			}
			nf, err := millis(e.NextFundingTime)
			if err != nil {
				return nil, fmt.Errorf("%s nextFundingTime: %w", e.Symbol, err)
			}
			if err := checkPrice(e.MarkPrice); err != nil {
				return nil, fmt.Errorf("%s markPrice: %w", e.Symbol, err)
			}
			out = append(out, Observation{Symbol: e.Symbol, RatePPB: r, VenueTime: vt, NextFundingAt: nf, MarkPrice: e.MarkPrice})
		}
		return out, nil
	}}
}

type bybitTickers struct {
	RetCode *int   `json:"retCode"`
	RetMsg  string `json:"retMsg"`
	Result  *struct {
		Category string `json:"category"`
		List     []struct {
			Symbol          string          `json:"symbol"`
			MarkPrice       string          `json:"markPrice"`
			FundingRate     string          `json:"fundingRate"`
			NextFundingTime json.RawMessage `json:"nextFundingTime"`
		} `json:"list"`
	} `json:"result"`
	Time json.RawMessage `json:"time"`
}

// Bybit is the Bybit v5 linear-perpetuals venue (base e.g. https://api.bybit.com).
func Bybit(base string) Venue {
	return Venue{Name: "bybit", Fetch: func(ctx context.Context, c *http.Client, symbols map[string]bool) ([]Observation, error) {
		b, err := get(ctx, c, base+"/v5/market/tickers?category=linear")
		if err != nil {
			return nil, err
		}
		var t bybitTickers
		if err := decodeStrict(b, &t); err != nil {
			return nil, err
		}
		if t.RetCode == nil || *t.RetCode != 0 {
			return nil, fmt.Errorf("retCode %v: %s", t.RetCode, t.RetMsg)
		}
		if t.Result == nil || t.Result.Category != "linear" {
			return nil, errors.New("result.category is not linear")
		}
		vt, err := millis(t.Time)
		if err != nil {
			return nil, fmt.Errorf("time: %w", err)
		}
		var out []Observation
		for _, e := range t.Result.List {
			if !symbols[e.Symbol] || e.FundingRate == "" {
				continue
			}
			r, err := shared.ParseRate(e.FundingRate)
			if err != nil {
				return nil, fmt.Errorf("%s fundingRate: %w", e.Symbol, err)
			}
			nf, err := millis(e.NextFundingTime)
			if err != nil {
				return nil, fmt.Errorf("%s nextFundingTime: %w", e.Symbol, err)
			}
			if err := checkPrice(e.MarkPrice); err != nil {
				return nil, fmt.Errorf("%s markPrice: %w", e.Symbol, err)
			}
			out = append(out, Observation{Symbol: e.Symbol, RatePPB: r, VenueTime: vt, NextFundingAt: nf, MarkPrice: e.MarkPrice})
		}
		return out, nil
	}}
}
