package cache

import (
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// Cacheability rules.
//
// A call is cached only if its answer can never change, on any upstream.
// That is a function of the method, its params and the pool's finalized
// head (passed in by the caller), plus, for a few methods, the answer
// itself. The rules, by class:
//
//	static     eth_chainId, net_version. Fixed per chain (the key carries the
//	           chain id; health probes already reject upstreams on the wrong
//	           chain). Params must be absent, null or [].
//	           Deliberately NOT cached: web3_clientVersion (changes when a node
//	           is upgraded and differs between upstreams), net_listening,
//	           net_peerCount, eth_syncing, eth_blockNumber, eth_gasPrice, fee
//	           and mempool methods (they move with every block).
//	txHash     eth_getTransactionByHash, eth_getTransactionReceipt. A
//	           transaction hash does not pin a block: until the including
//	           block is final a reorg can drop the transaction or move it to
//	           another block (changing blockHash, blockNumber, index, logs,
//	           gasUsed…). So the answer is stored only if it says the
//	           transaction was mined at or below the finalized head
//	           (blockNumber ≤ finalized); pending transactions (blockNumber
//	           null) and null answers ("not found yet") are not.
//	blockHash  eth_getBlockByHash, eth_getBlockTransactionCountByHash,
//	           eth_getTransactionByBlockHashAndIndex,
//	           eth_getUncleByBlockHashAndIndex, eth_getUncleCountByBlockHash.
//	           A block hash fixes the block's contents, canonical or not, so
//	           any non-null answer is final, even for the newest block (which
//	           is what clients following the head ask for). A null answer
//	           (block unknown to that upstream yet) is not.
//	blockRef   reads at a block given by number, tag or EIP-1898 object:
//	           eth_getBlockByNumber, eth_getBlockReceipts,
//	           eth_getTransactionByBlockNumberAndIndex,
//	           eth_getBlockTransactionCountByNumber,
//	           eth_getUncleByBlockNumberAndIndex,
//	           eth_getUncleCountByBlockNumber (block at params[0]); eth_call,
//	           eth_getBalance, eth_getCode, eth_getTransactionCount (params[1]);
//	           eth_getStorageAt, eth_getProof (params[2]). Cached when the block
//	           is a number ≤ finalized ("earliest" counts as 0) or a hash
//	           (bare or {"blockHash"}). Never for latest, pending, safe,
//	           finalized, or a missing block parameter (which means latest).
//	logs       eth_getLogs. Cached with {"blockHash"} (and no from/to), or with
//	           fromBlock and toBlock both present and both numbers ≤ finalized
//	           (a missing bound means latest). An empty answer [] is not
//	           stored: some clients answer a range beyond their own head with
//	           [] instead of an error, and a lagging upstream would then
//	           poison the entry forever (eRPC ignores empty results by
//	           default for the same reason).
//
// For every class: JSON-RPC errors and null results are never stored, and
// params must be a JSON array with a canonical form (see canon.go). Calls of
// any other method are forwarded and never cached.
//
// Why the finalized head and not "safe": safe blocks can still be reorged
// (rarely, but the cache would keep the wrong answer forever). The caller
// must pass a head that the serving upstreams have reached; the pool's
// finalized head fits, since unhealthy (lagging) upstreams are not served
// from. Zero (unknown) is fine: only genesis and hash-pinned calls are
// cached then.

type class uint8

const (
	classStatic class = iota + 1
	classTxHash
	classBlockHash
	classBlockRef
	classLogs
)

type rule struct {
	class class
	ref   int // classBlockRef: position of the block parameter
	index int // position of a quantity index to normalise, or -1
}

var rules = map[string]rule{
	"eth_chainId": {class: classStatic, index: -1},
	"net_version": {class: classStatic, index: -1},

	"eth_getTransactionByHash":  {class: classTxHash, index: -1},
	"eth_getTransactionReceipt": {class: classTxHash, index: -1},

	"eth_getBlockByHash":                    {class: classBlockHash, index: -1},
	"eth_getBlockTransactionCountByHash":    {class: classBlockHash, index: -1},
	"eth_getTransactionByBlockHashAndIndex": {class: classBlockHash, index: 1},
	"eth_getUncleByBlockHashAndIndex":       {class: classBlockHash, index: 1},
	"eth_getUncleCountByBlockHash":          {class: classBlockHash, index: -1},

	"eth_getBlockByNumber":                    {class: classBlockRef, ref: 0, index: -1},
	"eth_getBlockReceipts":                    {class: classBlockRef, ref: 0, index: -1},
	"eth_getTransactionByBlockNumberAndIndex": {class: classBlockRef, ref: 0, index: 1},
	"eth_getBlockTransactionCountByNumber":    {class: classBlockRef, ref: 0, index: -1},
	"eth_getUncleByBlockNumberAndIndex":       {class: classBlockRef, ref: 0, index: 1},
	"eth_getUncleCountByBlockNumber":          {class: classBlockRef, ref: 0, index: -1},
	"eth_call":                                {class: classBlockRef, ref: 1, index: -1},
	"eth_getBalance":                          {class: classBlockRef, ref: 1, index: -1},
	"eth_getCode":                             {class: classBlockRef, ref: 1, index: -1},
	"eth_getTransactionCount":                 {class: classBlockRef, ref: 1, index: -1},
	"eth_getStorageAt":                        {class: classBlockRef, ref: 2, index: -1},
	"eth_getProof":                            {class: classBlockRef, ref: 2, index: -1},

	"eth_getLogs": {class: classLogs, index: -1},
}

// plan is what the rules concluded about a call from its method and params.
type plan struct {
	class  class
	pinned bool   // the answer does not depend on finality (static, or block named by hash)
	block  uint64 // when !pinned: the highest block number the call reads
}

// admits reports whether the call's blocks are final at head finalized.
func (p *plan) admits(finalized uint64) bool { return p.pinned || p.block <= finalized }

// analyze applies the rules to a call's method and params. It returns the
// normalised params tree the key is made of. ok is false when the call can
// never be cached, whatever the finalized head.
func analyze(it *jsonrpc.Item) (p plan, params node, ok bool) {
	if it.Err != nil {
		return plan{}, node{}, false
	}
	r, known := rules[it.Method]
	if !known {
		return plan{}, node{}, false
	}
	p.class = r.class
	if r.class == classStatic {
		// No params, null and [] all mean "no arguments"; anything else is
		// not a call these methods take.
		if len(it.Params) > 0 {
			n, err := parseCanonical(it.Params)
			if err != nil || !(n.kind == kindNull || (n.kind == kindArray && len(n.elems) == 0)) {
				return plan{}, node{}, false
			}
		}
		p.pinned = true
		return p, node{kind: kindArray}, true
	}
	if len(it.Params) == 0 {
		return plan{}, node{}, false
	}
	params, err := parseCanonical(it.Params)
	if err != nil || params.kind != kindArray || len(params.elems) == 0 {
		return plan{}, node{}, false
	}
	args := params.elems
	if r.index >= 0 && r.index < len(args) {
		normQuantity(&args[r.index])
	}
	switch r.class {
	case classTxHash, classBlockHash:
		if args[0].kind != kindString || !isHash(args[0].text) {
			return plan{}, node{}, false
		}
		// Block-hash answers are pinned; tx-hash answers wait for the
		// result check in storable.
		p.pinned = true
	case classBlockRef:
		if r.ref >= len(args) {
			return plan{}, node{}, false // block omitted: latest
		}
		if !p.pinRef(blockRefParam(&args[r.ref])) {
			return plan{}, node{}, false
		}
	case classLogs:
		if !p.logsFilter(&args[0]) {
			return plan{}, node{}, false
		}
	}
	return p, params, true
}

// pinRef records a block reference in the plan; false if it can never be
// cached.
func (p *plan) pinRef(ref blockRef) bool {
	switch ref.kind {
	case refHash:
		p.pinned = true
	case refNumber:
		p.block = max(p.block, ref.num)
	default:
		return false
	}
	return true
}

// logsFilter checks an eth_getLogs filter object.
func (p *plan) logsFilter(f *node) bool {
	if f.kind != kindObject {
		return false
	}
	var from, to, hash *node
	for i := range f.members {
		switch m := &f.members[i]; m.key {
		case "fromBlock":
			from = &m.val
		case "toBlock":
			to = &m.val
		case "blockHash":
			hash = &m.val
		}
	}
	if hash != nil {
		if from != nil || to != nil || hash.kind != kindString || !isHash(hash.text) {
			return false
		}
		p.pinned = true
		return true
	}
	if from == nil || to == nil {
		return false
	}
	for _, b := range [...]*node{from, to} {
		ref := blockRefString(b)
		if ref.kind != refNumber || !p.pinRef(ref) {
			return false
		}
	}
	return true
}

// Cacheable reports whether the call it, on chain, may be answered from the
// cache when the pool's finalized head is finalized, and if so its key.
// Call it before forwarding; a miss is then forwarded and its answer
// offered to Storable (or Cache.Store).
func Cacheable(chain uint64, it *jsonrpc.Item, finalized uint64) (Key, bool) {
	p, params, ok := analyze(it)
	if !ok || !p.admits(finalized) {
		return Key{}, false
	}
	return makeKey(chain, it.Method, &params), true
}

// Block is the highest block number the call reads, or 0 when the call is
// pinned by hash or static (or not cacheable at all).
func Block(it *jsonrpc.Item) uint64 {
	p, _, ok := analyze(it)
	if !ok || p.pinned {
		return 0
	}
	return p.block
}

// Storable reports whether resp, the upstream's answer to it, may be kept:
// it must be cacheable (at the finalized head as it is now, which may have
// moved since Cacheable) and not an error or null, and pass its method's
// result check (see the rule table above). Size limits are the Cache's.
func Storable(it *jsonrpc.Item, resp *jsonrpc.Response, finalized uint64) bool {
	p, _, ok := analyze(it)
	return ok && p.storable(resp, finalized)
}

func (p *plan) storable(resp *jsonrpc.Response, finalized uint64) bool {
	if resp == nil || resp.Error != nil || !p.admits(finalized) {
		return false
	}
	r := trimSpace(resp.Result)
	if len(r) == 0 || string(r) == "null" {
		return false
	}
	switch p.class {
	case classTxHash:
		n, ok := resultBlockNumber(r)
		return ok && n <= finalized
	case classLogs:
		return r[0] == '[' && len(trimSpace(r[1:])) > 0 && trimSpace(r[1:])[0] != ']'
	}
	return true
}
