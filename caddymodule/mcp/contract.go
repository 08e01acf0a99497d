package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// ERC-20 reads of get_balance: balanceOf(address), decimals(), symbol().
const (
	selBalanceOf = "0x70a08231"
	selDecimals  = "0x313ce567"
	selSymbol    = "0x95d89b41"
)

func (s *Server) getBalance(_ context.Context, req *sdk.CallToolRequest, in balanceIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	if bad := checkAddress("address", in.Address, "an address"); bad != nil {
		return bad
	}
	b, err := blockRef(in.Block, false)
	if err != nil {
		return toolError("block: " + err.Error())
	}
	block := b.ref
	if in.Token == "" {
		dec := int(ch.Currency.Decimals)
		return s.one(req, "get_balance", ch, call{"eth_getBalance", []any{in.Address, block}}, func(r json.RawMessage) any {
			out := map[string]any{"chain_id": ch.ID, "address": in.Address, "block": block, "symbol": ch.Currency.Symbol, "decimals": dec}
			if wei, ok := quantityBig(r); ok {
				out["wei"], out["formatted"] = wei.String(), formatUnits(wei, dec)
			} else {
				out["result"] = r // not a quantity: the node's answer as it came
			}
			return out
		})
	}
	if bad := checkAddress("token", in.Token, "a contract address"); bad != nil {
		return bad
	}
	at := func(data string) call {
		return call{"eth_call", []any{map[string]any{"to": in.Token, "data": data}, block}}
	}
	calls := []call{at(selBalanceOf + "000000000000000000000000" + strings.ToLower(in.Address[2:])), at(selDecimals), at(selSymbol)}
	p := s.pay(req, "get_balance", ch.ID, calls)
	if p.refused != nil {
		return p.refused
	}
	for _, a := range p.answers {
		if a.Error != nil {
			return nodeError(a, p.meta)
		}
	}
	raw, ok := returnedUint(p.answers[0].Result)
	if !ok {
		return toolErrorf("%s answered balanceOf with %s: not an ERC-20 token?", in.Token, clip(string(p.answers[0].Result)))
	}
	out := map[string]any{"chain_id": ch.ID, "address": in.Address, "token": in.Token, "block": block, "raw": raw.String()}
	if d, ok := returnedUint(p.answers[1].Result); ok && d.IsInt64() && d.Int64() <= 77 {
		out["decimals"] = d.Int64()
		out["formatted"] = formatUnits(raw, int(d.Int64()))
	}
	if sym := returnedString(p.answers[2].Result); sym != "" {
		out["symbol"] = sym
	}
	return served(out, p.meta)
}

func (s *Server) callContract(_ context.Context, req *sdk.CallToolRequest, in callIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	if bad := checkAddress("to", in.To, "a contract address"); bad != nil {
		return bad
	}
	if in.From != "" {
		if bad := checkAddress("from", in.From, "an address"); bad != nil {
			return bad
		}
	}
	b, err := blockRef(in.Block, true)
	if err != nil {
		return toolError("block: " + err.Error())
	}
	block := b.ref
	data := in.Data
	switch {
	case in.Function != "" && in.Data != "":
		return toolError("give function (with args) or data, not both")
	case in.Function != "":
		data, err = encodeCall(in.Function, in.Args)
		if err != nil {
			return toolError(err.Error())
		}
	case in.Data == "":
		return toolError("give function (a signature such as balanceOf(address)) with its args, or raw calldata in data")
	case !hexData.MatchString(in.Data):
		return toolError("data is not 0x followed by whole bytes of hex")
	}
	var outs abi.Arguments
	if in.Returns != "" {
		if outs, err = parseTypes(in.Returns); err != nil {
			return toolError("returns: " + err.Error())
		}
	}
	tx := map[string]any{"to": in.To, "data": data}
	if in.From != "" {
		tx["from"] = in.From
	}
	return s.one(req, "call_contract", ch, call{"eth_call", []any{tx, block}}, func(r json.RawMessage) any {
		out := map[string]any{"chain_id": ch.ID, "to": in.To, "block": block, "data": r}
		if outs != nil {
			var hexs string
			if json.Unmarshal(r, &hexs) == nil {
				if b, err := hexutil.Decode(hexs); err == nil {
					if vals, err := outs.Unpack(b); err == nil {
						out["decoded"] = jsonValues(vals)
					} else {
						out["decode_error"] = err.Error()
					}
				}
			}
		}
		return out
	})
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// encodeCall is the calldata of a human-readable signature and its args.
func encodeCall(sig string, args []any) (string, error) {
	name, types, err := splitSignature(sig)
	if err != nil {
		return "", err
	}
	in, err := parseTypes("(" + types + ")")
	if err != nil {
		return "", fmt.Errorf("function %q: %v", clip(sig), err)
	}
	if len(args) != len(in) {
		return "", fmt.Errorf("%s takes %d arguments, %d given", name, len(in), len(args))
	}
	vals := make([]any, len(in))
	for i, a := range in {
		v, err := goValue(a.Type, args[i])
		if err != nil {
			return "", fmt.Errorf("argument %d (%s): %v", i+1, a.Type.String(), err)
		}
		vals[i] = v
	}
	packed, err := in.Pack(vals...)
	if err != nil {
		return "", fmt.Errorf("encoding the arguments: %v", err)
	}
	// The selector is keccak256 of the canonical signature ("f(uint256)").
	sel := abi.NewMethod(name, name, abi.Function, "view", false, false, in, nil).ID
	return hexutil.Encode(append(sel, packed...)), nil
}

// splitSignature reads "function transfer(address to, uint256 amount)
// returns (bool)" as its name and its comma-separated types, names dropped.
func splitSignature(sig string) (name, types string, err error) {
	sig = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sig), "function "))
	if i := strings.Index(sig, " returns"); i >= 0 {
		sig = strings.TrimSpace(sig[:i])
	}
	// Modifiers after the parameter list ("view", "external") say nothing
	// the calldata needs.
	if i := strings.LastIndexByte(sig, ')'); i >= 0 {
		sig = sig[:i+1]
	}
	open := strings.IndexByte(sig, '(')
	if open <= 0 || !strings.HasSuffix(sig, ")") {
		return "", "", fmt.Errorf("function %q is not a signature such as balanceOf(address)", clip(sig))
	}
	name = sig[:open]
	if !identifier.MatchString(name) {
		return "", "", fmt.Errorf("function name %q is not an identifier", clip(name))
	}
	return name, sig[open+1 : len(sig)-1], nil
}

