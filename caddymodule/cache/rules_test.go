package cache

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

const (
	fin   = 100 // finalized head used by the table: 0x64
	hashA = "0x" + "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
	hashB = "0x" + "00000000000000000000000000000000000000000000000000000000000000ff"
	addrA = "0x00000000219ab540356cbb839cbe05303d7705fa"
	callA = `{"to":"` + addrA + `","data":"0x70a08231"}`
)

func item(method, params string) *jsonrpc.Item {
	it := &jsonrpc.Item{ID: json.RawMessage(`1`), Method: method}
	if params != "" {
		it.Params = json.RawMessage(params)
	}
	return it
}

func ok(result string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: json.RawMessage(`1`), Result: json.RawMessage(result)}
}

func receipt(blockNumber string) string {
	return `{"transactionHash":"` + hashA + `","blockHash":"` + hashB + `","blockNumber":` + blockNumber +
		`,"logs":[{"blockNumber":"0x1","data":"0x"}],"status":"0x1"}`
}

// ruleCase: cacheable is Cacheable's verdict at fin; when result is set,
// storable is Storable's verdict on it (at fin). Every cacheable case is
// also checked to refuse an error response and a null result.
type ruleCase struct {
	name      string
	method    string
	params    string
	cacheable bool
	result    string
	storable  bool
}

