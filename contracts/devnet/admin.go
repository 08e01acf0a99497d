package devnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/node"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
)

// The admin endpoint lets tests and the demo drive the dev chains from
// outside the process. It is a JSON-RPC server of its own, on 127.0.0.1,
// with the one namespace "devchain" that no real node serves:
//
//	devchain_reorg(chainId, depth) → ReorgResult   (see Devnet.Reorg)
//
// Both parameters are JSON numbers or 0x-prefixed hex strings, e.g.
//
//	{"jsonrpc":"2.0","id":1,"method":"devchain_reorg","params":[137,2]}
type adminServer struct {
	rpc *gethrpc.Server
	srv *http.Server
	url string
}

// ServeAdmin starts the admin JSON-RPC endpoint on 127.0.0.1:port (0 picks
// a free port), records its URL as Manifest.AdminURL and returns it. Close
// stops it.
func (d *Devnet) ServeAdmin(port int) (string, error) {
	if d.admin != nil {
		return "", errors.New("devnet: admin endpoint already served")
	}
	if port < 0 || port > 65535 {
		return "", fmt.Errorf("devnet: invalid admin port %d", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", fmt.Errorf("devnet: admin endpoint: %w", err)
	}
	rs := gethrpc.NewServer()
	if err := rs.RegisterName("devchain", &adminAPI{d}); err != nil {
		l.Close()
		return "", fmt.Errorf("devnet: admin endpoint: %w", err)
	}
	a := &adminServer{
		rpc: rs,
		srv: &http.Server{
			// Host header check against DNS rebinding, like the chains' own endpoints.
			Handler:           node.NewHTTPHandlerStack(rs, nil, []string{"localhost", "127.0.0.1"}, nil, true),
			ReadHeaderTimeout: 10 * time.Second,
		},
		url: "http://" + l.Addr().String(),
	}
	go a.srv.Serve(l) //nolint:errcheck // returns http.ErrServerClosed on close
	d.admin = a
	if d.Manifest != nil {
		d.Manifest.AdminURL = a.url
	}
	return a.url, nil
}

func (a *adminServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	a.rpc.Stop()
	return err
}

// adminAPI is the "devchain" JSON-RPC namespace.
type adminAPI struct{ d *Devnet }

// Reorg is devchain_reorg(chainId, depth).
func (a *adminAPI) Reorg(ctx context.Context, chainID, depth rpcNum) (*ReorgResult, error) {
	if depth > MaxReorgDepth {
		return nil, fmt.Errorf("devnet: reorg depth %d out of range: 1 to %d blocks", depth, MaxReorgDepth)
	}
	return a.d.Reorg(ctx, uint64(chainID), int(depth))
}

// rpcNum is a non-negative integer parameter given as a JSON number, a
// decimal string or a 0x-prefixed hex string.
type rpcNum uint64

func (n *rpcNum) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return fmt.Errorf("not a non-negative integer: %s", b)
	}
	*n = rpcNum(v)
	return nil
}

var _ json.Unmarshaler = (*rpcNum)(nil)
