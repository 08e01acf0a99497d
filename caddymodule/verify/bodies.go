package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/lru"
	"github.com/ethereum/go-ethereum/consensus/misc/eip4844"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Block bodies proved by their roots (docs/trust.md "Proved before
// delivery"). A block's header, once its hash is the providers', commits
// to its transactions (transactionsRoot), its receipts (receiptsRoot) and
// its withdrawals (withdrawalsRoot). On a chain whose transactions
// go-ethereum decodes (ProveBodies), a node's transactions, receipts and
// a block's logs are proved against those roots before delivery: the
// consensus fields by the root (types.DeriveSha), the fields a client
// derives (hash, sender, block, index, gas used, contract address,
// effective gas price, log positions) by go-ethereum's own derivation
// from the proven transactions and header. A proven block is kept (an
// LRU per chain) so later answers about it need no other fetch.

// ProvableBodies are the methods whose answers a proven body settles
// (besides a block answer's own body).
var ProvableBodies = map[string]bool{
	"eth_getBlockReceipts": true, "eth_getTransactionReceipt": true, "eth_getTransactionByHash": true,
	"eth_getTransactionByBlockHashAndIndex": true, "eth_getTransactionByBlockNumberAndIndex": true,
	"eth_getLogs": true, // only with a blockHash filter (a range is sampled: see docs/trust.md)
}

// BodiesProvableByDefault is a chain's default for proving block bodies,
// by its family: chains whose transaction types are Ethereum's (mainnet
// and its testnets, local geth/anvil/hardhat chains) prove them; OP-stack
// chains (deposit transactions, type 0x7e), Arbitrum (types 0x64-0x6a)
// and Polygon PoS (state-sync transactions outside transactionsRoot) —
// and any chain the gateway does not know — are sampled: their honest
// bodies are not what go-ethereum derives, and proving them would convict
// honest nodes. A configuration overrides it per chain (prove_bodies).
func BodiesProvableByDefault(chainID uint64) bool {
	switch chainID {
	case 1, 11155111, 17000, 560048, 1337, 31337:
		return true
	}
	return false
}

// KnownForeignBodies names the family of a chain whose transactions
// go-ethereum does not decode ("" for others): provisioning warns when a
// configuration turns prove_bodies on for one.
func KnownForeignBodies(chainID uint64) string {
	switch chainID {
	case 10, 8453, 84532, 11155420:
		return "OP-stack (deposit transactions)"
	case 42161, 42170, 421614:
		return "Arbitrum (its own transaction types)"
	case 137, 80002, 80001:
		return "Polygon PoS (state-sync transactions)"
	}
	return ""
}

// Bounds on what a body proof reads. A block's transactions: calldata
// costs at least 4 gas a byte, so even a 60M-gas block holds at most
// ~15 MB of calldata (hex doubles it; nearly all real blocks are under
// 1 MiB). A block's receipts: log data costs 8 gas a byte, so a 60M-gas
// block's logs hold at most ~7.5 MB (15 MiB of hex). Past maxBodyBytes a
// body is not read: the part goes to a provider, unpaid, no conviction.
// bodyCacheSize bounds the proven blocks kept per chain (the blocks
// callers ask about repeatedly are the recent ones), and bodyCacheBytes
// their bytes: 64 blocks of 16 MiB would be a GiB a chain. A block's
// weight is the JSON the node gave for it (its body, its receipts): hex
// is twice the bytes go-ethereum keeps decoded, which pays for the
// decoded structures' own overhead. maxBodyFetchesPerPart bounds the
// bodies one part fetches from its node (each up to two answers of
// maxBodyBytes, and ~0.1 ms of CPU a transaction to prove): past it, the
// part's other body answers are sampled, as before proofs.
// maxRememberedAnswers bounds the answers remembered per proven block.
const (
	maxBodyBytes          = 16 << 20
	maxBodyTxs            = 1 << 16
	bodyCacheSize         = 64
	bodyCacheBytes        = 64 << 20
	maxBodyFetchesPerPart = 4
	maxRememberedAnswers  = 32
)

// maxTxsFor bounds a block's transactions by its (proven) header's gas:
// each uses at least 21,000 gas, less a refund of at most half of it
// (before London; a fifth since), so none uses under 10,500. A node's
// body of more transactions is not read (the CPU of decoding them is not
// spent); on Ethereum's rules no honest block has more.
func maxTxsFor(h *types.Header) uint64 {
	return h.GasUsed/10_500 + 1
}

// provenBlock is a block whose body is proven by its header, whose hash
// is the providers'.
type provenBlock struct {
	header      *types.Header
	hash        common.Hash
	txs         types.Transactions
	senders     []common.Address
	withdrawals types.Withdrawals
	size        uint64
	weight      atomic.Int64 // bytes it holds, for the cache's bound (bodyCacheBytes)

	mu       sync.Mutex
	receipts types.Receipts // nil until proven (they are fetched only when asked about)
	// answers are the answers already proved against this block (by
	// answerKey), and whether each was proved whole: the same answer again
	// (a caller asking the same block over and over, for one call's price)
	// costs a sha256 of it, not the comparison of every transaction.
	answers map[[32]byte]bool
}

// answerKey names one answer to one call: its verdict against a proven
// block depends on nothing else. sha256: a node must not find another
// answer with the key of a proved one.
func answerKey(method string, params, ans json.RawMessage) [32]byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write(params)
	h.Write([]byte{0})
	h.Write(ans)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// recall: the answer of key was proved against p (and whether whole).
func (p *provenBlock) recall(key [32]byte) (full, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	full, ok = p.answers[key]
	return full, ok
}

func (p *provenBlock) remembered(key [32]byte) bool {
	_, ok := p.recall(key)
	return ok
}

// remember keeps a proved answer's key (at most maxRememberedAnswers: past
// them the oldest are forgotten at once, each answer then proved again).
func (p *provenBlock) remember(key [32]byte, full bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answers == nil || len(p.answers) >= maxRememberedAnswers {
		p.answers = map[[32]byte]bool{}
	}
	p.answers[key] = full
}

// bodyCache is one chain's proven blocks, bounded by number and bytes.
type bodyCache struct {
	mu    sync.Mutex
	lru   lru.BasicLRU[common.Hash, *provenBlock]
	w     map[common.Hash]int64 // the weight each block was added with
	bytes int64
	max   int64
}

func newBodyCache(maxBytes int64) *bodyCache {
	return &bodyCache{lru: lru.NewBasicLRU[common.Hash, *provenBlock](bodyCacheSize + 1), w: map[common.Hash]int64{}, max: maxBytes}
}

func (c *bodyCache) Get(h common.Hash) (*provenBlock, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(h)
}

// Add keeps p (again: a block whose receipts were proven since weighs
// more), evicting the least recently used blocks past either bound; a
// block heavier than the whole bound is not kept.
func (c *bodyCache) Add(h common.Hash, p *provenBlock) {
	w := p.weight.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.w[h]; ok {
		c.lru.Remove(h)
		c.bytes -= old
		delete(c.w, h)
	}
	if w > c.max {
		return
	}
	for c.lru.Len() > 0 && (c.bytes+w > c.max || c.lru.Len() >= bodyCacheSize) {
		k, _, _ := c.lru.RemoveOldest()
		c.bytes -= c.w[k]
		delete(c.w, k)
	}
	c.lru.Add(h, p)
	c.w[h] = w
	c.bytes += w
}

func (c *bodyCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the weight of the blocks kept.
func (c *bodyCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// blockMemo is what was proved of one block answer (by the sha256 of its
// bytes, which alone decide it): when header, its header rehashes to the
// hash it claims (claimed, number: its members); when body, its body is
// the proven block's (full: every member covered). A caller asking the
// same block again and again, for one call's price each time, costs a
// sha256 of the node's identical answer, not the header's and every
// transaction's JSON decoded again.
type blockMemo struct {
	claimed, number    string
	header, body, full bool
}

// blockMemos are a chain's block answers proved (maxBlockMemos: ~100
// bytes each).
type blockMemos struct {
	mu  sync.Mutex
	lru lru.BasicLRU[[32]byte, blockMemo]
}

const maxBlockMemos = 1024

func (v *Verifier) blockMemosOf(chainID uint64) *blockMemos {
	m, _ := v.memos.LoadOrStore(chainID, &blockMemos{lru: lru.NewBasicLRU[[32]byte, blockMemo](maxBlockMemos)})
	return m.(*blockMemos)
}

func (m *blockMemos) get(k [32]byte) (blockMemo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Get(k)
}

func (m *blockMemos) put(k [32]byte, b blockMemo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lru.Add(k, b)
}

func (v *Verifier) bodiesOf(chainID uint64) *bodyCache {
	c, _ := v.bodies.LoadOrStore(chainID, newBodyCache(bodyCacheBytes))
	return c.(*bodyCache)
}

// ProvesBodies: block bodies on the chain are proved (Config.ProveBodies,
// else the chain's family default).
func (v *Verifier) ProvesBodies(chainID uint64) bool {
	if v == nil {
		return false
	}
	if on, ok := v.cfg.ProveBodies[chainID]; ok {
		return on
	}
	return BodiesProvableByDefault(chainID)
}

// chainConfig is go-ethereum's configuration for deriving a chain's
// receipt fields (its signer, the blob fee): the public chains' own, else
// the dev chains' with every fork through Prague (the dev chains'
// schedule; a chain with blob gas under other rules names its own above).
func chainConfig(chainID uint64) *params.ChainConfig {
	switch chainID {
	case 1:
		return params.MainnetChainConfig
	case 11155111:
		return params.SepoliaChainConfig
	case 560048:
		return params.HoodiChainConfig
	}
	cfg := *params.AllDevChainProtocolChanges
	cfg.ChainID = new(big.Int).SetUint64(chainID)
	cfg.OsakaTime = nil
	cfg.BPO1Time, cfg.BPO2Time, cfg.BPO3Time, cfg.BPO4Time, cfg.BPO5Time = nil, nil, nil, nil, nil
	cfg.AmsterdamTime = nil
	cfg.BogotaTime = nil
	return &cfg
}

// errNotProvable: the answer cannot be proved (no conviction).
var errNotProvable = errors.New("not provable")

// blockJSON is the part of a block answer the body proof reads.
type blockJSON struct {
	Transactions []json.RawMessage  `json:"transactions"`
	Uncles       []json.RawMessage  `json:"uncles"`
	Withdrawals  *types.Withdrawals `json:"withdrawals"`
	Size         *hexutil.Uint64    `json:"size"`
}

// decodeBody proves a full block answer (transactions as objects) against
// its own header: it returns the proven block, or why it is a lie. The
// header (h, its hash hash) must already be proven the providers'.
func decodeBody(chainID uint64, h *types.Header, hash common.Hash, raw json.RawMessage) (*provenBlock, string) {
	if len(raw) > maxBodyBytes {
		return nil, whyOversize
	}
	var b blockJSON
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, errNotProvable.Error() // a spelling go-ethereum refuses (a leading zero): not a lie
	}
	if len(b.Transactions) > maxBodyTxs || uint64(len(b.Transactions)) > maxTxsFor(h) {
		return nil, whyOversize
	}
	p := &provenBlock{header: h, hash: hash, txs: make(types.Transactions, len(b.Transactions)), senders: make([]common.Address, len(b.Transactions))}
	p.weight.Store(int64(len(raw)))
	// The signer of the block's own rules: a Frontier-era signature (a
	// high s) recovers under them and not under the latest signer.
	signer := types.MakeSigner(chainConfig(chainID), h.Number, h.Time)
	for i, raw := range b.Transactions {
		// A transaction go-ethereum does not decode, or whose signature
		// does not recover (below), is not proved a lie: an honest
		// client's spelling (r and s written as 32 bytes, with leading
		// zeros) or a chain's own transactions (an OP-stack deposit,
		// Polygon's unsigned state-sync transaction, on a chain turned on
		// by mistake) are such. The block is sampled, as before proofs.
		tx := new(types.Transaction)
		if err := tx.UnmarshalJSON(raw); err != nil {
			return nil, errNotProvable.Error()
		}
		if v, r, s := tx.RawSignatureValues(); v.Sign() == 0 && r.Sign() == 0 && s.Sign() == 0 {
			// Unsigned: no Ethereum transaction is; a chain's system
			// transaction (Polygon's state-sync) outside its root is.
			return nil, errNotProvable.Error()
		}
		p.txs[i] = tx
	}
	if types.DeriveSha(p.txs, trie.NewStackTrie(nil)) != h.TxHash {
		return nil, "transactions whose root is not the header's transactionsRoot"
	}
	// Senders last: recovering one is most of a body's CPU, spent only
	// on transactions the root proves (a body of made-up transactions
	// fails at the root first).
	for i, tx := range p.txs {
		from, err := types.Sender(signer, tx)
		if err != nil {
			return nil, errNotProvable.Error()
		}
		p.senders[i] = from
	}
	switch {
	case h.WithdrawalsHash != nil:
		if b.Withdrawals == nil {
			return nil, "a block without the withdrawals its header commits to"
		}
		if types.DeriveSha(*b.Withdrawals, trie.NewStackTrie(nil)) != *h.WithdrawalsHash {
			return nil, "withdrawals whose root is not the header's withdrawalsRoot"
		}
		p.withdrawals = *b.Withdrawals
	case b.Withdrawals != nil && len(*b.Withdrawals) > 0:
		return nil, "withdrawals in a block whose header has none"
	}
	if h.UncleHash != types.EmptyUncleHash {
		return nil, errNotProvable.Error() // uncles (before the merge) are not proved here
	}
	if len(b.Uncles) != 0 {
		return nil, "uncles in a block whose header has none"
	}
	p.size = types.NewBlockWithHeader(h).WithBody(types.Body{Transactions: p.txs, Withdrawals: p.withdrawals}).Size()
	return p, ""
}

// blockMembers are the members of a block answer the proofs cover.
var blockMembers = map[string]bool{
	"parentHash": true, "sha3Uncles": true, "miner": true, "stateRoot": true, "transactionsRoot": true, "receiptsRoot": true,
	"logsBloom": true, "difficulty": true, "number": true, "gasLimit": true, "gasUsed": true, "timestamp": true, "extraData": true,
	"mixHash": true, "nonce": true, "baseFeePerGas": true, "withdrawalsRoot": true, "blobGasUsed": true, "excessBlobGas": true,
	"parentBeaconBlockRoot": true, "requestsHash": true, "hash": true, "size": true, "transactions": true, "uncles": true,
	"withdrawals": true,
}

var txMembers = map[string]bool{
	"blockHash": true, "blockNumber": true, "blockTimestamp": true, "from": true, "gas": true, "gasPrice": true,
	"maxFeePerGas": true, "maxPriorityFeePerGas": true, "maxFeePerBlobGas": true, "hash": true, "input": true, "nonce": true,
	"to": true, "transactionIndex": true, "value": true, "type": true, "accessList": true, "chainId": true, "v": true, "r": true,
	"s": true, "yParity": true, "blobVersionedHashes": true, "authorizationList": true,
}

var receiptMembers = map[string]bool{
	"type": true, "root": true, "status": true, "cumulativeGasUsed": true, "logsBloom": true, "logs": true, "transactionHash": true,
	"contractAddress": true, "gasUsed": true, "effectiveGasPrice": true, "blobGasUsed": true, "blobGasPrice": true,
	"blockHash": true, "blockNumber": true, "transactionIndex": true, "from": true, "to": true,
}

var logMembers = map[string]bool{
	"address": true, "topics": true, "data": true, "blockNumber": true, "transactionHash": true, "transactionIndex": true,
	"blockHash": true, "blockTimestamp": true, "logIndex": true, "removed": true,
}

// covered: every member of obj is one the proof covers (an answer with a
// member it does not, such as totalDifficulty or a client's own field, is
// proved in what it says of the chain and still sampled for the rest).
func covered(obj json.RawMessage, known map[string]bool) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	for k := range m {
		if !known[k] {
			return false
		}
	}
	return true
}

// checkBlockBody compares a block answer whose header is proven with the
// proven body p: its transactions (hashes, or objects field by field),
// its size, uncles and withdrawals. why is "" when it is proved; full
// whether every member is covered.
func checkBlockBody(ans json.RawMessage, p *provenBlock) (why string, full bool) {
	var b blockJSON
	if json.Unmarshal(ans, &b) != nil {
		return "a block whose body does not decode", false
	}
	if len(b.Transactions) != len(p.txs) {
		return "a block with another number of transactions than its transactionsRoot proves", false
	}
	full = covered(ans, blockMembers)
	for i, raw := range b.Transactions {
		var h common.Hash
		if json.Unmarshal(raw, &h) == nil {
			if h != p.txs[i].Hash() {
				return "a transaction hash its transactionsRoot does not prove, at index " + strconv.Itoa(i), false
			}
			continue
		}
		w, f := checkTx(raw, p, i)
		if w != "" {
			return w, false
		}
		full = full && f
	}
	if b.Size == nil || uint64(*b.Size) != p.size {
		return "a block size that is not its body's", false
	}
	if len(b.Uncles) != 0 {
		return "uncles in a block whose header has none", false
	}
	if p.header.WithdrawalsHash != nil {
		if b.Withdrawals == nil || types.DeriveSha(*b.Withdrawals, trie.NewStackTrie(nil)) != *p.header.WithdrawalsHash {
			return "withdrawals whose root is not the header's withdrawalsRoot", false
		}
	} else if b.Withdrawals != nil && len(*b.Withdrawals) > 0 {
		return "withdrawals in a block whose header has none", false
	}
	return "", full
}

// txDerived are a transaction answer's fields a client derives.
type txDerived struct {
	Hash             *common.Hash    `json:"hash"`
	From             *common.Address `json:"from"`
	BlockHash        *common.Hash    `json:"blockHash"`
	BlockNumber      *hexutil.Big    `json:"blockNumber"`
	BlockTimestamp   *hexutil.Uint64 `json:"blockTimestamp"`
	TransactionIndex *hexutil.Uint64 `json:"transactionIndex"`
	GasPrice         *hexutil.Big    `json:"gasPrice"`
}

// checkTx compares a transaction answer with the proven transaction at
// index i of p: its consensus fields (decoded, they hash to the proven
// hash) and its derived ones.
func checkTx(raw json.RawMessage, p *provenBlock, i int) (why string, full bool) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalJSON(raw); err != nil {
		return errNotProvable.Error(), false // a spelling go-ethereum refuses: sampled
	}
	want := p.txs[i]
	if tx.Hash() != want.Hash() {
		return "a transaction whose fields are not the proven transaction's, at index " + strconv.Itoa(i), false
	}
	var d txDerived
	if json.Unmarshal(raw, &d) != nil {
		return "a transaction whose derived fields do not decode", false
	}
	switch {
	case d.Hash == nil || *d.Hash != want.Hash():
		return "a transaction hash that is not its fields' keccak256", false
	case d.From == nil || *d.From != p.senders[i]:
		return "a transaction sender that is not its signature's", false
	case d.BlockHash == nil || *d.BlockHash != p.hash:
		return "a transaction of another block", false
	case d.BlockNumber == nil || (*big.Int)(d.BlockNumber).Cmp(p.header.Number) != 0:
		return "a transaction of another block number", false
	case d.TransactionIndex == nil || uint64(*d.TransactionIndex) != uint64(i):
		return "a transaction at another index", false
	case d.BlockTimestamp != nil && uint64(*d.BlockTimestamp) != p.header.Time:
		return "a transaction of another block time", false
	case d.GasPrice == nil || (*big.Int)(d.GasPrice).Cmp(effectiveGasPrice(want, p.header.BaseFee)) != 0:
		return "a gas price that is not the transaction's effective one", false
	}
	return ownMembers(raw, want)
}

