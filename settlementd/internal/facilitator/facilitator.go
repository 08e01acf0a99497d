// Package facilitator is settlementd's x402 facilitator for the "exact"
// scheme on EVM (EIP-3009 TransferWithAuthorization, USDC-style tokens):
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
// same authorization is never submitted twice by this process.
package facilitator

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
)

// Reasons of isValid:false / success:false (x402 spec §1.6 names where the
// spec has one).
const (
	ReasonVersion        = "invalid_x402_version"
	ReasonScheme         = "unsupported_scheme"
	ReasonNetwork        = "invalid_network"
	ReasonPayload        = "invalid_payload"
	ReasonRequirements   = "invalid_payment_requirements"
	ReasonAsset          = "invalid_exact_evm_payload_asset_mismatch"
	ReasonSignature      = "invalid_exact_evm_payload_signature"
	ReasonRecipient      = "invalid_exact_evm_payload_recipient_mismatch"
	ReasonValueV1        = "invalid_exact_evm_payload_authorization_value"
	ReasonValueV2        = "invalid_exact_evm_payload_authorization_value_mismatch"
	ReasonValidAfter     = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonValidBefore    = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonNonceUsed      = "invalid_exact_evm_payload_authorization_nonce_used"
	ReasonFunds          = "insufficient_funds"
	ReasonTxState        = "invalid_transaction_state"
	ReasonUnexpectedSett = "unexpected_settle_error"
)

// v1 network names → chain id (the legacy names x402 v1 uses).
var v1Networks = map[string]uint64{"base": 8453, "base-sepolia": 84532}

// v1Name is the v1 network name of chainID ("" if none).
func v1Name(chainID uint64) string {
	for n, id := range v1Networks {
		if id == chainID {
			return n
		}
	}
	return ""
}

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
}

// Facilitator verifies and settles x402 exact-EVM payments on one chain.
type Facilitator struct {
	cfg     Config
	usdc    *testusdc.TestUSDC
	relayer common.Address

	mu     sync.Mutex
	locks  map[string]*keyLock // per from+nonce settle locks
	sendMu sync.Mutex          // one relayer transaction built and sent at a time (account nonce)
}

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
	return &Facilitator{cfg: cfg, usdc: testusdc.NewTestUSDC(), relayer: crypto.PubkeyToAddress(cfg.Relayer.PublicKey),
		locks: map[string]*keyLock{}}, nil
}

// Relayer is the address that submits settlements.
func (f *Facilitator) Relayer() common.Address { return f.relayer }

// Register adds the three routes.
func (f *Facilitator) Register(handle func(pattern string, h http.Handler)) {
	handle("GET /x402/supported", http.HandlerFunc(f.supported))
	handle("POST /x402/verify", http.HandlerFunc(f.verify))
	handle("POST /x402/settle", http.HandlerFunc(f.settle))
}

func (f *Facilitator) caip2() string { return fmt.Sprintf("eip155:%d", f.cfg.ChainID) }

// Kind is one entry of /x402/supported.
type Kind struct {
	X402Version int    `json:"x402Version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
}

func (f *Facilitator) supported(w http.ResponseWriter, _ *http.Request) {
	var kinds []Kind
	if n := v1Name(f.cfg.ChainID); n != "" {
		kinds = append(kinds, Kind{1, "exact", n})
	}
	kinds = append(kinds, Kind{2, "exact", f.caip2()})
	httpx.JSON(w, http.StatusOK, map[string]any{"kinds": kinds})
}

// Requirements is a PaymentRequirements of v1 or v2 (the fields this
// facilitator reads; others are ignored).
type Requirements struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount,omitempty"`            // v2
	MaxAmountRequired string `json:"maxAmountRequired,omitempty"` // v1
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
}

// Authorization is the EIP-3009 authorization as x402 sends it.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactPayload is the scheme payload.
type ExactPayload struct {
	Signature     string        `json:"signature"`
	Authorization Authorization `json:"authorization"`
}

// Payload is a PaymentPayload of v1 (scheme, network at the top) or v2
// (accepted).
type Payload struct {
	X402Version int           `json:"x402Version"`
	Scheme      string        `json:"scheme,omitempty"`
	Network     string        `json:"network,omitempty"`
	Accepted    *Requirements `json:"accepted,omitempty"`
	Payload     ExactPayload  `json:"payload"`
}

// Request is the body of /verify and /settle.
type Request struct {
	X402Version         int           `json:"x402Version"`
	PaymentPayload      *Payload      `json:"paymentPayload"`
	PaymentRequirements *Requirements `json:"paymentRequirements"`
}

