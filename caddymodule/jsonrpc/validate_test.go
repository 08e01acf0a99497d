package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Independent checkers built on encoding/json's token stream, so the tests do
// not trust the package's own scanner to judge the package's own output.

// objectMembers decodes a JSON object into its members, failing on
// duplicate keys (which map-based decoding would hide).
func objectMembers(raw []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %s", raw)
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := kt.(string)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("duplicate member %q in %s", k, raw)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// checkResponse verifies raw is one valid JSON-RPC 2.0 response object and
// returns its members.
func checkResponse(raw []byte) (map[string]json.RawMessage, error) {
	if !validJSONStrict(raw) {
		return nil, fmt.Errorf("response is not valid UTF-8 JSON: %q", raw)
	}
	m, err := objectMembers(raw)
	if err != nil {
		return nil, err
	}
	for k := range m {
		switch k {
		case "jsonrpc", "id", "result", "error":
		default:
			return nil, fmt.Errorf("unexpected member %q in %s", k, raw)
		}
	}
	var v string
	if json.Unmarshal(m["jsonrpc"], &v) != nil || v != "2.0" {
		return nil, fmt.Errorf("jsonrpc is not \"2.0\" in %s", raw)
	}
	id, ok := m["id"]
	if !ok {
		return nil, fmt.Errorf("no id in %s", raw)
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', string(id) == "null":
	default:
		return nil, fmt.Errorf("id %s is not a string, number or null", id)
	}
	_, hasResult := m["result"]
	e, hasError := m["error"]
	if hasResult == hasError {
		return nil, fmt.Errorf("need exactly one of result and error: %s", raw)
	}
	if hasError {
		em, err := objectMembers(e)
		if err != nil {
			return nil, fmt.Errorf("error member: %v", err)
		}
		for k := range em {
			if k != "code" && k != "message" && k != "data" {
				return nil, fmt.Errorf("unexpected error member %q", k)
			}
		}
		code := string(em["code"])
		if code == "" || strings.ContainsAny(code, ".eE\"") {
			return nil, fmt.Errorf("error code %q is not an integer", code)
		}
		var msg string
		if json.Unmarshal(em["message"], &msg) != nil {
			return nil, fmt.Errorf("error message is not a string: %s", e)
		}
	}
	return m, nil
}

// checkAnswer verifies an EncodeAnswer body: an object for a single request,
// a non-empty array of response objects for a batch. It returns the objects.
func checkAnswer(body []byte, batch bool) ([]json.RawMessage, error) {
	if !batch {
		if _, err := checkResponse(body); err != nil {
			return nil, err
		}
		return []json.RawMessage{body}, nil
	}
	if !validJSONStrict(body) {
		return nil, fmt.Errorf("batch answer is not JSON: %q", body)
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(body, &arr); err != nil {
		return nil, fmt.Errorf("batch answer is not an array: %v", err)
	}
	if len(arr) == 0 {
		return nil, fmt.Errorf("empty batch answer (should be 204)")
	}
	for _, r := range arr {
		if _, err := checkResponse(r); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

func validJSONStrict(b []byte) bool { return validJSON(b) }

// idOf returns the raw id of a response object.
func idOf(raw []byte) string {
	m, err := objectMembers(raw)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(m["id"])
}

// codeOf returns the error code of a response object, or 0.
func codeOf(raw []byte) int {
	m, err := objectMembers(raw)
	if err != nil {
		return 0
	}
	var e struct{ Code int }
	if json.Unmarshal(m["error"], &e) != nil {
		return 0
	}
	return e.Code
}
