// Package discovery is the gateway's discovery and intelligence room: what
// a program reads to find and pay for the service — /.well-known/service.json
// (built from the route table and the running configuration),
// /.well-known/x402, /llms.txt, /openapi.yaml — and the paid intelligence
// metrics (/v1/intelligence and its metrics, debited from credits at their
// own price).
package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/accounts"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/docs"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/intel"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const (
	// defaultIntelInterval is the update interval the catalog states before
	// settlementd has published (it then states the published one).
	defaultIntelInterval = 60 * time.Second
	maxHeatmapSymbols    = 20
)

// Config is what the discovery room is given by the gateway.
type Config struct {
	// Chains is the gateway's chain table: one service per chain.
	Chains    *chains.Table
	Meter     *meter.Meter // nil when metering is off
	Writer    *meter.EventWriter
	Redis     redis.UniversalClient
	KeyPrefix string
	Pay       *payment.Settings
	Payers    *payment.Handler
	Accounts  *accounts.Handler
	// HeatmapPrice is the funding-rate heatmap's price per call.
	HeatmapPrice money.Units
	// Routes is the gateway's route table, as documented (for the
	// built-in chains; the /rpc routes' summaries are made this config's).
	Routes []web.Route
	// Metered runs fn under the per-address concurrency cap of the
	// metered routes.
	Metered func(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request) error) error
	Log     *zap.Logger
	// WebSocket is a chain's JSON-RPC socket offer (caddymodule/wsrpc) for
	// service.json, given the gateway's base URL; nil when none.
	WebSocket func(base string, chainID uint64) any
}

// Handler serves the discovery and intelligence routes.
type Handler struct {
	chains    *chains.Table
	openAPI   []byte // docs/openapi.yaml for this config's chains
	meter     *meter.Meter
	writer    *meter.EventWriter
	redis     redis.UniversalClient
	keyPrefix string
	pay       *payment.Settings
	payers    *payment.Handler
	accounts  *accounts.Handler
	routes    []web.Route
	metered   func(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request) error) error
	logger    *zap.Logger
	intel     struct{ heatmapPrice money.Units }
	webSocket func(base string, chainID uint64) any
}

// New builds the discovery room.
func New(c Config) *Handler {
	h := &Handler{chains: c.Chains, openAPI: openAPIFor(c.Chains), meter: c.Meter, writer: c.Writer, redis: c.Redis, keyPrefix: c.KeyPrefix, pay: c.Pay, payers: c.Payers,
		accounts: c.Accounts, routes: documentedRoutes(c.Routes, c.Chains), metered: c.Metered, logger: c.Log, webSocket: c.WebSocket}
	h.intel.heatmapPrice = c.HeatmapPrice
	return h
}

// metric is one catalog entry.
type metric struct {
	id, description string
	price           func(h *Handler) money.Units
}

var catalog = []metric{
	{id: intel.FundingHeatmap,
		description: "Perpetual-futures funding rates as a heatmap: symbols × venues × time buckets (windows 1h, 8h, 24h), " +
			"polled from the venues' public APIs; each cell is the latest rate observed in its bucket",
		price: func(h *Handler) money.Units { return h.intel.heatmapPrice }},
}

type priceRef struct {
	USDT  money.USDT `json:"usdt"`
	Units string     `json:"units"`
	Asset string     `json:"asset"`
}

func priceOf(u money.Units) priceRef {
	return priceRef{USDT: money.USDT(u), Units: u.String(), Asset: "USDT"}
}

type link struct {
	Method string `json:"method"`
	URL    string `json:"url"`
}

