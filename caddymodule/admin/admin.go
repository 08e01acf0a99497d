// Package admin is the gateway's operator room (/admin/*, gateway
// ops): endpoints gated by the X-Admin-Token header that revoke,
// credit and debit keys, set the runtime free-tier limits, show and reset
// upstream pools and probe a chain. Other /admin/* paths belong to
// settlementd and are passed on to the next handler.
package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/httpx"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Config is what the admin room is given by the gateway.
type Config struct {
	// Token is the admin token, expanded; empty means admin does not exist.
	Token string
	// Meter is nil when metering is off.
	Meter *meter.Meter
	// Chains is the gateway's chain table.
	Chains *chains.Table
	// Pools holds every served chain's upstream pool.
	Pools map[uint64]*upstream.Pool
	// RequestTimeout bounds a probe.
	RequestTimeout time.Duration
	Log            *zap.Logger
}

// Handler serves the gateway's admin routes.
type Handler struct {
	log            *zap.Logger
	meter          *meter.Meter
	token          httpx.AdminToken // the check both binaries make
	table          *chains.Table
	chains         map[uint64]chainState
	requestTimeout time.Duration
}

type chainState struct {
	chain chains.Chain
	pool  *upstream.Pool
}

// New builds the admin room.
func New(c Config) *Handler {
	h := &Handler{log: c.Log, meter: c.Meter, token: httpx.NewAdminToken(c.Token), table: c.Chains, chains: map[uint64]chainState{}, requestTimeout: c.RequestTimeout}
	for id, p := range c.Pools {
		ch, _ := c.Chains.ByID(id)
		h.chains[id] = chainState{chain: ch, pool: p}
	}
	return h
}

// Gateway admin (/admin/*, gateway ops): operator endpoints
// gated by the X-Admin-Token header.
//
//	POST   /admin/keys/{key_id}/revoke           {reason}
//	POST   /admin/keys/{key_id}/credit           {amount_units | amount_usdt, reason, [id]}
//	POST   /admin/keys/{key_id}/debit            {amount_units | amount_usdt, reason, [id]}
//	GET    /admin/free-tier                      limits in force and where they come from
//	PUT    /admin/free-tier                      {daily_limit_per_ip, subnet_limit}
//	DELETE /admin/free-tier                      back to the Caddyfile's limits
//	GET    /admin/upstreams[/{chain}]            pool snapshots (breakers, health, latency)
//	POST   /admin/upstreams/{chain}/{name}/reset close one upstream's breaker
//	POST   /admin/upstreams/{chain}/{name}/unquarantine  return a quarantined node to traffic
//
// Other /admin/* paths belong to settlementd (settlement ops) and are passed
// on to the next handler, which the Caddyfile proxies there.

const (
	adminHeader          = httpx.AdminHeader
	maxAdminRequestBytes = 4 << 10
	// maxAdjustment is a typo guard on one admin credit or debit.
	maxAdjustment = 1_000_000 * money.Scale
)

