// Package hardhat runs a Hardhat Network node (tests/hardhat, pinned from
// npm) for tests that need a real EVM node whose mining they control: with
// automine off transactions wait in its pool until the test mines a block,
// the next block's base fee can be raised so that underpriced transactions
// stay pending, and a pending transaction can be dropped from the pool. It
// speaks plain Ethereum JSON-RPC, so the code under test talks to it like
// to any other node.
//
// Start skips the test when node or tests/hardhat/node_modules is missing,
// and fails it under TOLLGATE_REQUIRE_NODE (make test runs npm ci there).
package hardhat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// Node is a running Hardhat Network node.
type Node struct {
	URL    string
	Client *ethclient.Client
	RPC    *rpc.Client

	cmd *exec.Cmd
	mu  sync.Mutex
	out []string // the node's last output lines (for failure messages)
}

var started = regexp.MustCompile(`JSON-RPC server at (http://[0-9.:]+)/`)

// dir finds tests/hardhat from the test's working directory (a package
// directory inside the module).
func dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "tests", "hardhat"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// Start runs a node serving chainID with automine off (blocks are mined by
// Mine only) and stops it when the test ends.
func Start(t testing.TB, chainID uint64) *Node {
	t.Helper()
	d, err := dir()
	if err == nil {
		_, err = exec.LookPath("node")
	}
	cli := filepath.Join(d, "node_modules", "hardhat", "internal", "cli", "bootstrap.js")
	if err == nil {
		_, err = os.Stat(cli)
	}
	if err != nil {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatalf("node or tests/hardhat/node_modules missing (make test runs npm ci there): %v", err)
		}
		t.Skipf("node or tests/hardhat/node_modules missing: %v", err)
	}
	n := &Node{cmd: exec.Command("node", cli, "node", "--hostname", "127.0.0.1", "--port", "0")}
	n.cmd.Dir = d
	n.cmd.Env = append(os.Environ(), fmt.Sprintf("TOLLGATE_HARDHAT_CHAIN_ID=%d", chainID),
		"HARDHAT_DISABLE_TELEMETRY_PROMPT=true", "CI=true", "NO_COLOR=1")
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n.cmd.Stderr = n.cmd.Stdout
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := started.FindStringSubmatch(line); m != nil {
				urls <- m[1]
			}
			n.mu.Lock()
			if n.out = append(n.out, line); len(n.out) > 200 {
				n.out = n.out[len(n.out)-200:]
			}
			n.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("hardhat node exited before listening:\n%s", n.Output())
		}
		n.URL = u
	case <-time.After(90 * time.Second):
		t.Fatalf("hardhat node did not start within 90 s:\n%s", n.Output())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n.RPC, err = rpc.DialContext(ctx, n.URL); err != nil {
		t.Fatal(err)
	}
	n.Client = ethclient.NewClient(n.RPC)
	t.Cleanup(n.Client.Close)
	if err := n.Call(ctx, nil, "evm_setAutomine", false); err != nil {
		t.Fatal(err)
	}
	return n
}

// Output is the node's last output lines.
func (n *Node) Output() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.out, "\n")
}

// Call makes a JSON-RPC call (result may be nil).
func (n *Node) Call(ctx context.Context, result any, method string, args ...any) error {
	if err := n.RPC.CallContext(ctx, result, method, args...); err != nil {
		return fmt.Errorf("hardhat %s: %w", method, err)
	}
	return nil
}

// SetAutomine turns mining on every transaction on or off.
func (n *Node) SetAutomine(ctx context.Context, on bool) error {
	return n.Call(ctx, nil, "evm_setAutomine", on)
}

// Mine mines one block with what the pool holds that pays the block's base fee.
func (n *Node) Mine(ctx context.Context) error { return n.Call(ctx, nil, "evm_mine") }

// SetNextBaseFee sets the base fee of the next block mined.
func (n *Node) SetNextBaseFee(ctx context.Context, wei *big.Int) error {
	return n.Call(ctx, nil, "hardhat_setNextBlockBaseFeePerGas", hexutil.EncodeBig(wei))
}

// SetBalance gives addr wei of the native coin.
func (n *Node) SetBalance(ctx context.Context, addr common.Address, wei *big.Int) error {
	return n.Call(ctx, nil, "hardhat_setBalance", addr, hexutil.EncodeBig(wei))
}

// Drop removes a pending transaction from the pool, as an evicting node
// would; it reports whether the node held it.
func (n *Node) Drop(ctx context.Context, hash common.Hash) (bool, error) {
	var ok bool
	err := n.Call(ctx, &ok, "hardhat_dropTransaction", hash)
	return ok, err
}

// SendRaw submits signed transaction bytes.
func (n *Node) SendRaw(ctx context.Context, raw []byte) (common.Hash, error) {
	var h common.Hash
	err := n.Call(ctx, &h, "eth_sendRawTransaction", hexutil.Bytes(raw))
	return h, err
}

// Automined runs fn with automine on (every transaction mined at once, e.g.
// to deploy contracts), then turns it off again.
func (n *Node) Automined(ctx context.Context, fn func() error) error {
	if err := n.SetAutomine(ctx, true); err != nil {
		return err
	}
	err := fn()
	if err2 := n.SetAutomine(ctx, false); err == nil {
		err = err2
	}
	return err
}