// ServiceJSON answers GET /.well-known/service.json, built from the
// running configuration and the route table.
func (h *Handler) ServiceJSON(w http.ResponseWriter, r *http.Request) error {
	base := h.pay.BaseURL(r)
	var services []map[string]any
	def := h.chains.Default().ID
	for _, c := range h.chains.All() {
		path := "/rpc/" + strconv.FormatUint(c.ID, 10)
		s := map[string]any{"id": "rpc-" + c.Name, "type": "json-rpc", "chain_id": c.ID, "network": c.Network(),
			"name": c.Display, "testnet": c.Testnet, "method": http.MethodPost, "path": path, "url": base + path,
			"price": priceOf(money.PricePerCall), "method_weights": h.pay.WeightsOf(c.ID),
			"stats": base + "/rpc/stats/" + c.Name, "auth": web.AuthKeyOrFree}
		if c.ID == def {
			s["path"], s["url"], s["aliases"] = "/rpc", base+"/rpc", []string{path}
		}
		if !chains.IsBuiltin(c.ID) {
			// What a configured chain is, for a client that does not know it
			// (the built-in chains' entries stay as they always were).
			s["block_time_ms"] = c.BlockTime.Milliseconds()
			s["finality"] = c.Finality.String()
			s["native_currency"] = c.Currency
			if c.Explorer != "" {
				s["explorer"] = c.Explorer
			}
		}
		if h.webSocket != nil {
			if ws := h.webSocket(base, c.ID); ws != nil {
				s["websocket"] = ws
			}
		}
		services = append(services, s)
	}
	for _, m := range catalog {
		services = append(services, map[string]any{"id": m.id, "type": "intelligence", "method": http.MethodGet,
			"path": "/v1/intelligence/" + m.id, "url": base + "/v1/intelligence/" + m.id, "price": priceOf(m.price(h)),
			"auth": web.AuthAPIKey, "description": m.description})
	}
	services = append(services, h.mcpService(base))
	var endpoints []map[string]string
	for _, rt := range h.routes {
		endpoints = append(endpoints, map[string]string{"method": rt.Method, "path": rt.Path, "auth": rt.Auth, "summary": rt.Summary})
	}
	doc := map[string]any{
		"name":         "Tollgate",
		"description":  "Metered JSON-RPC gateway with prepaid USDT credits, a per-IP free tier, keyless x402 payment and paid intelligence metrics",
		"base_url":     base,
		"generated_at": time.Now().UTC().Format(time.RFC3339),
		"services":     services,
		"payment":      h.paymentMethods(r.Context(), base),
		"links": map[string]string{
			"status": base + "/api/status", "health": base + "/health", "rpc_health": base + "/rpc/health",
			"free_tier_stats": base + "/stats/free-tier", "catalog": base + "/v1/intelligence", "openapi": base + "/openapi.yaml",
		},
		"endpoints": endpoints,
	}
	web.JSON(w, http.StatusOK, doc)
	return nil
}

