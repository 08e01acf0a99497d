package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Proofs instead of sampling (docs/trust.md "Proved
// before delivery"). Some answers can be checked completely from one
// block hash a provider gave, with no provider asked the same question:
//
//   - an account's balance, nonce and code, and a storage slot: the node is
//     asked for eth_getProof at the same pinned block, and the EIP-1186
//     proof is verified (trie.VerifyProof) against the state root of that
//     block's header, which comes from the providers (the head poll's
//     headers, else one provider header per block, cached);
//   - a block's header: the header fields rehash (types.Header.Hash) to the
//     hash the answer claims, and that hash is the one asked for (by hash)
//     or the providers' at that height (by number);
//   - a block's body, on a chain whose transactions go-ethereum decodes:
//     its transactions, receipts and logs by the header's roots
//     (bodies.go).
//
// Every node answer to those methods is proved before it is delivered; an
// answer whose proof fails, or which is not what its proof proves, is
// never delivered (the part goes to a provider) and convicts the node at
// once. A node that cannot prove (an error: pruned state) is not convicted;
// its part goes to a provider, unpaid.

// ProvableState are the state reads an EIP-1186 proof settles.
var ProvableState = map[string]bool{
	"eth_getBalance": true, "eth_getTransactionCount": true, "eth_getCode": true, "eth_getStorageAt": true,
}

// ChainView is what the providers say about a chain's recent blocks
// (caddymodule/trust.Head): hashes by height, the state roots of the
// headers it fetched, and whether the providers' headers rehash as
// go-ethereum's do.
type ChainView interface {
	HashAt(n uint64) (string, bool)
	StateRoot(hash string) (common.Hash, bool)
	HeadersRehash() (rehash, known bool)
}

// Proof outcomes (the metric's outcome label).
const (
	ProofProved   = "proved"
	ProofRerouted = "rerouted"
	ProofLie      = "lie"
)

// Why a part goes to a provider instead (Prove's answer).
const (
	WhyUnproven  = "a node answer it could not prove"
	WhyDisproved = "a node answer its proof does not prove"
)

// headerCacheSize bounds the headers kept per chain (hash → state root,
// final height → hash): a few hours of blocks on a fast chain.
const headerCacheSize = 4096

// maxHeaderFetchesPerPart bounds the provider header fetches one part's
// proofs may start (Prove): a batch of reads at many distinct old blocks
// would otherwise send a burst of header fetches to the providers, one per
// block, at once. Past it a provable answer is not proved here: the part
// goes to a provider (unpaid, no conviction), as when no provider says the
// state root. Headers already cached, or being fetched for another part,
// cost nothing.
const maxHeaderFetchesPerPart = 8

// fetchBudget is what is left of a part's header fetches (on Prove's
// context).
type fetchBudget struct{ left atomic.Int32 }

type fetchBudgetKey struct{}

// takeFetch spends one of ctx's part's header fetches; false when none is
// left (no budget on ctx: unbounded).
func takeFetch(ctx context.Context) bool {
	b, _ := ctx.Value(fetchBudgetKey{}).(*fetchBudget)
	return b == nil || b.left.Add(-1) >= 0
}

// recentHeaderTTL is how long the providers' hash at a height that is not
// final, learnt from one provider header by number, is taken as the
// providers' canonical block there: the head poll's own period (its view
// is as old at worst). A reorg may replace the block meanwhile; after it
// the height is asked again.
const recentHeaderTTL = time.Second

// recentHash is the providers' hash at a height that is not final, and
// when it was learnt.
type recentHash struct {
	hash common.Hash
	at   time.Time
}

// headers is one chain's cache of provider headers: one fetch per block.
type headers struct {
	mu       sync.Mutex
	roots    map[common.Hash]common.Hash // block hash → state root
	byNumber map[uint64]common.Hash      // final heights only: immutable
	recent   map[uint64]recentHash       // other heights, for recentHeaderTTL
	inflight map[string]*sync.WaitGroup  // one provider fetch per block at a time
	// rehash: the providers' headers rehash as go-ethereum's do (known
	// from the first header fetched here), for before the head poll says.
	rehash, rehashKnown bool
	// Fetches counts provider header fetches (the bench's "provider calls
	// per node-served call").
	Fetches atomic.Int64
}

func (v *Verifier) headersOf(chainID uint64) *headers {
	h, _ := v.headers.LoadOrStore(chainID, &headers{roots: map[common.Hash]common.Hash{}, byNumber: map[uint64]common.Hash{},
		recent: map[uint64]recentHash{}, inflight: map[string]*sync.WaitGroup{}})
	return h.(*headers)
}

// HeaderFetches is how many headers the verifier asked providers for on a
// chain (for tests and the bench).
func (v *Verifier) HeaderFetches(chainID uint64) int64 {
	if v == nil {
		return 0
	}
	return v.headersOf(chainID).Fetches.Load()
}

// providerHeader is a provider's header of a block (by hash, or by number
// when hash is empty): its hash and state root. A block the provider does
// not have is !ok. Concurrent askers of one block share one fetch.
func (hs *headers) providerHeader(ctx context.Context, pool *upstream.Pool, hash common.Hash, number uint64, final bool) (common.Hash, common.Hash, bool) {
	key := hash.Hex()
	if hash == (common.Hash{}) {
		key = "n" + strconv.FormatUint(number, 10)
	}
	byNumber := hash == (common.Hash{})
	for {
		hs.mu.Lock()
		if byNumber {
			hash = hs.atHeight(number, final)
		}
		if root, ok := hs.roots[hash]; ok && hash != (common.Hash{}) {
			hs.mu.Unlock()
			return hash, root, true
		}
		wg, busy := hs.inflight[key]
		if !busy {
			if !takeFetch(ctx) {
				hs.mu.Unlock()
				return common.Hash{}, common.Hash{}, false // the part's fetches are spent: not proved here
			}
			wg = new(sync.WaitGroup)
			wg.Add(1)
			hs.inflight[key] = wg
			hs.mu.Unlock()
			break
		}
		hs.mu.Unlock()
		wg.Wait() // another call fetches this block: use its answer
		hs.mu.Lock()
		_, done := hs.roots[hash]
		if !done && byNumber {
			// Any hash the other fetch learnt: the provider said. (One
			// learnt while the height was not final is asked again, at
			// the top, for a final question.)
			done = hs.atHeight(number, false) != (common.Hash{})
		}
		hs.mu.Unlock()
		if !done {
			return common.Hash{}, common.Hash{}, false // the provider could not say
		}
	}
	defer func() {
		hs.mu.Lock()
		wg := hs.inflight[key]
		delete(hs.inflight, key)
		hs.mu.Unlock()
		wg.Done()
	}()
	method, params := "eth_getBlockByHash", `["`+hash.Hex()+`",false]`
	if byNumber {
		method, params = "eth_getBlockByNumber", `["`+hexutil.EncodeUint64(number)+`",false]`
	}
	hs.Fetches.Add(1)
	metrics.ProofHeaders.WithLabelValues(map[bool]string{true: "number", false: "hash"}[byNumber]).Inc()
	r, ok := askProvider(ctx, pool, method, params)
	if !ok || r.Response.Error != nil || isNull(r.Result) {
		return common.Hash{}, common.Hash{}, false
	}
	var b struct {
		Hash      common.Hash `json:"hash"`
		StateRoot common.Hash `json:"stateRoot"`
		Number    string      `json:"number"`
	}
	if json.Unmarshal(r.Result, &b) != nil || b.Hash == (common.Hash{}) {
		return common.Hash{}, common.Hash{}, false
	}
	n, err := ethparse.Quantity(b.Number)
	if err != nil || (!byNumber && b.Hash != hash) || (byNumber && n != number) {
		return common.Hash{}, common.Hash{}, false
	}
	rehash := headerHashes(r.Result) == headerTrue
	hs.mu.Lock()
	hs.rehash, hs.rehashKnown = rehash, true
	if len(hs.roots) >= headerCacheSize {
		for k := range hs.roots { // any: the map's order is random enough for a bound
			delete(hs.roots, k)
			if len(hs.roots) < headerCacheSize/2 {
				break
			}
		}
	}
	hs.roots[b.Hash] = b.StateRoot
	switch {
	case final:
		if len(hs.byNumber) >= headerCacheSize {
			clear(hs.byNumber)
		}
		hs.byNumber[n] = b.Hash
	case byNumber:
		if len(hs.recent) >= headerCacheSize {
			clear(hs.recent)
		}
		hs.recent[n] = recentHash{b.Hash, time.Now()}
	}
	hs.mu.Unlock()
	return b.Hash, b.StateRoot, true
}

// atHeight is the providers' hash at height n this cache holds (final, or
// learnt within recentHeaderTTL), else the zero hash. For a final
// question (final) only a hash learnt when n was final counts: one learnt
// before may have been replaced by a reorg since (n was not final then),
// and a final height's hash convicts. The caller holds mu.
func (hs *headers) atHeight(n uint64, final bool) common.Hash {
	if h, ok := hs.byNumber[n]; ok {
		return h
	}
	if r, ok := hs.recent[n]; ok && !final && time.Since(r.at) < recentHeaderTTL {
		return r.hash
	}
	return common.Hash{}
}

// canonicalAt is the providers' hash of their block at height n: the head
// poll's (view), else one provider header by number (cached: for good at
// a final height, for recentHeaderTTL at another). !ok: no provider said.
func (v *Verifier) canonicalAt(ctx context.Context, j *Job, view ChainView, n uint64, final bool) (common.Hash, bool) {
	if h, ok := view.HashAt(n); ok {
		return common.HexToHash(h), true
	}
	h, _, ok := v.headersOf(j.ChainID).providerHeader(ctx, j.Pool, common.Hash{}, n, final)
	return h, ok
}

// Prove checks, before delivery, the answers of a node-served part that
// can be proved (ProvableState, block headers, and on a chain that proves
// them block bodies: ProvableBodies, bodies.go). It returns "" when every
// such answer was proved (j.Proved marks them: the sampled check does not
// ask a provider about them again), or why the part must go to a provider
// instead: WhyDisproved (the node is convicted here, at its first lie) or
// WhyUnproven (the node could not prove: not convicted). In a part that
// holds a send or is NoReroute (never sent twice) the answers not
// proved are replaced in j.Replies by an error, and "" is returned with
// j.Withhold set: nothing unproved reaches the caller, and the part earns
// the node nothing.
func (v *Verifier) Prove(ctx context.Context, j *Job, view ChainView) string {
	if v == nil || j.Pins == nil || j.Node.Kind != upstream.KindNode {
		return ""
	}
	var state, blocks, bodies []int
	bodiesOn := v.ProvesBodies(j.ChainID)
	for k := range j.Calls {
		if k >= len(j.Replies) || k >= len(j.Pins) {
			break
		}
		r := &j.Replies[k]
		if r.Err != nil || r.Response.Error != nil || IsNothing(r.Result) {
			continue // Screen's: no value to prove
		}
		switch {
		case ProvableState[j.Calls[k].Method] && (j.Pins[k].Judge == evm.JudgeState || j.Pins[k].Judge == evm.JudgeFinal):
			state = append(state, k)
		case j.Calls[k].Method == "eth_getBlockByNumber" || j.Calls[k].Method == "eth_getBlockByHash":
			if rehash, known := view.HeadersRehash(); rehash || !known {
				blocks = append(blocks, k) // unknown yet: proveBlock learns it from a provider header
			}
		case bodiesOn && ProvableBodies[j.Calls[k].Method]:
			bodies = append(bodies, k)
		}
	}
	if len(state) == 0 && len(blocks) == 0 && len(bodies) == 0 {
		return ""
	}
	budget := new(fetchBudget)
	budget.left.Store(maxHeaderFetchesPerPart)
	ctx = context.WithValue(ctx, fetchBudgetKey{}, budget)
	bodyBudget := new(fetchBudget)
	bodyBudget.left.Store(maxBodyFetchesPerPart)
	ctx = context.WithValue(ctx, bodyFetchBudgetKey{}, bodyBudget)
	out := make([]string, len(j.Calls)) // per call: "" not provable, else an outcome
	whole := make([]bool, len(j.Calls)) // a body answer proved in every member (bodies.go)
	lied := false
	judgeBody := func(k int, vd bodyVerdict) {
		if vd.outcome == "" {
			return // not provable here (a block keeps its header's outcome): sampled
		}
		out[k], whole[k] = vd.outcome, vd.full
		if vd.outcome == ProofLie {
			lied = true
			v.Convict(*j, &j.Calls[k], j.Pins[k], AnswerOf(j.Replies[k]), vd.truth, vd.by, vd.why)
		}
	}
	if len(state) > 0 {
		lied = v.proveState(ctx, j, view, state, out)
	}
	for _, k := range blocks {
		if lied {
			break
		}
		o, truth, why := v.proveBlock(ctx, j, view, k)
		if o == "" {
			continue // a chain whose headers do not rehash: sampled
		}
		out[k] = o
		if o == ProofLie {
			lied = true
			if len(truth) == 0 {
				truth = headerEvidence(j.Replies[k].Result)
			}
			v.Convict(*j, &j.Calls[k], j.Pins[k], AnswerOf(j.Replies[k]), truth, "header hash", why)
			continue
		}
		if o == ProofProved && bodiesOn {
			judgeBody(k, v.proveBlockBody(ctx, j, view, k))
		}
	}
	for _, k := range bodies {
		if lied {
			break
		}
		judgeBody(k, v.proveBodyAnswer(ctx, j, view, k))
	}
	j.Proved = make([]bool, len(j.Calls))
	unproven := false
	for k, o := range out {
		if o == "" {
			continue
		}
		// A state read is proved whole. A block's or a body answer's proof
		// covers the members it knows: one with a member it does not
		// (totalDifficulty, a client's own field), or a block on a chain
		// whose bodies are sampled (only its header proved), is still
		// judged by sampling, so it is not marked proved (a sampled check
		// would skip it).
		j.Proved[k] = o == ProofProved && (ProvableState[j.Calls[k].Method] || whole[k])
		unproven = unproven || o != ProofProved
	}
	// "proved" counts node answers proved and delivered. When another
	// answer of the part was not proved, the whole part goes to a provider
	// (below), so its proved answers were not delivered either: they count
	// as rerouted. Only a part that is never rerouted (a send's) delivers
	// them.
	delivered := !unproven || j.NoReroute || hasSendPin(j.Pins)
	for k, o := range out {
		if o == ProofProved && !delivered {
			o = ProofRerouted
		}
		if o != "" {
			metrics.Proofs.WithLabelValues(jsonrpc.MetricLabel(j.Calls[k].Method), o).Inc()
		}
	}
	if !unproven {
		return ""
	}
	if j.NoReroute || hasSendPin(j.Pins) {
		// Never rerouted: what is not proved is not delivered either.
		j.Replies = append([]jsonrpc.Reply(nil), j.Replies...)
		for k, o := range out {
			if o != "" && o != ProofProved {
				j.Replies[k].Result = nil
				j.Replies[k].Response.Error = &jsonrpc.Error{Code: -32603, Message: "the node's answer could not be proved; not charged"}
			}
		}
		j.Withhold = true
		return ""
	}
	if lied {
		return WhyDisproved
	}
	return WhyUnproven
}

func hasSendPin(pins []Pin) bool {
	for _, p := range pins {
		if p.Judge == evm.JudgeSend {
			return true
		}
	}
	return false
}

// stateQuestion is one provable state read, as the proof asks it.
type stateQuestion struct {
	k     int
	addr  common.Address
	slot  *common.Hash // eth_getStorageAt's
	block common.Hash
	root  common.Hash
	ok    bool // the block's state root is known
}

// proveState asks the node for the proofs of the state reads idx (one
// batch: one round trip) while the state roots are looked up, and judges
// each answer by its proof. It fills out and reports whether the node lied
// (convicted).
func (v *Verifier) proveState(ctx context.Context, j *Job, view ChainView, idx []int, out []string) bool {
	hs := v.headersOf(j.ChainID)
	qs := make([]stateQuestion, 0, len(idx))
	var asks []jsonrpc.Item
	for _, k := range idx {
		q, ok := v.question(ctx, j, view, hs, k)
		if !ok {
			out[k] = ProofRerouted
			continue
		}
		slots := "[]"
		if q.slot != nil {
			slots = `["` + q.slot.Hex() + `"]`
		}
		asks = append(asks, jsonrpc.Item{Method: "eth_getProof", ID: json.RawMessage(strconv.Itoa(len(qs))),
			Params: json.RawMessage(`["` + strings.ToLower(q.addr.Hex()) + `",` + slots + `,{"blockHash":"` + q.block.Hex() + `"}]`)})
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return false
	}
	// The roots: the head poll's headers, else one provider header per
	// block, fetched while the node prepares its proofs.
	var wg sync.WaitGroup
	for i := range qs {
		if root, ok := view.StateRoot(qs[i].block.Hex()); ok {
			qs[i].root, qs[i].ok = root, true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, root, ok := hs.providerHeader(ctx, j.Pool, qs[i].block, 0, false)
			qs[i].root, qs[i].ok = root, ok
		}()
	}
	proofs := v.askNode(ctx, j, asks)
	wg.Wait()
	for i, q := range qs {
		if proofs == nil || i >= len(proofs) || proofs[i].Err != nil || proofs[i].Response.Error != nil || IsNothing(proofs[i].Result) || !q.ok {
			out[q.k] = ProofRerouted // no proof (pruned state, an error) or no root: not a lie
			continue
		}
		truth, why := judgeByProof(j.Calls[q.k].Method, q, proofs[i].Result, j.Replies[q.k].Result)
		if why == whyOversize {
			out[q.k] = ProofRerouted // more than any honest proof: not read, not a lie
			continue
		}
		if why == "" {
			out[q.k] = ProofProved
			continue
		}
		out[q.k] = ProofLie
		v.Convict(*j, &j.Calls[q.k], j.Pins[q.k], AnswerOf(j.Replies[q.k]), proofEvidence(q, truth, proofs[i].Result), "eth_getProof", why)
		return true
	}
	return false
}

// proofEvidence is what a lie is shown against: the value the proof
// proves (null when the proof itself fails), the block and its state root
// from the providers, and the node's own proof, so anyone can verify it
// again.
func proofEvidence(q stateQuestion, proven, proof json.RawMessage) json.RawMessage {
	if len(proven) == 0 {
		proven = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Proven    json.RawMessage `json:"proven"`
		BlockHash common.Hash     `json:"blockHash"`
		StateRoot common.Hash     `json:"stateRoot"`
		NodeProof json.RawMessage `json:"nodeProof"`
	}{proven, q.block, q.root, proof})
	return b
}

