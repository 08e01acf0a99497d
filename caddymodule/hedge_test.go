package caddymodule_test

import (
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// TestHedgedReadsBilledOnceSendsNever: both providers hiccup (80 ms on a
// random 20 % of calls), and every read may be hedged (hedge 1 5ms 20ms).
// 1,000 paid reads are charged exactly 1,000 calls — the Redis balance and
// one revenue event of one call each — and each event names the upstream
// whose answer was delivered (X-Tollgate-Upstream), hedge winners
// included. Sends through the same slow providers are never hedged: each
// reaches exactly one upstream.
func TestHedgedReadsBilledOnceSendsNever(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\thedge 1 5ms 20ms\n\t\t\t\ttimeout 2s\n\t\t\t}"})
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000)
	e.alpha.SetHiccups(80*time.Millisecond, 0.2)
	e.beta.SetHiccups(80*time.Millisecond, 0.2)

	const reads, workers = 1000, 8
	type served struct{ req, by string }
	var mu sync.Mutex
	var got []served
	var failures []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < reads; i += workers {
				a := e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000%02x","latest"]}`, i, i%200), "X-API-Key: "+key)
				mu.Lock()
				if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result":"0x`) {
					failures = append(failures, fmt.Sprintf("%d %s", a.status, a.body))
				} else {
					got = append(got, served{a.header.Get("X-Tollgate-Request-Id"), a.header.Get("X-Tollgate-Upstream")})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d reads failed, e.g. %s", len(failures), failures[0])
	}
	hedges := e.hedges(t)
	t.Logf("1,000 reads: hedges %v", hedges)
	if hedges["hedges_sent"] < 20 || hedges["hedges_won"] < 10 {
		t.Fatalf("too few hedges to prove anything: %v", hedges)
	}
	// Exactly 1,000 calls charged: 30 units each.
	if a := e.usage(t, key); a["requests_today"] != float64(reads) {
		t.Fatalf("usage %v", a)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.req)
	}
	revs := e.revenuesOf(t, ids)
	calls := 0
	for _, s := range got {
		r := revs[s.req]
		if r == nil || r.Calls != 1 || r.Upstream != s.by || r.Payer != events.PayerCredits {
			t.Fatalf("request %s delivered by %s: revenue %+v", s.req, s.by, r)
		}
		calls += r.Calls
	}
	n := 0
	for _, ev := range e.stream(t) {
		if r, ok := ev.(*events.Revenue); ok && r.Payer == events.PayerCredits {
			n += r.Calls
		}
	}
	if calls != reads || n != reads {
		t.Fatalf("revenue calls: %d for the answered reads, %d on the stream; want %d", calls, n, reads)
	}

	// Sends: never hedged, however slow.
	e.alpha.SetHiccups(150*time.Millisecond, 1)
	e.beta.SetHiccups(150*time.Millisecond, 1)
	client := e.net.Polygon.Client()
	k := devnet.DevKey("developer-1")
	nonce, err := client.PendingNonceAt(t.Context(), crypto.PubkeyToAddress(k.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	before := e.alpha.Calls("eth_sendRawTransaction") + e.beta.Calls("eth_sendRawTransaction")
	sentBefore := e.hedges(t)["hedges_sent"]
	to := common.HexToAddress("0x00000000000000000000000000000000000000e8")
	for i := range 5 {
		tx, err := types.SignNewTx(k, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137),
			Nonce: nonce + uint64(i), GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := tx.MarshalBinary()
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), tx.Hash().Hex()) {
			t.Fatalf("send %d: %d %s", i, a.status, a.body)
		}
	}
	if got := e.alpha.Calls("eth_sendRawTransaction") + e.beta.Calls("eth_sendRawTransaction") - before; got != 5 {
		t.Fatalf("5 sends reached the providers %d times", got)
	}
	if e.hedges(t)["hedges_sent"] != sentBefore {
		t.Fatalf("a send was hedged: %v", e.hedges(t))
	}
}

// hedges reads /rpc/stats/polygon's hedge counters.
func (e *meterEnv) hedges(t *testing.T) map[string]float64 {
	t.Helper()
	a := e.do(t, http.MethodGet, "/rpc/stats/polygon", "")
	h, _ := a.json(t)["hedges"].(map[string]any)
	out := map[string]float64{}
	for k, v := range h {
		out[k], _ = v.(float64)
	}
	return out
}