// paymentMethods are the ways to pay in force.
func (h *Handler) paymentMethods(ctx context.Context, base string) map[string]any {
	if h.meter == nil {
		return map[string]any{"metering": "off", "note": "this gateway runs without metering: JSON-RPC is free and keys are not available"}
	}
	lim := h.meter.Config()
	free := map[string]any{"daily_limit_per_ip": lim.FreeDailyLimit, "subnet_limit": lim.FreeSubnetLimit, "limits_source": "configuration"}
	sctx, cancel := context.WithTimeout(ctx, payment.MeterTimeout)
	defer cancel()
	if st, err := h.meter.Stats(sctx); err == nil { // an operator's runtime limits win
		free["daily_limit_per_ip"], free["subnet_limit"], free["limits_source"] = st.Limits.DailyPerIP, st.Limits.Subnet, "in_force"
	}
	free["applies_to"] = []string{"POST /rpc", "POST /rpc/{chain}"}
	free["per"] = "IP address (IPv6 /64); subnet limit per /24 (IPv6 /48)"
	free["resets"] = "UTC midnight"
	free["resets_at"] = meter.NextReset(h.meter.Now()).Format(time.RFC3339)
	free["stats"] = base + "/stats/free-tier"
	p := h.pay
	x := map[string]any{
		"x402_versions":      []int{1, 2},
		"scheme":             paycheck.Scheme,
		"network":            paycheck.NetworkV2,
		"network_v1":         paycheck.NetworkV1,
		"asset":              p.Asset,
		"asset_symbol":       "USDC",
		"pay_to":             p.PayTo,
		"bundle_price_usdc":  money.USDT(money.BundlePrice),
		"bundle_price_units": money.BundlePrice.String(),
		"bundle_calls":       money.BundleCalls,
		"payment_headers":    []string{"PAYMENT-SIGNATURE", "X-PAYMENT"},
		"requirement":        "an unpaid keyless call is answered 402 with the accepts array (body: v1, PAYMENT-REQUIRED header: v2)",
	}
	// settlementd's facilitator serves this gateway only and is not
	// publicly routed (docs/facilitator.md): only an external facilitator
	// the operator configured is advertised.
	if h.pay.Facilitator != "" {
		x["facilitator_url"] = h.pay.Facilitator
	}
	return map[string]any{
		"free_tier": free,
		"api_key_credits": map[string]any{
			"header":                 "X-API-Key",
			"create_key":             link{http.MethodPost, base + "/api/keys"},
			"register_machine":       link{http.MethodPost, base + "/v1/machine/register"},
			"usage":                  link{http.MethodGet, base + "/api/keys/usage"},
			"deposit_initiate":       link{http.MethodGet, base + "/credits/initiate?amount=" + p.MinDeposit.Decimal()},
			"deposit_initiate_alias": link{http.MethodGet, base + "/credits/deposit/initiate"},
			"chain_id":               chains.Default,
			"vault_address":          p.Vault.Hex(),
			"usdt_address":           p.USDT.Hex(),
			"minimum_deposit_usdt":   money.USDT(p.MinDeposit),
			"minimum_deposit_units":  p.MinDeposit.String(),
			"maximum_deposit_usdt":   money.USDT(p.MaxDeposit),
			"confirmations":          payment.DepositConfirmations,
			"explorer_url":           p.Explorer,
			"price_per_call":         priceOf(money.PricePerCall),
			"calls_per_usdt":         int64(money.Scale / money.PricePerCall),
		},
		"x402": x,
	}
}

// loadHeatmap reads the latest published heatmap; (nil, nil) when none.
func (h *Handler) loadHeatmap(ctx context.Context) (*intel.Heatmap, error) {
	if h.redis == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, payment.MeterTimeout)
	defer cancel()
	b, err := h.redis.Get(ctx, intel.LatestKey(h.keyPrefix)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var hm intel.Heatmap
	if err := json.Unmarshal(b, &hm); err != nil || hm.GeneratedAt.IsZero() || hm.Windows == nil {
		return nil, fmt.Errorf("published heatmap is malformed")
	}
	return &hm, nil
}

// freshness describes the age of a published heatmap.
func freshness(hm *intel.Heatmap, now time.Time) map[string]any {
	if hm == nil {
		return map[string]any{"available": false, "last_updated": nil, "age_seconds": nil, "stale": true}
	}
	poll := pollOf(hm)
	age := now.Sub(hm.GeneratedAt)
	return map[string]any{"available": true, "last_updated": hm.GeneratedAt.UTC().Format(time.RFC3339),
		"age_seconds": int64(max(age, 0) / time.Second), "stale": age > intel.StaleAfter(poll),
		"stale_after_seconds": int64(intel.StaleAfter(poll) / time.Second)}
}

func pollOf(hm *intel.Heatmap) time.Duration {
	if hm == nil || hm.PollIntervalS <= 0 {
		return defaultIntelInterval
	}
	return time.Duration(hm.PollIntervalS) * time.Second
}

