// Package payment is the gateway's payments room: who pays for a JSON-RPC
// request and how the books close on it. Authorize runs the payers in
// this order — an API key (credits or a bundle key's bundle), a
// Sign-In-With-X message (the wallet's bundle), an x402 payment (settled
// through the facilitator, then a bundle), the caller's free allowance —
// and answers refusals (401, 402, 429, 503) itself; Settle refunds what the
// upstream failed and queues the revenue event. The 402 answer, its x402
// offer and the onboarding an agent follows are written here too, so a
// change to how x402 works is a change to this package (and paycheck, its
// offline checks).
package payment

import (
	"cmp"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/devaccounts"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// DepositConfirmations is how many blocks settlementd waits before it
// credits a deposit.
const DepositConfirmations = 25

// Settings are the expanded, validated deposit and x402 settings.
type Settings struct {
	Vault, USDT            common.Address
	MinDeposit, MaxDeposit money.Units
	Explorer               string
	// Asset and PayTo are the x402 offer: USDC on Base and its receiver.
	Asset, PayTo string
	// asset and payTo are Asset and PayTo as read at provisioning
	// (MoneyAddress): the batch offer compares channels with them, so the
	// settings are parsed once, by the one address reader.
	asset, payTo common.Address
	// ReceiverAuthorizer, when not zero, adds the batch-settlement offer:
	// the channels' receiverAuthorizer (settlementd holds its key).
	ReceiverAuthorizer common.Address
	// PublicURL is the gateway's external base URL ("" = the request's).
	PublicURL string
	// Settlementd is settlementd's base URL as the gateway reaches it
	// ("" if not configured); Facilitator the x402 facilitator URL
	// service.json advertises and payments settle through when set.
	Settlementd, Facilitator string
	// SettlementdSecret authenticates the gateway to settlementd (its
	// TOLLGATE_GATEWAY_SECRET); sent only on requests to Settlementd.
	SettlementdSecret string
	// MethodWeights are the methods each chain (by decimal id) weights
	// other than 1: a call of such a method costs its weight times the
	// flat price. Shown in the 402, service.json and a key's usage; empty
	// when every call costs the flat price.
	MethodWeights map[string]map[string]uint32
}

// WeightsOf is the weights of one chain (never nil, so it shows as {}).
func (s *Settings) WeightsOf(chainID uint64) map[string]uint32 {
	if w := s.MethodWeights[strconv.FormatUint(chainID, 10)]; w != nil {
		return w
	}
	return map[string]uint32{}
}

// AllWeights is MethodWeights, never nil.
func (s *Settings) AllWeights() map[string]map[string]uint32 {
	if s.MethodWeights == nil {
		return map[string]map[string]uint32{}
	}
	return s.MethodWeights
}

// NewSettings expands (placeholders through expand) and checks the
// payments section of the configuration. Every address here moves or
// receives money, so outside the dev profile (dev false) each must be
// written in its EIP-55 checksummed form (a typo is caught, not paid to),
// must not be the zero address, and must not be a dev chain account or a
// contract one of them deployed: their keys are public and the dev chains
// reuse the real ids 137 and 8453. The error names the setting.
func NewSettings(c config.Payments, expand func(string) string, dev bool) (Settings, error) {
	var s Settings
	addr := func(name, raw string) (common.Address, error) {
		return MoneyAddress(name, raw, expand(raw), dev)
	}
	var err error
	if s.Vault, err = addr("vault_address", c.VaultAddress); err != nil {
		return s, err
	}
	if s.USDT, err = addr("usdt_address", c.USDTAddress); err != nil {
		return s, err
	}
	asset, payTo := c.X402Asset, common.Address{}
	if asset == "" {
		asset = BaseUSDCMainnet
	}
	a, err := addr("x402_asset", asset)
	if err != nil {
		return s, err
	}
	if payTo, err = addr("x402_pay_to", c.X402PayTo); err != nil {
		return s, err
	}
	s.asset, s.payTo = a, payTo
	s.Asset, s.PayTo = a.Hex(), payTo.Hex()
	if c.X402ReceiverAuthorizer != "" {
		if s.ReceiverAuthorizer, err = addr("x402_receiver_authorizer", c.X402ReceiverAuthorizer); err != nil {
			return s, err
		}
		if s.ReceiverAuthorizer == (common.Address{}) {
			return s, fmt.Errorf("tollgate: x402_receiver_authorizer must not be the zero address")
		}
	}
	minS, maxS := cmp.Or(c.MinDeposit, config.DefaultMinDeposit), cmp.Or(c.MaxDeposit, config.DefaultMaxDeposit)
	if s.MinDeposit, err = money.Parse(minS); err != nil || s.MinDeposit <= 0 {
		return s, fmt.Errorf("tollgate: min_deposit %q must be a positive USDT amount", minS)
	}
	if s.MaxDeposit, err = money.Parse(maxS); err != nil || s.MaxDeposit < s.MinDeposit {
		return s, fmt.Errorf("tollgate: max_deposit %q must be a USDT amount at least min_deposit", maxS)
	}
	// Only a runtime placeholder keeps the secret out of Caddy's config
	// JSON, its admin API and the autosave.json it persists: the adapter
	// writes a literal, and a {$VAR} it substitutes, into all three.
	if c.SettlementdSecret != "" && !runtimePlaceholder.MatchString(strings.TrimSpace(c.SettlementdSecret)) {
		return s, fmt.Errorf("tollgate: settlementd_secret must be a runtime placeholder such as {env.TOLLGATE_GATEWAY_SECRET} " +
			"(or {file.PATH}): a literal or {$VAR} is stored in Caddy's config JSON and autosave.json")
	}
	s.SettlementdSecret = strings.TrimSpace(expand(c.SettlementdSecret))
	if s.SettlementdSecret != "" && len(s.SettlementdSecret) < 32 {
		return s, fmt.Errorf("tollgate: settlementd_secret must be at least 32 characters")
	}
	s.Explorer = cmp.Or(strings.TrimRight(expand(c.ExplorerURL), "/"), config.DefaultExplorerURL)
	for _, u := range []struct {
		name string
		dst  *string
		raw  string
	}{{"public_url", &s.PublicURL, c.PublicURL}, {"settlementd_url", &s.Settlementd, c.SettlementdURL}, {"facilitator_url", &s.Facilitator, c.Facilitator}} {
		*u.dst = strings.TrimRight(expand(u.raw), "/")
		if v := *u.dst; v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return s, fmt.Errorf("tollgate: %s %q must start with http:// or https://", u.name, v)
		}
	}
	return s, nil
}

