package faultproxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/holiman/uint256"
)

// proofKey names an account at a block, as eth_getBalance and eth_getProof
// pinned to a block hash name them.
func proofKey(addr any, block any) string {
	a, _ := addr.(string)
	h := ""
	switch b := block.(type) {
	case map[string]any:
		h, _ = b["blockHash"].(string)
	case string:
		h = b
	}
	return strings.ToLower(a) + "|" + strings.ToLower(h)
}

// noteProofLie remembers a balance lie (params of the eth_getBalance) so
// that the node's next proof of that account at that block matches it
// (consistent) or has one node altered.
func (p *Proxy) noteProofLie(params []any, consistent bool) {
	if len(params) < 2 {
		return
	}
	p.proofLies.Store(proofKey(params[0], params[1]), consistent)
}

// alterProof rewrites an eth_getProof answer for an account the proxy
// lied about: consistently (the leaf's balance set to LieBalance and each
// node above rehashed into its parent, so the proof is a well-formed path
// to a root that is not the block's), or by flipping a byte of one middle
// node.
func (p *Proxy) alterProof(params []any, r *reply) {
	if len(params) < 3 {
		return
	}
	v, ok := p.proofLies.LoadAndDelete(proofKey(params[0], params[2]))
	if !ok {
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.Result, &obj) != nil {
		return
	}
	var nodes []hexutil.Bytes
	if json.Unmarshal(obj["accountProof"], &nodes) != nil || len(nodes) == 0 {
		return
	}
	if !v.(bool) {
		mid := nodes[len(nodes)/2]
		mid[len(mid)/2] ^= 0xff
	} else {
		var leaf [][]byte
		if rlp.DecodeBytes(nodes[len(nodes)-1], &leaf) != nil || len(leaf) != 2 {
			return
		}
		var acct types.StateAccount
		if rlp.DecodeBytes(leaf[1], &acct) != nil {
			return
		}
		acct.Balance = uint256.MustFromHex(LieBalance)
		leaf[1], _ = rlp.EncodeToBytes(&acct)
		newLeaf, _ := rlp.EncodeToBytes(leaf)
		old := append([]byte(nil), nodes[len(nodes)-1]...)
		nodes[len(nodes)-1] = newLeaf
		for i := len(nodes) - 2; i >= 0; i-- {
			oldChild, newChild := crypto.Keccak256(old), crypto.Keccak256(nodes[i+1])
			old = append([]byte(nil), nodes[i]...)
			nodes[i] = bytes.Replace(nodes[i], oldChild, newChild, 1)
		}
		obj["balance"] = json.RawMessage(strconv.Quote(LieBalance))
	}
	obj["accountProof"], _ = json.Marshal(nodes)
	r.Result, _ = json.Marshal(obj)
}

// padProof adds ProofPadNodes junk nodes to an eth_getProof answer's
// accountProof (ShapeProofPadded): trie.VerifyProof only follows the path
// from the root, so the proof still verifies.
func padProof(r *reply) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.Result, &obj) != nil {
		return
	}
	var nodes []hexutil.Bytes
	if json.Unmarshal(obj["accountProof"], &nodes) != nil {
		return
	}
	for i := range ProofPadNodes {
		junk := bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 266)
		nodes = append(nodes, junk)
	}
	obj["accountProof"], _ = json.Marshal(nodes)
	r.Result, _ = json.Marshal(obj)
}

// ProofDialect values.
const (
	DialectReth int32 = 1 + iota
	DialectBesu
)

// dialectProof respells an honest geth eth_getProof answer as another
// client does for an account whose storage trie is empty (storageHash the
// empty root, or zero for a missing account): each storage proof [] becomes ["0x80"] (DialectReth), or,
// for an account that does not exist (nonce 0, balance 0, no code), the
// storageProof list is empty (DialectBesu).
func dialectProof(d int32, r *reply) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.Result, &obj) != nil {
		return
	}
	var storageHash string
	_ = json.Unmarshal(obj["storageHash"], &storageHash)
	// geth names a missing account's storage and code hashes by zero.
	zero := "0x" + strings.Repeat("0", 64)
	if !strings.EqualFold(storageHash, types.EmptyRootHash.Hex()) && storageHash != zero {
		return
	}
	switch d {
	case DialectReth:
		var sps []map[string]json.RawMessage
		if json.Unmarshal(obj["storageProof"], &sps) != nil {
			return
		}
		for _, sp := range sps {
			sp["proof"] = json.RawMessage(`["0x80"]`)
		}
		obj["storageProof"], _ = json.Marshal(sps)
	case DialectBesu:
		var balance, nonce, codeHash string
		_ = json.Unmarshal(obj["balance"], &balance)
		_ = json.Unmarshal(obj["nonce"], &nonce)
		_ = json.Unmarshal(obj["codeHash"], &codeHash)
		if balance != "0x0" || nonce != "0x0" || (!strings.EqualFold(codeHash, types.EmptyCodeHash.Hex()) && codeHash != zero) {
			return
		}
		obj["storageProof"] = json.RawMessage(`[]`)
	}
	r.Result, _ = json.Marshal(obj)
}
