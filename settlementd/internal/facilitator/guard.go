package facilitator

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/time/rate"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// GatewayHeader carries the shared secret that authenticates the gateway's
// calls to the facilitator (settlementd's TOLLGATE_GATEWAY_SECRET, the
// gateway's settlementd_secret). The gateway sends it only to settlementd_url,
// never to an external facilitator_url.
const GatewayHeader = "X-Tollgate-Gateway-Secret"

// ReasonUnauthorized is the refusal of an escrow-moving request (a refund)
// that does not carry the gateway's secret.
const ReasonUnauthorized = "unauthorized_gateway_only"

// ReasonChannelOpen refuses a refund of a channel the gateway has not
// closed: vouchers could still be drawn on escrow the refund returns.
const ReasonChannelOpen = "invalid_batch_settlement_evm_channel_not_closed"

// ReasonGasCap refuses a transaction whose gas estimate is over the cap.
const ReasonGasCap = "gas_cap_exceeded"

// secrets holds the accepted gateway secrets as SHA-256 digests, so the
// constant-time compare does not leak their length.
type secrets struct{ cur, prev [32]byte }

func newSecrets(cur, prev string) *secrets {
	if cur == "" {
		return nil
	}
	s := &secrets{cur: sha256.Sum256([]byte(cur))}
	if prev != "" {
		s.prev = sha256.Sum256([]byte(prev))
	} else {
		s.prev = s.cur
	}
	return s
}

// fromGateway reports whether r carries the current or the previous
// gateway secret. Both are compared, in constant time, whatever the first
// gives.
func (f *Facilitator) fromGateway(r *http.Request) bool {
	s := f.secrets
	v := r.Header.Get(GatewayHeader)
	if s == nil || v == "" {
		return false
	}
	h := sha256.Sum256([]byte(v))
	a := subtle.ConstantTimeCompare(h[:], s.cur[:])
	b := subtle.ConstantTimeCompare(h[:], s.prev[:])
	return a|b == 1
}

// limited answers 429 and returns true when r is not the gateway's and the
// direct callers' budget is spent. The budget is one for all direct
// callers: behind the operator's proxy every caller has the proxy's
// address, and what it bounds is the relayer's gas and the chain RPC, not
// any one caller.
func (f *Facilitator) limited(w http.ResponseWriter, r *http.Request) bool {
	if f.limiter == nil || f.fromGateway(r) {
		return false
	}
	if f.limiter.Allow() {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(1))
	httpx.Error(w, http.StatusTooManyRequests, "rate_limited", "this facilitator serves the operator's gateway; direct calls are rate limited")
	return true
}

func newLimiter(perSec float64) *rate.Limiter {
	if perSec <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSec), max(1, int(4*perSec)))
}

// checkGas estimates the transaction and refuses it when it would use more
// than the cap: no caller makes the relayer pay for an arbitrary
// computation. A revert found by the estimate is left to the send, which
// reports it by name.
func (f *Facilitator) checkGas(ctx context.Context, to common.Address, data []byte) error {
	if f.cfg.GasCap == 0 {
		return nil
	}
	gas, err := f.cfg.Backend.EstimateGas(ctx, ethereum.CallMsg{From: f.relayer, To: &to, Data: data})
	if err != nil {
		return nil
	}
	if gas > f.cfg.GasCap {
		return x402.Bad(ReasonGasCap, "the transaction needs %d gas; the cap is %d", gas, f.cfg.GasCap)
	}
	return nil
}

// settledMemo remembers the answers of settledBefore, so a header replayed
// after its settlement costs one lookup, not one log scan each time.
type settledMemo struct {
	tx      common.Hash
	ok      bool
	expires time.Time
}

// settledMemoSize bounds the memo; past it, the oldest half is dropped.
const settledMemoSize = 10_000
