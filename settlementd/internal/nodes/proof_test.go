package nodes

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

func proofService(t *testing.T, perHour int) *Service {
	t.Helper()
	_, pool := settletest.DB(t)
	a, err := auth.New(auth.Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Pool: pool, Redis: testenv.Redis(t), Prefix: testenv.KeyPrefix(t), Auth: a, AllowPrivate: true, MaxFailures: 3,
		Proof: true, RegisterPerHour: perHour})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// provedServer is a node endpoint: eth_chainId 137 on POST, and whatever
// proof says at ProofPath.
func provedServer(t *testing.T, proof string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == ProofPath {
			if proof == "" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(proof))
			return
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x89"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Registration proves the registrant controls the endpoint:
// an endpoint that serves no proof, or another wallet's, is refused with
// 403 endpoint_not_proven and nothing is stored; one that names the
// registrant's wallet (any case) registers.
func TestRegistrationProvesControl(t *testing.T) {
	s := proofService(t, -1)
	ctx := context.Background()
	const wallet = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	for _, c := range []struct{ name, proof string }{
		{"no proof", ""},
		{"another wallet", "0x00000000000000000000000000000000000000aa\n"},
		{"not an address", "yes it is mine\n"},
	} {
		srv := provedServer(t, c.proof)
		_, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: srv.URL + "/rpc", ChainIDs: []uint64{137}})
		if code(err) != "endpoint_not_proven" || !strings.Contains(err.Error(), ProofPath) {
			t.Errorf("%s: %v, want endpoint_not_proven naming %s", c.name, err, ProofPath)
		}
	}
	if n := settletest.Count(t, s.cfg.Pool, `SELECT count(*) FROM nodes`); n != 0 {
		t.Fatalf("%d nodes stored from unproven endpoints", n)
	}
	srv := provedServer(t, "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED\nanything after\n")
	n, created, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: srv.URL + "/rpc", ChainIDs: []uint64{137}})
	if err != nil || !created || n.NodeID == "" {
		t.Fatalf("proven endpoint: %v %v %+v", err, created, n)
	}
}

// A public provider's URL is refused before anything is asked of it.
func TestRegistrationRefusesPublicProvider(t *testing.T) {
	s := proofService(t, -1)
	for _, u := range []string{"https://polygon-mainnet.g.alchemy.com/v2/abc", "https://mainnet.infura.io/v3/abc", "https://polygon-bor-rpc.publicnode.com"} {
		_, _, err := s.Upsert(context.Background(), "0xabc", RegisterRequest{Region: "eu", RPCURL: u, ChainIDs: []uint64{137}})
		if code(err) != "public_provider" {
			t.Errorf("%s: %v, want public_provider", u, err)
		}
	}
}

// Registration is rate-limited per wallet: the attempt after
// the limit is refused with 429, another wallet is not.
func TestRegistrationRateLimited(t *testing.T) {
	s := proofService(t, 3)
	ctx := context.Background()
	const wallet = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	for i := range 3 {
		srv := provedServer(t, wallet)
		if _, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}); err != nil {
			t.Fatalf("registration %d: %v", i, err)
		}
	}
	srv := provedServer(t, wallet)
	_, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}})
	var ae *apiError
	if code(err) != "registration_rate_limited" || !asAPI(err, &ae) || ae.status != http.StatusTooManyRequests {
		t.Fatalf("4th registration in the hour: %v", err)
	}
	other := "0x00000000000000000000000000000000000000bb"
	if _, _, err := s.Upsert(ctx, other, RegisterRequest{Region: "eu", RPCURL: provedServer(t, other).URL, ChainIDs: []uint64{137}}); err != nil {
		t.Fatalf("another wallet: %v", err)
	}
}

func asAPI(err error, ae **apiError) bool {
	e, ok := err.(*apiError)
	if ok {
		*ae = e
	}
	return ok
}

