package faultproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// Shape is how a LieSometimes proxy lies once it lies (SetShape): the
// shapes of lie the judge (caddymodule/verify) must catch besides a
// plausible wrong value.
type Shape int32

const (
	ShapeValue Shape = iota // a balance of LieBalance, a block with LieHash (the default)
	ShapeNull               // null for a balance or a block
	ShapeEmpty              // [] for a balance or a block
	ShapeError              // an instant -32602 "invalid argument" for a balance or a block
	ShapeOmit               // a block without its stateRoot and transactionsRoot
	// ShapeReceipt: eth_getTransactionReceipt of a hash the chain does not
	// know is answered with a successful receipt in the latest block; a
	// real receipt has its status flipped.
	ShapeReceipt
	// ShapeForgedBlock: a block by number is answered with its parent's
	// hash (a hash the providers know) and made-up fields (miner
	// LieAddress, stateRoot LieHash).
	ShapeForgedBlock
	// ShapePadded: a wrong balance padded with leading zeros past 256 KiB,
	// a block with LieHash and a 300 KiB field of its own.
	ShapePadded
	// ShapeSelfConsistentBlock: a block by number with its extraData
	// replaced by "forged" and its hash recomputed from the forged header:
	// a block that hashes right, that no provider ever saw.
	ShapeSelfConsistentBlock
	// ShapeMixed: each lie in the next shape of mixedShapes that fits the
	// answer (a balance has no fields to omit or forge: a wrong value).
	ShapeMixed
	// ShapeProvedValue: a balance of LieBalance, and the node's
	// eth_getProof of that account at that block made consistent with it
	// (proofs.go): the account leaf says LieBalance and every node above
	// it is rehashed, up to a root that is not the block's state root.
	ShapeProvedValue
	// ShapeProofNode: an honest balance, and one node of its eth_getProof
	// proof altered (a byte flipped in a middle node).
	ShapeProofNode
	// ShapeHeaderField: a block by number with one header field altered
	// (miner LieAddress) and its true hash kept.
	ShapeHeaderField
	// ShapeCall: an eth_call's result replaced by LieWord (a plausible
	// 32-byte value). eth_call is sampled, not proved: the shape that
	// measures the sampling bound.
	ShapeCall
	// ShapeBlockBody: a block by number with its true header (it rehashes
	// to its true hash) and a made-up transaction (LieHash) added to its
	// transactions: a body its header does not prove.
	ShapeBlockBody
	// ShapeProofPadded: honest answers, and every eth_getProof answer padded
	// with ProofPadNodes junk trie nodes (that no path reaches): a proof
	// that verifies, made as costly to read as a reply may be.
	ShapeProofPadded
	// ShapeNamedTwice: a block by number with a second "miner" member
	// (LieAddress) written before the true one: Go reads the true one
	// (last wins), a first-wins or strict decoder (serde, alloy) the lie
	// or an error.
	ShapeNamedTwice
	// ShapeBody: one field of a block body altered, as SetBodyLie says
	// (bodies.go): a receipt's status, a log's data, a dropped or added
	// log, cumulativeGasUsed, gasUsed, contractAddress, a transaction's
	// value in a hydrated block, a hash in a hash-only one.
	ShapeBody
)

// ProofPadNodes is how many junk nodes ShapeProofPadded adds to a proof
// (each 532 bytes, the largest a trie node is: about 2 MiB of JSON).
const ProofPadNodes = 2000

// LieWord is the 32-byte value a ShapeCall liar answers eth_call with.
const LieWord = "0x000000000000000000000000000000000000000000000000000000000000dead"

var mixedShapes = []Shape{ShapeNull, ShapeEmpty, ShapeError, ShapeForgedBlock, ShapeOmit, ShapePadded, ShapeValue}

// forgedExtra is a self-consistent forged block's extraData.
const forgedExtra = "forged"

// LieAddress marks fields a forging proxy made up (a forged block's miner,
// a fabricated receipt's from and to).
const LieAddress = "0x000000000000000000000000000000000000f0f0"

// PadBytes is how far ShapePadded pads: past events.MaxEvidenceBytes.
const PadBytes = 300 << 10

// SetShape sets how LieSometimes lies.
func (p *Proxy) SetShape(s Shape) { p.shape.Store(int32(s)) }