// runtimePlaceholder is a value that is one {env.*} or {file.*}
// placeholder, expanded by Caddy's replacer at provision time only.
var runtimePlaceholder = regexp.MustCompile(`^\{(env|file)\.[^{}\s]+\}$`)

// facilitatorURL is where x402 payments are verified and settled: the
// configured facilitator_url, else settlementd's /x402 ("" if neither).
func (s *Settings) facilitatorURL() string {
	if s.Facilitator != "" {
		return s.Facilitator
	}
	if s.Settlementd != "" {
		return s.Settlementd + "/x402"
	}
	return ""
}

// authenticate adds the gateway's secret to a request bound for
// settlementd, and to nothing else: an external facilitator_url never sees
// it.
func (s *Settings) authenticate(req *http.Request) {
	if s.SettlementdSecret == "" || s.Settlementd == "" {
		return
	}
	if u := req.URL.String(); u == s.Settlementd || strings.HasPrefix(u, s.Settlementd+"/") {
		req.Header.Set(GatewayHeader, s.SettlementdSecret)
	}
}

// GatewayHeader carries the secret (settlementd's facilitator.GatewayHeader).
const GatewayHeader = "X-Tollgate-Gateway-Secret"

// MoneyAddress checks one money setting (name, as written raw, expanded
// v) by the one money-address rule (devaccounts.MoneyAddress).
func MoneyAddress(name, raw, v string, dev bool) (common.Address, error) {
	if v == "" {
		return common.Address{}, fmt.Errorf("tollgate: payments %s is empty (written %q): set it; no money address has a default", name, raw)
	}
	a, err := devaccounts.MoneyAddress(v, dev)
	if err != nil {
		return a, fmt.Errorf("tollgate: payments %s %w", name, err)
	}
	return a, nil
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