// question reads a pinned state call: the account, the slot, and the
// block hash it is about (the pin's hash, or the hash of a final height
// from the providers).
func (v *Verifier) question(ctx context.Context, j *Job, view ChainView, hs *headers, k int) (stateQuestion, bool) {
	c := &j.Calls[k]
	q := stateQuestion{k: k}
	var params []json.RawMessage
	at := evm.Lookup(c.Method).StateAt
	if json.Unmarshal(c.Params, &params) != nil || len(params) != at {
		return q, false // the pin always names the block
	}
	var addr string
	if json.Unmarshal(params[0], &addr) != nil {
		return q, false
	}
	a, err := ethparse.Address(addr)
	if err != nil {
		return q, false
	}
	q.addr = a
	if c.Method == "eth_getStorageAt" {
		var s string
		if json.Unmarshal(params[1], &s) != nil {
			return q, false
		}
		n, err := ethparse.BigQuantity(s)
		if err != nil || n.BitLen() > 256 {
			return q, false
		}
		slot := common.BigToHash(n)
		q.slot = &slot
	}
	var obj struct {
		BlockHash   *common.Hash `json:"blockHash"`
		BlockNumber *string      `json:"blockNumber"`
	}
	var tag string
	isObj := json.Unmarshal(params[at-1], &obj) == nil
	if isObj && obj.BlockHash == nil && obj.BlockNumber != nil {
		tag = *obj.BlockNumber // EIP-1898 {"blockNumber"}: a number like any
	}
	switch {
	case isObj && obj.BlockHash != nil:
		q.block = *obj.BlockHash
	case tag != "" || json.Unmarshal(params[at-1], &tag) == nil:
		n, err := ethparse.Quantity(tag)
		if tag == "earliest" {
			n, err = 0, nil
		}
		if err != nil || j.Pins[k].Judge != evm.JudgeFinal {
			return q, false
		}
		if h, ok := view.HashAt(n); ok {
			q.block = common.HexToHash(h)
			break
		}
		// Final by the pin's rule (at or below the finalized head); kept
		// for good only when final with the judge's margin too, as every
		// other by-number header: the pin and the finalized head are read
		// at different moments, and a hash kept for good at a height a
		// reorg may still replace would convict the honest node answering
		// from the block that replaced it (onProvidersChain).
		final := j.Finalized > 0 && n+reorgMargin <= j.Finalized
		h, _, ok := hs.providerHeader(ctx, j.Pool, common.Hash{}, n, final)
		if !ok {
			return q, false
		}
		q.block = h
	default:
		return q, false
	}
	return q, true
}

