package contracts

import (
	"bytes"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	cc "github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"

	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const nodeA = "node-a"

func (e *polygonEnv) claimed(nodeID string) *big.Int {
	return call(e.t, e.claimsC, e.claims.PackClaimed(nodeID), e.claims.UnpackClaimed)
}

func (e *polygonEnv) role(pack func() []byte) [32]byte {
	return call(e.t, e.claimsC, pack(), func(b []byte) ([32]byte, error) {
		var h [32]byte
		copy(h[:], b)
		return h, nil
	})
}

func TestClaimsHashClaimMatchesGoDigest(t *testing.T) {
	e := newPolygonEnv(t)
	for _, nodeID := range []string{nodeA, "node-éü-1 ノード"} {
		amount, deadline := big.NewInt(123456789), big.NewInt(1_900_000_000)
		digest, err := claim.Digest(claim.Domain{ChainID: polygonChainID, Contract: e.addrs.Claims},
			claim.Claim{NodeID: nodeID, Amount: money.Units(amount.Int64()), Deadline: deadline.Int64()})
		if err != nil {
			t.Fatal(err)
		}
		onchain := call(t, e.claimsC, e.claims.PackHashClaim(nodeID, amount, deadline), e.claims.UnpackHashClaim)
		if !bytes.Equal(digest[:], onchain[:]) {
			t.Fatalf("nodeId %q: Go digest %x != hashClaim %x", nodeID, digest, onchain)
		}
	}
	// Sanity: the type hash is the documented string.
	th := call(t, e.claimsC, e.claims.PackCLAIMTYPEHASH(), e.claims.UnpackCLAIMTYPEHASH)
	if want := crypto.Keccak256Hash([]byte("Claim(string nodeId,uint256 amount,uint256 deadline)")); th != want {
		t.Fatalf("CLAIM_TYPEHASH %x, want %x", th, want)
	}
}

func TestClaimsCreateClaimByNonCreatorReverts(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := new(big.Int).SetUint64(e.now() + 3600)
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackCreateClaim(nodeA, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractAccessControlUnauthorizedAccount](t, err, e.claims.UnpackError)
	if got.Account != e.other.addr || got.NeededRole != e.role(e.claims.PackCLAIMCREATORROLE) {
		t.Fatalf("AccessControlUnauthorizedAccount(%s, %x)", got.Account, got.NeededRole)
	}
}

func TestClaimsSetNodeWalletByNonCreatorReverts(t *testing.T) {
	e := newPolygonEnv(t)
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackSetNodeWallet(nodeA, e.other.addr))
	got := expectRevert[cc.ClaimsContractAccessControlUnauthorizedAccount](t, err, e.claims.UnpackError)
	if got.Account != e.other.addr || got.NeededRole != e.role(e.claims.PackCLAIMCREATORROLE) {
		t.Fatalf("AccessControlUnauthorizedAccount(%s, %x)", got.Account, got.NeededRole)
	}
}

func TestClaimsValidClaimPays(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	before := e.usdtBalance(e.node.addr)
	r := mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	if delta := new(big.Int).Sub(e.usdtBalance(e.node.addr), before); delta.Int64() != 100 {
		t.Fatalf("node wallet received %v, want 100", delta)
	}
	if c := e.claimed(nodeA); c.Int64() != 100 {
		t.Fatalf("claimed %v, want 100", c)
	}
	if v := call(t, e.claimsC, e.claims.PackTotalClaimed(), e.claims.UnpackTotalClaimed); v.Int64() != 100 {
		t.Fatalf("totalClaimed %v, want 100", v)
	}
	if v := call(t, e.claimsC, e.claims.PackOutstanding(), e.claims.UnpackOutstanding); v.Sign() != 0 {
		t.Fatalf("outstanding %v, want 0", v)
	}
	var events int
	for _, l := range r.Logs {
		if ev, err := e.claims.UnpackClaimedEvent(l); err == nil {
			events++
			if ev.NodeId != nodeA || ev.Wallet != e.node.addr || ev.Paid.Int64() != 100 || ev.Cumulative.Int64() != 100 ||
				ev.NodeIdHash != crypto.Keccak256Hash([]byte(nodeA)) {
				t.Fatalf("Claimed event %+v", ev)
			}
		}
	}
	if events != 1 {
		t.Fatalf("%d Claimed events, want 1", events)
	}
}

