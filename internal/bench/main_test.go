package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
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
		`{"jsonrpc":"2.0","id":1,"method":"eth_getLogs"}`:                                                         `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"eth_call"}`:                                                            `{"jsonrpc":"2.0","id":1,"result":"0x0000000000000000000000000000000000000000000000000000000000000001"}`,
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

// (t)'s upstreams count their calls by method, batches item by item, and
// answer as the fast upstream does.
func TestMethodUpstreamCounts(t *testing.T) {
	u, err := startMethodUpstream()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"eth_call"}`,
		`[{"jsonrpc":"2.0","id":0,"method":"eth_call"},{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}]`} {
		resp, err := http.Post("http://"+u.addr, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(got), `"result":"0x00`) {
			t.Fatalf("%s: %s", body, got)
		}
	}
	if c := u.counts(); c["eth_call"] != 2 || c["eth_blockNumber"] != 1 || len(c) != 2 {
		t.Fatalf("counts %v", c)
	}
}

// Figures are medians over rounds and the ratios are taken between medians.
func TestReportMediansAndRatios(t *testing.T) {
	b, c := setup{id: "b", name: "plain"}, setup{id: "c", name: "key"}
	// cpu: proxy µs per request (Redis gets half as much).
	r := func(s setup, rps, p99ms, cpu float64) result {
		n := int64(rps * 10)
		return result{Requests: n, DurationUs: 10_000_000, P50Us: 1000, P99Us: p99ms * 1000, setup: s, conc: 64,
			proxyCPU: time.Duration(cpu*float64(n)) * time.Microsecond, redisCPU: time.Duration(cpu/2*float64(n)) * time.Microsecond}
	}
	rs := []result{r(b, 1000, 5, 80), r(c, 700, 6, 90), r(b, 4000, 9, 70), r(c, 100, 7, 100), r(b, 2000, 1, 75), r(c, 1400, 8, 96)}
	out := renderReport(config{conc: []int{64}}, rs, nil)
	for _, want := range []string{
		// medians: b 2000 req/s, p99 5, CPU 75 + 37.5 = 112.5; c 700, p99 7, CPU 96 + 48 = 144
		"| 64 | (b) plain | 2000 | 1000–4000 | 1.00 | 5.00 | 75.0 | 37.5 | 112.5 |",
		"| 64 | (c) key | 700 | 100–1400 | 1.00 | 7.00 | 96.0 | 48.0 | 144.0 |",
		"| 64 | 0.35 | ",
		"| +2.00 |",
		"| 1.28 |", // 144 / 112.5
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// procCPU reads a process's CPU time from /proc: it grows when the process
// works, and pid 0 counts nothing.
func TestProcCPU(t *testing.T) {
	before, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for {
		for i := 0; i < 1_000_000; i++ {
			x += i ^ x
		}
		after, err := procCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s of busy work added %v of CPU time (x=%d)", after-before, x)
		}
	}
	if d, err := procCPU(0); d != 0 || err != nil {
		t.Fatalf("pid 0: %v %v", d, err)
	}
	if _, err := procCPU(1 << 30); err == nil {
		t.Fatal("a process that does not exist has a CPU time")
	}
}
