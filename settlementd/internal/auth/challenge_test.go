package auth

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// A nonce is fresh hex that Parse accepts, passes Check for exactly the
// message and purpose it was made for, and fails for any other purpose,
// any edited field, any edited digit, another secret, or a non-canonical
// spelling. The MAC key is derived, never the secret itself.
func TestChallengerBindsEveryField(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	c, err := NewChallenger(secret)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(c.key, secret) || len(c.key) != 32 {
		t.Fatal("the challenge key must be derived from the secret, not be it")
	}
	if _, err := NewChallenger(secret[:31]); err == nil {
		t.Fatal("a 31-byte secret was accepted")
	}
	m := sample()
	m.Nonce = c.Nonce(PurposeLogin, m)
	if len(m.Nonce) != 64 || strings.ToLower(m.Nonce) != m.Nonce {
		t.Fatalf("nonce %q: want 64 lower-case hex digits", m.Nonce)
	}
	if p, err := Parse(m.String()); err != nil || p != m {
		t.Fatalf("the message with the nonce does not round-trip: %v", err)
	}
	if err := c.Check(PurposeLogin, m); err != nil {
		t.Fatalf("the issued nonce: %v", err)
	}
	if n := c.Nonce(PurposeLogin, m); n == m.Nonce {
		t.Fatal("two nonces for the same message are equal")
	}

	edits := map[string]func(*Message){
		"address":    func(e *Message) { e.Address = common.HexToAddress("0x00000000000000000000000000000000000000aa") },
		"domain":     func(e *Message) { e.Domain = "evil.example" },
		"uri":        func(e *Message) { e.URI = "https://evil.example" },
		"chain":      func(e *Message) { e.ChainID = 1 },
		"statement":  func(e *Message) { e.Statement = "Something else." },
		"issued at":  func(e *Message) { e.IssuedAt = e.IssuedAt.Add(time.Second) },
		"expires at": func(e *Message) { e.ExpiresAt = e.ExpiresAt.Add(time.Second) },
		"random":     func(e *Message) { e.Nonce = flipHexDigit(e.Nonce, 0) },
		"mac":        func(e *Message) { e.Nonce = flipHexDigit(e.Nonce, 63) },
		"upper case": func(e *Message) { e.Nonce = strings.ToUpper(e.Nonce) },
		"too short":  func(e *Message) { e.Nonce = e.Nonce[:62] },
		"not hex":    func(e *Message) { e.Nonce = "zz" + e.Nonce[2:] },
	}
	for name, f := range edits {
		e := m
		f(&e)
		if err := c.Check(PurposeLogin, e); err == nil {
			t.Errorf("%s edited: the nonce still checks", name)
		}
	}
	if err := c.Check("tollgate something else", m); err == nil {
		t.Error("the nonce checks for another purpose")
	}
	other, _ := NewChallenger([]byte(strings.Repeat("j", 32)))
	if err := other.Check(PurposeLogin, m); err == nil {
		t.Error("the nonce checks under another secret")
	}
	// The same secret (another replica) checks it.
	again, _ := NewChallenger(secret)
	if err := again.Check(PurposeLogin, m); err != nil {
		t.Errorf("another Challenger from the same secret: %v", err)
	}
}