// askNode sends the proof questions to the node that answered (one
// request, no retry elsewhere: only this node's proof proves its answer).
func (v *Verifier) askNode(ctx context.Context, j *Job, asks []jsonrpc.Item) []jsonrpc.Reply {
	body, err := jsonrpc.EncodeUpstream(asks)
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	res, err := j.Pool.Forward(cctx, body, upstream.ForwardOptions{Only: j.Node.Name, MaxAttempts: 1, NoHedge: true})
	if err != nil || res.Upstream.Name != j.Node.Name {
		return nil
	}
	r, _ := jsonrpc.MatchReplies(asks, res.Body)
	return r
}

// accountProof is the part of an eth_getProof answer that is checked; the
// answer's own balance, nonce and hashes are not read: the trie's leaf
// says what they are.
type accountProof struct {
	AccountProof []hexutil.Bytes `json:"accountProof"`
	StorageProof []struct {
		Proof []hexutil.Bytes `json:"proof"`
	} `json:"storageProof"`
}

// Bounds on a node's eth_getProof answer, checked before it is decoded
// and hashed (a node must not make the gateway hash megabytes per call): a
// path to a 32-byte key in a hexary trie has at most 65 nodes of at most
// 532 bytes (a full branch), so an honest proof of an account and one slot
// is under 150 KiB of JSON. Past these the proof is not read; the part goes
// to a provider (no conviction: the node's value is then judged by the
// provider's answer, as any rerouted answer is).
const (
	maxProofBytes = 256 << 10
	maxProofNodes = 128
)

