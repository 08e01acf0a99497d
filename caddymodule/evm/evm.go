// Package evm is the gateway's table of EVM JSON-RPC methods — everything
// the gateway decides about a method, in one place: whether it is served at
// all (what no public RPC serves is refused here, never sent to a node),
// whether the gateway answers it itself, whether a call may be replayed on
// another upstream, and the limits a call must keep. The core
// (caddymodule/core) reads it before metering, the relay when forwarding.
package evm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Method is what the gateway knows of one method.
type Method struct {
	// Denied, when set, is why the method is not served: the call is
	// answered locally with -32601 and never reaches an upstream.
	Denied string
	// Local, when set, answers a call without params from the chain's id
	// alone (free, no upstream).
	Local func(chainID uint64) json.RawMessage
	// NoRetry: a send — once an upstream may have received it, it is never
	// replayed on another (one ambiguous answer must not become several).
	// Such a call is never hedged either.
	NoRetry bool
	// NoHedge: a read that is not sent to a second upstream while the
	// first is slow (heavy calls: debug_*, trace_*; or an operator's
	// choice). Hedged reads are billed once either way.
	NoHedge bool
	// MaxBlockRange bounds eth_getLogs' fromBlock..toBlock.
	MaxBlockRange uint64
	// CreatesFilter: the result is a filter id that lives on the upstream
	// that created it. Sticky: params[0] is such an id, so the call must
	// go to that upstream and nowhere else.
	CreatesFilter, Sticky bool
	// Needs names the upstream capability the method needs ("debug",
	// "trace"): such calls go only to upstreams whose probe found it.
	Needs string
	// StateAt is the 1-based position of the block parameter of a read of
	// account state (0: the method reads no state at a block). A read
	// older than ArchiveWindow blocks needs an archive node.
	StateAt int
	// Weight is how many calls at the flat price one call of the method
	// counts as — in its price, the free tier, a bundle and the rate
	// limits alike (0 means 1). Every method weighs 1 unless the operator
	// weights it, so the original specification's flat price per call holds by default;
	// whole numbers keep every charge an exact multiple of the price.
	Weight uint32
	// MaxResponseBytes, when set, bounds the size of one call's result: a
	// larger answer is replaced by a -32040 error naming the limit, and
	// the call is not charged (the node is not paid for it either).
	MaxResponseBytes int64
	// Judge says how a registered node's answer to the method is checked
	// against a provider — and so whether a node may answer it at all: a
	// stranger answers only questions that can be judged (JudgeNone: the
	// configured providers answer).
	Judge Judge
}

// Judge is how a node's answer to a method is judged (docs/trust.md).
// The table's judge column:
//
//	judge        methods                                        a node answers
//	JudgeState   eth_getBalance, eth_getCode, eth_getStorageAt,  at any block: a tag or a number
//	             eth_getTransactionCount, eth_call,             above the finalized head is
//	             eth_getProof                                   pinned to that block's hash
//	                                                            (EIP-1898), so node and provider
//	                                                            answer about one block, reorg or not
//	JudgeBlock   eth_getBlockByNumber                           latest is pinned to the pool's head
//	                                                            number; the answer's own hash says
//	                                                            which block it describes
//	JudgeHead    eth_blockNumber                                compared with the providers' head,
//	                                                            within a lag tolerance
//	JudgeSend    eth_sendRawTransaction(Sync)                   after probation; the hash must be
//	                                                            keccak256 of the raw transaction
//	JudgeFinal   by-hash lookups, receipts, logs, blocks'       asked by hash or about final blocks;
//	             transactions and counts by number              judged whatever block the answer
//	                                                            names, whole (verify.Judge)
//	JudgeNone    gas price and fee methods (eth_gasPrice,       never: no deterministic answer, or
//	             eth_maxPriorityFeePerGas, eth_feeHistory,      one that lives on the upstream
//	             eth_blobBaseFee), gas estimates                (filters), or one honest clients
//	             (eth_estimateGas, eth_createAccessList),       give differently; providers answer
//	             pending, safe and
//	             finalized tags, filters, eth_simulateV1,
//	             debug_*, trace_*, txpool_*, node facts
//	             (web3_clientVersion, net_*, eth_syncing), any
//	             method the table does not know
type Judge uint8

