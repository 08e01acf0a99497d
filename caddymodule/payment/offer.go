package payment

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// x402 constants of the 402 answer that only the offer needs; the scheme,
// network names and token domain live in paycheck, which checks payments
// against them.
const (
	x402MaxTimeout   = 300 // seconds a signed authorization may wait for settlement
	x402MimeType     = "application/json"
	BaseUSDCMainnet  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	exampleKeyEnvVar = "TOLLGATE_API_KEY"
	apiKeyHeader     = "X-API-Key"
)

type acceptV1 struct {
	Scheme            string            `json:"scheme"`
	Network           string            `json:"network"`
	MaxAmountRequired string            `json:"maxAmountRequired"`
	Resource          string            `json:"resource"`
	Description       string            `json:"description"`
	MimeType          string            `json:"mimeType"`
	PayTo             string            `json:"payTo"`
	MaxTimeoutSeconds int               `json:"maxTimeoutSeconds"`
	Asset             string            `json:"asset"`
	Extra             map[string]string `json:"extra"`
}

type endpointRef struct {
	Method      string `json:"method"`
	URL         string `json:"url"`
	Body        any    `json:"body,omitempty"`
	Description string `json:"description"`
}

type priceInfo struct {
	PerCallUSDT    money.USDT `json:"per_call_usdt"`
	PerCallUnits   string     `json:"per_call_units"`
	CallsPerUSDT   int64      `json:"calls_per_usdt"`
	X402BundleUSDC money.USDT `json:"x402_bundle_usdc"`
	X402BundleCall int        `json:"x402_bundle_calls"`
	// MethodWeights: chain id → method → weight for the methods that
	// count as more than one call ({} when every call costs the same).
	MethodWeights map[string]map[string]uint32 `json:"method_weights"`
}

type example struct {
	Step        int    `json:"step"`
	Description string `json:"description"`
	Command     string `json:"command"`
}

type onboarding struct {
	Register            endpointRef `json:"register"`
	DepositCalldata     endpointRef `json:"deposit_calldata"`
	MinimumDepositUSDT  money.USDT  `json:"minimum_deposit_usdt"`
	MinimumDepositUnits string      `json:"minimum_deposit_units"`
	MaximumDepositUSDT  money.USDT  `json:"maximum_deposit_usdt"`
	MaximumDepositUnits string      `json:"maximum_deposit_units"`
	Price               priceInfo   `json:"price"`
	Examples            []example   `json:"examples"`
	Reason              string      `json:"reason"` // ip, subnet
	FreeTier            freeTierRef `json:"free_tier"`

	// The same path as data a program follows without reading prose:
	// every URL and the key's header name as fields, the steps in order.
	APIKeyHeader         string `json:"api_key_header"`
	RPCURL               string `json:"rpc_url"`
	RegisterURL          string `json:"register_url"`
	DepositURL           string `json:"deposit_instructions_url"`
	UsageURL             string `json:"usage_url"`
	DepositChainID       uint64 `json:"deposit_chain_id"`
	DepositConfirmations int    `json:"deposit_confirmations"`
	Steps                []step `json:"steps"`
}

// step is one action of the onboarding path. A value written {name} in
// url, headers or body stands for the field name returned by an earlier
// step (Returns lists what each step returns).
type step struct {
	Step        int               `json:"step"`
	Action      string            `json:"action"` // http, send_transactions, poll
	Description string            `json:"description"`
	Method      string            `json:"method,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Body        any               `json:"body,omitempty"`
	Returns     map[string]string `json:"returns,omitempty"`
	// send_transactions: the field holding the transactions (an array, sent
	// in order, each mined before the next) and the fields of each.
	Transactions      string   `json:"transactions,omitempty"`
	TransactionFields []string `json:"transaction_fields,omitempty"`
	// poll: repeat the request until Until's field is above zero.
	Until           string `json:"until_above_zero,omitempty"`
	IntervalSeconds int    `json:"interval_seconds,omitempty"`
}

type freeTierRef struct {
	DailyLimitPerIP int64  `json:"daily_limit_per_ip"`
	SubnetLimit     int64  `json:"subnet_limit"`
	ResetsAt        string `json:"resets_at"`
}

type paymentRequiredV1 struct {
	X402Version int        `json:"x402Version"`
	Error       string     `json:"error"`
	Accepts     []acceptV1 `json:"accepts"`
	Onboarding  onboarding `json:"onboarding"`
}

type resourceV2 struct {
	URL         string `json:"url"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
}

