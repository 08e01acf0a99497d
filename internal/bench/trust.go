package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// The checks' cost at the default trust settings: setups (t) and (t0).
//
// (t) is a gateway with trust as shipped — probation (50 matching shadow
// answers over 3 methods), the default ladder, the default check decay
// and floor, the default cap on the checks' provider calls — and two
// fast fake upstreams speaking JSON-RPC: a registered node and the
// provider. The node earns its way through probation on the gateway's own
// probation questions and on the warm-up's calls, like any newcomer; the
// run then measures a paid eth_call at the head (sampled, never proved:
// each check is one provider replay). The ladder's rungs and the check
// decay are earned over time as well as answers (10 minutes to the second
// rung, 6 hours to the floor), so in a bench the node is on the first rung
// (share 0.1) with a check rate near 1: the report states the phase, share
// and check rate it was measured at, from the admin view.
//
// (t0) is the same gateway and upstreams with the node unjudged
// (probation off, verify off): no pins' checks, no shadows, no trust
// bookkeeping; the node takes every call. Both fake upstreams answer alike,
// so what (t) costs beyond (t0) is the trust machinery at its defaults.
//
// Provider calls per node-served call are counted at the fake provider,
// by method: its eth_call requests beyond the callers' eth_calls it
// served (the gateway's calls minus the node's) are the checks' replays;
// its other requests are the head polls and probes.

// trustKey is (t)/(t0)'s admin token (the admin view of the node).
const trustKey = "bench-admin-token-0123456789abcdef"

// callBody is what (t) and (t0) send: a read at the head, pinned to the
// head block's hash before a node answers, judged by sampling.
const callBody = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x18160ddd"},"latest"]}`

// trustNode is the registered node of (t) and (t0).
const trustNode = "NODE-EU-BENCHTRS"

// trustGatewayCaddyfile: the node gateway with trust at its defaults
// ({TRUST} empty) or the node unjudged ({TRUST} "probation off\nverify off").
const trustGatewayCaddyfile = globalOptions + `http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.BENCH_REDIS_URL}
			key_prefix {PREFIX}
			admin_token ` + trustKey + `
			upstreams {
				allow_private_nodes
				registry_refresh 1s
				{TRUST}
			}
			metering on {
				free_daily_limit 1099511627776
				free_subnet_limit 1099511627776
				rate_limit_ip off
				rate_limit_key off
				key_create_limit off
				ip_concurrency off
			}
			payments {
				vault_address 0x07e145A59Eb7c67fF710f75246a3ee3001B78571
				usdt_address 0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB
				x402_pay_to 0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5
			}
			chain 137 {
				provider bench http://{PROVIDER}
			}
		}
		respond 404
	}
}
`

// methodUpstream is the fast upstream counting its calls by method.
type methodUpstream struct {
	srv   *http.Server
	addr  string
	mu    sync.Mutex
	calls map[string]int64
}

func startMethodUpstream() (*methodUpstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &methodUpstream{addr: l.Addr().String(), calls: map[string]int64{}}
	u.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		var calls []rpcCall
		if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
			_ = json.Unmarshal(t, &calls)
		} else {
			var c rpcCall
			_ = json.Unmarshal(t, &c)
			calls = []rpcCall{c}
		}
		u.mu.Lock()
		for _, c := range calls {
			u.calls[c.Method]++
		}
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		serveRPC(w, r)
	})}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

func (u *methodUpstream) Close() { _ = u.srv.Close() }

// counts is a copy of the calls by method.
func (u *methodUpstream) counts() map[string]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string]int64, len(u.calls))
	for k, v := range u.calls {
		out[k] = v
	}
	return out
}

// trustRig is (t) or (t0): its gateway, node and provider, and the counts
// when the measurement began.
type trustRig struct {
	id               string
	gw               *caddyProc
	node, prov       *methodUpstream
	node0, prov0     map[string]int64
	calls0           float64
	checks0          map[string]float64
	standing, before string
}

