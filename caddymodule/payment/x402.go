package payment

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// x402 request and response headers.
const (
	headerPaymentV2   = "PAYMENT-SIGNATURE"
	headerPaymentV1   = "X-PAYMENT"
	headerResponseV2  = "PAYMENT-RESPONSE"
	headerResponseV1  = "X-PAYMENT-RESPONSE"
	headerRequired    = "PAYMENT-REQUIRED"
	headerSIWX        = "SIGN-IN-WITH-X"
	headerBundleKey   = "X-Tollgate-Bundle-Key"
	headerBundleLeft  = "X-Tollgate-Bundle-Remaining"
	facilitatorVerify = 15 * time.Second
	// maxReuseWindow (seconds): an authorization valid longer than this is
	// only ever settled, never drawn against a bundle, so the gateway never
	// has to remember a used nonce for longer.
	maxReuseWindow = 24 * 60 * 60
	// facilitatorSettle outlasts settlementd's receipt wait (60 s), so the
	// gateway hears the facilitator's verdict instead of timing out while
	// the transfer may still land.
	facilitatorSettle = 90 * time.Second
	grantAttempts     = 4
)

// payment is a checked payment header and the requirement it answers.
type payment struct {
	*paycheck.Payment
	require any // the requirement we issued (acceptV1 or acceptV2), as the facilitator receives it
}

// paymentHeader returns the payment header of r: PAYMENT-SIGNATURE (v2)
// wins over X-PAYMENT (v1). name is "" when there is none.
func paymentHeader(r *http.Request) (name, value string) {
	if v := first(r.Header, fieldPaymentV2); v != "" {
		return headerPaymentV2, v
	}
	if v := first(r.Header, fieldPaymentV1); v != "" {
		return headerPaymentV1, v
	}
	return "", ""
}

// The credential headers as net/http stores them (canonical): the POST
// door reads them for every request (CallerOf), and Header.Get would
// canonicalize, and allocate, each all-caps name every time.
var (
	fieldPaymentV2 = http.CanonicalHeaderKey(headerPaymentV2)
	fieldPaymentV1 = http.CanonicalHeaderKey(headerPaymentV1)
	fieldSIWX      = http.CanonicalHeaderKey(headerSIWX)
)

// first is h's first value for the canonical name k ("" for none), as
// Header.Get without canonicalizing k.
func first(h http.Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// requirement is what we asked for in the 402, in the payload's version.
func (h *Handler) requirement(version int, resource string) (any, x402.Requirements) {
	short := paycheck.Offer{Asset: h.pay.Asset, PayTo: h.pay.PayTo}.Short(version)
	extra := map[string]string{"name": paycheck.TokenName, "version": paycheck.TokenVersion}
	amount := money.BundlePrice.String()
	if version == 1 {
		return acceptV1{Scheme: paycheck.Scheme, Network: paycheck.NetworkV1, MaxAmountRequired: amount, Resource: resource,
			Description: bundleDescription, MimeType: x402MimeType, PayTo: h.pay.PayTo, MaxTimeoutSeconds: x402MaxTimeout,
			Asset: h.pay.Asset, Extra: extra}, short
	}
	return acceptV2{Scheme: paycheck.Scheme, Network: paycheck.NetworkV2, Amount: amount, Asset: h.pay.Asset, PayTo: h.pay.PayTo,
		MaxTimeoutSeconds: x402MaxTimeout, Extra: extra}, short
}

// decodePayment checks a payment header offline (paycheck) against the
// offer and pairs it with the requirement the facilitator is shown.
func (h *Handler) decodePayment(name, value, resource string, now time.Time) (*payment, *paycheck.Refusal) {
	p, ref := paycheck.DecodePayment(paycheck.Offer{Asset: h.pay.Asset, PayTo: h.pay.PayTo}, name, value, now)
	if ref != nil {
		return nil, ref
	}
	req, _ := h.requirement(p.Version, resource)
	return &payment{Payment: p, require: req}, nil
}

// facilitatorClient calls facilitators; each call carries its own deadline.
// Redirects are not followed: a payment is not re-posted somewhere else.
var facilitatorClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// errFacilitatorDown is a facilitator that could not give an answer
// (unreachable, timed out, 5xx, or a body that is not its wire format).
var errFacilitatorDown = errors.New("x402 facilitator unavailable")

// facilitatorCall POSTs the facilitator request and decodes its answer. A
// 4xx whose body is the answer type (the x402 Go client's convention for a
// refused payment) counts as an answer.
func (h *Handler) facilitatorCall(ctx context.Context, url string, p *payment, out any) error {
	body, err := json.Marshal(map[string]any{"x402Version": p.Version, "paymentPayload": p.Raw, "paymentRequirements": p.require})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", errFacilitatorDown, redactURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	h.pay.authenticate(req)
	resp, err := facilitatorClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errFacilitatorDown, redactURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %v", errFacilitatorDown, err)
	}
	if resp.StatusCode >= 500 || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusPaymentRequired) {
		return fmt.Errorf("%w: HTTP %d", errFacilitatorDown, resp.StatusCode)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%w: HTTP %d with a body that is not an x402 answer", errFacilitatorDown, resp.StatusCode)
	}
	return nil
}

