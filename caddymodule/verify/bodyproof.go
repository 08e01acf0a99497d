package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// bodyVerdict is a body proof's outcome for one answer.
type bodyVerdict struct {
	outcome string // ProofProved, ProofRerouted or ProofLie ("": not provable here, sampled)
	full    bool   // proved, and every member of the answer is covered
	truth   json.RawMessage
	by      string // what the lie is shown against: "transactionsRoot", "receiptsRoot"
	why     string
}

func rerouted() bodyVerdict { return bodyVerdict{outcome: ProofRerouted} }

func lie(by, why string, truth json.RawMessage) bodyVerdict {
	return bodyVerdict{outcome: ProofLie, by: by, why: why, truth: truth}
}

// rootsEvidence: the proven block's hash and roots, against which a body
// lie is shown (anyone can fetch the block again and rederive them).
func rootsEvidence(h *types.Header, hash common.Hash) json.RawMessage {
	return proofFetchEvidence(h, hash, "", nil)
}

// proofFetchEvidence is rootsEvidence for a lie in what the node gave
// the gateway to prove with (its full block, its block receipts), which
// the caller never saw: it names that call and the keccak256 of the
// node's answer (the answer itself may be megabytes).
func proofFetchEvidence(h *types.Header, hash common.Hash, method string, answer json.RawMessage) json.RawMessage {
	var e struct {
		BlockHash        common.Hash  `json:"blockHash"`
		TransactionsRoot *common.Hash `json:"transactionsRoot,omitempty"`
		ReceiptsRoot     *common.Hash `json:"receiptsRoot,omitempty"`
		NodeProofCall    string       `json:"nodeProofCall,omitempty"`
		NodeProofKeccak  *common.Hash `json:"nodeProofKeccak256,omitempty"`
	}
	e.BlockHash = hash
	if h != nil {
		e.TransactionsRoot, e.ReceiptsRoot = &h.TxHash, &h.ReceiptHash
	}
	if method != "" {
		d := crypto.Keccak256Hash(answer)
		e.NodeProofCall, e.NodeProofKeccak = method+" "+hash.Hex(), &d
	}
	b, _ := json.Marshal(e)
	return b
}

// knownToProviders: the providers gave the block hash (the head poll's
// view, else one provider header by hash, cached).
func (v *Verifier) knownToProviders(ctx context.Context, j *Job, view ChainView, hash common.Hash) bool {
	if _, ok := view.StateRoot(hash.Hex()); ok {
		return true
	}
	_, _, ok := v.headersOf(j.ChainID).providerHeader(ctx, j.Pool, hash, 0, false)
	return ok
}

// provenBlockOf is the proven block of hash, with its receipts proven when
// receipts: from the cache, else asked of the node that answered (its full
// block, its block receipts: one round trip) while the providers are
// asked whether they know the hash. A node that cannot produce them, or a
// block the providers never saw, is not a lie (rerouted); a body or
// receipts its header's roots do not prove is.
func (v *Verifier) provenBlockOf(ctx context.Context, j *Job, view ChainView, hash common.Hash, receipts bool) (*provenBlock, bodyVerdict) {
	cache := v.bodiesOf(j.ChainID)
	p, cached := cache.Get(hash)
	if cached {
		p.mu.Lock()
		have := p.receipts != nil
		p.mu.Unlock()
		if !receipts || have {
			return p, bodyVerdict{outcome: ProofProved}
		}
	}
	if !takeBodyFetch(ctx) {
		return nil, bodyVerdict{} // the part's body fetches are spent: sampled
	}
	var asks []jsonrpc.Item
	if !cached {
		asks = append(asks, jsonrpc.Item{Method: "eth_getBlockByHash", ID: json.RawMessage("0"), Params: json.RawMessage(`["` + hash.Hex() + `",true]`)})
	}
	if receipts {
		asks = append(asks, jsonrpc.Item{Method: "eth_getBlockReceipts", ID: json.RawMessage("1"), Params: json.RawMessage(`["` + hash.Hex() + `"]`)})
	}
	var known bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		known = v.knownToProviders(ctx, j, view, hash)
	}()
	got := v.askNode(ctx, j, asks)
	wg.Wait()
	if len(got) != len(asks) {
		return nil, rerouted() // the node could not answer: not a lie
	}
	for i, r := range got {
		if r.Err != nil || r.Response.Error != nil || nodeHasNothing(asks[i].Method, r.Result) {
			return nil, rerouted() // pruned, an error, or a block it does not have
		}
	}
	if !known {
		return nil, rerouted() // a block the providers never saw: nothing to prove against
	}
	if !cached {
		raw := got[0].Result
		if len(raw) > maxBodyBytes {
			return nil, rerouted()
		}
		if namedTwice(raw) {
			return nil, lie("header hash", "a block with a member named twice", proofFetchEvidence(nil, hash, "eth_getBlockByHash", raw))
		}
		var h types.Header
		if err := json.Unmarshal(raw, &h); err != nil || h.Hash() != hash {
			return nil, lie("header hash", "a block whose header does not hash to the hash it was asked by", proofFetchEvidence(nil, hash, "eth_getBlockByHash", raw))
		}
		np, why := decodeBody(j.ChainID, &h, hash, raw)
		switch why {
		case "":
		case whyOversize:
			return nil, rerouted()
		case errNotProvable.Error():
			return nil, bodyVerdict{} // uncles: sampled, as before proofs
		default:
			return nil, lie("transactionsRoot", why, proofFetchEvidence(&h, hash, "eth_getBlockByHash", raw))
		}
		p = np
	}
	if receipts {
		raw := got[len(got)-1].Result
		if namedTwice(raw) {
			return nil, lie("receiptsRoot", "receipts with a member named twice", proofFetchEvidence(p.header, hash, "eth_getBlockReceipts", raw))
		}
		switch why := proveReceipts(j.ChainID, p, raw); why {
		case "":
		case whyOversize:
			return nil, rerouted()
		case errNotProvable.Error():
			return nil, bodyVerdict{} // a spelling go-ethereum refuses: sampled
		default:
			return nil, lie("receiptsRoot", why, proofFetchEvidence(p.header, hash, "eth_getBlockReceipts", raw))
		}
	}
	cache.Add(hash, p)
	return p, bodyVerdict{outcome: ProofProved}
}

