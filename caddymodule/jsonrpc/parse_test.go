package jsonrpc

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestParseRejections(t *testing.T) {
	long := strings.Repeat("m", 257)
	tests := []struct {
		name    string
		body    string
		opts    Options
		status  int
		code    int
		id      string // raw id in the rejection
		message string // substring of the error message
	}{
		// Not JSON → 400 / -32700 / null.
		{"empty body", "", Options{}, 400, -32700, "null", "Parse error"},
		{"only whitespace", " \n\t ", Options{}, 400, -32700, "null", "Parse error"},
		{"truncated object", `{"jsonrpc":"2.0","method":"eth_chainId","id":1`, Options{}, 400, -32700, "null", ""},
		{"truncated batch", `[{"jsonrpc":"2.0","method":"m","id":1}`, Options{}, 400, -32700, "null", ""},
		{"open bracket", `[`, Options{}, 400, -32700, "null", ""},
		{"trailing garbage", `{"jsonrpc":"2.0","method":"m","id":1} x`, Options{}, 400, -32700, "null", ""},
		{"two objects", `{"jsonrpc":"2.0","method":"m","id":1}{"jsonrpc":"2.0","method":"m","id":2}`, Options{}, 400, -32700, "null", ""},
		{"two arrays", `[] []`, Options{}, 400, -32700, "null", ""},
		{"single quotes", `{'jsonrpc':'2.0'}`, Options{}, 400, -32700, "null", ""},
		{"leading zero", `{"jsonrpc":"2.0","method":"m","id":01}`, Options{}, 400, -32700, "null", ""},
		{"trailing comma array", `[{"jsonrpc":"2.0","method":"m","id":1},]`, Options{}, 400, -32700, "null", ""},
		{"trailing comma object", `{"jsonrpc":"2.0","method":"m","id":1,}`, Options{}, 400, -32700, "null", ""},
		{"NaN", `{"jsonrpc":"2.0","method":"m","id":NaN}`, Options{}, 400, -32700, "null", ""},
		{"raw control char", "{\"jsonrpc\":\"2.0\",\"method\":\"m\x01\",\"id\":1}", Options{}, 400, -32700, "null", ""},
		{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"\xff\"}", Options{}, 400, -32700, "null", ""},
		{"utf8 BOM", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}", Options{}, 400, -32700, "null", ""},
		{"bare word", `nul`, Options{}, 400, -32700, "null", ""},
		{"nested garbage", `[{"jsonrpc":"2.0","params":[[[{]]],"method":"m","id":1}]`, Options{}, 400, -32700, "null", ""},
		{"unterminated string", `{"jsonrpc":"2.0","method":"m,"id":1}`, Options{}, 400, -32700, "null", ""},
		{"bad escape", `{"jsonrpc":"2.0","method":"\x","id":1}`, Options{}, 400, -32700, "null", ""},

		// A single value that is not an object → 400 / -32600 / null.
		{"number", `1`, Options{}, 400, -32600, "null", "Invalid Request"},
		{"string", `"eth_chainId"`, Options{}, 400, -32600, "null", ""},
		{"null", `null`, Options{}, 400, -32600, "null", ""},
		{"true", ` true `, Options{}, 400, -32600, "null", ""},

		// A single invalid request → 400 / -32600 / its id if readable.
		{"empty object", `{}`, Options{}, 400, -32600, "null", `"jsonrpc" must be "2.0"`},
		{"no method", `{"jsonrpc":"2.0","id":7}`, Options{}, 400, -32600, "7", `"method"`},
		{"wrong version", `{"jsonrpc":"1.0","method":"m","id":"a"}`, Options{}, 400, -32600, `"a"`, `"jsonrpc"`},
		{"no version", `{"method":"m","id":1}`, Options{}, 400, -32600, "1", `"jsonrpc"`},
		{"numeric version", `{"jsonrpc":2.0,"method":"m","id":1}`, Options{}, 400, -32600, "1", `"jsonrpc"`},
		{"version with space", `{"jsonrpc":"2.0 ","method":"m","id":1}`, Options{}, 400, -32600, "1", `"jsonrpc"`},
		{"empty method", `{"jsonrpc":"2.0","method":"","id":1}`, Options{}, 400, -32600, "1", `"method"`},
		{"numeric method", `{"jsonrpc":"2.0","method":5,"id":1}`, Options{}, 400, -32600, "1", `"method"`},
		{"null method", `{"jsonrpc":"2.0","method":null,"id":1}`, Options{}, 400, -32600, "1", `"method"`},
		{"array method", `{"jsonrpc":"2.0","method":["m"],"id":1}`, Options{}, 400, -32600, "1", `"method"`},
		{"method too long", `{"jsonrpc":"2.0","method":"` + long + `","id":1}`, Options{}, 400, -32600, "1", "at most 256 bytes"},
		{"method too long custom", `{"jsonrpc":"2.0","method":"abcd","id":1}`, Options{MaxMethodLen: 3}, 400, -32600, "1", "at most 3 bytes"},
		{"escaped method too long", `{"jsonrpc":"2.0","method":"` + strings.Repeat(`\u006d`, 257) + `","id":1}`, Options{}, 400, -32600, "1", "at most 256"},
		{"escaped method decoded too long", `{"jsonrpc":"2.0","method":"` + strings.Repeat(`\u006d`, 200) + strings.Repeat("m", 57) + `","id":1}`, Options{}, 400, -32600, "1", "at most 256"},
		{"string params", `{"jsonrpc":"2.0","method":"m","params":"x","id":1}`, Options{}, 400, -32600, "1", `"params"`},
		{"number params", `{"jsonrpc":"2.0","method":"m","params":1,"id":1}`, Options{}, 400, -32600, "1", `"params"`},
		{"null params", `{"jsonrpc":"2.0","method":"m","params":null,"id":1}`, Options{}, 400, -32600, "1", `"params"`},
		{"bool params", `{"jsonrpc":"2.0","method":"m","params":false,"id":1}`, Options{}, 400, -32600, "1", `"params"`},
		{"bool id", `{"jsonrpc":"2.0","method":"m","id":true}`, Options{}, 400, -32600, "null", `"id"`},
		{"object id", `{"jsonrpc":"2.0","method":"m","id":{"a":1}}`, Options{}, 400, -32600, "null", `"id"`},
		{"array id", `{"jsonrpc":"2.0","method":"m","id":[1]}`, Options{}, 400, -32600, "null", `"id"`},
		{"duplicate method", `{"jsonrpc":"2.0","method":"eth_chainId","method":"debug_traceCall","id":1}`, Options{}, 400, -32600, "1", `duplicate "method"`},
		{"duplicate id", `{"jsonrpc":"2.0","method":"m","id":1,"id":2}`, Options{}, 400, -32600, "null", `duplicate "id"`},
		{"duplicate jsonrpc", `{"jsonrpc":"2.0","jsonrpc":"1.0","method":"m","id":1}`, Options{}, 400, -32600, "1", `duplicate "jsonrpc"`},
		{"duplicate params", `{"jsonrpc":"2.0","method":"m","params":[],"params":[1],"id":1}`, Options{}, 400, -32600, "1", `duplicate "params"`},
		{"duplicate via escape", `{"jsonrpc":"2.0","method":"a","\u006dethod":"b","id":1}`, Options{}, 400, -32600, "1", `duplicate "method"`},
		{"keys are case sensitive", `{"JSONRPC":"2.0","Method":"m","ID":1}`, Options{}, 400, -32600, "null", `"jsonrpc"`},
		{"invalid notification", `{"jsonrpc":"2.0"}`, Options{}, 400, -32600, "null", `"method"`},

		// Batches rejected as a whole.
		{"empty batch", `[]`, Options{}, 400, -32600, "null", "empty batch"},
		{"empty batch with spaces", " [ \n ] ", Options{}, 400, -32600, "null", "empty batch"},
		{"batch over default", batchBody(1001), Options{}, 413, -32600, "null", "limit of 1000 calls"},
		{"batch over custom", batchBody(3), Options{MaxBatch: 2}, 413, -32600, "null", "limit of 2 calls"},
		{"batch of garbage over limit", "[" + strings.Repeat("1,", 1000) + "1]", Options{}, 413, -32600, "null", "limit of 1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, rej := Parse([]byte(tc.body), tc.opts)
			if rej == nil {
				t.Fatalf("Parse accepted %q: %+v", tc.body, msg)
			}
			if msg != nil {
				t.Fatalf("both a message and a rejection")
			}
			if rej.Status != tc.status {
				t.Errorf("status %d, want %d", rej.Status, tc.status)
			}
			body := rej.Body()
			m, err := checkResponse(body)
			if err != nil {
				t.Fatalf("rejection body: %v", err)
			}
			if body[0] != '{' {
				t.Errorf("rejection must be one object, got %s", body)
			}
			if got := codeOf(body); got != tc.code {
				t.Errorf("code %d, want %d (%s)", got, tc.code, body)
			}
			if got := string(m["id"]); got != tc.id {
				t.Errorf("id %s, want %s", got, tc.id)
			}
			if !strings.Contains(rej.Response.Error.Message, tc.message) {
				t.Errorf("message %q lacks %q", rej.Response.Error.Message, tc.message)
			}
			if !strings.Contains(rej.Error(), strconv.Itoa(tc.status)) {
				t.Errorf("Error() %q lacks the status", rej.Error())
			}
		})
	}
}

