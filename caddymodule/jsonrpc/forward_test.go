package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustParse(t testing.TB, body string) *Message {
	t.Helper()
	msg, rej := Parse([]byte(body), Options{})
	if rej != nil {
		t.Fatalf("Parse(%s): %s", body, rej.Body())
	}
	return msg
}

func TestEncodeUpstream(t *testing.T) {
	t.Run("single call is sent as an object with id 0", func(t *testing.T) {
		msg := mustParse(t, `{"jsonrpc":"2.0","method":"eth_chainId","id":"caller-id"}`)
		out, err := EncodeUpstream(msg.Items)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"jsonrpc":"2.0","id":0,"method":"eth_chainId"}`; string(out) != want {
			t.Fatalf("got %s want %s", out, want)
		}
	})
	t.Run("batch rewrites ids and forwards notifications", func(t *testing.T) {
		msg := mustParse(t, `[{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xab", "latest"],"id":1.0},
			{"jsonrpc":"2.0","method":"eth\u005fnotify","params":{"a":"\u00e9"}},
			{"jsonrpc":"2.0","method":"eth_blockNumber","id":1.0}]`)
		out, err := EncodeUpstream(msg.Items)
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"jsonrpc":"2.0","id":0,"method":"eth_getBalance","params":["0xab", "latest"]},` +
			`{"jsonrpc":"2.0","id":1,"method":"eth_notify","params":{"a":"\u00e9"}},` +
			`{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}]`
		if string(out) != want {
			t.Fatalf("got  %s\nwant %s", out, want)
		}
		// What we send must itself be a valid batch of requests.
		back := mustParse(t, string(out))
		for k, it := range back.Items {
			if it.IsNotification() || it.Method != msg.Items[k].Method || string(it.Params) != string(msg.Items[k].Params) {
				t.Fatalf("round trip item %d: %+v", k, it)
			}
		}
	})
	t.Run("method names are re-escaped", func(t *testing.T) {
		msg := mustParse(t, `{"jsonrpc":"2.0","method":"a\"b\\c\u0001\u2028","id":1}`)
		out, _ := EncodeUpstream(msg.Items)
		back := mustParse(t, string(out))
		if back.Items[0].Method != msg.Items[0].Method {
			t.Fatalf("%q vs %q (%s)", back.Items[0].Method, msg.Items[0].Method, out)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		if _, err := EncodeUpstream(nil); !errors.Is(err, ErrNothingToSend) {
			t.Fatalf("empty: %v", err)
		}
		msg := mustParse(t, `[1]`)
		if _, err := EncodeUpstream(msg.Items); !errors.Is(err, ErrForwardInvalid) {
			t.Fatalf("invalid: %v", err)
		}
	})
}

// callerItems parses a batch of n calls with distinctive caller ids:
// a float, a string, null, a notification, and a big number.
func callerItems(t testing.TB) []Item {
	msg := mustParse(t, `[{"jsonrpc":"2.0","method":"a","id":1.0},{"jsonrpc":"2.0","method":"b","id":"x"},
		{"jsonrpc":"2.0","method":"c","id":null},{"jsonrpc":"2.0","method":"d"},
		{"jsonrpc":"2.0","method":"e","id":123456789012345678901234567890}]`)
	return msg.Items
}

var callerIDs = []string{"1.0", `"x"`, "null", "", "123456789012345678901234567890"}

func TestMatchReplies(t *testing.T) {
	type want struct {
		result string // raw result; "" when an error is expected
		code   int    // upstream error code passed through, or -32603 when err
		err    error  // per-call Err
	}
	ok := func(r string) want { return want{result: r} }
	rpcErr := func(code int) want { return want{code: code} }
	fail := func(err error) want { return want{code: -32603, err: err} }

	tests := []struct {
		name    string
		body    string
		want    []want
		bodyErr error // expected error from MatchReplies (errors.Is), nil = none
	}{
		{"in order",
			`[{"jsonrpc":"2.0","id":0,"result":"a"},{"jsonrpc":"2.0","id":1,"result":"b"},{"jsonrpc":"2.0","id":2,"result":"c"},{"jsonrpc":"2.0","id":3,"result":"d"},{"jsonrpc":"2.0","id":4,"result":"e"}]`,
			[]want{ok(`"a"`), ok(`"b"`), ok(`"c"`), ok(`"d"`), ok(`"e"`)}, nil},
		{"reordered, whitespace, extra members",
			" [ {\"id\":4,\"jsonrpc\":\"2.0\",\"result\":{\"n\":12345678901234567890}} ,{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null},{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":[1,2]},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"0x\"},{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true,\"x-extra\":1} ] ",
			[]want{ok(`[1,2]`), ok(`true`), ok(`null`), ok(`"0x"`), ok(`{"n":12345678901234567890}`)}, nil},
		{"upstream errors pass through with data",
			`[{"jsonrpc":"2.0","id":0,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}},{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}},{"jsonrpc":"2.0","id":2,"result":"c"},{"jsonrpc":"2.0","id":3,"result":"d"},{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid \"params\"","data":null},"result":null}]`,
			[]want{rpcErr(3), rpcErr(-32000), ok(`"c"`), ok(`"d"`), rpcErr(-32602)}, nil},
		{"missing, duplicate, stray",
			`[{"jsonrpc":"2.0","id":0,"result":"a"},{"jsonrpc":"2.0","id":1,"result":"b"},{"jsonrpc":"2.0","id":1,"result":"b2"},{"jsonrpc":"2.0","id":"2","result":"s"},{"jsonrpc":"2.0","id":2.0,"result":"f"},{"jsonrpc":"2.0","id":-0,"result":"z"},{"jsonrpc":"2.0","id":99,"result":"z"},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}},{"jsonrpc":"2.0","id":4,"result":"e"},7,"x",null]`,
			[]want{ok(`"a"`), fail(ErrDuplicateReply), fail(ErrNoReply), fail(ErrNoReply), ok(`"e"`)}, ErrDuplicateReply},
		{"malformed replies",
			`[{"id":0,"result":"no version"},{"jsonrpc":"1.0","id":1,"result":"b"},{"jsonrpc":"2.0","id":2},{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}},{"jsonrpc":"2.0","id":4,"error":{"code":1.5,"message":"m"}}]`,
			[]want{fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply)}, ErrMalformedReply},
		{"malformed error objects",
			`[{"jsonrpc":"2.0","id":0,"error":{"message":"no code"}},{"jsonrpc":"2.0","id":1,"error":{"code":-1}},{"jsonrpc":"2.0","id":2,"error":"string"},{"jsonrpc":"2.0","id":3,"error":{"code":"1","message":"m"}},{"jsonrpc":"2.0","id":4,"error":{"code":1,"code":2,"message":"m"}}]`,
			[]want{fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply)}, ErrMalformedReply},
		{"duplicate member in a reply",
			`[{"jsonrpc":"2.0","id":0,"result":"a","result":"b"},{"jsonrpc":"2.0","id":1,"result":"b"},{"jsonrpc":"2.0","id":2,"result":"c"},{"jsonrpc":"2.0","id":3,"result":"d"},{"jsonrpc":"2.0","id":4,"result":"e"}]`,
			[]want{fail(ErrNoReply), ok(`"b"`), ok(`"c"`), ok(`"d"`), ok(`"e"`)}, ErrNoReply},
		{"empty array", `[]`,
			[]want{fail(ErrNoReply), fail(ErrNoReply), fail(ErrNoReply), fail(ErrNoReply), fail(ErrNoReply)}, ErrNoReply},
		{"html error page", `<html><body>502 Bad Gateway</body></html>`,
			[]want{fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON)}, ErrReplyNotJSON},
		{"truncated", `[{"jsonrpc":"2.0","id":0,"result":"a"},{"jsonrpc":"2.0","id":1,"res`,
			[]want{fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON)}, ErrReplyNotJSON},
		{"empty body", ``,
			[]want{fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON), fail(ErrReplyNotJSON)}, ErrReplyNotJSON},
		{"scalar body", `"ok"`,
			[]want{fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply)}, ErrMalformedReply},
		{"single reply to a batch", `{"jsonrpc":"2.0","id":3,"result":"d"}`,
			[]want{fail(ErrNoReply), fail(ErrNoReply), fail(ErrNoReply), ok(`"d"`), fail(ErrNoReply)}, ErrNoReply},
		{"single object with a stray id", `{"jsonrpc":"2.0","id":"zz","result":"d"}`,
			[]want{fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply), fail(ErrMalformedReply)}, ErrMalformedReply},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := callerItems(t)
			replies, err := MatchReplies(items, []byte(tc.body))
			if !errors.Is(err, tc.bodyErr) || (tc.bodyErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.bodyErr)
			}
			if len(replies) != len(items) {
				t.Fatalf("%d replies for %d items", len(replies), len(items))
			}
			for k, w := range tc.want {
				r := replies[k]
				if !errors.Is(r.Err, w.err) || (w.err == nil) != (r.Err == nil) {
					t.Errorf("reply %d: err %v, want %v", k, r.Err, w.err)
				}
				if string(r.ID) != callerIDs[k] {
					t.Errorf("reply %d: id %q, want caller's %q", k, r.ID, callerIDs[k])
				}
				enc := r.AppendJSON(nil)
				if _, err := checkResponse(enc); err != nil {
					t.Errorf("reply %d encodes badly: %v", k, err)
				}
				if w.result != "" {
					if r.Error != nil || string(r.Result) != w.result {
						t.Errorf("reply %d: result %s err %v, want %s", k, r.Result, r.Error, w.result)
					}
				} else if r.Error == nil || r.Error.Code != w.code {
					t.Errorf("reply %d: error %v, want code %d", k, r.Error, w.code)
				}
			}
		})
	}
}

