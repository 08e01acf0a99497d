package paycheck

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	gethaccounts "github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// siwxFixture is a SIGN-IN-WITH-X header made by the real x402 client
// library (@x402/extensions 2.27.0 createSIWxPayload + encodeSIWxHeader,
// with a viem local account of the well-known Hardhat key #0), so the
// message layout the gateway rebuilds is the one that client signs.
type siwxFixture struct {
	Header  string `json:"header"`
	Address string `json:"address"`
	Now     string `json:"now"`
}

func loadSIWX(t *testing.T) (siwxFixture, time.Time) {
	t.Helper()
	b, err := os.ReadFile("testdata/siwx_fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var f siwxFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, f.Now)
	if err != nil {
		t.Fatal(err)
	}
	return f, now
}

func reencode(t *testing.T, header string, edit func(m map[string]any)) string {
	t.Helper()
	b, _ := base64.StdEncoding.DecodeString(header)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	return base64.StdEncoding.EncodeToString(out)
}

func TestSIWXAcceptsTheX402ClientsMessage(t *testing.T) {
	f, now := loadSIWX(t)
	wallet, nonce, ref := VerifySIWX(f.Header, "http://127.0.0.1:8080", now)
	if ref != nil {
		t.Fatalf("refused: %v", ref)
	}
	if wallet != strings.ToLower(f.Address) || nonce != "5f2b8c0d9e1a4b3c7d6e5f4a3b2c1d0e" {
		t.Fatalf("wallet %s nonce %s", wallet, nonce)
	}
}

func TestSIWXRefusals(t *testing.T) {
	f, now := loadSIWX(t)
	cases := []struct {
		name, header, base string
		now                time.Time
		reason             string
	}{
		{"garbage", "!!!", "http://127.0.0.1:8080", now, "invalid_siwx_header"},
		{"not json", base64.StdEncoding.EncodeToString([]byte("hello")), "http://127.0.0.1:8080", now, "invalid_siwx_header"},
		{"other domain", f.Header, "http://rpc.example.com", now, "invalid_siwx_domain_mismatch"},
		{"other scheme", f.Header, "https://127.0.0.1:8080", now, "invalid_siwx_uri_mismatch"},
		{"too old", f.Header, "http://127.0.0.1:8080", now.Add(6 * time.Minute), "invalid_siwx_issued_at_too_old"},
		{"future", f.Header, "http://127.0.0.1:8080", now.Add(-2 * time.Minute), "invalid_siwx_issued_at_in_future"},
		{"tampered nonce", reencode(t, f.Header, func(m map[string]any) { m["nonce"] = "00000000000000000000000000000000" }),
			"http://127.0.0.1:8080", now, "invalid_siwx_signature"},
		{"other signer claimed", reencode(t, f.Header, func(m map[string]any) { m["address"] = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }),
			"http://127.0.0.1:8080", now, "invalid_siwx_signature"},
		{"wrong chain", reencode(t, f.Header, func(m map[string]any) { m["chainId"] = "eip155:1" }), "http://127.0.0.1:8080", now, "invalid_siwx_chain_id"},
		{"smart wallet", reencode(t, f.Header, func(m map[string]any) { m["signatureScheme"] = "eip1271" }), "http://127.0.0.1:8080", now, "invalid_siwx_signature_scheme"},
		{"line break", reencode(t, f.Header, func(m map[string]any) { m["statement"] = "hi\nURI: http://evil" }), "http://127.0.0.1:8080", now, "invalid_siwx_header"},
		{"expired", reencode(t, f.Header, func(m map[string]any) { m["expirationTime"] = "2026-11-21T15:30:30.000Z" }),
			"http://127.0.0.1:8080", now, "invalid_siwx_expired"},
		// ethparse.Address: a mixed-case address must carry its right checksum.
		{"address with a wrong checksum", reencode(t, f.Header, func(m map[string]any) { m["address"] = wrongChecksum(t, m["address"].(string)) }),
			"http://127.0.0.1:8080", now, "invalid_siwx_address"},
		{"address without 0x", reencode(t, f.Header, func(m map[string]any) { m["address"] = strings.TrimPrefix(m["address"].(string), "0x") }),
			"http://127.0.0.1:8080", now, "invalid_siwx_address"},
		// ethparse.Recover(…, VAny): the malleable twin (n - s, v flipped)
		// of the client's own signature recovers the same signer, and is
		// refused; so is a v that is none of 0, 1, 27, 28.
		{"high-s twin", reencode(t, f.Header, func(m map[string]any) { editSig(t, m, highSTwin) }),
			"http://127.0.0.1:8080", now, "invalid_siwx_signature"},
		{"v 29", reencode(t, f.Header, func(m map[string]any) { editSig(t, m, func(sig []byte) { sig[64] = 29 }) }),
			"http://127.0.0.1:8080", now, "invalid_siwx_signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, ref := VerifySIWX(c.header, c.base, c.now)
			if ref == nil || ref.Reason != c.reason {
				t.Fatalf("got %v, want reason %s", ref, c.reason)
			}
		})
	}
}