type acceptV2 struct {
	Scheme            string            `json:"scheme"`
	Network           string            `json:"network"`
	Amount            string            `json:"amount"`
	Asset             string            `json:"asset"`
	PayTo             string            `json:"payTo"`
	MaxTimeoutSeconds int               `json:"maxTimeoutSeconds"`
	Extra             map[string]string `json:"extra"`
}

type paymentRequiredV2 struct {
	X402Version int            `json:"x402Version"`
	Error       string         `json:"error"`
	Resource    resourceV2     `json:"resource"`
	Accepts     []any          `json:"accepts"` // acceptV2 (exact), then acceptBatch when offered
	Extensions  map[string]any `json:"extensions,omitempty"`
}

// bundleDescription describes what an x402 payment buys.
var bundleDescription = fmt.Sprintf("%d JSON-RPC calls (x402 bundle)", money.BundleCalls)

// ExposedHeaders are the response headers a browser client may read (x402
// clients must read the first three).
const ExposedHeaders = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Tollgate-Bundle-Key, X-Tollgate-Bundle-Remaining, " +
	"X-Tollgate-Payer, X-Tollgate-Credits-Remaining, X-Tollgate-Free-Remaining, X-Tollgate-Request-Id, X-Tollgate-Upstream, Retry-After"

// WritePaymentRequired answers 402 this way: the x402 v1
// PaymentRequired object plus onboarding as the body (v1 clients such as
// x402-fetch read only the body), and the v2 object in PAYMENT-REQUIRED
// (v2 clients read only the header), with a fresh Sign-In-With-X challenge.
// It is the REST door's (the paid intelligence metrics); /rpc's doors get
// the same challenge in a typed Refusal (Authorize).
func (h *Handler) WritePaymentRequired(w http.ResponseWriter, r *http.Request, d *meter.Decision) {
	c := originOf(r)
	o := h.paymentRequiredOffer(&c, d)
	WriteHTTP(w, nil, &Refusal{kind: refusedPaymentRequired, decision: d, offer: &o})
}

// paymentRequiredOffer is the challenge of a decision nothing pays for.
func (h *Handler) paymentRequiredOffer(c *Caller, d *meter.Decision) Offer {
	lim := d.Limits // in force when the request was refused (an operator may have changed them)
	why := fmt.Sprintf("Free tier exhausted: %d calls per IP per UTC day", lim.DailyPerIP)
	if d.Reason == "subnet" {
		why = fmt.Sprintf("Free tier exhausted: the %d free calls per UTC day of this network (/24, IPv6 /48) are used up", lim.Subnet)
	}
	if d.Account != "" {
		why = "No credits left on this API key and " + strings.ToLower(why[:1]) + why[1:]
	}
	if d.Reason == meter.ReasonCredits { // an intelligence metric: credits only
		why = "This metric is paid from API-key credits only (the free tier covers JSON-RPC)"
		if d.Account != "" {
			why = "This API key has too few credits for this metric"
		}
	}
	return h.offer402(c, why+". Pay with x402 (USDC on Base), or register an API key and deposit USDT credits; see onboarding.", d.Reason, lim, d.Calls(), nil)
}

// writePaymentRefused answers 402 to a payment or Sign-In-With-X header
// that was not accepted: the same challenge, with the reason in the v1
// body's error and the v2 object's error, and the settlement answer when
// the facilitator refused to settle.
func (h *Handler) writePaymentRefused(w http.ResponseWriter, r *http.Request, ref *paycheck.Refusal, s *settled, calls int, bs *batchState) {
	h.write(w, r, nil, meter.Request{Calls: calls}, &Refusal{kind: refusedPayment, payment: ref, settled: s, batch: bs})
}