// txDerivedMembers are checked by checkTx itself (gasPrice: the effective
// one, on every type).
var txDerivedMembers = map[string]bool{"blockHash": true, "blockNumber": true, "blockTimestamp": true, "from": true,
	"transactionIndex": true, "gasPrice": true, "hash": true}

// ownMembers compares the transaction members of an answer with the
// proven transaction's, as go-ethereum writes it: its decoder reads only
// its type's members, so another type's (a legacy transaction's
// maxFeePerGas, accessList, yParity, a 1559's blobVersionedHashes) or one
// it ignores (a legacy transaction's chainId) would pass the root unread.
//   - a chainId other than the one the signature commits to, a yParity
//     other than the signature's parity, or a non-empty list (accessList,
//     blobVersionedHashes, authorizationList) on a transaction whose type
//     has none is a lie: the transaction itself says otherwise;
//   - an empty such list, or maxFeePerGas / maxPriorityFeePerGas equal to
//     a legacy transaction's gasPrice, are other clients' spellings;
//   - any other member the proven transaction has no value for leaves the
//     answer not proved whole (sampled).
func ownMembers(raw json.RawMessage, want *types.Transaction) (why string, full bool) {
	canon, err := want.MarshalJSON()
	if err != nil {
		return "", false
	}
	var got, w map[string]json.RawMessage
	if json.Unmarshal(raw, &got) != nil || json.Unmarshal(canon, &w) != nil {
		return "", false
	}
	full = covered(raw, txMembers)
	for k, v := range got {
		if txDerivedMembers[k] || string(v) == "null" {
			continue
		}
		wv, ok := w[k]
		if ok && string(wv) != "null" { // go-ethereum writes another type's members as null
			if k == "chainId" && !sameQuantity(v, want.ChainId()) {
				return "a chainId that is not the one its signature commits to", false
			}
			continue
		}
		switch k {
		case "accessList", "blobVersionedHashes", "authorizationList":
			var l []json.RawMessage
			if json.Unmarshal(v, &l) != nil || len(l) > 0 {
				return "a " + k + " on a transaction whose type has none", false
			}
		case "yParity":
			v0, _, _ := want.RawSignatureValues()
			parity := new(big.Int).Set(v0)
			if want.Protected() && want.Type() == types.LegacyTxType {
				parity.Sub(parity, new(big.Int).Mul(want.ChainId(), big.NewInt(2)))
				parity.Sub(parity, big.NewInt(35))
			} else if want.Type() == types.LegacyTxType {
				parity.Sub(parity, big.NewInt(27))
			}
			if !sameQuantity(v, parity) {
				return "a yParity that is not its signature's", false
			}
		case "maxFeePerGas", "maxPriorityFeePerGas":
			if want.Type() > types.AccessListTxType || !sameQuantity(v, want.GasPrice()) {
				full = false
			}
		default:
			full = false
		}
	}
	return "", full
}

