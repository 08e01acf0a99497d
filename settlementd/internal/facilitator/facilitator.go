// Package facilitator is settlementd's x402 facilitator for the "exact"
// scheme on EVM (EIP-3009 TransferWithAuthorization, USDC-style tokens),
// and for the deposits of the "batch-settlement" scheme (batch.go):
//
//	GET  /x402/supported  the (version, scheme, network) kinds served
//	POST /x402/verify     {x402Version, paymentPayload, paymentRequirements} → {isValid, invalidReason?, payer}
//	POST /x402/settle     same body → {success, errorReason?, transaction, network, payer}
//
// Both x402 v1 (network "base", maxAmountRequired) and v2 (network
// "eip155:8453", amount, the requirement echoed in paymentPayload.accepted)
// are accepted. A payment that fails a check is answered 200 with
// isValid:false / success:false and a snake_case reason, as the x402 spec
// does; a body that is not the expected JSON is 400; an unreachable chain
// RPC is 503.
//
// Settlement submits transferWithAuthorization from the relayer key (the
// v,r,s overload for 65-byte signatures, the bytes overload otherwise) and
// waits for the receipt. Settles of one (from, nonce) are serialised in
// process and re-verified, including authorizationState on chain, so the
// same authorization is never submitted twice by this process. With Track
// (settlementd always), the transaction goes through chain.Sender: recorded
// in PostgreSQL before it is sent, keyed by the authorization (so no
// replica builds a second one), replaced with higher fees when stuck, sent
// again when dropped, and followed to its receipt by the leader's
// "x402-transactions" job after the answer has gone.
package facilitator

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/batchsettle"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// Reasons of isValid:false / success:false (shared/x402 defines them; these
// names keep the package's API).
const (
	ReasonVersion        = x402.ReasonVersion
	ReasonScheme         = x402.ReasonScheme
	ReasonNetwork        = x402.ReasonNetwork
	ReasonPayload        = x402.ReasonPayload
	ReasonRequirements   = x402.ReasonRequirements
	ReasonAsset          = x402.ReasonAsset
	ReasonSignature      = x402.ReasonSignature
	ReasonRecipient      = x402.ReasonRecipient
	ReasonValueV1        = x402.ReasonValueV1
	ReasonValueV2        = x402.ReasonValueV2
	ReasonValidAfter     = x402.ReasonValidAfter
	ReasonValidBefore    = x402.ReasonValidBefore
	ReasonNonceUsed      = x402.ReasonNonceUsed
	ReasonFunds          = x402.ReasonFunds
	ReasonTxState        = x402.ReasonTxState
	ReasonUnexpectedSett = x402.ReasonUnexpectedSett
)

// The wire types are shared/x402's.
type (
	Requirements   = x402.Requirements
	Authorization  = x402.Authorization
	ExactPayload   = x402.ExactPayload
	Payload        = x402.Payload
	Request        = x402.Request
	VerifyResponse = x402.VerifyResponse
	SettleResponse = x402.SettleResponse
)

// Digest and DomainSeparator are shared/x402's EIP-712 hashes.
var (
	Digest          = x402.Digest
	DomainSeparator = x402.DomainSeparator
)

// Backend is the JSON-RPC surface used (*ethclient.Client satisfies it).
type Backend interface {
	bind.ContractBackend
	bind.DeployBackend
}

// Config of a Facilitator.
type Config struct {
	Backend Backend
	ChainID uint64            // the chain Backend serves (8453)
	Relayer *ecdsa.PrivateKey // pays the gas of transferWithAuthorization
	// TokenName and TokenVersion are the EIP-712 domain of the token on this
	// network (default "USD Coin", "2", Base USDC's).
	TokenName, TokenVersion string
	ReceiptTimeout          time.Duration    // default 60 s
	Now                     func() time.Time // default time.Now
	Log                     *zap.Logger
	// RPCURL, when set, is removed from logged errors (it may hold an API key).
	RPCURL string
	// Offer is the operator's offer (shared/x402.Offer, the one the
	// gateway's 402 states): verify and settle take nothing else. Its
	// ReceiverAuthorizer is set by ClaimJob. ChainID fills in from the
	// facilitator's own.
	Offer x402.Offer
	// GatewaySecret and GatewaySecretPrevious authenticate the gateway
	// (guard.go); without them no refund is made.
	GatewaySecret, GatewaySecretPrevious string
	// GasCap is the most gas one transaction may use (0: no cap);
	// RateLimit the verify/settle calls per second of callers other than
	// the gateway (0: none).
	GasCap    uint64
	RateLimit float64
}