// payWithX402 serves a request that carries an x402 payment: offline
// checks, the facilitator's verify and settle, then the bundle grant that
// also draws this request's calls. This is the one request in a thousand
// that waits on the chain; everything else about it is refused with 402
// (the payment's fault) or 503 (the facilitator's or Redis's), and in
// neither case does anything stay charged (a draw whose reply Redis lost is
// given back, voidLater) or is anything granted that was not paid.
func (h *Handler) payWithX402(rctx context.Context, c *Caller, hdr http.Header, req meter.Request) (meter.Decision, error) {
	name, value := c.PaymentName, c.Payment
	if name == "" {
		return meter.Decision{}, errNotMine
	}
	now := h.meter.Now()
	resource := h.pay.base(c) + c.Path
	p, ref := h.decodePayment(name, value, resource, now)
	if ref == nil && req.Calls > money.BundleCalls {
		ref = paycheck.Refuse(meter.ReasonBundleExhausted, "the request has %d calls; one bundle buys %d: split the batch", req.Calls, money.BundleCalls)
	}
	if ref != nil {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(ref, nil)
	}
	url := h.pay.facilitatorURL()
	if url == "" {
		// Never derived from the request: a Host header naming the caller's
		// own "facilitator" would approve any payment.
		metrics.X402Payments.WithLabelValues("facilitator_unavailable").Inc()
		return meter.Decision{}, unavailable(0, "x402 payments are not configured on this gateway (x402_facilitator_url or settlementd_url); nothing was charged")
	}
	// A wallet whose bundle still covers the request is served from it and
	// the new authorization is never settled: generic x402 clients (no
	// Sign-In-With-X hook) pay on every 402, and settling each payment would
	// buy a bundle per call. The authorization's signature proves the wallet
	// as a sign-in does, and it is single-use here as on chain (its nonce
	// key). That one script also rate-limits the IP and proves Redis is up
	// before any facilitator is asked, so a payment never settles when its
	// grant could not be booked.
	payerKey := strings.ToLower(p.Checked.From.Hex())
	nonceKey := meter.PaymentNonce(payerKey, hexutil.Encode(p.Checked.Nonce[:]))
	left := new(big.Int).Sub(p.Checked.ValidBefore, big.NewInt(now.Unix()))
	reusable := left.IsInt64() && left.Int64() <= maxReuseWindow
	ttl := time.Duration(maxReuseWindow)*time.Second + time.Minute
	if reusable {
		ttl = time.Duration(left.Int64())*time.Second + time.Minute
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), MeterTimeout)
	var (
		gate meter.Decision
		err  error
	)
	if reusable {
		gate, err = h.meter.AuthorizeSIWX(gctx, req, payerKey, nonceKey, ttl)
		if err != nil && meter.MaybeBooked(err) {
			// The draw on the bundle may have run before its reply was
			// lost: its calls are given back (voidLater), the
			// authorization stays used and is never settled. The request
			// id goes out with the 503, as for a key.
			cancel()
			h.voidLater(gate)
			return gate, meterDown(err)
		}
	} else { // valid for days: settled as sent, never drawn against
		gate, err = h.meter.PaymentGate(gctx, req.IP)
	}
	if err == nil && gate.Outcome == meter.Bundle {
		cancel()
		metrics.X402Payments.WithLabelValues("bundle_reused").Inc()
		return gate, nil
	}
	if err == nil && gate.Outcome != meter.RateLimited && gate.Outcome != meter.Recovering {
		var prev string
		prev, err = h.meter.ClaimSettle(gctx, nonceKey, ttl)
		if err == nil && prev != "" && prev != meter.PaymentSettling {
			cancel()
			metrics.X402Payments.WithLabelValues("replayed").Inc()
			return meter.Decision{}, paymentRefused(paycheck.Refuse(x402.ReasonNonceUsed,
				"this authorization was already drawn against the wallet's bundle (a request answered 503 had its calls given back) and will not be settled; sign a new one"), nil)
		}
	}
	cancel()
	if err != nil {
		return meter.Decision{}, meterDown(err)
	}
	switch gate.Outcome {
	case meter.RateLimited:
		return meter.Decision{}, decided(gate)
	case meter.Recovering:
		metrics.X402Payments.WithLabelValues(meter.ReasonRecovering).Inc()
		return meter.Decision{}, decided(gate)
	}
	// Settlement must finish once started, even if the client hangs up: the
	// money may move either way, and the grant must follow it.
	ctx := context.WithoutCancel(rctx)
	vctx, cancel := context.WithTimeout(ctx, facilitatorVerify)
	var vr x402.VerifyResponse
	err = h.facilitatorCall(vctx, url+"/verify", p, &vr)
	cancel()
	if err != nil {
		return meter.Decision{}, h.facilitatorDown("verify", err)
	}
	payerHex := p.Checked.From.Hex()
	if vr.Payer != "" && !strings.EqualFold(vr.Payer, payerHex) {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(paycheck.Refuse(x402.ReasonPayload, "the facilitator read the payer as %s, this gateway as %s", vr.Payer, payerHex), nil)
	}
	// A used nonce may be this payment settled by an earlier attempt whose
	// answer was lost: the facilitator's settle is idempotent and answers
	// with that transaction; the grant then goes to whoever presents the
	// payment first, once.
	if !vr.IsValid && vr.InvalidReason != x402.ReasonNonceUsed {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		return meter.Decision{}, paymentRefused(paycheck.Refuse(orDefault(vr.InvalidReason, x402.ReasonPayload), "%s", orDefault(vr.InvalidMessage, "the facilitator refused the payment")), nil)
	}
	sctx, cancel := context.WithTimeout(ctx, facilitatorSettle)
	var sr x402.SettleResponse
	err = h.facilitatorCall(sctx, url+"/settle", p, &sr)
	cancel()
	if err != nil {
		// The transfer may have been sent: say so, and let the client retry
		// with the same header (settle is idempotent, the grant once per tx).
		metrics.X402Payments.WithLabelValues("facilitator_unavailable").Inc()
		h.logger.Warn("x402 settle unanswered; the payment may have settled", zap.String("payer", payerHex), zap.Error(redactURL(err)))
		return meter.Decision{}, unavailable(5, "the x402 facilitator did not answer the settlement; the payment may have settled: retry with the same payment header to receive its bundle")
	}
	if sr.Payer != "" && !strings.EqualFold(sr.Payer, payerHex) {
		metrics.X402Payments.WithLabelValues("invalid").Inc()
		h.logger.Error("x402 facilitator settled for another payer than the payment names", zap.String("payer", payerHex),
			zap.String("facilitator_payer", sr.Payer), zap.String("tx", sr.Transaction))
		return meter.Decision{}, paymentRefused(paycheck.Refuse(x402.ReasonPayload, "the facilitator settled for %s, the payment names %s", sr.Payer, payerHex), nil)
	}
	payer := strings.ToLower(payerHex)
	network := paycheck.NetworkV2
	if p.Version == 1 {
		network = paycheck.NetworkV1
	}
	if !sr.Success || sr.Transaction == "" {
		metrics.X402Payments.WithLabelValues("settle_failed").Inc()
		fail := x402.SettleResponse{Success: false, ErrorReason: orDefault(sr.ErrorReason, x402.ReasonUnexpectedSett),
			ErrorMessage: sr.ErrorMessage, Transaction: "", Network: network, Payer: p.Checked.From.Hex()}
		return meter.Decision{}, paymentRefused(paycheck.Refuse(fail.ErrorReason, "%s", orDefault(sr.ErrorMessage, "settlement failed")), &settled{version: p.Version, resp: fail})
	}
	g := meter.Grant{TxHash: strings.ToLower(sr.Transaction), Wallet: payer, Network: paycheck.NetworkV2,
		Amount: money.BundlePrice, Calls: money.BundleCalls}
	var (
		d   meter.Decision
		key *meter.CreatedKey
	)
	pg, err := h.meter.PrepareGrant(req, g)
	maybeBooked := false // an attempt whose reply was lost may have booked
	// The loop runs while PrepareGrant succeeded; a failed attempt goes
	// round again (the condition must not read the attempt's own error).
	for attempt := 1; pg != nil; attempt++ {
		gctx, cancel := context.WithTimeout(ctx, MeterTimeout)
		d, key, err = h.meter.GrantBundle(gctx, pg)
		cancel()
		maybeBooked = maybeBooked || meter.MaybeBooked(err)
		if err == nil || attempt == grantAttempts {
			break
		}
		// The grant is idempotent per transaction, so retrying is safe; the
		// money has moved and the wallet must get its calls.
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	if err != nil {
		metrics.X402Payments.WithLabelValues("grant_failed").Inc()
		h.logger.Error("x402 payment settled but the bundle grant failed; grant it by hand (the grant is idempotent per tx)",
			zap.String("tx", g.TxHash), zap.String("payer", payer), zap.Error(err))
		if maybeBooked && d.ID != "" {
			// An attempt may have booked the grant and this request's draw
			// before its reply was lost: the grant stays (the money moved),
			// the draw is given back, since this request is not served.
			h.voidLater(d)
		}
		return d, unavailable(1, "the payment settled in transaction "+g.TxHash+" but the bundle may not have been recorded; sign in with the paying wallet (Sign-In-With-X) to use it, or contact the operator with this transaction")
	}
	metrics.X402Payments.WithLabelValues("settled").Inc()
	h.logger.Info("x402 payment settled; bundle granted", zap.String("tx", g.TxHash), zap.String("payer", payer),
		zap.Bool("new_grant", key != nil))
	ok := x402.SettleResponse{Success: true, Transaction: sr.Transaction, Network: network, Payer: p.Checked.From.Hex()}
	setSettlement(hdr, &settled{version: p.Version, resp: ok})
	if key != nil {
		hdr.Set(headerBundleKey, key.Secret)
	}
	if d.Reason == meter.ReasonPaymentUsed {
		metrics.X402Payments.WithLabelValues("replayed").Inc()
		hdr.Del(headerResponseV1)
		hdr.Del(headerResponseV2)
		return d, paymentRefused(paycheck.Refuse(x402.ReasonNonceUsed, "this payment (transaction %s) was already used; its bundle belongs to the wallet that paid: sign in with it, or pay again", g.TxHash), nil)
	}
	if d.Outcome != meter.Bundle { // cannot happen: a paying batch is at most one bundle
		return d, paymentRefused(paycheck.Refuse(meter.ReasonBundleExhausted, "the request has %d calls; the bundle holds %d", req.Calls, d.BundleLeft), nil)
	}
	return d, nil
}