// isAdminPath reports whether p is one of the gateway's admin endpoints (or
// below one), as opposed to settlementd's part of /admin/*.
func IsAdminPath(p string) bool {
	for _, root := range []string{"/admin/keys", "/admin/free-tier", "/admin/upstreams", "/admin/probe"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// ServeHTTP authenticates and routes an admin request. Without a
// configured token admin does not exist: 404, not 401, so an unconfigured
// gateway does not even advertise it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if !IsAdminPath(r.URL.Path) {
		return next.ServeHTTP(w, r)
	}
	if !h.token.Enabled() {
		web.Error(w, http.StatusNotFound, "not_found", "no such endpoint")
		return nil
	}
	presented := r.Header.Get(adminHeader)
	if !h.token.Match(presented) {
		metrics.AdminActions.WithLabelValues("auth", "unauthorized").Inc()
		// The presented value is never logged: it may be a near-miss of the real token.
		h.log.Warn("admin request refused: missing or wrong "+adminHeader,
			zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("client_ip", web.ClientIP(r).String()), zap.Bool("token_present", presented != ""))
		code := "invalid_admin_token"
		if presented == "" {
			code = "missing_admin_token"
		}
		web.Error(w, http.StatusUnauthorized, code, "send the gateway's admin token in the "+adminHeader+" header")
		return nil
	}
	seg := strings.Split(strings.TrimPrefix(r.URL.Path, "/admin/"), "/")
	switch {
	case seg[0] == "keys" && len(seg) == 3:
		return h.adminKey(w, r, seg[1], seg[2])
	case seg[0] == "free-tier" && len(seg) == 1:
		return h.adminFreeTier(w, r)
	case seg[0] == "upstreams" && len(seg) <= 2:
		chain := ""
		if len(seg) == 2 {
			chain = seg[1]
		}
		return onlyMethod(w, r, http.MethodGet, func() error { return h.adminUpstreams(w, chain) })
	case seg[0] == "probe" && len(seg) == 2:
		return h.adminProbe(w, r, seg[1])
	case seg[0] == "upstreams" && len(seg) == 4 && seg[3] == "reset":
		return onlyMethod(w, r, http.MethodPost, func() error { return h.adminResetBreaker(w, r, seg[1], seg[2]) })
	case seg[0] == "upstreams" && len(seg) == 4 && seg[3] == "unquarantine":
		return onlyMethod(w, r, http.MethodPost, func() error { return h.adminUnquarantine(w, r, seg[1], seg[2]) })
	}
	web.Error(w, http.StatusNotFound, "not_found", "no such admin endpoint")
	return nil
}

func onlyMethod(w http.ResponseWriter, r *http.Request, method string, fn func() error) error {
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", method)
		web.Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "use "+method)
		return nil
	}
	return fn()
}

// adminLog records an admin action: what, on what, the outcome. Never the
// token (serveAdmin has checked it and does not pass it on).
func (h *Handler) adminLog(r *http.Request, action, outcome string, fields ...zap.Field) {
	metrics.AdminActions.WithLabelValues(action, outcome).Inc()
	fields = append([]zap.Field{zap.String("action", action), zap.String("outcome", outcome),
		zap.String("client_ip", web.ClientIP(r).String())}, fields...)
	h.log.Info("admin action", fields...)
}

// adminMeter returns the meter for endpoints that need one, answering
// itself when metering is off.
func (h *Handler) adminMeter(w http.ResponseWriter) (*meter.Meter, bool) {
	if h.meter == nil {
		web.Error(w, http.StatusNotFound, "metering_off", "this gateway runs without metering: keys and the free tier are not managed here")
		return nil, false
	}
	return h.meter, true
}

// adminKey serves POST /admin/keys/{key_id}/{revoke|credit|debit}.
func (h *Handler) adminKey(w http.ResponseWriter, r *http.Request, keyID, action string) error {
	if action != "revoke" && action != "credit" && action != "debit" {
		web.Error(w, http.StatusNotFound, "not_found", "no such admin endpoint; use revoke, credit or debit")
		return nil
	}
	return onlyMethod(w, r, http.MethodPost, func() error {
		m, ok := h.adminMeter(w)
		if !ok {
			return nil
		}
		if err := accounts.Validate(keyID); err != nil {
			(&web.FieldError{Field: "key_id", Code: "invalid_field", Message: "must be an account id: key_ followed by 26 ULID characters"}).Write(w)
			return nil
		}
		if action == "revoke" {
			return h.adminRevoke(w, r, m, keyID)
		}
		return h.adminAdjust(w, r, m, keyID, action == "debit")
	})
}

