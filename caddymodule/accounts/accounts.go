// Package accounts is the gateway's accounts room: API keys (POST
// /api/keys, POST /v1/machine/register, GET /api/keys/usage), the deposit
// instructions that turn USDT into a key's credits (GET /credits/initiate)
// and the free tier's public statistics. Authenticate is the one check of
// X-API-Key for the REST routes; /rpc checks keys in the metering script
// (package payment), where the check and the debit are one round trip.
package accounts

import (
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Handler serves the accounts routes.
type Handler struct {
	meter       *meter.Meter
	pay         *payment.Settings
	logger      *zap.Logger
	bodyTimeout time.Duration
}

// New builds the accounts room; m is the gateway's meter (metering on).
func New(m *meter.Meter, s *payment.Settings, bodyTimeout time.Duration, log *zap.Logger) *Handler {
	return &Handler{meter: m, pay: s, logger: log, bodyTimeout: bodyTimeout}
}
