// Package verify checks registered nodes' answers off the hot path. A share
// of the requests a node serves — its check rate, which starts at 1 after
// probation and falls with its verified history to a floor
// (upstream.TrustConfig) — is handed to a worker after the caller has been
// answered; the worker asks a configured provider the same questions, as
// the gateway pinned them (caddymodule/trust), and judges the node's answer
// by the provider's (Judge, judge.go): state reads replayed at the block
// hash they were pinned to, blocks compared whole with the provider's block
// of that number or hash, receipts and transactions whatever block they
// name, eth_blockNumber against the provider's head after the node
// answered, sends against keccak256 of their bytes and, after a grace,
// their inclusion (sends.go). Errors, null and [] are answers like any
// other. Answers the gateway screened before delivery (an error, nothing,
// a block the providers never saw at that height: caddymodule/trust
// Screen) were rerouted to a provider; that provider's answer is the
// truth they are judged by, always, at no further provider call.
//
// Checks run on DefaultWorkers workers from a queue that is fair between
// nodes (queue.go); what becomes of every sampled answer — checked,
// dropped, failed — is booked on the node (upstream.Pool.NoteCheck), and a
// node whose answers cannot all be checked gets less traffic until they
// can be (upstream/checks.go): a dropped check is never silent.
//
// A node that answered differently is quarantined in the pool at once and
// the evidence, both answers included (digests and an excerpt when large),
// goes to settlementd as an events.NodeMismatch, which quarantines the node
// everywhere and withholds its share. What is judged, rule by rule:
// docs/trust.md.
package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/cache"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Defaults of the verification policy.
const (
	DefaultRate         = 0.05 // a twentieth of a node's requests
	DefaultFirstAnswers = 20   // every one of a node's first 20 requests
	checkTimeout        = 10 * time.Second
	// DefaultProviderQPS and DefaultProviderBurst cap the provider calls
	// all of a gateway's check workers make together (Config.ProviderQPS).
	// 500 a second covers the nodes of a gateway serving 10,000 node calls
	// a second at the 5 % floor, or 500 a second of nodes fresh out of
	// probation (rate 1); beyond it the capacity factor moves traffic to
	// the providers themselves (upstream/checks.go), so checks stay a
	// bounded load on the providers whatever the worker count: 16 workers
	// with a fast provider could otherwise ask thousands a second. Below a
	// busy gateway's call rate at rate 1 it would shrink every new node's
	// share as it leaves probation; set check_qps to the providers' plan.
	DefaultProviderQPS   = 500
	DefaultProviderBurst = 500
)

// Config is the verification policy.
type Config struct {
	// Rate is the share of a node's requests checked (0 < Rate <= 1).
	Rate float64
	// FirstAnswers: a node's first requests on this gateway are all checked.
	FirstAnswers int64
	// Emit hands evidence on (the event writer); nil keeps it in the log.
	Emit func(*events.NodeMismatch) bool
	Log  *zap.Logger
	// SendGrace is how long after a node accepted a send a provider must
	// know the transaction (default DefaultSendGrace).
	SendGrace time.Duration
	// Workers is how many checks run at once (default DefaultWorkers).
	Workers int
	// ProviderQPS caps the provider calls the checks make, all workers
	// together (a token bucket of ProviderBurst, default one second's
	// worth): 0 the default
	// (DefaultProviderQPS), negative no cap. A check the bucket has no
	// token for when a worker takes it is dropped, booked as
	// upstream.CheckDroppedCap: the node's capacity factor falls as for
	// any drop, so its traffic falls to what can be checked.
	ProviderQPS   float64
	ProviderBurst int
	// ProveBodies says, per chain id, whether block bodies (transactions,
	// receipts, a block's logs) are proved by their roots (bodies.go);
	// a chain not named takes BodiesProvableByDefault.
	ProveBodies map[uint64]bool
}

