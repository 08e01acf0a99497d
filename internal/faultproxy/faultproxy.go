// Package faultproxy puts a controllable fault in front of a real JSON-RPC
// endpoint (the dev chain) for gateway tests: pass through, fail with 502,
// hang past a timeout, claim the wrong chain, lag behind, or slow down. It
// counts the calls it sees per method, so a test can prove an upstream was
// (or was not) touched. WebSocket upgrades are relayed too (ws.go), for
// subscription tests.
package faultproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gorilla/websocket"
)

// Mode is what the proxy does to requests.
type Mode int32

const (
	Pass         Mode = iota // forward unchanged
	Fail502                  // answer 502 Bad Gateway
	Hang                     // never answer until the client gives up
	WrongChain               // eth_chainId answers 0x1
	Lag                      // eth_blockNumber answers LagBy blocks behind
	Lie                      // eth_getBalance answers LieBalance; eth_getBlockByNumber/Hash a block with a made-up hash
	Pruned                   // state reads below block PrunedBelow answer geth's "missing trie node"
	Tracer                   // debug_* and trace_* calls are answered here ([]), as a node with those APIs would
	CutCalls                 // a request other than a health probe reaches the node, then the connection is cut before the answer
	Fail502Calls             // 502 for every request but the health probe (the upstream stays healthy; only its calls fail)
	// LieSometimes: a patient liar. Its eth_getBalance and
	// eth_getBlockByNumber answers are honest for the first LieAfter, then
	// every LieEvery-th is a lie as in Lie (Lies counts them).
	LieSometimes
	// DropSends: eth_sendRawTransaction is answered with the right hash
	// (keccak256 of the bytes) and never passed on.
	DropSends
	// Fail503RPCCalls: every request but the health probe is answered
	// HTTP 503 with a well-formed JSON-RPC error body (-32603, "upstream
	// connect error"): a provider's outage that still speaks JSON-RPC.
	Fail503RPCCalls
	// Status500Calls: every request but the health probe is passed to the
	// node and its real answer (results included) sent back with HTTP 500:
	// a provider's proxy that fails the request yet carries the node's body.
	Status500Calls
	// Status500Errors: the node's answers are passed on, but one that is a
	// JSON-RPC error object (a caller's unknown method, a revert) is sent
	// with HTTP 500: a provider that maps error answers to a 5xx.
	Status500Errors

	// AskForLess: a provider refusing the caller's query with the codes
	// real ones use, which the gateway counts as served (charged):
	// eth_getLogs gets Infura's -32005 "query returned more than 10000
	// results", eth_call geth's -32603-style "execution timeout".
	AskForLess
	// HoldFutureSends: an honest node's queue (shapes.go): a send whose
	// nonce is beyond its sender's next one is answered with its hash and
	// kept here, never passed on (geth does not propagate queued
	// transactions); other sends pass.
	HoldFutureSends
	// HangCalls: every request but the health probe hangs until the
	// client gives up (a node that looks healthy and never answers).
	HangCalls
)

// LieBalance is the balance a lying proxy claims; LieHash the block hash.
const (
	LieBalance = "0x2a"
	LieHash    = "0x1111111111111111111111111111111111111111111111111111111111111111"
)

