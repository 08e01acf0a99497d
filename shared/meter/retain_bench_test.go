package meter

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// benchFact is a paid call's Debit as the gateway keeps it: the payload it
// encoded (the real encoder, a real-sized account id) and an entry id.
func benchFact(b *testing.B, i int) fact {
	p, err := events.Encode(&events.Debit{ID: NewRequestID(), TimeMs: 1_790_000_000_000, ChainID: 137, Payer: events.PayerCredits,
		Account: placeholder, Asset: events.AssetUSDT, Amount: money.PricePerCall, Calls: 1})
	if err != nil {
		b.Fatal(err)
	}
	acct := "key_01JD0000000000000000000000"
	return fact{xid: "1790000000000-" + strconv.Itoa(i), data: p[5].(string), ph: placeholder, sub: acct,
		typ: events.TypeDebit, payer: acct, n: 30, kind: factCreditsDebit}
}

// BenchmarkRetentionKeep is the hot path's cost of keeping a fact (the
// payload is encoded for the script anyway; keeping it copies no bytes).
func BenchmarkRetentionKeep(b *testing.B) {
	r := NewRetention(1, 0, 0)
	f := benchFact(b, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.keep(0, f)
		if i%10_000 == 9_999 {
			r.acknowledge(0, 1<<62) // settlementd acknowledges every ~second at 10k/s
		}
	}
}

// TestRetentionMemory measures what 10,000 paid calls/s cost the retention
// (heap per fact, payload included) for the default bound, and what
// happens at the bound: the oldest facts go and are counted. It logs the
// figures docs/decisions.md quotes.
func TestRetentionMemory(t *testing.T) {
	const n = 100_000
	bb := &testing.B{}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	r := NewRetention(1, 0, 0)
	for i := range n {
		r.keep(0, benchFact(bb, i))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	perFact := float64(m1.HeapAlloc-m0.HeapAlloc) / n
	st := r.Stats()
	t.Logf("%d facts kept: %.0f B of heap per fact (ring slot + payload + ids), accounted %d B per fact; "+
		"at 10,000 paid calls/s with ~1 s of ingest lag: %.1f MiB; the default bound (%d MiB, %d facts) holds %.0f s of 10,000/s",
		n, perFact, st.Bytes/n, perFact*10_000/(1<<20), DefaultRetainBytes>>20, DefaultRetainFacts,
		min(float64(DefaultRetainBytes)/float64(st.Bytes/n), float64(DefaultRetainFacts))/10_000)
	if st.Bytes/n < int64(perFact*0.7) {
		t.Errorf("accounted %d B per fact, heap %.0f: the bound undercounts", st.Bytes/n, perFact)
	}
	runtime.KeepAlive(r)

	// The bound: 1,000 facts' worth of bytes, 5,000 kept: the oldest 4,000
	// go, counted; the newest stay.
	small := NewRetention(2, 0, 1000*(benchSize(bb)))
	for i := range 5_000 {
		small.keep(i%2, benchFact(bb, i))
	}
	st = small.Stats()
	if st.Facts > 1000 || st.Facts < 990 || st.Dropped != uint64(5000-st.Facts) {
		t.Fatalf("at the bound: %+v", st)
	}
	t.Logf("at the bound (%d B): %d facts kept, %d let go and counted", 1000*benchSize(bb), st.Facts, st.Dropped)
}

func benchSize(b *testing.B) int64 { f := benchFact(b, 0); return f.size() }

// BenchmarkRetentionKeepAtBound is keeping a fact once the bound is
// reached (settlementd down): each new fact lets the oldest go.
func BenchmarkRetentionKeepAtBound(b *testing.B) {
	f := benchFact(b, 0)
	r := NewRetention(6, 10_000, 0)
	for i := range 10_000 {
		r.keep(i%6, f)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.keep(i%6, f)
	}
	b.StopTimer()
	if st := r.Stats(); st.Facts != 10_000 || st.Dropped < uint64(b.N) {
		b.Fatalf("at the bound: %+v", st)
	}
}