// parseTypes reads a parenthesised list of ABI types ("(uint256,string)";
// parameter names and the words memory/calldata are dropped).
func parseTypes(list string) (abi.Arguments, error) {
	list = strings.TrimSpace(list)
	if len(list) < 2 || list[0] != '(' || list[len(list)-1] != ')' {
		list = "(" + list + ")"
	}
	parts, err := topLevel(list[1 : len(list)-1])
	if err != nil {
		return nil, err
	}
	clean := make([]string, 0, len(parts))
	for _, p := range parts {
		f := strings.Fields(p)
		if len(f) == 0 {
			return nil, fmt.Errorf("an empty type in %q", clip(list))
		}
		if strings.HasPrefix(f[0], "(") || strings.HasPrefix(f[0], "tuple") {
			return nil, fmt.Errorf("tuples are not taken here: pass raw calldata in data")
		}
		clean = append(clean, f[0])
	}
	sel, err := abi.ParseSelector("f(" + strings.Join(clean, ",") + ")")
	if err != nil {
		return nil, fmt.Errorf("%q: %v", clip(list), err)
	}
	args := make(abi.Arguments, len(sel.Inputs))
	for i, m := range sel.Inputs {
		t, err := abi.NewType(m.Type, "", m.Components)
		if err != nil {
			return nil, fmt.Errorf("type %q: %v", m.Type, err)
		}
		args[i] = abi.Argument{Type: t}
	}
	return args, nil
}

// topLevel splits a type list on its top-level commas.
func topLevel(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced parentheses")
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses")
	}
	return append(parts, s[start:]), nil
}

