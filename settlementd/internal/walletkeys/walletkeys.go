// Package walletkeys issues wallet-bound API keys for the web console: one
// EIP-4361 message, signed once with the wallet (EIP-191 personal_sign),
// creates an API key of kind "wallet" bound to that wallet. The key is made
// by the gateway's own code (meter.CreateKey: the hashed lookup, the account
// record and the KeyCreated event in one Redis script), so it meters, shows
// usage and takes deposits like any other key.
//
// A wallet has at most one active wallet key. Asking again answers 409
// wallet_key_exists naming the existing key_id; a challenge asked with
// rotate:true says so in the signed statement, and its signature revokes
// the old key (KeyRevoked, exactly as the gateway's admin revoke), carries
// its remaining balance over to the new key (two idempotent adjustments)
// and issues a new one.
//
// Challenges are stored nowhere: the nonce is signed (auth.Challenger, keyed
// from the JWT secret) over the message's fields and a purpose of its own,
// create or rotate, distinct from the node operators' login, so no signature
// can be used for another. Anyone may ask for any number of challenges for
// any wallet without taking anything from its owner. A nonce is recorded in
// Redis under the deployment's prefix only when a signature for it is
// accepted (single use, kept until the message expires).
// The wallet binding is recorded on the key's api_keys row in PostgreSQL
// (the system of record), which a per-wallet advisory lock serialises.
package walletkeys

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The signed statements: what the wallet agrees to is in the text it signs.
const (
	StatementCreate = "Create a Tollgate API key bound to this wallet."
	StatementRotate = "Replace this wallet's Tollgate API key: the old key is revoked and its balance moves to the new one."
	NonceTTL        = 10 * time.Minute
	// usedGrace keeps a used nonce a little past its message's expiry, so a
	// replica whose clock runs behind still finds it while it would still
	// accept the message.
	usedGrace = time.Minute
)

// The challenges' purposes: a create and a rotate signature are never
// interchangeable, and neither is a node login.
const (
	purposeCreate auth.Purpose = "tollgate wallet key create"
	purposeRotate auth.Purpose = "tollgate wallet key rotate"
)

// Config of the service.
type Config struct {
	Pool   *pgxpool.Pool
	Redis  redis.UniversalClient
	Prefix string // the deployment's Redis key prefix (the gateway's key_prefix)
	Shards int    // metering shards (the gateway's redis_shards; 0 or 1: one)
	Domain string // EIP-4361 domain; empty = the request's Host
	// Secret (TOLLGATE_JWT_SECRET, at least 32 bytes) keys the challenges'
	// nonces through the same derived key as the operators' login
	// (auth.NewChallenger): the same on every replica, so any replica
	// checks a challenge another one issued.
	Secret []byte
	// ChainID of the message (default 137).
	ChainID uint64
	// CreateLimit is key creations per client IP per hour, shared with the
	// gateway's POST /api/keys limit (default meter.DefaultCreatePerWindow;
	// negative: unlimited).
	CreateLimit int
	Now         func() time.Time
	Log         *zap.Logger
}

// Service answers the wallet-key routes.
type Service struct {
	cfg   Config
	meter *meter.Meter
	ch    *auth.Challenger
}