const (
	JudgeNone Judge = iota
	JudgeFinal
	JudgeState
	JudgeBlock
	JudgeHead
	JudgeSend
)

func (j Judge) String() string {
	return [...]string{"none", "final", "state", "block", "head", "send"}[j]
}

// Units is what one call of the method counts as (its weight, at least 1).
func (m Method) Units() int {
	if m.Weight == 0 {
		return 1
	}
	return int(m.Weight)
}

// MaxWeight bounds an operator's weight: a batch of MaxBatch calls of the
// heaviest method must still fit the meter's integer arithmetic with room
// to spare.
const MaxWeight = 10_000

// Capabilities a method may need (Method.Needs).
const (
	NeedsDebug = "debug"
	NeedsTrace = "trace"
)

// ArchiveWindow is how far behind the head a full (non-archive) node still
// has state by default: geth keeps the last 128 blocks' state. Operators
// set their chain's with upstreams { archive_window }.
const ArchiveWindow = 128

// DefaultMaxLogsRange is the widest eth_getLogs range served in one call:
// one flat-priced call must not make a node scan a million blocks.
const DefaultMaxLogsRange = 10_000

// table holds the methods with anything to say; others are served as
// they are.
var table = map[string]Method{
	"eth_chainId":  {Local: func(id uint64) json.RawMessage { return quote("0x" + strconv.FormatUint(id, 16)) }},
	"net_version":  {Local: func(id uint64) json.RawMessage { return quote(strconv.FormatUint(id, 10)) }},
	"eth_accounts": {Local: func(uint64) json.RawMessage { return json.RawMessage(`[]`) }}, // a public node holds no accounts

	"eth_sendRawTransaction":     {NoRetry: true, Judge: JudgeSend},
	"eth_sendRawTransactionSync": {NoRetry: true, Judge: JudgeSend},

	"eth_getLogs": {MaxBlockRange: DefaultMaxLogsRange, Judge: JudgeFinal},

	"eth_getBalance":          {StateAt: 2, Judge: JudgeState},
	"eth_getCode":             {StateAt: 2, Judge: JudgeState},
	"eth_getTransactionCount": {StateAt: 2, Judge: JudgeState},
	"eth_getStorageAt":        {StateAt: 3, Judge: JudgeState},
	"eth_call":                {StateAt: 2, Judge: JudgeState},
	// Honest clients' gas estimates differ (each searches for the gas
	// limit its own way), and an access list carries its gasUsed: they are
	// the providers' (JudgeNone), never a reason to convict a node.
	"eth_estimateGas":      {StateAt: 2},
	"eth_createAccessList": {StateAt: 2},
	"eth_getProof":         {StateAt: 3, Judge: JudgeState},

	"eth_blockNumber":      {Judge: JudgeHead},
	"eth_getBlockByNumber": {Judge: JudgeBlock},

	"eth_getBlockByHash":                      {Judge: JudgeFinal},
	"eth_getBlockTransactionCountByHash":      {Judge: JudgeFinal},
	"eth_getBlockTransactionCountByNumber":    {Judge: JudgeFinal},
	"eth_getTransactionByHash":                {Judge: JudgeFinal},
	"eth_getTransactionReceipt":               {Judge: JudgeFinal},
	"eth_getTransactionByBlockHashAndIndex":   {Judge: JudgeFinal},
	"eth_getTransactionByBlockNumberAndIndex": {Judge: JudgeFinal},
	"eth_getBlockReceipts":                    {Judge: JudgeFinal},
	"eth_getUncleByBlockHashAndIndex":         {Judge: JudgeFinal},
	"eth_getUncleByBlockNumberAndIndex":       {Judge: JudgeFinal},
	"eth_getUncleCountByBlockHash":            {Judge: JudgeFinal},
	"eth_getUncleCountByBlockNumber":          {Judge: JudgeFinal},

	"eth_newFilter":                   {CreatesFilter: true},
	"eth_newBlockFilter":              {CreatesFilter: true},
	"eth_newPendingTransactionFilter": {CreatesFilter: true},
	"eth_getFilterChanges":            {Sticky: true},
	"eth_getFilterLogs":               {Sticky: true},
	"eth_uninstallFilter":             {Sticky: true},

	"eth_sendTransaction":       {Denied: "it needs an account unlocked on the node; sign locally and use eth_sendRawTransaction"},
	"eth_sign":                  {Denied: "nodes here hold no keys; sign locally"},
	"eth_signTransaction":       {Denied: "nodes here hold no keys; sign locally"},
	"eth_signTypedData":         {Denied: "nodes here hold no keys; sign locally"},
	"eth_signTypedData_v3":      {Denied: "nodes here hold no keys; sign locally"},
	"eth_signTypedData_v4":      {Denied: "nodes here hold no keys; sign locally"},
	"eth_subscribe":             {Denied: "subscriptions need a WebSocket; over HTTP poll with filters"},
	"eth_unsubscribe":           {Denied: "subscriptions need a WebSocket"},
	"eth_coinbase":              {Denied: "nodes here do not mine"},
	"eth_submitWork":            {Denied: "nodes here do not mine"},
	"eth_submitHashrate":        {Denied: "nodes here do not mine"},
	"debug_setHead":             {Denied: "it rewinds the node's chain"},
	"debug_startCPUProfile":     {Denied: "node administration"},
	"debug_writeMemProfile":     {Denied: "node administration"},
	"debug_setGCPercent":        {Denied: "node administration"},
	"debug_freeOSMemory":        {Denied: "node administration"},
	"debug_setBlockProfileRate": {Denied: "node administration"},
}