// Proxy is a running fault proxy.
type Proxy struct {
	srv    *httptest.Server
	target string
	mode   atomic.Int32
	delay  atomic.Int64 // added latency, nanoseconds
	// slowPermille: the delay is added to this many of every 1,000 calls
	// (0: to all), at random — an upstream with hiccups (SetHiccups).
	slowPermille atomic.Int64
	LagBy        uint64
	// PrunedBelow: in Pruned mode, state below this block is gone: a
	// balance, nonce, code, storage slot, proof or eth_call at an older
	// block (by number or hash) answers geth's "missing trie node".
	PrunedBelow atomic.Uint64
	numbers     sync.Map // block hash → number, for PrunedBelow
	// PrunedAnswers counts the state reads refused as pruned.
	PrunedAnswers atomic.Int64
	// ExtraFields: an honest node of another client, which adds fields of
	// its own to every block object it answers.
	ExtraFields atomic.Bool
	// GasOffset: an honest node of another client, whose gas estimates
	// differ from geth's by this much.
	GasOffset atomic.Int64
	// TipWei: a lying RPC that suggests this priority fee (wei) in
	// eth_maxPriorityFeePerGas and eth_gasPrice (0: the chain's own).
	TipWei atomic.Uint64
	// Held counts the sends HoldFutureSends kept.
	Held atomic.Int64
	// SwapSendHash: a liar that keeps a caller's eth_sendRawTransaction
	// (never passes it on) and answers with LieHash.
	SwapSendHash atomic.Bool
	// ProofDialect: an honest node of another client whose eth_getProof
	// spells an empty storage trie its own way (proofs.go): DialectReth
	// proves it with the empty trie's own node ["0x80"] (before
	// reth PR 24719), DialectBesu gives a missing account no storageProof
	// entries at all (before Besu PR 11082). 0: as geth.
	ProofDialect atomic.Int32
	// OlderLogs: an honest node of an older client (or another one) whose
	// logs have no blockTimestamp (go-ethereum added it to logs in 1.16).
	OlderLogs atomic.Bool
	// FlipSyncStatus: a liar that passes an eth_sendRawTransactionSync on
	// and answers with the true receipt's status flipped (the right hash).
	FlipSyncStatus atomic.Bool
	// SyncReceiptAhead: with FlipSyncStatus, the flipped receipt also
	// names a block number far ahead of the chain's head (its block hash
	// is the true one): a liar hiding behind "a block the providers have
	// not seen yet".
	SyncReceiptAhead atomic.Bool
	// SyncReceiptOtherBlock: with FlipSyncStatus, the flipped receipt also
	// names another block hash at its true height (LieHash): a liar
	// hiding behind "another branch".
	SyncReceiptOtherBlock atomic.Bool
	// FakeSyncReceipts: a liar that keeps every eth_sendRawTransactionSync
	// (never passes it on) and answers each, batch or not, with a
	// fabricated successful receipt of its hash in the latest block: no
	// provider ever has a receipt to judge it by.
	FakeSyncReceipts atomic.Bool
	// CallGasCap: an honest node of another client with a lower eth_call
	// gas cap (or EVM timeout): an eth_call asking for more gas than this
	// is answered with -32000 "out of gas", where a provider answers (0:
	// no cap).
	CallGasCap atomic.Uint64
	// orphanOf: transaction hash → the replaced block OrphanTx answers it
	// from (orphans.go); orphans: any is set. OrphanAnswers counts them.
	orphanOf      sync.Map
	orphans       atomic.Bool
	OrphanAnswers atomic.Int64
	// OrphansAtHead: ShapeSelfConsistentBlock lies only about blocks at
	// most one below the head (an honest node's orphans).
	OrphansAtHead atomic.Bool
	// LieAfter and LieEvery shape LieSometimes (LieEvery 0 means 5).
	LieAfter, LieEvery atomic.Int64
	// Answered counts the answers LieSometimes could have lied in; Lies
	// the lies told; FirstLieAt is Answered at the first lie (0: none yet).
	Answered, Lies, FirstLieAt atomic.Int64
	shape                      atomic.Int32 // how LieSometimes lies (shapes.go)
	bodyLie                    atomic.Int32 // what ShapeBody alters (bodies.go)
	// proofLies: the (account, block) balances ShapeProvedValue or
	// ShapeProofNode lied about, whose eth_getProof it then alters
	// (proofs.go).
	proofLies sync.Map

	mu      sync.Mutex
	calls   map[string]int
	headers http.Header                // of the latest request
	errorOf map[string]json.RawMessage // method → the error object its calls are answered with (SetErrorFor)

	wsMu sync.Mutex
	ws   map[*wsPair]struct{} // open WebSockets (ws.go)
	// ForgeFeeds: every eth_subscription notification relayed down has its
	// hashes replaced by LieHash and its log data by LieBalance (a node
	// pushing forged heads and Transfer logs); Forged counts them (ws.go).
	ForgeFeeds atomic.Bool
	Forged     atomic.Int64
}

