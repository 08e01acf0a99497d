package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/golang-jwt/jwt/v5"
)

func sample() Message {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return Message{Domain: "api.tollgate.example", Address: common.HexToAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
		Statement: Statement, URI: "https://api.tollgate.example", Version: "1", ChainID: 137, Nonce: "0123456789abcdef",
		IssuedAt: at, ExpiresAt: at.Add(NonceTTL)}
}

func TestSIWERoundTripAndLayout(t *testing.T) {
	m := sample()
	s := m.String()
	want := "api.tollgate.example wants you to sign in with your Ethereum account:\n" +
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n\n" + Statement + "\n\n" +
		"URI: https://api.tollgate.example\nVersion: 1\nChain ID: 137\nNonce: 0123456789abcdef\n" +
		"Issued At: 2026-11-21T12:00:00Z\nExpiration Time: 2026-11-21T12:10:00Z"
	if s != want {
		t.Fatalf("message:\n%s\nwant:\n%s", s, want)
	}
	got, err := Parse(s)
	if err != nil || got != m {
		t.Fatalf("parse: %+v %v", got, err)
	}
}

func TestSIWEParseIsStrict(t *testing.T) {
	s := sample().String()
	for name, bad := range map[string]string{
		"empty":            "",
		"extra field":      s + "\nResources: x",
		"missing field":    strings.Replace(s, "\nVersion: 1", "", 1),
		"version 2":        strings.Replace(s, "Version: 1", "Version: 2", 1),
		"bad address":      strings.Replace(s, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aAeb", 1),
		"bad chain":        strings.Replace(s, "Chain ID: 137", "Chain ID: x", 1),
		"bad nonce":        strings.Replace(s, "Nonce: 0123456789abcdef", "Nonce: a b", 1),
		"bad time":         strings.Replace(s, "Issued At: 2026-11-21T12:00:00Z", "Issued At: yesterday", 1),
		"fields reordered": strings.Replace(strings.Replace(s, "URI:", "XURI:", 1), "Version:", "URI:", 1),
		"no header":        strings.Replace(s, " wants you to sign in", " would like", 1),
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestPersonalSignAndTokens(t *testing.T) {
	key, _ := crypto.GenerateKey()
	msg := sample().String()
	sig, err := crypto.Sign(personalHash(msg), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	if got, err := VerifyPersonalSign(msg, sig); err != nil || got != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("recovered %v %v", got, err)
	}
	if got, _ := VerifyPersonalSign(msg+" ", sig); got == crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatal("a changed message verified")
	}
	if _, err := VerifyPersonalSign(msg, sig[:64]); err == nil {
		t.Fatal("short signature accepted")
	}

	now := time.Now()
	s := &Service{cfg: Config{Secret: []byte(strings.Repeat("k", 32)), Now: func() time.Time { return now }}}
	wallet := strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex())
	tok, exp, err := s.Issue(wallet)
	if err != nil || exp.Sub(now) != time.Hour {
		t.Fatal(err, exp)
	}
	if got, err := s.Wallet(tok); err != nil || got != wallet {
		t.Fatalf("wallet %q %v", got, err)
	}
	// HS384 with the same secret, alg none and a later clock are refused.
	hs384, _ := jwt.NewWithClaims(jwt.SigningMethodHS384, jwt.RegisteredClaims{Issuer: Issuer, Subject: wallet,
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(s.cfg.Secret)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Issuer: Issuer, Subject: wallet,
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Issuer: Issuer, Subject: wallet}).SignedString(s.cfg.Secret)
	for name, bad := range map[string]string{"HS384": hs384, "none": none, "no exp": noExp, "garbage": "a.b.c"} {
		if _, err := s.Wallet(bad); err == nil {
			t.Errorf("%s token accepted", name)
		}
	}
	s.cfg.Now = func() time.Time { return now.Add(time.Hour + time.Second) }
	if _, err := s.Wallet(tok); err == nil {
		t.Fatal("expired token accepted")
	}
}

func TestParseAddress(t *testing.T) {
	for v, ok := range map[string]bool{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed": true,  // EIP-55
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed": true,  // lower
		"0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED": true,  // upper
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD": false, // bad checksum
		"5aaeb6053f3e94c9b9a09f33669435e7ef1beaed":   false,
		"0x5aaeb": false,
		"":        false,
	} {
		if _, got := ParseAddress(v); got != ok {
			t.Errorf("ParseAddress(%q) = %v", v, got)
		}
	}
	_ = hexutil.Encode
}

func personalHash(msg string) []byte { return accounts.TextHash([]byte(msg)) }
