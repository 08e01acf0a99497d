package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoRPC is an rpc handler that answers with its input, spelled so that
// any two inputs that differ in a bit differ in text (%#v writes -0 as -0
// and a map's keys sorted).
func echoRPC(_ context.Context, _ *sdk.CallToolRequest, in rpcIn) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%#v", in)}}}
}

// sdkHTTP is the SDK's stateless Streamable HTTP handler (as the door
// runs it) of a server whose rpc tool register registers.
func sdkHTTP(register func(s *Server)) http.Handler {
	s := &Server{sdk: sdk.NewServer(&sdk.Implementation{Name: "tollgate", Version: "test"}, nil)}
	register(s)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: MaxBodyBytes})
}

// callRPC POSTs a tools/call of rpc with args (the exact bytes, as a
// client sends them) and returns the answer's body.
func callRPC(t testing.TB, h http.Handler, args []byte) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":` + string(args) + `}}`
	r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return fmt.Sprintf("%d %s", w.Code, b)
}

// sameInput is reflect.DeepEqual with floats compared bit for bit (0 and
// -0 are different params: the node sees "0" or "-0").
func sameInput(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !sameInput(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameInput(v, w) {
				return false
			}
		}
		return true
	case rpcIn:
		y, ok := b.(rpcIn)
		return ok && x.Chain == y.Chain && x.Method == y.Method && sameInput(x.Params, y.Params)
	}
	return reflect.DeepEqual(a, b)
}

// rawToolSeeds are argument shapes a stranger may send: what an agent
// sends, and duplicate keys, keys in another case, escapes, NUL, invalid
// UTF-8, number forms, nesting, null and not-objects.
var rawToolSeeds = []string{
	`{"method":"eth_blockNumber"}`,
	`{"chain":"base","method":"eth_call","params":[{"to":"0x01","data":"0x<&>"},"latest"]}`,
	`{"method":"eth_getLogs","params":[12345678901234567890,1.5e-7,-0,1e21,true,null,{"b":1,"a":[]},[],"é"]}`,
	`{"method":"x","params":null}`,
	`{"method":"x","params":[]}`,
	`{"method":""}`,
	`{"method":"x","params":[1e400]}`,
	`{"method":"x","params":[-1e400,1e-400,-1e-400,4.9e-324,1.7976931348623157e308]}`,
	`{"method":"x","params":[0.1,1E2,1e+2,-0.0,0e0,00,01,1.,.1,-]}`,
	`{"method":"x","params":"nope"}`,
	`{"method":"x","params":{"a":1}}`,
	`{"method":5}`,
	`{"method":null}`,
	`{"chain":null,"method":"x"}`,
	`{"chain":137,"method":"x"}`,
	`{"chain":8453,"method":"eth_chainId"}`,
	`{"Method":"x"}`,
	`{"METHOD":"eth_x","method":"eth_y"}`,
	`{"method":"eth_y","Chain":"base"}`,
	`{"method":"x","extra":1}`,
	`{"method":"x","method":"y"}`,
	`{"method":"x","method":5}`,
	`{"method":5,"method":"x"}`,
	`{"chain":"base","chain":"polygon","method":"x"}`,
	`{"method":"x","params":[1],"params":null}`,
	`{"method":"x","params":[{"a":1,"a":2}]}`,
	`{"method":"x\u00e9\ud800","params":["\n<\"\\"]}`,
	`{"method":"x","params":["\ud83d\ude00"]}`,
	`{"meth\u006fd":"x"}`,
	`{"method":"x\u0000"}`,
	`{"method":"x","params":["\u0000"]}`,
	"{\"method\":\"x\xff\"}",
	"{\"method\":\"x\",\"params\":[\"\xc3\"]}",
	"{\"method\":\"x\xe2\x80\xa8\"}",
	"{\"method\":\"x\x7f\"}",
	`{"method":"x"} `,
	` {"method":"x"}`,
	"{\"method\":\"x\"}\n",
	`{}`,
	`[]`,
	`[{"method":"x"}]`,
	`"method"`,
	`null`,
	`7`,
	`true`,
	`{"method":"x","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"method":"x","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"method":"x","params":["` + strings.Repeat("a", 70000) + `"]}`,
}

// FuzzRawRPCToolIsTheTypedTool: for any arguments (as exact bytes in a
// body the door lets through: valid JSON), the rpc tool registered raw
// answers byte for byte as the SDK's typed tool does, over the SDK's own
// HTTP handler; and whenever the quick path takes the arguments, it reads
// them bit for bit as the SDK's steps do.
func FuzzRawRPCToolIsTheTypedTool(f *testing.F) {
	for _, s := range rawToolSeeds {
		f.Add([]byte(s))
	}
	typed := sdkHTTP(func(s *Server) { add(s, "rpc", false, echoRPC) })
	raw := sdkHTTP(func(s *Server) { addRaw(s, "rpc", false, echoRPC, rpcArgs) })
	rt := &rawTool[rpcIn]{fast: rpcArgs, resolved: mustResolve(f)}
	f.Fuzz(func(t *testing.T, args []byte) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":` + string(args) + `}}`
		if len(args) == 0 || len(body) > MaxBodyBytes || !json.Valid([]byte(body)) {
			return // the door refuses it before the SDK (checkMessage)
		}
		if a, b := callRPC(t, typed, args), callRPC(t, raw, args); !sameAnswer(a, b, func() string { return callRPC(t, typed, args) }) {
			t.Fatalf("arguments %q:\ntyped %s\n  raw %s", args, a, b)
		}
		in, ok := rt.quick(args)
		if !ok {
			return
		}
		slow, err := applyInputSchema(args, rt.resolved)
		if err != nil {
			t.Fatalf("quick took %q (%#v); the schema refuses it: %v", args, in, err)
		}
		var want rpcIn
		if err := sdkUnmarshal(slow, &want); err != nil {
			t.Fatalf("quick took %q (%#v); the SDK's decode refuses it: %v", args, in, err)
		}
		if !sameInput(in, want) {
			t.Fatalf("arguments %q:\nquick %#v\n  sdk %#v", args, in, want)
		}
		if b1, b2 := batchOf(in), batchOf(want); !bytes.Equal(b1, b2) {
			t.Fatalf("arguments %q: batches differ:\nquick %s\n  sdk %s", args, b1, b2)
		}
	})
}

