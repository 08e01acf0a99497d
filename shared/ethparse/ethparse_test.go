package ethparse

import (
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func TestQuantity(t *testing.T) {
	good := map[string]uint64{"0x0": 0, "0x00": 0, "0xff": 255, "0x00ff": 255, "0XFF": 255, "0xFfFf": 0xffff,
		"0x" + strings.Repeat("0", 100) + "1": 1, "0xffffffffffffffff": 1<<64 - 1, "0x0000ffffffffffffffff": 1<<64 - 1}
	for s, want := range good {
		if got, err := Quantity(s); err != nil || got != want {
			t.Fatalf("Quantity(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0x", "0", "ff", "x1", "0x-1", "0x+1", "0x1g", " 0x1", "0x1 ", "0x10000000000000000", "0x1_0", "1e3", "0x0x1", "00x1"} {
		if v, err := Quantity(s); err == nil {
			t.Fatalf("Quantity(%q) = %d, want an error", s, v)
		}
	}
}

// FuzzQuantity: Quantity reads exactly the numbers a big-integer reading
// of the same digits gives, when they fit 64 bits, and BigQuantity agrees
// with it: no spelling is read by one and skipped or read differently by
// the other.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"0x0", "0x00000000000000000000001", "0xffffffffffffffff", "0x10000000000000000", "0X1a", "0x", "0xg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Quantity(s)
		b, berr := BigQuantity(s)
		var ref *big.Int
		if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && strings.Trim(s[2:], "0123456789abcdefABCDEF") == "" {
			ref, _ = new(big.Int).SetString(s[2:], 16)
		}
		switch {
		case ref == nil:
			if err == nil || berr == nil {
				t.Fatalf("%q is not a quantity, read as %d / %v", s, v, b)
			}
		case ref.IsUint64():
			if err != nil || v != ref.Uint64() || berr != nil || b.Cmp(ref) != 0 {
				t.Fatalf("%q: Quantity %d %v, BigQuantity %v %v, want %v", s, v, err, b, berr, ref)
			}
		default:
			if err == nil {
				t.Fatalf("%q is over 64 bits, read as %d", s, v)
			}
			if ref.BitLen() <= 256 && (berr != nil || b.Cmp(ref) != 0) {
				t.Fatalf("%q: BigQuantity %v %v, want %v", s, b, berr, ref)
			}
		}
	})
}

func TestUint(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "10": 10, "0x10": 16, "007": 7} {
		if n, err := Uint(s); err != nil || n.Int64() != want {
			t.Fatalf("Uint(%q) = %v, %v", s, n, err)
		}
	}
	for _, s := range []string{"", "-1", "+1", "1.5", "0b1", "0o7", "1_000", " 1", strings.Repeat("9", 80)} {
		if n, err := Uint(s); err == nil {
			t.Fatalf("Uint(%q) = %v, want an error", s, n)
		}
	}
}

