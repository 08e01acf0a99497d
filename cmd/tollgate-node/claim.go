package main

// Claiming: POST /api/nodes/{id}/claim answers an EIP-712 Claim(nodeId,
// cumulative amount, deadline) signed by the platform's claim signer; the
// wallet sends it to ClaimsContract.claimNode on the settlement chain,
// which pays cumulative − claimed[nodeId] to the node's wallet.
//
// Before paying gas the command checks what it can without trusting the
// gateway's word: the chain the RPC serves is the signature's, the
// signature recovers to a CLAIM_CREATOR_ROLE holder of that contract, the
// contract binds the node to this wallet and has not paid this amount yet.
// A signature reserves the node's claimable funds until its deadline
// (48 hours), so it is kept in the session file until the chain shows it
// paid: a claim interrupted after the signature (no gas, a network error)
// sends the same signature again instead of finding nothing claimable.

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// savedClaim is a claim signature not yet seen paid.
type savedClaim struct {
	NodeID        string `json:"node_id"`
	CumulativeRaw string `json:"cumulative_raw"`
	Signature     string `json:"signature"`
	DeadlineUnix  int64  `json:"deadline_unix"`
	Contract      string `json:"contract"`
	ChainID       uint64 `json:"chain_id"`
}

// claimResult is what claim did.
type claimResult struct {
	NodeID          string `json:"node_id"`
	Wallet          string `json:"wallet"`
	PaidUnits       units  `json:"paid_units"`
	PaidUSDT        string `json:"paid_usdt"`
	CumulativeUnits units  `json:"cumulative_units"`
	Tx              string `json:"tx"`
	Block           uint64 `json:"block"`
	Contract        string `json:"contract"`
	ChainID         uint64 `json:"chain_id"`
}

func (a *app) claimCmd(args []string) error {
	f := a.flags("claim", withGateway|withKey|withNode)
	chainRPC := f.String("chain-rpc", a.getenv(envChainRPC), "a JSON-RPC URL of the settlement chain (default: the gateway's /rpc/<chain>; "+envChainRPC+")")
	pinned := f.String("claims-contract", a.getenv(envClaims), "the ClaimsContract address to expect (default: the one the signature names; "+envClaims+")")
	timeout := f.Duration("timeout", 5*time.Minute, "how long to wait for the transaction to be mined")
	maxFee := f.Uint64("max-fee-gwei", defaultMaxFeeGwei, "the most gas price (max fee per gas, in gwei) the claim transaction may pay")
	if err := f.parse(args); err != nil {
		return err
	}
	if *maxFee == 0 {
		return usagef("--max-fee-gwei must be positive")
	}
	var want common.Address
	if *pinned != "" {
		var err error
		if want, err = ethparse.Address(*pinned); err != nil {
			return usagef("--claims-contract: %v", err)
		}
	}
	if !a.keys.configured() {
		return errNoKey // the wallet sends the transaction
	}
	key, err := a.keys.Load()
	if err != nil {
		return err
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	id, err := a.nodeID(c, *f.node)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.ctx, *timeout)
	defer cancel()
	res, err := a.claim(ctx, c, key, id, *chainRPC, want, new(big.Int).Mul(new(big.Int).SetUint64(*maxFee), big.NewInt(1e9)))
	if err != nil {
		return err
	}
	return a.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "claimed %s for %s: tx %s in block %d\n", usdt(res.PaidUnits), res.NodeID, res.Tx, res.Block)
		fmt.Fprintf(w, "paid to %s by ClaimsContract %s on chain %d; claimed in all %s\n", res.Wallet, res.Contract, res.ChainID, usdt(res.CumulativeUnits))
	})
}

func claimKey(c *client, node string) string { return c.base.String() + " " + node }

