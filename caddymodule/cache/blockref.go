package cache

import (
	"strconv"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Block references: the part of a call that says which block it is about,
// which is what decides whether its answer can still change.

type refKind uint8

const (
	// refInvalid is a value the rules do not recognise as a block
	// reference: the call is not cached (the upstream most likely rejects
	// it, and errors are not cached anyway).
	refInvalid refKind = iota

	// refMoving is a tag whose block changes as the chain advances or
	// reorgs: latest, pending, safe, finalized. Never cached. "safe" and
	// "finalized" included: they move forward every few blocks, and caching
	// "finalized" under a fixed key is exactly eRPC issue #223 (a stale
	// block served for the tag).
	refMoving

	// refNumber names a block by height; immutable only once that height is
	// finalized.
	refNumber

	// refHash names a block by hash (EIP-1898 or a bare 32-byte hash); the
	// block's contents and the state after it are fixed by the hash.
	refHash
)

type blockRef struct {
	kind refKind
	num  uint64 // for refNumber
}

// parseQuantity decodes an Ethereum quantity up to 64 bits with the
// gateway's one reader (ethparse.Quantity: leading zeros tolerated — geth
// rejects them, other clients do not, and the meaning is not in doubt), so
// the cache keys a block number exactly as the range check reads it.
func parseQuantity(s string) (uint64, bool) {
	v, err := ethparse.Quantity(s)
	return v, err == nil
}

// formatQuantity is the minimal lowercase spelling of v.
func formatQuantity(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// normQuantity rewrites a string node holding a quantity to its minimal
// form, so 0x0A, 0xa and 0x000a share a key. Non-quantities are left alone.
func normQuantity(n *node) (uint64, bool) {
	if n.kind != kindString {
		return 0, false
	}
	v, ok := parseQuantity(n.text)
	if ok {
		n.text = formatQuantity(v)
	}
	return v, ok
}

// isHash reports whether s is a 32-byte hex hash (block or transaction).
func isHash(s string) bool { return len(s) == 66 && isHex(s) }

// blockRefString classifies a block number, tag or bare hash, normalising
// the node's spelling.
func blockRefString(n *node) blockRef {
	if n.kind != kindString {
		// JSON numbers are not block numbers to geth (it wants hex
		// strings); what others make of them is anyone's guess.
		return blockRef{}
	}
	switch n.text {
	case "latest", "pending", "safe", "finalized":
		return blockRef{kind: refMoving}
	case "earliest":
		// The genesis block, final from the start. The tag keeps its own
		// key (it is not rewritten to 0x0): nodes with expired history
		// (EIP-4444) may come to read it as "oldest block I still have".
		return blockRef{kind: refNumber, num: 0}
	}
	if isHash(n.text) {
		return blockRef{kind: refHash}
	}
	if v, ok := normQuantity(n); ok {
		return blockRef{kind: refNumber, num: v}
	}
	return blockRef{}
}

// blockRefParam classifies an EIP-1898 block parameter: a string as above,
// or an object {"blockNumber": q} or {"blockHash": h[, "requireCanonical":
// b]}. Objects with any other shape are not understood and not cached.
func blockRefParam(n *node) blockRef {
	if n.kind != kindObject {
		return blockRefString(n)
	}
	var hash, number, canon *node
	for i := range n.members {
		m := &n.members[i]
		switch m.key {
		case "blockHash":
			hash = &m.val
		case "blockNumber":
			number = &m.val
		case "requireCanonical":
			canon = &m.val
		default:
			return blockRef{}
		}
	}
	switch {
	case hash != nil && number == nil:
		if hash.kind != kindString || !isHash(hash.text) || (canon != nil && canon.kind != kindBool) {
			return blockRef{}
		}
		// requireCanonical only adds an error case (errors are not cached);
		// a successful answer is the same either way. It stays in the key
		// regardless: sound, not complete.
		return blockRef{kind: refHash}
	case number != nil && hash == nil && canon == nil:
		r := blockRefString(number)
		if r.kind == refHash {
			return blockRef{} // a hash under "blockNumber" is malformed
		}
		return r
	}
	return blockRef{}
}
