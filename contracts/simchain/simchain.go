// Package simchain runs an in-process EVM chain (go-ethereum's ethclient/simulated backend) for the
// dev chain and for tests.
//
// Differences from a bare simulated.NewBackend:
//   - the chain ID is chosen by the caller (137 for Polygon, 8453 for Base, ...) instead of 1337;
//   - the fork rules stop at Prague: the default dev config also enables Osaka and go-ethereum's
//     experimental Bogota/Amsterdam rule set, whose gas schedule is about 3x Polygon's;
//   - JSON-RPC can be served on 127.0.0.1:<port> with the eth, net and web3 modules, over HTTP and
//     over WebSocket on the same port (a request with an Upgrade header gets the socket), so
//     eth_subscribe newHeads/logs/newPendingTransactions work as on a real node: the backend's filter
//     system is fed by the chain's head and log events on every Commit;
//   - Commit and AdjustTime are serialised, so an AutoCommit loop and explicit commits can share a chain.
//
// Blocks are only produced by Commit, AdjustTime or a running AutoCommit loop; transactions sent
// meanwhile stay pending.
package simchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// Config describes a simulated chain.
type Config struct {
	// ChainID is the EIP-155 chain ID reported by eth_chainId and used for signing. Required.
	ChainID uint64
	// Alloc is the genesis state (typically balances for test accounts). May be nil.
	Alloc types.GenesisAlloc
	// HTTPPort, when nonzero, serves JSON-RPC over HTTP on 127.0.0.1:HTTPPort with the modules
	// eth, net and web3, accepting the Host headers "localhost" and "127.0.0.1".
	// Port 0 cannot be used to pick a free port (the bound port is not observable); see FreePort.
	// The same port answers WebSocket upgrades (WSURL), with the same modules and any Origin.
	HTTPPort int
}

// Chain is a running simulated chain. Close it when done.
type Chain struct {
	backend *simulated.Backend
	chainID *big.Int
	httpURL string
	wsURL   string
	rpc     *rpc.Client // in-process RPC for txpool_status; nil if unavailable

	mu sync.Mutex // serialises block production
}

// ChainConfig returns go-ethereum's dev-chain config with the given chain ID and with every fork
// after Prague (Osaka, the BPO forks, Amsterdam, Bogota) switched off.
func ChainConfig(chainID uint64) *params.ChainConfig {
	cfg := *params.AllDevChainProtocolChanges
	cfg.ChainID = new(big.Int).SetUint64(chainID)
	cfg.OsakaTime = nil
	cfg.BPO1Time, cfg.BPO2Time, cfg.BPO3Time, cfg.BPO4Time, cfg.BPO5Time = nil, nil, nil, nil, nil
	cfg.AmsterdamTime = nil
	cfg.BogotaTime = nil
	return &cfg
}

// New starts a simulated chain.
func New(cfg Config) (c *Chain, err error) {
	if cfg.ChainID == 0 {
		return nil, errors.New("simchain: ChainID is required")
	}
	if cfg.HTTPPort < 0 || cfg.HTTPPort > 65535 {
		return nil, fmt.Errorf("simchain: invalid HTTP port %d", cfg.HTTPPort)
	}
	chainCfg := ChainConfig(cfg.ChainID)
	opt := func(nc *node.Config, ec *ethconfig.Config) {
		ec.Genesis.Config = chainCfg
		ec.NetworkId = cfg.ChainID
		if cfg.HTTPPort != 0 {
			nc.HTTPHost = "127.0.0.1"
			nc.HTTPPort = cfg.HTTPPort
			nc.HTTPModules = []string{"eth", "net", "web3"}
			nc.HTTPVirtualHosts = []string{"localhost", "127.0.0.1"}
			// Same host and port as HTTP: go-ethereum's node then serves both on one listener.
			nc.WSHost = "127.0.0.1"
			nc.WSPort = cfg.HTTPPort
			nc.WSModules = nc.HTTPModules
			nc.WSOrigins = []string{"*"}
		}
	}
	// simulated.NewBackend panics when the node cannot start (e.g. the HTTP port is taken).
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("simchain: starting the simulated backend: %v", r)
		}
	}()
	c = &Chain{
		backend: simulated.NewBackend(cfg.Alloc, opt),
		chainID: new(big.Int).SetUint64(cfg.ChainID),
	}
	c.rpc = inProcRPC(c.backend.Client())
	if cfg.HTTPPort != 0 {
		c.httpURL = "http://127.0.0.1:" + strconv.Itoa(cfg.HTTPPort)
		c.wsURL = "ws://127.0.0.1:" + strconv.Itoa(cfg.HTTPPort)
	}
	return c, nil
}

// Client returns the in-process client; it satisfies bind/v2's ContractBackend and DeployBackend.
func (c *Chain) Client() simulated.Client { return c.backend.Client() }

// Backend returns the underlying simulated backend (Rollback, Fork, ...). Prefer Chain.Commit and
// Chain.AdjustTime over the backend's own methods, which are not serialised.
func (c *Chain) Backend() *simulated.Backend { return c.backend }

// ChainID returns the chain ID (a fresh copy).
func (c *Chain) ChainID() *big.Int { return new(big.Int).Set(c.chainID) }

// HTTPURL returns "http://127.0.0.1:<port>", or "" when HTTP is not served.
func (c *Chain) HTTPURL() string { return c.httpURL }

// WSURL returns "ws://127.0.0.1:<port>" (the HTTP port), or "" when JSON-RPC is not served.
func (c *Chain) WSURL() string { return c.wsURL }

// Commit seals a block containing the pending transactions and returns its hash.
func (c *Chain) Commit() common.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.backend.Commit()
}

// AdjustTime seals an empty block whose timestamp is the parent's plus d. It fails when
// transactions are pending.
func (c *Chain) AdjustTime(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.backend.AdjustTime(d)
}

// AutoCommit commits a block whenever transactions are pending, checking every interval, until ctx
// is done. It blocks; run it in a goroutine. This gives the "mined on arrival" behaviour of
// `geth --dev` to clients connected over HTTP.
func (c *Chain) AutoCommit(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := c.pendingTxs(ctx); err == nil && n > 0 {
			c.Commit()
		}
	}
}

// pendingTxs returns the number of executable transactions in the pool, asking the pool itself
// (txpool_status). The "pending" block behind eth_getBlockTransactionCountByNumber is cached by the
// miner for up to 2 s, so polling it makes new transactions wait that long; it is only the fallback.
func (c *Chain) pendingTxs(ctx context.Context) (uint64, error) {
	if c.rpc == nil {
		n, err := c.backend.Client().PendingTransactionCount(ctx)
		return uint64(n), err
	}
	var status struct {
		Pending hexutil.Uint64 `json:"pending"`
	}
	if err := c.rpc.CallContext(ctx, &status, "txpool_status"); err != nil {
		return 0, err
	}
	return uint64(status.Pending), nil
}

// inProcRPC digs the in-process *rpc.Client out of the simulated client, which wraps an
// *ethclient.Client in an exported embedded field (the wrapper exists only to hide it from the
// Client interface). Returns nil if go-ethereum changes that layout.
func inProcRPC(client simulated.Client) *rpc.Client {
	v := reflect.ValueOf(client)
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Client")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	ec, ok := f.Interface().(*ethclient.Client)
	if !ok || ec == nil {
		return nil
	}
	return ec.Client()
}

// Close stops the chain (and its HTTP server).
func (c *Chain) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.backend.Close()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago (for Config.HTTPPort in tests).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
