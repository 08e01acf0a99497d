package jsonrpc

import "net/http"

// EncodeAnswer encodes the answer to msg. resps[i] answers msg.Items[i]:
//
//   - The id of every response is taken from its item, whatever resps[i].ID
//     holds, so the caller's id is echoed byte for byte by construction.
//   - Invalid items are answered with their own Err (resps[i] is ignored).
//   - Notifications get no answer (resps[i] is ignored).
//   - A valid request without a corresponding entry (resps shorter than
//     Items) is answered with -32603 rather than silently dropped: a batch
//     answer missing a call leaves the client waiting for it.
//
// A single request is answered with one object, a batch with an array in the
// caller's order. When nothing is to be answered (a single notification, or a
// batch made only of notifications) body is nil and status is 204 No Content:
// the JSON-RPC spec forbids answering notifications, and an empty 200 body is
// not valid JSON for clients that parse it anyway. Otherwise status is 200;
// the caller may send another (e.g. 402, 429, 503) when the answer is a
// whole-request error.
func EncodeAnswer(msg *Message, resps []Response) (body []byte, status int) {
	if !msg.Batch {
		if len(msg.Items) == 0 || msg.Items[0].IsNotification() {
			return nil, http.StatusNoContent
		}
		r := answerFor(msg, resps, 0)
		return r.AppendJSON(make([]byte, 0, 64+len(r.Result))), http.StatusOK
	}

	size := 2
	for i := range msg.Items {
		if i < len(resps) {
			size += 64 + len(msg.Items[i].ID) + len(resps[i].Result)
		}
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	n := 0
	for i := range msg.Items {
		if msg.Items[i].IsNotification() {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		r := answerFor(msg, resps, i)
		out = r.AppendJSON(out)
		n++
	}
	if n == 0 {
		return nil, http.StatusNoContent
	}
	return append(out, ']'), http.StatusOK
}

// answerFor is the response for item i with the item's own id.
func answerFor(msg *Message, resps []Response, i int) Response {
	it := &msg.Items[i]
	if it.Err != nil {
		return ErrorResponse(it.ResponseID(), it.Err)
	}
	if i >= len(resps) {
		return ErrorResponse(it.ResponseID(), InternalError("no answer produced for this call"))
	}
	r := resps[i]
	r.ID = it.ResponseID()
	return r
}
