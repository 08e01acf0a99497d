package verify

import (
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/holiman/uint256"
)

// proofState is a state trie of n accounts built with go-ethereum's trie
// (the depth of a large state's paths), one of them a contract with one
// storage slot, and EIP-1186 answers made from it as a node makes them.
type proofState struct {
	root      common.Hash
	state     *trie.Trie
	storage   *trie.Trie
	contract  common.Address
	code      []byte
	slot, val common.Hash
}

func newProofState(t testing.TB, n int) *proofState {
	t.Helper()
	s := &proofState{state: trie.NewEmpty(nil), storage: trie.NewEmpty(nil), code: []byte{0x60, 0x00, 0x60, 0x00, 0xf3}}
	s.slot, s.val = common.BigToHash(common.Big2), common.BigToHash(common.Big257)
	enc, _ := rlp.EncodeToBytes(common.TrimLeftZeroes(s.val[:]))
	s.storage.MustUpdate(crypto.Keccak256(s.slot[:]), enc)
	for i := range n {
		addr := common.BigToAddress(common.Big1).Bytes()
		addr[0], addr[1], addr[2] = byte(i), byte(i>>8), byte(i>>16)
		acct := types.StateAccount{Nonce: uint64(i), Balance: uint256.NewInt(uint64(i) * 1e9), Root: types.EmptyRootHash, CodeHash: types.EmptyCodeHash[:]}
		if i == 7 {
			s.contract = common.BytesToAddress(addr)
			acct.Root, acct.CodeHash = s.storage.Hash(), crypto.Keccak256(s.code)
		}
		b, _ := rlp.EncodeToBytes(&acct)
		s.state.MustUpdate(crypto.Keccak256(addr), b)
	}
	s.root = s.state.Hash()
	return s
}

func proofNodes(t testing.TB, tr *trie.Trie, key []byte) []hexutil.Bytes {
	t.Helper()
	db := memorydb.New()
	if err := tr.Prove(key, db); err != nil {
		t.Fatal(err)
	}
	var out []hexutil.Bytes
	it := db.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		out = append(out, append([]byte(nil), it.Value()...))
	}
	return out
}

// proof is the node's eth_getProof answer for addr (with the contract's
// slot when storage).
func (s *proofState) proof(t testing.TB, addr common.Address, storage bool) json.RawMessage {
	p := map[string]any{"address": addr, "accountProof": proofNodes(t, s.state, crypto.Keccak256(addr[:]))}
	sp := []any{}
	if storage {
		sp = append(sp, map[string]any{"key": s.slot, "value": "0x101", "proof": proofNodes(t, s.storage, crypto.Keccak256(s.slot[:]))})
	}
	p["storageProof"] = sp
	b, _ := json.Marshal(p)
	return b
}

func quote(s string) json.RawMessage { return json.RawMessage(strconv.Quote(s)) }