// whyOversize is judgeByProof's answer for a proof past the bounds.
const whyOversize = "a proof larger than any trie path"

// judgeByProof verifies a node's proof against the block's state root and
// compares the node's answer with what it proves. why is "" when the
// answer is proved, whyOversize when the proof is past the bounds; truth
// is the proven value.
func judgeByProof(method string, q stateQuestion, proof, answer json.RawMessage) (truth json.RawMessage, why string) {
	if len(proof) > maxProofBytes {
		return nil, whyOversize
	}
	var p accountProof
	if json.Unmarshal(proof, &p) != nil {
		return nil, "an eth_getProof answer that is not a proof"
	}
	if len(p.AccountProof) > maxProofNodes || (len(p.StorageProof) == 1 && len(p.StorageProof[0].Proof) > maxProofNodes) {
		return nil, whyOversize
	}
	acct, err := provenAccount(q.root, q.addr, p.AccountProof)
	if err != nil {
		return nil, "its account proof does not verify against the block's state root: " + err.Error()
	}
	var want string
	switch method {
	case "eth_getBalance":
		want = hexutil.EncodeBig(acct.Balance.ToBig())
	case "eth_getTransactionCount":
		want = hexutil.EncodeUint64(acct.Nonce)
	case "eth_getCode":
		var code hexutil.Bytes
		if json.Unmarshal(answer, &code) != nil {
			return json.RawMessage(strconv.Quote(common.BytesToHash(acct.CodeHash).Hex())), "code that is not hex"
		}
		if !bytes.Equal(crypto.Keccak256(code), acct.CodeHash) {
			return json.RawMessage(`{"codeHash":"` + common.BytesToHash(acct.CodeHash).Hex() + `"}`), "code whose keccak256 is not the proven code hash"
		}
		return nil, ""
	case "eth_getStorageAt":
		var val common.Hash
		if acct.Root != types.EmptyRootHash {
			if len(p.StorageProof) != 1 {
				return nil, "a storage proof of another number of slots"
			}
			v, err := provenSlot(acct.Root, *q.slot, p.StorageProof[0].Proof)
			if err != nil {
				return nil, "its storage proof does not verify against the account's storage root: " + err.Error()
			}
			val = v
		}
		// else the proven account has no storage (or does not exist):
		// every slot is zero, whatever storage proof the client gives —
		// geth [], reth ["0x80"] (the empty trie's node), old Besu no
		// entry for a missing account — and none is read.
		want = val.Hex()
		var got hexutil.Bytes
		if json.Unmarshal(answer, &got) != nil || len(got) > 32 || common.BytesToHash(got) != val {
			return json.RawMessage(strconv.Quote(want)), "a storage value its proof does not prove"
		}
		return nil, ""
	}
	var got string
	if json.Unmarshal(answer, &got) != nil || !strings.EqualFold(got, want) {
		return json.RawMessage(strconv.Quote(want)), "a value its proof does not prove"
	}
	return nil, ""
}

