package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Tool is a tool as the server registers it and discovery lists it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Calls is what one call of the tool costs, in calls at the price per
	// call (method weights apply): "0" for the free tools.
	Calls string `json:"calls"`
}

// Tools is the catalogue, in the order tools/list gives it.
var Tools = []Tool{
	{"rpc", "Call any JSON-RPC method the gateway serves (eth_*, net_*, web3_*, debug_* and trace_* where offered) on any configured chain, with its params as a JSON array. Returns the node's result, or its JSON-RPC error.", "the method's weight (1 unless the operator weights it)"},
	{"get_balance", "Balance of an address: the chain's native currency, or an ERC-20 token's when token is given (with the token's decimals and symbol). Amounts come raw (base units) and formatted.", "1 (native) or 3 (ERC-20: balanceOf, decimals, symbol)"},
	{"get_transaction", "A transaction by its hash (eth_getTransactionByHash): null when the chain does not know it.", "1"},
	{"get_receipt", "A transaction's receipt by its hash (eth_getTransactionReceipt): status, gas used, logs; null while it is pending or unknown.", "1"},
	{"get_block", "A block by number, tag (latest, finalized, safe, earliest, pending) or hash; with full transaction objects when full_transactions is true.", "1"},
	{"call_contract", "Read a contract (eth_call): give a human-readable function signature such as \"balanceOf(address)\" and its args (decode the answer with returns such as \"(uint256)\"), or raw calldata in data.", "1"},
	{"get_logs", "Event logs (eth_getLogs) of an address and/or topics over a block range (from_block..to_block) or one block (block_hash). The range is bounded by the chain's eth_getLogs limit.", "1"},
	{"chain_info", "The configured chains, or one chain: id, name, native currency, explorer, block time, the gateway's latest block, and how to reach it over JSON-RPC. Free.", "0"},
	{"account", "What the caller has left: the API key's credits (X-API-Key header), the free calls left today for this address, the price per call and what each tool costs. Free.", "0"},
}

func describe(name string) string {
	for _, t := range Tools {
		if t.Name == name {
			return t.Description
		}
	}
	return ""
}

// add registers a typed tool whose handler builds its own result (the
// output is not schema-checked: a payment-required result carries the
// x402 object instead of the tool's output).
func add[In any](s *Server, name string, readOnly bool, h func(context.Context, *sdk.CallToolRequest, In) *sdk.CallToolResult) {
	t := &sdk.Tool{Name: name, Description: describe(name), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: readOnly, OpenWorldHint: ptr(true)}}
	sdk.AddTool(s.sdk, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		return h(ctx, req, in), nil, nil
	})
}

func ptr[T any](v T) *T { return &v }

// chainArg is the optional chain every tool takes.
type chainArg struct {
	Chain string `json:"chain,omitempty" jsonschema:"the chain: a name such as ethereum, base, arbitrum, polygon, or a chain id such as 8453; the gateway's default chain when omitted (chain_info lists them)"`
}

func (s *Server) chain(c chainArg) (chains.Chain, *sdk.CallToolResult) {
	t := s.backend.Chains()
	if strings.TrimSpace(c.Chain) == "" {
		return t.Default(), nil
	}
	ch, err := t.Lookup(strings.TrimSpace(c.Chain))
	if err != nil {
		return chains.Chain{}, toolErrorf("unknown chain %q: use one of %s (names) or %s (ids)", clip(c.Chain), t.Names(), t.IDs())
	}
	return ch, nil
}

type rpcIn struct {
	chainArg
	Method string `json:"method" jsonschema:"the JSON-RPC method, e.g. eth_blockNumber, eth_getBalance, eth_call"`
	Params []any  `json:"params,omitempty" jsonschema:"the method's params as a JSON array, exactly as in a JSON-RPC request"`
}

type balanceIn struct {
	chainArg
	Address string `json:"address" jsonschema:"the account, 0x followed by 40 hex digits"`
	Token   string `json:"token,omitempty" jsonschema:"an ERC-20 token contract: the token's balance instead of the native currency"`
	Block   string `json:"block,omitempty" jsonschema:"block number (decimal or 0x hex) or tag (latest, finalized, safe, earliest); latest when omitted"`
}

