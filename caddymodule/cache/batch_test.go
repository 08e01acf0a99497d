package cache

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

func TestSplitMerge(t *testing.T) {
	c := New(137, Config{})
	cachedA := item("eth_getBlockByNumber", `["0x1",false]`)
	cachedD := item("eth_getBalance", `["`+addrA+`","0x2"]`)
	c.Store(cachedA, ok(`{"number":"0x1"}`), fin)
	c.Store(cachedD, ok(`"0xd"`), fin)
	c.Store(item("eth_chainId", ""), ok(`"0x89"`), fin)

	items := []jsonrpc.Item{
		*cachedA, // 0: hit
		*item("eth_getBlockByNumber", `["latest",false]`), // 1: uncacheable
		*item("eth_getBlockByNumber", `["0x3",false]`),    // 2: cacheable miss
		*cachedD,                // 3: hit
		{Method: "eth_chainId"}, // 4: notification, hit
		*item("eth_getBlockByNumber", `["0x4",false]`), // 5: cacheable miss, upstream says null
	}
	for i := range items {
		if items[i].Method != "eth_chainId" {
			items[i].ID = json.RawMessage(`"id` + string(rune('0'+i)) + `"`)
		}
	}
	s := c.Split(items, fin)
	if !slices.Equal(s.Hits, []int{0, 3, 4}) || !slices.Equal(s.Forward, []int{1, 2, 5}) {
		t.Fatalf("hits %v forward %v", s.Hits, s.Forward)
	}
	if string(s.Results[1]) != `"0xd"` || len(s.Upstream) != 3 || s.Upstream[1].Method != "eth_getBlockByNumber" ||
		string(s.Upstream[1].Params) != `["0x3",false]` {
		t.Fatalf("results %s upstream %+v", s.Results, s.Upstream)
	}
	for i := range items {
		if s.Cached(i) != slices.Contains(s.Hits, i) {
			t.Fatalf("Cached(%d) wrong", i)
		}
	}

	replies := []jsonrpc.Reply{
		{Response: jsonrpc.ResultResponse(items[1].ID, json.RawMessage(`{"number":"0x99"}`))},
		{Response: jsonrpc.ResultResponse(items[2].ID, json.RawMessage(`{"number":"0x3"}`))},
		{Response: jsonrpc.ResultResponse(items[5].ID, json.RawMessage(`null`))},
	}
	out := s.Merge(replies, fin)
	want := []string{`{"number":"0x1"}`, `{"number":"0x99"}`, `{"number":"0x3"}`, `"0xd"`, `"0x89"`, `null`}
	if len(out) != len(items) {
		t.Fatalf("len %d", len(out))
	}
	for i, r := range out {
		if string(r.Result) != want[i] || string(r.ID) != string(items[i].ID) || r.Err != nil || r.Error != nil {
			t.Errorf("out[%d] = %+v, want result %s id %s", i, r, want[i], items[i].ID)
		}
	}
	// The cacheable miss was stored; null and latest were not.
	if v, hit := c.Lookup(&items[2], fin); !hit || string(v) != `{"number":"0x3"}` {
		t.Fatal("miss not stored by Merge")
	}
	if _, hit := c.Lookup(&items[5], fin); hit {
		t.Fatal("null stored by Merge")
	}
	if st := c.Stats(); st.Stores != 4 {
		t.Fatalf("stores %d", st.Stores)
	}

	// Short replies: the missing ones fail with ErrNoReply, order kept.
	s = c.Split(items, fin)
	if !slices.Equal(s.Forward, []int{1, 5}) {
		t.Fatalf("second split forward %v", s.Forward)
	}
	out = s.Merge(replies[:1], fin)
	if !errors.Is(out[5].Err, jsonrpc.ErrNoReply) || out[5].Error == nil || string(out[5].ID) != `"id5"` ||
		string(out[2].Result) != `{"number":"0x3"}` {
		t.Fatalf("short merge: %+v", out)
	}

	// Failed replies (upstream misbehaved) are passed through and not stored.
	s = c.Split([]jsonrpc.Item{*item("eth_getBlockByNumber", `["0x5",false]`)}, fin)
	bad := jsonrpc.Reply{Response: jsonrpc.ResultResponse(nil, json.RawMessage(`{"number":"0x5"}`)), Err: jsonrpc.ErrDuplicateReply}
	if out := s.Merge([]jsonrpc.Reply{bad}, fin); out[0].Err == nil {
		t.Fatal("error dropped")
	}
	if _, hit := c.Lookup(item("eth_getBlockByNumber", `["0x5",false]`), fin); hit {
		t.Fatal("failed reply stored")
	}

	// Empty batch.
	if s := c.Split(nil, fin); len(s.Merge(nil, fin)) != 0 || len(s.Forward) != 0 {
		t.Fatal("empty batch")
	}
}

