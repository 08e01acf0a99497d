package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// payWithSIWX serves a request from the signer's bundle. When the request
// also carries a payment, a sign-in that cannot serve it is not a refusal:
// the payment is tried instead. A caller that holds its sign-in (a socket:
// HoldSignIn) is checked and spends its nonce like a POST until a draw is
// served; from then on it is signed in as that wallet and draws without
// the nonce (paySignedIn).
func (h *Handler) payWithSIWX(ctx context.Context, c *Caller, _ http.Header, req meter.Request) (meter.Decision, error) {
	value := c.SIWX
	if value == "" {
		return meter.Decision{}, errNotMine
	}
	if s := c.signIn; s != nil {
		if w := s.wallet.Load(); w != nil {
			return h.paySignedIn(ctx, c, req, *w)
		}
	}
	payName := c.PaymentName
	fallThrough := payName != ""
	wallet, nonce, issued, ref := paycheck.VerifySIWXIssued(value, h.pay.base(c), h.meter.Now())
	if ref != nil {
		metrics.SIWXOutcomes.WithLabelValues("invalid").Inc()
		if fallThrough {
			return meter.Decision{}, errNotMine
		}
		return meter.Decision{}, paymentRefused(ref, nil)
	}
	var d meter.Decision
	var err error
	if s := c.signIn; s != nil {
		// A holding caller's first draw signs it in (meter.SignInSIWX).
		d, err = metered(ctx, func(ctx context.Context) (meter.Decision, error) {
			return h.meter.SignInSIWX(ctx, req, wallet, nonce, s.session, issued, paycheck.SIWXNonceTTL)
		})
		if err == nil && d.Outcome == meter.Bundle {
			// Concurrent first draws of one socket store the same wallet:
			// the message names one signer.
			s.wallet.Store(&wallet)
		}
	} else {
		d, err = metered(ctx, func(ctx context.Context) (meter.Decision, error) {
			return h.meter.AuthorizeSIWX(ctx, req, wallet, nonce, paycheck.SIWXNonceTTL)
		})
	}
	return h.siwxDecided(c, req, wallet, d, err)
}

// paySignedIn draws from the bundle of the wallet c's connection signed in
// as: one script call, no signature checked and no nonce (meter.DrawSignedIn).
func (h *Handler) paySignedIn(ctx context.Context, c *Caller, req meter.Request, wallet string) (meter.Decision, error) {
	d, err := metered(ctx, func(ctx context.Context) (meter.Decision, error) { return h.meter.DrawSignedIn(ctx, req, wallet) })
	return h.siwxDecided(c, req, wallet, d, err)
}

// siwxDecided turns a SIWX draw into the payer's answer.
func (h *Handler) siwxDecided(c *Caller, req meter.Request, wallet string, d meter.Decision, err error) (meter.Decision, error) {
	fallThrough := c.PaymentName != ""
	if err != nil {
		// The draw may have run before its reply was lost (Redis stalled
		// or died mid-reply): as for a key, its calls are given back. The
		// message's nonce stays spent (voidLater says why); a socket's
		// first draw marked it with the socket's session, so the socket's
		// next message takes it again (meter.SignInSIWX).
		if meter.MaybeBooked(err) {
			h.voidLater(d)
		}
		return d, meterDown(err)
	}
	switch d.Outcome {
	case meter.Bundle:
		metrics.SIWXOutcomes.WithLabelValues("served").Inc()
		return d, nil
	case meter.RateLimited:
		metrics.SIWXOutcomes.WithLabelValues("rate_limited").Inc()
		return d, decided(d)
	case meter.Recovering:
		// The wallet's bundle is not rebuilt yet; a payment sent along
		// would be refused by the same state (PaymentGate).
		metrics.SIWXOutcomes.WithLabelValues(meter.ReasonRecovering).Inc()
		return d, decided(d)
	}
	metrics.SIWXOutcomes.WithLabelValues(d.Reason).Inc()
	if fallThrough {
		return meter.Decision{}, errNotMine
	}
	msg := fmt.Sprintf("the wallet %s has %d bundle calls left; the request has %d", wallet, d.BundleLeft, req.Calls)
	if d.Reason == meter.ReasonNonceUsed {
		msg = "this Sign-In-With-X message was already used; sign the fresh challenge of this 402"
	}
	return d, paymentRefused(paycheck.Refuse(d.Reason, "%s", msg), nil)
}

// signIn is a connection's Sign-In-With-X (Caller.HoldSignIn).
type signIn struct {
	// session marks the message's nonce as this connection's: random,
	// never sent to anyone, so only this connection's draws match it.
	session string
	// wallet is set once a draw carrying the nonce was served: the
	// connection is signed in as that wallet for its life.
	wallet atomic.Pointer[string]
}

// HoldSignIn makes c's Sign-In-With-X last as long as c: for a door that
// reads who asks once and keeps it for a connection's life (the WebSocket
// handshake; never a door that reads a Caller per request). The message is
// checked (paycheck.VerifySIWX) and its nonce spent as for a POST by the
// first draw that is served; every later draw of c is drawn from that
// wallet's bundle without them (paySignedIn). Without a SIGN-IN-WITH-X
// value it does nothing.
func (c *Caller) HoldSignIn() {
	if c.SIWX == "" {
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	c.signIn = &signIn{session: "ws:" + hex.EncodeToString(b[:])}
}
