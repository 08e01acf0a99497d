package main

import (
	"crypto/rand"
	"net/http"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/console"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/walletkeys"
)

// registerConsole adds the web console (GET /console, assets embedded from
// console/dist) and the wallet-bound key routes it uses
// (POST /api/keys/wallet/challenge, POST /api/keys/wallet). Settings
// (config.Auth):
//
//	TOLLGATE_AUTH_DOMAIN        EIP-4361 domain of the key message (required unless TOLLGATE_DEV=1:
//	                            without it the wallet-key routes answer 503)
//	TOLLGATE_JWT_SECRET         keys the challenges' signed nonces, as for the operators' login
//	                            (required: without it the wallet-key routes answer 503)
//	TOLLGATE_KEY_CREATE_LIMIT   wallet keys per client IP per hour, shared with the gateway's
//	                            key creation counter (default 10; "off": unlimited)
func registerConsole(d *daemon.Daemon, cfg *config.Config, log *zap.Logger) error {
	// The challenges' nonces are signed, not stored, with a key derived
	// from the JWT secret: the one secret every replica already shares. A
	// per-process key would fail every challenge answered at another
	// replica or after a restart, so without the secret the routes are off.
	secret, missing := []byte(cfg.Auth.JWTSecret), ""
	if len(secret) == 0 {
		secret = make([]byte, auth.MinSecretN) // placeholder: the routes answer 503
		_, _ = rand.Read(secret)
		missing = "TOLLGATE_JWT_SECRET"
		log.Warn("TOLLGATE_JWT_SECRET is not set: the wallet-key routes (POST /api/keys/wallet/challenge, POST /api/keys/wallet) answer 503")
	}
	if cfg.Auth.Domain == "" && !cfg.Auth.Dev {
		// Like the operator routes: a key message's domain is configuration,
		// never the request's Host (nodeapi.go logs why).
		missing = "TOLLGATE_AUTH_DOMAIN"
	}
	wk, err := walletkeys.New(walletkeys.Config{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Shards: cfg.RedisShards, Domain: cfg.Auth.Domain,
		Secret: secret, ChainID: cfg.Chain.ChainID, CreateLimit: cfg.Auth.KeyCreateLimit, Log: log.Named("walletkeys")})
	if err != nil {
		return err
	}
	handle := d.API().Handle
	if missing != "" {
		handle = func(pattern string, _ http.Handler) {
			d.API().Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				httpx.Error(w, http.StatusServiceUnavailable, "auth_not_configured", "wallet sign-in is not configured on this server ("+missing+")")
			}))
		}
	}
	wk.Register(handle)
	h := console.Handler()
	d.API().Handle("GET /console", h)
	d.API().Handle("GET /console/", h)
	return nil
}