// sameQuantity: the JSON quantity raw is x.
func sameQuantity(raw json.RawMessage, x *big.Int) bool {
	var q hexutil.Big
	return x != nil && json.Unmarshal(raw, &q) == nil && q.ToInt().Cmp(x) == 0
}

// effectiveGasPrice is what a client answers as a mined transaction's
// gasPrice: its fee cap capped at base fee plus tip (EIP-1559), else its
// gas price.
func effectiveGasPrice(tx *types.Transaction, baseFee *big.Int) *big.Int {
	if baseFee == nil || tx.Type() == types.LegacyTxType || tx.Type() == types.AccessListTxType {
		return tx.GasPrice()
	}
	tip := new(big.Int).Add(tx.GasTipCap(), baseFee)
	if tip.Cmp(tx.GasFeeCap()) > 0 {
		return tx.GasFeeCap()
	}
	return tip
}

// proveReceipts proves a block's receipts answer (eth_getBlockReceipts)
// against p's receiptsRoot and fills p.receipts with them, their derived
// fields as go-ethereum derives them. why is "" when proven.
func proveReceipts(chainID uint64, p *provenBlock, raw json.RawMessage) string {
	if len(raw) > maxBodyBytes {
		return whyOversize
	}
	var rs types.Receipts
	if err := json.Unmarshal(raw, &rs); err != nil {
		return errNotProvable.Error() // a spelling go-ethereum refuses: sampled
	}
	if len(rs) != len(p.txs) {
		return "another number of receipts than the block's transactions"
	}
	if types.DeriveSha(rs, trie.NewStackTrie(nil)) != p.header.ReceiptHash {
		return "receipts whose root is not the header's receiptsRoot"
	}
	// Only the consensus fields are kept: the derived ones are go-ethereum's.
	proven := make(types.Receipts, len(rs))
	for i, r := range rs {
		logs := make([]*types.Log, len(r.Logs))
		for j, l := range r.Logs {
			logs[j] = &types.Log{Address: l.Address, Topics: l.Topics, Data: l.Data}
		}
		proven[i] = &types.Receipt{Type: r.Type, PostState: r.PostState, Status: r.Status, CumulativeGasUsed: r.CumulativeGasUsed,
			Bloom: r.Bloom, Logs: logs, BlobGasUsed: blobGasUsed(p.txs[i])}
	}
	cfg := chainConfig(chainID)
	var blobPrice *big.Int
	if p.header.ExcessBlobGas != nil {
		blobPrice = eip4844.CalcBlobFee(cfg, p.header)
	}
	if err := proven.DeriveFields(cfg, p.hash, p.header.Number.Uint64(), p.header.Time, p.header.BaseFee, blobPrice, p.txs); err != nil {
		return "receipts whose fields do not derive: " + err.Error()
	}
	p.mu.Lock()
	p.receipts = proven
	p.mu.Unlock()
	p.weight.Add(int64(len(raw)))
	return ""
}

