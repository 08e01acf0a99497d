package wsrpc

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// fuzzRefusal is a refusal as a socket sees one (payment.Refusal's
// methods), with a status of the fuzzer's choosing.
type fuzzRefusal int

func (r fuzzRefusal) Status() int { return int(r) }
func (r fuzzRefusal) JSONRPC() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: http.StatusText(int(r)), Data: json.RawMessage(`{"retry_after":1}`)}
}

// FuzzSplitAndAnswer feeds arbitrary client messages and arbitrary answers
// (a status, an encoded body, per-item responses, or a refusal) through what
// the socket does with them: one response per item (answersFor) that
// encodes to valid JSON carrying the caller's ids — never a panic.
func FuzzSplitAndAnswer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`), 200, []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`), false)
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"a","method":"eth_subscribe","params":["newHeads"]},{"jsonrpc":"2.0","method":"eth_gasPrice"}]`), 402,
		[]byte(`{"x402Version":1,"error":"pay","onboarding":{}}`), true)
	f.Add([]byte(`[1,{"jsonrpc":"2.0","id":null,"method":"x","params":{}}]`), 429, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Rate limit exceeded","data":{"retry_after":1}}}`), true)
	f.Add([]byte(`[{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[{}]}]`), 503, []byte(`[{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}]`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{}]}`), 503, []byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x"}}`), false)
	f.Fuzz(func(t *testing.T, msgBody []byte, status int, body []byte, refused bool) {
		msg, rej := jsonrpc.Parse(msgBody, jsonrpc.Options{})
		if rej != nil {
			return
		}
		if status < 100 || status > 599 {
			status = 200
		}
		a := Answer{Status: status, Body: body, Resps: make([]jsonrpc.Response, len(msg.Items))}
		for i := range a.Resps {
			if i%2 == 0 {
				a.Resps[i] = jsonrpc.ResultResponse(nil, json.RawMessage(`"0x1"`))
			} else {
				a.Resps[i] = jsonrpc.ErrorResponse(nil, jsonrpc.InternalError("x"))
			}
		}
		if refused {
			a.Refusal = fuzzRefusal(status)
		}
		resps := answersFor(msg, a)
		if len(resps) != len(msg.Items) {
			t.Fatalf("%d responses for %d items", len(resps), len(msg.Items))
		}
		out, _ := jsonrpc.EncodeAnswer(msg, resps)
		if out != nil && !json.Valid(out) {
			t.Fatalf("answer is not JSON: %s", out)
		}
		for i := range resps {
			if e := resps[i].Error; e != nil && len(e.Data) > 0 && !json.Valid(e.Data) {
				t.Fatalf("error.data is not JSON: %s", e.Data)
			}
		}
	})
}