// End to end through the codec: parse a batch, split, forward the rest with
// internal ids, match the upstream's (reordered) replies, merge, answer.
func TestSplitMergeCodec(t *testing.T) {
	c := New(137, Config{})
	c.Store(item("eth_chainId", ""), ok(`"0x89"`), fin)
	c.Store(item("eth_getTransactionReceipt", `["`+hashA+`"]`), ok(`{"blockNumber":"0x5"}`), fin)

	body := `[
		{"jsonrpc":"2.0","id":"a","method":"eth_chainId"},
		{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"},
		1,
		{"jsonrpc":"2.0","id":3.0,"method":"eth_getTransactionReceipt","params":["` + strings.ToUpper(hashA) + `"]},
		{"jsonrpc":"2.0","id":null,"method":"eth_getBlockByNumber","params":["0xa",false]}
	]`
	msg, rej := jsonrpc.Parse([]byte(body), jsonrpc.Options{})
	if rej != nil {
		t.Fatal(rej)
	}
	calls, index := msg.Calls()
	s := c.Split(calls, fin)
	if !slices.Equal(s.Hits, []int{0, 2}) || !slices.Equal(s.Forward, []int{1, 3}) {
		t.Fatalf("hits %v forward %v", s.Hits, s.Forward)
	}
	up, err := jsonrpc.EncodeUpstream(s.Upstream)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(up), "eth_chainId") || strings.Contains(string(up), "Receipt") {
		t.Fatalf("cached calls forwarded: %s", up)
	}
	upstreamBody := `[{"jsonrpc":"2.0","id":1,"result":{"number":"0xa"}},{"jsonrpc":"2.0","id":0,"result":"0x100"}]`
	replies, err := jsonrpc.MatchReplies(s.Upstream, []byte(upstreamBody))
	if err != nil {
		t.Fatal(err)
	}
	merged := s.Merge(replies, fin)
	resps := make([]jsonrpc.Response, len(msg.Items))
	for k, i := range index {
		resps[i] = merged[k].Response
	}
	answer, status := jsonrpc.EncodeAnswer(msg, resps)
	invalid, _ := json.Marshal(msg.Items[2].Err) // the codec's wording, whatever it is
	want := `[{"jsonrpc":"2.0","id":"a","result":"0x89"},{"jsonrpc":"2.0","id":2,"result":"0x100"},` +
		`{"jsonrpc":"2.0","id":null,"error":` + string(invalid) + `},` +
		`{"jsonrpc":"2.0","id":3.0,"result":{"blockNumber":"0x5"}},{"jsonrpc":"2.0","id":null,"result":{"number":"0xa"}}]`
	if status != 200 || string(answer) != want {
		t.Fatalf("answer %d\n%s\nwant\n%s", status, answer, want)
	}
	if _, hit := c.Lookup(item("eth_getBlockByNumber", `["0xA",false]`), fin); !hit {
		t.Fatal("forwarded block not stored")
	}
}
