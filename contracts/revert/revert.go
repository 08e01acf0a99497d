// Package revert decodes EVM revert data carried by errors from contract calls, gas estimation and
// transactions (bind.Call / bind.Transact / ethclient), as returned by go-ethereum's JSON-RPC layer.
//
// Typical use with an abigen --v2 binding:
//
//	_, err := bind.Transact(inst, opts, cc.PackClaim(sig, amount, deadline))
//	if e, ok := revert.As[claimscontract.ClaimsContractClaimExpired](err, cc.UnpackError); ok { ... }
//
// Generated UnpackError functions index raw[:4] and panic on shorter data (e.g. a bare `revert()`);
// everything here checks the length first.
package revert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// ErrNoData is returned when an error carries no revert data (not a revert, or a bare revert()).
var ErrNoData = errors.New("revert: error carries no revert data")

// Unpacker decodes revert data into a typed custom error, e.g. (*claimscontract.ClaimsContract).UnpackError.
type Unpacker func(raw []byte) (any, error)

// Reason is a standard Solidity revert: Error(string) from require/revert with a message, or
// Panic(uint256) (assert, overflow, ...), rendered by abi.UnpackRevert.
type Reason struct {
	Message string
}

func (r *Reason) Error() string { return "execution reverted: " + r.Message }

// Data returns the raw revert data carried by err (any error in its chain implementing
// rpc.DataError whose ErrorData is a hex string or bytes). ok is false when there is none.
func Data(err error) (data []byte, ok bool) {
	var de rpc.DataError
	if err == nil || !errors.As(err, &de) {
		return nil, false
	}
	switch v := de.ErrorData().(type) {
	case string:
		if !strings.HasPrefix(v, "0x") && !strings.HasPrefix(v, "0X") {
			return nil, false
		}
		b, derr := hexutil.Decode(v)
		if derr != nil {
			return nil, false
		}
		return b, len(b) > 0
	case []byte:
		return v, len(v) > 0
	case hexutil.Bytes:
		return v, len(v) > 0
	default:
		return nil, false
	}
}

// Decode returns the custom error encoded in err's revert data, decoded by unpack (a generated
// UnpackError). The result is a pointer to the binding's error struct, e.g.
// *claimscontract.ClaimsContractInvalidSigner. Error(string) and Panic(uint256) reverts are
// returned as *Reason. It fails with ErrNoData when err carries no revert data, and with a
// descriptive error when the data is shorter than a 4-byte selector or matches no known error.
func Decode(err error, unpack Unpacker) (any, error) {
	data, ok := Data(err)
	if !ok {
		return nil, ErrNoData
	}
	return DecodeData(data, unpack)
}

// DecodeData is Decode for raw revert data.
func DecodeData(data []byte, unpack Unpacker) (any, error) {
	if len(data) == 0 {
		return nil, ErrNoData
	}
	if len(data) < 4 {
		return nil, fmt.Errorf("revert: revert data too short for a selector: %#x", data)
	}
	if unpack != nil {
		if v, uerr := unpack(data); uerr == nil && v != nil {
			return v, nil
		}
	}
	if msg, rerr := abi.UnpackRevert(data); rerr == nil {
		return &Reason{Message: msg}, nil
	}
	return nil, fmt.Errorf("revert: unknown error selector %#x (%d bytes of data)", data[:4], len(data))
}

// As reports whether err is a revert with the custom error T (the binding's struct type, not a
// pointer), and returns it.
func As[T any](err error, unpack Unpacker) (*T, bool) {
	v, derr := Decode(err, unpack)
	if derr != nil {
		return nil, false
	}
	t, ok := v.(*T)
	return t, ok
}
