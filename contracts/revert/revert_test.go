package revert

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

type dataErr struct{ data any }

func (e dataErr) Error() string  { return "execution reverted" }
func (e dataErr) ErrorData() any { return e.data }

type custom struct{ N uint64 }

var customSel = crypto.Keccak256([]byte("Custom(uint64)"))[:4]

func unpackCustom(raw []byte) (any, error) {
	if len(raw) == 36 && string(raw[:4]) == string(customSel) {
		return &custom{N: uint64(raw[35])}, nil
	}
	return nil, errors.New("unknown")
}

func TestDecodeCustomError(t *testing.T) {
	data := append(append([]byte{}, customSel...), make([]byte, 32)...)
	data[35] = 7
	err := fmt.Errorf("wrapped: %w", dataErr{hexutil.Encode(data)})
	got, ok := As[custom](err, unpackCustom)
	if !ok || got.N != 7 {
		t.Fatalf("As = %+v, %v", got, ok)
	}
}

func TestDecodeShortAndMissingData(t *testing.T) {
	if _, err := Decode(errors.New("plain"), unpackCustom); !errors.Is(err, ErrNoData) {
		t.Fatalf("plain error: %v", err)
	}
	if _, err := Decode(dataErr{"0x"}, unpackCustom); !errors.Is(err, ErrNoData) {
		t.Fatalf("empty data: %v", err)
	}
	// Fewer than 4 bytes must not reach the (panicking) generated unpacker.
	panicky := func([]byte) (any, error) { panic("unpacker called") }
	if _, err := Decode(dataErr{"0x0102"}, panicky); err == nil || errors.Is(err, ErrNoData) {
		t.Fatalf("short data: %v", err)
	}
	if _, err := Decode(dataErr{"0xdeadbeef"}, unpackCustom); err == nil {
		t.Fatal("unknown selector decoded")
	}
}

func TestDecodeErrorString(t *testing.T) {
	strType, _ := abi.NewType("string", "", nil)
	enc, err := abi.Arguments{{Type: strType}}.Pack("nope")
	if err != nil {
		t.Fatal(err)
	}
	data := append(crypto.Keccak256([]byte("Error(string)"))[:4], enc...)
	v, err := Decode(dataErr{data}, unpackCustom)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := v.(*Reason); !ok || r.Message != "nope" {
		t.Fatalf("got %#v", v)
	}
}