var ruleCases = []ruleCase{
	// static
	{"chainId no params", "eth_chainId", "", true, `"0x89"`, true},
	{"chainId []", "eth_chainId", `[]`, true, `"0x89"`, true},
	{"chainId null", "eth_chainId", `null`, true, `"0x89"`, true},
	{"chainId with args", "eth_chainId", `["x"]`, false, "", false},
	{"chainId object params", "eth_chainId", `{}`, false, "", false},
	{"net_version", "net_version", `[]`, true, `"137"`, true},
	{"web3_clientVersion never", "web3_clientVersion", `[]`, false, "", false},
	{"eth_blockNumber never", "eth_blockNumber", `[]`, false, "", false},
	{"eth_gasPrice never", "eth_gasPrice", `[]`, false, "", false},
	{"unknown method", "eth_foo", `["0x1"]`, false, "", false},
	{"sendRawTransaction never", "eth_sendRawTransaction", `["0x00"]`, false, "", false},

	// tx by hash: result decides
	{"receipt below finalized", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, receipt(`"0x10"`), true},
	{"receipt at finalized", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, receipt(`"0x64"`), true},
	{"receipt above finalized", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, receipt(`"0x65"`), false},
	{"receipt blockNumber null", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, receipt(`null`), false},
	{"receipt blockNumber missing", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, `{"status":"0x1"}`, false},
	{"receipt not an object", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, `"0x10"`, false},
	{"receipt malformed", "eth_getTransactionReceipt", `["` + hashA + `"]`, true, `{"blockNumber"`, false},
	{"tx mined", "eth_getTransactionByHash", `["` + hashA + `"]`, true, `{"hash":"` + hashA + `","input":"0x\"}","blockNumber":"0x1"}`, true},
	{"tx pending", "eth_getTransactionByHash", `["` + hashA + `"]`, true, `{"hash":"` + hashA + `","blockNumber":null}`, false},
	{"tx uppercase hash", "eth_getTransactionByHash", `["` + strings.ToUpper(hashA) + `"]`, true, `{"blockNumber":"0x1"}`, true},
	{"tx not a hash", "eth_getTransactionByHash", `["0x1234"]`, false, "", false},
	{"tx no params", "eth_getTransactionByHash", ``, false, "", false},
	{"tx empty params", "eth_getTransactionByHash", `[]`, false, "", false},

	// by block hash: pinned, any non-null answer
	{"block by hash", "eth_getBlockByHash", `["` + hashA + `",false]`, true, `{"number":"0x1000","hash":"` + hashA + `"}`, true},
	{"block by hash full", "eth_getBlockByHash", `["` + hashA + `",true]`, true, `{"number":"0x1"}`, true},
	{"block by hash tag", "eth_getBlockByHash", `["latest",false]`, false, "", false},
	{"tx count by hash", "eth_getBlockTransactionCountByHash", `["` + hashA + `"]`, true, `"0x5"`, true},
	{"tx by block hash+index", "eth_getTransactionByBlockHashAndIndex", `["` + hashA + `","0x0"]`, true, `{"blockNumber":"0x999"}`, true},
	{"uncle by block hash+index", "eth_getUncleByBlockHashAndIndex", `["` + hashA + `","0x0"]`, true, `{"number":"0x1"}`, true},
	{"uncle count by hash", "eth_getUncleCountByBlockHash", `["` + hashA + `"]`, true, `"0x0"`, true},

	// by block number / tag / EIP-1898
	{"block below finalized", "eth_getBlockByNumber", `["0x10",false]`, true, `{"number":"0x10"}`, true},
	{"block at finalized", "eth_getBlockByNumber", `["0x64",true]`, true, `{"number":"0x64"}`, true},
	{"block above finalized", "eth_getBlockByNumber", `["0x65",false]`, false, "", false},
	{"block latest", "eth_getBlockByNumber", `["latest",false]`, false, "", false},
	{"block pending", "eth_getBlockByNumber", `["pending",false]`, false, "", false},
	{"block safe", "eth_getBlockByNumber", `["safe",false]`, false, "", false},
	{"block finalized tag", "eth_getBlockByNumber", `["finalized",false]`, false, "", false},
	{"block earliest", "eth_getBlockByNumber", `["earliest",false]`, true, `{"number":"0x0"}`, true},
	{"block tag wrong case", "eth_getBlockByNumber", `["Latest",false]`, false, "", false},
	{"block JSON number", "eth_getBlockByNumber", `[16,false]`, false, "", false},
	{"block 0x", "eth_getBlockByNumber", `["0x",false]`, false, "", false},
	{"block over 64 bits", "eth_getBlockByNumber", `["0x10000000000000000",false]`, false, "", false},
	{"block leading zeros", "eth_getBlockByNumber", `["0x0010",false]`, true, `{"number":"0x10"}`, true},
	{"block by hash string", "eth_getBlockByNumber", `["` + hashA + `",false]`, true, `{"number":"0x10"}`, true},
	{"block no params", "eth_getBlockByNumber", `[]`, false, "", false},
	{"block object params", "eth_getBlockByNumber", `{"block":"0x10"}`, false, "", false},
	{"block receipts", "eth_getBlockReceipts", `["0x10"]`, true, `[]`, true},
	{"block receipts latest", "eth_getBlockReceipts", `["latest"]`, false, "", false},
	{"block receipts above", "eth_getBlockReceipts", `["0x65"]`, false, "", false},
	{"block receipts by hash obj", "eth_getBlockReceipts", `[{"blockHash":"` + hashA + `"}]`, true, `[{"status":"0x1"}]`, true},
	{"tx by number+index", "eth_getTransactionByBlockNumberAndIndex", `["0x10","0x1"]`, true, `{"blockNumber":"0x10"}`, true},
	{"tx by number+index above", "eth_getTransactionByBlockNumberAndIndex", `["0x65","0x1"]`, false, "", false},
	{"tx by number+index pending", "eth_getTransactionByBlockNumberAndIndex", `["pending","0x1"]`, false, "", false},
	{"tx count by number", "eth_getBlockTransactionCountByNumber", `["0x10"]`, true, `"0x3"`, true},
	{"tx count by number pending", "eth_getBlockTransactionCountByNumber", `["pending"]`, false, "", false},
	{"uncle by number+index", "eth_getUncleByBlockNumberAndIndex", `["0x10","0x0"]`, true, `{"number":"0xf"}`, true},
	{"uncle count by number", "eth_getUncleCountByBlockNumber", `["latest"]`, false, "", false},

	{"call below finalized", "eth_call", `[` + callA + `,"0x10"]`, true, `"0x0000"`, true},
	{"call latest", "eth_call", `[` + callA + `,"latest"]`, false, "", false},
	{"call pending", "eth_call", `[` + callA + `,"pending"]`, false, "", false},
	{"call safe", "eth_call", `[` + callA + `,"safe"]`, false, "", false},
	{"call block omitted", "eth_call", `[` + callA + `]`, false, "", false},
	{"call above finalized", "eth_call", `[` + callA + `,"0x65"]`, false, "", false},
	{"call bare block hash", "eth_call", `[` + callA + `,"` + hashA + `"]`, true, `"0x01"`, true},
	{"call 1898 hash", "eth_call", `[` + callA + `,{"blockHash":"` + hashA + `"}]`, true, `"0x01"`, true},
	{"call 1898 hash canonical", "eth_call", `[` + callA + `,{"blockHash":"` + hashA + `","requireCanonical":true}]`, true, `"0x01"`, true},
	{"call 1898 canonical not bool", "eth_call", `[` + callA + `,{"blockHash":"` + hashA + `","requireCanonical":"yes"}]`, false, "", false},
	{"call 1898 number", "eth_call", `[` + callA + `,{"blockNumber":"0x10"}]`, true, `"0x01"`, true},
	{"call 1898 number above", "eth_call", `[` + callA + `,{"blockNumber":"0x65"}]`, false, "", false},
	{"call 1898 number latest", "eth_call", `[` + callA + `,{"blockNumber":"latest"}]`, false, "", false},
	{"call 1898 both", "eth_call", `[` + callA + `,{"blockHash":"` + hashA + `","blockNumber":"0x1"}]`, false, "", false},
	{"call 1898 short hash", "eth_call", `[` + callA + `,{"blockHash":"0x12"}]`, false, "", false},
	{"call 1898 unknown member", "eth_call", `[` + callA + `,{"blockNumber":"0x1","x":1}]`, false, "", false},
	{"call 1898 hash under number", "eth_call", `[` + callA + `,{"blockNumber":"` + hashA + `"}]`, false, "", false},
	{"call with state override", "eth_call", `[` + callA + `,"0x10",{"` + addrA + `":{"balance":"0x1"}}]`, true, `"0x"`, true},
	{"call dup keys by case", "eth_call", `[` + callA + `,"0x10",{"0xAB":{},"0xab":{}}]`, false, "", false},
	{"call dup keys", "eth_call", `[{"to":"` + addrA + `","to":"` + addrA + `"},"0x10"]`, false, "", false},
	{"call invalid json", "eth_call", `[{"to":,"0x10"]`, false, "", false},
	{"balance", "eth_getBalance", `["` + addrA + `","0x10"]`, true, `"0x0"`, true},
	{"balance latest", "eth_getBalance", `["` + addrA + `","latest"]`, false, "", false},
	{"balance omitted", "eth_getBalance", `["` + addrA + `"]`, false, "", false},
	{"balance above", "eth_getBalance", `["` + addrA + `","0x65"]`, false, "", false},
	{"code", "eth_getCode", `["` + addrA + `","0x10"]`, true, `"0x"`, true},
	{"code pending", "eth_getCode", `["` + addrA + `","pending"]`, false, "", false},
	{"storage", "eth_getStorageAt", `["` + addrA + `","0x0","0x10"]`, true, `"0x` + strings.Repeat("0", 64) + `"`, true},
	{"storage latest", "eth_getStorageAt", `["` + addrA + `","0x0","latest"]`, false, "", false},
	{"storage omitted", "eth_getStorageAt", `["` + addrA + `","0x0"]`, false, "", false},
	{"nonce", "eth_getTransactionCount", `["` + addrA + `","0x10"]`, true, `"0x7"`, true},
	{"nonce pending", "eth_getTransactionCount", `["` + addrA + `","pending"]`, false, "", false},
	{"proof", "eth_getProof", `["` + addrA + `",[],"0x10"]`, true, `{"balance":"0x0"}`, true},
	{"proof latest", "eth_getProof", `["` + addrA + `",[],"latest"]`, false, "", false},

	// logs
	{"logs below finalized", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10"}]`, true, `[{"blockNumber":"0x5"}]`, true},
	{"logs at finalized", "eth_getLogs", `[{"fromBlock":"0x64","toBlock":"0x64","address":"` + addrA + `"}]`, true, `[{"blockNumber":"0x64"}]`, true},
	{"logs empty result", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x10"}]`, true, `[ ]`, false},
	{"logs earliest", "eth_getLogs", `[{"fromBlock":"earliest","toBlock":"0x10","topics":[["` + hashA + `"],null]}]`, true, `[{}]`, true},
	{"logs to above", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x65"}]`, false, "", false},
	{"logs both above", "eth_getLogs", `[{"fromBlock":"0x65","toBlock":"0x66"}]`, false, "", false},
	{"logs to latest", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"latest"}]`, false, "", false},
	{"logs from safe", "eth_getLogs", `[{"fromBlock":"safe","toBlock":"0x10"}]`, false, "", false},
	{"logs to finalized tag", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"finalized"}]`, false, "", false},
	{"logs to pending", "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"pending"}]`, false, "", false},
	{"logs to omitted", "eth_getLogs", `[{"fromBlock":"0x1"}]`, false, "", false},
	{"logs from omitted", "eth_getLogs", `[{"toBlock":"0x10"}]`, false, "", false},
	{"logs empty filter", "eth_getLogs", `[{}]`, false, "", false},
	{"logs block hash", "eth_getLogs", `[{"blockHash":"` + hashA + `"}]`, true, `[{"logIndex":"0x0"}]`, true},
	{"logs block hash + range", "eth_getLogs", `[{"blockHash":"` + hashA + `","fromBlock":"0x1"}]`, false, "", false},
	{"logs hash as bound", "eth_getLogs", `[{"fromBlock":"` + hashA + `","toBlock":"0x10"}]`, false, "", false},
	{"logs no filter", "eth_getLogs", `[]`, false, "", false},
	{"logs filter not object", "eth_getLogs", `["0x1"]`, false, "", false},
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			it := item(tc.method, tc.params)
			_, got := Cacheable(137, it, fin)
			if got != tc.cacheable {
				t.Fatalf("Cacheable = %v, want %v", got, tc.cacheable)
			}
			if tc.result != "" {
				if got := Storable(it, ok(tc.result), fin); got != tc.storable {
					t.Errorf("Storable(%s) = %v, want %v", tc.result, got, tc.storable)
				}
			}
			if !tc.cacheable {
				if Storable(it, ok(`"0x1"`), fin) {
					t.Error("uncacheable call judged storable")
				}
				return
			}
			if Storable(it, &jsonrpc.Response{Error: jsonrpc.InternalError("boom")}, fin) {
				t.Error("error response judged storable")
			}
			revert := &jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeExecutionReverted, Message: "execution reverted"}}
			if Storable(it, revert, fin) {
				t.Error("revert judged storable")
			}
			for _, null := range []string{`null`, ` null `, ``} {
				if Storable(it, ok(null), fin) {
					t.Errorf("result %q judged storable", null)
				}
			}
			if Storable(it, nil, fin) {
				t.Error("nil response judged storable")
			}
		})
	}
}