func (h *Handler) adminRevoke(w http.ResponseWriter, r *http.Request, m *meter.Meter, keyID string) error {
	f, ferr := readAdminBody(r, "reason")
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	reason, ferr := f.reason()
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	changed, err := m.Revoke(r.Context(), keyID, reason)
	switch {
	case errors.Is(err, meter.ErrUnknownAccount):
		h.adminLog(r, "revoke", "unknown_key", zap.String("key_id", keyID))
		web.Error(w, http.StatusNotFound, "unknown_key", "no key "+keyID)
		return nil
	case err != nil:
		web.Unavailable(w, h.log, err)
		return nil
	}
	outcome := "revoked"
	if !changed {
		outcome = "already_revoked"
	}
	h.adminLog(r, "revoke", outcome, zap.String("key_id", keyID), zap.String("reason", reason))
	web.JSON(w, http.StatusOK, map[string]any{"key_id": keyID, "status": "revoked", "changed": changed, "reason": reason})
	return nil
}

func (h *Handler) adminAdjust(w http.ResponseWriter, r *http.Request, m *meter.Meter, keyID string, debit bool) error {
	action := "credit"
	if debit {
		action = "debit"
	}
	f, ferr := readAdminBody(r, "amount_units", "amount_usdt", "reason", "id")
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	amount, ferr := f.amount()
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	reason, ferr := f.reason()
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	id, ferr := f.adjustmentID()
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	units := amount
	if debit {
		units = -amount
	}
	res, err := m.Adjust(r.Context(), meter.Adjustment{ID: id, Account: keyID, Units: units, Reason: reason})
	logFields := []zap.Field{zap.String("key_id", keyID), zap.String("adjustment_id", res.ID),
		zap.String("units", units.String()), zap.String("reason", reason)}
	var low *meter.ErrInsufficientBalance
	switch {
	case errors.Is(err, meter.ErrUnknownAccount):
		h.adminLog(r, action, "unknown_key", zap.String("key_id", keyID))
		web.Error(w, http.StatusNotFound, "unknown_key", "no key "+keyID)
		return nil
	case errors.As(err, &low):
		h.adminLog(r, action, "insufficient_balance", logFields...)
		web.Error(w, http.StatusConflict, "insufficient_balance",
			"the debit of "+amount.Decimal()+" USDT would take the balance ("+low.Balance.Decimal()+" USDT) below zero")
		return nil
	case errors.Is(err, meter.ErrAdjustmentConflict):
		h.adminLog(r, action, "conflict", logFields...)
		web.Error(w, http.StatusConflict, "adjustment_conflict", "id "+id+" was already used for another account or amount")
		return nil
	case err != nil:
		web.Unavailable(w, h.log, err)
		return nil
	}
	outcome := "applied"
	if !res.Applied {
		outcome = "already_applied"
	}
	h.adminLog(r, action, outcome, logFields...)
	status := "active"
	if res.Revoked {
		status = "revoked"
	}
	web.JSON(w, http.StatusOK, map[string]any{
		"id":            res.ID,
		"key_id":        keyID,
		"applied":       res.Applied,
		"units":         units.String(),
		"amount_usdt":   money.USDT(units),
		"reason":        reason,
		"balance_units": res.Balance.String(),
		"balance_usdt":  money.USDT(res.Balance),
		"key_status":    status,
	})
	return nil
}

// adminFreeTier serves GET, PUT and DELETE /admin/free-tier.
func (h *Handler) adminFreeTier(w http.ResponseWriter, r *http.Request) error {
	m, ok := h.adminMeter(w)
	if !ok {
		return nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut:
		f, ferr := readAdminBody(r, "daily_limit_per_ip", "subnet_limit")
		if ferr != nil {
			ferr.Write(w)
			return nil
		}
		var l meter.FreeLimits
		for _, p := range []struct {
			name string
			dst  *int64
		}{{"daily_limit_per_ip", &l.DailyPerIP}, {"subnet_limit", &l.Subnet}} {
			n, ferr := f.limit(p.name)
			if ferr != nil {
				ferr.Write(w)
				return nil
			}
			*p.dst = n
		}
		if err := m.SetFreeLimits(r.Context(), l); err != nil {
			web.Unavailable(w, h.log, err)
			return nil
		}
		h.adminLog(r, "set_free_tier", "applied", zap.Int64("daily_limit_per_ip", l.DailyPerIP), zap.Int64("subnet_limit", l.Subnet))
	case http.MethodDelete:
		if err := m.ClearFreeLimits(r.Context()); err != nil {
			web.Unavailable(w, h.log, err)
			return nil
		}
		h.adminLog(r, "clear_free_tier", "applied")
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		web.Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET, PUT or DELETE")
		return nil
	}
	l, override, err := m.FreeLimits(r.Context())
	if err != nil {
		web.Unavailable(w, h.log, err)
		return nil
	}
	source := "config"
	if override {
		source = "admin"
	}
	cfg := m.ConfigLimits()
	web.JSON(w, http.StatusOK, map[string]any{
		"daily_limit_per_ip": l.DailyPerIP,
		"subnet_limit":       l.Subnet,
		"source":             source,
		"config":             map[string]int64{"daily_limit_per_ip": cfg.DailyPerIP, "subnet_limit": cfg.Subnet},
	})
	return nil
}

