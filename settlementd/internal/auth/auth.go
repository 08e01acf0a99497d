package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Defaults.
const (
	TokenTTL   = time.Hour
	NonceTTL   = 10 * time.Minute
	Issuer     = "tollgate-settlementd"
	Statement  = "Sign in to Tollgate to manage your nodes."
	MinSecretN = 32
)

// Config of the login.
type Config struct {
	Pool *pgxpool.Pool
	// Secret is TOLLGATE_JWT_SECRET, at least 32 bytes: the HS256 key of
	// the tokens, and (through a key derived from it, see NewChallenger)
	// of the sign-in challenges' nonces.
	Secret []byte
	// Domain is TOLLGATE_AUTH_DOMAIN, the EIP-4361 domain messages must
	// name. It is configuration, never a request header: a Host-derived
	// domain would let a login message signed for another site be used
	// here. Empty is accepted only with Dev.
	Domain string
	// Dev (TOLLGATE_DEV=1) lets an empty Domain fall back to the request's
	// Host, for local development only.
	Dev     bool
	ChainID uint64 // default 137
	Now     func() time.Time
}

// ErrNoDomain is New's answer to a Config without a sign-in domain outside
// dev mode.
var ErrNoDomain = errors.New("auth: TOLLGATE_AUTH_DOMAIN is not set (the public host name sign-in messages name); refusing to take the domain from request headers outside dev mode (TOLLGATE_DEV=1)")

// Service issues challenges and tokens and checks tokens.
type Service struct {
	cfg Config
	ch  *Challenger // keyed by a key derived from Secret, never Secret itself
}

// New checks the config.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil {
		return nil, errors.New("auth: no database pool")
	}
	if len(cfg.Secret) < MinSecretN {
		return nil, fmt.Errorf("auth: TOLLGATE_JWT_SECRET must be at least %d bytes", MinSecretN)
	}
	if cfg.Domain == "" && !cfg.Dev {
		return nil, ErrNoDomain
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = 137
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ch, err := NewChallenger(cfg.Secret)
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, ch: ch}, nil
}

// Register adds /api/auth/challenge and /api/auth/login.
func (s *Service) Register(handle func(string, http.Handler)) {
	handle("POST /api/auth/challenge", http.HandlerFunc(s.challenge))
	handle("POST /api/auth/login", http.HandlerFunc(s.login))
}

func (s *Service) domain(r *http.Request) string {
	if s.cfg.Domain != "" {
		return s.cfg.Domain
	}
	return r.Host
}

// ParseAddress accepts a 0x-prefixed 40-hex-digit address; mixed case must
// be a valid EIP-55 checksum.
// (ethparse.Address, the one address reader).
func ParseAddress(v string) (common.Address, bool) {
	a, err := ethparse.Address(v)
	return a, err == nil
}

func (s *Service) challenge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Wallet string `json:"wallet"`
	}
	if !httpx.Decode(w, r, &req) {
		return
	}
	addr, ok := ParseAddress(req.Wallet)
	if !ok {
		httpx.Error(w, http.StatusBadRequest, "invalid_wallet", "wallet must be a 0x-prefixed 20-byte address")
		return
	}
	// Nothing is stored: the nonce carries its own proof (see Challenger),
	// so no number of challenges asked for a wallet, from anywhere, can
	// stand in its owner's way or grow the database.
	now := s.cfg.Now().UTC().Truncate(time.Second)
	m := Message{Domain: s.domain(r), Address: addr, Statement: Statement, URI: "https://" + s.domain(r), Version: "1",
		ChainID: s.cfg.ChainID, IssuedAt: now, ExpiresAt: now.Add(NonceTTL)}
	m.Nonce = s.ch.Nonce(PurposeLogin, m)
	httpx.JSON(w, http.StatusOK, map[string]any{"message": m.String(), "nonce": m.Nonce, "expires_at": m.ExpiresAt.Format(time.RFC3339)})
}

// VerifyPersonalSign returns the address that signed msg with personal_sign
// (EIP-191: "\x19Ethereum Signed Message:\n" + len + msg).
// v may be 0, 1, 27 or 28 (wallets differ) and s must be in the lower
// half (ethparse.Recover: a signature's malleable twin is refused).
func VerifyPersonalSign(msg string, sig []byte) (common.Address, error) {
	return ethparse.Recover(accounts.TextHash([]byte(msg)), sig, ethparse.VAny)
}

