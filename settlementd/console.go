package main

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/console"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chainjobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/walletkeys"
)

// registerConsole adds the web console (GET /console, assets embedded from
// console/dist) and the wallet-bound key routes it uses
// (POST /api/keys/wallet/challenge, POST /api/keys/wallet):
//
//	TOLLGATE_AUTH_DOMAIN        EIP-4361 domain of the key message (required unless TOLLGATE_DEV=1:
//	                            without it the wallet-key routes answer 503)
//	TOLLGATE_KEY_CREATE_LIMIT   wallet keys per client IP per hour, shared with the gateway's
//	                            key creation counter (default 10; "off": unlimited)
func registerConsole(d *daemon.Daemon, cfg *config.Config, log *zap.Logger, getenv func(string) string) error {
	s, err := chainjobs.FromEnv(getenv)
	if err != nil {
		return err
	}
	limit := 0
	switch v := strings.TrimSpace(getenv("TOLLGATE_KEY_CREATE_LIMIT")); v {
	case "":
	case "off":
		limit = -1
	default:
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			return errors.New("TOLLGATE_KEY_CREATE_LIMIT must be a positive integer or off")
		}
	}
	wk, err := walletkeys.New(walletkeys.Config{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Domain: getenv("TOLLGATE_AUTH_DOMAIN"),
		ChainID: s.ChainID, CreateLimit: limit, Log: log.Named("walletkeys")})
	if err != nil {
		return err
	}
	handle := d.API().Handle
	if strings.TrimSpace(getenv("TOLLGATE_AUTH_DOMAIN")) == "" && getenv("TOLLGATE_DEV") != "1" {
		// Like the operator routes: a key message's domain is configuration,
		// never the request's Host (nodeapi.go logs why).
		handle = func(pattern string, _ http.Handler) {
			d.API().Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				httpx.Error(w, http.StatusServiceUnavailable, "auth_not_configured", "wallet sign-in is not configured on this server (TOLLGATE_AUTH_DOMAIN)")
			}))
		}
	}
	wk.Register(handle)
	h := console.Handler()
	d.API().Handle("GET /console", h)
	d.API().Handle("GET /console/", h)
	return nil
}