// deniedNamespaces are whole namespaces no public RPC serves: node
// administration, accounts and keys, mining and the consensus engine API.
var deniedNamespaces = map[string]string{
	"admin":    "node administration is not served",
	"personal": "nodes here hold no accounts or keys",
	"miner":    "nodes here do not mine",
	"engine":   "the consensus-layer engine API is not served",
	"clique":   "consensus signer administration is not served",
	// geth's testing_buildBlockV1 builds blocks from the caller's
	// transactions: a test harness, never a public method.
	"testing": "geth's testing namespace (block building for test harnesses) is not served",
}

// Lookup returns what the gateway knows of method.
func Lookup(method string) Method {
	if m, ok := table[method]; ok {
		return m
	}
	if ns, _, ok := strings.Cut(method, "_"); ok {
		if why, denied := deniedNamespaces[ns]; denied {
			return Method{Denied: why}
		}
		if ns == NeedsDebug || ns == NeedsTrace {
			return Method{Needs: ns, NoHedge: true} // heavy: a hedge would double the heaviest work
		}
	}
	return Method{}
}

func quote(s string) json.RawMessage { return strconv.AppendQuote(nil, s) }

// NeedsArchive reports whether a call reads account state older than
// window blocks behind head (the pool's best head; 0 when unknown, which
// judges nothing; a zero window is ArchiveWindow). Tags (latest, pending, safe, finalized) and
// blocks named by hash are not judged: the first is recent, the second
// cannot be placed without asking.
func NeedsArchive(method string, params json.RawMessage, head, window uint64) bool {
	if window == 0 {
		window = ArchiveWindow
	}
	at := Lookup(method).StateAt
	if at == 0 || head <= window {
		return false
	}
	var p []json.RawMessage
	if json.Unmarshal(params, &p) != nil || len(p) < at {
		return false
	}
	var s string
	if json.Unmarshal(p[at-1], &s) != nil {
		var obj struct {
			BlockNumber *string `json:"blockNumber"`
		}
		if json.Unmarshal(p[at-1], &obj) != nil || obj.BlockNumber == nil {
			return false
		}
		s = *obj.BlockNumber
	}
	n, err := ethparse.Quantity(s)
	return err == nil && n+window < head
}