func TestMatchRepliesDetails(t *testing.T) {
	t.Run("single call, object or array back", func(t *testing.T) {
		items := mustParse(t, `{"jsonrpc":"2.0","method":"eth_chainId","id":"q"}`).Items
		for _, body := range []string{`{"jsonrpc":"2.0","id":0,"result":"0x89"}`, `[{"jsonrpc":"2.0","id":0,"result":"0x89"}]`} {
			replies, err := MatchReplies(items, []byte(body))
			if err != nil || string(replies[0].Result) != `"0x89"` || string(replies[0].ID) != `"q"` {
				t.Fatalf("%s: %v %+v", body, err, replies[0])
			}
		}
	})
	t.Run("whole-request error object", func(t *testing.T) {
		items := callerItems(t)
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limited"}}`,
			`{"jsonrpc":"2.0","error":{"code":-32014,"message":"too many RPC calls in batch request"}}`,
		} {
			replies, err := MatchReplies(items, []byte(body))
			var ue *UpstreamError
			if !errors.As(err, &ue) || ue.Err == nil || ue.Err.Code >= 0 {
				t.Fatalf("%s: error %v", body, err)
			}
			if !strings.Contains(ue.Error(), ue.Err.Message) {
				t.Fatalf("Error() %q", ue.Error())
			}
			for k, r := range replies {
				if !errors.As(r.Err, &ue) || r.Error.Code != CodeInternalError || string(r.ID) != callerIDs[k] {
					t.Fatalf("reply %d: %+v", k, r)
				}
			}
		}
	})
	t.Run("error object relayed byte for byte, message decoded", func(t *testing.T) {
		items := mustParse(t, `{"jsonrpc":"2.0","method":"eth_call","id":7}`).Items
		replies, err := MatchReplies(items, []byte(`{"jsonrpc":"2.0","id":0,"error":{"code":3,"message":"execution reverted: \u00e9\"","data":{"x":[1, 2]}}}`))
		if err != nil {
			t.Fatal(err)
		}
		e := replies[0].Error
		if e.Message != `execution reverted: é"` || string(e.Data) != `{"x":[1, 2]}` {
			t.Fatalf("%+v", e)
		}
		out := replies[0].AppendJSON(nil)
		// As the upstream wrote it: its escapes, spacing and members.
		want := `{"jsonrpc":"2.0","id":7,"error":{"code":3,"message":"execution reverted: \u00e9\"","data":{"x":[1, 2]}}}`
		if string(out) != want {
			t.Fatalf("got  %s\nwant %s", out, want)
		}
	})
	t.Run("full round trip restores caller ids in caller order", func(t *testing.T) {
		msg := mustParse(t, `[{"jsonrpc":"2.0","method":"a","id":"1"},1,{"jsonrpc":"2.0","method":"b","id":1},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"c","id":1.0}]`)
		calls, index := msg.Calls()
		up, err := EncodeUpstream(calls)
		if err != nil {
			t.Fatal(err)
		}
		// A fake upstream answering in reverse order with method names.
		fwd := mustParse(t, string(up))
		var b strings.Builder
		b.WriteByte('[')
		for k := len(fwd.Items) - 1; k >= 0; k-- {
			b.WriteString(`{"jsonrpc":"2.0","id":` + string(fwd.Items[k].ID) + `,"result":"` + fwd.Items[k].Method + `"}`)
			if k > 0 {
				b.WriteByte(',')
			}
		}
		b.WriteByte(']')
		replies, err := MatchReplies(calls, []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		resps := make([]Response, len(msg.Items))
		for k, r := range replies {
			resps[index[k]] = r.Response
		}
		out, status := EncodeAnswer(msg, resps)
		want := `[{"jsonrpc":"2.0","id":"1","result":"a"},` +
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a request object"}},` +
			`{"jsonrpc":"2.0","id":1,"result":"b"},{"jsonrpc":"2.0","id":1.0,"result":"c"}]`
		if status != 200 || string(out) != want {
			t.Fatalf("%d\ngot  %s\nwant %s", status, out, want)
		}
	})
}