// provenAccount verifies an account proof: the leaf at keccak256(address)
// under root, or a proof that there is none (an empty account).
func provenAccount(root common.Hash, addr common.Address, nodes []hexutil.Bytes) (*types.StateAccount, error) {
	val, err := trie.VerifyProof(root, crypto.Keccak256(addr.Bytes()), proofDB(nodes))
	if err != nil {
		return nil, err
	}
	if len(val) == 0 {
		return types.NewEmptyStateAccount(), nil
	}
	var acct types.StateAccount
	if err := rlp.DecodeBytes(val, &acct); err != nil {
		return nil, err
	}
	return &acct, nil
}

// provenSlot verifies a storage proof: the value at keccak256(slot) under
// the account's storage root (zero if absent).
func provenSlot(root, slot common.Hash, nodes []hexutil.Bytes) (common.Hash, error) {
	if root == types.EmptyRootHash && len(nodes) == 0 {
		return common.Hash{}, nil // no storage at all
	}
	val, err := trie.VerifyProof(root, crypto.Keccak256(slot.Bytes()), proofDB(nodes))
	if err != nil || len(val) == 0 {
		return common.Hash{}, err
	}
	_, content, _, err := rlp.Split(val)
	if err != nil || len(content) > 32 {
		return common.Hash{}, errBadSlot
	}
	return common.BytesToHash(content), nil
}