type hashIn struct {
	chainArg
	Hash string `json:"hash" jsonschema:"the transaction hash, 0x followed by 64 hex digits"`
}

type blockIn struct {
	chainArg
	Block            string `json:"block,omitempty" jsonschema:"block number (decimal or 0x hex), tag (latest, finalized, safe, earliest, pending) or block hash; latest when omitted"`
	FullTransactions bool   `json:"full_transactions,omitempty" jsonschema:"true for full transaction objects instead of their hashes"`
}

type callIn struct {
	chainArg
	To       string `json:"to" jsonschema:"the contract address"`
	Function string `json:"function,omitempty" jsonschema:"a human-readable function signature, e.g. balanceOf(address) or transfer(address to, uint256 amount)"`
	Args     []any  `json:"args,omitempty" jsonschema:"the function's arguments in order: addresses and byte strings as 0x hex, integers as decimal strings or numbers, booleans, arrays as JSON arrays"`
	Returns  string `json:"returns,omitempty" jsonschema:"the function's return types to decode the answer, e.g. (uint256) or (string,uint8)"`
	Data     string `json:"data,omitempty" jsonschema:"raw calldata (0x hex), instead of function and args"`
	From     string `json:"from,omitempty" jsonschema:"the caller address the call runs as"`
	Block    string `json:"block,omitempty" jsonschema:"block number or tag; latest when omitted"`
}

type logsIn struct {
	chainArg
	Address   string  `json:"address,omitempty" jsonschema:"only logs of this contract"`
	Topics    []any   `json:"topics,omitempty" jsonschema:"topic filters by position: a 0x 32-byte topic, null for any, or an array of alternatives"`
	FromBlock string  `json:"from_block,omitempty" jsonschema:"first block: number or tag; latest when omitted"`
	ToBlock   string  `json:"to_block,omitempty" jsonschema:"last block: number or tag; latest when omitted"`
	BlockHash *string `json:"block_hash,omitempty" jsonschema:"one block by hash, instead of from_block and to_block"`
}

type noIn struct{}

// addTools registers the catalogue.
func (s *Server) addTools() {
	// rpc, the tool an agent calls most (and make bench measures), skips
	// the SDK's per-call decode-validate-encode-decode of its arguments
	// where it can (rawtool.go); the others take the SDK's typed path.
	addRaw(s, "rpc", false, s.rpc, rpcArgs)
	add(s, "get_balance", true, s.getBalance)
	add(s, "get_transaction", true, func(ctx context.Context, req *sdk.CallToolRequest, in hashIn) *sdk.CallToolResult {
		return s.byHash(req, "get_transaction", "eth_getTransactionByHash", in)
	})
	add(s, "get_receipt", true, func(ctx context.Context, req *sdk.CallToolRequest, in hashIn) *sdk.CallToolResult {
		return s.byHash(req, "get_receipt", "eth_getTransactionReceipt", in)
	})
	add(s, "get_block", true, s.getBlock)
	add(s, "call_contract", true, s.callContract)
	add(s, "get_logs", true, s.getLogs)
	add(s, "chain_info", true, s.chainInfo)
	add(s, "account", true, s.account)
}

// served is the tool result of a served call: the value as structured
// content (and its JSON as text), with the payment's meta.
func served(v any, meta sdk.Meta) *sdk.CallToolResult {
	raw, err := json.Marshal(v)
	if err != nil {
		return toolError("could not encode the result: " + err.Error())
	}
	res := &sdk.CallToolResult{StructuredContent: json.RawMessage(raw), Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}
	if len(meta) > 0 {
		res.Meta = meta
	}
	return res
}

// nodeError is the tool result of a call the node answered with an error
// (served and charged, as on /rpc: the node did the work), or that the
// gateway's parser refused (a.refused: no node saw it, nothing charged).
func nodeError(a answer, meta sdk.Meta) *sdk.CallToolResult {
	e := a.Error
	raw, _ := json.Marshal(map[string]any{"error": e})
	text := fmt.Sprintf("the node answered error %d: %s", e.Code, e.Message)
	if a.refused {
		text = fmt.Sprintf("the gateway refused the call, error %d: %s; nothing was charged", e.Code, e.Message)
	}
	res := &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(raw),
		Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if len(meta) > 0 {
		res.Meta = meta
	}
	return res
}