func TestInternalID(t *testing.T) {
	for id, want := range map[string]int{"0": 0, "4": 4, "5": -1, "01": -1, "-1": -1, "1.0": -1, `"1"`: -1, "null": -1, "": -1, "99999999999": -1, "1e0": -1} {
		if got := internalID([]byte(id), 5); got != want {
			t.Errorf("internalID(%q) = %d, want %d", id, got, want)
		}
	}
}

func TestResponseEncoding(t *testing.T) {
	tests := []struct {
		r    Response
		want string
	}{
		{ResultResponse(nil, nil), `{"jsonrpc":"2.0","id":null,"result":null}`},
		{ResultResponse(json.RawMessage(`"a"`), json.RawMessage(`{"b":1}`)), `{"jsonrpc":"2.0","id":"a","result":{"b":1}}`},
		{ErrorResponse(json.RawMessage(`1`), ParseError()), `{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"Parse error"}}`},
		{ErrorResponse(nil, MethodNotFound("eth_foo\"")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: \"eth_foo\\\"\""}}`},
		{ErrorResponse(nil, InvalidParams("")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params"}}`},
		{ErrorResponse(nil, InternalError("x")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: x"}}`},
		{ErrorResponse(nil, UpstreamUnavailable("no healthy upstream for chain 137")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Upstream unavailable: no healthy upstream for chain 137"}}`},
		{ErrorResponse(nil, RateLimited(0)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Rate limit exceeded"}}`},
		{ErrorResponse(nil, PaymentRequired(json.RawMessage(`{"x402Version":1}`))), `{"jsonrpc":"2.0","id":null,"error":{"code":402,"message":"Payment required","data":{"x402Version":1}}}`},
		// Guard: an id that is not a string, number or null degrades to null.
		{ResultResponse(json.RawMessage(`{"x":1}`), nil), `{"jsonrpc":"2.0","id":null,"result":null}`},
		// Messages: control characters, invalid UTF-8, line separators, no HTML escaping.
		{ErrorResponse(nil, &Error{Code: 1, Message: "a\x00\n\t\r\\<&>\xffé\u2028"}), `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"a\u0000\n\t\r\\<&>\ufffdé\u2028"}}`},
	}
	for _, tc := range tests {
		got := tc.r.AppendJSON(nil)
		if string(got) != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
		if _, err := checkResponse(got); err != nil {
			t.Error(err)
		}
		// Through encoding/json (HTML escaping off: json.Marshal would
		// rewrite <, & and > inside MarshalJSON's output).
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tc.r); err != nil || strings.TrimSuffix(buf.String(), "\n") != tc.want {
			t.Errorf("json encoder: %s %v", buf.String(), err)
		}
	}
	e := InvalidRequest("x")
	if e.Error() != "jsonrpc error -32600: Invalid Request: x" {
		t.Errorf("Error() = %q", e.Error())
	}
	if b, _ := json.Marshal(e); string(b) != `{"code":-32600,"message":"Invalid Request: x"}` {
		t.Errorf("marshal: %s", b)
	}
}
