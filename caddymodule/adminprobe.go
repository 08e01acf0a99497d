package caddymodule

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// probeCall is what an operator's probe asks: the chain's head, a call every
// upstream answers and no cache can answer for long.
var probeCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)

// adminProbe serves POST /admin/probe/{chain}: one eth_blockNumber sent
// through the chain's upstream pool — the path a paid call takes (selection,
// breakers, failover, the upstream's transport), without metering and
// without the edge cache. It is what settlementd's gateway-health sampler
// measures: a monitor that called /rpc keyless would spend its own IP's free
// tier and then count the gateway's 402 as "up"; one with a key would pay
// the platform's revenue to itself.
//
// 200 {"chain_id", "upstream", "block_number", "latency_ms"} when an
// upstream answered with a block number; 503 upstream_unavailable otherwise,
// with the reason.
func (h *Handler) adminProbe(w http.ResponseWriter, r *http.Request, which string) error {
	return onlyMethod(w, r, http.MethodPost, func() error {
		cs, ok := h.adminChain(w, which)
		if !ok {
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(h.RequestTimeout))
		defer cancel()
		began := time.Now()
		res, err := cs.pool.Forward(ctx, probeCall, upstream.ForwardOptions{})
		latency := time.Since(began)
		if err != nil {
			web.Error(w, http.StatusServiceUnavailable, "upstream_unavailable", "no upstream of chain "+cs.chain.HexID()+" answered the probe")
			return nil
		}
		var reply struct {
			Result string          `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(res.Body, &reply) != nil || reply.Result == "" {
			web.Error(w, http.StatusServiceUnavailable, "upstream_unavailable", "upstream "+res.Upstream.EventName()+" did not answer eth_blockNumber with a block number")
			return nil
		}
		web.JSON(w, http.StatusOK, map[string]any{"chain_id": cs.chain.ID, "upstream": res.Upstream.EventName(),
			"block_number": reply.Result, "latency_ms": float64(latency.Microseconds()) / 1000})
		return nil
	})
}