// editSig applies fn to the payload's 65-byte signature.
func editSig(t *testing.T, m map[string]any, fn func(sig []byte)) {
	t.Helper()
	sig, err := hexutil.Decode(m["signature"].(string))
	if err != nil || len(sig) != 65 {
		t.Fatalf("fixture signature %v: %v", m["signature"], err)
	}
	fn(sig)
	m["signature"] = hexutil.Encode(sig)
}

// highSTwin turns a low-s signature into its high-s twin: s' = n - s and
// the recovery id flipped, which ecrecover maps to the same signer.
func highSTwin(sig []byte) {
	s := new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig[32:64]))
	s.FillBytes(sig[32:64])
	if sig[64] >= 27 {
		sig[64] = 27 + ((sig[64] - 27) ^ 1) // 27 ↔ 28
	} else {
		sig[64] ^= 1 // 0 ↔ 1
	}
}

// Wallets write v as 27/28 or 0/1 and addresses checksummed or in
// lowercase: personal_sign's every spelling of the same signature and
// signer signs in (one nonce each; here the same, checked offline).
func TestSIWXAcceptsEverySpelling(t *testing.T) {
	f, now := loadSIWX(t)
	for name, edit := range map[string]func(m map[string]any){
		"v as 0/1": func(m map[string]any) {
			editSig(t, m, func(sig []byte) {
				if sig[64] < 27 {
					t.Fatalf("fixture v %d: want the client's 27/28", sig[64])
				}
				sig[64] -= 27
			})
		},
		"lowercase address": func(m map[string]any) { m["address"] = strings.ToLower(m["address"].(string)) },
	} {
		wallet, _, ref := VerifySIWX(reencode(t, f.Header, edit), "http://127.0.0.1:8080", now)
		if ref != nil || wallet != strings.ToLower(f.Address) {
			t.Errorf("%s: wallet %q, refusal %v", name, wallet, ref)
		}
	}
	// The high-s twin recovers the same signer: refused for its s alone.
	h := reencode(t, f.Header, func(m map[string]any) { editSig(t, m, highSTwin) })
	b, _ := base64.StdEncoding.DecodeString(h)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	sig, _ := hexutil.Decode(m["signature"].(string))
	sig[64] -= 27
	b, _ = base64.StdEncoding.DecodeString(f.Header)
	var p siwxPayload
	_ = json.Unmarshal(b, &p)
	pub, err := crypto.SigToPub(gethaccounts.TextHash([]byte(siweMessage(&p, common.HexToAddress(f.Address), ChainID))), sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != common.HexToAddress(f.Address) {
		t.Fatalf("the twin does not recover the fixture's signer (%v): the high-s case tests nothing", err)
	}
}

// FuzzVerifySIWX: any header is refused or accepted, never a panic.
func FuzzVerifySIWX(f *testing.F) {
	fx := siwxFixture{}
	if b, err := os.ReadFile("testdata/siwx_fixture.json"); err == nil {
		_ = json.Unmarshal(b, &fx)
	}
	f.Add(fx.Header)
	f.Add("")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"domain":"127.0.0.1:8080","issuedAt":"x"}`)))
	now := time.Date(2026, 11, 21, 15, 31, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		w, n, ref := VerifySIWX(h, "http://127.0.0.1:8080", now)
		if ref == nil && (len(w) != 42 || n == "") {
			t.Fatalf("accepted without a wallet and nonce: %q %q", w, n)
		}
	})
}

// signV1 builds an X-PAYMENT header to the x402 v1 spec.
func signV1(t testing.TB, key *ecdsa.PrivateKey, asset, to common.Address, value, after, before int64, network string) string {
	var nonce [32]byte
	copy(nonce[:], crypto.Keccak256([]byte(time.Now().String())))
	from := crypto.PubkeyToAddress(key.PublicKey)
	d := x402.Digest("USD Coin", "2", 8453, asset, from, to, big.NewInt(value), big.NewInt(after), big.NewInt(before), nonce)
	sig, err := crypto.Sign(d, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	p := map[string]any{"x402Version": 1, "scheme": "exact", "network": network, "payload": map[string]any{
		"signature": hexutil.Encode(sig),
		"authorization": map[string]string{"from": from.Hex(), "to": to.Hex(), "value": big.NewInt(value).String(),
			"validAfter": big.NewInt(after).String(), "validBefore": big.NewInt(before).String(), "nonce": hexutil.Encode(nonce[:])}}}
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

func TestDecodePaymentOffline(t *testing.T) {
	key, _ := crypto.GenerateKey()
	asset := common.HexToAddress("0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB")
	payTo := common.HexToAddress("0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5")
	o := Offer{Asset: asset.Hex(), PayTo: payTo.Hex()}
	now := time.Unix(1_795_000_000, 0)
	n := now.Unix()
	ok := signV1(t, key, asset, payTo, 100_000, 0, n+300, "base")
	if p, ref := DecodePayment(o, "X-PAYMENT", ok, now); ref != nil || p.Version != 1 || p.Checked.From != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("valid v1 payment refused: %v", ref)
	}
	other := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	cases := []struct{ name, header, reason string }{
		{"garbage", "%%%", ReasonInvalidHeader},
		{"not a payload", base64.StdEncoding.EncodeToString([]byte(`[1,2]`)), ReasonInvalidHeader},
		{"version 3", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":3}`)), x402.ReasonVersion},
		{"amount", signV1(t, key, asset, payTo, 99_999, 0, n+300, "base"), x402.ReasonValueV1},
		{"payee", signV1(t, key, asset, other, 100_000, 0, n+300, "base"), x402.ReasonRecipient},
		{"network", signV1(t, key, asset, payTo, 100_000, 0, n+300, "ethereum"), x402.ReasonNetwork},
		{"other token's domain", signV1(t, key, other, payTo, 100_000, 0, n+300, "base"), x402.ReasonSignature},
		{"expired", signV1(t, key, asset, payTo, 100_000, 0, n-1, "base"), x402.ReasonValidBefore},
		{"too close to expiry to settle", signV1(t, key, asset, payTo, 100_000, 0, n+3, "base"), x402.ReasonValidBefore},
		{"not yet valid", signV1(t, key, asset, payTo, 100_000, n+60, n+300, "base"), x402.ReasonValidAfter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ref := DecodePayment(o, "X-PAYMENT", c.header, now)
			if ref == nil || ref.Reason != c.reason {
				t.Fatalf("got %v, want reason %s", ref, c.reason)
			}
		})
	}
}

// FuzzDecodePayment: any header is refused or accepted, never a panic.
func FuzzDecodePayment(f *testing.F) {
	key, _ := crypto.GenerateKey()
	asset := common.HexToAddress("0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB")
	payTo := common.HexToAddress("0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5")
	o := Offer{Asset: asset.Hex(), PayTo: payTo.Hex()}
	now := time.Unix(1_795_000_000, 0)
	f.Add(signV1(f, key, asset, payTo, 100_000, 0, now.Unix()+300, "base"))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"amount":"1e5"},"payload":{}}`)))
	f.Fuzz(func(t *testing.T, hdr string) {
		p, ref := DecodePayment(o, "PAYMENT-SIGNATURE", hdr, now)
		if ref == nil && (p == nil || p.Checked == nil) {
			t.Fatal("accepted without a checked authorization")
		}
	})
}