// lieable: whether an answer to m may be a lie in the proxy's shape (and
// is counted in Answered).
func (p *Proxy) lieable(m string, r *reply) bool {
	if r.Error != nil {
		return false
	}
	null := string(r.Result) == "null" || len(r.Result) == 0
	switch Shape(p.shape.Load()) {
	case ShapeReceipt:
		return m == "eth_getTransactionReceipt"
	case ShapeSelfConsistentBlock:
		return m == "eth_getBlockByNumber" && !null && (!p.OrphansAtHead.Load() || p.atHead(r.Result))
	case ShapeOmit, ShapeForgedBlock, ShapeHeaderField, ShapeBlockBody, ShapeNamedTwice:
		return m == "eth_getBlockByNumber" && !null
	case ShapeProofPadded:
		return false // it tells no lie: it only pads its proofs
	case ShapeCall:
		return m == "eth_call" && !null
	case ShapeBody:
		return !null && p.bodyLieable(m, r)
	}
	return (m == "eth_getBalance" || m == "eth_getBlockByNumber") && !null
}

// shapeLie rewrites r, the answer to m with params, as a lie of the
// proxy's shape (ShapeValue is rewrite's own).
func (p *Proxy) shapeLie(m string, params []any, r *reply) {
	block := m == "eth_getBlockByNumber" || m == "eth_getBlockByHash"
	shape := Shape(p.shape.Load())
	if shape == ShapeMixed {
		shape = mixedShapes[(p.Lies.Load()-1)%int64(len(mixedShapes))]
		if !block && (shape == ShapeOmit || shape == ShapeForgedBlock) {
			shape = ShapeValue
		}
	}
	switch shape {
	case ShapeBody:
		p.bodyShapeLie(r)
	case ShapeCall:
		r.Result = json.RawMessage(strconv.Quote(LieWord))
	case ShapeHeaderField:
		setMember(r, "miner", json.RawMessage(strconv.Quote(LieAddress)))
	case ShapeNamedTwice:
		if t := bytes.TrimSpace(r.Result); len(t) > 1 && t[0] == '{' {
			r.Result = append([]byte(`{"miner":"`+LieAddress+`",`), t[1:]...)
		}
	case ShapeBlockBody:
		var b struct {
			Transactions []json.RawMessage `json:"transactions"`
		}
		_ = json.Unmarshal(r.Result, &b)
		txs, _ := json.Marshal(append(b.Transactions, json.RawMessage(strconv.Quote(LieHash))))
		setMember(r, "transactions", txs)
	case ShapeProvedValue, ShapeProofNode:
		if block {
			setMember(r, "hash", json.RawMessage(strconv.Quote(LieHash)))
			return
		}
		p.noteProofLie(params, shape == ShapeProvedValue)
		if shape == ShapeProvedValue {
			r.Result = json.RawMessage(strconv.Quote(LieBalance))
		}
	case ShapeValue:
		if block {
			setMember(r, "hash", json.RawMessage(strconv.Quote(LieHash)))
		} else {
			r.Result = json.RawMessage(strconv.Quote(LieBalance))
		}
	case ShapeNull:
		r.Result = json.RawMessage("null")
	case ShapeEmpty:
		r.Result = json.RawMessage("[]")
	case ShapeError:
		r.Result = nil
		r.Error = json.RawMessage(`{"code":-32602,"message":"invalid argument 1: hex string without 0x prefix"}`)
	case ShapeOmit:
		deleteMembers(r, "stateRoot", "transactionsRoot")
	case ShapeReceipt:
		if string(r.Result) == "null" {
			r.Result = p.fabricatedReceipt(params)
			return
		}
		status := "0x0"
		if strings.Contains(string(r.Result), `"status":"0x0"`) {
			status = "0x1"
		}
		setMember(r, "status", json.RawMessage(strconv.Quote(status)))
	case ShapeForgedBlock:
		var b struct {
			ParentHash string `json:"parentHash"`
		}
		_ = json.Unmarshal(r.Result, &b)
		setMember(r, "hash", json.RawMessage(strconv.Quote(b.ParentHash)))
		setMember(r, "miner", json.RawMessage(strconv.Quote(LieAddress)))
		setMember(r, "stateRoot", json.RawMessage(strconv.Quote(LieHash)))
	case ShapeSelfConsistentBlock:
		var h types.Header
		if json.Unmarshal(r.Result, &h) == nil {
			h.Extra = []byte(forgedExtra)
			setMember(r, "extraData", json.RawMessage(strconv.Quote(hexutil.Encode(h.Extra))))
			setMember(r, "hash", json.RawMessage(strconv.Quote(h.Hash().Hex())))
		}
	case ShapePadded:
		if block {
			setMember(r, "hash", json.RawMessage(strconv.Quote(LieHash)))
			setMember(r, "padding", json.RawMessage(strconv.Quote(strings.Repeat("a", PadBytes))))
			return
		}
		r.Result = json.RawMessage(`"0x` + strings.Repeat("0", PadBytes) + LieBalance[2:] + `"`)
	}
}

