package trust

import (
	"math/rand/v2"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
)

// TestQuestionsVary: the gateway's own probation questions are batches of
// 2 to 5 calls of varying make-up (no fixed set of methods a node could
// recognise them by), every one of them a call a node in probation may be
// asked (PinCalls plans them as shadow material), with distinct ids.
func TestQuestionsVary(t *testing.T) {
	table, err := evm.NewTable(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := Material{Block: "0x60", Addrs: []string{"0x00000000000000000000000000000000000000e1", "0x00000000000000000000000000000000000000e2"},
		Hashes: []string{"0x1111111111111111111111111111111111111111111111111111111111111111"}}
	rng := rand.New(rand.NewPCG(1, 2))
	sizes, methods, sets := map[int]int{}, map[string]int{}, map[string]bool{}
	for round := range 2000 {
		calls := Questions(m, round%8 == 1, rng)
		sizes[len(calls)]++
		ids, set := map[string]bool{}, ""
		for _, c := range calls {
			methods[c.Method]++
			set += c.Method + ","
			if ids[string(c.ID)] {
				t.Fatalf("round %d: id %s twice", round, c.ID)
			}
			ids[string(c.ID)] = true
		}
		sets[set] = true
		if p := PinCalls(calls, table, headAt(), 90, 137); !p.Shadow || !p.NodeOK {
			t.Fatalf("round %d: %v is no shadow material", round, calls)
		}
	}
	for n := 2; n <= 5; n++ {
		if sizes[n] < 200 {
			t.Errorf("batches of %d: %d of 2000", n, sizes[n])
		}
	}
	if len(sizes) != 4 {
		t.Errorf("batch sizes %v, want 2..5 only", sizes)
	}
	if len(methods) != 7 {
		t.Errorf("methods asked %v, want all seven", methods)
	}
	if len(sets) < 500 {
		t.Errorf("only %d distinct batches (order included) in 2000 rounds", len(sets))
	}
	// Without recent transactions, no hash is made up.
	for range 200 {
		for _, c := range Questions(Material{Block: "0x60"}, false, rng) {
			if c.Method == "eth_getTransactionByHash" || c.Method == "eth_getTransactionReceipt" {
				t.Fatalf("asked %s without a known transaction", c.Method)
			}
		}
	}
}