// Job is one node-served request offered for checking.
type Job struct {
	Pool      *upstream.Pool
	ChainID   uint64
	RequestID string // the caller's request (X-Tollgate-Request-Id), named in the evidence
	Node      upstream.Ref
	Calls     []jsonrpc.Item // as sent to the node (pinned)
	Replies   []jsonrpc.Reply
	Finalized uint64
	// Pins say, per call, what the call was pinned to and how it is
	// judged (trust.Plan); nil judges only final answers (before pins).
	Pins []Pin
	// BlockTime is the chain's block interval (the head tolerance).
	BlockTime time.Duration
	// Trusted, when set, are a provider's answers to the same calls
	// (TrustedBy), got after the node answered: the node's answers were
	// screened and rerouted (trust.Screen). They are judged always, by
	// these answers, without asking a provider again.
	Trusted   []jsonrpc.Reply
	TrustedBy string
	// Proved marks the calls whose answers were proved before delivery
	// (Prove): a sampled check counts them as verified without asking a
	// provider again.
	Proved []bool
	// Withhold: Prove replaced answers it could not prove in a part that
	// could not be rerouted (a send's): the part earns the node nothing.
	Withhold bool
	// NoReroute: the part must not be sent again (a send, or a method
	// configured no_retry): Prove withholds instead of rerouting.
	NoReroute bool
}

// Pin is what the gateway made a call mean before a node answered it.
type Pin struct {
	Judge evm.Judge
	Block uint64 // the block number the call is about, when known
}

// Verifier samples node answers and checks them in the background.
type Verifier struct {
	cfg  Config
	jobs *jobQueue // fair between nodes (queue.go)
	seen sync.Map  // node name → *atomic.Int64, requests offered
	stop context.CancelFunc
	wg   sync.WaitGroup

	sends     chan pendingSend // accepted sends awaiting their inclusion check (sends.go)
	sendsDone chan struct{}

	headers sync.Map // chain id → *headers: provider headers for proofs (prove.go)

	limit  *capShares // the checks' provider calls (Config.ProviderQPS), a share per node (capshare.go); nil: no cap
	bodies sync.Map   // chain id → LRU of proven blocks (bodies.go)
	memos  sync.Map   // chain id → block answers proved, by sha256 (bodies.go)
}