// facilitatorDown refuses with 503: nothing was charged or granted.
func (h *Handler) facilitatorDown(step string, err error) *Refusal {
	metrics.X402Payments.WithLabelValues("facilitator_unavailable").Inc()
	h.logger.Warn("x402 facilitator unavailable; payment refused with 503", zap.String("step", step), zap.Error(redactURL(err)))
	return unavailable(5, "the x402 payment facilitator is unavailable ("+step+"); nothing was charged, retry shortly")
}

// settled is a settlement answer to put in PAYMENT-RESPONSE (v2) or
// X-PAYMENT-RESPONSE (v1).
type settled struct {
	version int
	resp    x402.SettleResponse
}

func setSettlement(hdr http.Header, s *settled) {
	hdr.Set(s.header())
}

// header is the settlement response's header: PAYMENT-RESPONSE (v2) or
// X-PAYMENT-RESPONSE (v1), base64 of its JSON.
func (s *settled) header() (name, value string) {
	b, _ := json.Marshal(s.resp)
	name = headerResponseV2
	if s.version == 1 {
		name = headerResponseV1
	}
	return name, base64.StdEncoding.EncodeToString(b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// redactURL drops URLs from an error (net/url errors quote the request
// URL, which may carry a facilitator API key in its query).
func redactURL(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
