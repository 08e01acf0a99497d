package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rpc tool registered raw (rawtool.go) is listed and answers exactly
// as the same tool registered through the SDK's typed AddTool: the same
// tools/list entry, and for every arguments object (plain ones the quick
// path takes, and escaped, mistyped, unknown, missing, duplicated, too
// deep or not objects, which take the SDK's steps) the same input reaches
// the handler or the same error comes back. Both run in the real SDK over
// its in-memory transport.
func TestRawRPCToolAnswersAsTheSDKsTypedTool(t *testing.T) {
	echo := func(_ context.Context, _ *sdk.CallToolRequest, in rpcIn) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%#v", in)}}}
	}
	connect := func(register func(s *Server)) *sdk.ClientSession {
		s := &Server{sdk: sdk.NewServer(&sdk.Implementation{Name: "tollgate", Version: "test"}, nil)}
		register(s)
		ct, st := sdk.NewInMemoryTransports()
		if _, err := s.sdk.Connect(context.Background(), st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "test"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	typed := connect(func(s *Server) { add(s, "rpc", false, echo) })
	raw := connect(func(s *Server) { addRaw(s, "rpc", false, echo, rpcArgs) })

	lt, err1 := typed.ListTools(context.Background(), nil)
	lr, err2 := raw.ListTools(context.Background(), nil)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	bt, _ := json.Marshal(lt)
	br, _ := json.Marshal(lr)
	if string(bt) != string(br) {
		t.Fatalf("tools/list differs:\ntyped %s\n  raw %s", bt, br)
	}

	deep := `{"method":"x","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`
	for _, args := range []string{
		`{"method":"eth_blockNumber"}`,
		`{"chain":"base","method":"eth_call","params":[{"to":"0x01","data":"0x<&>"},"latest"]}`,
		`{"method":"eth_getLogs","params":[12345678901234567890,1.5e-7,-0,1e21,true,null,{"b":1,"a":[]},[],"é\u2028"]}`,
		`{"method":"x","params":null}`,
		`{"method":"x","params":[]}`,
		`{"method":""}`,
		`{"method":"x","params":[1e400]}`,
		`{"method":"x","params":"nope"}`,
		`{"method":"x","params":{"a":1}}`,
		`{"method":5}`,
		`{"method":null}`,
		`{"chain":null,"method":"x"}`,
		`{"chain":137,"method":"x"}`,
		`{"Method":"x"}`,
		`{"method":"x","extra":1}`,
		`{"method":"x","method":"y"}`,
		`{"method":"x\u00e9\ud800","params":["\n<\"\\"]}`,
		`{"method":"x","params":["\ud83d\ude00"]}`,
		`{}`,
		`[]`,
		`"method"`,
		`null`,
		`7`,
		deep,
		"",
	} {
		params := &sdk.CallToolParams{Name: "rpc"}
		if args != "" {
			params.Arguments = json.RawMessage(args)
		}
		rt, errT := typed.CallTool(context.Background(), params)
		rr, errR := raw.CallTool(context.Background(), params)
		if fmt.Sprint(errT) != fmt.Sprint(errR) {
			t.Errorf("%.80s: errors differ:\ntyped %v\n  raw %v", args, errT, errR)
			continue
		}
		jt, _ := json.Marshal(rt)
		jr, _ := json.Marshal(rr)
		if string(jt) != string(jr) {
			t.Errorf("%.80s: results differ:\ntyped %s\n  raw %s", args, jt, jr)
		}
	}
}

// The quick path takes what an agent sends, and leaves to the SDK's steps
// whatever it cannot be sure of.
func TestRawToolQuickPath(t *testing.T) {
	rt := &rawTool[rpcIn]{fast: rpcArgs}
	for args, want := range map[string]bool{
		`{"method":"eth_blockNumber"}`: true,
		`{"chain":"base","method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`: true,
		`{"method":"x","params":null}`:   true,
		`{"method":"x","params":["\n"]}`: false, // an escape
		`{"method":"x","extra":1}`:       false,
		`{"method":5}`:                   false,
		`{"chain":null,"method":"x"}`:    false,
		`{}`:                             false,
		`[]`:                             false,
		`null`:                           false,
		`{"method":"x"} x`:               false,
	} {
		if _, ok := rt.quick(json.RawMessage(args)); ok != want {
			t.Errorf("quick(%s) = %v, want %v", args, ok, want)
		}
	}
}