// New checks the config.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Redis == nil {
		return nil, errors.New("walletkeys: a database pool and a Redis client are required")
	}
	ch, err := auth.NewChallenger(cfg.Secret)
	if err != nil {
		return nil, fmt.Errorf("walletkeys: %w", err)
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = 137
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	limit := cfg.CreateLimit
	switch {
	case limit == 0:
		limit = meter.DefaultCreatePerWindow
	case limit < 0:
		limit = 0
	}
	m, err := meter.New(cfg.Redis, meter.Config{Prefix: cfg.Prefix, Shards: cfg.Shards, CreateLimit: limit, CreateWindow: meter.DefaultCreateWindow, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = balances.DefaultPrefix
	}
	return &Service{cfg: cfg, meter: m, ch: ch}, nil
}

// Register adds POST /api/keys/wallet/challenge and POST /api/keys/wallet.
func (s *Service) Register(handle func(string, http.Handler)) {
	handle("POST /api/keys/wallet/challenge", http.HandlerFunc(s.challenge))
	handle("POST /api/keys/wallet", http.HandlerFunc(s.create))
}

func (s *Service) domain(r *http.Request) string {
	if s.cfg.Domain != "" {
		return s.cfg.Domain
	}
	return r.Host
}

// usedKey records a used nonce. The wallet's hash tag keeps one wallet's
// keys in one Redis Cluster slot.
func (s *Service) usedKey(wallet, nonce string) string {
	return s.cfg.Prefix + "walletkey:{" + wallet + "}:nonce:" + nonce
}

func (s *Service) challenge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Wallet string `json:"wallet"`
		Rotate bool   `json:"rotate"`
	}
	if !httpx.Decode(w, r, &req) {
		return
	}
	addr, ok := auth.ParseAddress(req.Wallet)
	if !ok {
		httpx.Error(w, http.StatusBadRequest, "invalid_wallet", "wallet must be a 0x-prefixed 20-byte address")
		return
	}
	// Nothing is stored: the signed nonce is checked when the signature
	// comes back, so strangers asking for this wallet's challenges take
	// nothing from its owner and grow nothing.
	now := s.cfg.Now().UTC().Truncate(time.Second)
	stmt, purpose := StatementCreate, purposeCreate
	if req.Rotate {
		stmt, purpose = StatementRotate, purposeRotate
	}
	m := auth.Message{Domain: s.domain(r), Address: addr, Statement: stmt, URI: "https://" + s.domain(r) + "/console", Version: "1",
		ChainID: s.cfg.ChainID, IssuedAt: now, ExpiresAt: now.Add(NonceTTL)}
	m.Nonce = s.ch.Nonce(purpose, m)
	httpx.JSON(w, http.StatusOK, map[string]any{"message": m.String(), "nonce": m.Nonce, "expires_at": m.ExpiresAt.Format(time.RFC3339),
		"rotate": req.Rotate})
}

// existing is a wallet's active wallet key, as PostgreSQL records it.
type existing struct {
	KeyID   string
	Created time.Time
}

func (s *Service) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Message   string `json:"message"`
		Signature string `json:"signature"`
		Rotate    bool   `json:"rotate"`
		Label     string `json:"label"`
	}
	if !httpx.Decode(w, r, &req) {
		return
	}
	if len(req.Label) > 64 {
		httpx.Error(w, http.StatusBadRequest, "invalid_label", "label must be at most 64 characters")
		return
	}
	m, err := auth.Parse(req.Message)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "invalid_message", "message is not a Sign-In with Ethereum message from /api/keys/wallet/challenge: "+err.Error())
		return
	}
	want, purpose := StatementCreate, purposeCreate
	if req.Rotate {
		want, purpose = StatementRotate, purposeRotate
	}
	if m.Statement != StatementCreate && m.Statement != StatementRotate {
		httpx.Error(w, http.StatusBadRequest, "invalid_message", "message is not a wallet-key challenge from /api/keys/wallet/challenge")
		return
	}
	if m.Statement != want {
		httpx.Error(w, http.StatusBadRequest, "rotate_mismatch", "rotate must match the challenge: ask /api/keys/wallet/challenge with the same rotate value")
		return
	}
	sig, err := hexutil.Decode(req.Signature)
	if err != nil {
		httpx.Error(w, http.StatusUnauthorized, "invalid_signature", "signature must be 0x-prefixed hex")
		return
	}
	if signer, err := auth.VerifyPersonalSign(req.Message, sig); err != nil || signer != m.Address {
		httpx.Error(w, http.StatusUnauthorized, "invalid_signature", "the signature is not the message's wallet's")
		return
	}
	if m.Domain != s.domain(r) || m.ChainID != s.cfg.ChainID {
		httpx.Error(w, http.StatusUnauthorized, "wrong_domain", "the message was issued for another domain or chain")
		return
	}
	now := s.cfg.Now()
	if !m.ExpiresAt.After(now) {
		httpx.Error(w, http.StatusUnauthorized, "nonce_expired", "this challenge expired; ask /api/keys/wallet/challenge for a new one")
		return
	}
	// The signature is the wallet's; now the nonce must be one this server
	// issued for exactly this message and purpose (an edited expiry or
	// statement, or a login nonce, is not).
	if s.ch.Check(purpose, m) != nil {
		httpx.Error(w, http.StatusUnauthorized, "nonce_invalid", "this challenge was not issued by /api/keys/wallet/challenge; ask it for a new one")
		return
	}
	// Use it once: SET NX, kept until the message expires (then the expiry
	// check refuses it anyway). Only the wallet's key gets a nonce this far,
	// so these keys grow with real key creations only.
	wallet := strings.ToLower(m.Address.Hex())
	fresh, err := s.cfg.Redis.SetNX(r.Context(), s.usedKey(wallet, m.Nonce), 1, m.ExpiresAt.Sub(now)+usedGrace).Result()
	switch {
	case err != nil:
		s.cfg.Log.Warn("wallet key: redis", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "redis_unavailable", "the challenge could not be checked; try again")
		return
	case !fresh:
		httpx.Error(w, http.StatusUnauthorized, "nonce_invalid", "this challenge was already used; ask /api/keys/wallet/challenge for a new one")
		return
	}

	label := req.Label
	if label == "" {
		label = "wallet " + wallet
	}
	out, e := s.issue(r.Context(), wallet, req.Rotate, label, clientIP(r))
	if e != nil {
		if e.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
		}
		if e.keyID != "" {
			httpx.JSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.msg, "key_id": e.keyID}})
			return
		}
		httpx.Error(w, e.status, e.code, e.msg)
		return
	}
	httpx.JSON(w, http.StatusCreated, out)
}

