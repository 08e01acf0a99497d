package cache

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// FuzzKey checks that canonicalisation never panics and is idempotent: the
// canonical params of a cacheable call are themselves cacheable, with the
// same plan, the same canonical form and the same key. It also feeds the
// input to the result scanner as an upstream answer.
func FuzzKey(f *testing.F) {
	methods := make([]string, 0, len(rules))
	for m := range rules {
		methods = append(methods, m)
	}
	slices.Sort(methods) // stable method numbering across runs
	for i, tc := range ruleCases {
		f.Add(uint8(slices.Index(methods, tc.method)), []byte(tc.params), uint64(fin))
		if tc.result != "" {
			f.Add(uint8(i), []byte(tc.result), uint64(i))
		}
	}
	f.Add(uint8(0), []byte(`["\ud83e\udd8a","\u0000",{"0XaB":[1e5,-0.0,{"":null}]}]`), uint64(0))
	f.Add(uint8(3), []byte(`[{"blockNumber":"0x0000"}]`), ^uint64(0))

	f.Fuzz(func(t *testing.T, m uint8, params []byte, finalized uint64) {
		method := methods[int(m)%len(methods)]
		it := &jsonrpc.Item{ID: json.RawMessage(`1`), Method: method, Params: json.RawMessage(params)}

		// Generic canonical form: parse ∘ emit is a fixed point.
		if n, err := parseCanonical(params); err == nil {
			c1 := appendCanonical(nil, &n)
			n2, err := parseCanonical(c1)
			if err != nil {
				t.Fatalf("canonical form %s does not parse: %v", c1, err)
			}
			if c2 := appendCanonical(nil, &n2); !bytes.Equal(c1, c2) {
				t.Fatalf("not idempotent:\n%s\n%s", c1, c2)
			}
			if !json.Valid(c1) {
				t.Fatalf("canonical form is not JSON: %s", c1)
			}
		}

		// Rules on top: the canonical call is the same call.
		p1, n1, ok1 := analyze(it)
		k1, cacheable := Cacheable(7, it, finalized)
		if ok1 {
			c1 := appendCanonical(nil, &n1)
			it2 := &jsonrpc.Item{ID: it.ID, Method: method, Params: c1}
			p2, n2, ok2 := analyze(it2)
			if !ok2 || p2 != p1 {
				t.Fatalf("%s %s: canonical %s analyses differently (%v %+v vs %+v)", method, params, c1, ok2, p2, p1)
			}
			if c2 := appendCanonical(nil, &n2); !bytes.Equal(c1, c2) {
				t.Fatalf("rules not idempotent:\n%s\n%s", c1, c2)
			}
			k2, cacheable2 := Cacheable(7, it2, finalized)
			if cacheable != cacheable2 || k1 != k2 {
				t.Fatalf("%s %s: key changed after canonicalisation", method, params)
			}
		} else if cacheable {
			t.Fatal("cacheable without a plan")
		}

		// The input as an upstream answer: must not panic.
		Storable(it, &jsonrpc.Response{Result: params}, finalized)
		resultBlockNumber(params)
	})
}
