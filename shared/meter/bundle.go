package meter

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Reasons of a PaymentRequired decision on the bundle paths.
const (
	ReasonBundleExhausted = "bundle_exhausted"     // the wallet has fewer bundle calls left than the request has calls
	ReasonNonceUsed       = "siwx_nonce_used"      // the Sign-In-With-X message was already used
	ReasonPaymentUsed     = "payment_already_used" // the settlement's grant went to an earlier request
)

// walletRe is the wallet form bundles are keyed by: lower-case 0x hex.
var walletRe = regexp.MustCompile(`^0x[0-9a-f]{40}$`)

// ErrBadWallet is returned for a wallet that is not lower-case 0x hex.
var ErrBadWallet = errors.New("meter: wallet must be lower-case 0x hex")

// BundleLeft reads a wallet's bundle calls left (0 for none).
func (m *Meter) BundleLeft(ctx context.Context, wallet string) (int64, error) {
	v, err := m.cmd.HGet(ctx, m.layout.Bundle(wallet), "calls").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return v, nil
}

// AuthorizeSIWX draws a request's calls from wallet's bundle for a verified
// Sign-In-With-X message whose nonce is single-use: one script call (IP
// rate, nonce, bundle, debit, event). nonceTTL must outlast the oldest
// message the caller still accepts. Outcomes: Bundle, PaymentRequired
// (ReasonBundleExhausted or ReasonNonceUsed), RateLimited, Recovering (the
// wallet has no bundle and Redis is not rebuilt yet; the nonce stays unused).
func (m *Meter) AuthorizeSIWX(ctx context.Context, req Request, wallet, nonce string, nonceTTL time.Duration) (Decision, error) {
	if nonce == "" {
		return Decision{}, errors.New("meter: empty SIWX nonce")
	}
	return m.drawBundle(ctx, req, wallet, func(l balances.Layout, date, data string) (*redis.Script, []string, []any) {
		return siwxScript, []string{l.Stream(0), l.BundlePrefix() + wallet + "}", l.SIWXNonce(nonce), l.Requests(date), l.Generation()},
			[]any{req.Calls, int64(max(nonceTTL, time.Second) / time.Second), events.TypeDebit, events.Version, data,
				int64(dayTTL / time.Second)}
	})
}

// SignInSIWX is the first draw of a connection signed in with a verified
// Sign-In-With-X message for its life (a WebSocket): as AuthorizeSIWX, in
// one script call, except that the nonce is marked with session (the
// connection's random id, never sent to anyone) rather than "1", and a
// nonce already marked with the same session does not refuse: a first draw
// whose reply was lost (Redis died mid-reply) is taken again by the same
// connection, and by no one else. A nonce a POST, an x402 reuse or another
// connection marked refuses with ReasonNonceUsed.
//
// A sign-in lasts as long as its connection, so a message must sign in
// once even across a Redis that lost its data (and with it the nonces
// used): issued is the message's issuedAt, and a message issued before the
// shard's last rebuild or in its second (the time its generation marker
// names, balances.GenerationValue) is refused ReasonNonceUsed,
// while no marker is there (lost, not rebuilt yet) a sign-in is
// Recovering. A marker without a leading time (a test's stand-in for
// settlementd) refuses nothing.
func (m *Meter) SignInSIWX(ctx context.Context, req Request, wallet, nonce, session string, issued time.Time, nonceTTL time.Duration) (Decision, error) {
	if nonce == "" || session == "" || issued.IsZero() {
		return Decision{}, errors.New("meter: a sign-in needs its nonce, session and issue time")
	}
	return m.drawBundle(ctx, req, wallet, func(l balances.Layout, date, data string) (*redis.Script, []string, []any) {
		return siwxSessionScript, []string{l.Stream(0), l.BundlePrefix() + wallet + "}", l.Requests(date), l.Generation(), l.SIWXNonce(nonce)},
			[]any{req.Calls, events.TypeDebit, events.Version, data, int64(dayTTL / time.Second), session,
				int64(max(nonceTTL, time.Second) / time.Second), issued.UTC().Format(markerSecond)}
	})
}

// markerSecond is how a sign-in's issuedAt is compared with the time of a
// generation marker (balances.GenerationValue): the same UTC form, to the
// second, so the script compares the two strings.
const markerSecond = "2006-01-02T15:04:05"

// DrawSignedIn draws a request's calls from wallet's bundle for a
// connection SignInSIWX already served (the wallet proved at its first
// draw): the same script call without a nonce. Only the payments room calls
// it, for a caller that holds a served sign-in (payment.Caller.HoldSignIn);
// no header, parameter or tool argument reaches it. Outcomes: Bundle,
// PaymentRequired (ReasonBundleExhausted), RateLimited, Recovering.
func (m *Meter) DrawSignedIn(ctx context.Context, req Request, wallet string) (Decision, error) {
	return m.drawBundle(ctx, req, wallet, func(l balances.Layout, date, data string) (*redis.Script, []string, []any) {
		return siwxSessionScript, []string{l.Stream(0), l.BundlePrefix() + wallet + "}", l.Requests(date), l.Generation()},
			[]any{req.Calls, events.TypeDebit, events.Version, data, int64(dayTTL / time.Second), "", 0, ""}
	})
}

