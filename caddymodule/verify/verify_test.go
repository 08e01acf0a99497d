package verify

import (
	"encoding/json"
	"testing"
)

// TestSame: canonical comparison — key order, hex case and fields only one
// client returns do not make two answers differ; a changed value, a
// missing array element or a different type does.
func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"hash":"0xAB","number":"0x1"}`, `{"number":"0x1","hash":"0xab"}`, true},
		{`{"hash":"0xab","totalDifficulty":"0x0"}`, `{"hash":"0xab"}`, true},
		{`{"hash":"0xab"}`, `{"hash":"0xac"}`, false},
		{`["0x1","0x2"]`, `["0x1"]`, false},
		{`"0x2a"`, `"0x2A"`, true},
		{`"0x2a"`, `"0x2b"`, false},
		{`{"logs":[{"data":"0x00"}]}`, `{"logs":[{"data":"0x01"}]}`, false},
		{`true`, `false`, false},
		{`1`, `1`, true},
		{`{"a":"x"}`, `["x"]`, false},
		{`"name"`, `"NAME"`, false},
	} {
		if got := Same(json.RawMessage(c.a), json.RawMessage(c.b)); got != c.same {
			t.Errorf("Same(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