func batchBody(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"jsonrpc":"2.0","method":"eth_getBalance","params":["0x00000000219ab540356cBB839Cbe05303d7705Fa","latest"],"id":`)
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

func TestBodyTooLarge(t *testing.T) {
	rej := BodyTooLarge(DefaultMaxBodyBytes)
	if rej.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", rej.Status)
	}
	body := rej.Body()
	if _, err := checkResponse(body); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: request body exceeds the limit of 1048576 bytes"}}`
	if string(body) != want {
		t.Fatalf("got  %s\nwant %s", body, want)
	}
}

func TestParseSingle(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		id     string // raw id; "" = absent (notification)
		method string
		params string
	}{
		{"number id", `{"jsonrpc":"2.0","method":"eth_chainId","id":1}`, "1", "eth_chainId", ""},
		{"float id kept", `{"jsonrpc":"2.0","method":"eth_chainId","id":1.0}`, "1.0", "eth_chainId", ""},
		{"string id kept", `{"jsonrpc":"2.0","method":"eth_chainId","id":"1"}`, `"1"`, "eth_chainId", ""},
		{"exponent id", `{"jsonrpc":"2.0","method":"m","id":1e3}`, "1e3", "m", ""},
		{"fraction id", `{"jsonrpc":"2.0","method":"m","id":0.1E-5}`, "0.1E-5", "m", ""},
		{"negative zero id", `{"jsonrpc":"2.0","method":"m","id":-0}`, "-0", "m", ""},
		{"big id", `{"jsonrpc":"2.0","method":"m","id":123456789012345678901234567890}`, "123456789012345678901234567890", "m", ""},
		{"huge exponent id", `{"jsonrpc":"2.0","method":"m","id":1e400}`, "1e400", "m", ""},
		{"empty string id", `{"jsonrpc":"2.0","method":"m","id":""}`, `""`, "m", ""},
		{"escaped string id kept", `{"jsonrpc":"2.0","method":"m","id":"\u00e9\n\"x"}`, `"\u00e9\n\"x"`, "m", ""},
		{"unicode id", `{"jsonrpc":"2.0","method":"m","id":"é🦊"}`, `"é🦊"`, "m", ""},
		{"null id", `{"jsonrpc":"2.0","method":"m","id":null}`, "null", "m", ""},
		{"notification", `{"jsonrpc":"2.0","method":"m"}`, "", "m", ""},
		{"notification with params", `{"jsonrpc":"2.0","method":"m","params":[1]}`, "", "m", "[1]"},
		{"whitespace", " \r\n\t{ \"jsonrpc\" : \"2.0\" ,\n \"method\" : \"m\" , \"id\" : 5 , \"params\" : [ 1 , 2 ] }\n ", "5", "m", "[ 1 , 2 ]"},
		{"member order", `{"id":9,"params":{"a":[1,{"b":"]}"}]},"method":"m","jsonrpc":"2.0"}`, "9", "m", `{"a":[1,{"b":"]}"}]}`},
		{"params object", `{"jsonrpc":"2.0","method":"m","params":{},"id":1}`, "1", "m", "{}"},
		{"params empty array", `{"jsonrpc":"2.0","method":"m","params":[],"id":1}`, "1", "m", "[]"},
		{"params verbatim", `{"jsonrpc":"2.0","method":"m","params":["\u0041",1.50,"é",12345678901234567890123],"id":1}`, "1", "m", `["\u0041",1.50,"é",12345678901234567890123]`},
		{"extra members ignored", `{"jsonrpc":"2.0","method":"m","id":1,"extra":{"id":2,"method":"x"},"Params":"x"}`, "1", "m", ""},
		{"escaped method", `{"jsonrpc":"2.0","method":"eth\u005fcall","id":1}`, "1", "eth_call", ""},
		{"escaped version", `{"jsonrpc":"2\u002e0","method":"m","id":1}`, "1", "m", ""},
		{"escaped key", `{"\u006a\u0073onrpc":"2.0","method":"m","\u0069d":3}`, "3", "m", ""},
		{"unicode method", `{"jsonrpc":"2.0","method":"eth_ünïcode","id":1}`, "1", "eth_ünïcode", ""},
		{"escaped method of 256 bytes", `{"jsonrpc":"2.0","method":"` + strings.Repeat(`\u006d`, 200) + strings.Repeat("m", 56) + `","id":1}`, "1", strings.Repeat("m", 256), ""},
		{"method of 256 bytes", `{"jsonrpc":"2.0","method":"` + strings.Repeat("m", 256) + `","id":1}`, "1", strings.Repeat("m", 256), ""},
		{"deeply nested params", `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `,"id":1}`, "1", "m", strings.Repeat("[", 500) + strings.Repeat("]", 500)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, rej := Parse([]byte(tc.body), Options{})
			if rej != nil {
				t.Fatalf("rejected: %s", rej.Body())
			}
			if msg.Batch || len(msg.Items) != 1 {
				t.Fatalf("want one single item, got batch=%v n=%d", msg.Batch, len(msg.Items))
			}
			it := msg.Items[0]
			if !it.Valid() {
				t.Fatalf("invalid: %v", it.Err)
			}
			if tc.id == "" {
				if it.ID != nil || !it.IsNotification() {
					t.Fatalf("want a notification, id=%q", it.ID)
				}
			} else if string(it.ID) != tc.id || it.IsNotification() {
				t.Fatalf("id %q, want %q", it.ID, tc.id)
			}
			if it.Method != tc.method {
				t.Errorf("method %q, want %q", it.Method, tc.method)
			}
			if string(it.Params) != tc.params {
				t.Errorf("params %q, want %q", it.Params, tc.params)
			}

			body, status := EncodeAnswer(msg, []Response{ResultResponse(nil, json.RawMessage(`"0x89"`))})
			if tc.id == "" {
				if status != http.StatusNoContent || body != nil {
					t.Fatalf("notification answered: %d %s", status, body)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			want := `{"jsonrpc":"2.0","id":` + tc.id + `,"result":"0x89"}`
			if string(body) != want {
				t.Fatalf("answer %s, want %s", body, want)
			}
			if _, err := checkAnswer(body, false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestParseBatchMixed checks position, id echo and omission of notifications
// in a batch mixing every kind of item.
func TestParseBatchMixed(t *testing.T) {
	body := `[
		{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},
		{"jsonrpc":"2.0","method":"eth_notify"},
		1,
		{},
		{"jsonrpc":"1.0","method":"x","id":"s"},
		{"jsonrpc":"2.0","method":"eth_chainId","id":null},
		{"jsonrpc":"2.0","method":"eth_chainId","id":1},
		[],
		[{"jsonrpc":"2.0","method":"m","id":4}],
		null,
		"str",
		{"jsonrpc":"2.0","method":"m","id":{"x":1}},
		{"jsonrpc":"2.0","method":"m","id":1.0,"params":"bad"},
		{"jsonrpc":"2.0","method":"m","method":"n","id":"dup"},
		{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xab","latest"],"id":"last"}
	]`
	msg, rej := Parse([]byte(body), Options{})
	if rej != nil {
		t.Fatalf("rejected: %s", rej.Body())
	}
	if !msg.Batch || len(msg.Items) != 15 {
		t.Fatalf("batch=%v n=%d", msg.Batch, len(msg.Items))
	}
	valid := map[int]bool{0: true, 1: true, 5: true, 6: true, 14: true}
	for i, it := range msg.Items {
		if it.Valid() != valid[i] {
			t.Errorf("item %d valid=%v (%v)", i, it.Valid(), it.Err)
		}
	}
	if !msg.Items[1].IsNotification() {
		t.Errorf("item 1 should be a notification")
	}

	// Answer each valid call with its method name as the result.
	resps := make([]Response, len(msg.Items))
	for i, it := range msg.Items {
		if it.Valid() {
			resps[i] = ResultResponse(json.RawMessage(`"garbage id ignored"`), appendString(nil, it.Method))
		}
	}
	out, status := EncodeAnswer(msg, resps)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	arr, err := checkAnswer(out, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id   string
		code int
	}{
		{"1", 0}, {"null", -32600}, {"null", -32600}, {`"s"`, -32600}, {"null", 0}, {"1", 0},
		{"null", -32600}, {"null", -32600}, {"null", -32600}, {"null", -32600}, {"null", -32600},
		{"1.0", -32600}, {`"dup"`, -32600}, {`"last"`, 0},
	}
	if len(arr) != len(want) {
		t.Fatalf("%d answers, want %d: %s", len(arr), len(want), out)
	}
	for i, w := range want {
		if got := idOf(arr[i]); got != w.id {
			t.Errorf("answer %d id %s, want %s", i, got, w.id)
		}
		if got := codeOf(arr[i]); got != w.code {
			t.Errorf("answer %d code %d, want %d: %s", i, got, w.code, arr[i])
		}
	}
	if !strings.HasPrefix(string(out), `[{"jsonrpc":"2.0","id":1,"result":"eth_blockNumber"},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a request object"}}`) {
		t.Errorf("unexpected encoding: %s", out)
	}
}

func TestParseBatchShapes(t *testing.T) {
	t.Run("batch of one is answered with an array", func(t *testing.T) {
		msg, rej := Parse([]byte(`[{"jsonrpc":"2.0","method":"m","id":"a"}]`), Options{})
		if rej != nil {
			t.Fatal(rej)
		}
		out, status := EncodeAnswer(msg, []Response{ResultResponse(nil, json.RawMessage(`true`))})
		if status != 200 || string(out) != `[{"jsonrpc":"2.0","id":"a","result":true}]` {
			t.Fatalf("%d %s", status, out)
		}
	})
	t.Run("only notifications → 204", func(t *testing.T) {
		msg, rej := Parse([]byte(`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[]}]`), Options{})
		if rej != nil {
			t.Fatal(rej)
		}
		out, status := EncodeAnswer(msg, make([]Response, 2))
		if status != http.StatusNoContent || out != nil {
			t.Fatalf("%d %s", status, out)
		}
	})
	t.Run("only invalid items → 200 with errors", func(t *testing.T) {
		msg, rej := Parse([]byte(`[1,2,3]`), Options{})
		if rej != nil {
			t.Fatal(rej)
		}
		out, status := EncodeAnswer(msg, nil)
		arr, err := checkAnswer(out, true)
		if status != 200 || err != nil || len(arr) != 3 {
			t.Fatalf("%d %v %s", status, err, out)
		}
	})
	t.Run("exactly the limit", func(t *testing.T) {
		msg, rej := Parse([]byte(batchBody(100)), Options{})
		if rej != nil || len(msg.Items) != 100 {
			t.Fatalf("%v", rej)
		}
		for i, it := range msg.Items {
			if string(it.ID) != strconv.Itoa(i) || it.Method != "eth_getBalance" {
				t.Fatalf("item %d: %+v", i, it)
			}
		}
	})
	t.Run("missing responses become -32603", func(t *testing.T) {
		msg, _ := Parse([]byte(`[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b","id":2}]`), Options{})
		out, _ := EncodeAnswer(msg, []Response{ResultResponse(nil, json.RawMessage(`1`))})
		arr, err := checkAnswer(out, true)
		if err != nil || len(arr) != 2 || codeOf(arr[1]) != -32603 || idOf(arr[1]) != "2" {
			t.Fatalf("%v %s", err, out)
		}
	})
	t.Run("error responses keep the item id", func(t *testing.T) {
		msg, _ := Parse([]byte(`{"jsonrpc":"2.0","method":"a","id":"x"}`), Options{})
		out, _ := EncodeAnswer(msg, []Response{ErrorResponse(json.RawMessage("99"), RateLimited(3))})
		want := `{"jsonrpc":"2.0","id":"x","error":{"code":-32005,"message":"Rate limit exceeded","data":{"retry_after":3}}}`
		if string(out) != want {
			t.Fatalf("got %s", out)
		}
	})
}

func TestCalls(t *testing.T) {
	msg, _ := Parse([]byte(`[1,{"jsonrpc":"2.0","method":"a","id":1},{},{"jsonrpc":"2.0","method":"n"}]`), Options{})
	calls, index := msg.Calls()
	if len(calls) != 2 || index[0] != 1 || index[1] != 3 || calls[1].Method != "n" {
		t.Fatalf("%+v %v", calls, index)
	}
}

// TestParseAgreesWithEncodingJSON cross-checks accepted single requests with
// what encoding/json makes of the same bytes (exact-key map decoding).
func TestParseAgreesWithEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","method":"eth_call","params":[{"to":"0x01","data":"0x"},"latest"],"id":42}`,
		`{"\u0069d":"x","jsonrpc":"2\u002e0","method":"a\u005cb"}`,
		`{"jsonrpc":"2.0","method":"m","id":null,"params":{"k":"v"}}`,
	}
	for _, b := range bodies {
		msg, rej := Parse([]byte(b), Options{})
		if rej != nil {
			t.Fatalf("%s: %s", b, rej.Body())
		}
		agree(t, []byte(b), &msg.Items[0])
	}
}