// LogsSpan is how many blocks an eth_getLogs filter spans, with block tags
// resolved against head (the pool's best head; 0 when unknown). ok is false
// when the span cannot be judged (a blockHash filter, a toBlock below its
// fromBlock, or a tag while the head is unknown). err is set when the
// params are not one filter object or a block parameter is neither a tag
// nor a 64-bit quantity (a JSON number, a 0x-less string...): such a call
// is refused where a range limit applies, never sent on unjudged — an
// upstream may well read what the gateway could not (a fromBlock padded
// with zeros past 18 characters once skipped max_block_range this way).
func LogsSpan(params json.RawMessage, head uint64) (span uint64, ok bool, err error) {
	f, err := logsFilter(params)
	if err != nil {
		return 0, false, err
	}
	if f.blockHash {
		if f.from != nil || f.to != nil {
			return 0, false, errors.New("a filter names either blockHash or fromBlock/toBlock, not both")
		}
		return 0, false, nil
	}
	from, okF, err := blockNumber(f.from, head)
	if err != nil {
		return 0, false, fmt.Errorf("fromBlock: %w", err)
	}
	to, okT, err := blockNumber(f.to, head)
	if err != nil {
		return 0, false, fmt.Errorf("toBlock: %w", err)
	}
	if !okF || !okT || to < from {
		return 0, false, nil
	}
	if to-from == math.MaxUint64 { // 0x0..0xffffffffffffffff: saturate, never wrap to 0
		return math.MaxUint64, true, nil
	}
	return to - from + 1, true, nil
}

type filterRange struct {
	from, to  *string
	blockHash bool
}

// logsFilter reads eth_getLogs' params: one object whose fromBlock and
// toBlock are strings (or null, or absent). Each member name appears once
// and is spelled exactly: encoding/json (geth) matches names without
// regard to case and takes the last of duplicates, other clients take the
// first or match case, so {"fromBlock":"0x0","FROMBLOCK":"0x…"} would be
// one range to the gateway and another to the upstream.
func logsFilter(params json.RawMessage) (filterRange, error) {
	var out filterRange
	var p []json.RawMessage
	if json.Unmarshal(params, &p) != nil || len(p) != 1 {
		return out, errors.New("want one filter object: [{fromBlock, toBlock, ...}]")
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(p[0], &members) != nil || members == nil {
		return out, errors.New("the filter is not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(p[0]))
	seen := make(map[string]bool, len(members))
	_, _ = dec.Token() // '{': checked by the Unmarshal above
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out, errors.New("the filter is not an object")
		}
		name, _ := t.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return out, errors.New("the filter is not an object")
		}
		if seen[name] {
			return out, fmt.Errorf("the filter names %q twice", name)
		}
		seen[name] = true
		for _, exact := range [...]string{"fromBlock", "toBlock", "blockHash"} {
			if name != exact && strings.EqualFold(name, exact) {
				return out, fmt.Errorf("the filter member %q must be spelled %q", name, exact)
			}
		}
	}
	str := func(name string) (*string, error) {
		raw, ok := members[name]
		if !ok || string(raw) == "null" {
			return nil, nil
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, fmt.Errorf("%s must be a block tag or a hex quantity string", name)
		}
		return &v, nil
	}
	var err error
	if out.from, err = str("fromBlock"); err != nil {
		return out, err
	}
	if out.to, err = str("toBlock"); err != nil {
		return out, err
	}
	raw, ok := members["blockHash"]
	out.blockHash = ok && string(raw) != "null"
	return out, nil
}