// An operator sees their wallet's standing in GET /api/nodes:
// what the gateways shared in Redis — phase, share, check rate, verified
// answers, penalty — for each of the node's chains.
func TestOperatorSeesStanding(t *testing.T) {
	s := proofService(t, -1)
	ctx := context.Background()
	const wallet = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	srv := provedServer(t, wallet)
	if _, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}); err != nil {
		t.Fatal(err)
	}
	l, err := s.ListFor(ctx, wallet)
	if err != nil || len(l.Nodes) != 1 || len(l.Nodes[0].Standing) != 1 || l.Nodes[0].Standing[0].Phase != "probation" {
		t.Fatalf("before any gateway judged it: %v %+v", err, l.Nodes[0].Standing)
	}
	// As caddymodule/trust/sync.go writes it.
	if err := s.cfg.Redis.HSet(ctx, StandingKey(s.cfg.Prefix, 137, wallet), "gen", 1, "matches", 420, "m:eth_getBalance", 1,
		"m:eth_getBlockByNumber", 1, "serving_ms", 1_700_000_000_000, "penalty", 1, "phase", "ladder", "share", "0.2500",
		"check_rate", "0.8100", "probation_matches", 200, "view_ms", 1_700_000_100_000).Err(); err != nil {
		t.Fatal(err)
	}
	l, err = s.ListFor(ctx, wallet)
	if err != nil {
		t.Fatal(err)
	}
	st := l.Nodes[0].Standing[0]
	if st.Phase != "ladder" || st.Share == nil || *st.Share != 0.25 || st.CheckRate == nil || *st.CheckRate != 0.81 || st.VerifiedMatches != 420 ||
		st.VerifiedMethods != 2 || !st.Penalty || st.ProbationMatches != 200 || st.ServingSince == nil || st.UpdatedAt == nil {
		t.Fatalf("standing %+v", st)
	}
}

// The service-wide registration limit cannot be spent by a stranger
// (found in review): one wallet hammering past its own limit, or many
// wallets whose endpoints fail the proof, used to raise the shared counter
// on every attempt, so after 20×limit attempts in an hour nobody — an
// honest newcomer included — could register. Only proven registrations
// count toward the service-wide limit, and a wallet over its own limit is
// refused without touching it.
func TestRegistrationLimitNotSpentByStrangers(t *testing.T) {
	const limit = 2
	s := proofService(t, limit)
	ctx := context.Background()
	const hammer = "0x00000000000000000000000000000000000000cc"
	unproven := provedServer(t, "")
	for i := range 20*limit + 5 { // one wallet, far past its own limit
		_, _, err := s.Upsert(ctx, hammer, RegisterRequest{Region: "eu", RPCURL: unproven.URL, ChainIDs: []uint64{137}})
		if c := code(err); c != "endpoint_not_proven" && c != "registration_rate_limited" {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	for i := range 20 * limit { // many wallets, each failing the proof within its limit
		w := common.BigToAddress(big.NewInt(int64(0x1000 + i))).Hex()
		if _, _, err := s.Upsert(ctx, w, RegisterRequest{Region: "eu", RPCURL: unproven.URL, ChainIDs: []uint64{137}}); code(err) != "endpoint_not_proven" {
			t.Fatalf("sybil %d: %v", i, err)
		}
	}
	const newcomer = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	if _, created, err := s.Upsert(ctx, newcomer, RegisterRequest{Region: "eu", RPCURL: provedServer(t, newcomer).URL, ChainIDs: []uint64{137}}); err != nil || !created {
		t.Fatalf("an honest newcomer after strangers' failed attempts: %v (created %v)", err, created)
	}
}

// The proof fetch is a URL the registrant chooses (review): a redirect to
// an origin that does serve the wallet is not followed, and a proof whose
// first line never ends within 1 KiB (a huge body) is refused, both with
// 403 endpoint_not_proven.
func TestRegistrationProofRefusesRedirectsAndHugeBodies(t *testing.T) {
	s := proofService(t, -1)
	ctx := context.Background()
	const wallet = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	good := provedServer(t, wallet)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Redirect(w, r, good.URL+ProofPath, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x89"}`))
	}))
	t.Cleanup(redirect.Close)
	huge := provedServer(t, strings.Repeat(" ", 1<<20)+wallet+"\n")
	for name, u := range map[string]string{"redirect": redirect.URL, "huge": huge.URL} {
		if _, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: u, ChainIDs: []uint64{137}}); code(err) != "endpoint_not_proven" {
			t.Errorf("%s: %v, want endpoint_not_proven", name, err)
		}
	}
}
