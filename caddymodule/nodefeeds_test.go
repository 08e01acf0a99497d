package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// registerWSNode puts a node serving chain 137 at url, with a WebSocket URL
// on the same host (the dev chain serves both on one port), into the
// gateway's registry with status.
func (e *meterEnv) registerWSNode(t *testing.T, id, url, status string) {
	t.Helper()
	raw, err := registry.Encode(&registry.Node{ID: id, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
		URL: url, WSURL: "ws" + strings.TrimPrefix(url, "http"), ChainIDs: []uint64{137}, Status: status, UpdatedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(t.Context(), e.prefix+registry.NodesKey, id, raw).Err(); err != nil {
		t.Fatal(err)
	}
}

// note is one eth_subscription notification's result.
type note struct {
	Number string `json:"number"`
	Hash   string `json:"hash"`
	Data   string `json:"data"`
	TxHash string `json:"transactionHash"`
	Block  string `json:"blockHash"`
}

// readNote reads messages until a notification of sub arrives.
func readNote(t *testing.T, c *wsClient, sub string) note {
	t.Helper()
	for {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Subscription string `json:"subscription"`
				Result       note   `json:"result"`
			} `json:"params"`
		}
		if err := json.Unmarshal(c.next(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Method == "eth_subscription" && m.Params.Subscription == sub {
			return m.Params.Result
		}
	}
}

func subscribe(t *testing.T, c *wsClient, params string) string {
	t.Helper()
	a := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":`+params+`}`))
	var id string
	if a.Error != nil || json.Unmarshal(a.Result, &id) != nil {
		t.Fatalf("eth_subscribe %s: %s %+v", params, a.Result, a.Error)
	}
	return id
}

// TestNodeFeedsStayOnProviders: a node that has passed
// probation and holds full share (it serves callers' calls), whose socket
// pushes forged heads and forged USDT Transfer logs, never gets a feed
// while trust is on: notifications are pushed, not asked, so there is
// nothing to pin and sample before delivery; feeds stay on providers. 0
// forged notifications are delivered, and the node's socket is never
// subscribed on.
func TestNodeFeedsStayOnProviders(t *testing.T) {
	o := trustOpts()
	o.extra = "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\ttimeout 2s\n\t\t\t\tprobation 10 2\n\t\t\t\tladder 0:1\n\t\t\t}"
	e := startSockets(t, o)
	forger := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(forger.Close)
	forger.ForgeFeeds.Store(true)
	const nodeID = "NODE-EU-FORGERFD"
	e.registerWSNode(t, nodeID, forger.URL(), registry.StatusOnline)
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	e.waitForNode(t, nodeID) // out of probation, serving callers at full share
	if tv := e.trustOf(t, nodeID); tv["phase"] != "trusted" {
		t.Fatalf("the node is not at full share: %v", tv)
	}

	c := e.dial(t, "/rpc/137")
	heads := subscribe(t, c, `["newHeads"]`)
	logs := subscribe(t, c, `["logs",{"address":"`+e.net.Manifest.Polygon.USDT+`"}]`)
	hashes := e.transferUSDT(t, 3)
	want := map[string]bool{}
	for _, h := range hashes {
		want[strings.ToLower(h)] = true
	}
	gotLogs, gotHeads := 0, 0
	deadline := time.Now().Add(time.Minute)
	var last uint64
	for gotLogs < len(hashes) || gotHeads < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("%d logs and %d heads in a minute", gotLogs, gotHeads)
		}
		var m struct {
			Params struct {
				Subscription string `json:"subscription"`
				Result       note   `json:"result"`
			} `json:"params"`
		}
		raw := c.next()
		if strings.Contains(string(raw), strings.TrimPrefix(faultproxy.LieHash, "0x")) {
			t.Fatalf("a forged notification was delivered: %s", raw)
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		switch m.Params.Subscription {
		case heads:
			n, _ := hexutil.DecodeUint64(m.Params.Result.Number)
			if last > 0 && n != last+1 {
				t.Fatalf("heads jumped from %d to %d", last, n)
			}
			last = n
			gotHeads++
		case logs:
			if !want[strings.ToLower(m.Params.Result.TxHash)] || m.Params.Result.Data == faultproxy.LieBalance {
				t.Fatalf("a log the chain did not produce: %+v", m.Params.Result)
			}
			gotLogs++
		}
	}
	if n := forger.Calls("eth_subscribe"); n != 0 || forger.Forged.Load() != 0 {
		t.Fatalf("the node was subscribed on %d times and forged %d notifications", n, forger.Forged.Load())
	}
	t.Logf("%d true logs and %d consecutive heads delivered from providers; the full-share node got 0 subscriptions", gotLogs, gotHeads)
}

// TestQuarantinedNodeFeedMovesAtOnce: with trust off (an
// operator's own nodes) a node serves the newHeads feed; when it is
// quarantined — here by settlementd's registry record, as another gateway's
// conviction reaches this one — its upstream socket is closed within a
// second, the feed moves to the provider, and the subscriber's heads go on
// consecutively, each the chain's own block hash: no gap, no repeat.
func TestQuarantinedNodeFeedMovesAtOnce(t *testing.T) {
	o := trustOpts()
	o.extra = "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\ttimeout 2s\n\t\t\t\tprobation off\n\t\t\t}"
	e := startSockets(t, o)
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	const nodeID = "NODE-EU-FEEDQUAR"
	e.registerWSNode(t, nodeID, node.URL(), registry.StatusOnline)
	e.waitForNode(t, nodeID)

	c := e.dial(t, "/rpc/137")
	sub := subscribe(t, c, `["newHeads"]`)
	if node.Sockets() == 0 {
		t.Fatalf("the feed did not go to the trusted node (it has %d sockets)", node.Sockets())
	}
	client := e.net.Polygon.Client()
	var last uint64
	check := func(n note) {
		t.Helper()
		num, err := hexutil.DecodeUint64(n.Number)
		if err != nil {
			t.Fatalf("head %+v", n)
		}
		if last > 0 && num != last+1 {
			t.Fatalf("heads jumped from %d to %d", last, num)
		}
		last = num
		h, err := client.HeaderByNumber(t.Context(), hexutil.MustDecodeBig(n.Number))
		if err != nil || !strings.EqualFold(h.Hash().Hex(), n.Hash) {
			t.Fatalf("head %d hash %s is not the chain's (%v)", num, n.Hash, err)
		}
	}
	for range 5 {
		check(readNote(t, c, sub))
	}
	quarantinedAt := time.Now()
	e.registerWSNode(t, nodeID, node.URL(), registry.StatusQuarantined)
	// Heads keep coming meanwhile; read them while waiting for the node's
	// socket to close.
	done := make(chan time.Duration, 1)
	go func() {
		for time.Since(quarantinedAt) < 30*time.Second {
			if node.Sockets() == 0 {
				done <- time.Since(quarantinedAt)
				return
			}
			time.Sleep(5 * time.Millisecond) // polling the proxy's socket count
		}
		done <- -1
	}()
	for range 20 {
		check(readNote(t, c, sub))
	}
	ended := <-done
	if ended < 0 || ended > 3*time.Second { // registry ticks of 100 ms; a busy machine's room
		t.Fatalf("the quarantined node's feed ended after %v, want within 3 s", ended)
	}
	if st := e.upstreamState(t, nodeID); st != nil && st["quarantined"] != true {
		t.Fatalf("node still serving: %v", st)
	}
	if a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`); a.header.Get("X-Tollgate-Upstream") == nodeID || a.status != http.StatusOK {
		t.Fatalf("a call went to the quarantined node: %d %s", a.status, a.body)
	}
	t.Logf("the node's feed ended %v after its quarantine was published; 25 consecutive true heads, no gap", ended)
}