// Facilitator verifies and settles x402 exact-EVM payments on one chain.
type Facilitator struct {
	claims  *ClaimJob // set by ClaimJob: the receiver authorizer that signs claims and refunds
	cfg     Config
	usdc    *testusdc.TestUSDC
	relayer common.Address

	mu     sync.Mutex
	locks  map[string]*keyLock // per from+nonce settle locks
	sendMu sync.Mutex          // one relayer transaction built and sent at a time (account nonce)

	sender *chain.Sender // nil: untracked (bind.Transact), see Track
	signer *chain.Signer

	secrets *secrets      // the gateway's (guard.go); nil: none configured
	limiter *rate.Limiter // direct callers' budget; nil: unlimited
	memoMu  sync.Mutex
	memo    map[string]settledMemo // settledBefore's answers by authorization
}

// Track records, unsticks and follows every settlement transaction in
// PostgreSQL (chain_txs, chain_tx_attempts) with policy. Backend must serve
// chain.Backend (an *ethclient.Client does). Call before Register.
func (f *Facilitator) Track(pool *pgxpool.Pool, policy chain.TxPolicy) error {
	b, ok := f.cfg.Backend.(chain.Backend)
	if !ok {
		return errors.New("facilitator: the backend cannot track transactions")
	}
	f.signer = chain.NewSigner("x402-relayer", f.cfg.Relayer)
	s, err := chain.NewSender(chain.SenderConfig{Pool: pool, Client: b, ChainID: f.cfg.ChainID, Policy: policy,
		Signers: []*chain.Signer{f.signer}, PollInterval: 200 * time.Millisecond, Log: f.cfg.Log})
	if err != nil {
		return err
	}
	f.sender = s
	return nil
}

// TxJob is the leader's job that follows the tracked transactions after
// their answer has gone (receipt timeout, restart): receipts recorded,
// stuck ones replaced, dropped ones sent again. nil without Track.
func (f *Facilitator) TxJob() *TxJob {
	if f.sender == nil {
		return nil
	}
	return &TxJob{f.sender}
}

// TxJob resolves the facilitator's pending transactions.
type TxJob struct{ s *chain.Sender }

// Name implements jobs.Job.
func (j *TxJob) Name() string { return "x402-transactions" }