// New starts a verifier's worker; Close stops it.
func New(cfg Config) *Verifier {
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.FirstAnswers < 0 {
		cfg.FirstAnswers = 0
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.SendGrace <= 0 {
		cfg.SendGrace = DefaultSendGrace
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ProviderQPS == 0 {
		cfg.ProviderQPS = DefaultProviderQPS
	}
	if cfg.ProviderBurst <= 0 {
		// One second's worth (DefaultProviderBurst at the default rate).
		cfg.ProviderBurst = max(1, int(min(math.Ceil(cfg.ProviderQPS), 1<<30)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Verifier{cfg: cfg, jobs: newJobQueue(perNodeSlots, queueTotalSlots), stop: cancel,
		sends: make(chan pendingSend, sendsQueue), sendsDone: make(chan struct{})}
	if cfg.ProviderQPS > 0 {
		v.limit = newCapShares(cfg.ProviderQPS, cfg.ProviderBurst)
	}
	// One node's checks may hold three quarters of the workers: the rest
	// stay free for the other nodes' (queue.go).
	v.jobs.maxInFlight = max(1, cfg.Workers-cfg.Workers/4)
	for range cfg.Workers {
		v.wg.Add(1)
		go v.run(ctx)
	}
	go v.runSends(ctx)
	return v
}

// Close stops the workers; jobs still queued are dropped.
func (v *Verifier) Close() {
	v.stop()
	v.jobs.close()
	v.wg.Wait()
	<-v.sendsDone
}

// Offer considers a node-served request for checking. It costs the hot
// path an atomic add and, when sampled, a queue push that never blocks. A
// job the node's slots cannot hold is dropped, never silently: the node's
// pool books it (upstream.Pool.NoteCheck), which lowers the node's share
// until its answers can be checked at its rate (upstream/checks.go).
func (v *Verifier) Offer(j Job) {
	if v == nil || j.Node.Kind != upstream.KindNode || len(j.Calls) == 0 {
		return
	}
	rate := v.cfg.Rate
	if tv, ok := j.Pool.Trust(j.Node.Name); ok && j.Pins != nil && tv.Phase != "no-probation" {
		rate = tv.CheckRate // falls with the node's verified history (upstream.TrustConfig)
	} else {
		c, _ := v.seen.LoadOrStore(j.Node.Name, new(atomic.Int64))
		if c.(*atomic.Int64).Add(1) <= v.cfg.FirstAnswers {
			rate = 1
		}
	}
	switch {
	case j.Trusted != nil:
		// Screened: judged by the provider's answers it brings, always.
		v.enqueue(j, true)
	case mustCheck(j):
		// The sends are checked every time (locally); the calls beside
		// them in the caller's batch are sampled like any others. Else a
		// send the node refuses (free: a used nonce) would make every
		// read of its batch a provider replay ahead of every node's
		// sampled checks: a caller's choice of check rate (1) and of
		// whose checks wait.
		sends, rest := splitSends(j)
		if len(rest.Calls) > 0 && rand.Float64() < rate {
			v.enqueue(rest, false)
		}
		v.enqueue(sends, true)
	case rand.Float64() < rate:
		v.enqueue(j, false)
	}
}

// splitSends parts a job into its sends and the rest of its calls (each
// with its replies and pins).
func splitSends(j Job) (sends, rest Job) {
	sends, rest = j, j
	sends.Calls, sends.Replies, sends.Pins = nil, nil, []Pin{}
	rest.Calls, rest.Replies, rest.Pins = nil, nil, []Pin{}
	for k := range min(len(j.Calls), len(j.Replies), len(j.Pins)) {
		to := &rest
		if j.Pins[k].Judge == evm.JudgeSend {
			to = &sends
		}
		to.Calls = append(to.Calls, j.Calls[k])
		to.Replies = append(to.Replies, j.Replies[k])
		to.Pins = append(to.Pins, j.Pins[k])
	}
	return sends, rest
}

// enqueue hands a sampled (or must-check) job to the workers' queue and
// books its fate on the node.
func (v *Verifier) enqueue(j Job, must bool) {
	// The request goes on with its slices (filters rewrite ids in place):
	// the check gets its own.
	j.Calls = append([]jsonrpc.Item(nil), j.Calls...)
	j.Replies = append([]jsonrpc.Reply(nil), j.Replies...)
	if j.Trusted != nil {
		j.Trusted = append([]jsonrpc.Reply(nil), j.Trusted...)
	}
	if j.Proved != nil {
		j.Proved = append([]bool(nil), j.Proved...)
	}
	j.Pool.NoteCheck(j.Node.Name, upstream.CheckOffered)
	queued, evicted := v.jobs.push(j, must)
	if evicted != nil {
		v.dropped(*evicted)
	}
	if !queued {
		v.dropped(j)
	}
}

// dropped books a job no worker will check.
func (v *Verifier) dropped(j Job) {
	metrics.Verifications.WithLabelValues("dropped").Inc()
	j.Pool.NoteCheck(j.Node.Name, upstream.CheckDropped)
}

// mustCheck: sends are checked every time (a hash is a local keccak, no
// provider call), so a node can never swap a caller's transaction.
func mustCheck(j Job) bool {
	for _, p := range j.Pins {
		if p.Judge == evm.JudgeSend {
			return true
		}
	}
	return false
}

func (v *Verifier) run(ctx context.Context) {
	defer v.wg.Done()
	for {
		j, ok := v.jobs.pop()
		if !ok {
			return
		}
		o := v.check(ctx, j)
		if o == upstream.CheckDroppedCap {
			metrics.Verifications.WithLabelValues("dropped_cap").Inc()
		}
		j.Pool.NoteCheck(j.Node.Name, o)
		v.jobs.done(&j)
	}
}

// check asks a provider the job's questions (unless the job brings a
// provider's answers) and judges the node's answers by them (Judge). A
// send's hash is checked locally against keccak256 of its bytes and its
// inclusion later (sends.go); methods nobody can judge (JudgeNone) never
// reach a node. It reports false when the check could not be made (no
// provider answered), upstream.CheckDroppedCap when the gateway's cap on
// the checks' provider calls had no room for it, else CheckDone.
func (v *Verifier) check(ctx context.Context, j Job) upstream.CheckOutcome {
	if _, q := j.Pool.Quarantined(j.Node.Name); q {
		return upstream.CheckDone // already proven; one proof is enough
	}
	var calls []jsonrpc.Item
	var nodeAnswers, given []jsonrpc.Reply
	var pins []Pin
	proved := 0
	for k := range j.Calls {
		if k >= len(j.Replies) {
			break
		}
		r := j.Replies[k]
		pin := Pin{Judge: evm.JudgeFinal}
		if j.Pins != nil {
			pin = j.Pins[k]
		}
		if r.Err != nil {
			continue // no answer reached the caller: nothing to judge
		}
		if j.Trusted == nil && k < len(j.Proved) && j.Proved[k] {
			// Proved before delivery (prove.go): verified, with no
			// provider asked the same question. It counts on the ladder
			// as a sampled match would, at the same rate.
			metrics.Verifications.WithLabelValues("match").Inc()
			v.matched(j, j.Calls[k].Method)
			proved++
			continue
		}
		switch pin.Judge {
		case evm.JudgeSend:
			if r.Response.Error != nil {
				// A refused send is never broadcast again (the caller, told
				// it failed, may have signed another) and earned nothing
				// (the gateway withheld its revenue). Whether the refusal
				// was true cannot be told from its words.
				metrics.Verifications.WithLabelValues("send_refused").Inc()
				continue
			}
			lie, why := CheckSend(&j.Calls[k], r.Result)
			if lie {
				metrics.Verifications.WithLabelValues("mismatch").Inc()
				v.Convict(j, &j.Calls[k], pin, r.Result, why, "keccak256", "")
				return upstream.CheckDone
			}
			// The right hash; whether the node passed the transaction on is
			// known only later (sends.go). Only that counts as a match.
			h := sendHash(j.Calls[k].Params)
			if h != "" {
				v.offerSend(j, k, h)
			}
			if j.Calls[k].Method == "eth_sendRawTransactionSync" && h != "" && isObject(r.Result) {
				// The answer is the transaction's receipt: judged as
				// eth_getTransactionReceipt of that hash is (a flipped
				// status, made-up logs), by the provider's receipt.
				calls = append(calls, jsonrpc.Item{Method: "eth_getTransactionReceipt", Params: json.RawMessage(`["` + h + `"]`), ID: json.RawMessage("0")})
				nodeAnswers = append(nodeAnswers, r)
				pins = append(pins, Pin{Judge: evm.JudgeFinal})
			}
			continue
		case evm.JudgeHead, evm.JudgeFinal, evm.JudgeState, evm.JudgeBlock:
		default:
			continue
		}
		calls = append(calls, j.Calls[k])
		nodeAnswers = append(nodeAnswers, r)
		pins = append(pins, pin)
		if j.Trusted != nil && k < len(j.Trusted) {
			given = append(given, j.Trusted[k])
		}
	}
	if len(calls) == 0 {
		if proved > 0 {
			return upstream.CheckDone // proved before delivery: checked
		}
		metrics.Verifications.WithLabelValues("not_deterministic").Inc()
		return upstream.CheckDone
	}
	trusted, by := given, j.TrustedBy
	if j.Trusted == nil || len(given) != len(calls) {
		if v.limit != nil && j.Trusted == nil && !mustCheck(j) && !v.limit.allow(queueKey(&j), time.Now()) {
			// Over the node's share of the gateway's cap on the checks'
			// provider calls, with nothing left over: a sampled check,
			// dropped and booked so (the node's factor falls). Must-check jobs (sends) are not sampled work: they
			// go on.
			return upstream.CheckDroppedCap
		}
		body, err := jsonrpc.EncodeUpstream(calls)
		if err != nil {
			return upstream.CheckDone // nothing a provider could be asked
		}
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		// Never hedged: a check is background work no caller waits on, a
		// hedge would be a second provider call the cap never counted, and
		// the pool's public hedge count would grow with each check (a node
		// would see which of its answers were checked).
		res, err := j.Pool.Forward(cctx, body, upstream.ForwardOptions{ProvidersOnly: true, NoHedge: true})
		cancel()
		if err != nil {
			metrics.Verifications.WithLabelValues("no_provider").Inc()
			return upstream.CheckFailed
		}
		trusted, _ = jsonrpc.MatchReplies(calls, res.Body)
		by = res.Upstream.Name
	}
	for k := range calls {
		if k >= len(trusted) {
			break
		}
		jd := Judge(ctx, Case{Pool: j.Pool, Node: j.Node, BlockTime: j.BlockTime, Call: &calls[k], Pin: pins[k], Answer: nodeAnswers[k], Trusted: trusted[k],
			Finalized: j.Finalized})
		switch jd.Outcome {
		case Unjudged:
			metrics.Verifications.WithLabelValues("unjudged").Inc()
		case Match:
			metrics.Verifications.WithLabelValues("match").Inc()
			if nodeAnswers[k].Response.Error == nil {
				// Only a result is verified work. Two refusals alike told
				// no lie, but a node that refuses what a provider refuses
				// (for now, or a call made invalid) did nothing to climb on.
				v.matched(j, calls[k].Method)
			}
		case Mismatch:
			metrics.Verifications.WithLabelValues("mismatch").Inc()
			v.Convict(j, &calls[k], pins[k], AnswerOf(nodeAnswers[k]), jd.Truth, by, jd.Why)
			return upstream.CheckDone
		}
	}
	return upstream.CheckDone
}

// isObject: a JSON object.
func isObject(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) > 0 && t[0] == '{'
}

// AnswerOf is a reply as evidence: its result, or its error object.
func AnswerOf(r jsonrpc.Reply) json.RawMessage {
	if r.Response.Error != nil {
		if len(r.Response.Error.Raw) > 0 {
			return r.Response.Error.Raw
		}
		b, _ := json.Marshal(r.Response.Error)
		return json.RawMessage(`{"error":` + string(b) + `}`)
	}
	if len(bytes.TrimSpace(r.Result)) == 0 {
		return json.RawMessage("null")
	}
	return r.Result
}

// evidenceExcerpt is how much of a large answer evidence keeps verbatim.
const evidenceExcerpt = 4 << 10

// Evidence is an answer as evidence: itself when it fits
// events.MaxEvidenceBytes, else its sha256 digest, length and first
// evidenceExcerpt bytes — never dropped, never the reason a lie goes
// unjudged.
func Evidence(raw json.RawMessage) json.RawMessage {
	if len(raw) <= events.MaxEvidenceBytes {
		return append(json.RawMessage(nil), raw...)
	}
	sum := sha256.Sum256(raw)
	b, _ := json.Marshal(struct {
		SHA256  string `json:"sha256"`
		Bytes   int    `json:"bytes"`
		Excerpt string `json:"excerpt"`
	}{"0x" + hex.EncodeToString(sum[:]), len(raw), string(raw[:evidenceExcerpt])})
	return b
}

// matched books a verified answer and logs a climb of the trust ladder.
func (v *Verifier) matched(j Job, method string) {
	if tv, changed := j.Pool.RecordMatch(j.Node.Name, method); changed {
		v.cfg.Log.Info("node climbed the trust ladder", zap.Uint64("chain_id", j.ChainID), zap.String("node", j.Node.Name),
			zap.String("phase", tv.Phase), zap.Float64("traffic_share", tv.Share), zap.Int64("verified_matches", tv.Matches),
			zap.Int("verified_methods", tv.Methods), zap.Float64("check_rate", tv.CheckRate))
	}
}

// Convict quarantines the node and hands the evidence on (the verifier's
// checks, and the shadow calls of nodes in probation).
func (v *Verifier) Convict(j Job, call *jsonrpc.Item, pin Pin, lie, truth json.RawMessage, by, why string) {
	reason := "answered " + call.Method + " unlike provider " + by
	if why != "" {
		reason += " (" + why + ")"
	}
	switch by {
	case "keccak256":
		reason = "answered " + call.Method + " with a hash that is not keccak256 of the transaction"
	case "head":
		reason = "answered " + call.Method + " with a head no provider has"
	case "eth_getProof":
		reason = "answered " + call.Method + " with a value its own eth_getProof does not prove (" + why + ")"
	case "header hash":
		reason = "answered " + call.Method + " with a block header that is not the block's (" + why + ")"
	case "inclusion":
		reason = "accepted a transaction (" + call.Method + ") that no provider knew after the grace, and a provider accepted it on resend"
	}
	standing, _ := j.Pool.Trust(j.Node.Name) // before the quarantine resets it
	if !j.Pool.Quarantine(j.Node.Name, reason) {
		return
	}
	block := max(cache.Block(call), pin.Block, answerBlock(truth), answerBlock(lie))
	ev := &events.NodeMismatch{ID: meter.NewRequestID(), TimeMs: time.Now().UnixMilli(), ChainID: j.ChainID, NodeID: j.Node.NodeID, RequestID: j.RequestID,
		Method: call.Method, Params: Evidence(call.Params), Block: block,
		NodeAnswer: Evidence(lie), TrustedAnswer: Evidence(truth), TrustedBy: by}
	if ev.NodeID == "" {
		ev.NodeID = j.Node.Name
	}
	// Every answer since the node began to serve callers here was a
	// caller's: its lies may go back that far (settlement withholds its
	// share of those epochs that are not settled yet).
	if !standing.ServingSince.IsZero() {
		ev.SuspectSinceMs = standing.ServingSince.UnixMilli()
	}
	v.cfg.Log.Warn("registered node quarantined: its answer differs from a configured provider's",
		zap.Uint64("chain_id", j.ChainID), zap.String("node", j.Node.Name), zap.String("method", call.Method),
		zap.String("evidence", ev.ID), zap.String("provider", by))
	if v.cfg.Emit != nil && !v.cfg.Emit(ev) {
		v.cfg.Log.Error("node evidence could not be queued", zap.String("evidence", ev.ID))
	}
}

func isNull(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) == 0 || string(t) == "null"
}