func TestClaimsSameClaimTwiceRevertsAlreadyClaimed(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractAlreadyClaimed](t, err, e.claims.UnpackError)
	if got.Amount.Int64() != 100 || got.Claimed.Int64() != 100 {
		t.Fatalf("AlreadyClaimed(%v, %v), want (100, 100)", got.Amount, got.Claimed)
	}
}

func TestClaimsAfterDeadlineRevertsClaimExpired(t *testing.T) {
	e := newPolygonEnv(t)
	e.allocate(nodeA, e.node, 100, 1000)
	deadline := new(big.Int).SetUint64(e.now() + 60)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	if err := e.chain.AdjustTime(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractClaimExpired](t, err, e.claims.UnpackError)
	if got.Deadline.Cmp(deadline) != 0 {
		t.Fatalf("ClaimExpired(%v), want %v", got.Deadline, deadline)
	}
}

func TestClaimsWhilePausedRevertsThenWorksAfterUnpause(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	mustSend(t, e.chain, e.governor, e.claimsC, e.claims.PackPause())
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	expectRevert[cc.ClaimsContractEnforcedPause](t, err, e.claims.UnpackError)
	mustSend(t, e.chain, e.governor, e.claimsC, e.claims.PackUnpause())
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	if c := e.claimed(nodeA); c.Int64() != 100 {
		t.Fatalf("claimed %v, want 100", c)
	}
}

func TestClaimsSignatureFromNonCreatorRevertsInvalidSigner(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.other.key, nodeA, 100, deadline)
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractInvalidSigner](t, err, e.claims.UnpackError)
	if got.Recovered != e.other.addr {
		t.Fatalf("InvalidSigner(%s), want %s", got.Recovered, e.other.addr)
	}
}

func TestClaimsValidSignatureFromOtherAccountRevertsNotNodeWallet(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackClaimNode(nodeA, sig, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractNotNodeWallet](t, err, e.claims.UnpackError)
	if got.Caller != e.other.addr || got.Wallet != e.node.addr {
		t.Fatalf("NotNodeWallet(%s, %s), want (%s, %s)", got.Caller, got.Wallet, e.other.addr, e.node.addr)
	}
}

func TestClaimsByUnknownWalletRevertsUnknownWallet(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 100, deadline)
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackClaim(sig, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractUnknownWallet](t, err, e.claims.UnpackError)
	if got.Wallet != e.other.addr {
		t.Fatalf("UnknownWallet(%s), want %s", got.Wallet, e.other.addr)
	}
}

func TestClaimsAboveAllocationRevertsExceedsAllocation(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	sig := e.signClaim(e.creator.key, nodeA, 101, deadline)
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(sig, big.NewInt(101), deadline))
	got := expectRevert[cc.ClaimsContractExceedsAllocation](t, err, e.claims.UnpackError)
	if got.Amount.Int64() != 101 || got.Allocation.Int64() != 100 {
		t.Fatalf("ExceedsAllocation(%v, %v), want (101, 100)", got.Amount, got.Allocation)
	}
}

func TestClaimsCumulative(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 1000)
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(e.signClaim(e.creator.key, nodeA, 100, deadline), big.NewInt(100), deadline))

	deadline = e.allocate(nodeA, nil, 250, 0)
	before := e.usdtBalance(e.node.addr)
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaim(e.signClaim(e.creator.key, nodeA, 250, deadline), big.NewInt(250), deadline))
	if delta := new(big.Int).Sub(e.usdtBalance(e.node.addr), before); delta.Int64() != 150 {
		t.Fatalf("second claim paid %v, want 150", delta)
	}
	if c := e.claimed(nodeA); c.Int64() != 250 {
		t.Fatalf("claimed %v, want 250", c)
	}
	if v := call(t, e.claimsC, e.claims.PackTotalAllocated(), e.claims.UnpackTotalAllocated); v.Int64() != 250 {
		t.Fatalf("totalAllocated %v, want 250", v)
	}
}