// one serves a single call and answers with its result as result.
func (s *Server) one(req *sdk.CallToolRequest, tool string, ch chains.Chain, c call, shape func(json.RawMessage) any) *sdk.CallToolResult {
	p := s.pay(req, tool, ch.ID, []call{c})
	if p.refused != nil {
		return p.refused
	}
	a := p.answers[0]
	if a.Error != nil {
		return nodeError(a, p.meta)
	}
	return served(shape(a.Result), p.meta)
}

func (s *Server) rpc(_ context.Context, req *sdk.CallToolRequest, in rpcIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	if !methodName.MatchString(in.Method) {
		return toolErrorf("method %q is not a JSON-RPC method name (e.g. eth_blockNumber)", clip(in.Method))
	}
	m := s.backend.Method(ch.ID, in.Method)
	if m.Denied != "" {
		return toolErrorf("%s is not served: %s", in.Method, m.Denied)
	}
	return s.one(req, "rpc", ch, call{in.Method, in.Params}, func(r json.RawMessage) any {
		return rpcOut{ChainID: ch.ID, Method: in.Method, Result: r}
	})
}

// rpcOut is rpc's result. Its fields are in the order of their names, so
// it encodes to the bytes the map {"chain_id", "method", "result"} did
// (json.Marshal sorts a map's keys), without the map.
type rpcOut struct {
	ChainID uint64          `json:"chain_id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
}

var methodName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*_[a-zA-Z0-9_]+$`)

func (s *Server) byHash(req *sdk.CallToolRequest, tool, method string, in hashIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	if bad := checkHash("hash", in.Hash, "a transaction hash"); bad != nil {
		return bad
	}
	return s.one(req, tool, ch, call{method, []any{in.Hash}}, func(r json.RawMessage) any {
		return map[string]any{"chain_id": ch.ID, "hash": in.Hash, strings.TrimPrefix(tool, "get_"): r}
	})
}

func (s *Server) getBlock(_ context.Context, req *sdk.CallToolRequest, in blockIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	c := call{"eth_getBlockByHash", []any{in.Block, in.FullTransactions}}
	if !isHash(in.Block) {
		b, err := blockRef(in.Block, true)
		if err != nil {
			return toolError("block: " + err.Error())
		}
		c = call{"eth_getBlockByNumber", []any{b.ref, in.FullTransactions}}
	}
	return s.one(req, "get_block", ch, c, func(r json.RawMessage) any {
		return map[string]any{"chain_id": ch.ID, "block": r}
	})
}

func (s *Server) getLogs(_ context.Context, req *sdk.CallToolRequest, in logsIn) *sdk.CallToolResult {
	ch, bad := s.chain(in.chainArg)
	if bad != nil {
		return bad
	}
	filter := map[string]any{}
	if in.Address != "" {
		if bad := checkAddress("address", in.Address, "an address"); bad != nil {
			return bad
		}
		filter["address"] = in.Address
	}
	if len(in.Topics) > 4 {
		return toolError("topics: at most 4 positions")
	}
	for i, t := range in.Topics {
		if err := checkTopic(t); err != nil {
			return toolErrorf("topics[%d]: %v", i, err)
		}
	}
	if in.Topics != nil {
		filter["topics"] = in.Topics
	}
	if in.BlockHash != nil {
		if in.FromBlock != "" || in.ToBlock != "" {
			return toolError("give block_hash or from_block/to_block, not both")
		}
		if bad := checkHash("block_hash", *in.BlockHash, "a block hash"); bad != nil {
			return bad
		}
		filter["blockHash"] = *in.BlockHash
	} else {
		from, err := blockRef(in.FromBlock, false)
		if err != nil {
			return toolError("from_block: " + err.Error())
		}
		to, err := blockRef(in.ToBlock, false)
		if err != nil {
			return toolError("to_block: " + err.Error())
		}
		// The method table's range limit, checked before anything is paid
		// when both ends are numbers (the gateway checks tags itself).
		if lo, hi := from.num, to.num; from.numbered && to.numbered {
			if hi < lo {
				return toolErrorf("to_block %d is below from_block %d", hi, lo)
			}
			if max := s.backend.Method(ch.ID, "eth_getLogs").MaxBlockRange; max > 0 && hi-lo+1 > max {
				return toolErrorf("a range of %d blocks; eth_getLogs takes at most %d on %s: split it", hi-lo+1, max, ch.Name)
			}
		}
		filter["fromBlock"], filter["toBlock"] = from.ref, to.ref
	}
	return s.one(req, "get_logs", ch, call{"eth_getLogs", []any{filter}}, func(r json.RawMessage) any {
		return map[string]any{"chain_id": ch.ID, "logs": r}
	})
}