// proveBlockBody proves the body of a block answer whose header is proved
// (proveBlock): a hydrated answer carries its own body (proved by its
// roots, no fetch); a hash-only answer is compared with the proven body
// of its hash (cached, else the node's full block).
func (v *Verifier) proveBlockBody(ctx context.Context, j *Job, view ChainView, k int) bodyVerdict {
	ans := j.Replies[k].Result
	if len(ans) > maxBodyBytes {
		return rerouted()
	}
	// The same answer, proved before: its verdict again, for a sha256 of
	// it (a caller may ask a hydrated block over and over, for one call's
	// price each time). proveBlock has proved its header (and remembered
	// its hash member) first.
	key := sha256.Sum256(ans)
	memos := v.blockMemosOf(j.ChainID)
	memo, remembered := memos.get(key)
	if remembered && memo.body {
		return bodyVerdict{outcome: ProofProved, full: memo.full}
	}
	claimed := memo.claimed
	if !remembered || !memo.header {
		claimed = member(ans, "hash")
	}
	hash := common.HexToHash(claimed)
	p, cached := v.bodiesOf(j.ChainID).Get(hash)
	var h types.Header
	if json.Unmarshal(ans, &h) != nil {
		return rerouted()
	}
	var params []json.RawMessage
	_ = json.Unmarshal(j.Calls[k].Params, &params)
	hydrated := len(params) > 1 && string(params[1]) == "true"
	if hydrated && !cached {
		// A proven block is not decoded again (senders recovered once per
		// block): checkBlockBody compares each transaction's hash with it.
		np, why := decodeBody(j.ChainID, &h, hash, ans)
		switch why {
		case "":
			p = np
			v.bodiesOf(j.ChainID).Add(hash, p)
		case whyOversize:
			return rerouted()
		case errNotProvable.Error():
			return bodyVerdict{} // uncles: sampled, as before proofs
		default:
			return lie("transactionsRoot", why, rootsEvidence(&h, hash))
		}
	} else if !cached {
		var vd bodyVerdict
		if p, vd = v.provenBlockOf(ctx, j, view, hash, false); vd.outcome != ProofProved {
			return vd
		}
	}
	why, full := checkBlockBody(ans, p)
	switch why {
	case "":
		memo.body, memo.full = true, full
		memos.put(key, memo)
		return bodyVerdict{outcome: ProofProved, full: full}
	case errNotProvable.Error():
		return bodyVerdict{} // a spelling go-ethereum refuses: sampled
	}
	return lie("transactionsRoot", why, rootsEvidence(p.header, hash))
}

// nodeHasNothing: the node's answer to a proof fetch says it has nothing
// (null, or no block). An empty block's receipts ([]) are an answer, not
// nothing: proveReceipts checks their number.
func nodeHasNothing(method string, raw json.RawMessage) bool {
	if method == "eth_getBlockReceipts" {
		t := bytes.TrimSpace(raw)
		return len(t) == 0 || string(t) == "null"
	}
	return IsNothing(raw)
}

type bodyFetchBudgetKey struct{}

// takeBodyFetch spends one of ctx's part's body fetches (maxBodyFetchesPerPart);
// false when none is left (no budget on ctx: unbounded).
func takeBodyFetch(ctx context.Context) bool {
	b, _ := ctx.Value(bodyFetchBudgetKey{}).(*fetchBudget)
	return b == nil || b.left.Add(-1) >= 0
}