// drawBundle runs one draw from wallet's bundle on its shard (how names the
// script, its keys and its arguments but the ledger floor, which is
// appended) with the address's rate gate in the same round trip.
func (m *Meter) drawBundle(ctx context.Context, req Request, wallet string,
	how func(l balances.Layout, date, data string) (*redis.Script, []string, []any)) (Decision, error) {
	now := m.cfg.Now()
	d := m.newDecision(req, now)
	d.Wallet = wallet
	if req.Calls <= 0 {
		return d, errors.New("meter: a request without calls is not metered")
	}
	if !walletRe.MatchString(wallet) {
		return d, ErrBadWallet
	}
	ms := now.UnixMilli()
	data, err := events.Payload(bundleDebit(d.ID, ms, req.ChainID, events.PayerBundle, wallet, req.Calls))
	if err != nil {
		return d, err
	}
	ws := m.layout.ShardOfPayer(wallet)
	script, keys, args := how(m.layout.Shard(ws), d.date, data)
	draw := &run{script: script, keys: keys, args: append(args, m.cfg.Retain.Floor(ws)), wait: true, seqShard: ws + 1, id: d.ID, ms: ms}
	gate := m.gateRun(d.ipShard, d.ipKey, ms)
	m.exec(ctx, draw, gate)
	d.shard = ws
	if draw.err != nil {
		return d, draw.err
	}
	res := draw.res
	if draw.code != 1 && gate.err == nil && gate.code == 4 {
		// A refused draw from an address over its rate is a 429; a booked
		// draw is paid and served (shard.go).
		d.Outcome, d.RetryAfter = RateLimited, time.Duration(toInt(gate.res[1]))*time.Millisecond
		d.Limits = m.configLimits()
		return d, nil
	}
	switch draw.code {
	case 1:
		d.Outcome, d.BundleLeft = Bundle, toInt(res[1])
		if len(res) > 2 {
			xid, _ := res[2].(string)
			m.cfg.Retain.keep(ws, fact{xid: xid, data: data, typ: events.TypeDebit, kind: factBundleDebit, payer: wallet, n: int64(req.Calls)})
		}
	case 3:
		d.Outcome, d.Reason, d.BundleLeft = PaymentRequired, ReasonBundleExhausted, toInt(res[1])
	case 7:
		d.Outcome, d.Reason = PaymentRequired, ReasonNonceUsed
	case 8:
		d.Outcome, d.Reason, d.RetryAfter = Recovering, ReasonRecovering, RecoveryRetryAfter
	default:
		return d, fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
	}
	d.Limits = m.configLimits()
	return d, nil
}

// PaymentGate rate-limits a request that carries an x402 payment by its IP
// before any facilitator is asked, and fails (ErrUnavailable) when Redis
// is down, so a payment never settles when its grant could not be booked.
// The Decision is RateLimited, Recovering (Redis lost its data and is not
// rebuilt yet: no money may move until it is), or has no outcome (go on).
func (m *Meter) PaymentGate(ctx context.Context, ip netip.Addr) (Decision, error) {
	ipKey, netKey := Subjects(ip)
	now := m.cfg.Now()
	g := m.gateRun(m.layout.ShardOfIP(netKey), ipKey, now.UnixMilli())
	m.exec(ctx, g)
	if g.err != nil {
		return Decision{}, g.err
	}
	res := g.res
	switch toInt(res[0]) {
	case 4:
		return Decision{Outcome: RateLimited, RetryAfter: time.Duration(toInt(res[1])) * time.Millisecond}, nil
	case 8:
		return Decision{Outcome: Recovering, Reason: ReasonRecovering, RetryAfter: RecoveryRetryAfter}, nil
	}
	return Decision{}, nil
}

// Grant is an x402 payment settled on chain.
type Grant struct {
	TxHash  string      // settlement transaction (the grant's idempotency key)
	Wallet  string      // payer, lower-case 0x hex
	Network string      // CAIP-2, eip155:8453
	Amount  money.Units // USDC units paid
	Calls   int         // bundle calls bought
}

// PendingGrant is a settled payment ready to book: its request id, debit
// and bundle key are fixed once, so every retry of GrantBundle is the same
// operation (a retry whose earlier attempt landed is recognised by its key).
type PendingGrant struct {
	req    Request
	g      Grant
	d      Decision
	secret string
	id     string
	debit  string
	layout balances.Layout
}

