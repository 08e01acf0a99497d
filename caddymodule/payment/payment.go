// Package payment is the gateway's payments room: who pays for a JSON-RPC
// request and how the books close on it. Authorize runs the payers in
// DESIGN §4's order — an API key (credits or a bundle key's bundle), a
// Sign-In-With-X message (the wallet's bundle), an x402 payment (settled
// through the facilitator, then a bundle), the caller's free allowance —
// and answers refusals (401, 402, 429, 503) itself; Settle refunds what the
// upstream failed and queues the revenue event. The 402 answer, its x402
// offer and the onboarding an agent follows are written here too, so a
// change to how x402 works is a change to this package (and paycheck, its
// offline checks).
package payment

import (
	"net/http"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// DepositConfirmations is how many blocks settlementd waits before it
// credits a deposit (DESIGN §4).
const DepositConfirmations = 25

// Settings are the expanded, validated deposit and x402 settings.
type Settings struct {
	Vault, USDT            common.Address
	MinDeposit, MaxDeposit money.Units
	Explorer               string
	// Asset and PayTo are the x402 offer: USDC on Base and its receiver.
	Asset, PayTo string
	// PublicURL is the gateway's external base URL ("" = the request's).
	PublicURL string
	// Settlementd is settlementd's base URL as the gateway reaches it
	// ("" if not configured); Facilitator the x402 facilitator URL
	// service.json advertises and payments settle through when set.
	Settlementd, Facilitator string
}

// BaseURL is the gateway's external base URL for r.
func (s *Settings) BaseURL(r *http.Request) string { return web.BaseURL(r, s.PublicURL) }

// Handler decides who pays and closes the books of paid requests.
type Handler struct {
	meter  *meter.Meter
	writer *meter.EventWriter
	pay    *Settings
	logger *zap.Logger
}

// New builds the payments room. m and w must be set (metering on).
func New(m *meter.Meter, w *meter.EventWriter, s *Settings, log *zap.Logger) *Handler {
	return &Handler{meter: m, writer: w, pay: s, logger: log}
}
