package jsonrpc

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// parseSeeds are tricky request bodies for FuzzParse's corpus.
var parseSeeds = []string{
	``, ` `, `{}`, `[]`, `[ ]`, `[[]]`, `[{}]`, `[1]`, `[null]`, `null`, `1`, `"x"`, `true`,
	`{"jsonrpc":"2.0","method":"eth_chainId","id":1}`,
	`{"jsonrpc":"2.0","method":"eth_chainId"}`,
	`{"jsonrpc":"2.0","method":"eth_chainId","id":null}`,
	`{"jsonrpc":"2.0","method":"m","id":1.0}`,
	`{"jsonrpc":"2.0","method":"m","id":-1e-400}`,
	`{"jsonrpc":"2.0","method":"m","id":"\ud800"}`,
	`{"jsonrpc":"2.0","method":"\u0000","id":1}`,
	`{"jsonrpc":"2.0","method":"m","id":123456789012345678901234567890}`,
	`{"jsonrpc":"2.0","method":"m","id":{"a":[1]}}`,
	`{"jsonrpc":"2.0","method":"m","params":null,"id":1}`,
	`{"jsonrpc":"2.0","method":"m","params":{"a":"}]\"\\"},"id":"]}"}`,
	`{"jsonrpc":"2.0","method":"a","method":"b","id":1}`,
	`{"jsonrpc":"2.0","\u006dethod":"a","id":1}`,
	`{"jsonrpc":"2\u002e0","method":"m","id":1}`,
	`{"JSONRPC":"2.0","Method":"m","Id":1}`,
	"\t\r\n [ {\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1} , 1 , {} ] \n",
	`[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"n"},1,{"jsonrpc":"1.0","method":"x","id":"s"}]`,
	`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n2"}]`,
	`{"jsonrpc":"2.0","method":"m","id":1} x`,
	`{"jsonrpc":"2.0","method":"m","id":1`,
	"\xef\xbb\xbf{}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\",\"id\":1}",
	`{"jsonrpc":"2.0","method":"é🦊\u2028","id":"é"}`,
	strings.Repeat("[", 300) + strings.Repeat("]", 300),
	`[` + strings.Repeat(`{"jsonrpc":"2.0","method":"m","id":1},`, 100) + `1]`,
}

// FuzzParse: whatever the body, Parse does not panic, and whatever it
// produces encodes to valid JSON-RPC 2.0; accepted items agree with
// encoding/json, and what would be forwarded upstream parses back to the
// same calls.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, rej := Parse(body, Options{})
		if (msg == nil) == (rej == nil) {
			t.Fatalf("want exactly one of message and rejection: %v %v", msg, rej)
		}
		if rej != nil {
			if rej.Status != http.StatusBadRequest && rej.Status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d", rej.Status)
			}
			out := rej.Body()
			if _, err := checkResponse(out); err != nil {
				t.Fatalf("rejection %s: %v", out, err)
			}
			if c := codeOf(out); c != CodeParseError && c != CodeInvalidRequest {
				t.Fatalf("rejection code %d", c)
			}
			if (codeOf(out) == CodeParseError) != !validJSON(body) {
				t.Fatalf("-32700 must mean exactly \"not UTF-8 JSON\": %s", out)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if len(msg.Items) == 0 || len(msg.Items) > DefaultMaxBatch || (!msg.Batch && len(msg.Items) != 1) {
			t.Fatalf("batch=%v with %d items", msg.Batch, len(msg.Items))
		}
		resps := make([]Response, len(msg.Items))
		var want []string // ids expected in the answer, in order
		for i := range msg.Items {
			it := &msg.Items[i]
			if !msg.Batch && !it.Valid() {
				t.Fatalf("invalid single request not rejected")
			}
			if it.Valid() {
				if it.Method == "" || len(it.Method) > DefaultMaxMethodLen {
					t.Fatalf("accepted method %q", it.Method)
				}
				if it.Params != nil && it.Params[0] != '[' && it.Params[0] != '{' {
					t.Fatalf("accepted params %s", it.Params)
				}
				if !msg.Batch {
					agree(t, body, it)
				}
				// Alternate result and error answers.
				if i%2 == 0 {
					resps[i] = ResultResponse(nil, appendString(nil, it.Method))
				} else {
					resps[i] = ErrorResponse(nil, MethodNotFound(it.Method))
				}
			} else if it.Err.Code != CodeInvalidRequest {
				t.Fatalf("invalid item with code %d", it.Err.Code)
			}
			if !it.IsNotification() {
				want = append(want, string(it.ResponseID()))
			}
		}
		out, status := EncodeAnswer(msg, resps)
		if len(want) == 0 {
			if status != http.StatusNoContent || out != nil {
				t.Fatalf("all notifications but answered %d %s", status, out)
			}
		} else {
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			arr, err := checkAnswer(out, msg.Batch)
			if err != nil {
				t.Fatalf("answer %s: %v", out, err)
			}
			if len(arr) != len(want) {
				t.Fatalf("%d answers, want %d", len(arr), len(want))
			}
			for k := range arr {
				if got := idOf(arr[k]); got != want[k] {
					t.Fatalf("answer %d has id %s, want %s verbatim", k, got, want[k])
				}
			}
		}

		// The upstream body is a valid request (or batch) with ids 0..n-1
		// carrying the same methods and params.
		calls, _ := msg.Calls()
		if len(calls) == 0 {
			return
		}
		up, err := EncodeUpstream(calls)
		if err != nil {
			t.Fatal(err)
		}
		back, rej := Parse(up, Options{})
		if rej != nil {
			t.Fatalf("upstream body %s rejected: %s", up, rej.Body())
		}
		if len(back.Items) != len(calls) || back.Batch != (len(calls) > 1) {
			t.Fatalf("upstream body has %d items for %d calls", len(back.Items), len(calls))
		}
		for k, it := range back.Items {
			if !it.Valid() || string(it.ID) != strconv.Itoa(k) || it.Method != calls[k].Method || string(it.Params) != string(calls[k].Params) {
				t.Fatalf("upstream item %d = %+v, want %+v", k, it, calls[k])
			}
		}
	})
}

