package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
)

// Purpose names what a signed challenge may be used for. It is part of the
// nonce's MAC, so a message issued for one purpose never passes the check
// of another, even with every other field equal.
type Purpose string

// PurposeLogin is the node operators' sign-in (POST /api/auth/challenge).
const PurposeLogin Purpose = "tollgate node login"

const (
	// challengeKeyLabel derives the challenge MAC key from the configured
	// secret, so the JWT key itself is never used for a second purpose.
	challengeKeyLabel = "tollgate sign-in challenge v1"
	nonceRandN        = 16 // unpredictable part: no two challenges share a nonce
	nonceMACN         = 16 // truncated HMAC-SHA256: 128 bits is plenty against forgery
)

// Challenger makes and checks stateless sign-in nonces. A nonce is random
// bytes followed by an HMAC over the purpose and every other field of the
// message it is issued in, hex encoded (EIP-4361 wants alphanumerics). So
// issuing a challenge stores nothing, anyone may ask for any number of them
// without using up anything of the wallet's, and at sign-in the MAC proves
// the signed message is one this server issued, unedited (its expiry,
// statement, domain and purpose included). Single use is the caller's: it
// records a nonce only once a signature for it was checked, so what it
// stores grows with real sign-ins, not with requests.
type Challenger struct{ key []byte }

// NewChallenger derives the MAC key from secret (at least MinSecretN
// bytes; the same on every replica, so any replica checks any challenge).
func NewChallenger(secret []byte) (*Challenger, error) {
	if len(secret) < MinSecretN {
		return nil, fmt.Errorf("auth: the challenge secret must be at least %d bytes", MinSecretN)
	}
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(challengeKeyLabel))
	return &Challenger{key: h.Sum(nil)}, nil
}

// Nonce returns a fresh nonce for m issued for purpose: m's fields other
// than Nonce must be final (IssuedAt and ExpiresAt to the second, as the
// message text carries them).
func (c *Challenger) Nonce(purpose Purpose, m Message) string {
	var b [nonceRandN + nonceMACN]byte
	_, _ = rand.Read(b[:nonceRandN])
	copy(b[nonceRandN:], c.mac(purpose, m, b[:nonceRandN]))
	return hex.EncodeToString(b[:])
}

// ErrBadNonce is Check's answer to a nonce this server did not issue for
// the message and purpose (edited, forged, or from another purpose).
var ErrBadNonce = errors.New("auth: the nonce was not issued for this message")

// Check reports (nil) whether m.Nonce is one Nonce made for purpose and
// exactly m's fields. It does not look at the time or at single use.
func (c *Challenger) Check(purpose Purpose, m Message) error {
	// Only the canonical (lower-case) form: callers record used nonces by
	// their text, so an upper-cased copy must not count as a new nonce.
	b, err := hex.DecodeString(m.Nonce)
	if err != nil || len(b) != nonceRandN+nonceMACN || hex.EncodeToString(b) != m.Nonce {
		return ErrBadNonce
	}
	if !hmac.Equal(b[nonceRandN:], c.mac(purpose, m, b[:nonceRandN])) {
		return ErrBadNonce
	}
	return nil
}

// mac is the truncated HMAC over purpose, m's fields and the random part.
// Variable-length fields are length-prefixed so no two different field
// lists encode the same bytes.
func (c *Challenger) mac(purpose Purpose, m Message, random []byte) []byte {
	h := hmac.New(sha256.New, c.key)
	str := func(h hash.Hash, s string) {
		_ = binary.Write(h, binary.BigEndian, uint32(len(s)))
		h.Write([]byte(s))
	}
	str(h, string(purpose))
	h.Write(m.Address.Bytes())
	str(h, m.Domain)
	str(h, m.URI)
	_ = binary.Write(h, binary.BigEndian, m.ChainID)
	str(h, m.Statement)
	_ = binary.Write(h, binary.BigEndian, m.IssuedAt.Unix())
	_ = binary.Write(h, binary.BigEndian, m.ExpiresAt.Unix())
	h.Write(random)
	return h.Sum(nil)[:nonceMACN]
}
