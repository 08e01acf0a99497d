// Package chain is what settlementd's chain-facing jobs (deposits, settle,
// solvency) share: the JSON-RPC client they need, dialing with a chain-id
// check, signing keys read from configuration, the leader fence, and the
// crash-safe transaction sender (Sender, in tx.go).
//
// Secrets: RPC URLs often embed a provider API key and the signing keys are
// the treasury's, so neither ever appears in an error or a log line; errors
// name the host only (Redact) or the key's role.
package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Backend is the JSON-RPC surface the jobs use. *ethclient.Client and the
// simulated backend's client satisfy it.
type Backend interface {
	bind.ContractBackend
	BlockNumber(ctx context.Context) (uint64, error)
	ChainID(ctx context.Context) (*big.Int, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	// TransactionByHash tells a transaction the node still holds (pending
	// or mined) from one it dropped (ethereum.NotFound).
	TransactionByHash(ctx context.Context, txHash common.Hash) (tx *types.Transaction, isPending bool, err error)
}

// Fencer proves, inside a transaction, that this replica still leads
// (*leader.Elector). Work that must never run twice calls it in the same
// transaction that records the work.
type Fencer interface {
	Fence(ctx context.Context, q interface {
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}) error
}

// Fence calls f on q, or does nothing when f is nil (tests, single-process tools).
func Fence(ctx context.Context, f Fencer, q pgx.Tx) error {
	if f == nil {
		return nil
	}
	return f.Fence(ctx, q)
}

// Dial connects to the JSON-RPC endpoint at rawURL (http(s):// or ws(s)://)
// and checks that it serves wantChainID (0: any).
func Dial(ctx context.Context, rawURL string, wantChainID uint64) (*ethclient.Client, error) {
	c, err := ethclient.DialContext(ctx, rawURL)
	if err != nil {
		// The dial error may quote the URL, which may hold an API key.
		return nil, fmt.Errorf("chain: connecting to %s failed", Redact(rawURL))
	}
	id, err := c.ChainID(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("chain: eth_chainId at %s: %w", Redact(rawURL), scrub(err, rawURL))
	}
	if wantChainID != 0 && (!id.IsUint64() || id.Uint64() != wantChainID) {
		c.Close()
		return nil, fmt.Errorf("chain: %s serves chain %s, want %d", Redact(rawURL), id, wantChainID)
	}
	return c, nil
}

// Redact reduces an RPC URL to scheme://host, dropping any credentials, path
// (Alchemy/Infura put the API key there) and query.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(rpc endpoint)"
	}
	return u.Scheme + "://" + u.Host
}

// scrub removes the URL from an error message, in case a client library
// quotes it.
func scrub(err error, rawURL string) error {
	if err == nil || rawURL == "" || !strings.Contains(err.Error(), rawURL) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), rawURL, Redact(rawURL)))
}

// Signer is a private key with the role it plays (treasury, relayer,
// governor). It prints as its role and address only, so a Signer that ends up
// in a log line or an error does not leak the key.
type Signer struct {
	role string
	addr common.Address
	key  *ecdsa.PrivateKey
}

// NewSigner wraps key for role.
func NewSigner(role string, key *ecdsa.PrivateKey) *Signer {
	return &Signer{role: role, addr: crypto.PubkeyToAddress(key.PublicKey), key: key}
}

// ParseSigner reads a hex private key (with or without 0x) for role. The
// error names the role, never the value.
func ParseSigner(role, hexKey string) (*Signer, error) {
	if h := strings.TrimSpace(hexKey); h == "" || h == "0x" || h == "0X" {
		return nil, fmt.Errorf("chain: the %s key is empty", role)
	}
	k, err := ethparse.PrivateKey(hexKey)
	if err != nil {
		return nil, fmt.Errorf("chain: the %s key is not a valid secp256k1 private key (64 hex digits)", role)
	}
	return NewSigner(role, k), nil
}

// Role is what the key is for.
func (s *Signer) Role() string { return s.role }

// Address is the key's account.
func (s *Signer) Address() common.Address { return s.addr }

// String names the signer without its key.
func (s Signer) String() string { return s.role + "(" + s.addr.Hex() + ")" }

// GoString keeps %#v from dumping the key.
func (s Signer) GoString() string { return "chain.Signer{" + s.String() + "}" }

// Format keeps every fmt verb (%v, %+v, %#v, ...) to String.
func (s Signer) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(s.String())) }

// sign signs tx for chainID.
func (s *Signer) sign(tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	return types.SignTx(tx, types.LatestSignerForChainID(chainID), s.key)
}
