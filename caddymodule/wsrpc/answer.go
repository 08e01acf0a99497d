package wsrpc

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// answered reports whether the answer POST would send is itself the
// JSON-RPC answer to send as it is: a success (200), nothing to answer
// (204), or a batch's array (per-call answers, e.g. every call failed
// upstream: 503). Anything else (a single call no upstream could serve)
// is a whole-request error that answersFor puts in the caller's ids.
func answered(status int, body []byte) bool {
	if status == http.StatusOK || status == http.StatusNoContent {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// answersFor is one response per item of msg from the answer a: a refusal
// answers every item with its JSON-RPC error (Refusal.JSONRPC, the contract
// HTTP and MCP share), as does a single call no upstream served (its error
// with the status POST sends, web.RefusalOf); else each valid call's own
// answer with its item's id. Calls the answer does not cover get -32603
// (EncodeAnswer's rule).
func answersFor(msg *jsonrpc.Message, a Answer) []jsonrpc.Response {
	resps := make([]jsonrpc.Response, len(msg.Items))
	var e *jsonrpc.Error
	switch {
	case a.Refusal != nil:
		e = a.Refusal.JSONRPC()
	case !answered(a.Status, a.Body):
		var whole *jsonrpc.Error
		if !msg.Batch && len(a.Resps) == 1 {
			whole = a.Resps[0].Error
		}
		e = web.RefusalOf(a.Status, 0, whole, nil)
	}
	if e != nil {
		for i := range resps {
			resps[i] = jsonrpc.ErrorResponse(msg.Items[i].ResponseID(), e)
		}
		return resps
	}
	for i := range msg.Items {
		it := &msg.Items[i]
		if !it.Valid() || it.IsNotification() {
			continue
		}
		if i >= len(a.Resps) {
			resps[i] = jsonrpc.ErrorResponse(it.ResponseID(), jsonrpc.InternalError("no answer produced for this call"))
			continue
		}
		r := a.Resps[i]
		if r.Error != nil {
			resps[i] = jsonrpc.ErrorResponse(it.ResponseID(), r.Error)
		} else {
			resps[i] = jsonrpc.ResultResponse(it.ResponseID(), r.Result)
		}
	}
	return resps
}

// notification is an eth_subscription message.
func notification(id string, result json.RawMessage) []byte {
	out := make([]byte, 0, 96+len(result))
	out = append(out, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`...)
	out = append(out, id...)
	out = append(out, `","result":`...)
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	out = append(out, result...)
	return append(out, "}}"...)
}

// closing is the tollgate_closing notification sent before the gateway
// closes a socket for a reason the client must act on (payment): the close
// code, a reason word and the JSON-RPC error an HTTP call would have got.
func closing(code int, reason string, e *jsonrpc.Error) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "tollgate_closing",
		"params": map[string]any{"code": code, "reason": reason, "error": e}})
	return b
}
