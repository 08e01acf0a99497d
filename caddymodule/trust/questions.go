package trust

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// Material is what the gateway's own probation questions are made of: a
// block just below the providers' head, addresses and transaction hashes
// seen in recent blocks.
type Material struct {
	Block  string   // a block number in hex
	Addrs  []string // senders, recipients and miners of recent blocks
	Hashes []string // transactions of recent blocks
}

// Questions draws one round of probation questions from m: 2 to 5 calls
// out of seven kinds (the block, with or without its transactions; the
// balance, nonce, code and a storage slot of an address active lately; a
// recent transaction and its receipt by hash), each kind at most
// once, in a random order, with unpatterned ids. A node in probation sees
// batches of varying size and make-up, as callers send them, so it cannot
// tell the gateway's questions from callers' by their shape and answer
// only those honestly. full asks for the block with its transactions (the
// next rounds' addresses and hashes); the caller sets it now and then.
func Questions(m Material, full bool, rng *rand.Rand) []jsonrpc.Item {
	pick := func(xs []string, fallback string) string {
		if len(xs) == 0 {
			return fallback
		}
		return xs[rng.IntN(len(xs))]
	}
	addr := pick(m.Addrs, "0x0000000000000000000000000000000000000000")
	q := func(method string, params ...any) jsonrpc.Item {
		p, _ := json.Marshal(params)
		return jsonrpc.Item{Method: method, Params: p}
	}
	kinds := []jsonrpc.Item{
		q("eth_getBalance", addr, m.Block),
		q("eth_getTransactionCount", addr, m.Block),
		q("eth_getCode", addr, m.Block),
		q("eth_getStorageAt", addr, "0x"+strconv.FormatUint(uint64(rng.IntN(4)), 16), m.Block),
	}
	if h := pick(m.Hashes, ""); h != "" {
		kinds = append(kinds, q("eth_getTransactionByHash", h), q("eth_getTransactionReceipt", h))
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	n := 2 + rng.IntN(4) // 2..5 calls, the block among them when full
	calls := make([]jsonrpc.Item, 0, n)
	if full || rng.IntN(2) == 0 {
		calls = append(calls, q("eth_getBlockByNumber", m.Block, full))
	}
	calls = append(calls, kinds[:min(n-len(calls), len(kinds))]...)
	rng.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
	for i := range calls {
		calls[i].ID = json.RawMessage(strconv.Itoa(1 + rng.IntN(1<<20)*8 + i)) // distinct, unpatterned
	}
	return calls
}
