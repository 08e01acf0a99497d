package subscribe

import (
	"fmt"
	"testing"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestHeadsAndLogsDedupe: the rules the failover relies on, step by step. A
// head already delivered (same number and hash) is dropped; the same number
// with a new hash is a reorg and passes; a log is delivered once per
// (blockHash, logIndex, removed), and its removal passes too.
func TestHeadsAndLogsDedupe(t *testing.T) {
	h := New(Config{LogWindow: 3})
	sub := func(f *feed) *Sub {
		s := &Sub{f: f, ch: make(chan Notification, 64)}
		f.subs[s] = struct{}{}
		return s
	}
	drain := func(s *Sub) (out []string) {
		for {
			select {
			case n := <-s.ch:
				out = append(out, string(n.Result))
			default:
				return out
			}
		}
	}
	by := events.ServedBy{Upstream: "alpha"}

	heads := newFeed(h, feedKey{chain: 137, kind: KindNewHeads}, nil)
	hs := sub(heads)
	head := func(n int, hash string) []byte { return fmt.Appendf(nil, `{"number":"0x%x","hash":"%s"}`, n, hash) }
	for _, step := range []struct {
		n    int
		hash string
	}{{5, "0xa5"}, {5, "0xa5"}, {6, "0xa6"}, {5, "0xa5"}, {6, "0xb6"}, {7, "0xb7"}, {7, "0xb7"}} {
		if err := heads.handle(nil, head(step.n, step.hash), by); err != nil {
			t.Fatal(err)
		}
	}
	got := drain(hs)
	want := []string{string(head(5, "0xa5")), string(head(6, "0xa6")), string(head(6, "0xb6")), string(head(7, "0xb7"))}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("heads delivered\n%v\nwant\n%v", got, want)
	}

	logs := newFeed(h, feedKey{chain: 137, kind: KindLogs, filter: "{}"}, nil)
	ls := sub(logs)
	log := func(block, idx int, removed ...bool) []byte {
		return fmt.Appendf(nil, `{"blockHash":"0x%x","blockNumber":"0x%x","logIndex":"0x%x","removed":%v}`, block, block, idx, len(removed) > 0 && removed[0])
	}
	for _, l := range [][]byte{log(1, 0), log(1, 1), log(1, 0), log(1, 1), log(1, 1, true), log(1, 1, true), log(2, 0)} {
		if err := logs.handle(nil, l, by); err != nil {
			t.Fatal(err)
		}
	}
	if got := drain(ls); len(got) != 4 {
		t.Fatalf("logs delivered %v, want 4 (two logs, one removal, one new)", got)
	}
	if logs.logTop != 2 {
		t.Fatalf("highest log block %d, want 2", logs.logTop)
	}
	// The window holds 3: the oldest key is forgotten, memory stays bounded.
	if len(logs.seen) != 3 || len(logs.seenRing) != 3 {
		t.Fatalf("dedupe window holds %d/%d keys, want 3", len(logs.seen), len(logs.seenRing))
	}
}