// Run implements jobs.Job.
func (j *TxJob) Run(ctx context.Context) error { return j.s.ResolvePending(ctx) }

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// New checks cfg and builds a Facilitator.
func New(cfg Config) (*Facilitator, error) {
	if cfg.Backend == nil || cfg.Relayer == nil || cfg.ChainID == 0 {
		return nil, errors.New("facilitator: backend, relayer key and chain id are required")
	}
	if cfg.TokenName == "" {
		cfg.TokenName = "USD Coin"
	}
	if cfg.TokenVersion == "" {
		cfg.TokenVersion = "2"
	}
	if cfg.ReceiptTimeout <= 0 {
		cfg.ReceiptTimeout = 60 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Offer.ChainID == 0 {
		cfg.Offer.ChainID = cfg.ChainID
	}
	if cfg.Offer.ChainID != cfg.ChainID || cfg.Offer.PayTo == (common.Address{}) || cfg.Offer.Asset == (common.Address{}) {
		return nil, errors.New("facilitator: the offer (asset and payTo on the facilitator's chain) is required: it settles nothing else")
	}
	return &Facilitator{cfg: cfg, usdc: testusdc.NewTestUSDC(), relayer: crypto.PubkeyToAddress(cfg.Relayer.PublicKey),
		locks: map[string]*keyLock{}, secrets: newSecrets(cfg.GatewaySecret, cfg.GatewaySecretPrevious),
		limiter: newLimiter(cfg.RateLimit), memo: map[string]settledMemo{}}, nil
}

// Relayer is the address that submits settlements.
func (f *Facilitator) Relayer() common.Address { return f.relayer }

// Register adds the three routes.
func (f *Facilitator) Register(handle func(pattern string, h http.Handler)) {
	handle("GET /x402/supported", http.HandlerFunc(f.supported))
	handle("POST /x402/verify", http.HandlerFunc(f.verify))
	handle("POST /x402/settle", http.HandlerFunc(f.settle))
}

// Kind is one entry of /x402/supported.
type Kind struct {
	X402Version int    `json:"x402Version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
}

func (f *Facilitator) supported(w http.ResponseWriter, _ *http.Request) {
	var kinds []Kind
	if n := x402.V1Name(f.cfg.ChainID); n != "" {
		kinds = append(kinds, Kind{1, "exact", n})
	}
	kinds = append(kinds, Kind{2, "exact", f.domain().CAIP2()})
	if f.cfg.Offer.ReceiverAuthorizer != (common.Address{}) {
		kinds = append(kinds, Kind{2, batchsettle.Scheme, f.domain().CAIP2()})
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"kinds": kinds})
}

// readBody reads the whole body (at most httpx.MaxBody); on failure it has
// answered 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpx.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpx.Error(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is over 64 KiB")
		} else {
			httpx.Error(w, http.StatusBadRequest, "invalid_json", "the body could not be read")
		}
		return nil, false
	}
	return b, true
}

// decode reads the body; on failure it has answered 400 (413).
func decode(w http.ResponseWriter, r *http.Request) (*Request, bool) {
	var req Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, httpx.MaxBody))
	if err := dec.Decode(&req); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpx.Error(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is over 64 KiB")
			return nil, false
		}
		httpx.Error(w, http.StatusBadRequest, "invalid_json", "the body is not an x402 facilitator request: "+err.Error())
		return nil, false
	}
	if dec.More() {
		httpx.Error(w, http.StatusBadRequest, "invalid_json", "the body must hold exactly one JSON object")
		return nil, false
	}
	if req.PaymentPayload == nil || req.PaymentRequirements == nil {
		httpx.Error(w, http.StatusBadRequest, "invalid_json", "paymentPayload and paymentRequirements are required")
		return nil, false
	}
	return &req, true
}

// errRPC marks a chain RPC failure (→ 503).
var errRPC = errors.New("chain RPC unavailable")

// check runs shared/x402's offline checks with this facilitator's chain,
// token domain and clock.
func (f *Facilitator) check(req *Request) (*x402.Checked, error) {
	return f.checkAt(req, f.cfg.Now())
}

// checkAt is check at now: first that the requirement is the operator's
// own offer (asset, payTo, network, price), then shared/x402's checks of
// the authorization against it.
func (f *Facilitator) checkAt(req *Request, now time.Time) (*x402.Checked, error) {
	if v := req.X402Version; (v != 1 && v != 2) || req.PaymentPayload.X402Version != v {
		return nil, x402.Bad(ReasonVersion, "x402Version %d (payload %d); 1 and 2 are supported", v, req.PaymentPayload.X402Version)
	}
	if err := f.cfg.Offer.CheckExact(req.X402Version, *req.PaymentRequirements); err != nil {
		return nil, err
	}
	return x402.Check(req, f.domain(), now)
}

func (f *Facilitator) domain() x402.Domain {
	return x402.Domain{ChainID: f.cfg.ChainID, Name: f.cfg.TokenName, Version: f.cfg.TokenVersion}
}

// callData is the transferWithAuthorization call: v,r,s for 65 bytes, the
// bytes overload (ERC-1271 wallets) otherwise.
func (f *Facilitator) callData(c *x402.Checked) []byte {
	if len(c.Sig) == 65 {
		var r, s [32]byte
		copy(r[:], c.Sig[:32])
		copy(s[:], c.Sig[32:64])
		return f.usdc.PackTransferWithAuthorization0(c.From, c.To, c.Value, c.ValidAfter, c.ValidBefore, c.Nonce, c.Sig[64], r, s)
	}
	return f.usdc.PackTransferWithAuthorization(c.From, c.To, c.Value, c.ValidAfter, c.ValidBefore, c.Nonce, c.Sig)
}

// onChain runs the checks that read the chain: nonce unused, balance, and
// for signatures other than 65 bytes a simulation of the transfer (the
// token checks the signature with ERC-1271). An RPC failure wraps errRPC.
func (f *Facilitator) onChain(ctx context.Context, c *x402.Checked) error {
	tok := f.usdc.Instance(f.cfg.Backend, c.Asset)
	opts := &bind.CallOpts{Context: ctx}
	used, err := bind.Call(tok, opts, f.usdc.PackAuthorizationState(c.From, c.Nonce), f.usdc.UnpackAuthorizationState)
	if err != nil {
		return f.callErr("authorizationState", err)
	}
	if used {
		return x402.Bad(ReasonNonceUsed, "authorization nonce %s of %s is already used", hexutil.Encode(c.Nonce[:]), c.From.Hex())
	}
	bal, err := bind.Call(tok, opts, f.usdc.PackBalanceOf(c.From), f.usdc.UnpackBalanceOf)
	if err != nil {
		return f.callErr("balanceOf", err)
	}
	if bal.Cmp(c.Value) < 0 {
		return x402.Bad(ReasonFunds, "balance %s < value %s", bal, c.Value)
	}
	if len(c.Sig) != 65 {
		if _, err := tok.CallRaw(&bind.CallOpts{Context: ctx, From: f.relayer}, f.callData(c)); err != nil {
			if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
				return x402.Bad(ReasonSignature, "the token refuses the signature: %s", reason)
			}
			return fmt.Errorf("%w: simulate transferWithAuthorization: %v", errRPC, err)
		}
	}
	return nil
}

// callErr: a revert of a view call means the asset is not an EIP-3009
// token; anything else is the RPC.
func (f *Facilitator) callErr(what string, err error) error {
	if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
		return x402.Bad(ReasonRequirements, "%s on the asset reverted: %s", what, reason)
	}
	if errors.Is(err, bind.ErrNoCode) {
		return x402.Bad(ReasonRequirements, "the asset has no contract code")
	}
	return fmt.Errorf("%w: %s: %v", errRPC, what, err)
}

// revertReason renders a revert carried by err.
func revertReason(err error, unpack revert.Unpacker) (string, bool) {
	if v, derr := revert.Decode(err, unpack); derr == nil {
		if r, ok := v.(*revert.Reason); ok {
			return r.Message, true
		}
		name := fmt.Sprintf("%T", v)
		name = name[strings.LastIndex(name, ".")+1:]
		name = strings.TrimPrefix(name, "TestUSDC")
		return name + strings.TrimPrefix(fmt.Sprintf("%+v", v), "&"), true
	}
	if strings.Contains(err.Error(), "execution reverted") {
		return err.Error(), true
	}
	return "", false
}

// Verify runs every check. The error is *x402.Invalid (a payment failure) or
// wraps errRPC.
func (f *Facilitator) Verify(ctx context.Context, req *Request) (*x402.Checked, error) {
	c, err := f.check(req)
	if err != nil {
		return nil, err
	}
	if err := f.onChain(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

func (f *Facilitator) verify(w http.ResponseWriter, r *http.Request) {
	if f.limited(w, r) {
		return
	}
	req, ok := decode(w, r)
	if !ok {
		return
	}
	payer := x402.PayerOf(req)
	_, err := f.Verify(r.Context(), req)
	var inv *x402.Invalid
	switch {
	case err == nil:
		httpx.JSON(w, http.StatusOK, VerifyResponse{IsValid: true, Payer: payer})
	case errors.As(err, &inv):
		httpx.JSON(w, http.StatusOK, VerifyResponse{InvalidReason: inv.Reason, InvalidMessage: inv.Msg, Payer: payer})
	default:
		f.cfg.Log.Warn("x402 verify: chain RPC failed", zap.Error(f.scrub(err)))
		httpx.Error(w, http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable")
	}
}

// scrub removes the RPC URL from err.
func (f *Facilitator) scrub(err error) error {
	if f.cfg.RPCURL == "" || !strings.Contains(err.Error(), f.cfg.RPCURL) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), f.cfg.RPCURL, chain.Redact(f.cfg.RPCURL)))
}

// lock serialises settles of one (from, nonce).
func (f *Facilitator) lock(key string) func() {
	f.mu.Lock()
	l := f.locks[key]
	if l == nil {
		l = &keyLock{}
		f.locks[key] = l
	}
	l.refs++
	f.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		f.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(f.locks, key)
		}
		f.mu.Unlock()
	}
}

func (f *Facilitator) settle(w http.ResponseWriter, r *http.Request) {
	if f.limited(w, r) {
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if isBatch(body) { // a batch-settlement deposit (batch.go)
		f.batchSettle(w, r, body)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	req, ok := decode(w, r)
	if !ok {
		return
	}
	// The answer may come after the receipt wait: outlast the server's
	// write timeout, or a settled payment would end in a dropped answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(f.cfg.ReceiptTimeout + time.Minute))
	resp := SettleResponse{Network: req.PaymentRequirements.Network, Payer: x402.PayerOf(req)}
	a := req.PaymentPayload.Payload.Authorization
	unlock := f.lock(strings.ToLower(a.From) + "/" + strings.ToLower(a.Nonce))
	defer unlock()

	var inv *x402.Invalid
	c, err := f.Verify(r.Context(), req)
	if errors.As(err, &inv) && inv.Reason == ReasonNonceUsed {
		// Settling is idempotent: an authorization this exact payment already
		// moved (a retry after a lost answer or a receipt timeout) answers
		// success with the transaction that moved it, so the caller can
		// still grant what was paid for.
		if tx, ok := f.settledBefore(r.Context(), req); ok {
			resp.Success, resp.Transaction = true, tx.Hex()
			httpx.JSON(w, http.StatusOK, resp)
			return
		}
	}
	if errors.As(err, &inv) {
		resp.ErrorReason, resp.ErrorMessage = inv.Reason, inv.Msg
		httpx.JSON(w, http.StatusOK, resp)
		return
	}
	if err != nil {
		f.cfg.Log.Warn("x402 settle: chain RPC failed", zap.Error(f.scrub(err)))
		httpx.Error(w, http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable")
		return
	}
	hash, wait, err := f.submit(r.Context(), c)
	if errors.As(err, &inv) {
		resp.ErrorReason, resp.ErrorMessage = inv.Reason, inv.Msg
		httpx.JSON(w, http.StatusOK, resp)
		return
	}
	if err != nil {
		f.cfg.Log.Warn("x402 settle: submit failed", zap.Error(f.scrub(err)))
		httpx.Error(w, http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable")
		return
	}
	resp.Transaction = hash.Hex()
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.ReceiptTimeout)
	defer cancel()
	hash, rcpt, err := wait(ctx)
	resp.Transaction = hash.Hex()
	switch {
	case err != nil:
		f.cfg.Log.Warn("x402 settle: no receipt", zap.String("tx", hash.Hex()), zap.Error(f.scrub(err)))
		resp.ErrorReason = ReasonUnexpectedSett
		resp.ErrorMessage = fmt.Sprintf("transaction %s sent, no receipt within %s", hash.Hex(), f.cfg.ReceiptTimeout)
		httpx.JSON(w, http.StatusServiceUnavailable, resp)
	case rcpt.Status != types.ReceiptStatusSuccessful:
		resp.ErrorReason, resp.ErrorMessage = ReasonTxState, "transferWithAuthorization reverted in block "+rcpt.BlockNumber.String()
		httpx.JSON(w, http.StatusOK, resp)
	default:
		resp.Success = true
		f.cfg.Log.Info("x402 payment settled", zap.String("tx", hash.Hex()), zap.String("payer", c.From.Hex()),
			zap.String("to", c.To.Hex()), zap.String("value", c.Value.String()))
		httpx.JSON(w, http.StatusOK, resp)
	}
}

var (
	authorizationUsedTopic = crypto.Keccak256Hash([]byte("AuthorizationUsed(address,bytes32)"))
	transferTopic          = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
)

// settledLookback bounds the search for an earlier settlement: an x402
// authorization lives minutes (maxTimeoutSeconds), far fewer blocks.
const settledLookback = 50_000

// settledBefore finds the transaction that used this authorization, if it
// moved exactly the authorized value from the payer to the payee of the
// request: AuthorizationUsed(from, nonce) on the asset, then the Transfer
// in the same receipt.
func (f *Facilitator) settledBefore(ctx context.Context, req *Request) (common.Hash, bool) {
	c, err := f.check(req)
	var inv *x402.Invalid
	if errors.As(err, &inv) && inv.Reason == ReasonValidBefore {
		// An expired window does not undo a settlement made inside it: check
		// the payment as of the window's last second.
		if vb, ok := x402.ParseUint256(req.PaymentPayload.Payload.Authorization.ValidBefore); ok && vb.IsInt64() {
			c, err = f.checkAt(req, time.Unix(vb.Int64()-1, 0))
		}
	}
	if err != nil || c == nil {
		return common.Hash{}, false
	}
	if f.sender != nil {
		// Tracked, this facilitator's own settlement of the authorization is
		// recorded under its purpose: a lookup, never a log scan. One it did
		// not send is not a payment it settled.
		t, err := f.sender.Last(ctx, f.purpose(c))
		if err != nil || t == nil || t.State != chain.StateMined {
			return common.Hash{}, false
		}
		return f.movedExactly(ctx, c, t.Hash)
	}
	key := f.purpose(c)
	f.memoMu.Lock()
	m, hit := f.memo[key]
	f.memoMu.Unlock()
	if hit && (m.ok || time.Now().Before(m.expires)) {
		return m.tx, m.ok
	}
	tx, ok := f.scanSettled(ctx, c)
	f.memoMu.Lock()
	if len(f.memo) >= settledMemoSize {
		for k := range f.memo { // map order is random: drops about half
			if len(f.memo) < settledMemoSize/2 {
				break
			}
			delete(f.memo, k)
		}
	}
	f.memo[key] = settledMemo{tx: tx, ok: ok, expires: time.Now().Add(time.Minute)}
	f.memoMu.Unlock()
	return tx, ok
}

// purpose is the chain_txs purpose of an authorization's settlement.
func (f *Facilitator) purpose(c *x402.Checked) string {
	return fmt.Sprintf("x402:%s:%s:%s", strings.ToLower(c.Asset.Hex()), strings.ToLower(c.From.Hex()), hexutil.Encode(c.Nonce[:]))
}

// scanSettled looks for the authorization's use in the asset's logs, at
// most settledLookback blocks back (untracked facilitators only; memoised
// by settledBefore).
func (f *Facilitator) scanSettled(ctx context.Context, c *x402.Checked) (common.Hash, bool) {
	head, err := f.cfg.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return common.Hash{}, false
	}
	from := uint64(0)
	if n := head.Number.Uint64(); n > settledLookback {
		from = n - settledLookback
	}
	logs, err := f.cfg.Backend.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(from), Addresses: []common.Address{c.Asset},
		Topics: [][]common.Hash{{authorizationUsedTopic}, {common.BytesToHash(c.From.Bytes())}, {common.Hash(c.Nonce)}},
	})
	if err != nil || len(logs) == 0 {
		return common.Hash{}, false
	}
	return f.movedExactly(ctx, c, logs[0].TxHash)
}

// movedExactly reports whether transaction tx succeeded and moved exactly
// the authorized value from the payer to the payee.
func (f *Facilitator) movedExactly(ctx context.Context, c *x402.Checked, tx common.Hash) (common.Hash, bool) {
	rcpt, err := f.cfg.Backend.TransactionReceipt(ctx, tx)
	if err != nil || rcpt.Status != types.ReceiptStatusSuccessful {
		return common.Hash{}, false
	}
	for _, l := range rcpt.Logs {
		if l.Address == c.Asset && len(l.Topics) == 3 && l.Topics[0] == transferTopic &&
			l.Topics[1] == common.BytesToHash(c.From.Bytes()) && l.Topics[2] == common.BytesToHash(c.To.Bytes()) &&
			new(big.Int).SetBytes(l.Data).Cmp(c.Value) == 0 {
			return tx, true
		}
	}
	return common.Hash{}, false
}

// submit sends transferWithAuthorization from the relayer. A revert found
// by gas estimation is an *x402.Invalid with the decoded reason. wait
// returns the receipt and the hash of the transaction mined (a replacement
// of a stuck one has another hash).
func (f *Facilitator) submit(ctx context.Context, c *x402.Checked) (hash common.Hash,
	wait func(context.Context) (common.Hash, *types.Receipt, error), err error) {
	if err := f.checkGas(ctx, c.Asset, f.callData(c)); err != nil {
		return common.Hash{}, nil, err
	}
	if f.sender != nil {
		return f.submitTracked(ctx, c)
	}
	f.sendMu.Lock()
	defer f.sendMu.Unlock()
	opts := bind.NewKeyedTransactor(f.cfg.Relayer, new(big.Int).SetUint64(f.cfg.ChainID))
	opts.Context = ctx
	tx, err := bind.Transact(f.usdc.Instance(f.cfg.Backend, c.Asset), opts, f.callData(c))
	if err != nil {
		if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
			return common.Hash{}, nil, x402.Bad(ReasonTxState, "transferWithAuthorization reverts: %s", reason)
		}
		return common.Hash{}, nil, fmt.Errorf("%w: send transferWithAuthorization: %v", errRPC, err)
	}
	return tx.Hash(), func(ctx context.Context) (common.Hash, *types.Receipt, error) {
		r, err := deploy.WaitReceipt(ctx, f.cfg.Backend, tx.Hash(), 100*time.Millisecond)
		return tx.Hash(), r, err
	}, nil
}

// submitTracked is submit through chain.Sender. The purpose is the
// authorization, so a retry, another replica or a restart finds the
// recorded transaction instead of building another.
func (f *Facilitator) submitTracked(ctx context.Context, c *x402.Checked) (common.Hash,
	func(context.Context) (common.Hash, *types.Receipt, error), error) {
	var amount money.Units
	if c.Value.IsInt64() {
		amount = money.Units(c.Value.Int64())
	}
	t, err := f.sender.Submit(ctx, f.signer, chain.Intent{
		Purpose: f.purpose(c),
		Kind:    chain.KindX402Settle, To: c.Asset, Data: f.callData(c), Recipient: c.To, Amount: amount, Unpack: f.usdc.UnpackError,
	})
	if t == nil {
		if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
			return common.Hash{}, nil, x402.Bad(ReasonTxState, "transferWithAuthorization reverts: %s", reason)
		}
		return common.Hash{}, nil, fmt.Errorf("%w: send transferWithAuthorization: %v", errRPC, err)
	}
	if err != nil && errors.Is(err, chain.ErrConflict) {
		return common.Hash{}, nil, fmt.Errorf("%w: %v", errRPC, err)
	}
	// A broadcast error leaves the transaction recorded: the wait (and the
	// leader's job) sends it again.
	return t.Hash, func(ctx context.Context) (common.Hash, *types.Receipt, error) {
		done, err := f.sender.Await(ctx, []*chain.Tx{t}, f.cfg.ReceiptTimeout)
		if err != nil {
			return t.Hash, nil, err
		}
		if !done || t.State == chain.StateConflict {
			return t.Hash, nil, fmt.Errorf("transaction %s %s", t.Hash.Hex(), t.State)
		}
		r, err := f.cfg.Backend.TransactionReceipt(ctx, t.Hash)
		return t.Hash, r, err
	}, nil
}