// blockNumber resolves a block parameter; an absent one means latest. ok is
// false for a tag while the head is unknown; err for what is neither a tag
// nor a quantity.
func blockNumber(v *string, head uint64) (uint64, bool, error) {
	tag := "latest"
	if v != nil {
		tag = *v
	}
	switch tag {
	case "earliest":
		return 0, true, nil
	case "latest", "pending", "safe", "finalized":
		return head, head > 0, nil
	}
	n, err := ethparse.Quantity(tag)
	if err != nil {
		return 0, false, err
	}
	return n, true, nil
}

// Override is an operator's change to one method on one chain (the
// Caddyfile's chain { method … }): refuse it with a reason, serve a method
// the table refuses, bound eth_getLogs differently, never replay it, weight
// its price, or cap the size of its answers.
type Override struct {
	Method           string `json:"method"`
	Deny             string `json:"deny,omitempty"`
	Allow            bool   `json:"allow,omitempty"`
	MaxBlockRange    uint64 `json:"max_block_range,omitempty"`
	NoRetry          bool   `json:"no_retry,omitempty"`
	NoHedge          bool   `json:"no_hedge,omitempty"`
	Weight           uint32 `json:"weight,omitempty"`
	MaxResponseBytes int64  `json:"max_response_bytes,omitempty"`
}

// Table is the method table of one chain: the shared table with the
// chain's overrides applied. A nil *Table is the shared table.
type Table struct {
	over map[string]Method
}

// NewTable applies overrides to the shared table.
func NewTable(overrides []Override) (*Table, error) {
	if len(overrides) == 0 {
		return nil, nil
	}
	t := &Table{over: map[string]Method{}}
	for _, o := range overrides {
		if o.Method == "" || strings.ContainsAny(o.Method, " \t") {
			return nil, errors.New("evm: an override needs a method name")
		}
		if _, dup := t.over[o.Method]; dup {
			return nil, errors.New("evm: method " + o.Method + " overridden twice")
		}
		if o.Allow && o.Deny != "" {
			return nil, errors.New("evm: method " + o.Method + " both denied and allowed")
		}
		m := Lookup(o.Method)
		switch {
		case o.Deny != "":
			m.Denied = o.Deny
		case o.Allow:
			m.Denied = ""
		}
		if o.MaxBlockRange > 0 {
			if o.Method != "eth_getLogs" {
				return nil, errors.New("evm: max_block_range applies to eth_getLogs only")
			}
			m.MaxBlockRange = o.MaxBlockRange
		}
		m.NoRetry = m.NoRetry || o.NoRetry
		m.NoHedge = m.NoHedge || o.NoHedge
		if o.Weight > MaxWeight {
			return nil, fmt.Errorf("evm: method %s weight %d: at most %d", o.Method, o.Weight, MaxWeight)
		}
		if o.Weight > 0 {
			if m.Denied != "" {
				return nil, errors.New("evm: method " + o.Method + " is denied; a weight would never apply")
			}
			m.Weight = o.Weight
		}
		if o.MaxResponseBytes < 0 {
			return nil, errors.New("evm: method " + o.Method + " max_response_bytes must be positive")
		}
		if o.MaxResponseBytes > 0 {
			m.MaxResponseBytes = o.MaxResponseBytes
		}
		t.over[o.Method] = m
	}
	return t, nil
}

// Weights lists the methods this chain weights other than 1 (nil when
// every method costs the flat price): what the 402, service.json and a
// key's usage show so a caller can tell a call's price before making it.
func (t *Table) Weights() map[string]uint32 {
	if t == nil {
		return nil
	}
	var w map[string]uint32
	for name, m := range t.over {
		if m.Units() != 1 {
			if w == nil {
				w = map[string]uint32{}
			}
			w[name] = uint32(m.Units())
		}
	}
	return w
}

// Lookup returns what the gateway knows of method on this chain.
func (t *Table) Lookup(method string) Method {
	if t != nil {
		if m, ok := t.over[method]; ok {
			return m
		}
	}
	return Lookup(method)
}
