package claims

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const node = "NODE-EU-AAAAAAAA"

func allocate(t *testing.T, pool *pgxpool.Pool, units int64) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO chain_txs (chain_id, purpose, kind, role, from_addr, to_addr, node_id, amount_units,
		nonce, gas_limit, calldata, raw_tx, tx_hash, state, resolved_at)
		VALUES (137, $1, 'create_claim', 'relayer', '0x1', '0x2', $2, $3, $3, 1, '\x00', '\x00', $4, 'mined', now())`,
		fmt.Sprintf("alloc:%s:%d", node, units), node, units, fmt.Sprintf("0x%064x", units)); err != nil {
		t.Fatal(err)
	}
}

// Cumulative claims: a signature reserves up to its cumulative amount; a
// later allocation is claimable on top and its signature covers everything
// allocated; a Claimed event (or the on-chain claimed()) settles them; an
// expired signature stops reserving after its deadline second.
func TestClaimableAcrossSignaturesAndClaims(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	wallet := "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status) VALUES ($1, $2, 'EU', 'https://n.example', '{137}', 'online')`,
		node, wallet); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	key, _ := crypto.GenerateKey()
	domain := claim.Domain{ChainID: 137, Contract: common.HexToAddress("0x00000000000000000000000000000000000000cc")}
	a, _ := auth.New(auth.Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Dev: true})
	s, err := New(Config{Pool: pool, Auth: a, Signer: claim.NewSigner(key, domain), Validity: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, claimed money.Units, wantClaimable, wantReserved money.Units) {
		t.Helper()
		e, err := s.Compute(ctx, pool, node, claimed)
		if err != nil || e.ClaimableUnits != wantClaimable || e.ReservedUnits != wantReserved {
			t.Fatalf("%s: %+v %v; want claimable %d reserved %d", what, e, err, wantClaimable, wantReserved)
		}
	}
	issue := func(what string, onChain, wantCumulative, wantAmount money.Units) *Signature {
		t.Helper()
		sig, status, code, msg := s.issue(ctx, node, wallet, onChain)
		if sig == nil || sig.CumulativeRaw != wantCumulative.String() || sig.AmountRaw != wantAmount.String() {
			t.Fatalf("%s: %+v (%d %s %s); want cumulative %d amount %d", what, sig, status, code, msg, wantCumulative, wantAmount)
		}
		raw, _ := hexutil.Decode(sig.Signature)
		if err := claim.Verify(domain, claim.Claim{NodeID: node, Amount: wantCumulative, Deadline: sig.DeadlineUnix}, raw, crypto.PubkeyToAddress(key.PublicKey)); err != nil {
			t.Fatal(err)
		}
		return sig
	}

	check("nothing allocated", 0, 0, 0)
	if sig, status, code, _ := s.issue(ctx, node, wallet, 0); sig != nil || status != 409 || code != "nothing_claimable" {
		t.Fatalf("claim with nothing allocated: %v %d %s", sig, status, code)
	}
	allocate(t, pool, 100)
	check("allocated 100", 0, 100, 0)
	issue("S1", 0, 100, 100)
	check("S1 outstanding", 0, 0, 100)
	if sig, status, _, _ := s.issue(ctx, node, wallet, 0); sig != nil || status != 409 {
		t.Fatal("a second signature while S1 reserves everything")
	}
	allocate(t, pool, 150)
	check("allocation raised", 0, 50, 100)
	issue("S2 covers everything allocated", 0, 150, 150)
	check("S1 and S2 outstanding", 0, 0, 150)
	// S1 was claimed on chain: the contract says claimed = 100 before the
	// watcher has seen it.
	check("claimed() read on chain", 100, 0, 50)
	if _, err := pool.Exec(ctx, `INSERT INTO claim_events VALUES ('0xaa', 0, 137, 10, now(), $1, $2, 100, 100)`, node, wallet); err != nil {
		t.Fatal(err)
	}
	check("Claimed event mirrored", 0, 0, 50)
	// S2 expires unclaimed: one second after its deadline it no longer reserves.
	now = now.Add(time.Hour + time.Second)
	check("S2 expired", 0, 50, 0)
	issue("S3 for the same funds", 0, 150, 50)
	e, _ := s.Compute(ctx, pool, node, 0)
	if e.ClaimedUnits != 100 || e.AllocatedUnits != 150 || e.LastClaim == nil {
		t.Fatalf("earnings %+v", e)
	}
}