func TestClaimsClaimNodeForWalletWithTwoNodes(t *testing.T) {
	e := newPolygonEnv(t)
	const nodeB = "node-b"
	dA := e.allocate(nodeA, e.node, 100, 1000)
	dB := e.allocate(nodeB, e.node, 40, 0)
	if wn := call(t, e.claimsC, e.claims.PackWalletNode(e.node.addr), e.claims.UnpackWalletNode); wn != nodeB {
		t.Fatalf("walletNode %q, want %q (most recently bound)", wn, nodeB)
	}
	before := e.usdtBalance(e.node.addr)
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaimNode(nodeA, e.signClaim(e.creator.key, nodeA, 100, dA), big.NewInt(100), dA))
	mustSend(t, e.chain, e.node, e.claimsC, e.claims.PackClaimNode(nodeB, e.signClaim(e.creator.key, nodeB, 40, dB), big.NewInt(40), dB))
	if delta := new(big.Int).Sub(e.usdtBalance(e.node.addr), before); delta.Int64() != 140 {
		t.Fatalf("wallet received %v, want 140", delta)
	}
	if a, b := e.claimed(nodeA), e.claimed(nodeB); a.Int64() != 100 || b.Int64() != 40 {
		t.Fatalf("claimed A=%v B=%v, want 100, 40", a, b)
	}
	// A signature for node A does not work for node B.
	_, err := send(t, e.chain, e.node, e.claimsC, e.claims.PackClaimNode(nodeB, e.signClaim(e.creator.key, nodeA, 40, dB), big.NewInt(40), dB))
	expectRevert[cc.ClaimsContractInvalidSigner](t, err, e.claims.UnpackError)
}

func TestClaimsWithdrawFundsByNonGovernorReverts(t *testing.T) {
	e := newPolygonEnv(t)
	e.mintUSDT(e.addrs.Claims, 1000)
	_, err := send(t, e.chain, e.creator, e.claimsC, e.claims.PackWithdrawFunds(big.NewInt(1)))
	got := expectRevert[cc.ClaimsContractAccessControlUnauthorizedAccount](t, err, e.claims.UnpackError)
	if got.Account != e.creator.addr || got.NeededRole != e.role(e.claims.PackGOVERNORROLE) {
		t.Fatalf("AccessControlUnauthorizedAccount(%s, %x)", got.Account, got.NeededRole)
	}
}

func TestClaimsWithdrawFundsByGovernor(t *testing.T) {
	e := newPolygonEnv(t)
	e.allocate(nodeA, e.node, 300, 1000)
	before := e.usdtBalance(e.governor.addr)
	mustSend(t, e.chain, e.governor, e.claimsC, e.claims.PackWithdrawFunds(big.NewInt(700))) // exactly the free funds
	if delta := new(big.Int).Sub(e.usdtBalance(e.governor.addr), before); delta.Int64() != 700 {
		t.Fatalf("governor received %v, want 700", delta)
	}
	if bal := e.usdtBalance(e.addrs.Claims); bal.Int64() != 300 {
		t.Fatalf("contract balance %v, want 300", bal)
	}
}

func TestClaimsWithdrawFundsBelowOutstandingReverts(t *testing.T) {
	e := newPolygonEnv(t)
	e.allocate(nodeA, e.node, 300, 1000)
	_, err := send(t, e.chain, e.governor, e.claimsC, e.claims.PackWithdrawFunds(big.NewInt(701)))
	got := expectRevert[cc.ClaimsContractInsufficientFreeFunds](t, err, e.claims.UnpackError)
	if got.Requested.Int64() != 701 || got.Available.Int64() != 700 {
		t.Fatalf("InsufficientFreeFunds(%v, %v), want (701, 700)", got.Requested, got.Available)
	}
}

func TestClaimsPauseByNonGovernorReverts(t *testing.T) {
	e := newPolygonEnv(t)
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackPause())
	got := expectRevert[cc.ClaimsContractAccessControlUnauthorizedAccount](t, err, e.claims.UnpackError)
	if got.Account != e.other.addr || got.NeededRole != e.role(e.claims.PackGOVERNORROLE) {
		t.Fatalf("AccessControlUnauthorizedAccount(%s, %x)", got.Account, got.NeededRole)
	}
}