func TestRulesInvalidItem(t *testing.T) {
	it := item("eth_chainId", "")
	it.Err = jsonrpc.InvalidRequest("bad")
	if _, ok := Cacheable(1, it, fin); ok {
		t.Fatal("invalid item cacheable")
	}
}

// The finalized head is re-checked after forwarding: if it went backwards
// (pool reset), an answer that was cacheable at lookup is not stored.
func TestStorableRechecksFinalized(t *testing.T) {
	it := item("eth_getBlockByNumber", `["0x64",false]`)
	if _, ok := Cacheable(1, it, 100); !ok {
		t.Fatal("not cacheable at 100")
	}
	if Storable(it, ok(`{"number":"0x64"}`), 99) {
		t.Fatal("stored above the finalized head")
	}
	// Genesis and hash-pinned calls need no finality at all.
	if _, ok := Cacheable(1, item("eth_getBlockByNumber", `["0x0",false]`), 0); !ok {
		t.Fatal("genesis not cacheable with unknown finalized head")
	}
	if _, ok := Cacheable(1, item("eth_getBlockByNumber", `["0x1",false]`), 0); ok {
		t.Fatal("block 1 cacheable with unknown finalized head")
	}
	// A receipt becomes storable once its block is final.
	r := item("eth_getTransactionReceipt", `["`+hashA+`"]`)
	if Storable(r, ok(receipt(`"0x80"`)), 100) || !Storable(r, ok(receipt(`"0x80"`)), 128) {
		t.Fatal("receipt finality not tracked")
	}
}

func TestResultBlockNumber(t *testing.T) {
	cases := map[string]uint64{
		`{"blockNumber":"0x10"}`: 16,
		` { "a" : [1,{"blockNumber":"0x1"}], "blockNumber" : "0xff" } `: 255,
		`{"a":"}\"{","blockNumber":"0x2"}`:                              2,
		`{"logs":[{"blockNumber":"0x3"}],"blockNumber":"0x4"}`:          4,
	}
	for in, want := range cases {
		if got, ok := resultBlockNumber([]byte(in)); !ok || got != want {
			t.Errorf("%s: got %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{``, `{`, `{"blockNumber"`, `{"blockNumber":}`, `{"blockNumber":null}`,
		`{"blockNumber":16}`, `[{"blockNumber":"0x1"}]`, `{"x":1 "blockNumber":"0x1"}`, `{"a":{"blockNumber":"0x1"}}`,
		`{"a":"\`, `{"a":[`, `{"a"`, `{"a":1,`} {
		if _, ok := resultBlockNumber([]byte(in)); ok {
			t.Errorf("%q: found a block number", in)
		}
	}
}
