package subscribe

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// BenchmarkFanOut1000: one upstream notification (a real newHeads header)
// offered to 1,000 subscribers that drain their channels. ns/op is the cost of
// one notification's fan-out; deliveries/s = 1000 × 1e9 / ns/op.
func BenchmarkFanOut1000(b *testing.B) {
	h := New(Config{})
	f := newFeed(h, feedKey{chain: 137, kind: KindNewHeads}, nil)
	var wg sync.WaitGroup
	for range 1000 {
		s := &Sub{f: f, ch: make(chan Notification, 256)}
		f.subs[s] = struct{}{}
		wg.Go(func() {
			for range s.ch {
			}
		})
	}
	n := Notification{Result: json.RawMessage(sampleHead), ServedBy: events.ServedBy{Upstream: "alpha"}}
	b.ReportAllocs()
	for b.Loop() {
		f.awaitRoom() // as a fill would: no subscriber cut off by the benchmark's own burst
		f.deliver(n)
	}
	b.StopTimer()
	if len(f.subs) != 1000 {
		b.Fatalf("%d subscribers left", len(f.subs))
	}
	f.endAll(nil)
	wg.Wait()
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "deliveries/s")
}

const sampleHead = `{"parentHash":"0x7c5b7a2ad7fb6e1e1b0c5e0f8b0b2b1dd8d6a3c1b2a0f9e8d7c6b5a4f3e2d1c0","sha3Uncles":"0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347","miner":"0x0000000000000000000000000000000000000000","stateRoot":"0x5d6cded585e73c4e322c30c2f782a336316f17dd85a4863b9d838d2d4b8b3008","transactionsRoot":"0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421","receiptsRoot":"0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421","logsBloom":"0x` +
	`00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000` +
	`","difficulty":"0x0","number":"0x1b4","gasLimit":"0x1c9c380","gasUsed":"0x0","timestamp":"0x6560e7c1","extraData":"0x","mixHash":"0x0000000000000000000000000000000000000000000000000000000000000000","nonce":"0x0000000000000000","baseFeePerGas":"0x7","hash":"0x9b83c12c69edb74f6c8dd5d052765c1adf940e320bd1291696e6fa07829eee71"}`