func blobGasUsed(tx *types.Transaction) uint64 {
	if tx.Type() == types.BlobTxType {
		return tx.BlobGas()
	}
	return 0
}

// receiptExtra are a receipt answer's members types.Receipt does not read.
type receiptExtra struct {
	From *common.Address `json:"from"`
	To   json.RawMessage `json:"to"`
}

// checkReceipt compares one receipt answer with the proven receipt at
// index i of p. why is "" when it is proved; full whether every member is
// covered.
func checkReceipt(raw json.RawMessage, p *provenBlock, i int) (why string, full bool) {
	var r types.Receipt
	if err := r.UnmarshalJSON(raw); err != nil {
		return errNotProvable.Error(), false // a spelling go-ethereum refuses: sampled
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "a receipt that is not an object", false
	}
	for _, k := range []string{"blockHash", "blockNumber", "transactionIndex", "from", "to", "contractAddress", "effectiveGasPrice", "type"} {
		if _, ok := m[k]; !ok {
			return whyOmitted, false
		}
	}
	p.mu.Lock()
	want := p.receipts[i]
	p.mu.Unlock()
	tx := p.txs[i]
	var x receiptExtra
	_ = json.Unmarshal(raw, &x)
	var to *common.Address
	if len(x.To) > 0 && string(x.To) != "null" {
		to = new(common.Address)
		if json.Unmarshal(x.To, to) != nil {
			return "a receipt whose to does not decode", false
		}
	}
	switch {
	case r.Type != want.Type || r.Status != want.Status || !bytes.Equal(r.PostState, want.PostState):
		return "a receipt status its receiptsRoot does not prove", false
	case r.CumulativeGasUsed != want.CumulativeGasUsed:
		return "a cumulativeGasUsed its receiptsRoot does not prove", false
	case r.Bloom != want.Bloom:
		return "a logsBloom its receiptsRoot does not prove", false
	case len(r.Logs) != len(want.Logs):
		return "another number of logs than its receiptsRoot proves", false
	case r.TxHash != want.TxHash:
		return "a receipt of another transaction than the block's at its index", false
	case r.GasUsed != want.GasUsed:
		return "a gasUsed that is not its cumulativeGasUsed's step", false
	case r.ContractAddress != want.ContractAddress:
		return "a contractAddress that is not its creator's", false
	case r.EffectiveGasPrice == nil || r.EffectiveGasPrice.Cmp(want.EffectiveGasPrice) != 0:
		return "an effectiveGasPrice that is not its transaction's", false
	case r.BlobGasUsed != want.BlobGasUsed:
		return "a blobGasUsed that is not its transaction's", false
	case !sameBig(r.BlobGasPrice, want.BlobGasPrice) && want.BlobGasUsed > 0:
		return "a blobGasPrice that is not its block's", false
	case r.BlockHash != p.hash || r.BlockNumber == nil || r.BlockNumber.Cmp(p.header.Number) != 0 || r.TransactionIndex != uint(i):
		return "a receipt of another block or index", false
	case x.From == nil || *x.From != p.senders[i]:
		return "a receipt sender that is not its transaction's", false
	case !sameAddr(to, tx.To()):
		return "a receipt recipient that is not its transaction's", false
	}
	for j, l := range r.Logs {
		if w := checkLog(l, want.Logs[j]); w != "" {
			return w, false
		}
	}
	full = covered(raw, receiptMembers)
	// A blob price on a receipt without blob gas: go-ethereum writes none,
	// another client may write its block's; not proved either way.
	if want.BlobGasPrice == nil && r.BlobGasPrice != nil {
		full = false
	}
	var logs []json.RawMessage
	_ = json.Unmarshal(m["logs"], &logs)
	for j, l := range logs {
		if j < len(want.Logs) && !logTimeOK(l, want.Logs[j]) {
			return "a log of another block time", false
		}
		full = full && covered(l, logMembers)
	}
	return "", full
}

