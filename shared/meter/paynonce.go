package meter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// An x402 payment authorization (EIP-3009) is single-use on chain; the
// gateway makes it single-use here too, under the same nonce key space as
// Sign-In-With-X messages (SIWX draws write "1" there when they serve). A
// payment either draws from the payer's existing bundle (the authorization
// is then never settled) or goes to the facilitator (marked PaymentSettling
// first), never both.
const (
	// PaymentNonceKey prefixes an authorization's nonce key: wallet and
	// EIP-3009 nonce (nonces are per token and payer).
	PaymentNonceKey = "x402:"
	// PaymentSettling marks an authorization sent on to be settled.
	PaymentSettling = "settle"
)

// PaymentNonce is the nonce key of an authorization by wallet with nonce.
func PaymentNonce(wallet, nonceHex string) string { return PaymentNonceKey + wallet + ":" + nonceHex }

// ClaimSettle marks the authorization as sent on to be settled, unless it
// was already used; prev is what was there: "" (claimed now),
// PaymentSettling (an earlier request with the same authorization went to
// settle: settling is idempotent, go on) or anything else (it already drew
// from a bundle: it must not be settled).
func (m *Meter) ClaimSettle(ctx context.Context, nonceKey string, ttl time.Duration) (prev string, err error) {
	// On the wallet's shard, where AuthorizeSIWX draws with the same key.
	shard := 0
	if w, _, ok := strings.Cut(strings.TrimPrefix(nonceKey, PaymentNonceKey), ":"); ok && strings.HasPrefix(nonceKey, PaymentNonceKey) {
		shard = m.layout.ShardOfPayer(w)
	}
	prev, err = m.cmd.SetArgs(ctx, m.layout.Shard(shard).SIWXNonce(nonceKey), PaymentSettling,
		redis.SetArgs{Mode: "NX", Get: true, TTL: max(ttl, time.Second)}).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return prev, nil
}