// extraProps is the schema's list of unexpected properties, which the
// validator gathers from a map in Go's random order.
var extraProps = regexp.MustCompile(`unexpected additional properties \[([^\]]*)\]`)

// sameAnswer: raw is typed's answer, up to what the SDK itself answers
// differently from one call to the next (the validator ranges over maps:
// which of several bad properties it names, and in what order it lists
// unexpected ones). again is a fresh typed answer.
func sameAnswer(typed, raw string, again func() string) bool {
	norm := func(s string) string {
		return extraProps.ReplaceAllStringFunc(s, func(m string) string {
			f := strings.Fields(extraProps.FindStringSubmatch(m)[1])
			sort.Strings(f)
			return strings.Join(f, " ")
		})
	}
	raw = norm(raw)
	for i := 0; i < 200; i++ {
		if norm(typed) == raw {
			return true
		}
		typed = again()
	}
	return false
}

func batchOf(in rpcIn) []byte {
	b, err := encodeBatch([]call{{in.Method, in.Params}})
	if err != nil {
		return []byte("error: " + err.Error())
	}
	return b
}

// mustResolve is rpc's input schema, resolved as addRaw (and the SDK's
// AddTool) resolve it.
func mustResolve(tb testing.TB) *jsonschema.Resolved {
	tb.Helper()
	schema, err := jsonschema.ForType(reflect.TypeFor[rpcIn](), &jsonschema.ForOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		tb.Fatal(err)
	}
	return resolved
}

// FuzzPerCallEncodings: for any method, params (any JSON array a client
// may send), node result and chain, the batch encodeBatch writes and the
// result rpcOut encodes to are json.Marshal's bytes of the maps they
// replaced (or the same error); and headerInt reads any header value as
// strconv.ParseInt(v, 10, 64) does.
func FuzzPerCallEncodings(f *testing.F) {
	f.Add("eth_call", []byte(`[{"to":"0x01","data":"0x<&>"},"latest"]`), []byte(`{ "a" : [1, 2], "h": "<&>" }`), uint64(137), "999")
	f.Add("x_\u2028<y>", []byte(`[1.5,12345678901234567890,null,true,["a"],-0,1e21]`), []byte(`"0x4b7c3a1"`), uint64(0), "-9223372036854775808")
	f.Add("eth_blockNumber", []byte(`null`), []byte(``), ^uint64(0), "+007")
	f.Add("\xff", []byte(`[]`), []byte(`nul`), uint64(1), "9223372036854775808")
	f.Fuzz(func(t *testing.T, method string, params, result []byte, chainID uint64, header string) {
		var p []any
		if segUnmarshal(params, &p) == nil {
			calls := []call{{Method: method, Params: p}, {Method: method}}
			batch := make([]map[string]any, len(calls))
			for i, c := range calls {
				ps := c.Params
				if ps == nil {
					ps = []any{}
				}
				batch[i] = map[string]any{"jsonrpc": "2.0", "id": i, "method": c.Method, "params": ps}
			}
			want, errW := json.Marshal(batch)
			got, errG := encodeBatch(calls)
			if !bytes.Equal(got, want) || fmt.Sprint(errG) != fmt.Sprint(errW) {
				t.Fatalf("encodeBatch(%q, %s):\n got %s (%v)\nwant %s (%v)", method, params, got, errG, want, errW)
			}
		}
		r := json.RawMessage(result)
		if len(result) == 0 {
			r = nil
		}
		want, errW := json.Marshal(map[string]any{"chain_id": chainID, "method": method, "result": r})
		got, errG := json.Marshal(rpcOut{ChainID: chainID, Method: method, Result: r})
		if !bytes.Equal(got, want) || fmt.Sprint(errG) != fmt.Sprint(errW) {
			t.Fatalf("rpcOut(%d, %q, %q):\n got %s (%v)\nwant %s (%v)", chainID, method, result, got, errG, want, errW)
		}
		n, ok := headerInt(header)
		wn, err := strconv.ParseInt(header, 10, 64)
		if ok != (err == nil) || (ok && n != wn) {
			t.Fatalf("headerInt(%q) = %d, %v; ParseInt: %d, %v", header, n, ok, wn, err)
		}
	})
}

// segUnmarshal decodes as the SDK does (what a tool's params come from).
func segUnmarshal(b []byte, v any) error { return sdkUnmarshal(b, v) }