// logTimeOK: a log's blockTimestamp, when written, is its block's (the
// decoded log cannot tell a written 0x0 from none).
func logTimeOK(raw json.RawMessage, want *types.Log) bool {
	var x struct {
		T *hexutil.Uint64 `json:"blockTimestamp"`
	}
	return json.Unmarshal(raw, &x) == nil && (x.T == nil || uint64(*x.T) == want.BlockTimestamp)
}

// whyOmitted: a receipt without a member every client writes (rerouted,
// not convicted: the omission is judged by the sampled rules).
const whyOmitted = "a receipt without a member every client writes"

func checkLog(l, want *types.Log) string {
	switch {
	case l.Address != want.Address || !bytes.Equal(l.Data, want.Data) || len(l.Topics) != len(want.Topics):
		return "a log its receiptsRoot does not prove"
	case l.BlockHash != want.BlockHash || l.BlockNumber != want.BlockNumber || l.TxHash != want.TxHash ||
		l.TxIndex != want.TxIndex || l.Index != want.Index || l.Removed:
		return "a log at another position than its block's"
	case l.BlockTimestamp != 0 && l.BlockTimestamp != want.BlockTimestamp:
		return "a log of another block time"
	}
	for k := range l.Topics {
		if l.Topics[k] != want.Topics[k] {
			return "a log topic its receiptsRoot does not prove"
		}
	}
	return ""
}

