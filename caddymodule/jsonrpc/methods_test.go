package jsonrpc

import (
	"strings"
	"testing"
)

func TestRequestLabel(t *testing.T) {
	items := func(methods ...string) []Item {
		out := make([]Item, len(methods))
		for i, m := range methods {
			out[i].Method = m
		}
		return out
	}
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		calls []Item
		want  string
	}{
		{nil, ""},
		{items("eth_call"), "eth_call"},
		{items("eth_getBalance", "eth_getBalance", "eth_getBalance"), "eth_getBalance"},
		{items("eth_call", "eth_blockNumber"), "batch"},
		{items("my_secret_method"), "other"},
		{items(long, long), "other"},
		{items("foo_a", "foo_b"), "batch"},
	} {
		if got := RequestLabel(tc.calls); got != tc.want {
			t.Errorf("RequestLabel(%d calls) = %q; want %q", len(tc.calls), got, tc.want)
		}
	}
}