// fabricatedReceipt is a successful receipt of the asked hash in the
// chain's latest block.
func (p *Proxy) fabricatedReceipt(params []any) json.RawMessage {
	hash, _ := func() (string, bool) {
		if len(params) == 0 {
			return "", false
		}
		s, ok := params[0].(string)
		return s, ok
	}()
	var latest struct {
		Result struct {
			Number string `json:"number"`
			Hash   string `json:"hash"`
		} `json:"result"`
	}
	resp, err := http.Post(p.target, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}`))
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_ = json.Unmarshal(body, &latest)
	}
	b, _ := json.Marshal(map[string]any{"transactionHash": hash, "blockHash": latest.Result.Hash, "blockNumber": latest.Result.Number,
		"transactionIndex": "0x0", "from": LieAddress, "to": LieAddress, "status": "0x1", "cumulativeGasUsed": "0x5208", "gasUsed": "0x5208",
		"effectiveGasPrice": "0x3b9aca00", "contractAddress": nil, "logs": []any{}, "type": "0x2",
		"logsBloom": "0x" + strings.Repeat("0", 512)})
	return b
}

func deleteMembers(r *reply, keys ...string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.Result, &obj) == nil && obj != nil {
		for _, k := range keys {
			delete(obj, k)
		}
		r.Result, _ = json.Marshal(obj)
	}
}

// IsLie reports whether an answer a caller got to method is one of a
// LieSometimes proxy's lies, in any shape: LieBalance, LieHash or
// LieAddress in it, a padded value or field, a block without its
// stateRoot, a receipt of an unknown hash or with a flipped status
// (knownOK: hashes of transactions known to have succeeded), or nothing
// (null, [] or an error) where the chain has a balance or block.
func IsLie(method string, body []byte, knownOK map[string]bool) bool {
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil {
		return false
	}
	res := bytes.TrimSpace(r.Result)
	nothing := len(r.Error) > 0 || len(res) == 0 || string(res) == "null" || string(res) == "[]"
	s := string(res)
	switch method {
	case "eth_getBalance":
		return nothing || s == strconv.Quote(LieBalance) || strings.HasPrefix(s, `"0x00`)
	case "eth_getBlockByNumber":
		return nothing || strings.Contains(s, LieHash) || strings.Contains(s, LieAddress) || strings.Contains(s, `"padding"`) ||
			!strings.Contains(s, `"stateRoot"`) || strings.Contains(s, hexutil.Encode([]byte(forgedExtra)))
	case "eth_getTransactionReceipt":
		if nothing {
			return false
		}
		var rc struct {
			TransactionHash string `json:"transactionHash"`
			Status          string `json:"status"`
		}
		_ = json.Unmarshal(res, &rc)
		return strings.Contains(s, LieAddress) || (knownOK[strings.ToLower(rc.TransactionHash)] && rc.Status != "0x1")
	}
	return false
}

// holdFuture answers a send whose nonce is beyond its sender's next nonce
// (pending included, as the target sees it) with its hash and keeps it;
// false: the send passes on.
func (p *Proxy) holdFuture(w http.ResponseWriter, c call) bool {
	if len(c.Params) != 1 {
		return false
	}
	raw, _ := c.Params[0].(string)
	b, err := hexutil.Decode(raw)
	if err != nil {
		return false
	}
	var tx types.Transaction
	if tx.UnmarshalBinary(b) != nil {
		return false
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx)
	if err != nil {
		return false
	}
	resp, err := http.Post(p.target, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionCount","params":["`+from.Hex()+`","pending"]}`))
	if err != nil {
		return false
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var r struct {
		Result string `json:"result"`
	}
	_ = json.Unmarshal(body, &r)
	next, err := strconv.ParseUint(trim0x(r.Result), 16, 64)
	if err != nil || tx.Nonce() <= next {
		return false
	}
	p.Held.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(c.ID) + `,"result":"` + tx.Hash().Hex() + `"}`))
	return true
}

// atHead: the block is at most a block below the target's head (an honest
// node's orphans are there, above any final height).
func (p *Proxy) atHead(block json.RawMessage) bool {
	var b struct {
		Number string `json:"number"`
	}
	_ = json.Unmarshal(block, &b)
	n, err := strconv.ParseUint(trim0x(b.Number), 16, 64)
	if err != nil {
		return false
	}
	resp, err := http.Post(p.target, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
	if err != nil {
		return false
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var r struct {
		Result string `json:"result"`
	}
	_ = json.Unmarshal(body, &r)
	head, err := strconv.ParseUint(trim0x(r.Result), 16, 64)
	return err == nil && n+1 >= head
}