// New starts a proxy in front of target.
func New(target string) *Proxy {
	p := &Proxy{target: target, LagBy: 50, calls: map[string]int{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL of the proxy.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *Proxy) Close() { p.CutSockets(); p.srv.CloseClientConnections(); p.srv.Close() }

// SetMode switches the fault.
func (p *Proxy) SetMode(m Mode) { p.mode.Store(int32(m)) }

// Mode is what the proxy does now.
func (p *Proxy) Mode() Mode { return Mode(p.mode.Load()) }

// SetDelay adds latency to every answer.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// SetHiccups adds d to a random share of the calls (health probes
// included): an upstream slow now and then without failing.
func (p *Proxy) SetHiccups(d time.Duration, share float64) {
	p.slowPermille.Store(int64(share * 1000))
	p.delay.Store(int64(d))
}

// SetErrorFor makes every call of method (alone or in a batch) answered
// with the JSON-RPC error object errObj in place of the node's answer, the
// rest of a batch as the node answers; an empty errObj stops it. The
// upstream double of a node whose error messages say what a caller chose.
func (p *Proxy) SetErrorFor(method, errObj string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errorOf == nil {
		p.errorOf = map[string]json.RawMessage{}
	}
	if errObj == "" {
		delete(p.errorOf, method)
		return
	}
	p.errorOf[method] = json.RawMessage(errObj)
}

// Calls returns how many calls of method the proxy received (batch items counted one by one).
func (p *Proxy) Calls(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

// LastHeader returns a header of the latest request the proxy received.
func (p *Proxy) LastHeader(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.headers.Get(name)
}

type call struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params []any           `json:"params"`
}

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// allMethod: every call of the request is to method (and has a param).
func allMethod(calls []call, method string) bool {
	for _, c := range calls {
		if c.Method != method || len(c.Params) == 0 {
			return false
		}
	}
	return len(calls) > 0
}

// askForLess: AskForLess answers a request whose every call is an
// eth_getLogs or an eth_call.
func askForLess(calls []call) bool {
	for _, c := range calls {
		if c.Method != "eth_getLogs" && c.Method != "eth_call" {
			return false
		}
	}
	return len(calls) > 0
}

func decodeCalls(body []byte) ([]call, bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var cs []call
		_ = json.Unmarshal(body, &cs)
		return cs, true
	}
	var c call
	_ = json.Unmarshal(body, &c)
	return []call{c}, false
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		p.serveWS(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	calls, batch := decodeCalls(body)
	p.mu.Lock()
	for _, c := range calls {
		p.calls[c.Method]++
	}
	p.headers = r.Header.Clone()
	errorOf := maps.Clone(p.errorOf)
	p.mu.Unlock()
	if d := time.Duration(p.delay.Load()); d > 0 && (p.slowPermille.Load() == 0 || rand.Int64N(1000) < p.slowPermille.Load()) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	mode := Mode(p.mode.Load())
	if mode == Tracer && len(calls) == 1 && (strings.HasPrefix(calls[0].Method, "debug_") || strings.HasPrefix(calls[0].Method, "trace_")) {
		// The dev chain has no debug or trace API: stand in for one.
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(calls[0].ID) + `,"result":[]}`))
		return
	}
	if mode == DropSends && len(calls) == 1 && calls[0].Method == "eth_sendRawTransaction" && len(calls[0].Params) == 1 {
		raw, _ := calls[0].Params[0].(string)
		b, err := hexutil.Decode(raw)
		if err == nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(calls[0].ID) + `,"result":"` + crypto.Keccak256Hash(b).Hex() + `"}`))
			return
		}
	}
	if mode == AskForLess && askForLess(calls) {
		// Each call (a batch may hold several, all of these two methods)
		// gets its own error, as a provider answers a batch.
		items := make([]string, len(calls))
		for i, c := range calls {
			e := `{"code":-32005,"message":"query returned more than 10000 results. Try with this block range [0x1, 0x2]."}`
			if c.Method == "eth_call" {
				e = `{"code":-32603,"message":"execution timeout"}`
			}
			items[i] = `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"error":` + e + `}`
		}
		out := items[0]
		if batch {
			out = "[" + strings.Join(items, ",") + "]"
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(out))
		return
	}
	if p.FakeSyncReceipts.Load() && allMethod(calls, "eth_sendRawTransactionSync") {
		items := make([]string, len(calls))
		for i, c := range calls {
			raw, _ := c.Params[0].(string)
			b, _ := hexutil.Decode(raw)
			items[i] = `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"result":` + string(p.fabricatedReceipt([]any{crypto.Keccak256Hash(b).Hex()})) + `}`
		}
		out := items[0]
		if batch {
			out = "[" + strings.Join(items, ",") + "]"
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(out))
		return
	}
	if p.SwapSendHash.Load() && len(calls) == 1 && calls[0].Method == "eth_sendRawTransaction" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(calls[0].ID) + `,"result":"` + LieHash + `"}`))
		return
	}
	if c := p.CallGasCap.Load(); c > 0 && len(calls) == 1 && calls[0].Method == "eth_call" && callGas(calls[0]) > c {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(calls[0].ID) + `,"error":{"code":-32000,"message":"out of gas"}}`))
		return
	}
	if mode == HoldFutureSends && len(calls) == 1 && calls[0].Method == "eth_sendRawTransaction" && p.holdFuture(w, calls[0]) {
		return
	}
	switch mode {
	case Fail502:
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case Hang:
		<-r.Context().Done()
		return
	case HangCalls:
		if !healthProbe(calls) {
			<-r.Context().Done()
			return
		}
	case Fail502Calls:
		if !healthProbe(calls) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
	case Fail503RPCCalls:
		if !healthProbe(calls) {
			out := make([]string, len(calls))
			for i, c := range calls {
				out[i] = `{"jsonrpc":"2.0","id":` + string(c.ID) + `,"error":{"code":-32603,"message":"upstream connect error"}}`
			}
			body := out[0]
			if batch {
				body = "[" + strings.Join(out, ",") + "]"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(body))
			return
		}
	case CutCalls:
		if !healthProbe(calls) {
			// The most ambiguous failure: the node got the call (a send
			// may have gone out) and the caller never hears back.
			if resp, err := http.Post(p.target, "application/json", bytes.NewReader(body)); err == nil {
				resp.Body.Close()
			}
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			http.Error(w, "cut", http.StatusBadGateway)
			return
		}
	}
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if mode == WrongChain || mode == Lag || mode == Lie || mode == Pruned || mode == LieSometimes || p.ExtraFields.Load() || p.GasOffset.Load() != 0 || p.TipWei.Load() != 0 || p.OlderLogs.Load() || p.FlipSyncStatus.Load() || p.ProofDialect.Load() != 0 || p.orphans.Load() || len(errorOf) > 0 {
		out = p.rewrite(calls, out, mode, errorOf)
	}
	status := resp.StatusCode
	if mode == Status500Calls && !healthProbe(calls) {
		status = http.StatusInternalServerError
	}
	if mode == Status500Errors && !batch && bytes.Contains(out, []byte(`"error":`)) {
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// setMember sets one member of an object result (a block), if it is one.
func setMember(r *reply, key string, val json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.Result, &obj) == nil && obj != nil {
		obj[key] = val
		r.Result, _ = json.Marshal(obj)
	}
}

