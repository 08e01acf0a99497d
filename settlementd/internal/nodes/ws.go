package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// probeWS checks that a node's ws_url answers eth_chainId over WebSocket
// with every declared chain, through the same policy-checking dialer as the
// HTTP probe (no proxy: the proxy would reach the address unchecked).
func (s *Service) probeWS(ctx context.Context, rawURL string, ids []uint64) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	d := websocket.Dialer{NetDialContext: s.dialer.DialContext, HandshakeTimeout: s.cfg.ProbeTimeout}
	conn, resp, err := d.DialContext(ctx, rawURL, http.Header{"User-Agent": {"tollgate-settlementd"}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return &apiError{http.StatusBadRequest, "ws_probe_failed", "probing ws_url failed: the endpoint did not accept a WebSocket"}
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	_ = conn.SetWriteDeadline(dl)
	_ = conn.SetReadDeadline(dl)
	conn.SetReadLimit(64 << 10)
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)); err != nil {
		return &apiError{http.StatusBadRequest, "ws_probe_failed", "probing ws_url failed: the request could not be sent"}
	}
	var out struct {
		Result string `json:"result"`
	}
	_, msg, err := conn.ReadMessage()
	if err != nil || json.Unmarshal(msg, &out) != nil || !strings.HasPrefix(out.Result, "0x") {
		return &apiError{http.StatusBadRequest, "ws_probe_failed", "probing ws_url failed: no JSON-RPC eth_chainId result"}
	}
	got, err := ethparse.Quantity(out.Result)
	if err != nil {
		return &apiError{http.StatusBadRequest, "ws_probe_failed", "probing ws_url failed: malformed chain id"}
	}
	for _, id := range ids {
		if id != got {
			return &apiError{http.StatusBadRequest, "chain_mismatch", fmt.Sprintf("ws_url answers eth_chainId %d, declared chain %d", got, id)}
		}
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return nil
}
