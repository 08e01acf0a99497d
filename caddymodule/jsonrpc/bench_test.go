package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

const benchSingle = `{"jsonrpc":"2.0","method":"eth_call","params":[{"to":"0x00000000219ab540356cBB839Cbe05303d7705Fa","data":"0x70a08231000000000000000000000000ab5801a7d398351b8be11c439e05c5b3259aec9b"},"latest"],"id":1}`

func BenchmarkParseSingle(b *testing.B) {
	body := []byte(benchSingle)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, rej := Parse(body, Options{}); rej != nil {
			b.Fatal(rej)
		}
	}
}

func BenchmarkParseBatch100(b *testing.B) {
	body := []byte(batchBody(100))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, rej := Parse(body, Options{}); rej != nil {
			b.Fatal(rej)
		}
	}
}

// BenchmarkParseBatch100Unmarshal is the baseline the parser replaces:
// encoding/json into structs with RawMessage fields (which would also accept
// case-insensitive keys and resolve duplicates silently).
func BenchmarkParseBatch100Unmarshal(b *testing.B) {
	body := []byte(batchBody(100))
	type req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var reqs []req
		if err := json.Unmarshal(body, &reqs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkForwardRoundTrip100(b *testing.B) {
	msg, _ := Parse([]byte(batchBody(100)), Options{})
	var rb strings.Builder
	rb.WriteByte('[')
	for k := 99; k >= 0; k-- {
		rb.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(k) + `,"result":"0x1bc16d674ec80000"}`)
		if k > 0 {
			rb.WriteByte(',')
		}
	}
	rb.WriteByte(']')
	reply := []byte(rb.String())
	resps := make([]Response, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeUpstream(msg.Items); err != nil {
			b.Fatal(err)
		}
		replies, err := MatchReplies(msg.Items, reply)
		if err != nil {
			b.Fatal(err)
		}
		for k := range replies {
			resps[k] = replies[k].Response
		}
		EncodeAnswer(msg, resps)
	}
}
