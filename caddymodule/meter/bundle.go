package meter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Reasons of a PaymentRequired decision on the bundle paths.
const (
	ReasonBundleExhausted = "bundle_exhausted" // the wallet has fewer bundle calls left than the request has calls
	ReasonNonceUsed       = "siwx_nonce_used"  // the Sign-In-With-X message was already used
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
// (ReasonBundleExhausted or ReasonNonceUsed), RateLimited.
func (m *Meter) AuthorizeSIWX(ctx context.Context, req Request, wallet, nonce string, nonceTTL time.Duration) (Decision, error) {
	now := m.cfg.Now()
	ipKey, netKey := Subjects(req.IP)
	d := Decision{ID: NewRequestID(), calls: req.Calls, time: now, chain: req.ChainID, method: req.Method, date: m.date(now),
		ipKey: ipKey, netKey: netKey, Wallet: wallet}
	if req.Calls <= 0 {
		return d, errors.New("meter: a request without calls is not metered")
	}
	if !walletRe.MatchString(wallet) {
		return d, ErrBadWallet
	}
	if nonce == "" {
		return d, errors.New("meter: empty SIWX nonce")
	}
	ms := now.UnixMilli()
	enc, err := events.Encode(bundleDebit(d.ID, ms, req.ChainID, wallet, req.Calls))
	if err != nil {
		return d, err
	}
	l := m.layout
	res, err := siwxScript.Run(ctx, m.rdb,
		[]string{l.Stream(), l.IPRate(ipKey), l.Bundle(wallet), l.SIWXNonce(nonce), l.Requests(d.date)},
		ms, req.Calls, m.cfg.IPRate.interval(), m.cfg.IPRate.burst(), int64(max(nonceTTL, time.Second)/time.Second),
		events.TypeDebit, events.Version, enc[5], int64(dayTTL/time.Second)).Slice()
	if err != nil {
		return d, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	switch toInt(res[0]) {
	case 1:
		d.Outcome, d.BundleLeft = Bundle, toInt(res[1])
	case 3:
		d.Outcome, d.Reason, d.BundleLeft = PaymentRequired, ReasonBundleExhausted, toInt(res[1])
	case 4:
		d.Outcome, d.RetryAfter = RateLimited, time.Duration(toInt(res[1]))*time.Millisecond
	case 7:
		d.Outcome, d.Reason = PaymentRequired, ReasonNonceUsed
	default:
		return d, fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
	}
	d.Limits = m.configLimits()
	return d, nil
}

// Grant is an x402 payment settled on chain.
type Grant struct {
	TxHash  string      // settlement transaction (the grant's idempotency key)
	Wallet  string      // payer, lower-case 0x hex
	Network string      // CAIP-2, eip155:8453
	Amount  money.Units // USDC units paid
	Calls   int         // bundle calls bought
}

// GrantBundle books a settled payment and draws the paying request's calls
// from the new bundle, in one script call. When the grant is new it creates
// a bundle key drawing on the wallet's bundle and returns it (shown once);
// a transaction already granted grants nothing again (key is nil) and only
// draws. Outcomes: Bundle, or PaymentRequired (ReasonBundleExhausted) when
// even the grant does not cover the request.
func (m *Meter) GrantBundle(ctx context.Context, req Request, g Grant) (Decision, *CreatedKey, error) {
	now := m.cfg.Now()
	ipKey, netKey := Subjects(req.IP)
	d := Decision{ID: NewRequestID(), calls: req.Calls, time: now, chain: req.ChainID, method: req.Method, date: m.date(now),
		ipKey: ipKey, netKey: netKey, Wallet: g.Wallet}
	switch {
	case req.Calls <= 0:
		return d, nil, errors.New("meter: a request without calls is not metered")
	case !walletRe.MatchString(g.Wallet):
		return d, nil, ErrBadWallet
	case g.TxHash == "" || len(g.TxHash) > 100 || g.Calls <= 0 || g.Amount <= 0:
		return d, nil, errors.New("meter: a grant needs a tx hash, calls and an amount")
	}
	ms := now.UnixMilli()
	debit, err := events.Encode(bundleDebit(d.ID, ms, req.ChainID, g.Wallet, req.Calls))
	if err != nil {
		return d, nil, err
	}
	l := m.layout
	for attempt := 0; ; attempt++ {
		secret, err := NewKey()
		if err != nil {
			return d, nil, err
		}
		id, hash := accounts.NewID(), HashKey(secret)
		grant, err := events.Encode(&events.BundleGranted{ID: g.TxHash, Wallet: g.Wallet, Calls: g.Calls, Amount: g.Amount,
			Network: g.Network, KeyID: id, TimeMs: ms})
		if err != nil {
			return d, nil, err
		}
		key, err := events.Encode(&events.KeyCreated{KeyID: id, KeyHash: hash, Kind: events.KeyBundle, Label: "x402 bundle",
			Tier: TierFree, Wallet: g.Wallet, TimeMs: ms})
		if err != nil {
			return d, nil, err
		}
		res, err := grantScript.Run(ctx, m.rdb,
			[]string{l.Stream(), l.Bundle(g.Wallet), l.BundleGrants(g.Wallet), l.KeyLookup(hash), l.Account(id), l.Requests(d.date)},
			g.TxHash, g.Calls, req.Calls, ms, id, "x402 bundle", g.Wallet, events.Version,
			events.TypeBundleGrant, grant[5], events.TypeKeyCreated, key[5], events.TypeDebit, debit[5], int64(dayTTL/time.Second)).Slice()
		if err != nil {
			return d, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		code := toInt(res[0])
		if code == -1 {
			if attempt > 3 {
				return d, nil, errors.New("meter: could not create a unique bundle key")
			}
			continue
		}
		var created *CreatedKey
		if toInt(res[2]) == 1 {
			created = &CreatedKey{Secret: secret, ID: id, Created: now}
		}
		d.BundleLeft = toInt(res[1])
		switch code {
		case 1:
			d.Outcome = Bundle
		case 3:
			d.Outcome, d.Reason = PaymentRequired, ReasonBundleExhausted
		default:
			return d, created, fmt.Errorf("%w: unexpected script reply %v", ErrUnavailable, res)
		}
		return d, created, nil
	}
}
