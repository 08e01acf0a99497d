package verify

import (
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

func jobOf(node string) Job {
	return Job{ChainID: 137, Node: upstream.Ref{Name: node, Kind: upstream.KindNode}}
}

// TestQueueIsFairBetweenNodes: a flood of one node's jobs fills that
// node's slots only; another node's jobs are still queued, taken in turn
// with the flooder's, and must-check jobs go first.
func TestQueueIsFairBetweenNodes(t *testing.T) {
	q := newJobQueue(4, 1000)
	dropped := 0
	for range 100 {
		if ok, _ := q.push(jobOf("flood"), false); !ok {
			dropped++
		}
	}
	if dropped != 96 {
		t.Fatalf("the flooding node had %d jobs dropped, want 96 (4 slots)", dropped)
	}
	for i := range 3 {
		if ok, ev := q.push(jobOf("quiet"), false); !ok || ev != nil {
			t.Fatalf("quiet node's job %d: queued %v, evicted %v", i, ok, ev)
		}
	}
	if ok, _ := q.push(jobOf("quiet"), true); !ok {
		t.Fatal("a must-check job was not queued")
	}
	var order []string
	for range 8 {
		j, _ := q.pop()
		order = append(order, j.Node.Name)
	}
	want := []string{"quiet", "flood", "quiet", "flood", "quiet", "flood", "quiet", "flood"}
	if order[0] != "quiet" {
		t.Fatalf("the must-check job did not go first: %v", order)
	}
	counts := map[string]int{}
	for i, n := range order {
		counts[n]++
		if i >= 1 && i <= 6 && order[i] == order[i+1] {
			t.Fatalf("a node took two turns in a row while the other waited: %v (want like %v)", order, want)
		}
	}
	if counts["quiet"] != 4 || counts["flood"] != 4 || q.depth() != 0 {
		t.Fatalf("took %v, %d left", counts, q.depth())
	}
}

// TestQueueFullEvictsTheLongest: when the whole queue is full, room for a
// node with few jobs waiting is made from the node with the most; a node
// that already waits as much as any is refused instead; a must-check job
// always gets a place while a sampled one waits.
func TestQueueFullEvictsTheLongest(t *testing.T) {
	q := newJobQueue(8, 6)
	for range 5 {
		q.push(jobOf("flood"), false)
	}
	if ok, ev := q.push(jobOf("b"), false); !ok || ev != nil {
		t.Fatalf("b's first job: %v %v", ok, ev)
	}
	// Full (6): b's second evicts the flood's oldest.
	ok, ev := q.push(jobOf("b"), false)
	if !ok || ev == nil || ev.Node.Name != "flood" {
		t.Fatalf("b's second job in a full queue: queued %v, evicted %+v", ok, ev)
	}
	// flood 4, b 2: a flood job is refused (it waits the most).
	if ok, ev := q.push(jobOf("flood"), false); ok || ev != nil {
		t.Fatalf("the longest node's job in a full queue: queued %v, evicted %v", ok, ev)
	}
	// A must-check job of b takes a sampled place.
	if ok, ev := q.push(jobOf("b"), true); !ok || ev == nil || ev.Node.Name != "flood" {
		t.Fatalf("must-check job in a full queue: queued %v, evicted %+v", ok, ev)
	}
	if q.depth() != 6 {
		t.Fatalf("depth %d, want 6", q.depth())
	}
	q.close()
	if _, ok := q.pop(); ok {
		t.Fatal("pop after close")
	}
}

// TestSlowNodeCannotHoldEveryWorker: fairness at the dequeue is not
// enough when one node's checks are slow (a caller chooses costly calls;
// a check may take up to checkTimeout): if every worker is busy with that
// node's checks, another node's jobs wait — and drop — behind them. A
// node has at most maxInFlight of the workers; the others stay free for
// the rest, and the node's next job goes out as soon as one of its own is
// done.
func TestSlowNodeCannotHoldEveryWorker(t *testing.T) {
	q := newJobQueue(64, 1024)
	q.maxInFlight = 3
	for range 10 {
		q.push(jobOf("slow"), false)
	}
	var held []Job
	for range 3 {
		j, _ := q.pop()
		held = append(held, j)
	}
	q.push(jobOf("quick"), false)
	got := make(chan Job, 1)
	go func() { j, _ := q.pop(); got <- j }()
	if j := <-got; j.Node.Name != "quick" {
		t.Fatalf("a fourth worker took %q's job while %q's 3 checks were in flight", j.Node.Name, "slow")
	}
	// Every worker free now waits: slow has 3 in flight, quick nothing.
	go func() { j, _ := q.pop(); got <- j }()
	select {
	case j := <-got:
		t.Fatalf("a worker took %q's job beyond its share of the workers", j.Node.Name)
	case <-time.After(50 * time.Millisecond): // the worker is waiting (nothing it may take)
	}
	q.done(&held[0])
	if j := <-got; j.Node.Name != "slow" {
		t.Fatalf("after one of slow's checks ended, a worker took %q", j.Node.Name)
	}
	q.close()
}
