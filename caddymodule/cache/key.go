package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Key identifies a cacheable call: SHA-256 of the chain id, the method and
// the canonical params (canon.go). Hashing bounds key memory (eth_call
// calldata can be kilobytes) to 32 bytes per entry, and a cryptographic hash
// makes a collision, which would serve one call's answer to another, a
// non-event even against callers crafting params on purpose. SHA-256 is
// hardware-accelerated on current CPUs, so it costs well under a
// microsecond for typical params.
type Key [32]byte

// String is the key in hex, for logs and debugging.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// makeKey hashes (chain, method, params). The method is length-prefixed so
// no choice of method and params can produce another pair's input.
func makeKey(chain uint64, method string, params *node) Key {
	var stack [256]byte
	buf := binary.BigEndian.AppendUint64(stack[:0], chain)
	buf = binary.AppendUvarint(buf, uint64(len(method)))
	buf = append(buf, method...)
	buf = appendCanonical(buf, params)
	return sha256.Sum256(buf)
}