// stateAt is where a state method's block parameter stands.
var stateAt = map[string]int{"eth_getBalance": 1, "eth_getTransactionCount": 1, "eth_getCode": 1,
	"eth_getStorageAt": 2, "eth_getProof": 2, "eth_call": 1}

// prunedState reports whether c reads state below PrunedBelow, as a full
// node that keeps only recent state would refuse it: by number, or by a
// block hash (its number asked of the target once, as a node knows the
// blocks it keeps).
func (p *Proxy) prunedState(c call) bool {
	at, ok := stateAt[c.Method]
	if !ok || len(c.Params) <= at {
		return false
	}
	var n uint64
	switch b := c.Params[at].(type) {
	case string:
		v, err := strconv.ParseUint(trim0x(b), 16, 64)
		if err != nil {
			return false // latest, pending, …
		}
		n = v
	case map[string]any:
		h, _ := b["blockHash"].(string)
		if n, ok = p.numberOf(h); !ok {
			return false
		}
	default:
		return false
	}
	return n < p.PrunedBelow.Load()
}

// numberOf is the number of the block with hash h, asked of the target
// once and remembered.
func (p *Proxy) numberOf(h string) (uint64, bool) {
	if v, ok := p.numbers.Load(h); ok {
		return v.(uint64), true
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":["` + h + `",false]}`
	resp, err := http.Post(p.target, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var r struct {
		Result *struct {
			Number string `json:"number"`
		} `json:"result"`
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Result == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(trim0x(r.Result.Number), 16, 64)
	if err != nil {
		return 0, false
	}
	p.numbers.Store(h, n)
	return n, true
}

// rewrite changes the eth_chainId, eth_blockNumber, balance or block answers
// in out.
func (p *Proxy) rewrite(calls []call, out []byte, mode Mode, errorOf map[string]json.RawMessage) []byte {
	methodOf := map[string]string{}
	paramsOf := map[string][]any{}
	pruned := map[string]bool{}
	for _, c := range calls {
		methodOf[string(c.ID)] = c.Method
		paramsOf[string(c.ID)] = c.Params
		if mode == Pruned && p.prunedState(c) {
			pruned[string(c.ID)] = true
		}
	}
	fix := func(r *reply) {
		m := methodOf[string(r.ID)]
		block := m == "eth_getBlockByNumber" || m == "eth_getBlockByHash"
		if p.ExtraFields.Load() && block {
			setMember(r, "clientExtra", json.RawMessage(`"0x1"`))
		}
		if p.FlipSyncStatus.Load() && m == "eth_sendRawTransactionSync" && r.Error == nil {
			var rc map[string]json.RawMessage
			if json.Unmarshal(r.Result, &rc) == nil && rc != nil {
				if string(rc["status"]) == `"0x1"` {
					rc["status"] = json.RawMessage(`"0x0"`)
				} else {
					rc["status"] = json.RawMessage(`"0x1"`)
				}
				if p.SyncReceiptAhead.Load() {
					rc["blockNumber"] = json.RawMessage(`"0xfffffff"`)
				}
				if p.SyncReceiptOtherBlock.Load() {
					rc["blockHash"] = json.RawMessage(strconv.Quote(LieHash))
				}
				r.Result, _ = json.Marshal(rc)
			}
		}
		if p.orphans.Load() {
			p.fromOrphan(m, paramsOf[string(r.ID)], r)
		}
		if d := p.ProofDialect.Load(); d != 0 && m == "eth_getProof" && r.Error == nil {
			dialectProof(d, r)
		}
		if p.OlderLogs.Load() && m == "eth_getLogs" && r.Error == nil {
			var logs []map[string]json.RawMessage
			if json.Unmarshal(r.Result, &logs) == nil {
				for _, l := range logs {
					delete(l, "blockTimestamp")
				}
				r.Result, _ = json.Marshal(logs)
			}
		}
		if tip := p.TipWei.Load(); tip != 0 && (m == "eth_maxPriorityFeePerGas" || m == "eth_gasPrice") && r.Error == nil {
			r.Result = json.RawMessage(strconv.Quote("0x" + strconv.FormatUint(tip, 16)))
		}
		if d := p.GasOffset.Load(); d != 0 && m == "eth_estimateGas" && r.Error == nil {
			var hex string
			_ = json.Unmarshal(r.Result, &hex)
			if n, err := strconv.ParseUint(trim0x(hex), 16, 64); err == nil {
				r.Result = json.RawMessage(strconv.Quote("0x" + strconv.FormatUint(n+uint64(d), 16)))
			}
		}
		lie := mode == Lie
		if mode == LieSometimes && p.lieable(m, r) {
			n := p.Answered.Add(1)
			every := p.LieEvery.Load()
			if every <= 0 {
				every = 5
			}
			if after := n - p.LieAfter.Load(); after > 0 && after%every == 0 {
				p.Lies.Add(1)
				p.FirstLieAt.CompareAndSwap(0, n)
				lie = true // this answer only, as Lie does
			}
		}
		if m == "eth_getProof" && mode == LieSometimes && r.Error == nil {
			if Shape(p.shape.Load()) == ShapeProofPadded {
				padProof(r)
			} else {
				p.alterProof(paramsOf[string(r.ID)], r)
			}
		}
		switch {
		case errorOf[m] != nil:
			r.Result, r.Error = nil, errorOf[m]
		case lie && mode == LieSometimes && Shape(p.shape.Load()) != ShapeValue:
			p.shapeLie(m, paramsOf[string(r.ID)], r)
		case mode == Pruned && pruned[string(r.ID)]:
			p.PrunedAnswers.Add(1)
			r.Result = nil
			r.Error = json.RawMessage(`{"code":-32000,"message":"missing trie node 0000000000000000000000000000000000000000000000000000000000000000 (path ) state 0x0 is not available, not found"}`)
		case mode == WrongChain && m == "eth_chainId":
			r.Result = json.RawMessage(`"0x1"`)
		case lie && m == "eth_getBalance":
			r.Result = json.RawMessage(strconv.Quote(LieBalance))
		case lie && block:
			setMember(r, "hash", json.RawMessage(strconv.Quote(LieHash)))
		case mode == Lag && m == "eth_blockNumber":
			var hex string
			_ = json.Unmarshal(r.Result, &hex)
			n, _ := strconv.ParseUint(trim0x(hex), 16, 64)
			if n > p.LagBy {
				n -= p.LagBy
			} else {
				n = 0
			}
			r.Result = json.RawMessage(strconv.Quote("0x" + strconv.FormatUint(n, 16)))
		}
	}
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var rs []reply
		if json.Unmarshal(trimmed, &rs) != nil {
			return out
		}
		for i := range rs {
			fix(&rs[i])
		}
		b, _ := json.Marshal(rs)
		return b
	}
	var r reply
	if json.Unmarshal(trimmed, &r) != nil {
		return out
	}
	fix(&r)
	b, _ := json.Marshal(r)
	return b
}

// callGas is the gas an eth_call asks for (0: none given).
func callGas(c call) uint64 {
	if len(c.Params) == 0 {
		return 0
	}
	tx, _ := c.Params[0].(map[string]any)
	g, _ := tx["gas"].(string)
	n, _ := strconv.ParseUint(trim0x(g), 16, 64)
	return n
}

func trim0x(s string) string {
	if len(s) >= 2 && s[:2] == "0x" {
		return s[2:]
	}
	return s
}

// healthProbe: every call is eth_chainId or eth_blockNumber (the pool's
// health probe).
func healthProbe(calls []call) bool {
	for _, c := range calls {
		if c.Method != "eth_chainId" && c.Method != "eth_blockNumber" {
			return false
		}
	}
	return true
}
