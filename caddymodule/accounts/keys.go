package accounts

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// FreeTierStats answers GET /stats/free-tier.
func (h *Handler) FreeTierStats(w http.ResponseWriter, r *http.Request) error {
	st, err := h.meter.Stats(r.Context())
	if err != nil {
		web.Unavailable(w, h.logger, err)
		return nil
	}
	web.JSON(w, http.StatusOK, map[string]any{
		"date":                 st.Date,
		"active_ips_today":     st.ActiveIPs,
		"total_calls_today":    st.Calls,
		"near_limit_ips":       st.NearLimitIPs,
		"near_limit_threshold": st.NearThreshold,
		"daily_limit_per_ip":   st.Limits.DailyPerIP,
		"subnet_limit":         st.Limits.Subnet,
		"resets_at":            meter.NextReset(h.meter.Now()).Format(time.RFC3339),
	})
	return nil
}

// CreateKey answers POST /api/keys and POST /v1/machine/register.
func (h *Handler) CreateKey(w http.ResponseWriter, r *http.Request, machine bool) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		web.Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
		return nil
	}
	body, err := web.ReadLimited(r.Body, maxKeyRequestBytes)
	if errors.Is(err, web.ErrBodyTimeout) {
		web.BodyTimeout(w, false, h.bodyTimeout)
		return nil
	}
	if errors.Is(err, web.ErrTooLarge) {
		web.Error(w, http.StatusRequestEntityTooLarge, "too_large", "the body must be at most 4 KiB")
		return nil
	} else if err != nil {
		web.Error(w, http.StatusBadRequest, "invalid_json", "body: could not be read")
		return nil
	}
	kr, ferr := parseKeyRequest(body, machine)
	if ferr != nil {
		ferr.Write(w)
		return nil
	}
	kind := events.KeyAPI
	if machine {
		kind = events.KeyMachine
	}
	k, err := h.meter.CreateKey(r.Context(), meter.NewKeyRequest{Kind: kind, Label: kr.Label, Tier: kr.Tier,
		Email: kr.Email, EmailConsent: kr.EmailConsent, IP: web.ClientIP(r)})
	var lim *meter.ErrCreateLimited
	switch {
	case errors.As(err, &lim):
		metrics.MeterDecisions.WithLabelValues("create_limited").Inc()
		secs := meter.RetrySeconds(lim.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		cfg := h.meter.Config()
		web.Error(w, http.StatusTooManyRequests, "rate_limited",
			fmt.Sprintf("at most %d keys per IP per %s; retry in %d s", cfg.CreateLimit, cfg.CreateWindow, secs))
		return nil
	case err != nil:
		web.Unavailable(w, h.logger, err)
		return nil
	}
	metrics.KeysCreated.WithLabelValues(string(kind)).Inc()
	base := h.pay.BaseURL(r)
	out := map[string]any{
		"api_key":     k.Secret,
		"key_id":      k.ID,
		"tier":        kr.Tier,
		"label":       kr.Label,
		"kind":        string(kind),
		"created_at":  k.Created.UTC().Format(time.RFC3339),
		"note":        "store api_key now: it is shown only this once and cannot be recovered; send it as the X-API-Key header",
		"usage_url":   base + "/api/keys/usage",
		"deposit_url": base + "/credits/initiate?amount=" + h.pay.MinDeposit.Decimal() + "&key_id=" + k.ID,
	}
	if !machine && kr.Email != "" {
		out["email"], out["email_consent"] = kr.Email, kr.EmailConsent
	}
	web.JSON(w, http.StatusCreated, out)
	return nil
}

// Usage answers GET /api/keys/usage.
func (h *Handler) Usage(w http.ResponseWriter, r *http.Request) error {
	u, ok := h.Authenticate(w, r)
	if !ok {
		return nil
	}
	out := map[string]any{
		"key_id":                  u.KeyID,
		"tier":                    u.Tier,
		"daily_limit":             u.DailyLimit,
		"requests_today":          u.RequestsToday,
		"total_spend_usdt":        money.USDT(u.Spent),
		"credits_remaining_usdt":  money.USDT(u.Balance),
		"credits_remaining_calls": int64(u.Balance / money.PricePerCall),
		// A weighted method's call draws its weight in calls.
		"method_weights": h.pay.AllWeights(),
	}
	if u.Wallet != "" {
		// A bundle key has no credits: its calls are its wallet's x402 bundle's.
		left, err := h.meter.BundleLeft(r.Context(), u.Wallet)
		if err != nil {
			web.Unavailable(w, h.logger, err)
			return nil
		}
		out["bundle"] = map[string]any{"wallet": u.Wallet, "calls_remaining": left}
	}
	web.JSON(w, http.StatusOK, out)
	return nil
}

// Authenticate resolves X-API-Key for a REST endpoint, answering 401 or 503
// itself when it cannot.
func (h *Handler) Authenticate(w http.ResponseWriter, r *http.Request) (meter.Usage, bool) {
	key, present := web.APIKey(r)
	if !present || key == "" {
		w.Header().Set("WWW-Authenticate", `APIKey header="X-API-Key"`)
		web.Error(w, http.StatusUnauthorized, "missing_api_key", "send your API key in the X-API-Key header")
		return meter.Usage{}, false
	}
	if !meter.WellFormedKey(key) {
		web.Error(w, http.StatusUnauthorized, web.CodeInvalidKey, web.MsgMalformedKey)
		return meter.Usage{}, false
	}
	u, st, err := h.meter.Usage(r.Context(), meter.HashKey(key))
	switch {
	case err != nil:
		web.Unavailable(w, h.logger, err)
		return u, false
	case st == meter.KeyUnknown:
		web.Error(w, http.StatusUnauthorized, web.CodeInvalidKey, web.MsgUnknownKey)
		return u, false
	case st == meter.KeyRevoked:
		web.Error(w, http.StatusUnauthorized, web.CodeRevokedKey, web.MsgRevokedKey)
		return u, false
	case st == meter.KeyRecovering:
		web.RecoveringREST(w)
		return u, false
	}
	return u, true
}
