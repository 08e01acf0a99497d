package wsrpc

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// answered reports whether the HTTP path's answer is itself the JSON-RPC
// answer to send as it is: a success (200), nothing to answer (204), or a
// batch's array (per-call answers, e.g. every call failed upstream: 503).
// Anything else is a whole-request refusal that refusalError turns into an
// error in the caller's ids.
func answered(status int, body []byte) bool {
	if status == http.StatusOK || status == http.StatusNoContent {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// refusalError is the JSON-RPC error a refused request's callers get over a
// socket: web.RefusalError, the contract HTTP and MCP share.
func refusalError(status int, hdr http.Header, body []byte) *jsonrpc.Error {
	return web.RefusalError(status, hdr, body)
}

// answersFor is one response per item of msg from the HTTP path's answer to
// msg's valid calls sent as a batch (or as msg itself): in order, skipping
// notifications, each with its item's id. Calls the answer does not cover
// get -32603 (EncodeAnswer's rule); a refusal answers every call with it.
func answersFor(msg *jsonrpc.Message, status int, hdr http.Header, body []byte) []jsonrpc.Response {
	resps := make([]jsonrpc.Response, len(msg.Items))
	if !answered(status, body) {
		e := refusalError(status, hdr, body)
		for i := range resps {
			resps[i] = jsonrpc.ErrorResponse(msg.Items[i].ResponseID(), e)
		}
		return resps
	}
	type reply struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	var got []reply
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		_ = json.Unmarshal(b, &got)
	} else if len(b) > 0 {
		var one reply
		if json.Unmarshal(b, &one) == nil {
			got = []reply{one}
		}
	}
	k := 0
	for i := range msg.Items {
		it := &msg.Items[i]
		if !it.Valid() || it.IsNotification() {
			continue
		}
		if k >= len(got) {
			resps[i] = jsonrpc.ErrorResponse(it.ResponseID(), jsonrpc.InternalError("no answer produced for this call"))
			continue
		}
		r := got[k]
		k++
		if r.Error != nil {
			resps[i] = jsonrpc.ErrorResponse(it.ResponseID(), r.Error)
		} else {
			resps[i] = jsonrpc.ResultResponse(it.ResponseID(), r.Result)
		}
	}
	return resps
}

// encodeCalls writes items as a batch request (always an array, so the
// answer is an array in the same order).
func encodeCalls(items []jsonrpc.Item) []byte {
	out := []byte{'['}
	for k := range items {
		it := &items[k]
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"jsonrpc":"2.0"`...)
		if it.ID != nil {
			out = append(out, `,"id":`...)
			out = append(out, it.ID...)
		}
		m, _ := json.Marshal(it.Method)
		out = append(out, `,"method":`...)
		out = append(out, m...)
		if it.Params != nil {
			out = append(out, `,"params":`...)
			out = append(out, it.Params...)
		}
		out = append(out, '}')
	}
	return append(out, ']')
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