var errBadSlot = &proofError{"a storage leaf that is not a 32-byte value"}

type proofError struct{ s string }

func (e *proofError) Error() string { return e.s }

// proofDB holds proof nodes by their keccak256, as VerifyProof reads them.
func proofDB(nodes []hexutil.Bytes) *memorydb.Database {
	db := memorydb.New()
	for _, n := range nodes {
		_ = db.Put(crypto.Keccak256(n), n)
	}
	return db
}

// proveBlock proves a block answer's header: its fields rehash to the
// hash it claims, and that hash is the one asked for (by hash) or the
// providers' at the height asked (by number). The rest of a block (its
// transactions, size, totalDifficulty) is judged by sampling.
func (v *Verifier) proveBlock(ctx context.Context, j *Job, view ChainView, k int) (outcome string, truth json.RawMessage, why string) {
	c, ans := &j.Calls[k], j.Replies[k].Result
	// The same answer proved before (its header rehashes): its members
	// again, without decoding it (blockMemo).
	key := sha256.Sum256(ans)
	memos := v.blockMemosOf(j.ChainID)
	memo, remembered := memos.get(key)
	remembered = remembered && memo.header
	claimed, number := memo.claimed, memo.number
	if !remembered {
		claimed = member(ans, "hash")
	}
	var params []json.RawMessage
	if json.Unmarshal(c.Params, &params) != nil || len(params) == 0 {
		return ProofRerouted, nil, ""
	}
	var asked string
	_ = json.Unmarshal(params[0], &asked)
	hs := v.headersOf(j.ChainID)
	var fetched common.Hash // the providers' hash at the height asked, if learnt below
	rehash, known := view.HeadersRehash()
	if !known {
		// The head poll has not seen a header yet (it starts when the
		// chain's first node arrives): learn it from a provider's header
		// of the block asked (one header per block, cached).
		hs.mu.Lock()
		rehash, known = hs.rehash, hs.rehashKnown
		hs.mu.Unlock()
		if !known {
			var ok bool
			if c.Method == "eth_getBlockByHash" {
				_, _, ok = hs.providerHeader(ctx, j.Pool, common.HexToHash(asked), 0, false)
			} else if n, err := ethparse.Quantity(asked); err == nil {
				final := j.Finalized > 0 && n+reorgMargin <= j.Finalized
				fetched, _, ok = hs.providerHeader(ctx, j.Pool, common.Hash{}, n, final)
			}
			if !ok {
				// No provider says what the chain's headers are (none
				// configured, or none answers): nothing to prove against;
				// the block is judged as before proofs (sampled).
				return "", nil, ""
			}
			hs.mu.Lock()
			rehash = hs.rehash
			hs.mu.Unlock()
		}
	}
	if !rehash {
		return "", nil, "" // the chain's headers are not go-ethereum's: sampled
	}
	if !remembered {
		if namedTwice(ans) {
			// Go reads the last of two same-named members, other clients
			// the first or neither (serde, alloy: an error): the header
			// proved here would not be the one every caller reads.
			return ProofLie, nil, "an answer with a member named twice"
		}
		if hc := headerHashes(ans); hc != headerTrue {
			return ProofLie, nil, "its hash is not keccak256 of its header"
		}
		number = member(ans, "number")
		memo.claimed, memo.number, memo.header = claimed, number, true
		memos.put(key, memo)
	}
	if c.Method == "eth_getBlockByHash" {
		if !strings.EqualFold(asked, claimed) {
			return ProofLie, json.RawMessage(strconv.Quote(asked)), "a block of another hash than asked"
		}
		return ProofProved, nil, ""
	}
	want, err := ethparse.Quantity(asked)
	if asked == "earliest" {
		want, err = 0, nil
	}
	if err != nil {
		return ProofRerouted, nil, ""
	}
	n, ok := hexQuantity(number)
	if !ok || n != want {
		return ProofLie, nil, "a block of another height than asked"
	}
	final := j.Finalized > 0 && n+reorgMargin <= j.Finalized
	h, known := view.HashAt(n)
	if !known && fetched != (common.Hash{}) {
		h, known = fetched.Hex(), true
	}
	if !known {
		ph, _, ok := hs.providerHeader(ctx, j.Pool, common.Hash{}, n, final)
		if !ok {
			return ProofRerouted, nil, ""
		}
		h = ph.Hex()
	}
	if strings.EqualFold(h, claimed) {
		return ProofProved, nil, ""
	}
	if final {
		// A final height has one block, the providers'.
		return ProofLie, json.RawMessage(strconv.Quote(h)), "another block at a final height"
	}
	return ProofRerouted, nil, "" // a branch the providers are not on (now): unpaid, not a lie
}