// adminChain resolves the {chain} path segment (a name or an id).
func (h *Handler) adminChain(w http.ResponseWriter, which string) (chainState, bool) {
	c, err := h.table.Lookup(which)
	if err != nil {
		web.Error(w, http.StatusNotFound, "unknown_chain", "unknown chain "+web.Truncate(which, 32)+"; use a name ("+h.table.Names()+") or a chain id")
		return chainState{}, false
	}
	return h.chains[c.ID], true
}

// adminUpstreams serves GET /admin/upstreams[/{chain}]: every chain's pool
// snapshot (health, breaker, latency, last error; URLs as scheme://host only).
func (h *Handler) adminUpstreams(w http.ResponseWriter, which string) error {
	type chainPool struct {
		ChainID uint64            `json:"chain_id"`
		Name    string            `json:"name"`
		Pool    upstream.Snapshot `json:"pool"`
	}
	if which != "" {
		cs, ok := h.adminChain(w, which)
		if !ok {
			return nil
		}
		web.JSON(w, http.StatusOK, chainPool{cs.chain.ID, cs.chain.Name, cs.pool.Snapshot()})
		return nil
	}
	var out []chainPool
	for _, c := range h.table.All() {
		cs := h.chains[c.ID]
		out = append(out, chainPool{c.ID, c.Name, cs.pool.Snapshot()})
	}
	web.JSON(w, http.StatusOK, map[string]any{"chains": out})
	return nil
}

// adminResetBreaker serves POST /admin/upstreams/{chain}/{name}/reset.
func (h *Handler) adminResetBreaker(w http.ResponseWriter, r *http.Request, which, name string) error {
	cs, ok := h.adminChain(w, which)
	if !ok {
		return nil
	}
	prev, err := cs.pool.ResetBreaker(name)
	if errors.Is(err, upstream.ErrUnknownUpstream) {
		web.Error(w, http.StatusNotFound, "unknown_upstream", "chain "+metrics.Chain(cs.chain.ID)+" has no upstream "+web.Truncate(name, 64))
		return nil
	}
	if err != nil {
		return err
	}
	h.adminLog(r, "reset_breaker", "applied", zap.Uint64("chain_id", cs.chain.ID), zap.String("upstream", name), zap.String("from", string(prev)))
	web.JSON(w, http.StatusOK, map[string]any{"chain_id": cs.chain.ID, "upstream": name, "previous_state": prev, "state": upstream.BreakerClosed})
	return nil
}

// adminUnquarantine serves POST /admin/upstreams/{chain}/{name}/unquarantine:
// after an operator's review, a node quarantined on this gateway (its
// answer differed from a configured provider's) gets traffic again. The
// quarantine settlementd records (the registry) is lifted there.
func (h *Handler) adminUnquarantine(w http.ResponseWriter, r *http.Request, which, name string) error {
	cs, ok := h.adminChain(w, which)
	if !ok {
		return nil
	}
	reason, was := cs.pool.Quarantined(name)
	if !was {
		web.Error(w, http.StatusNotFound, "not_quarantined", "chain "+metrics.Chain(cs.chain.ID)+" has no quarantined upstream "+web.Truncate(name, 64))
		return nil
	}
	cs.pool.Unquarantine(name)
	h.adminLog(r, "unquarantine", "applied", zap.Uint64("chain_id", cs.chain.ID), zap.String("upstream", name), zap.String("reason", reason))
	web.JSON(w, http.StatusOK, map[string]any{"chain_id": cs.chain.ID, "upstream": name, "quarantined": false, "was": reason})
	return nil
}