// apiError is a refusal of issue.
type apiError struct {
	status     int
	code, msg  string
	retryAfter int    // seconds; 0: no Retry-After
	keyID      string // the existing key (wallet_key_exists)
}

// issue creates (or rotates) the wallet's key under a per-wallet lock.
func (s *Service) issue(ctx context.Context, wallet string, rotate bool, label string, ip netip.Addr) (map[string]any, *apiError) {
	unavailable := func(what string, err error) (map[string]any, *apiError) {
		s.cfg.Log.Error("wallet key: "+what, zap.String("wallet", wallet), zap.Error(err))
		if errors.Is(err, meter.ErrUnavailable) {
			return nil, &apiError{status: http.StatusServiceUnavailable, code: "redis_unavailable", msg: "the key store is unavailable; try again"}
		}
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "database_unavailable", msg: "the key could not be recorded; try again"}
	}
	tx, err := s.cfg.Pool.Begin(ctx)
	if err != nil {
		return unavailable("begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('tollgate:walletkey:' || $1, 0))`, wallet); err != nil {
		return unavailable("lock", err)
	}
	old, err := s.active(ctx, tx, wallet)
	if err != nil {
		return unavailable("lookup", err)
	}
	if old != nil && !rotate {
		return nil, &apiError{status: http.StatusConflict, code: "wallet_key_exists", msg: "wallet " + wallet + " already has the API key " + old.KeyID +
			" (created " + old.Created.UTC().Format(time.RFC3339) + "); its secret was shown once. To replace it, ask a challenge with rotate: true and send rotate: true", keyID: old.KeyID}
	}
	if old != nil {
		if _, err := s.meter.Revoke(ctx, old.KeyID, "rotated"); err != nil && !errors.Is(err, meter.ErrUnknownAccount) {
			return unavailable("revoke", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO api_keys (key_id, revoked_at, revoke_reason) VALUES ($1, $2, 'rotated')
			ON CONFLICT (key_id) DO UPDATE SET revoked_at = COALESCE(api_keys.revoked_at, EXCLUDED.revoked_at),
			revoke_reason = COALESCE(api_keys.revoke_reason, EXCLUDED.revoke_reason)`, old.KeyID, s.cfg.Now()); err != nil {
			return unavailable("record revoke", err)
		}
	}
	k, err := s.meter.CreateKey(ctx, meter.NewKeyRequest{Kind: events.KeyWallet, Label: label, Tier: meter.TierFree, IP: ip})
	var lim *meter.ErrCreateLimited
	switch {
	case errors.As(err, &lim):
		secs := int(lim.RetryAfter.Seconds()) + 1
		return nil, &apiError{status: http.StatusTooManyRequests, code: "rate_limited", retryAfter: secs,
			msg: "too many keys were created from this address; retry in " + strconv.Itoa(secs) + " s"}
	case err != nil:
		return unavailable("create", err)
	}
	// The same row the gateway's KeyCreated event makes when ingested, plus
	// the wallet; whichever lands first, the other leaves it complete. The
	// conflict has no target: a concurrent ingest of the same key collides on
	// key_hash as well as key_id, and ON CONFLICT (key_id) would let the
	// key_hash collision through as an error. The UPDATE (a fresh snapshot)
	// then sees the row either way.
	_, err = tx.Exec(ctx, `INSERT INTO api_keys (key_id, key_hash, kind, label, tier, wallet, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT DO NOTHING`,
		k.ID, meter.HashKey(k.Secret), string(events.KeyWallet), label, meter.TierFree, wallet, time.UnixMilli(k.Created.UnixMilli()).UTC())
	if err == nil {
		tag, uerr := tx.Exec(ctx, `UPDATE api_keys SET wallet = $2 WHERE key_id = $1`, k.ID, wallet)
		if err = uerr; err == nil && tag.RowsAffected() != 1 {
			err = errors.New("the key's api_keys row is missing after its insert")
		}
	}
	if err != nil {
		// Without the binding the key must not stay usable: it would be a
		// second, unbound key of this wallet.
		_, _ = s.meter.Revoke(context.WithoutCancel(ctx), k.ID, "binding_failed")
		return unavailable("record key", err)
	}
	if err := tx.Commit(ctx); err != nil {
		_, _ = s.meter.Revoke(context.WithoutCancel(ctx), k.ID, "binding_failed")
		return unavailable("commit", err)
	}
	out := map[string]any{"api_key": k.Secret, "key_id": k.ID, "wallet": wallet, "kind": string(events.KeyWallet), "tier": meter.TierFree,
		"created_at": k.Created.UTC().Format(time.RFC3339), "usage_url": "/api/keys/usage"}
	if old != nil {
		out["replaced_key_id"] = old.KeyID
		moved, err := s.carryOver(ctx, old.KeyID, k.ID)
		if err != nil {
			s.cfg.Log.Error("wallet key rotation: the old balance was not carried over", zap.String("old", old.KeyID), zap.String("new", k.ID), zap.Error(err))
		}
		out["carried_over_usdt"] = moved.Decimal()
	}
	s.cfg.Log.Info("wallet key issued", zap.String("wallet", wallet), zap.String("key_id", k.ID), zap.Bool("rotated", old != nil))
	return out, nil
}

// active returns the wallet's active wallet key, or nil. A key PostgreSQL
// still lists as active but the gateway has revoked (an admin revoke not yet
// ingested) does not count.
func (s *Service) active(ctx context.Context, tx pgx.Tx, wallet string) (*existing, error) {
	rows, err := tx.Query(ctx, `SELECT key_id, COALESCE(created_at, now()) FROM api_keys
		WHERE wallet = $1 AND kind = 'wallet' AND revoked_at IS NULL ORDER BY created_at DESC`, wallet)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (existing, error) {
		var e existing
		return e, row.Scan(&e.KeyID, &e.Created)
	})
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		st, err := s.meter.AccountStatus(ctx, e.KeyID)
		if err != nil {
			return nil, err
		}
		if st != meter.KeyRevoked {
			return &e, nil
		}
	}
	return nil, nil
}

// carryOver moves the revoked key's balance to the new key: a debit and a
// credit adjustment with ids derived from the new key, so a retry applies
// each once.
func (s *Service) carryOver(ctx context.Context, from, to string) (money.Units, error) {
	bal, err := balances.BalanceAt(ctx, s.cfg.Redis, balances.Layout{Prefix: s.cfg.Prefix, Shards: s.cfg.Shards}, from)
	if err != nil || bal <= 0 {
		return 0, err
	}
	if _, err := s.meter.Adjust(ctx, meter.Adjustment{ID: "rotate:" + to + ":out", Account: from, Units: -bal, Reason: "wallet key rotated to " + to}); err != nil {
		return 0, err
	}
	if _, err := s.meter.Adjust(ctx, meter.Adjustment{ID: "rotate:" + to + ":in", Account: to, Units: bal, Reason: "wallet key rotated from " + from}); err != nil {
		return 0, err
	}
	return bal, nil
}

// clientIP is the caller's address for the key-creation limit (see
// httpx.ClientIP for whom settlementd believes).
func clientIP(r *http.Request) netip.Addr { return httpx.ClientIP(r) }