func checkTopic(t any) error {
	switch v := t.(type) {
	case nil:
		return nil
	case string:
		if !isHash(v) {
			return fmt.Errorf("%q is not a topic: 0x followed by 64 hex digits", clip(v))
		}
		return nil
	case []any:
		for _, x := range v {
			if s, ok := x.(string); !ok || !isHash(s) {
				return fmt.Errorf("alternatives must be topics: 0x followed by 64 hex digits")
			}
		}
		return nil
	}
	return fmt.Errorf("a topic is a 0x string, null or an array of them")
}

func (s *Server) chainInfo(_ context.Context, _ *sdk.CallToolRequest, in chainArg) *sdk.CallToolResult {
	t := s.backend.Chains()
	list := t.All()
	if strings.TrimSpace(in.Chain) != "" {
		ch, bad := s.chain(in)
		if bad != nil {
			return bad
		}
		list = []chains.Chain{ch}
	}
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		info := map[string]any{"chain_id": c.ID, "name": c.Name, "display_name": c.Display, "testnet": c.Testnet,
			"currency":           map[string]any{"symbol": c.Currency.Symbol, "decimals": c.Currency.Decimals},
			"block_time_seconds": c.BlockTime.Seconds(), "rpc_path": "/rpc/" + c.Name, "default": c.ID == t.DefaultID()}
		if c.Explorer != "" {
			info["explorer"] = c.Explorer
		}
		if h := s.backend.Head(c.ID); h > 0 {
			info["latest_block"] = h
		}
		out = append(out, info)
	}
	return served(map[string]any{"chains": out}, nil)
}

// --- argument checks: wrong arguments are refused before anything is paid.

var (
	hexHash = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	hexData = regexp.MustCompile(`^0x([0-9a-fA-F]{2})*$`)
)

// isAddress: 0x and 40 hex digits, its EIP-55 checksum right when it is
// in mixed case (ethparse.Address, the one address reader).
func isAddress(s string) bool { _, err := ethparse.Address(s); return err == nil }
func isHash(s string) bool    { return hexHash.MatchString(s) }

// checkAddress is the tool error of an argument (field) that is not an
// address (what: how the error names it), nil when it is one.
func checkAddress(field, v, what string) *sdk.CallToolResult {
	if isAddress(v) {
		return nil
	}
	return toolErrorf("%s %q is not %s: 0x followed by 40 hex digits (in mixed case, with a right EIP-55 checksum)", field, clip(v), what)
}

// checkHash is checkAddress for 32-byte hashes.
func checkHash(field, v, what string) *sdk.CallToolResult {
	if isHash(v) {
		return nil
	}
	return toolErrorf("%s %q is not %s: 0x followed by 64 hex digits", field, clip(v), what)
}

// blockArg is a block argument as JSON-RPC takes it: a tag, or a number
// (ref as a 0x quantity, num the number itself, numbered set).
type blockArg struct {
	ref      string
	num      uint64
	numbered bool
}

// blockRef reads a block argument: a tag, or a number (decimal or 0x); ""
// is latest.
func blockRef(s string, pending bool) (blockArg, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return blockArg{ref: "latest"}, nil
	case "latest", "earliest", "safe", "finalized":
		return blockArg{ref: s}, nil
	case "pending":
		if pending {
			return blockArg{ref: s}, nil
		}
	}
	n, err := ethparse.Uint(s)
	if err != nil || !n.IsUint64() || (strings.HasPrefix(s, "0") && len(s) > 1 && !strings.HasPrefix(s, "0x")) {
		return blockArg{}, fmt.Errorf("%q is neither a block number nor a tag (latest, finalized, safe, earliest)", clip(s))
	}
	return blockArg{ref: "0x" + strconv.FormatUint(n.Uint64(), 16), num: n.Uint64(), numbered: true}, nil
}

// clip keeps an echoed argument short.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