func TestAddress(t *testing.T) {
	const sum = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	want := common.HexToAddress(sum)
	for _, s := range []string{sum, strings.ToLower(sum), "0x" + strings.ToUpper(sum[2:])} {
		if a, err := Address(s); err != nil || a != want {
			t.Fatalf("Address(%q) = %v, %v", s, a, err)
		}
	}
	bad := []string{"", "0x", sum[2:], sum[:41], sum + "0", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", // checksum broken in the last letter
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaeg", " " + sum[1:], "00" + sum[2:]}
	for _, s := range bad {
		if a, err := Address(s); err == nil {
			t.Fatalf("Address(%q) = %v, want an error", s, a)
		}
	}
	if _, err := ChecksumAddress(sum); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{strings.ToLower(sum), "0x" + strings.ToUpper(sum[2:]), "0X" + sum[2:]} {
		if _, err := ChecksumAddress(s); err == nil {
			t.Fatalf("ChecksumAddress(%q) took an address without its checksum", s)
		}
	}
}

// TestRecover: the rules every signature check shares — 65 bytes, v by
// rule, low s (a signature's malleable twin, same r, s' = N - s and v
// flipped, recovers the same signer and is refused), r and s in range.
func TestRecover(t *testing.T) {
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	hash := crypto.Keccak256([]byte("tollgate"))
	sig := sign(t, key, hash)
	for _, v := range []byte{0, 27} {
		s := append([]byte(nil), sig...)
		s[64] = sig[64] + v
		if a, err := Recover(hash, s, VAny); err != nil || a != who {
			t.Fatalf("v=%d: %v %v", s[64], a, err)
		}
	}
	if _, err := Recover(hash, sig, V27); err == nil {
		t.Fatal("V27 took v 0/1")
	}
	s27 := append([]byte(nil), sig...)
	s27[64] += 27
	if a, err := Recover(hash, s27, V27); err != nil || a != who {
		t.Fatalf("V27 with v %d: %v %v", s27[64], a, err)
	}
	// The malleable twin.
	n := crypto.S256().Params().N
	twin := append([]byte(nil), sig...)
	hs := new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:64]))
	hs.FillBytes(twin[32:64])
	twin[64] = 1 - sig[64]
	if _, err := Recover(hash, twin, VAny); err == nil {
		t.Fatal("a high-s signature was accepted")
	}
	for _, bad := range [][]byte{sig[:64], append(append([]byte(nil), sig...), 0), withV(sig, 2), withV(sig, 29), withV(sig, 26)} {
		if _, err := Recover(hash, bad, VAny); err == nil {
			t.Fatalf("took %x", bad)
		}
	}
	zero := make([]byte, 65)
	if _, err := Recover(hash, zero, VAny); err == nil {
		t.Fatal("took r = s = 0")
	}
	if _, err := Recover(hash[:31], sig, VAny); err == nil {
		t.Fatal("took a 31-byte hash")
	}
}

func sign(t *testing.T, key *ecdsa.PrivateKey, hash []byte) []byte {
	t.Helper()
	sig, err := crypto.Sign(hash, key)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func withV(sig []byte, v byte) []byte {
	s := append([]byte(nil), sig...)
	s[64] = v
	return s
}

func TestPrivateKey(t *testing.T) {
	key, _ := crypto.GenerateKey()
	hexKey := common.Bytes2Hex(crypto.FromECDSA(key))
	for _, s := range []string{hexKey, "0x" + hexKey, "0X" + hexKey, " 0x" + hexKey + "\n"} {
		if k, err := PrivateKey(s); err != nil || !k.Equal(key) {
			t.Fatalf("PrivateKey(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "0x", hexKey[:62], "0x0x" + hexKey, hexKey + "00", strings.Repeat("0", 64)} {
		if _, err := PrivateKey(s); err == nil || strings.Contains(err.Error(), hexKey[:8]) {
			t.Fatalf("PrivateKey(%q): %v", s, err)
		}
	}
}

// TestAddressErrorsDoNotBlessATypo: a mistyped address's error must not
// print the EIP-55 spelling of what was typed — copied from the error
// into the setting, it would carry the typo past the checksum, which is
// the one thing the checksum is for. (chainjobs and tollgate-deploy pass
// these errors on to the operator.)
func TestAddressErrorsDoNotBlessATypo(t *testing.T) {
	right := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	typo := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"      // last digit's case flipped
	typoLower := "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaee" // a wrong digit, no checksum to catch it
	for _, c := range []struct {
		what string
		err  error
		bad  string
	}{
		{"Address, bad checksum", second(Address(typo)), right},
		{"ChecksumAddress, bad checksum", second(ChecksumAddress(typo)), right},
		{"ChecksumAddress, lowercase", second(ChecksumAddress(typoLower)), common.HexToAddress(typoLower).Hex()},
		{"ChecksumAddress, lowercase right", second(ChecksumAddress(strings.ToLower(right))), right},
	} {
		if c.err == nil {
			t.Fatalf("%s: taken", c.what)
		}
		if strings.Contains(c.err.Error(), c.bad[2:]) {
			t.Errorf("%s: the error names the checksummed spelling: %v", c.what, c.err)
		}
		if !strings.Contains(c.err.Error(), "EIP-55") {
			t.Errorf("%s: the error does not say what is wrong: %v", c.what, c.err)
		}
	}
}

func second(_ common.Address, err error) error { return err }