func sameBig(a, b *big.Int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Cmp(b) == 0
}

func sameAddr(a, b *common.Address) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// logFilter is an eth_getLogs filter by block hash.
type logFilter struct {
	BlockHash *common.Hash      `json:"blockHash"`
	Address   json.RawMessage   `json:"address"`
	Topics    []json.RawMessage `json:"topics"`
	FromBlock json.RawMessage   `json:"fromBlock"`
	ToBlock   json.RawMessage   `json:"toBlock"`
}

// blockHashFilter reads an eth_getLogs call's filter: the block hash and a
// matcher of logs, or !ok when it is not a blockHash filter.
func blockHashFilter(params json.RawMessage) (common.Hash, func(*types.Log) bool, bool) {
	var ps []logFilter
	if json.Unmarshal(params, &ps) != nil || len(ps) != 1 || ps[0].BlockHash == nil || len(ps[0].FromBlock) > 0 || len(ps[0].ToBlock) > 0 {
		return common.Hash{}, nil, false
	}
	f := ps[0]
	addrs, ok := oneOrMany[common.Address](f.Address)
	if !ok || len(f.Topics) > 4 {
		return common.Hash{}, nil, false
	}
	topics := make([][]common.Hash, len(f.Topics))
	for i, t := range f.Topics {
		if topics[i], ok = oneOrMany[common.Hash](t); !ok {
			return common.Hash{}, nil, false
		}
	}
	match := func(l *types.Log) bool {
		if len(addrs) > 0 && !contains(addrs, l.Address) {
			return false
		}
		if len(topics) > len(l.Topics) {
			return false
		}
		for i, ts := range topics {
			if len(ts) > 0 && !contains(ts, l.Topics[i]) {
				return false
			}
		}
		return true
	}
	return *f.BlockHash, match, true
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// oneOrMany reads null, one value or a list of values.
func oneOrMany[T any](raw json.RawMessage) ([]T, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var one T
	if json.Unmarshal(raw, &one) == nil {
		return []T{one}, true
	}
	var many []T
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

// checkLogs compares an eth_getLogs answer for one block with the proven
// receipts' logs that match the filter.
func checkLogs(ans json.RawMessage, p *provenBlock, match func(*types.Log) bool) (why string, full bool) {
	var got []json.RawMessage
	if json.Unmarshal(ans, &got) != nil {
		return "logs that do not decode", false
	}
	p.mu.Lock()
	rs := p.receipts
	p.mu.Unlock()
	var want []*types.Log
	for _, r := range rs {
		for _, l := range r.Logs {
			if match(l) {
				want = append(want, l)
			}
		}
	}
	if len(got) != len(want) {
		return "another number of logs than the block's receipts prove", false
	}
	full = true
	for i, raw := range got {
		var l types.Log
		if err := l.UnmarshalJSON(raw); err != nil {
			return errNotProvable.Error(), false // a spelling go-ethereum refuses: sampled
		}
		if w := checkLog(&l, want[i]); w != "" {
			return w, false
		}
		if !logTimeOK(raw, want[i]) {
			return "a log of another block time", false
		}
		full = full && covered(raw, logMembers)
	}
	return "", full
}

// hashParam reads a 32-byte hash parameter.
func hashParam(raw json.RawMessage) (common.Hash, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || len(s) != 66 {
		return common.Hash{}, false
	}
	b, err := hexutil.Decode(s)
	if err != nil {
		return common.Hash{}, false
	}
	return common.BytesToHash(b), true
}

// numberParam reads a block number parameter ("earliest" is 0); a tag is
// !ok.
func numberParam(raw json.RawMessage) (uint64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	if s == "earliest" {
		return 0, true
	}
	n, err := ethparse.Quantity(s)
	return n, err == nil
}

// bodyQuestion is what a body answer is about: the block (by hash, or by
// number with the hash the answer names) and whether receipts are needed.
type bodyQuestion struct {
	hash     common.Hash
	number   uint64
	byNumber bool
	receipts bool
	// named: the block is the one the answer names, not one the call
	// asked for (a transaction or receipt by its hash): it must be the
	// providers' at its height, not only a block they know.
	named bool
}

// questionOf reads which block a body answer k is about. ok false: the
// answer names no block that can be proved here (a pending transaction,
// a tag, a logs range).
func questionOf(c *jsonrpc.Item, ans json.RawMessage) (bodyQuestion, bool) {
	var params []json.RawMessage
	_ = json.Unmarshal(c.Params, &params)
	var q bodyQuestion
	named := func(obj json.RawMessage) (common.Hash, bool) {
		var x struct {
			BlockHash *common.Hash `json:"blockHash"`
		}
		if json.Unmarshal(obj, &x) != nil || x.BlockHash == nil {
			return common.Hash{}, false
		}
		return *x.BlockHash, true
	}
	switch c.Method {
	case "eth_getBlockReceipts":
		q.receipts = true
		if len(params) != 1 {
			return q, false
		}
		if h, ok := hashParam(params[0]); ok {
			q.hash = h
			return q, true
		}
		var obj struct {
			BlockHash *common.Hash `json:"blockHash"`
		}
		if json.Unmarshal(params[0], &obj) == nil && obj.BlockHash != nil {
			q.hash = *obj.BlockHash
			return q, true
		}
		n, ok := numberParam(params[0])
		if !ok {
			return q, false
		}
		var rs []json.RawMessage
		if json.Unmarshal(ans, &rs) != nil || len(rs) == 0 {
			return q, false
		}
		h, ok := named(rs[0])
		q.hash, q.number, q.byNumber = h, n, true
		return q, ok
	case "eth_getTransactionReceipt", "eth_getTransactionByHash":
		q.receipts = c.Method == "eth_getTransactionReceipt"
		h, ok := named(ans)
		q.hash, q.named = h, true
		return q, ok && len(params) == 1
	case "eth_getTransactionByBlockHashAndIndex":
		if len(params) != 2 {
			return q, false
		}
		h, ok := hashParam(params[0])
		q.hash = h
		return q, ok
	case "eth_getTransactionByBlockNumberAndIndex":
		if len(params) != 2 {
			return q, false
		}
		n, ok := numberParam(params[0])
		if !ok {
			return q, false
		}
		h, ok := named(ans)
		q.hash, q.number, q.byNumber = h, n, true
		return q, ok
	case "eth_getLogs":
		h, _, ok := blockHashFilter(c.Params)
		q.hash, q.receipts = h, true
		return q, ok
	}
	return q, false
}
