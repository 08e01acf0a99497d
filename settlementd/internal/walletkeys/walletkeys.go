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
// Challenges live in Redis under the deployment's prefix (single use,
// 10 minutes, at most 10 open per wallet): they are separate from the node
// operators' login nonces, so neither signature can be used for the other.
// The wallet binding is recorded on the key's api_keys row in PostgreSQL
// (the system of record), which a per-wallet advisory lock serialises.
package walletkeys

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	// MaxOpenChallenges is how many unused, unexpired challenges one
	// wallet may hold.
	MaxOpenChallenges = 10
)

// Config of the service.
type Config struct {
	Pool   *pgxpool.Pool
	Redis  redis.UniversalClient
	Prefix string // the deployment's Redis key prefix (the gateway's key_prefix)
	Shards int    // metering shards (the gateway's redis_shards; 0 or 1: one)
	Domain string // EIP-4361 domain; empty = the request's Host
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
}

// New checks the config.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Redis == nil {
		return nil, errors.New("walletkeys: a database pool and a Redis client are required")
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
	return &Service{cfg: cfg, meter: m}, nil
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

// Redis keys: one hash tag per wallet, so a script's keys share a slot
// (with a prefix that has its own hash tag, that one wins: same slot too).
func (s *Service) openKey(wallet string) string {
	return s.cfg.Prefix + "walletkey:{" + wallet + "}:open"
}

func (s *Service) nonceKey(wallet, nonce string) string {
	return s.cfg.Prefix + "walletkey:{" + wallet + "}:nonce:" + nonce
}

// challengeScript stores a nonce unless the wallet holds too many open ones.
// KEYS: 1 open set (score = expiry ms), 2 nonce. ARGV: 1 now ms, 2 expiry
// ms, 3 cap, 4 nonce, 5 statement tag, 6 ttl ms. Reply: 1 stored, 0 capped.
var challengeScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6])
return 1
`)

// consumeScript uses a nonce once. KEYS: 1 open set, 2 nonce. ARGV: 1 nonce.
// Reply: the stored statement tag, or false when unknown, used or expired.
var consumeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[2])
if not v then return false end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return v
`)

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
	wallet := strings.ToLower(addr.Hex())
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	now := s.cfg.Now().UTC().Truncate(time.Second)
	stmt, tag := StatementCreate, "create"
	if req.Rotate {
		stmt, tag = StatementRotate, "rotate"
	}
	m := auth.Message{Domain: s.domain(r), Address: addr, Statement: stmt, URI: "https://" + s.domain(r) + "/console", Version: "1",
		ChainID: s.cfg.ChainID, Nonce: hex.EncodeToString(nb[:]), IssuedAt: now, ExpiresAt: now.Add(NonceTTL)}
	res, err := challengeScript.Run(r.Context(), s.cfg.Redis, []string{s.openKey(wallet), s.nonceKey(wallet, m.Nonce)},
		now.UnixMilli(), m.ExpiresAt.UnixMilli(), MaxOpenChallenges, m.Nonce, tag, NonceTTL.Milliseconds()).Int()
	if err != nil {
		s.cfg.Log.Warn("wallet key challenge: redis", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "redis_unavailable", "the challenge could not be stored; try again")
		return
	}
	if res == 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(NonceTTL.Seconds())))
		httpx.Error(w, http.StatusTooManyRequests, "too_many_challenges", "this wallet has too many unused challenges; use one or wait for them to expire")
		return
	}
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
	want := StatementCreate
	if req.Rotate {
		want = StatementRotate
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
	wallet := strings.ToLower(m.Address.Hex())
	tag, err := consumeScript.Run(r.Context(), s.cfg.Redis, []string{s.openKey(wallet), s.nonceKey(wallet, m.Nonce)}, m.Nonce).Text()
	switch {
	case errors.Is(err, redis.Nil):
		httpx.Error(w, http.StatusUnauthorized, "nonce_invalid", "this challenge is unknown, expired or already used; ask /api/keys/wallet/challenge for a new one")
		return
	case err != nil:
		s.cfg.Log.Warn("wallet key: redis", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "redis_unavailable", "the challenge could not be checked; try again")
		return
	case (tag == "rotate") != req.Rotate:
		httpx.Error(w, http.StatusBadRequest, "rotate_mismatch", "rotate must match the challenge")
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
