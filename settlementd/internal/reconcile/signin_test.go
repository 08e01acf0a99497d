package reconcile

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The rebuild's generation marker names its time (balances.GenerationValue),
// which the gateway's socket sign-in reads (meter.SignInSIWX): a Redis
// rebuilt after a loss forgot the Sign-In-With-X nonces used before, so a
// message issued before the rebuild (or in its second) is refused as used
// and one issued after signs in. Real PostgreSQL and Redis, the meter's
// script against the marker this package wrote.
func TestRebuildMarkerBoundsSocketSignIns(t *testing.T) {
	ctx := context.Background()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	l := balances.Layout{Prefix: prefix}
	before := time.Now()
	rep, err := Run(ctx, pool, rdb, Options{Prefix: prefix, Rebuild: true}, nil)
	after := time.Now()
	if err != nil || rep.Generation == "" {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
	v, err := rdb.Get(ctx, l.Generation()).Result()
	if err != nil || v != rep.Generation {
		t.Fatalf("marker %q %v; the run reported %q", v, err, rep.Generation)
	}
	at, err := time.Parse("2006-01-02T15:04:05", v[:min(len(v), 19)])
	if err != nil || at.Before(before.UTC().Truncate(time.Second)) || at.After(after.UTC()) {
		t.Fatalf("marker %q does not begin with the rebuild's UTC time (%s .. %s): %v", v, before.UTC(), after.UTC(), err)
	}

	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	const wallet = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	req := meter.Request{ChainID: 137, IP: netip.MustParseAddr("192.0.2.9"), Calls: 1, Method: "eth_blockNumber"}
	pg, err := m.PrepareGrant(req, meter.Grant{TxHash: "0x" + "ab" + "00000000000000000000000000000000000000000000000000000000000001",
		Wallet: wallet, Network: "eip155:8453", Amount: money.BundlePrice, Calls: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := m.GrantBundle(ctx, pg); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("grant: %+v %v", d, err)
	}
	if d, err := m.SignInSIWX(ctx, req, wallet, "nonceR001", "ws:aaaa", at.Add(-time.Second), time.Minute); err != nil ||
		d.Outcome != meter.PaymentRequired || d.Reason != meter.ReasonNonceUsed {
		t.Fatalf("a message issued a second before the rebuild: %+v %v", d, err)
	}
	if d, err := m.SignInSIWX(ctx, req, wallet, "nonceR002", "ws:aaaa", at.Add(time.Second), time.Minute); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("a message issued a second after the rebuild: %+v %v", d, err)
	}
}
