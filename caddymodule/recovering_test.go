package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Through our Caddy binary: while Redis has no generation marker (it lost
// its data and settlementd has not rebuilt it), an unknown key is answered
// 503 metering_recovering with Retry-After on /rpc, the usage endpoint and
// deposit instructions — never 401 or 404 — and what Redis still holds is
// served as before; with the marker back, unknown is unknown (401) again.
func TestRecoveringAnswersWithoutGenerationMarker(t *testing.T) {
	e := startMetered(t, meterOpts{})
	ctx := context.Background()
	secret, id := e.createKey(t)
	e.credit(t, id, 10*money.PricePerCall)
	revoked, rid := e.createKey(t)
	if err := e.rdb.HSet(ctx, e.layout.Account(rid), balances.FieldStatus, balances.StatusRevoked).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Del(ctx, e.layout.Shard(0).Generation()).Err(); err != nil {
		t.Fatal(err)
	}
	unknown, _ := meter.NewKey()

	a := e.rpc(t, blockNumber, "X-API-Key: "+unknown)
	var rpc struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				Reason     string `json:"reason"`
				RetryAfter int    `json:"retry_after"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &rpc); err != nil || a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") != "2" ||
		rpc.ID != 7 || rpc.Error.Code != -32603 || rpc.Error.Data.Reason != meter.ReasonRecovering || rpc.Error.Data.RetryAfter != 2 {
		t.Fatalf("/rpc with an unknown key while recovering: %d Retry-After %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	for name, a := range map[string]answer{
		"usage":   e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+unknown),
		"deposit": e.do(t, http.MethodGet, "/credits/initiate?amount=1&key_id="+accounts.NewID(), ""),
	} {
		if code, _, _ := errorField(t, a); a.status != http.StatusServiceUnavailable || code != meter.ReasonRecovering || a.header.Get("Retry-After") != "2" {
			t.Errorf("%s of an unknown key while recovering: %d %s", name, a.status, a.body)
		}
	}
	// What Redis holds is served as before.
	if a := e.rpc(t, blockNumber, "X-API-Key: "+secret); a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" {
		t.Fatalf("a key Redis holds: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber, "X-API-Key: "+revoked); a.status != http.StatusUnauthorized || !bytes.Contains(a.body, []byte("revoked")) {
		t.Fatalf("a revoked key: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "free" {
		t.Fatalf("anonymous: %d %s", a.status, a.body)
	}
	fresh, _ := e.createKey(t) // key creation works, and the key is live at once
	if a := e.rpc(t, blockNumber, "X-API-Key: "+fresh); a.status != http.StatusOK {
		t.Fatalf("a key created while recovering: %d %s", a.status, a.body)
	}

	testenv.MarkRebuilt(t, e.rdb, e.prefix)
	if a := e.rpc(t, blockNumber, "X-API-Key: "+unknown); a.status != http.StatusUnauthorized || !bytes.Contains(a.body, []byte("-32001")) {
		t.Fatalf("unknown key with the marker: %d %s", a.status, a.body)
	}
	if a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+unknown); a.status != http.StatusUnauthorized {
		t.Fatalf("usage of an unknown key with the marker: %d %s", a.status, a.body)
	}
	if a := e.do(t, http.MethodGet, "/credits/initiate?amount=1&key_id="+accounts.NewID(), ""); a.status != http.StatusNotFound {
		t.Fatalf("deposit to an unknown account with the marker: %d %s", a.status, a.body)
	}
}
