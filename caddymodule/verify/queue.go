package verify

import (
	"strconv"
	"sync"
)

// The verifier's queue is fair between nodes. Every node has
// its own bounded slots, and the workers take the nodes in turn, so a flood
// of one node's answers waits behind, and is dropped from, that node's
// slots only: it can neither push another node's checks out nor keep the
// workers from them. Must-check jobs (sends, answers a provider already
// gave the truth for: cheap, and never to be skipped) have slots and a
// turn of their own and go before sampled ones. When the queue as a whole
// is full, the job that makes room is the oldest sampled one of the node
// with the most waiting — never the newcomer's when it waits less.
//
// Turns at the dequeue are not enough when one node's checks are slow (a
// caller picks costly calls; a check may take checkTimeout): every worker
// would be busy with that node's checks and the others' jobs would wait,
// and drop, behind them. A node has at most maxInFlight checks running;
// the other workers stay free for the other nodes.
const (
	DefaultWorkers  = 16   // checks in flight per gateway
	perNodeSlots    = 64   // sampled jobs waiting per node (and as many must-check ones)
	queueTotalSlots = 1024 // jobs waiting per gateway, all nodes
)

// nodeJobs is one node's waiting jobs.
type nodeJobs struct {
	must, sampled []Job
}

type jobQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	nodes   map[string]*nodeJobs
	must    []string // nodes with must-check jobs, in turn order
	sampled []string // nodes with sampled jobs, in turn order
	total   int
	perNode int
	cap     int
	closed  bool
	// inFlight counts each node's checks being run (pop to done);
	// maxInFlight caps it (0: no cap).
	inFlight    map[string]int
	maxInFlight int
}

func newJobQueue(perNode, total int) *jobQueue {
	q := &jobQueue{nodes: map[string]*nodeJobs{}, perNode: perNode, cap: total, inFlight: map[string]int{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// queueKey is a node on a chain (one node may serve several chains, each
// its own pool and standing).
func queueKey(j *Job) string { return strconv.FormatUint(j.ChainID, 10) + "/" + j.Node.Name }

// push queues j (must: a must-check job). It reports whether j was queued
// and the job evicted to make room for it, if any (the caller books both).
func (q *jobQueue) push(j Job, must bool) (queued bool, evicted *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false, nil
	}
	key := queueKey(&j)
	nj := q.nodes[key]
	if nj == nil {
		nj = &nodeJobs{}
		q.nodes[key] = nj
	}
	mine := &nj.sampled
	if must {
		mine = &nj.must
	}
	if len(*mine) >= q.perNode {
		q.forget(key, nj)
		return false, nil
	}
	if q.total >= q.cap {
		// Room is made at the expense of the node with the most sampled
		// jobs waiting, if it has more than this one's node (a must-check
		// job takes any sampled job's place).
		longest, n := "", 0
		for k, o := range q.nodes {
			if len(o.sampled) > n {
				longest, n = k, len(o.sampled)
			}
		}
		if n == 0 || (!must && n <= len(nj.sampled)+1) {
			q.forget(key, nj)
			return false, nil
		}
		o := q.nodes[longest]
		ev := o.sampled[0]
		o.sampled[0] = Job{}
		o.sampled = o.sampled[1:]
		q.total--
		if len(o.sampled) == 0 {
			q.sampled = without(q.sampled, longest)
			if longest != key {
				q.forget(longest, o)
			}
		}
		evicted = &ev
	}
	if len(*mine) == 0 {
		if must {
			q.must = append(q.must, key)
		} else {
			q.sampled = append(q.sampled, key)
		}
	}
	*mine = append(*mine, j)
	q.total++
	q.cond.Signal()
	return true, evicted
}

// forget removes an empty node's entry; q.mu held.
func (q *jobQueue) forget(key string, nj *nodeJobs) {
	if len(nj.must) == 0 && len(nj.sampled) == 0 {
		delete(q.nodes, key)
	}
}

// pop waits for a job: a must-check one first, the nodes in turn, of a
// node with fewer than maxInFlight checks running. ok is false once the
// queue is closed. The worker calls done with the job when it is checked.
func (q *jobQueue) pop() (Job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closed {
			return Job{}, false
		}
		for _, must := range []bool{true, false} {
			ring := &q.sampled
			if must {
				ring = &q.must
			}
			for i, key := range *ring {
				if q.maxInFlight > 0 && q.inFlight[key] >= q.maxInFlight {
					continue // its share of the workers is busy: the next node's turn
				}
				nj := q.nodes[key]
				list := &nj.sampled
				if must {
					list = &nj.must
				}
				j := (*list)[0]
				(*list)[0] = Job{}
				*list = (*list)[1:]
				q.total--
				q.inFlight[key]++
				// The node's turn is over: to the back of the line, or out of it.
				*ring = append((*ring)[:i], (*ring)[i+1:]...)
				if len(*list) > 0 {
					*ring = append(*ring, key)
				}
				q.forget(key, nj)
				return j, true
			}
		}
		q.cond.Wait()
	}
}

// done ends a popped job's check: its node may have another worker.
func (q *jobQueue) done(j *Job) {
	q.mu.Lock()
	key := queueKey(j)
	if q.inFlight[key]--; q.inFlight[key] <= 0 {
		delete(q.inFlight, key)
	}
	q.cond.Broadcast()
	q.mu.Unlock()
}

// close wakes the workers and drops what waits.
func (q *jobQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.nodes, q.must, q.sampled, q.total = map[string]*nodeJobs{}, nil, nil, 0
	q.cond.Broadcast()
	q.mu.Unlock()
}

// depth is how many jobs wait.
func (q *jobQueue) depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.total
}

func without(ring []string, key string) []string {
	for i, k := range ring {
		if k == key {
			return append(ring[:i], ring[i+1:]...)
		}
	}
	return ring
}