// write402 writes a challenge (offer402) with the message msg.
func (h *Handler) write402(w http.ResponseWriter, r *http.Request, msg, reason string, lim meter.FreeLimits, calls int, bs *batchState) {
	c := originOf(r)
	o := h.offer402(&c, msg, reason, lim, calls, bs)
	WriteHTTP(w, nil, &Refusal{kind: refusedPaymentRequired, offer: &o})
}

// offer402 builds the challenge. calls prices the batch-settlement offer
// (a voucher pays for the request it comes with); bs, for a refused
// batch-settlement payment, is the channel state of the corrective 402 and
// makes the v2 error the scheme's bare code, which the official client
// matches exactly.
func (h *Handler) offer402(c *Caller, msg, reason string, lim meter.FreeLimits, calls int, bs *batchState) Offer {
	base := h.pay.base(c)
	resource := base + c.Path
	v1req, _ := h.requirement(1, resource)
	v2req, _ := h.requirement(2, resource)
	v1 := paymentRequiredV1{X402Version: 1, Error: msg, Accepts: []acceptV1{v1req.(acceptV1)}, Onboarding: h.onboarding(base, reason, lim)}
	v2 := paymentRequiredV2{
		X402Version: 2,
		Error:       msg,
		Resource:    resourceV2{URL: resource, Description: bundleDescription, MimeType: x402MimeType},
		Accepts:     []any{v2req.(acceptV2)},
		Extensions:  map[string]any{paycheck.SIWXExtension: paycheck.SIWXChallenge(base, resource, h.meter.Now())},
	}
	if acc, ok := h.batchAccept(calls, bs); ok {
		v2.Accepts = append(v2.Accepts, acc)
	}
	if bs != nil {
		v2.Error = reason
	}
	o := Offer{Error: msg}
	o.V2, _ = json.Marshal(v2)
	o.Onboarding, _ = json.Marshal(v1.Onboarding)
	// As web.JSON writes it (shared/httpx: the encoding and a newline).
	o.V1, _ = json.Marshal(v1)
	o.V1 = append(o.V1, '\n')
	return o
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// onboarding is what an autonomous client needs to go from 402 to paid
// calls: register, get deposit calldata, send it, call with the key. The
// examples are complete shell commands; the key travels in an environment
// variable so the commands can be pasted as they are.
func (h *Handler) onboarding(base, reason string, lim meter.FreeLimits) onboarding {
	min := h.pay.MinDeposit
	q := shellQuote
	key := `"X-API-Key: $` + exampleKeyEnvVar + `"`
	return onboarding{
		Register: endpointRef{Method: http.MethodPost, URL: base + "/v1/machine/register", Body: map[string]string{"label": "my-agent"},
			Description: "create an API key (returned once, in api_key); send it as X-API-Key"},
		DepositCalldata: endpointRef{Method: http.MethodGet, URL: base + "/credits/initiate?amount=" + min.Decimal(),
			Description: "ready-to-send approve and deposit calldata for a USDT deposit to RevenueVault on chain 137 (send X-API-Key or add &key_id=key_…)"},
		MinimumDepositUSDT:  money.USDT(min),
		MinimumDepositUnits: min.String(),
		Price: priceInfo{PerCallUSDT: money.USDT(money.PricePerCall), PerCallUnits: money.PricePerCall.String(),
			CallsPerUSDT: int64(money.Scale / money.PricePerCall), X402BundleUSDC: money.USDT(money.BundlePrice), X402BundleCall: money.BundleCalls,
			MethodWeights: h.pay.AllWeights()},
		Examples: []example{
			{1, "Register a machine and keep the api_key it returns (shown once): export " + exampleKeyEnvVar + "=<api_key>",
				"curl -sS -X POST " + q(base+"/v1/machine/register") + ` -H 'Content-Type: application/json' -d '{"label":"my-agent"}'`},
			{2, "Get the approve and deposit transactions for the minimum deposit; send both from your wallet on chain 137, credits arrive after 25 confirmations",
				"curl -sS " + q(base+"/credits/initiate?amount="+min.Decimal()) + " -H " + key},
			{3, "Call JSON-RPC with the key; each call costs " + money.PricePerCall.Decimal() + " USDT (a method listed in price.method_weights costs its weight times that)",
				"curl -sS -X POST " + q(base+"/rpc") + " -H 'Content-Type: application/json' -H " + key +
					` -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'`},
			{4, "Check the key's usage and remaining credits",
				"curl -sS " + q(base+"/api/keys/usage") + " -H " + key},
		},
		Reason:   reason,
		FreeTier: freeTierRef{DailyLimitPerIP: lim.DailyPerIP, SubnetLimit: lim.Subnet, ResetsAt: meter.NextReset(h.meter.Now()).Format("2006-01-02T15:04:05Z")},

		MaximumDepositUSDT:   money.USDT(h.pay.MaxDeposit),
		MaximumDepositUnits:  h.pay.MaxDeposit.String(),
		APIKeyHeader:         apiKeyHeader,
		RPCURL:               base + "/rpc",
		RegisterURL:          base + "/v1/machine/register",
		DepositURL:           base + "/credits/initiate",
		UsageURL:             base + "/api/keys/usage",
		DepositChainID:       chains.Default,
		DepositConfirmations: DepositConfirmations,
		Steps:                h.onboardingSteps(base),
	}
}

// onboardingSteps is the key-and-credits path in order, as data. The
// deposit step names its amount in base units (amount_units), so a program
// never has to guess whether a number is whole USDT.
func (h *Handler) onboardingSteps(base string) []step {
	keyHeader := map[string]string{apiKeyHeader: "{api_key}"}
	return []step{
		{Step: 1, Action: "http", Method: http.MethodPost, URL: base + "/v1/machine/register", Body: map[string]string{"label": "my-agent"},
			Description: "Create an API key. api_key is shown once: keep it secret and send it in the " + apiKeyHeader + " header.",
			Returns:     map[string]string{"api_key": "the key (secret, shown once)", "key_id": "the account the key draws credits from"}},
		{Step: 2, Action: "http", Method: http.MethodGet, URL: base + "/credits/initiate?amount_units=" + h.pay.MinDeposit.String(), Headers: keyHeader,
			Description: fmt.Sprintf("Get the transactions that deposit the minimum, %s USDT (amount_units is in base units, 1 USDT = %d; amount= takes whole USDT).",
				h.pay.MinDeposit.Decimal(), money.Scale),
			Returns: map[string]string{"transactions": "the transactions to send, in order"}},
		{Step: 3, Action: "send_transactions", Transactions: "transactions", TransactionFields: []string{"chain_id", "to", "data", "value"},
			Description: fmt.Sprintf("From a wallet holding the USDT on chain %d, send each transaction in order (value is in wei, hex), each mined before the next.", chains.Default)},
		{Step: 4, Action: "poll", Method: http.MethodGet, URL: base + "/api/keys/usage", Headers: keyHeader, Until: "credits_remaining_calls", IntervalSeconds: 5,
			Description: fmt.Sprintf("Credits arrive after %d confirmations of the deposit; poll until credits_remaining_calls is above zero.", DepositConfirmations),
			Returns:     map[string]string{"credits_remaining_calls": "paid calls the key's credits cover"}},
		{Step: 5, Action: "http", Method: http.MethodPost, URL: base + "/rpc", Headers: keyHeader,
			Body:        map[string]any{"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []any{}},
			Description: "Call JSON-RPC with the key; each call costs " + money.PricePerCall.Decimal() + " USDT (" + money.PricePerCall.String() + " base units)."},
	}
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
