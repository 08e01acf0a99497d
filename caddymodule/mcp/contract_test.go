package mcp

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestEncodeCall: human-readable signatures encode as solc's ABI does
// (selectors and words checked against known calldata), names and the
// "function"/"returns" words are dropped, and wrong arguments say which.
func TestEncodeCall(t *testing.T) {
	owner := "0x00000000000000000000000000000000000000aa"
	for _, c := range []struct {
		sig  string
		args string
		want string
	}{
		{"balanceOf(address)", `["` + owner + `"]`, "0x70a08231" + strings.Repeat("0", 62) + "aa"},
		{"function balanceOf(address owner) view returns (uint256)", `["` + owner + `"]`, "0x70a08231" + strings.Repeat("0", 62) + "aa"},
		{"decimals()", `[]`, "0x313ce567"},
		{"transfer(address to, uint256 amount)", `["` + owner + `", "1000000000000000000000"]`,
			"0xa9059cbb" + strings.Repeat("0", 62) + "aa" + strings.Repeat("0", 46) + "3635c9adc5dea00000"},
		{"f(uint8,bool,int16)", `[255, true, -2]`, "0x" + selector("f(uint8,bool,int16)") + strings.Repeat("0", 62) + "ff" +
			strings.Repeat("0", 63) + "1" + strings.Repeat("f", 60) + "fffe"},
		{"g(bytes4,uint256[])", `["0x01020304", ["1", 2]]`, "0x" + selector("g(bytes4,uint256[])") + "01020304" + strings.Repeat("0", 56) +
			strings.Repeat("0", 62) + "40" + strings.Repeat("0", 63) + "2" + strings.Repeat("0", 63) + "1" + strings.Repeat("0", 63) + "2"},
	} {
		var args []any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		got, err := encodeCall(c.sig, args)
		if err != nil || got != c.want {
			t.Errorf("%s %s:\n got %s (%v)\nwant %s", c.sig, c.args, got, err, c.want)
		}
	}
	for _, c := range []struct{ sig, args, says string }{
		{"balanceOf(address)", `[]`, "takes 1 arguments, 0 given"},
		{"balanceOf(address)", `["0x12"]`, "argument 1 (address)"},
		{"f(uint8)", `["256"]`, "does not fit uint8"},
		{"f(uint256)", `[-1]`, "non-negative"},
		{"f(int8)", `["-129"]`, "does not fit int8"},
		{"f(uint256)", `[1.5]`, "not an exact integer"},
		{"f(bytes4)", `["0x0102"]`, "exactly 4 bytes"},
		{"f((uint8,bool))", `[[1,true]]`, "raw calldata"},
		{"f(uint7)", `[1]`, "uint7"},
		{"f(uint256[2])", `[["1"]]`, "want 2 elements"},
		{"balanceOf", `[]`, "not a signature"},
		{"1x()", `[]`, "not an identifier"},
		{"f(uint256", `[]`, "not a signature"},
	} {
		var args []any
		_ = json.Unmarshal([]byte(c.args), &args)
		if _, err := encodeCall(c.sig, args); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %s: %v, want an error saying %q", c.sig, c.args, err, c.says)
		}
	}
}

func selector(sig string) string { return hex.EncodeToString(crypto.Keccak256([]byte(sig))[:4]) }

func TestBlockRef(t *testing.T) {
	for in, want := range map[string]string{"": "latest", "latest": "latest", "finalized": "finalized", "0": "0x0", "255": "0xff", "0x10": "0x10"} {
		if got, err := blockRef(in, false); err != nil || got.ref != want || got.numbered != strings.HasPrefix(want, "0x") ||
			(got.numbered && "0x"+strconv.FormatUint(got.num, 16) != want) {
			t.Errorf("blockRef(%q) = %+v, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-1", "0x", "1e3", "pending", "18446744073709551616", "010"} {
		if got, err := blockRef(in, false); err == nil {
			t.Errorf("blockRef(%q) = %+v, want an error", in, got)
		}
	}
}

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		n    string
		dec  int
		want string
	}{{"1500000", 6, "1.5"}, {"1", 18, "0.000000000000000001"}, {"0", 6, "0"}, {"1000000", 6, "1"}, {"12", 0, "12"}} {
		n, _ := integer(c.n)
		if got := formatUnits(n, c.dec); got != c.want {
			t.Errorf("formatUnits(%s, %d) = %s, want %s", c.n, c.dec, got, c.want)
		}
	}
}

// FuzzToolArguments: whatever a stranger puts in a signature, its args, a
// returns list or a block argument, the room answers an error or a value —
// never a panic.
func FuzzToolArguments(f *testing.F) {
	f.Add("transfer(address to, uint256 amount)", `["0x00000000000000000000000000000000000000aa","1"]`, "(uint256,string)", "latest")
	f.Add("f(uint8[2][],bytes32,string)", `[[[1,2]],"0x00","x"]`, "(bool[])", "0x10")
	f.Add("f((uint8,(bool)))", `[]`, "((", "-0")
	f.Fuzz(func(t *testing.T, sig, args, returns, block string) {
		var list []any
		_ = json.Unmarshal([]byte(args), &list)
		_, _ = encodeCall(sig, list)
		if outs, err := parseTypes(returns); err == nil {
			_, _ = outs.Unpack(make([]byte, 64))
		}
		_, _ = blockRef(block, true)
		_, _ = checkMessage([]byte(args))
	})
}

// TestOneAddressAndNumberReader: the tools read addresses and numbers as
// the rest of the gateway does (shared/ethparse): a mixed-case address
// with a wrong EIP-55 checksum is refused, base-0 spellings Go would
// otherwise take (0b, 0o, underscores) are not numbers.
func TestOneAddressAndNumberReader(t *testing.T) {
	addrT, _ := abi.NewType("address", "", nil)
	if _, err := goValue(addrT, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"); err != nil {
		t.Fatal(err)
	}
	if _, err := goValue(addrT, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"); err != nil {
		t.Fatal(err)
	}
	if _, err := goValue(addrT, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"); err == nil {
		t.Fatal("a wrong checksum was taken")
	}
	for _, s := range []string{"0b101", "0o17", "1_000", "0x", "--1"} {
		if n, err := integer(s); err == nil {
			t.Fatalf("integer(%q) = %v", s, n)
		}
	}
	if n, err := integer("-0x10"); err != nil || n.Int64() != -16 {
		t.Fatalf("integer(-0x10) = %v %v", n, err)
	}
}
