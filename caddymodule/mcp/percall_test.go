package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// The batch a tool hands the core is byte for byte what json.Marshal made
// of the maps it used to build (keys sorted, params [] when nil, strings
// escaped as encoding/json escapes them), and rpc's result is what its map
// encoded to: the wire does not change.
func TestPerCallEncodingsAreTheMapsBytes(t *testing.T) {
	for _, calls := range [][]call{
		{{Method: "eth_blockNumber"}},
		{{Method: "eth_getBalance", Params: []any{"0x00000000000000000000000000000000000000aa", "latest"}}},
		{{Method: "eth_call", Params: []any{map[string]any{"to": "0x01", "data": "0x<&>"}, "latest"}}, {Method: "eth_chainId", Params: []any{}},
			{Method: "x_\u2028<y>", Params: []any{1.5, 12345678901234567890.0, nil, true, []any{"a"}}}},
	} {
		batch := make([]map[string]any, len(calls))
		for i, c := range calls {
			params := c.Params
			if params == nil {
				params = []any{}
			}
			batch[i] = map[string]any{"jsonrpc": "2.0", "id": i, "method": c.Method, "params": params}
		}
		want, err := json.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeBatch(calls)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("encodeBatch(%v):\n got %s (%v)\nwant %s", calls, got, err, want)
		}
	}
	for _, r := range []json.RawMessage{json.RawMessage(`"0x4b7c3a1"`), json.RawMessage(`{ "a" : [1, 2], "h": "<&>" }`), nil, json.RawMessage(`null`)} {
		want, err := json.Marshal(map[string]any{"chain_id": uint64(137), "method": "eth_<x>", "result": r})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(rpcOut{ChainID: 137, Method: "eth_<x>", Result: r})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("rpcOut %s:\n got %s (%v)\nwant %s", r, got, err, want)
		}
	}
}

// cannedBackend answers every batch with one result per call and the
// headers a funded key's answer carries: the room's translation around the
// core, without the core (whose own cost the gateway's tests and make bench
// measure).
type cannedBackend struct{}

func (cannedBackend) Chains() *chains.Table                                     { return chains.Builtin() }
func (cannedBackend) Method(uint64, string) evm.Method                          { return evm.Method{} }
func (cannedBackend) Limits() (int64, int)                                      { return 1 << 20, 100 }
func (cannedBackend) Head(uint64) uint64                                        { return 0 }
func (cannedBackend) Meter() *meter.Meter                                       { return nil }
func (cannedBackend) Document(http.ResponseWriter, *http.Request, string) error { return nil }
func (cannedBackend) Serve(_ context.Context, _ *payment.Caller, hdr http.Header, _ uint64, msg *jsonrpc.Message) Served {
	hdr.Set("X-Tollgate-Credits-Remaining", "999")
	hdr.Set("X-Tollgate-Payer", "apikey")
	hdr.Set("X-Tollgate-Request-Id", "req-1")
	resps := make([]jsonrpc.Response, len(msg.Items))
	for i, it := range msg.Items {
		resps[i] = jsonrpc.ResultResponse(it.ID, json.RawMessage(`"0x4b7c3a1"`))
	}
	return Served{Resps: resps, Status: http.StatusOK, Booked: true, Charged: len(resps)}
}

// The rpc tool's own work per call (what the room adds around the core:
// read the caller, build and parse the batch, read the answer, encode the
// result) allocates at most 40 objects: 33 measured; the maps it built
// before took 56. The SDK's decoding and the core are not counted here.
func TestRPCToolAllocationsPerCall(t *testing.T) {
	s := New(cannedBackend{}, "test", zap.NewNop())
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	r.Header.Set("X-API-Key", "tg_test")
	tok := "7"
	r.Header.Set(originHeader, tok)
	s.requests.Store(tok, r)
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "rpc"}, Extra: &sdk.RequestExtra{Header: r.Header}}
	in := rpcIn{Method: "eth_blockNumber"}
	res := s.rpc(context.Background(), req, in)
	if res.IsError || string(res.StructuredContent.(json.RawMessage)) != `{"chain_id":137,"method":"eth_blockNumber","result":"0x4b7c3a1"}` {
		t.Fatalf("rpc tool result: %+v", res)
	}
	if got := res.Meta["tollgate/credits-remaining"]; got != int64(999) {
		t.Fatalf("meta: %v", res.Meta)
	}
	allocs := testing.AllocsPerRun(200, func() { s.rpc(context.Background(), req, in) })
	t.Logf("allocations per rpc tool call (room only): %.0f", allocs)
	if allocs > 40 {
		t.Errorf("the rpc tool's translation allocates %.0f objects per call, want at most 40", allocs)
	}
}

// headerInt reads exactly what strconv.ParseInt(v, 10, 64) reads.
func TestHeaderIntIsParseInt(t *testing.T) {
	for _, v := range []string{"0", "999", "-5", "+7", "007", "apikey", "req-1", "", "-", "+-1", "--1", "1-", "1 ", " 1", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "1e3", "0x10", "١٢"} {
		n, ok := headerInt(v)
		want, err := strconv.ParseInt(v, 10, 64)
		if ok != (err == nil) || (ok && n != want) {
			t.Errorf("headerInt(%q) = %d, %v; ParseInt: %d, %v", v, n, ok, want, err)
		}
	}
}