// Catalog answers GET /v1/intelligence.
func (h *Handler) Catalog(w http.ResponseWriter, r *http.Request) error {
	base := h.pay.BaseURL(r)
	hm, err := h.loadHeatmap(r.Context())
	var out []map[string]any
	for _, m := range catalog {
		f := freshness(hm, time.Now())
		if err != nil {
			f = map[string]any{"available": false, "last_updated": nil, "age_seconds": nil, "stale": true, "error": "data store unavailable"}
		}
		var windows []string
		for _, w := range intel.Windows {
			windows = append(windows, w.Name)
		}
		out = append(out, map[string]any{
			"id": m.id, "description": m.description, "method": http.MethodGet,
			"path": "/v1/intelligence/" + m.id, "url": base + "/v1/intelligence/" + m.id,
			"price": priceOf(m.price(h)), "auth": "X-API-Key (credits)",
			"update_interval_seconds": int64(pollOf(hm) / time.Second),
			"freshness":               f,
			"parameters": map[string]any{
				"symbols": fmt.Sprintf("comma-separated list of at most %d tracked symbols (default: all)", maxHeatmapSymbols),
				"venues":  "comma-separated list of venues (default: all)",
				"window":  map[string]any{"allowed": windows, "default": intel.DefaultWindow},
			},
		})
		if hm != nil {
			out[len(out)-1]["symbols"] = hm.Symbols
			out[len(out)-1]["venues"] = sortedVenues(hm)
		}
	}
	web.JSON(w, http.StatusOK, map[string]any{"metrics": out})
	return nil
}

func sortedVenues(hm *intel.Heatmap) []string {
	v := make([]string, 0, len(hm.Venues))
	for name := range hm.Venues {
		v = append(v, name)
	}
	sort.Strings(v)
	return v
}

// paramError is a 400 naming the query parameter, in fieldError's shape.
func paramError(w http.ResponseWriter, field, msg string) {
	(&web.FieldError{Field: field, Code: "invalid_parameter", Message: msg}).Write(w)
}

// list splits a comma list, upper- or lower-casing it.
func list(v string, upper bool) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if upper {
			p = strings.ToUpper(p)
		} else {
			p = strings.ToLower(p)
		}
		out = append(out, p)
	}
	return out
}