// TestJudgeByProof: honest answers to the four provable reads are proved
// by the node's EIP-1186 proof against the state root; a wrong value, a
// padded value, another code, another storage value, a proof of another
// root and a proof with one node altered are not; an absent account is
// proved empty.
func TestJudgeByProof(t *testing.T) {
	s := newProofState(t, 5000)
	eoa := common.BigToAddress(common.Big1)
	eoa[0], eoa[1] = 42, 0 // account 42: nonce 42, balance 42e9
	q := stateQuestion{addr: eoa, root: s.root, ok: true}
	pr := s.proof(t, eoa, false)
	cq := stateQuestion{addr: s.contract, root: s.root, ok: true, slot: &s.slot}
	cpr := s.proof(t, s.contract, true)
	absent := common.HexToAddress("0x00000000000000000000000000000000000000ff")
	aq := stateQuestion{addr: absent, root: s.root, ok: true}
	apr := s.proof(t, absent, false)

	altered := func(p json.RawMessage) json.RawMessage {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(p, &m)
		var nodes []hexutil.Bytes
		_ = json.Unmarshal(m["accountProof"], &nodes)
		nodes[len(nodes)/2][5] ^= 1
		m["accountProof"], _ = json.Marshal(nodes)
		b, _ := json.Marshal(m)
		return b
	}
	for _, c := range []struct {
		name, method string
		q            stateQuestion
		proof        json.RawMessage
		answer       json.RawMessage
		proved       bool
	}{
		{"balance", "eth_getBalance", q, pr, quote(hexutil.EncodeUint64(42e9)), true},
		{"balance upper-case hex", "eth_getBalance", q, pr, quote("0x" + "9C7652400"), true},
		{"wrong balance", "eth_getBalance", q, pr, quote("0x2a"), false},
		{"padded balance", "eth_getBalance", q, pr, quote("0x09c7652400"), false},
		{"nonce", "eth_getTransactionCount", q, pr, quote("0x2a"), true},
		{"wrong nonce", "eth_getTransactionCount", q, pr, quote("0x2b"), false},
		{"code", "eth_getCode", cq, cpr, quote(hexutil.Encode(s.code)), true},
		{"other code", "eth_getCode", cq, cpr, quote("0x6000"), false},
		{"no code of an account", "eth_getCode", q, pr, quote("0x"), true},
		{"storage", "eth_getStorageAt", cq, cpr, quote(s.val.Hex()), true},
		{"wrong storage", "eth_getStorageAt", cq, cpr, quote(common.BigToHash(common.Big3).Hex()), false},
		{"absent account", "eth_getBalance", aq, apr, quote("0x0"), true},
		{"absent account made rich", "eth_getBalance", aq, apr, quote("0x1"), false},
		{"one proof node altered", "eth_getBalance", q, altered(pr), quote(hexutil.EncodeUint64(42e9)), false},
		{"a proof of another account", "eth_getBalance", q, cpr, quote("0x0"), false},
		{"not a proof", "eth_getBalance", q, json.RawMessage(`{"accountProof":"0x00"}`), quote("0x0"), false},
	} {
		_, why := judgeByProof(c.method, c.q, c.proof, c.answer)
		if (why == "") != c.proved {
			t.Errorf("%s: proved %v (%s), want %v", c.name, why == "", why, c.proved)
		}
	}
	// Another block's root: the honest proof does not verify.
	other := q
	other.root = common.HexToHash("0x01")
	if _, why := judgeByProof("eth_getBalance", other, pr, quote(hexutil.EncodeUint64(42e9))); why == "" {
		t.Error("a proof verified against another state root")
	}
}

// BenchmarkJudgeByProof: the CPU a proved balance costs the gateway (the
// JSON of a node's proof read, its nodes hashed and walked, the value
// compared) on a state of 100,000 accounts.
func BenchmarkJudgeByProof(b *testing.B) {
	s := newProofState(b, 100_000)
	eoa := common.BigToAddress(common.Big1)
	eoa[0], eoa[1] = 42, 0
	q := stateQuestion{addr: eoa, root: s.root, ok: true}
	pr := s.proof(b, eoa, false)
	ans := quote(hexutil.EncodeUint64(42e9))
	b.ReportAllocs()
	b.ResetTimer()
	// CPU time, not wall time: on a shared machine the wall time per
	// operation is mostly waiting for a core.
	before := cpuTime()
	for range b.N {
		if _, why := judgeByProof("eth_getBalance", q, pr, ans); why != "" {
			b.Fatal(why)
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestNamedTwice: a member named twice is found at any depth, and only then
// (the same name in sibling objects, or as a value, is not twice).
func TestNamedTwice(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"a":1,"b":2}`:                                     false,
		`{"a":1,"a":2}`:                                     true,
		`{"a":{"x":1},"b":{"x":1}}`:                         false,
		`{"a":[{"x":1,"x":2}]}`:                             true,
		`{"a":"a","b":["a","a"],"c":{"a":"c"}}`:             false,
		`{"t":[{"h":1},{"h":2}],"n":{"m":{}},"t2":1,"n":0}`: true,
		`[{"a":1},{"a":1}]`:                                 false,
		`not json`:                                          false,
		`{"miner":1,"\u006diner":2}`:                        true,
		`{"a\"b":1,"a\"c":2,"x":"{\"x\":1,"}`:               false,
		`{"a":[1,{"b":2}],"c":{"b":3}}`:                     false,
	} {
		if got := namedTwice(json.RawMessage(raw)); got != want {
			t.Errorf("namedTwice(%s) = %v, want %v", raw, got, want)
		}
	}
}