// onProvidersChain: the block hash is the providers' at height n. Its
// verdict is empty when it is; rerouted (unpaid, no conviction) when it is
// not and n is not final — a reorg is honest, the node may have seen the
// other block — or when no provider says; a lie at a final height (the
// same margin as the judge's, reorgMargin below the finalized head: below
// finality there are no branches), shown against the providers' hash
// there.
func (v *Verifier) onProvidersChain(ctx context.Context, j *Job, view ChainView, n uint64, hash common.Hash, why string) bodyVerdict {
	final := j.Finalized > 0 && n+reorgMargin <= j.Finalized
	h, ok := v.canonicalAt(ctx, j, view, n, final)
	switch {
	case !ok:
		return rerouted()
	case h == hash:
		return bodyVerdict{}
	case final:
		return lie("header hash", why, json.RawMessage(strconv.Quote(h.Hex())))
	}
	return rerouted() // another branch (now): unpaid, not a lie
}

// proveBodyAnswer proves an answer of ProvableBodies: the block it names
// is proven (cached, else from the node), and the answer must be what
// that block's proven transactions or receipts say.
func (v *Verifier) proveBodyAnswer(ctx context.Context, j *Job, view ChainView, k int) bodyVerdict {
	c, ans := &j.Calls[k], j.Replies[k].Result
	if len(ans) > maxBodyBytes {
		return rerouted()
	}
	q, ok := questionOf(c, ans)
	if !ok {
		return bodyVerdict{} // names no block it can be proved by: sampled
	}
	if namedTwice(ans) {
		return lie("receiptsRoot", "an answer with a member named twice", nil)
	}
	if q.byNumber {
		// The block named must be the providers' at the height asked.
		if vd := v.onProvidersChain(ctx, j, view, q.number, q.hash, "an answer about another block than the providers' at a final height"); vd.outcome != "" {
			return vd
		}
	}
	p, vd := v.provenBlockOf(ctx, j, view, q.hash, q.receipts)
	if vd.outcome != ProofProved {
		return vd
	}
	if q.byNumber && p.header.Number.Uint64() != q.number {
		return lie("header hash", "an answer about a block of another height than asked", rootsEvidence(p.header, p.hash))
	}
	if q.named {
		// A transaction or receipt by its hash names its block itself: the
		// providers knowing that block's hash is not enough (they keep the
		// blocks a reorg replaced, and serve them by hash). The answer is
		// the chain's only when its block is the providers' at its
		// (proven) height, asked again for every answer: a block proven and
		// kept while canonical may have been replaced since.
		if vd := v.onProvidersChain(ctx, j, view, p.header.Number.Uint64(), p.hash, "an answer from a block that is not the providers' at its height, a final one"); vd.outcome != "" {
			return vd
		}
	}
	by := "transactionsRoot"
	if q.receipts {
		by = "receiptsRoot"
	}
	// The same answer to the same call, proved before: its verdict again.
	key := answerKey(c.Method, c.Params, ans)
	if full, ok := p.recall(key); ok {
		return bodyVerdict{outcome: ProofProved, full: full}
	}
	var params []json.RawMessage
	_ = json.Unmarshal(c.Params, &params)
	var why string
	var full bool
	switch c.Method {
	case "eth_getBlockReceipts":
		var rs []json.RawMessage
		if json.Unmarshal(ans, &rs) != nil || len(rs) != len(p.txs) {
			return lie(by, "another number of receipts than the block's transactions", rootsEvidence(p.header, p.hash))
		}
		full = true
		for i, r := range rs {
			w, f := checkReceipt(r, p, i)
			if w != "" {
				why = w
				break
			}
			full = full && f
		}
	case "eth_getTransactionReceipt", "eth_getTransactionByHash":
		asked, _ := hashParam(params[0])
		i, ok := hexQuantity(member(ans, "transactionIndex"))
		if !ok || i >= uint64(len(p.txs)) || p.txs[i].Hash() != asked {
			why = "an answer about another transaction than asked, or one its block does not hold"
			break
		}
		if c.Method == "eth_getTransactionReceipt" {
			why, full = checkReceipt(ans, p, int(i))
		} else {
			why, full = checkTx(ans, p, int(i))
		}
	case "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex":
		var idx string
		_ = json.Unmarshal(params[1], &idx)
		i, ok := hexQuantity(idx)
		if !ok {
			return bodyVerdict{}
		}
		if i >= uint64(len(p.txs)) {
			why = "a transaction at an index its block does not have"
			break
		}
		why, full = checkTx(ans, p, int(i))
	case "eth_getLogs":
		_, match, _ := blockHashFilter(c.Params)
		why, full = checkLogs(ans, p, match)
	}
	switch why {
	case "":
		p.remember(key, full)
		return bodyVerdict{outcome: ProofProved, full: full}
	case whyOmitted:
		return rerouted()
	case errNotProvable.Error():
		return bodyVerdict{} // a spelling go-ethereum refuses: sampled
	}
	return lie(by, why, rootsEvidence(p.header, p.hash))
}