// adminFields is a parsed admin request body: raw values of known fields.
type adminFields map[string]json.RawMessage

// readAdminBody reads a strict JSON object body: known fields only, each at
// most once, like the key-creation bodies (a typo must be an error, not a
// silently ignored option on an operator's money action).
func readAdminBody(r *http.Request, allowed ...string) (adminFields, *web.FieldError) {
	bodyErr := func(msg string) *web.FieldError {
		return &web.FieldError{Field: "body", Code: "invalid_json", Message: msg}
	}
	body, err := web.ReadLimited(r.Body, maxAdminRequestBytes)
	if errors.Is(err, web.ErrTooLarge) {
		return nil, &web.FieldError{Field: "body", Code: "too_large", Message: "must be at most 4 KiB", Status: http.StatusRequestEntityTooLarge}
	} else if errors.Is(err, web.ErrBodyTimeout) {
		return nil, &web.FieldError{Field: "body", Code: "body_timeout", Message: "did not arrive in time", Status: http.StatusRequestTimeout}
	} else if err != nil {
		return nil, bodyErr("could not be read")
	}
	if !utf8.Valid(body) {
		return nil, bodyErr("must be UTF-8 JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bodyErr("must be a JSON object")
	}
	out := adminFields{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bodyErr("is not valid JSON")
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bodyErr("is not valid JSON")
		}
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		if !known {
			return nil, &web.FieldError{Field: web.Printable(name), Code: "unknown_field", Message: "unknown field; allowed: " + strings.Join(allowed, ", ")}
		}
		if _, dup := out[name]; dup {
			return nil, &web.FieldError{Field: name, Code: "duplicate_field", Message: "given more than once"}
		}
		if string(raw) != "null" {
			out[name] = raw
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, bodyErr("is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bodyErr("must hold exactly one JSON object")
	}
	return out, nil
}

// literal returns a field given as a JSON string or a bare JSON number, as
// text: amounts are parsed from the digits, never through float64.
func (f adminFields) literal(name string) (string, bool, *web.FieldError) {
	raw, ok := f[name]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true, nil
	}
	return "", true, &web.FieldError{Field: name, Code: "invalid_field", Message: "must be a number or a decimal string"}
}

// amount reads exactly one of amount_units (base units) and amount_usdt
// (decimal USDT), positive and at most maxAdjustment.
func (f adminFields) amount() (money.Units, *web.FieldError) {
	u, hasU, ferr := f.literal("amount_units")
	if ferr != nil {
		return 0, ferr
	}
	d, hasD, ferr := f.literal("amount_usdt")
	if ferr != nil {
		return 0, ferr
	}
	var (
		field = "amount_units"
		v     money.Units
		err   error
	)
	switch {
	case hasU && hasD:
		return 0, &web.FieldError{Field: "amount_usdt", Code: "conflicting_fields", Message: "give amount_units or amount_usdt, not both"}
	case hasU:
		v, err = money.ParseUnits(u)
	case hasD:
		field = "amount_usdt"
		v, err = money.Parse(d)
	default:
		return 0, &web.FieldError{Field: "amount_units", Code: "missing_field", Message: `is required (or amount_usdt): e.g. "amount_units":"1000000" or "amount_usdt":"1"`}
	}
	switch {
	case err != nil:
		msg := "must be a positive integer of base units (1 USDT = 1000000)"
		if field == "amount_usdt" {
			msg = "must be a positive decimal USDT amount with at most 6 decimals"
		}
		return 0, &web.FieldError{Field: field, Code: "invalid_field", Message: msg}
	case v <= 0:
		return 0, &web.FieldError{Field: field, Code: "invalid_field", Message: "must be positive"}
	case v > maxAdjustment:
		return 0, &web.FieldError{Field: field, Code: "invalid_field", Message: "must be at most " + maxAdjustment.Decimal() + " USDT per adjustment"}
	}
	return v, nil
}

// reason reads the required reason of an operator action.
func (f adminFields) reason() (string, *web.FieldError) {
	raw, ok := f["reason"]
	if !ok {
		return "", &web.FieldError{Field: "reason", Code: "missing_field", Message: "is required: say why, for the ledger and the log"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &web.FieldError{Field: "reason", Code: "invalid_field", Message: "must be a string"}
	}
	if err := events.ValidReason(s); err != nil {
		return "", &web.FieldError{Field: "reason", Code: "invalid_field", Message: "must be 1 to 200 characters, not only spaces, without control characters"}
	}
	return s, nil
}

// adjustmentID reads the optional idempotency id of a credit or debit.
func (f adminFields) adjustmentID() (string, *web.FieldError) {
	raw, ok := f["id"]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || !meter.ValidAdjustmentID(s) {
		return "", &web.FieldError{Field: "id", Code: "invalid_field", Message: "must be 1 to 64 of A-Z a-z 0-9 . _ : - (a retry with the same id applies once)"}
	}
	return s, nil
}

// limit reads a required free-tier limit: a whole number 0..MaxFreeLimit.
func (f adminFields) limit(name string) (int64, *web.FieldError) {
	raw, ok := f[name]
	if !ok {
		return 0, &web.FieldError{Field: name, Code: "missing_field", Message: "is required (PUT sets daily_limit_per_ip and subnet_limit together)"}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 || n > meter.MaxFreeLimit {
		return 0, &web.FieldError{Field: name, Code: "invalid_field", Message: "must be a whole number from 0 (free tier off) to " + strconv.FormatInt(meter.MaxFreeLimit, 10)}
	}
	return n, nil
}

// probeCall is what an operator's probe asks: the chain's head, a call every
// upstream answers and no cache can answer for long.
var probeCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)

// adminProbe serves POST /admin/probe/{chain}: one eth_blockNumber sent
// through the chain's upstream pool — the path a paid call takes (selection,
// breakers, failover, the upstream's transport), without metering and
// without the edge cache. It is what settlementd's gateway-health sampler
// measures: a monitor that called /rpc keyless would spend its own IP's free
// tier and then count the gateway's 402 as "up"; one with a key would pay
// the platform's revenue to itself.
//
// 200 {"chain_id", "upstream", "block_number", "latency_ms"} when an
// upstream answered with a block number; 503 upstream_unavailable otherwise,
// with the reason.
func (h *Handler) adminProbe(w http.ResponseWriter, r *http.Request, which string) error {
	return onlyMethod(w, r, http.MethodPost, func() error {
		cs, ok := h.adminChain(w, which)
		if !ok {
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.requestTimeout)
		defer cancel()
		began := time.Now()
		res, err := cs.pool.Forward(ctx, probeCall, upstream.ForwardOptions{})
		latency := time.Since(began)
		if err != nil {
			web.Error(w, http.StatusServiceUnavailable, "upstream_unavailable", "no upstream of chain "+cs.chain.HexID()+" answered the probe")
			return nil
		}
		var reply struct {
			Result string          `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(res.Body, &reply) != nil || reply.Result == "" {
			web.Error(w, http.StatusServiceUnavailable, "upstream_unavailable", "upstream "+res.Upstream.EventName()+" did not answer eth_blockNumber with a block number")
			return nil
		}
		web.JSON(w, http.StatusOK, map[string]any{"chain_id": cs.chain.ID, "upstream": res.Upstream.EventName(),
			"block_number": reply.Result, "latency_ms": float64(latency.Microseconds()) / 1000})
		return nil
	})
}