// startTrustRig starts (t) (judged: trust at its defaults) or (t0), and
// waits until the node serves callers (it must pass probation first).
func startTrustRig(ctx context.Context, cfg config, rdb *redis.Client, prefix, id string, judged bool, key func(*caddyProc) (string, error)) (*trustRig, string, error) {
	node, err := startMethodUpstream()
	if err != nil {
		return nil, "", err
	}
	prov, err := startMethodUpstream()
	if err != nil {
		node.Close()
		return nil, "", err
	}
	r := &trustRig{id: id, node: node, prov: prov}
	rec, err := registry.Encode(&registry.Node{ID: trustNode, Wallet: "0x00000000000000000000000000000000000000b7", Region: "eu",
		URL: "http://" + node.addr, ChainIDs: []uint64{137}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
	if err != nil {
		r.close()
		return nil, "", err
	}
	if err := rdb.HSet(ctx, prefix+registry.NodesKey, trustNode, rec).Err(); err != nil {
		r.close()
		return nil, "", err
	}
	trust := ""
	if !judged {
		trust = "probation off\n\t\t\t\tverify off"
	}
	if r.gw, err = startCaddy(ctx, cfg, cfg.caddyBin, "trust-"+id, trustGatewayCaddyfile,
		map[string]string{"PROVIDER": prov.addr, "PREFIX": prefix, "TRUST": trust}, "BENCH_REDIS_URL="+cfg.redisURL); err != nil {
		r.close()
		return nil, "", err
	}
	k, err := key(r.gw)
	if err != nil {
		r.close()
		return nil, "", err
	}
	began := time.Now()
	if err := r.waitServing(ctx, k); err != nil {
		r.close()
		return nil, "", err
	}
	r.before = fmt.Sprintf("the node served its first caller %.1f s after the gateway started", time.Since(began).Seconds())
	return r, k, nil
}

func (r *trustRig) close() {
	if r.gw != nil {
		r.gw.stop()
	}
	r.node.Close()
	r.prov.Close()
}

// waitServing sends the calls a caller would (a balance, a nonce, a block
// and the eth_call, in turn: shadow material over several methods) until
// the node serves the eth_call.
func (r *trustRig) waitServing(ctx context.Context, key string) error {
	bodies := []string{stateBody, `{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionCount","params":["0x0000000000000000000000000000000000000001","latest"]}`,
		`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}`, callBody}
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.gw.url+"/rpc", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			by := resp.Header.Get("X-Tollgate-Upstream")
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if by == trustNode && i%len(bodies) == len(bodies)-1 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if i%len(bodies) == len(bodies)-1 {
			time.Sleep(20 * time.Millisecond) // pacing the warm calls; the condition is the node serving
		}
	}
	return fmt.Errorf("(%s): the node never served a caller within 3 minutes (probation); trust view: %s; see %s", r.id, r.trustView(), r.gw.log.Name())
}

// mark records the counts the measurement starts from.
func (r *trustRig) mark() {
	r.node0, r.prov0 = r.node.counts(), r.prov.counts()
	r.calls0 = r.gw.callsOf("eth_call")
	r.checks0 = r.checks()
}

// adminUpstream is the node's entry in the admin /rpc/health.
func (r *trustRig) adminUpstream() map[string]any {
	req, _ := http.NewRequest(http.MethodGet, r.gw.url+"/rpc/health", nil)
	req.Header.Set("X-Admin-Token", trustKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []map[string]any `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if json.NewDecoder(resp.Body).Decode(&h) != nil {
		return nil
	}
	for _, c := range h.Chains {
		for _, u := range c.Pool.Upstreams {
			if c.ChainID == 137 && u["name"] == trustNode {
				return u
			}
		}
	}
	return nil
}

func (r *trustRig) trustView() string {
	u := r.adminUpstream()
	if u == nil {
		return "?"
	}
	b, _ := json.Marshal(u["trust"])
	return string(b)
}

func (r *trustRig) checks() map[string]float64 {
	out := map[string]float64{}
	u := r.adminUpstream()
	if c, ok := u["checks"].(map[string]any); ok {
		for k, v := range c {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
	}
	return out
}

// callsOf is the gateway's JSON-RPC calls of method, from its /metrics.
func (p *caddyProc) callsOf(method string) float64 {
	resp, err := http.Get(p.admin + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "tollgate_gateway_rpc_calls_total{") && strings.Contains(line, `method="`+method+`"`) {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			sum += v
		}
	}
	return sum
}

// report is what (t)/(t0)'s node and provider saw over the runs.
func (r *trustRig) report() string {
	node, prov := r.node.counts(), r.prov.counts()
	calls := r.gw.callsOf("eth_call") - r.calls0
	served := node["eth_call"] - r.node0["eth_call"]
	provCalls := prov["eth_call"] - r.prov0["eth_call"]
	replays := float64(provCalls) - (calls - float64(served))
	var other int64
	for m, n := range prov {
		if m != "eth_call" {
			other += n - r.prov0[m]
		}
	}
	ch := r.checks()
	var b strings.Builder
	fmt.Fprintf(&b, "\n(%s) over its runs (warm-ups included): %.0f eth_calls answered, %d served by the node (%.3f of them); the provider got %d eth_calls, "+
		"%.0f of them replays beyond the callers' it served: **%.4f provider calls per node-served call** (+ %d other provider requests: head polls, probes; %.4f per node-served call).\n",
		r.id, calls, served, float64(served)/max(calls, 1), provCalls, replays, replays/float64(max(served, 1)), other, float64(other)/float64(max(served, 1)))
	if len(ch) > 0 {
		fmt.Fprintf(&b, "(%s) the node's checks over the runs: offered %.0f, checked %.0f, dropped %.0f (by the cap on the checks' provider calls: %.0f), failed %.0f; capacity factor at the end %.2f.\n",
			r.id, ch["offered"]-r.checks0["offered"], ch["checked"]-r.checks0["checked"], ch["dropped"]-r.checks0["dropped"],
			ch["dropped_cap"]-r.checks0["dropped_cap"], ch["failed"]-r.checks0["failed"], ch["capacity_factor"])
	}
	fmt.Fprintf(&b, "(%s) %s; its standing when measured: %s; at the end: %s.\n", r.id, r.before, r.standing, r.trustView())
	return b.String()
}