func (s *Service) login(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Message   string `json:"message"`
		Signature string `json:"signature"`
	}
	if !httpx.Decode(w, r, &req) {
		return
	}
	m, err := Parse(req.Message)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "invalid_message", "message is not a Sign-In with Ethereum message from /api/auth/challenge: "+err.Error())
		return
	}
	sig, err := hexutil.Decode(req.Signature)
	if err != nil {
		httpx.Error(w, http.StatusUnauthorized, "invalid_signature", "signature must be 0x-prefixed hex")
		return
	}
	if signer, err := VerifyPersonalSign(req.Message, sig); err != nil || signer != m.Address {
		httpx.Error(w, http.StatusUnauthorized, "invalid_signature", "the signature is not the message's wallet's")
		return
	}
	if m.Domain != s.domain(r) || m.ChainID != s.cfg.ChainID {
		httpx.Error(w, http.StatusUnauthorized, "wrong_domain", "the message was issued for another domain or chain")
		return
	}
	now := s.cfg.Now()
	wallet := strings.ToLower(m.Address.Hex())
	if !m.ExpiresAt.After(now) {
		httpx.Error(w, http.StatusUnauthorized, "nonce_expired", "this challenge expired; ask /api/auth/challenge for a new one")
		return
	}
	// Only now, with the wallet's signature checked, is the nonce looked
	// at: a message whose nonce this server did not issue for exactly these
	// fields (edited expiry or statement, another purpose's nonce) is unknown.
	if s.ch.Check(PurposeLogin, m) != nil {
		httpx.Error(w, http.StatusUnauthorized, "nonce_unknown", "the nonce was not issued for this message; ask /api/auth/challenge")
		return
	}
	// Consume the nonce: one statement on its primary key, so two logins
	// racing with the same message cannot both win. Only holders of the
	// wallet's key get this far, so the table grows with real logins only.
	tag, err := s.cfg.Pool.Exec(r.Context(), `INSERT INTO auth_nonces (nonce, wallet, issued_at, expires_at, used_at, client_net)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (nonce) DO NOTHING`,
		m.Nonce, wallet, m.IssuedAt, m.ExpiresAt, now, httpx.ClientNet(httpx.ClientIP(r)))
	if err != nil {
		httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", "the nonce could not be checked")
		return
	}
	if tag.RowsAffected() != 1 {
		httpx.Error(w, http.StatusUnauthorized, "nonce_used", "this challenge was already used; ask /api/auth/challenge for a new one")
		return
	}
	// A used nonce must be kept while its message could still be replayed
	// (until it expires); a day later it is of no use to anyone.
	_, _ = s.cfg.Pool.Exec(r.Context(), `DELETE FROM auth_nonces WHERE expires_at < now() - interval '1 day'`)
	tok, exp, err := s.Issue(wallet)
	if err != nil {
		httpx.Error(w, http.StatusServiceUnavailable, "token_unavailable", "the token could not be signed")
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"token": tok, "token_type": "Bearer", "expires_at": exp.UTC().Format(time.RFC3339), "wallet": wallet})
}

// Issue signs a token for wallet (lower-case 0x address).
func (s *Service) Issue(wallet string) (string, time.Time, error) {
	now := s.cfg.Now()
	exp := now.Add(TokenTTL)
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer: Issuer, Subject: strings.ToLower(wallet), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	})
	signed, err := t.SignedString(s.cfg.Secret)
	return signed, exp, err
}

// Wallet checks a bearer token (HS256 only, unexpired, our issuer) and
// returns its lower-case wallet.
func (s *Service) Wallet(token string) (string, error) {
	var c jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.cfg.Secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithIssuer(Issuer),
		jwt.WithTimeFunc(s.cfg.Now))
	if err != nil {
		return "", err
	}
	if !addrRe.MatchString(c.Subject) || c.Subject != strings.ToLower(c.Subject) {
		return "", errors.New("auth: token subject is not a wallet")
	}
	return c.Subject, nil
}

type ctxKey struct{}

// Require wraps h: it answers 401 invalid_token unless the request carries a
// valid bearer token; h finds the wallet with WalletFrom.
func (s *Service) Require(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			httpx.Error(w, http.StatusUnauthorized, "invalid_token", "send Authorization: Bearer <JWT> from /api/auth/login")
			return
		}
		wallet, err := s.Wallet(strings.TrimSpace(tok))
		if err != nil {
			httpx.Error(w, http.StatusUnauthorized, "invalid_token", "the token is invalid or expired; log in again")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, wallet)))
	})
}

// WalletFrom is the authenticated wallet (lower-case) of a Require'd request.
func WalletFrom(ctx context.Context) string {
	w, _ := ctx.Value(ctxKey{}).(string)
	return w
}
