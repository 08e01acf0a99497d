package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The fast upstream answers what the gateway's probes and the benchmark
// call ask, singly and in batches, with the caller's ids.
func TestUpstreamAnswers(t *testing.T) {
	u, err := startUpstream()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]}`:                                         `{"jsonrpc":"2.0","id":7,"result":"0x4b7c3a1"}`,
		`[{"jsonrpc":"2.0","id":0,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"x","method":"eth_blockNumber"}]`: `[{"jsonrpc":"2.0","id":0,"result":"0x89"},{"jsonrpc":"2.0","id":"x","result":"0x4b7c3a1"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"eth_call"}`:                                                            `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`,
	} {
		resp, err := http.Post("http://"+u.addr, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", body, got, want)
		}
	}
}

// Figures are medians over rounds and the ratios are taken between medians.
func TestReportMediansAndRatios(t *testing.T) {
	b, c := setup{id: "b", name: "plain"}, setup{id: "c", name: "key"}
	r := func(s setup, rps, p99ms float64) result {
		return result{Requests: int64(rps * 10), DurationUs: 10_000_000, P50Us: 1000, P99Us: p99ms * 1000, setup: s, conc: 64}
	}
	rs := []result{r(b, 1000, 5), r(c, 700, 6), r(b, 4000, 9), r(c, 100, 7), r(b, 2000, 1), r(c, 1400, 8)}
	out := renderReport(config{conc: []int{64}}, rs, nil)
	for _, want := range []string{
		"| 64 | (b) plain | 2000 | 1000–4000 | 1.00 | 5.00 |",
		"| 64 | (c) key | 700 | 100–1400 | 1.00 | 7.00 |",
		"| 64 | 0.35 | ",
		"| +2.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