// headerEvidence: keccak256 of the header a block answer's fields make
// (null if they make none), against which its claimed hash is a lie.
func headerEvidence(block json.RawMessage) json.RawMessage {
	var h types.Header
	if json.Unmarshal(block, &h) != nil {
		return json.RawMessage(`{"headerHash":null}`)
	}
	return json.RawMessage(`{"headerHash":"` + h.Hash().Hex() + `"}`)
}

// namedTwice: some object in raw has two members of one name. No client
// writes that; decoders disagree on which one counts. One pass over the
// bytes, no allocation but for a key spelled with escapes (a block of 200
// transactions is scanned in well under a millisecond).
func namedTwice(raw json.RawMessage) bool {
	type level struct {
		obj  bool
		keys [][]byte
	}
	var stack []level
	prev := byte(0) // the last byte outside strings and whitespace
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			j, esc := i+1, false
			for ; j < len(raw) && raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					esc = true
					j++
				}
			}
			if j >= len(raw) {
				return false // not JSON: judged elsewhere
			}
			if n := len(stack); n > 0 && stack[n-1].obj && (prev == '{' || prev == ',') {
				key := raw[i+1 : j]
				if esc { // "miner" and "\u006diner" are one name
					var s string
					if json.Unmarshal(raw[i:j+1], &s) != nil {
						return false
					}
					key = []byte(s)
				}
				for _, k := range stack[n-1].keys {
					if bytes.Equal(k, key) {
						return true
					}
				}
				stack[n-1].keys = append(stack[n-1].keys, key)
			}
			i, prev = j, '"'
		case '{', '[':
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1] // reuse the level's key list
				stack[n].obj, stack[n].keys = c == '{', stack[n].keys[:0]
			} else {
				stack = append(stack, level{obj: c == '{'})
			}
			prev = c
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			prev = c
		case ' ', '\t', '\n', '\r':
		default:
			prev = c
		}
	}
	return false
}