// claim finds or asks for a signature and sends it.
func (a *app) claim(ctx context.Context, c *client, key *ecdsa.PrivateKey, node, chainRPC string, want common.Address, maxFee *big.Int) (*claimResult, error) {
	me := crypto.PubkeyToAddress(key.PublicKey)
	st, err := a.loadState()
	if err != nil {
		return nil, err
	}
	saved := st.Claims[claimKey(c, node)]
	if saved != nil && time.Unix(saved.DeadlineUnix, 0).Before(a.now().Add(2*time.Minute)) {
		saved = nil // expired, or too close to its deadline to be mined in time: its funds are claimable again
	}
	for range 2 {
		fresh := saved == nil
		if fresh {
			if saved, err = a.askSignature(c, node, me); err != nil {
				return nil, err
			}
			st.Claims[claimKey(c, node)] = saved
			if err := a.saveState(st); err != nil {
				return nil, fmt.Errorf("the claim signature could not be kept: %w", err)
			}
		}
		res, err := a.send(ctx, c, key, saved, chainRPC, want, maxFee)
		if errors.Is(err, errAlreadyPaid) && !fresh {
			// The kept signature was paid (a run that ended before the
			// receipt): ask for a new one for what is left.
			delete(st.Claims, claimKey(c, node))
			if err := a.saveState(st); err != nil {
				return nil, err
			}
			saved = nil
			continue
		}
		if err == nil || errors.Is(err, errAlreadyPaid) {
			delete(st.Claims, claimKey(c, node))
			if serr := a.saveState(st); serr != nil && err == nil {
				err = fmt.Errorf("claimed, but the session file could not be updated: %w", serr)
			}
		}
		if errors.Is(err, errAlreadyPaid) {
			return nil, nothingError{err.Error()}
		}
		return res, err
	}
	return nil, errors.New("the claim signature was paid already and no new one was issued")
}

// defaultMaxFeeGwei is --max-fee-gwei's default: Polygon's fees are
// tens of gwei, hundreds at a peak; with claimGasCap a claim then costs at
// most 0.3 POL whatever the RPC says.
const defaultMaxFeeGwei = 1000

// claimGasCap is the most gas a claimNode transaction may be sent with.
const claimGasCap = 300_000

// errAlreadyPaid: the chain has paid the signature's cumulative amount.
var errAlreadyPaid = errors.New("this claim was paid already")

// askSignature reads the node's earnings and asks for a signature.
func (a *app) askSignature(c *client, node string, me common.Address) (*savedClaim, error) {
	var e earnings
	if _, _, err := a.authed(c, "GET", "/api/nodes/"+node+"/earnings", nil, []int{200}, &e); err != nil {
		return nil, err
	}
	if e.NodeID != node {
		return nil, fmt.Errorf("GET /api/nodes/%s/earnings answered for node %q", node, e.NodeID)
	}
	if unitsOf(e.ClaimableUnits) == 0 {
		if r := unitsOf(e.ReservedUnits); r > 0 {
			return nil, nothingError{fmt.Sprintf("nothing claimable now: %s is reserved by a claim signature issued earlier and not kept here "+
				"(or one just paid that the gateway has not seen yet); what it does not pay is claimable again once its 48-hour deadline passes", usdt(r))}
		}
		return nil, nothingError{fmt.Sprintf("nothing to claim for %s: earned %s, claimed %s, %s not yet allocated on chain",
			node, usdt(unitsOf(e.TotalEarnedUnits)), usdt(unitsOf(e.ClaimedUnits)), usdt(unitsOf(e.PendingSettlementUnits)))}
	}
	var ans claimAnswer
	_, _, err := a.authed(c, "POST", "/api/nodes/"+node+"/claim", map[string]string{"walletAddress": me.Hex()}, []int{200}, &ans)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict && ae.Code == "nothing_claimable" {
		return nil, nothingError{ae.Message}
	}
	if err != nil {
		return nil, err
	}
	s := ans.Signature
	if s.NodeID != node {
		return nil, fmt.Errorf("POST /api/nodes/%s/claim: the signature is for node %q", node, s.NodeID)
	}
	return &savedClaim{NodeID: node, CumulativeRaw: s.CumulativeRaw, Signature: s.Signature, DeadlineUnix: s.DeadlineUnix,
		Contract: s.Contract, ChainID: s.ChainID}, nil
}