// VerifyResponse is the /verify answer.
type VerifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer"`
}

// SettleResponse is the /settle answer.
type SettleResponse struct {
	Success      bool   `json:"success"`
	ErrorReason  string `json:"errorReason,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Transaction  string `json:"transaction"`
	Network      string `json:"network"`
	Payer        string `json:"payer"`
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

// checked is an authorization that passed the offline checks.
type checked struct {
	from, to                       common.Address
	value, validAfter, validBefore *big.Int
	nonce                          [32]byte
	sig                            []byte
	asset                          common.Address
	network                        string
}

// invalid is a failed check.
type invalid struct{ reason, msg string }

func (e *invalid) Error() string { return e.reason + ": " + e.msg }

func bad(reason, format string, a ...any) error {
	return &invalid{reason: reason, msg: fmt.Sprintf(format, a...)}
}

// errRPC marks a chain RPC failure (→ 503).
var errRPC = errors.New("chain RPC unavailable")

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func parseUint256(s string) (*big.Int, bool) {
	if s == "" || len(s) > 78 {
		return nil, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Cmp(maxUint256) > 0 {
		return nil, false
	}
	return v, true
}

func parseAddr(s string) (common.Address, bool) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") || !common.IsHexAddress(s) {
		return common.Address{}, false
	}
	return common.HexToAddress(s), true
}

// payerOf is authorization.from when it is an address.
func payerOf(req *Request) string {
	if a, ok := parseAddr(req.PaymentPayload.Payload.Authorization.From); ok {
		return a.Hex()
	}
	return ""
}

// check runs the offline checks: versions, scheme, network, asset,
// authorization fields, recipient, value, time window and (65-byte)
// signature recovery.
func (f *Facilitator) check(req *Request) (*checked, error) {
	p, rq := req.PaymentPayload, req.PaymentRequirements
	v := req.X402Version
	if (v != 1 && v != 2) || p.X402Version != v {
		return nil, bad(ReasonVersion, "x402Version %d (payload %d); 1 and 2 are supported", v, p.X402Version)
	}
	scheme, network := p.Scheme, p.Network
	if v == 2 {
		if p.Accepted == nil {
			return nil, bad(ReasonPayload, "a v2 payload carries the accepted requirement")
		}
		scheme, network = p.Accepted.Scheme, p.Accepted.Network
	}
	if scheme != "exact" || rq.Scheme != "exact" {
		return nil, bad(ReasonScheme, "scheme %q / %q; only exact is supported", scheme, rq.Scheme)
	}
	want := f.caip2()
	if v == 1 {
		want = v1Name(f.cfg.ChainID)
	}
	if network != rq.Network || network != want {
		return nil, bad(ReasonNetwork, "network %q / %q; x402 v%d here is %q", network, rq.Network, v, want)
	}
	asset, ok := parseAddr(rq.Asset)
	if !ok {
		return nil, bad(ReasonRequirements, "asset %q is not an address", rq.Asset)
	}
	if v == 2 && !strings.EqualFold(p.Accepted.Asset, rq.Asset) {
		return nil, bad(ReasonAsset, "payload asset %s, required %s", p.Accepted.Asset, rq.Asset)
	}
	payTo, ok := parseAddr(rq.PayTo)
	if !ok {
		return nil, bad(ReasonRequirements, "payTo %q is not an address", rq.PayTo)
	}
	amountStr, valueReason := rq.Amount, ReasonValueV2
	if v == 1 {
		amountStr, valueReason = rq.MaxAmountRequired, ReasonValueV1
	}
	amount, ok := parseUint256(amountStr)
	if !ok {
		return nil, bad(ReasonRequirements, "required amount %q is not a decimal integer", amountStr)
	}

	a := p.Payload.Authorization
	c := &checked{asset: asset, network: network}
	var okF, okT, okV, okA, okB bool
	c.from, okF = parseAddr(a.From)
	c.to, okT = parseAddr(a.To)
	c.value, okV = parseUint256(a.Value)
	c.validAfter, okA = parseUint256(a.ValidAfter)
	c.validBefore, okB = parseUint256(a.ValidBefore)
	if !okF || !okT || !okV || !okA || !okB {
		return nil, bad(ReasonPayload, "authorization from/to must be addresses and value/validAfter/validBefore decimal integers")
	}
	nonce, err := hexutil.Decode(a.Nonce)
	if err != nil || len(nonce) != 32 {
		return nil, bad(ReasonPayload, "authorization nonce must be 32 bytes of 0x-hex")
	}
	copy(c.nonce[:], nonce)
	if c.sig, err = hexutil.Decode(p.Payload.Signature); err != nil || len(c.sig) == 0 {
		return nil, bad(ReasonSignature, "signature is not 0x-hex")
	}
	if c.to != payTo {
		return nil, bad(ReasonRecipient, "authorization to %s, payTo %s", c.to.Hex(), payTo.Hex())
	}
	if c.value.Cmp(amount) != 0 {
		return nil, bad(valueReason, "authorization value %s, required %s", c.value, amount)
	}
	// The token's own rule: validAfter < block.timestamp < validBefore.
	now := big.NewInt(f.cfg.Now().Unix())
	if c.validAfter.Cmp(now) >= 0 {
		return nil, bad(ReasonValidAfter, "not valid before %s (now %s)", c.validAfter, now)
	}
	if now.Cmp(c.validBefore) >= 0 {
		return nil, bad(ReasonValidBefore, "expired at %s (now %s)", c.validBefore, now)
	}
	if len(c.sig) == 65 {
		signer, err := f.recover(c)
		if err != nil {
			return nil, bad(ReasonSignature, "%v", err)
		}
		if signer != c.from {
			return nil, bad(ReasonSignature, "signed by %s, authorization from %s", signer.Hex(), c.from.Hex())
		}
	}
	return c, nil
}

var (
	domainTypeHash = crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	twaTypeHash    = crypto.Keccak256([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	secpHalfN      = new(big.Int).Rsh(crypto.S256().Params().N, 1)
)

func word(b *big.Int) []byte { return common.LeftPadBytes(b.Bytes(), 32) }

// DomainSeparator is the token's EIP-712 domain separator.
func DomainSeparator(name, version string, chainID uint64, asset common.Address) []byte {
	return crypto.Keccak256(domainTypeHash, crypto.Keccak256([]byte(name)), crypto.Keccak256([]byte(version)),
		word(new(big.Int).SetUint64(chainID)), common.LeftPadBytes(asset.Bytes(), 32))
}

// Digest is the EIP-712 hash of a TransferWithAuthorization for the token
// at asset on chainID with the given domain name and version.
func Digest(name, version string, chainID uint64, asset, from, to common.Address, value, validAfter, validBefore *big.Int, nonce [32]byte) []byte {
	domain := DomainSeparator(name, version, chainID, asset)
	st := crypto.Keccak256(twaTypeHash, common.LeftPadBytes(from.Bytes(), 32), common.LeftPadBytes(to.Bytes(), 32),
		word(value), word(validAfter), word(validBefore), nonce[:])
	return crypto.Keccak256([]byte{0x19, 0x01}, domain, st)
}

// recover returns the signer of a 65-byte r‖s‖v signature, enforcing what
// the token's ecrecover does: v ∈ {27, 28} and low s.
func (f *Facilitator) recover(c *checked) (common.Address, error) {
	v := c.sig[64]
	if v != 27 && v != 28 {
		return common.Address{}, fmt.Errorf("signature v is %d, want 27 or 28", v)
	}
	r, s := new(big.Int).SetBytes(c.sig[:32]), new(big.Int).SetBytes(c.sig[32:64])
	if s.Cmp(secpHalfN) > 0 {
		return common.Address{}, errors.New("signature s is not in the lower half order")
	}
	if !crypto.ValidateSignatureValues(v-27, r, s, true) {
		return common.Address{}, errors.New("signature r or s out of range")
	}
	sig := make([]byte, 65)
	copy(sig, c.sig)
	sig[64] = v - 27
	d := Digest(f.cfg.TokenName, f.cfg.TokenVersion, f.cfg.ChainID, c.asset, c.from, c.to, c.value, c.validAfter, c.validBefore, c.nonce)
	pub, err := crypto.SigToPub(d, sig)
	if err != nil {
		return common.Address{}, fmt.Errorf("signature does not recover: %v", err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// callData is the transferWithAuthorization call: v,r,s for 65 bytes, the
// bytes overload (ERC-1271 wallets) otherwise.
func (f *Facilitator) callData(c *checked) []byte {
	if len(c.sig) == 65 {
		var r, s [32]byte
		copy(r[:], c.sig[:32])
		copy(s[:], c.sig[32:64])
		return f.usdc.PackTransferWithAuthorization0(c.from, c.to, c.value, c.validAfter, c.validBefore, c.nonce, c.sig[64], r, s)
	}
	return f.usdc.PackTransferWithAuthorization(c.from, c.to, c.value, c.validAfter, c.validBefore, c.nonce, c.sig)
}

// onChain runs the checks that read the chain: nonce unused, balance, and
// for signatures other than 65 bytes a simulation of the transfer (the
// token checks the signature with ERC-1271). An RPC failure wraps errRPC.
func (f *Facilitator) onChain(ctx context.Context, c *checked) error {
	tok := f.usdc.Instance(f.cfg.Backend, c.asset)
	opts := &bind.CallOpts{Context: ctx}
	used, err := bind.Call(tok, opts, f.usdc.PackAuthorizationState(c.from, c.nonce), f.usdc.UnpackAuthorizationState)
	if err != nil {
		return f.callErr("authorizationState", err)
	}
	if used {
		return bad(ReasonNonceUsed, "authorization nonce %s of %s is already used", hexutil.Encode(c.nonce[:]), c.from.Hex())
	}
	bal, err := bind.Call(tok, opts, f.usdc.PackBalanceOf(c.from), f.usdc.UnpackBalanceOf)
	if err != nil {
		return f.callErr("balanceOf", err)
	}
	if bal.Cmp(c.value) < 0 {
		return bad(ReasonFunds, "balance %s < value %s", bal, c.value)
	}
	if len(c.sig) != 65 {
		if _, err := tok.CallRaw(&bind.CallOpts{Context: ctx, From: f.relayer}, f.callData(c)); err != nil {
			if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
				return bad(ReasonSignature, "the token refuses the signature: %s", reason)
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
		return bad(ReasonRequirements, "%s on the asset reverted: %s", what, reason)
	}
	if errors.Is(err, bind.ErrNoCode) {
		return bad(ReasonRequirements, "the asset has no contract code")
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

// Verify runs every check. The error is *invalid (a payment failure) or
// wraps errRPC.
func (f *Facilitator) Verify(ctx context.Context, req *Request) (*checked, error) {
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
	req, ok := decode(w, r)
	if !ok {
		return
	}
	payer := payerOf(req)
	_, err := f.Verify(r.Context(), req)
	var inv *invalid
	switch {
	case err == nil:
		httpx.JSON(w, http.StatusOK, VerifyResponse{IsValid: true, Payer: payer})
	case errors.As(err, &inv):
		httpx.JSON(w, http.StatusOK, VerifyResponse{InvalidReason: inv.reason, InvalidMessage: inv.msg, Payer: payer})
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
	req, ok := decode(w, r)
	if !ok {
		return
	}
	resp := SettleResponse{Network: req.PaymentRequirements.Network, Payer: payerOf(req)}
	a := req.PaymentPayload.Payload.Authorization
	unlock := f.lock(strings.ToLower(a.From) + "/" + strings.ToLower(a.Nonce))
	defer unlock()

	var inv *invalid
	c, err := f.Verify(r.Context(), req)
	if errors.As(err, &inv) {
		resp.ErrorReason, resp.ErrorMessage = inv.reason, inv.msg
		httpx.JSON(w, http.StatusOK, resp)
		return
	}
	if err != nil {
		f.cfg.Log.Warn("x402 settle: chain RPC failed", zap.Error(f.scrub(err)))
		httpx.Error(w, http.StatusServiceUnavailable, "rpc_unavailable", "the chain RPC is unavailable")
		return
	}
	hash, err := f.submit(r.Context(), c)
	if errors.As(err, &inv) {
		resp.ErrorReason, resp.ErrorMessage = inv.reason, inv.msg
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
	rcpt, err := deploy.WaitReceipt(ctx, f.cfg.Backend, hash, 100*time.Millisecond)
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
		f.cfg.Log.Info("x402 payment settled", zap.String("tx", hash.Hex()), zap.String("payer", c.from.Hex()),
			zap.String("to", c.to.Hex()), zap.String("value", c.value.String()))
		httpx.JSON(w, http.StatusOK, resp)
	}
}

// submit sends transferWithAuthorization from the relayer. A revert found
// by gas estimation is an *invalid with the decoded reason.
func (f *Facilitator) submit(ctx context.Context, c *checked) (common.Hash, error) {
	f.sendMu.Lock()
	defer f.sendMu.Unlock()
	opts := bind.NewKeyedTransactor(f.cfg.Relayer, new(big.Int).SetUint64(f.cfg.ChainID))
	opts.Context = ctx
	tx, err := bind.Transact(f.usdc.Instance(f.cfg.Backend, c.asset), opts, f.callData(c))
	if err != nil {
		if reason, ok := revertReason(err, f.usdc.UnpackError); ok {
			return common.Hash{}, bad(ReasonTxState, "transferWithAuthorization reverts: %s", reason)
		}
		return common.Hash{}, fmt.Errorf("%w: send transferWithAuthorization: %v", errRPC, err)
	}
	return tx.Hash(), nil
}