func plainToken(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Metric answers GET /v1/intelligence/{metric}.
func (h *Handler) Metric(w http.ResponseWriter, r *http.Request) error {
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/intelligence/"), "/")
	if r.Method == http.MethodHead { // a HEAD would be charged for a body it never gets
		w.Header().Set("Allow", "GET")
		web.Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET: metric calls are charged")
		return nil
	}
	if id != intel.FundingHeatmap {
		web.Error(w, http.StatusNotFound, "unknown_metric", "no metric "+strconv.Quote(web.Truncate(id, 64))+"; see GET /v1/intelligence")
		return nil
	}
	return h.metered(w, r, h.serveHeatmap)
}

// serveHeatmap: validate the query, debit the metric's price (one script
// call), read the published heatmap, answer; refund when it cannot be served.
func (h *Handler) serveHeatmap(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	win := intel.DefaultWindow
	if v, ok := q["window"]; ok {
		win = strings.TrimSpace(v[0])
	}
	window, ok := intel.WindowByName(win)
	if !ok {
		paramError(w, "window", "window must be one of 1h, 8h, 24h")
		return nil
	}
	symbols, venues := list(q.Get("symbols"), true), list(q.Get("venues"), false)
	if len(symbols) > maxHeatmapSymbols {
		paramError(w, "symbols", fmt.Sprintf("at most %d symbols", maxHeatmapSymbols))
		return nil
	}
	for _, s := range symbols {
		if !plainToken(s) {
			paramError(w, "symbols", "symbols are comma-separated names such as BTCUSDT")
			return nil
		}
	}
	for _, v := range venues {
		if !plainToken(v) {
			paramError(w, "venues", "venues are comma-separated names such as binance,bybit")
			return nil
		}
	}
	req := meter.Request{IP: web.ClientIP(r), Method: "funding_rate_heatmap"}
	if key, present := web.APIKey(r); present {
		if !meter.WellFormedKey(key) {
			web.Error(w, http.StatusUnauthorized, web.CodeInvalidKey, web.MsgMalformedKey)
			return nil
		}
		req.KeyHash = meter.HashKey(key)
	}
	price := h.intel.heatmapPrice
	mctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), payment.MeterTimeout)
	d, err := h.meter.AuthorizeMetric(mctx, req, price)
	cancel()
	if err != nil {
		metrics.MeterDecisions.WithLabelValues("unavailable").Inc()
		web.Unavailable(w, h.logger, err)
		return nil
	}
	metrics.MeterDecisions.WithLabelValues(d.Outcome.String()).Inc()
	w.Header().Set("X-Tollgate-Request-Id", d.ID)
	switch d.Outcome {
	case meter.PaymentRequired:
		h.payers.WritePaymentRequired(w, r, &d)
		return nil
	case meter.RateLimited:
		secs := meter.RetrySeconds(d.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		web.Error(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("too many requests; retry in %d s", secs))
		return nil
	case meter.Unauthorized:
		code, msg := web.CodeInvalidKey, web.MsgUnknownKey
		if d.Reason == "revoked_key" {
			code, msg = web.CodeRevokedKey, web.MsgRevokedKey
		}
		web.Error(w, http.StatusUnauthorized, code, msg)
		return nil
	case meter.Recovering:
		web.RecoveringREST(w)
		return nil
	}
	// Paid. From here every refusal gives the price back.
	refund := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), payment.MeterTimeout)
		defer cancel()
		if err := h.meter.RefundMetric(ctx, &d); err != nil {
			metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "error").Inc()
			h.logger.Error("metric refund failed", zap.String("request_id", d.ID), zap.String("account", d.Account), zap.Error(err))
			return
		}
		metrics.MeterRefunds.WithLabelValues(string(d.Payer()), "ok").Inc()
		d.Balance += price
	}
	hm, err := h.loadHeatmap(r.Context())
	switch {
	case err != nil:
		refund()
		h.logger.Warn("heatmap unavailable", zap.Error(err))
		w.Header().Set("Retry-After", "5")
		web.Error(w, http.StatusServiceUnavailable, "data_unavailable", "the heatmap store is unavailable; you were not charged; retry shortly")
		return nil
	case hm == nil:
		refund()
		w.Header().Set("Retry-After", "60")
		web.Error(w, http.StatusServiceUnavailable, "no_data", "no funding-rate data has been published yet; you were not charged")
		return nil
	}
	if len(symbols) == 0 {
		symbols = hm.Symbols
	}
	grid := hm.Windows[window.Name]
	for _, s := range symbols {
		if _, ok := grid.Rates[s]; !ok {
			refund()
			paramError(w, "symbols", fmt.Sprintf("unknown symbol %q; tracked: %s (you were not charged)", s, strings.Join(hm.Symbols, ",")))
			return nil
		}
	}
	all := sortedVenues(hm)
	if len(venues) == 0 {
		venues = all
	}
	for _, v := range venues {
		if _, ok := hm.Venues[v]; !ok {
			refund()
			paramError(w, "venues", fmt.Sprintf("unknown venue %q; known: %s (you were not charged)", v, strings.Join(all, ",")))
			return nil
		}
	}
	now := time.Now()
	age := now.Sub(hm.GeneratedAt)
	stale := age > intel.StaleAfter(pollOf(hm))
	venueInfo := make([]map[string]any, 0, len(venues))
	for _, v := range venues {
		st := hm.Venues[v]
		vs := st.Stale || stale
		if st.LastSuccess != nil && now.Sub(*st.LastSuccess) > intel.StaleAfter(pollOf(hm)) {
			vs = true // aged since publication
		}
		stale = stale || vs
		vi := map[string]any{"venue": v, "stale": vs, "last_success": nil}
		if st.LastSuccess != nil {
			vi["last_success"] = st.LastSuccess.UTC().Format(time.RFC3339)
		}
		if st.LastError != "" {
			vi["last_error"] = st.LastError
		}
		venueInfo = append(venueInfo, vi)
	}
	rates := make(map[string]map[string][]*intel.Rate, len(symbols))
	for _, s := range symbols {
		rates[s] = make(map[string][]*intel.Rate, len(venues))
		for _, v := range venues {
			cells := grid.Rates[s][v]
			if cells == nil {
				cells = make([]*intel.Rate, len(grid.Buckets))
			}
			rates[s][v] = cells
		}
	}
	buckets := make([]string, len(grid.Buckets))
	for i, b := range grid.Buckets {
		buckets[i] = b.UTC().Format(time.RFC3339)
	}
	// Nothing failed: Finish makes no Redis call, only the revenue event
	// (priced as the metric was charged).
	if f, _ := h.meter.Finish(r.Context(), &d, 0, events.ServedByIntelligence, now); f.Revenue != nil && !h.writer.Enqueue(f.Revenue) {
		h.logger.Warn("revenue event dropped", zap.String("request_id", d.ID))
	}
	w.Header().Set("X-Tollgate-Payer", string(d.Payer()))
	w.Header().Set("X-Tollgate-Credits-Remaining", d.Balance.Decimal())
	web.JSON(w, http.StatusOK, map[string]any{
		"metric":              intel.FundingHeatmap,
		"generated_at":        hm.GeneratedAt.UTC().Format(time.RFC3339),
		"age_seconds":         int64(max(age, 0) / time.Second),
		"stale":               stale,
		"stale_after_seconds": int64(intel.StaleAfter(pollOf(hm)) / time.Second),
		"window":              window.Name,
		"bucket_seconds":      grid.BucketSeconds,
		"buckets":             buckets,
		"symbols":             symbols,
		"venues":              venueInfo,
		"rates":               rates,
		"rate_note":           "funding rate per funding interval as a decimal string (rate) and in parts per billion (ppb); null: no observation in the bucket",
		"price":               priceOf(price),
	})
	return nil
}