// FuzzMatchReplies: whatever an upstream sends, MatchReplies does not panic,
// returns one reply per call carrying the caller's id, and every reply
// encodes to a valid response object.
func FuzzMatchReplies(f *testing.F) {
	seeds := []string{
		``, `x`, `null`, `[]`, `{}`, `"ok"`, `[1,"x",null,[]]`,
		`{"jsonrpc":"2.0","id":0,"result":"0x89"}`,
		`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":0,"result":0}]`,
		`[{"jsonrpc":"2.0","id":0,"result":1},{"jsonrpc":"2.0","id":0,"result":2}]`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limited"}}`,
		`[{"jsonrpc":"2.0","id":0,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}]`,
		`[{"jsonrpc":"2.0","id":0,"error":{"code":1.5,"message":"m"}},{"jsonrpc":"2.0","id":1,"error":{"code":99999999999,"message":"m"}}]`,
		`[{"jsonrpc":"2.0","id":0,"result":1,"error":null},{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":1,"message":"\u00e9\ud800"}}]`,
		`[{"jsonrpc":"2.0","id":"0","result":1},{"jsonrpc":"2.0","id":1.0,"result":1},{"jsonrpc":"2.0","id":-0,"result":1}]`,
		`[{"jsonrpc":"2.0","\u0069d":0,"result":{"deep":[[[[]]]]}}]`,
		"<html>502 Bad Gateway</html>",
	}
	for _, s := range seeds {
		for _, n := range []uint8{1, 2, 5} {
			f.Add(n, []byte(s))
		}
	}
	ids := []string{"1.0", `"x"`, "null", "", "123456789012345678901234567890", `"\u00e9"`, "-0", "7"}
	f.Fuzz(func(t *testing.T, n uint8, body []byte) {
		n = n%uint8(len(ids)) + 1
		var b strings.Builder
		b.WriteByte('[')
		for k := range int(n) {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"jsonrpc":"2.0","method":"m"`)
			if ids[k] != "" {
				b.WriteString(`,"id":` + ids[k])
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
		msg, rej := Parse([]byte(b.String()), Options{})
		if rej != nil {
			t.Fatal(rej)
		}
		replies, err := MatchReplies(msg.Items, body)
		if len(replies) != int(n) {
			t.Fatalf("%d replies for %d calls", len(replies), n)
		}
		anyFailed := false
		for k, r := range replies {
			if string(r.ID) != ids[k] {
				t.Fatalf("reply %d id %q, want %q", k, r.ID, ids[k])
			}
			if r.Err != nil {
				anyFailed = true
				if r.Error == nil || r.Error.Code != CodeInternalError {
					t.Fatalf("failed reply %d without -32603: %+v", k, r)
				}
			}
			out := r.AppendJSON(nil)
			if _, err := checkResponse(out); err != nil {
				t.Fatalf("reply %d %s: %v", k, out, err)
			}
		}
		if anyFailed != (err != nil) {
			t.Fatalf("per-call failures %v but error %v", anyFailed, err)
		}
		var ue *UpstreamError
		if errors.As(err, &ue) && ue.Err == nil {
			t.Fatalf("UpstreamError without an error object")
		}
		if err == nil && !json.Valid(body) {
			t.Fatalf("matched replies in invalid JSON")
		}
		// The final answer to the caller is valid JSON-RPC too.
		resps := make([]Response, len(replies))
		for k := range replies {
			resps[k] = replies[k].Response
		}
		if out, status := EncodeAnswer(msg, resps); status == http.StatusOK {
			if _, err := checkAnswer(out, true); err != nil {
				t.Fatalf("answer %s: %v", out, err)
			}
		}
	})
}

// FuzzDeepValid: below encoding/json's depth limit, deepValid accepts
// exactly what json.Valid accepts, so Parse's "too deep, keep the id" path
// can never take a malformed body for a well-formed one.
func FuzzDeepValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}]}`, `"\u00e9"`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `[[[]]]`,
		`-0.5e+3`, `01`, `[tru]`, `"\x01"`, `{"a":"b"}x`, ` [ 1 , 2 ] `, `{"":{"":""}}`, `[`, `]`, `{,}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if nestingDepth(b) >= 9000 {
			t.Skip()
		}
		if got, want := deepValid(b), json.Valid(b); got != want {
			t.Fatalf("deepValid(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

// nestingDepth is the deepest bracket nesting outside strings (an upper
// bound for malformed input).
func nestingDepth(b []byte) int {
	depth, max := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _ := skipString(b, i)
			i = end - 1
		case '{', '[':
			if depth++; depth > max {
				max = depth
			}
		case '}', ']':
			depth--
		}
	}
	return max
}