func agree(t *testing.T, raw []byte, it *Item) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	var v, method string
	if json.Unmarshal(m["jsonrpc"], &v) != nil || v != "2.0" {
		t.Fatalf("accepted jsonrpc %s", m["jsonrpc"])
	}
	if json.Unmarshal(m["method"], &method) != nil || method != it.Method {
		t.Fatalf("method %q vs %q", method, it.Method)
	}
	if id, ok := m["id"]; ok != (it.ID != nil) || string(id) != string(it.ID) {
		t.Fatalf("id %s vs %s", id, it.ID)
	}
	if p := m["params"]; string(p) != string(it.Params) {
		t.Fatalf("params %s vs %s", p, it.Params)
	}
}

// Params nested beyond encoding/json's 10,000 levels: still a parse error,
// but the caller's id is kept when the body is one request whose id is
// readable; a broken or batched deep body answers id null.
func TestParseTooDeepKeepsID(t *testing.T) {
	deep := strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001)
	for _, c := range []struct {
		body, id string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"eth_call","params":` + deep + `}`, `7`},
		{`{"id":"a\"b","jsonrpc":"2.0","method":"eth_call","params":[` + deep + `]}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","method":"eth_call","params":` + deep + `}`, `null`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"eth_call","params":` + deep + `}`, `null`},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_call","params":` + deep + `}`, `null`},
		{`{"jsonrpc":"2.0","id":7,"method":"eth_call","params":` + deep[:len(deep)-1] + `}`, `null`}, // unbalanced: broken, not deep
		{`[{"jsonrpc":"2.0","id":7,"method":"eth_call","params":` + deep + `}]`, `null`},
	} {
		_, rej := Parse([]byte(c.body), Options{})
		if rej == nil || rej.Status != 400 || rej.Response.Error.Code != CodeParseError {
			t.Fatalf("%.60s…: %+v", c.body, rej)
		}
		got := string(rej.Response.ID)
		if got == "" {
			got = "null"
		}
		if got != c.id {
			t.Errorf("%.60s…: id %s, want %s", c.body, got, c.id)
		}
	}
}