// OpenAPI answers GET /openapi.yaml with the embedded docs/openapi.yaml.
func (h *Handler) OpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.openAPI)
	}
	return nil
}

// documentedRoutes is the route table as service.json and llms.txt show it
// for this config: the /rpc routes name its chains (with the built-in
// table, exactly the words the route table has).
func documentedRoutes(routes []web.Route, t *chains.Table) []web.Route {
	out := append([]web.Route(nil), routes...)
	if t == nil {
		return out
	}
	def := strconv.FormatUint(t.Default().ID, 10)
	for i := range out {
		switch out[i].Path {
		case "/rpc":
			out[i].Summary = "JSON-RPC 2.0 on chain " + def + " (single or batch); metered per call"
		case "/rpc/{chain}":
			out[i].Summary = "JSON-RPC 2.0 on another supported chain (" + othersThenDefault(t) + ")"
		}
	}
	return out
}

// othersThenDefault lists the chain ids as the route table words it: the
// other chains, then the default ("1, 42161, 8453, 80002, 137").
func othersThenDefault(t *chains.Table) string {
	all := t.All()
	ids := make([]string, 0, len(all))
	for _, c := range all[1:] {
		ids = append(ids, strconv.FormatUint(c.ID, 10))
	}
	return strings.Join(append(ids, strconv.FormatUint(all[0].ID, 10)), ", ")
}

// openAPIFor is docs/openapi.yaml with the chains it names made this
// config's: the document is written for the built-in table, which it then
// serves byte for byte.
func openAPIFor(t *chains.Table) []byte {
	b := chains.Builtin()
	if t == nil || (t.IDs() == b.IDs() && t.Names() == b.Names()) {
		return docs.OpenAPI
	}
	return []byte(strings.NewReplacer(
		"chain id ("+b.IDs()+") or, for stats, its name ("+b.Names()+")", "chain id ("+t.IDs()+") or, for stats, its name ("+t.Names()+")",
		"JSON-RPC 2.0 on another supported chain ("+othersThenDefault(b)+")", "JSON-RPC 2.0 on another supported chain ("+othersThenDefault(t)+")",
	).Replace(string(docs.OpenAPI)))
}