// goValue converts a JSON argument to the Go value abi packs for t.
func goValue(t abi.Type, v any) (any, error) {
	switch t.T {
	case abi.AddressTy:
		s, ok := v.(string)
		a, err := ethparse.Address(s)
		if !ok || err != nil {
			return nil, fmt.Errorf("want an address, 0x followed by 40 hex digits (in mixed case, with a right EIP-55 checksum)")
		}
		return a, nil
	case abi.BoolTy:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false")
		}
		return b, nil
	case abi.StringTy:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string")
		}
		return s, nil
	case abi.BytesTy, abi.FixedBytesTy:
		s, ok := v.(string)
		if !ok || !hexData.MatchString(s) {
			return nil, fmt.Errorf("want 0x hex bytes")
		}
		b := hexutil.MustDecode(s)
		if t.T == abi.BytesTy {
			return b, nil
		}
		if len(b) != t.Size {
			return nil, fmt.Errorf("want exactly %d bytes, got %d", t.Size, len(b))
		}
		arr := reflect.New(t.GetType()).Elem()
		reflect.Copy(arr, reflect.ValueOf(b))
		return arr.Interface(), nil
	case abi.UintTy, abi.IntTy:
		n, err := integer(v)
		if err != nil {
			return nil, err
		}
		if t.T == abi.UintTy && n.Sign() < 0 {
			return nil, fmt.Errorf("want a non-negative integer")
		}
		bits := n.BitLen()
		if t.T == abi.IntTy && n.Sign() < 0 {
			bits = new(big.Int).Add(n, big.NewInt(1)).BitLen()
		}
		if (t.T == abi.UintTy && bits > t.Size) || (t.T == abi.IntTy && bits > t.Size-1) {
			return nil, fmt.Errorf("%s does not fit %s", n, t.String())
		}
		if t.Size%8 != 0 || t.Size == 0 || t.Size > 256 {
			return nil, fmt.Errorf("%s is not an ABI integer type", t.String())
		}
		// abi packs uint8..uint64 (int8..int64) from those Go types only,
		// and every other size from a *big.Int.
		out := reflect.New(t.GetType()).Elem()
		switch out.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out.SetUint(n.Uint64())
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out.SetInt(n.Int64())
		default:
			return n, nil
		}
		return out.Interface(), nil
	case abi.SliceTy, abi.ArrayTy:
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON array")
		}
		if t.T == abi.ArrayTy && len(list) != t.Size {
			return nil, fmt.Errorf("want %d elements, got %d", t.Size, len(list))
		}
		var out reflect.Value
		if t.T == abi.SliceTy {
			out = reflect.MakeSlice(t.GetType(), len(list), len(list))
		} else {
			out = reflect.New(t.GetType()).Elem()
		}
		for i, x := range list {
			e, err := goValue(*t.Elem, x)
			if err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
			out.Index(i).Set(reflect.ValueOf(e))
		}
		return out.Interface(), nil
	}
	return nil, fmt.Errorf("type %s is not taken here: pass raw calldata in data", t.String())
}

// integer reads a JSON number or a decimal/0x string as an integer.
func integer(v any) (*big.Int, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) || x > 1<<53 || x < -(1<<53) {
			return nil, fmt.Errorf("%v is not an exact integer: pass large numbers as decimal strings", x)
		}
		return big.NewInt(int64(x)), nil
	case string:
		t := strings.TrimSpace(x)
		neg := strings.HasPrefix(t, "-")
		n, err := ethparse.Uint(strings.TrimPrefix(t, "-"))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer (decimal or 0x hex)", clip(x))
		}
		if neg {
			n.Neg(n)
		}
		return n, nil
	}
	return nil, fmt.Errorf("want an integer (a number or a decimal string)")
}

// jsonValues renders unpacked ABI values for JSON: integers as decimal
// strings (no precision lost), bytes as 0x hex, addresses checksummed.
func jsonValues(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = jsonValue(reflect.ValueOf(v))
	}
	return out
}

func jsonValue(v reflect.Value) any {
	switch x := v.Interface().(type) {
	case *big.Int:
		return x.String()
	case common.Address:
		return x.Hex()
	case []byte:
		return hexutil.Encode(x)
	case string, bool:
		return x
	}
	switch v.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return new(big.Int).SetUint64(v.Uint()).String()
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return big.NewInt(v.Int()).String()
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return hexutil.Encode(b)
		}
		fallthrough
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	}
	return fmt.Sprint(v.Interface())
}

// quantityBig reads a JSON 0x quantity.
func quantityBig(r json.RawMessage) (*big.Int, bool) {
	var s string
	if json.Unmarshal(r, &s) != nil {
		return nil, false
	}
	n, err := ethparse.BigQuantity(s)
	return n, err == nil
}

// returnedUint reads an eth_call answer holding one uint (32 bytes).
func returnedUint(r json.RawMessage) (*big.Int, bool) {
	var s string
	if json.Unmarshal(r, &s) != nil {
		return nil, false
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) < 32 {
		return nil, false
	}
	return new(big.Int).SetBytes(b[:32]), true
}

// returnedString reads an eth_call answer holding a string, or a bytes32
// (old tokens' symbol()).
func returnedString(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) != nil {
		return ""
	}
	b, err := hexutil.Decode(s)
	if err != nil {
		return ""
	}
	if len(b) == 32 {
		return strings.TrimRight(string(b), "\x00")
	}
	if vals, err := (abi.Arguments{{Type: stringType}}).Unpack(b); err == nil && len(vals) == 1 {
		return vals[0].(string)
	}
	return ""
}

var stringType, _ = abi.NewType("string", "", nil)

// formatUnits renders a base-unit amount with its decimals: 1500000, 6 →
// "1.5".
func formatUnits(n *big.Int, decimals int) string {
	s := new(big.Int).Abs(n).String()
	if decimals > 0 {
		if len(s) <= decimals {
			s = strings.Repeat("0", decimals-len(s)+1) + s
		}
		whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
		s = whole
		if frac != "" {
			s += "." + frac
		}
	}
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}
