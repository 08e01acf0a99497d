package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/nodes"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// TestRegistrationProofEndToEnd: settlementd with the
// endpoint ownership proof required, a wallet logged in by signature.
// Registering an endpoint that does not serve the wallet at
// /.well-known/tollgate-node fails with 403 endpoint_not_proven (and says
// where to serve it); a public provider's URL fails with 403
// public_provider; the endpoint that serves the proof registers, and its
// operator sees the wallet's standing (probation, before any gateway has
// judged it) in GET /api/nodes.
func TestRegistrationProofEndToEnd(t *testing.T) {
	testenv.Redis(t)
	dsn, _ := settletest.DB(t)
	api := fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	env := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": testenv.KeyPrefix(t),
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(api, "http://"), "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_JWT_SECRET": "proof-jwt-secret-0123456789abcdef0123456789", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_NODE_PROOF": "required", "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(api, "http://")}
	runInProcess(t, env, api+"/health")
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	auth := login(t, api, key)
	node := func(proof string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == nodes.ProofPath {
				if proof == "" {
					http.NotFound(w, r)
					return
				}
				_, _ = w.Write([]byte(proof + "\n"))
				return
			}
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x89"}`))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	reg := func(url string) e2eAnswer {
		return e2eDo(t, http.MethodPost, api+"/api/nodes/register", mustJSON(map[string]any{"region": "eu", "rpc_url": url, "chain_ids": []int{137}}), auth)
	}
	if a := reg(node("")); a.status != http.StatusForbidden || a.code() != "endpoint_not_proven" || !strings.Contains(string(a.body), nodes.ProofPath) {
		t.Fatalf("unproven endpoint: %d %s", a.status, a.body)
	}
	if a := reg(node("0x00000000000000000000000000000000000000aa")); a.status != http.StatusForbidden || a.code() != "endpoint_not_proven" {
		t.Fatalf("another wallet's proof: %d %s", a.status, a.body)
	}
	if a := reg("https://polygon-mainnet.g.alchemy.com/v2/somebodys-key"); a.status != http.StatusForbidden || a.code() != "public_provider" {
		t.Fatalf("public provider: %d %s", a.status, a.body)
	}
	a := reg(node(strings.ToLower(wallet)))
	if a.status != http.StatusCreated {
		t.Fatalf("proven endpoint: %d %s", a.status, a.body)
	}
	l := e2eDo(t, http.MethodGet, api+"/api/nodes", "", auth)
	if l.status != http.StatusOK || !strings.Contains(string(l.body), `"standing":[{"chain_id":137,"phase":"probation"`) {
		t.Fatalf("GET /api/nodes: %d %s", l.status, l.body)
	}
}