// PrepareGrant checks a grant and fixes its identifiers.
func (m *Meter) PrepareGrant(req Request, g Grant) (*PendingGrant, error) {
	now := m.cfg.Now()
	d := m.newDecision(req, now)
	d.Wallet = g.Wallet
	switch {
	case req.Calls <= 0:
		return nil, errors.New("meter: a request without calls is not metered")
	case !walletRe.MatchString(g.Wallet):
		return nil, ErrBadWallet
	case g.TxHash == "" || len(g.TxHash) > 100 || g.Calls <= 0 || g.Amount <= 0:
		return nil, errors.New("meter: a grant needs a tx hash, calls and an amount")
	}
	debit, err := events.Encode(bundleDebit(d.ID, now.UnixMilli(), req.ChainID, events.PayerBundle, g.Wallet, req.Calls))
	if err != nil {
		return nil, err
	}
	pg := &PendingGrant{req: req, g: g, d: d, debit: debit[5].(string), layout: m.layout}
	if err := pg.newKey(); err != nil {
		return nil, err
	}
	return pg, nil
}

// newKey draws the bundle key: its secret and id both fall on the wallet's
// shard, where the grant creates it with the bundle it draws on.
func (pg *PendingGrant) newKey() error {
	secret, id, err := newKeyOn(pg.layout, pg.layout.ShardOfPayer(pg.g.Wallet))
	pg.secret, pg.id = secret, id
	return err
}

// GrantBundle books a prepared payment and draws the paying request's calls
// from the bundle, in one script call; it is safe to retry with the same
// PendingGrant. When the grant is new it creates a bundle key drawing on
// the wallet's bundle and returns it (shown once). Outcomes: Bundle;
// PaymentRequired with ReasonPaymentUsed when an earlier request already
// got this transaction's grant (a replayed payment: nothing is drawn), or
// ReasonBundleExhausted when even the grant does not cover the request.
func (m *Meter) GrantBundle(ctx context.Context, pg *PendingGrant) (Decision, *CreatedKey, error) {
	d, g := pg.d, pg.g
	d.shard = m.layout.ShardOfPayer(g.Wallet)
	l := m.layout.Shard(d.shard)
	ms := d.time.UnixMilli()
	for attempt := 0; ; attempt++ {
		hash := HashKey(pg.secret)
		grant, err := events.Encode(&events.BundleGranted{ID: g.TxHash, Wallet: g.Wallet, Calls: g.Calls, Amount: g.Amount,
			Network: g.Network, KeyID: pg.id, TimeMs: ms})
		if err != nil {
			return d, nil, err
		}
		key, err := events.Encode(&events.KeyCreated{KeyID: pg.id, KeyHash: hash, Kind: events.KeyBundle, Label: "x402 bundle",
			Tier: TierFree, Wallet: g.Wallet, TimeMs: ms})
		if err != nil {
			return d, nil, err
		}
		gr := &run{script: grantScript,
			keys: []string{l.Stream(0), l.Bundle(g.Wallet), l.BundleGrants(g.Wallet), l.KeyLookup(hash), l.Account(pg.id), l.Requests(d.date)},
			args: []any{g.TxHash, g.Calls, pg.req.Calls, ms, pg.id, "x402 bundle", g.Wallet, events.Version,
				events.TypeBundleGrant, grant[5], events.TypeKeyCreated, key[5], events.TypeDebit, pg.debit, int64(dayTTL / time.Second),
				m.cfg.Retain.Floor(d.shard)},
			wait: true, seqShard: d.shard + 1}
		m.exec(ctx, gr)
		if gr.err != nil {
			return d, nil, gr.err
		}
		res := gr.res
		code := toInt(res[0])
		if code == 8 {
			// The wallet's shard is older than the ledger: nothing was
			// granted, and the grant is retried once it is rebuilt.
			return d, nil, fmt.Errorf("%w: %s", ErrUnavailable, ReasonRecovering)
		}
		if code == -1 {
			// A SHA-256 collision of two fresh 256-bit secrets: never, but
			// the script changed nothing, so a fresh key is safe to try.
			if attempt > 3 {
				return d, nil, errors.New("meter: could not create a unique bundle key")
			}
			if err := pg.newKey(); err != nil {
				return d, nil, err
			}
			continue
		}
		d.BundleLeft = toInt(res[1])
		if len(res) >= 6 {
			// The grant, its key and the draw are kept until stored: a
			// payment is on chain, and a Redis that lost its grant before
			// ingest would lose the wallet's calls (retain.go). Appended
			// again as they were; on a promoted replica without them the
			// bundle stays short until reconcile (they are not rebooked).
			for i, typ := range []string{events.TypeBundleGrant, events.TypeKeyCreated, events.TypeDebit} {
				xid, _ := res[3+i].(string)
				data, _ := gr.args[9+2*i].(string)
				m.cfg.Retain.keep(d.shard, fact{xid: xid, data: data, typ: typ})
			}
		}
		var created *CreatedKey
		if len(res) > 2 && toInt(res[2]) == 1 {
			created = &CreatedKey{Secret: pg.secret, ID: pg.id, Created: d.time}
		}
		switch code {
		case 1:
			d.Outcome = Bundle
		case 3:
			d.Outcome, d.Reason = PaymentRequired, ReasonBundleExhausted
		case 5:
			d.Outcome, d.Reason = PaymentRequired, ReasonPaymentUsed
		default:
			return d, created, fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
		}
		return d, created, nil
	}
}
