package wsrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// FuzzSplitAndAnswer feeds arbitrary client messages and arbitrary HTTP
// answers through what the socket does with them: the forwarded calls are
// re-encoded (encodeCalls) and must parse back to the same calls, and the
// answer is mapped to one response per item (answersFor) that encodes to
// valid JSON carrying the caller's ids — never a panic.
func FuzzSplitAndAnswer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`), 200, []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"a","method":"eth_subscribe","params":["newHeads"]},{"jsonrpc":"2.0","method":"eth_gasPrice"}]`), 402,
		[]byte(`{"x402Version":1,"error":"pay","onboarding":{}}`))
	f.Add([]byte(`[1,{"jsonrpc":"2.0","id":null,"method":"x","params":{}}]`), 429, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Rate limit exceeded","data":{"retry_after":1}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[{}]}]`), 503, []byte(`[{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}]`))
	f.Fuzz(func(t *testing.T, msgBody []byte, status int, answer []byte) {
		msg, rej := jsonrpc.Parse(msgBody, jsonrpc.Options{})
		if rej != nil {
			return
		}
		calls, _ := msg.Calls()
		if len(calls) > 0 {
			again, rej := jsonrpc.Parse(encodeCalls(calls), jsonrpc.Options{})
			if rej != nil || len(again.Items) != len(calls) {
				t.Fatalf("re-encoded calls do not parse back: %v", rej)
			}
			for k := range calls {
				a, b := &calls[k], &again.Items[k]
				if a.Method != b.Method || !bytes.Equal(a.ID, b.ID) || !bytes.Equal(a.Params, b.Params) || !b.Valid() {
					t.Fatalf("call %d changed: %+v → %+v", k, a, b)
				}
			}
		}
		if status < 100 || status > 599 {
			status = 200
		}
		hdr := http.Header{"Retry-After": {"2"}}
		resps := answersFor(msg, status, hdr, answer)
		if len(resps) != len(msg.Items) {
			t.Fatalf("%d responses for %d items", len(resps), len(msg.Items))
		}
		out, _ := jsonrpc.EncodeAnswer(msg, resps)
		if out != nil && !json.Valid(out) {
			t.Fatalf("answer is not JSON: %s", out)
		}
		if !answered(status, answer) {
			e := refusalError(status, hdr, answer)
			if !json.Valid(e.Data) {
				t.Fatalf("error.data is not JSON: %s", e.Data)
			}
		}
	})
}