// send checks the signature against the chain and sends claimNode.
func (a *app) send(ctx context.Context, c *client, key *ecdsa.PrivateKey, s *savedClaim, chainRPC string, want common.Address, maxFee *big.Int) (*claimResult, error) {
	me := crypto.PubkeyToAddress(key.PublicKey)
	contract, err := ethparse.Address(s.Contract)
	if err != nil {
		return nil, fmt.Errorf("the claim names contract %q: %w", s.Contract, err)
	}
	if want != (common.Address{}) && contract != want {
		return nil, fmt.Errorf("the claim is for contract %s, not the ClaimsContract you expect (%s): not sent", contract.Hex(), want.Hex())
	}
	cumulative, err := money.ParseUnits(s.CumulativeRaw)
	if err != nil || cumulative <= 0 {
		return nil, fmt.Errorf("the claim's cumulative amount %q is not a positive number of base units", s.CumulativeRaw)
	}
	sig, err := hexutil.Decode(s.Signature)
	if err != nil {
		return nil, fmt.Errorf("the claim's signature is not hex: %v", err)
	}
	if chainRPC == "" {
		chainRPC = fmt.Sprintf("%s/rpc/%d", c.base, s.ChainID)
	}
	eth, err := ethclient.DialContext(ctx, chainRPC)
	if err != nil {
		return nil, fmt.Errorf("the settlement chain at %s: %w", chainRPC, err)
	}
	defer eth.Close()
	chainID, err := eth.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("the settlement chain at %s: eth_chainId: %w (--chain-rpc names another JSON-RPC URL of chain %d)", chainRPC, err, s.ChainID)
	}
	if !chainID.IsUint64() || chainID.Uint64() != s.ChainID {
		return nil, fmt.Errorf("%s serves chain %s, but the claim is for chain %d: name the right one with --chain-rpc", chainRPC, chainID, s.ChainID)
	}
	cl := claim.Claim{NodeID: s.NodeID, Amount: cumulative, Deadline: s.DeadlineUnix}
	signer, err := claim.Recover(claim.Domain{ChainID: s.ChainID, Contract: contract}, cl, sig)
	if err != nil {
		return nil, fmt.Errorf("the claim signature does not verify: %w", err)
	}
	cc := claimscontract.NewClaimsContract()
	inst := cc.Instance(eth, contract)
	call := &bind.CallOpts{Context: ctx}
	role, err := bind.Call(inst, call, cc.PackCLAIMCREATORROLE(), cc.UnpackCLAIMCREATORROLE)
	if err != nil {
		return nil, fmt.Errorf("ClaimsContract %s on chain %d: %w", contract.Hex(), s.ChainID, err)
	}
	if ok, err := bind.Call(inst, call, cc.PackHasRole(role, signer), cc.UnpackHasRole); err != nil || !ok {
		return nil, fmt.Errorf("the claim is signed by %s, which is no claim signer of ClaimsContract %s (%v): not sent", signer.Hex(), contract.Hex(), err)
	}
	if w, err := bind.Call(inst, call, cc.PackNodeWallet(s.NodeID), cc.UnpackNodeWallet); err != nil || w != me {
		return nil, fmt.Errorf("ClaimsContract %s pays node %s to %s, not to your wallet %s (%v): not sent", contract.Hex(), s.NodeID, w.Hex(), me.Hex(), err)
	}
	paid, err := bind.Call(inst, call, cc.PackClaimed(s.NodeID), cc.UnpackClaimed)
	if err != nil {
		return nil, fmt.Errorf("ClaimsContract %s: claimed(%s): %w", contract.Hex(), s.NodeID, err)
	}
	if paid.Cmp(cumulative.Big()) >= 0 {
		return nil, fmt.Errorf("%w: ClaimsContract has paid %s %s USDT base units in all", errAlreadyPaid, s.NodeID, paid)
	}
	data := cc.PackClaimNode(s.NodeID, sig, cumulative.Big(), big.NewInt(s.DeadlineUnix))
	// The gas limit is the chain RPC's estimate, and that RPC is by default
	// the gateway's own /rpc (which may route to registered nodes): an
	// estimate far beyond what claimNode costs is a lie, or a contract
	// that burns gas, and the wallet would pay for it. claimNode costs
	// ~100,000 gas (a signature recovery, two storage writes and a token
	// transfer); claimGasCap leaves room for a costlier token.
	gas, err := eth.EstimateGas(ctx, ethereum.CallMsg{From: me, To: &contract, Data: data})
	if err != nil {
		return nil, fmt.Errorf("claimNode was not sent: %s", reverted(err, cc))
	}
	if gas > claimGasCap {
		return nil, fmt.Errorf("claimNode would cost %d gas by %s's estimate, more than a claim ever costs (%d): not sent", gas, chainRPC, claimGasCap)
	}
	// So is the gas price: a priority fee the RPC suggests, plus twice the
	// base fee of the head it reports (go-ethereum's own rule), and an RPC
	// that names thousands of gwei would have the wallet pay it.
	tip, err := eth.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("the settlement chain at %s: eth_maxPriorityFeePerGas: %w", chainRPC, err)
	}
	head, err := eth.HeaderByNumber(ctx, nil)
	if err != nil || head.BaseFee == nil {
		return nil, fmt.Errorf("the settlement chain at %s: no base fee in its head (%v)", chainRPC, err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	if feeCap.Cmp(maxFee) > 0 || tip.Sign() < 0 {
		return nil, fmt.Errorf("claimNode would pay up to %s wei per gas by %s's fees, more than --max-fee-gwei (%s wei): not sent", feeCap, chainRPC, maxFee)
	}
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = ctx
	opts.GasLimit, opts.GasTipCap, opts.GasFeeCap = gas, tip, feeCap
	tx, err := bind.Transact(inst, opts, data)
	if err != nil {
		return nil, fmt.Errorf("claimNode was not sent: %s", reverted(err, cc))
	}
	fmt.Fprintf(a.stderr, "sent claimNode(%s) in tx %s; waiting for it to be mined…\n", s.NodeID, tx.Hash().Hex())
	rc, err := bind.WaitMined(ctx, eth, tx.Hash())
	if err != nil {
		return nil, fmt.Errorf("tx %s: no receipt yet (%v); run tollgate-node claim again to check and resend", tx.Hash().Hex(), err)
	}
	if rc.Status != types.ReceiptStatusSuccessful {
		return nil, fmt.Errorf("tx %s reverted in block %d", tx.Hash().Hex(), rc.BlockNumber)
	}
	for _, l := range rc.Logs {
		if l.Address != contract {
			continue
		}
		ev, err := cc.UnpackClaimedEvent(l)
		if err != nil || ev.NodeId != s.NodeID || ev.Wallet != me {
			continue
		}
		p, err1 := money.FromBig(ev.Paid)
		cum, err2 := money.FromBig(ev.Cumulative)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("tx %s: a Claimed event with amounts out of range", tx.Hash().Hex())
		}
		return &claimResult{NodeID: s.NodeID, Wallet: me.Hex(), PaidUnits: units(p), PaidUSDT: p.Decimal(), CumulativeUnits: units(cum),
			Tx: tx.Hash().Hex(), Block: rc.BlockNumber.Uint64(), Contract: contract.Hex(), ChainID: s.ChainID}, nil
	}
	return nil, fmt.Errorf("tx %s was mined in block %d but emitted no Claimed event for %s", tx.Hash().Hex(), rc.BlockNumber, s.NodeID)
}

// reverted names the contract's custom error a failed estimate or send
// carries, else the error as it came.
func reverted(err error, cc *claimscontract.ClaimsContract) string {
	v, derr := revert.Decode(err, cc.UnpackError)
	if derr != nil {
		return err.Error()
	}
	name := fmt.Sprintf("%T", v)
	name = strings.TrimPrefix(name[strings.LastIndex(name, ".")+1:], "ClaimsContract")
	return fmt.Sprintf("ClaimsContract reverts with %s %+v", name, v)
}
