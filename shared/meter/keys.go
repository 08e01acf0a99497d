package meter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// API keys are "tg_" followed by 43 base62 characters: 62^43 > 2^256, so
// the 43 characters carry a full 256-bit random number.
const (
	KeyPrefix    = "tg_"
	keyBodyLen   = 43
	KeyLen       = len(KeyPrefix) + keyBodyLen
	base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// TierFree is the only tier a key can be created with.
const TierFree = "free"

// NewKey returns a fresh API key secret.
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, keyBodyLen)
	base := big.NewInt(62)
	rem := new(big.Int)
	for i := keyBodyLen - 1; i >= 0; i-- {
		n.QuoRem(n, base, rem)
		out[i] = base62Digits[rem.Int64()]
	}
	return KeyPrefix + string(out), nil
}

// WellFormedKey reports whether s has the shape of an API key, so garbage
// is refused without a Redis round trip.
func WellFormedKey(s string) bool {
	if len(s) != KeyLen || s[:len(KeyPrefix)] != KeyPrefix {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// HashKey is the stored form of a key: hex SHA-256. A 256-bit random secret
// needs no salt or slow hash; nothing about it can be guessed.
func HashKey(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewKeyRequest describes a key to create.
type NewKeyRequest struct {
	Kind         events.KeyKind
	Label        string
	Tier         string
	Email        string
	EmailConsent bool
	IP           netip.Addr
}

// CreatedKey is a key as returned to its creator, once.
type CreatedKey struct {
	Secret  string
	ID      string
	Created time.Time
}

// ErrCreateLimited is returned when the caller's IP created too many keys;
// RetryAfter says when it may again.
type ErrCreateLimited struct{ RetryAfter time.Duration }

func (e *ErrCreateLimited) Error() string {
	return fmt.Sprintf("key creation limit reached; retry in %s", e.RetryAfter)
}

// CreateKey creates a key: the creation limit of the IP, the hashed lookup,
// the account record and the KeyCreated event in one script call.
func (m *Meter) CreateKey(ctx context.Context, req NewKeyRequest) (CreatedKey, error) {
	now := m.cfg.Now()
	tier := req.Tier
	if tier == "" {
		tier = TierFree
	}
	ipKey, _ := Subjects(req.IP)
	for attempt := 0; ; attempt++ {
		// A new account goes on a shard drawn at random (its id's), and its
		// key is drawn until it hashes there too (balances.ShardOfKey).
		home := m.layout.ShardOfPayer(accounts.NewID())
		secret, id, err := newKeyOn(m.layout, home)
		if err != nil {
			return CreatedKey{}, err
		}
		hash := HashKey(secret)
		ev, err := events.Encode(&events.KeyCreated{KeyID: id, KeyHash: hash, Kind: req.Kind, Label: req.Label, Tier: tier,
			Email: req.Email, EmailConsent: req.EmailConsent, TimeMs: now.UnixMilli()})
		if err != nil {
			return CreatedKey{}, err
		}
		if attempt == 0 && m.cfg.CreateLimit > 0 {
			// The creation limit is the address's, on its shard; the key is
			// created on its own. A key that then fails to be created
			// (Redis down) has used one creation of the window.
			lim := &run{script: createLimitScript, keys: []string{m.layout.CreateRate(ipKey)},
				args: []any{now.UnixMilli(), m.cfg.CreateWindow.Milliseconds(), m.cfg.CreateLimit, id}}
			m.exec(ctx, lim)
			if lim.err != nil {
				return CreatedKey{}, lim.err
			}
			if lim.code == 0 {
				return CreatedKey{}, &ErrCreateLimited{RetryAfter: time.Duration(toInt(lim.res[1])) * time.Millisecond}
			}
		}
		l := m.layout.Shard(home)
		res, err := createScript.Run(ctx, m.rdb,
			[]string{l.KeyLookup(hash), l.Account(id), l.Stream(0)},
			now.UnixMilli(), id, tier, string(req.Kind), req.Label,
			events.TypeKeyCreated, events.Version, ev[5]).Int64Slice()
		if err != nil {
			return CreatedKey{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if res[0] == 1 {
			return CreatedKey{Secret: secret, ID: id, Created: now}, nil
		}
		// A SHA-256 collision of two fresh 256-bit secrets: never, but a
		// loop costs nothing and an overwrite would hand one account to two keys.
		if attempt > 3 {
			return CreatedKey{}, errors.New("meter: could not create a unique key")
		}
	}
}

// newKeyOn draws a key secret and an account id that both fall on shard
// (ShardOfKey of the secret's hash, ShardOfPayer of the id): N draws each
// on average for N shards, microseconds, on key creation only.
func newKeyOn(l balances.Layout, shard int) (secret, id string, err error) {
	for {
		if secret, err = NewKey(); err != nil {
			return "", "", err
		}
		if l.ShardOfKey(HashKey(secret)) == shard {
			break
		}
	}
	for {
		if id = accounts.NewID(); l.ShardOfPayer(id) == shard {
			return secret, id, nil
		}
	}
}

// Usage is an account's state as the usage endpoint reports it.
type Usage struct {
	KeyID         string
	Tier          string
	RequestsToday int64
	Balance       money.Units
	Spent         money.Units
	// DailyLimit is the free-tier limit per IP in force (the key falls back
	// on its caller's free allowance when its balance runs out).
	DailyLimit int64
	// Wallet is the wallet whose x402 bundle a bundle key draws on ("" for
	// a credits key).
	Wallet string
}

// KeyStatus says why a key lookup failed.
type KeyStatus int

const (
	KeyActive KeyStatus = iota
	KeyUnknown
	KeyRevoked
	// KeyRecovering: not found, but Redis lost its data and settlementd has
	// not rebuilt it yet (no generation marker), so the key may well exist.
	KeyRecovering
)

// Usage looks a key up by its hash. A non-active status comes with a zero
// Usage and a nil error.
func (m *Meter) Usage(ctx context.Context, keyHash string) (Usage, KeyStatus, error) {
	date := m.date(m.cfg.Now())
	var res []any
	for hop := 0; ; hop++ {
		l := m.layout.Shard(m.payerShard(keyHash))
		var err error
		res, err = usageScript.Run(ctx, m.rdb, []string{l.KeyLookup(keyHash), l.FreeConfig(), l.Generation()},
			l.AccountPrefix(), date).Slice()
		if err != nil {
			return Usage{}, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if toInt(res[0]) != 4 || hop > 0 {
			break
		}
		m.hints.set(keyHash, keyHint{home: int(toInt(res[1]))})
	}
	switch toInt(res[0]) {
	case 0:
		return Usage{}, KeyUnknown, nil
	case 2:
		return Usage{}, KeyRevoked, nil
	case 3:
		return Usage{}, KeyRecovering, nil
	}
	s := func(i int) string { v, _ := res[i].(string); return v }
	n := func(i int) int64 { v, _ := strconv.ParseInt(s(i), 10, 64); return v }
	limit := m.cfg.FreeDailyLimit
	if len(res) > 6 && s(6) != "" {
		limit = n(6)
	}
	u := Usage{KeyID: s(1), Tier: s(2), Balance: money.Units(n(3)), Spent: money.Units(n(4)), RequestsToday: n(5), DailyLimit: limit}
	if len(res) > 7 {
		u.Wallet = s(7)
	}
	return u, KeyActive, nil
}

// AccountStatus reports whether an account id names an active account
// (KeyRecovering: unknown while Redis is not rebuilt). One round trip: the
// status and the generation marker are read in one pipeline.
func (m *Meter) AccountStatus(ctx context.Context, id string) (KeyStatus, error) {
	var st *redis.StringCmd
	var gen *redis.IntCmd
	_, err := m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		st = p.HGet(ctx, m.layout.Account(id), balances.FieldStatus)
		gen = p.Exists(ctx, m.layout.Shard(m.layout.ShardOfPayer(id)).Generation())
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	switch st.Val() {
	case balances.StatusActive:
		return KeyActive, nil
	case balances.StatusRevoked:
		return KeyRevoked, nil
	}
	if gen.Val() == 0 {
		return KeyRecovering, nil
	}
	return KeyUnknown, nil
}