func TestClaimsUnpauseByNonGovernorReverts(t *testing.T) {
	e := newPolygonEnv(t)
	mustSend(t, e.chain, e.governor, e.claimsC, e.claims.PackPause())
	_, err := send(t, e.chain, e.other, e.claimsC, e.claims.PackUnpause())
	got := expectRevert[cc.ClaimsContractAccessControlUnauthorizedAccount](t, err, e.claims.UnpackError)
	if got.Account != e.other.addr || got.NeededRole != e.role(e.claims.PackGOVERNORROLE) {
		t.Fatalf("AccessControlUnauthorizedAccount(%s, %x)", got.Account, got.NeededRole)
	}
	if paused := call(t, e.claimsC, e.claims.PackPaused(), e.claims.UnpackPaused); !paused {
		t.Fatal("contract unpaused by a non-governor")
	}
}

func TestClaimsCreateClaimDecreaseRevertsAllocationDecrease(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := e.allocate(nodeA, e.node, 100, 0)
	mustSend(t, e.chain, e.creator, e.claimsC, e.claims.PackCreateClaim(nodeA, big.NewInt(100), deadline)) // equal: no-op
	_, err := send(t, e.chain, e.creator, e.claimsC, e.claims.PackCreateClaim(nodeA, big.NewInt(99), deadline))
	got := expectRevert[cc.ClaimsContractAllocationDecrease](t, err, e.claims.UnpackError)
	if got.Current.Int64() != 100 || got.Requested.Int64() != 99 {
		t.Fatalf("AllocationDecrease(%v, %v), want (100, 99)", got.Current, got.Requested)
	}
	if v := call(t, e.claimsC, e.claims.PackTotalAllocated(), e.claims.UnpackTotalAllocated); v.Int64() != 100 {
		t.Fatalf("totalAllocated %v, want 100", v)
	}
}

func TestClaimsCreateClaimPastDeadlineRevertsDeadlinePassed(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := new(big.Int).SetUint64(e.now() - 1)
	_, err := send(t, e.chain, e.creator, e.claimsC, e.claims.PackCreateClaim(nodeA, big.NewInt(100), deadline))
	got := expectRevert[cc.ClaimsContractDeadlinePassed](t, err, e.claims.UnpackError)
	if got.Deadline.Cmp(deadline) != 0 {
		t.Fatalf("DeadlinePassed(%v), want %v", got.Deadline, deadline)
	}
}

func TestClaimsCreateClaimEmptyNodeIDReverts(t *testing.T) {
	e := newPolygonEnv(t)
	deadline := new(big.Int).SetUint64(e.now() + 3600)
	_, err := send(t, e.chain, e.creator, e.claimsC, e.claims.PackCreateClaim("", big.NewInt(1), deadline))
	expectRevert[cc.ClaimsContractInvalidNodeId](t, err, e.claims.UnpackError)
}

func TestClaimsRolesAndToken(t *testing.T) {
	e := newPolygonEnv(t)
	has := func(role [32]byte, a *account) bool {
		return call(t, e.claimsC, e.claims.PackHasRole(role, a.addr), e.claims.UnpackHasRole)
	}
	var adminRole [32]byte
	creatorRole, govRole := e.role(e.claims.PackCLAIMCREATORROLE), e.role(e.claims.PackGOVERNORROLE)
	if creatorRole != crypto.Keccak256Hash([]byte("CLAIM_CREATOR_ROLE")) || govRole != crypto.Keccak256Hash([]byte("GOVERNOR_ROLE")) {
		t.Fatal("role constants differ from keccak256 of their names")
	}
	if !has(adminRole, e.deployer) || !has(govRole, e.governor) || !has(creatorRole, e.creator) || has(creatorRole, e.governor) {
		t.Fatal("unexpected role assignment")
	}
	if tok := call(t, e.claimsC, e.claims.PackToken(), e.claims.UnpackToken); tok != e.addrs.USDT {
		t.Fatalf("token %s, want %s", tok, e.addrs.USDT)
	}
}
