package caddymodule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

const testAdminToken = "adm-7c1e0f5b9a2d4e6f8a0b1c2d3e4f5a6b"

var adminAuth = "X-Admin-Token: " + testAdminToken

// admin sends an authenticated admin request.
func (e *meterEnv) admin(t *testing.T, method, path, body string) answer {
	t.Helper()
	return e.do(t, method, path, body, adminAuth)
}

// wantError checks a REST error answer: status, code and (for 400) the field.
func wantError(t *testing.T, what string, a answer, status int, code, field string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, a.status, status, a.body)
	}
	gotCode, gotField, _ := errorField(t, a)
	if gotCode != code || gotField != field {
		t.Fatalf("%s: error code %q field %q, want %q %q: %s", what, gotCode, gotField, code, field, a.body)
	}
}

// TestAdminDisabledWithoutToken: with no admin_token configured (the
// placeholder expands to nothing) every gateway admin path is 404, whatever
// token is sent, and nothing is changed.
func TestAdminDisabledWithoutToken(t *testing.T) {
	e := startMetered(t, meterOpts{})
	key, id := e.createKey(t)
	e.credit(t, id, 300)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/admin/upstreams", ""},
		{"GET", "/admin/upstreams/polygon", ""},
		{"POST", "/admin/upstreams/polygon/alpha/reset", ""},
		{"POST", "/admin/keys/" + id + "/revoke", `{"reason":"x"}`},
		{"POST", "/admin/keys/" + id + "/credit", `{"amount_units":"30","reason":"x"}`},
		{"GET", "/admin/free-tier", ""},
		{"PUT", "/admin/free-tier", `{"daily_limit_per_ip":1,"subnet_limit":1}`},
		{"GET", "/admin/keys", ""},
		{"GET", "/admin/nothing-here", ""},
	} {
		for _, hdr := range [][]string{nil, {"X-Admin-Token: "}, {adminAuth}} {
			a := e.do(t, c.method, c.path, c.body, hdr...)
			if a.status != http.StatusNotFound {
				t.Fatalf("%s %s %v: %d %s", c.method, c.path, hdr, a.status, a.body)
			}
		}
	}
	if u := e.usage(t, key); u["credits_remaining_usdt"] != 0.0003 {
		t.Fatalf("a disabled admin changed the key: %v", u)
	}
	if a := e.rpc(t, blockNumber, "X-API-Key: "+key); a.status != http.StatusOK {
		t.Fatalf("key after disabled revoke: %d %s", a.status, a.body)
	}
}

// TestAdminToken: a missing or wrong token is 401 before anything else
// (unknown admin paths included), the right one is accepted, and no token
// — right or wrong — appears in Caddy's output (access log, admin log).
func TestAdminToken(t *testing.T) {
	e := startMetered(t, meterOpts{adminToken: testAdminToken})
	wrongSameLen := "adm-" + strings.Repeat("0", len(testAdminToken)-4)
	for _, c := range []struct {
		hdr  []string
		code string
	}{
		{nil, "missing_admin_token"},
		{[]string{"X-Admin-Token: "}, "missing_admin_token"},
		{[]string{"X-Admin-Token: " + wrongSameLen}, "invalid_admin_token"},
		{[]string{"X-Admin-Token: " + testAdminToken[:len(testAdminToken)-1]}, "invalid_admin_token"},
		{[]string{"X-Admin-Token: " + testAdminToken + "x"}, "invalid_admin_token"},
		{[]string{"X-Admin-Token: " + strings.ToUpper(testAdminToken)}, "invalid_admin_token"},
		{[]string{"Authorization: Bearer " + testAdminToken}, "missing_admin_token"},
	} {
		for _, p := range []string{"/admin/upstreams", "/admin/free-tier", "/admin/keys/nonsense/revoke", "/admin/upstreams/x/y/z/w"} {
			wantError(t, fmt.Sprint(p, c.hdr), e.do(t, http.MethodGet, p, "", c.hdr...), http.StatusUnauthorized, c.code, "")
		}
	}
	// The header name is case-insensitive, as HTTP says.
	if a := e.do(t, http.MethodGet, "/admin/upstreams", "", "x-admin-token: "+testAdminToken); a.status != http.StatusOK {
		t.Fatalf("lower-case header: %d %s", a.status, a.body)
	}
	wantError(t, "unknown admin path", e.admin(t, http.MethodGet, "/admin/keys/"+accounts.NewID(), ""), http.StatusNotFound, "not_found", "")
	wantError(t, "unknown key action", e.admin(t, http.MethodPost, "/admin/keys/"+accounts.NewID()+"/delete", "{}"), http.StatusNotFound, "not_found", "")
	wantError(t, "wrong method", e.admin(t, http.MethodDelete, "/admin/upstreams", ""), http.StatusMethodNotAllowed, "method_not_allowed", "")
	// Not the gateway's: falls through to the next handler (settlementd in
	// the real Caddyfile; respond 404 here).
	if a := e.admin(t, http.MethodGet, "/admin/settlement", ""); a.status != http.StatusNotFound || len(a.body) != 0 {
		t.Fatalf("settlementd's admin path: %d %s", a.status, a.body)
	}
	out := e.gw.Output()
	for _, secret := range []string{testAdminToken, wrongSameLen, testAdminToken + "x", strings.ToUpper(testAdminToken)} {
		if strings.Contains(out, secret) {
			t.Fatalf("an admin token is in Caddy's output")
		}
	}
	if !strings.Contains(out, "admin request refused") {
		t.Fatalf("refused admin requests are not logged:\n%s", out)
	}
}

// TestAdminRevoke: a revoked key gets 401 on /rpc and on the usage endpoint
// from the next request on; the KeyRevoked event is on the stream once.
func TestAdminRevoke(t *testing.T) {
	e := startMetered(t, meterOpts{adminToken: testAdminToken})
	key, id := e.createKey(t)
	e.credit(t, id, 300)
	if a := e.rpc(t, blockNumber, "X-API-Key: "+key); a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" {
		t.Fatalf("before revoking: %d %v", a.status, a.header)
	}
	path := "/admin/keys/" + id + "/revoke"
	wantError(t, "no reason", e.admin(t, http.MethodPost, path, `{}`), http.StatusBadRequest, "missing_field", "reason")
	wantError(t, "blank reason", e.admin(t, http.MethodPost, path, `{"reason":"   "}`), http.StatusBadRequest, "invalid_field", "reason")
	wantError(t, "reason not a string", e.admin(t, http.MethodPost, path, `{"reason":5}`), http.StatusBadRequest, "invalid_field", "reason")
	wantError(t, "unknown field", e.admin(t, http.MethodPost, path, `{"reason":"x","force":true}`), http.StatusBadRequest, "unknown_field", "force")
	wantError(t, "not JSON", e.admin(t, http.MethodPost, path, `reason=x`), http.StatusBadRequest, "invalid_json", "body")
	wantError(t, "bad key id", e.admin(t, http.MethodPost, "/admin/keys/key_nope/revoke", `{"reason":"x"}`), http.StatusBadRequest, "invalid_field", "key_id")
	wantError(t, "unknown key", e.admin(t, http.MethodPost, "/admin/keys/"+accounts.NewID()+"/revoke", `{"reason":"x"}`), http.StatusNotFound, "unknown_key", "")
	wantError(t, "GET", e.admin(t, http.MethodGet, path, ""), http.StatusMethodNotAllowed, "method_not_allowed", "")
	if a := e.rpc(t, blockNumber, "X-API-Key: "+key); a.status != http.StatusOK {
		t.Fatalf("refused revocations revoked the key: %d", a.status)
	}

	a := e.admin(t, http.MethodPost, path, `{"reason":"leaked in a public repo"}`)
	if m := a.json(t); a.status != http.StatusOK || m["status"] != "revoked" || m["changed"] != true || m["key_id"] != id {
		t.Fatalf("revoke: %d %s", a.status, a.body)
	}
	a = e.rpc(t, blockNumber, "X-API-Key: "+key)
	if a.status != http.StatusUnauthorized || !strings.Contains(string(a.body), "revoked") {
		t.Fatalf("revoked key on /rpc: %d %s", a.status, a.body)
	}
	wantError(t, "usage of a revoked key", e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+key), http.StatusUnauthorized, "revoked_api_key", "")
	a = e.admin(t, http.MethodPost, path, `{"reason":"again"}`)
	if m := a.json(t); a.status != http.StatusOK || m["changed"] != false {
		t.Fatalf("second revoke: %d %s", a.status, a.body)
	}
	var revokes []*events.KeyRevoked
	for _, ev := range e.stream(t) {
		if r, ok := ev.(*events.KeyRevoked); ok {
			revokes = append(revokes, r)
		}
	}
	if len(revokes) != 1 || revokes[0].KeyID != id || revokes[0].Reason != "leaked in a public repo" {
		t.Fatalf("KeyRevoked events: %+v", revokes)
	}
	if out := e.gw.Output(); !strings.Contains(out, `"action":"revoke"`) || !strings.Contains(out, id) {
		t.Fatalf("the revocation is not logged with its key id:\n%s", out)
	}
}

// TestAdminCreditDebit: a credited key can pay; a debit below zero is 409
// and changes nothing; a retried adjustment (same id) applies once; every
// applied adjustment is an event that, with the debits, accounts for the
// balance.
func TestAdminCreditDebit(t *testing.T) {
	e := startMetered(t, meterOpts{adminToken: testAdminToken, free: -1}) // no free tier: only credits pay
	key, id := e.createKey(t)
	credit, debit := "/admin/keys/"+id+"/credit", "/admin/keys/"+id+"/debit"
	if a := e.rpc(t, blockNumber, "X-API-Key: "+key); a.status != http.StatusPaymentRequired {
		t.Fatalf("unfunded key: %d %s", a.status, a.body)
	}

	for _, c := range []struct{ what, body, code, field string }{
		{"no amount", `{"reason":"x"}`, "missing_field", "amount_units"},
		{"both amounts", `{"amount_units":"30","amount_usdt":"1","reason":"x"}`, "conflicting_fields", "amount_usdt"},
		{"zero", `{"amount_units":"0","reason":"x"}`, "invalid_field", "amount_units"},
		{"negative", `{"amount_units":"-30","reason":"x"}`, "invalid_field", "amount_units"},
		{"fraction of a unit", `{"amount_units":"1.5","reason":"x"}`, "invalid_field", "amount_units"},
		{"seven decimals", `{"amount_usdt":"0.0000001","reason":"x"}`, "invalid_field", "amount_usdt"},
		{"exponent", `{"amount_usdt":1e3,"reason":"x"}`, "invalid_field", "amount_usdt"},
		{"too large", `{"amount_usdt":"1000001","reason":"x"}`, "invalid_field", "amount_usdt"},
		{"amount an object", `{"amount_units":{},"reason":"x"}`, "invalid_field", "amount_units"},
		{"no reason", `{"amount_units":"30"}`, "missing_field", "reason"},
		{"bad id", `{"amount_units":"30","reason":"x","id":"a b"}`, "invalid_field", "id"},
		{"duplicate field", `{"amount_units":"30","amount_units":"60","reason":"x"}`, "duplicate_field", "amount_units"},
		{"typo", `{"amount_unit":"30","reason":"x"}`, "unknown_field", "amount_unit"},
		{"two objects", `{"amount_units":"30","reason":"x"}{}`, "invalid_json", "body"},
	} {
		wantError(t, c.what, e.admin(t, http.MethodPost, credit, c.body), http.StatusBadRequest, c.code, c.field)
	}
	wantError(t, "unknown key", e.admin(t, http.MethodPost, "/admin/keys/"+accounts.NewID()+"/credit", `{"amount_units":"30","reason":"x"}`),
		http.StatusNotFound, "unknown_key", "")

	// 0.00009 USDT = 90 units = three calls.
	a := e.admin(t, http.MethodPost, credit, `{"amount_usdt":"0.00009","reason":"support ticket 42","id":"ticket-42"}`)
	m := a.json(t)
	if a.status != http.StatusOK || m["applied"] != true || m["balance_units"] != "90" || m["units"] != "90" || m["id"] != "ticket-42" || m["key_status"] != "active" {
		t.Fatalf("credit: %d %s", a.status, a.body)
	}
	a = e.rpc(t, blockNumber, "X-API-Key: "+key)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Payer") != "credits" || a.header.Get("X-Tollgate-Credits-Remaining") != "0.00006" {
		t.Fatalf("credited key: %d %v %s", a.status, a.header, a.body)
	}
	// A retry (same id, same amount) changes nothing; the id reused for
	// another amount is a conflict.
	a = e.admin(t, http.MethodPost, credit, `{"amount_units":90,"reason":"support ticket 42","id":"ticket-42"}`)
	if m := a.json(t); a.status != http.StatusOK || m["applied"] != false || m["balance_units"] != "60" {
		t.Fatalf("retried credit: %d %s", a.status, a.body)
	}
	wantError(t, "id reused", e.admin(t, http.MethodPost, debit, `{"amount_units":"90","reason":"x","id":"ticket-42"}`),
		http.StatusConflict, "adjustment_conflict", "")

	// The debit may not go below zero: 409, and the balance is untouched.
	wantError(t, "debit below zero", e.admin(t, http.MethodPost, debit, `{"amount_units":"61","reason":"chargeback"}`),
		http.StatusConflict, "insufficient_balance", "")
	if u := e.usage(t, key); u["credits_remaining_usdt"] != 0.00006 {
		t.Fatalf("a refused debit changed the balance: %v", u)
	}
	a = e.admin(t, http.MethodPost, debit, `{"amount_units":"60","reason":"chargeback"}`)
	if m := a.json(t); a.status != http.StatusOK || m["applied"] != true || m["balance_units"] != "0" || m["units"] != "-60" || m["amount_usdt"] != -0.00006 {
		t.Fatalf("debit to zero: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber, "X-API-Key: "+key); a.status != http.StatusPaymentRequired {
		t.Fatalf("debited key: %d %s", a.status, a.body)
	}

	// Stream: the two applied adjustments and the one paid call account for
	// the balance (90 − 30 − 60 = 0).
	var sum money.Units
	var adj []*events.Adjustment
	for _, ev := range e.stream(t) {
		switch ev := ev.(type) {
		case *events.Adjustment:
			adj = append(adj, ev)
			sum += ev.Units
		case *events.Debit:
			if ev.Payer == events.PayerCredits {
				sum -= ev.Amount
			}
		}
	}
	if len(adj) != 2 || adj[0].ID != "ticket-42" || adj[0].Reason != "support ticket 42" || adj[1].Units != -60 || sum != 0 {
		t.Fatalf("adjustment events %+v, sum %d", adj, sum)
	}
	if out := e.gw.Output(); !strings.Contains(out, `"action":"debit"`) || !strings.Contains(out, `"outcome":"insufficient_balance"`) {
		t.Fatalf("the debits are not logged:\n%s", out)
	}
}

// TestAdminFreeTier: a changed limit takes effect on the very next call,
// for this and every other gateway instance (it lives in Redis), and
// reverting restores the Caddyfile's limits.
func TestAdminFreeTier(t *testing.T) {
	e := startMetered(t, meterOpts{adminToken: testAdminToken, free: 5, subnet: 100})
	// A second gateway on the same Redis and prefix, as in a scaled-out deployment.
	other := startMetered(t, meterOpts{adminToken: testAdminToken, free: 5, subnet: 100, prefix: e.prefix})

	get := func(env *meterEnv) map[string]any {
		t.Helper()
		a := env.admin(t, http.MethodGet, "/admin/free-tier", "")
		if a.status != http.StatusOK {
			t.Fatalf("GET free-tier: %d %s", a.status, a.body)
		}
		return a.json(t)
	}
	if m := get(e); m["daily_limit_per_ip"] != 5.0 || m["subnet_limit"] != 100.0 || m["source"] != "config" {
		t.Fatalf("initial limits: %v", m)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "4" {
		t.Fatalf("first free call: %d %v", a.status, a.header)
	}

	for _, c := range []struct{ what, body, code, field string }{
		{"missing subnet", `{"daily_limit_per_ip":1}`, "missing_field", "subnet_limit"},
		{"missing ip", `{"subnet_limit":1}`, "missing_field", "daily_limit_per_ip"},
		{"negative", `{"daily_limit_per_ip":-1,"subnet_limit":1}`, "invalid_field", "daily_limit_per_ip"},
		{"fraction", `{"daily_limit_per_ip":1.5,"subnet_limit":1}`, "invalid_field", "daily_limit_per_ip"},
		{"string", `{"daily_limit_per_ip":"1","subnet_limit":1}`, "invalid_field", "daily_limit_per_ip"},
		{"huge", `{"daily_limit_per_ip":1,"subnet_limit":1099511627777}`, "invalid_field", "subnet_limit"},
		{"unknown", `{"daily_limit_per_ip":1,"subnet_limit":1,"ipv6":true}`, "unknown_field", "ipv6"},
		{"empty body", ``, "invalid_json", "body"},
	} {
		wantError(t, c.what, e.admin(t, http.MethodPut, "/admin/free-tier", c.body), http.StatusBadRequest, c.code, c.field)
	}
	wantError(t, "POST", e.admin(t, http.MethodPost, "/admin/free-tier", `{}`), http.StatusMethodNotAllowed, "method_not_allowed", "")

	// Lowered to 1 (already used): the next call is refused, and its 402
	// names the new limit.
	a := e.admin(t, http.MethodPut, "/admin/free-tier", `{"daily_limit_per_ip":1,"subnet_limit":100}`)
	if m := a.json(t); a.status != http.StatusOK || m["daily_limit_per_ip"] != 1.0 || m["source"] != "admin" {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	a = e.rpc(t, blockNumber)
	if a.status != http.StatusPaymentRequired || !strings.Contains(string(a.body), "1 calls per IP per UTC day") {
		t.Fatalf("after lowering: %d %s", a.status, a.body)
	}
	if a := other.rpc(t, blockNumber); a.status != http.StatusPaymentRequired {
		t.Fatalf("the other instance did not see the new limit: %d", a.status)
	}
	// Raised to 3: the next call is served, on either instance.
	if a := e.admin(t, http.MethodPut, "/admin/free-tier", `{"daily_limit_per_ip":3,"subnet_limit":100}`); a.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	if a := other.rpc(t, blockNumber); a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "1" {
		t.Fatalf("after raising, other instance: %d %v", a.status, a.header)
	}
	st := e.do(t, http.MethodGet, "/stats/free-tier", "").json(t)
	if st["daily_limit_per_ip"] != 3.0 || st["total_calls_today"] != 2.0 {
		t.Fatalf("stats under the override: %v", st)
	}
	// The subnet cap is changed the same way.
	if a := e.admin(t, http.MethodPut, "/admin/free-tier", `{"daily_limit_per_ip":3,"subnet_limit":2}`); a.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusPaymentRequired || !strings.Contains(string(a.body), "the 2 free calls per UTC day of this network") {
		t.Fatalf("subnet cap: %d %s", a.status, a.body)
	}
	// DELETE: back to the Caddyfile (5 per IP): the next call is served.
	a = e.admin(t, http.MethodDelete, "/admin/free-tier", "")
	if m := a.json(t); a.status != http.StatusOK || m["source"] != "config" || m["daily_limit_per_ip"] != 5.0 {
		t.Fatalf("DELETE: %d %s", a.status, a.body)
	}
	if a := e.rpc(t, blockNumber); a.status != http.StatusOK || a.header.Get("X-Tollgate-Free-Remaining") != "2" {
		t.Fatalf("after reverting: %d %v", a.status, a.header)
	}
	if out := e.gw.Output(); !strings.Contains(out, `"action":"set_free_tier"`) || !strings.Contains(out, `"action":"clear_free_tier"`) {
		t.Fatalf("free-tier changes are not logged:\n%s", out)
	}
}

// adminUpstreamCaddyfile: metering off, a breaker that opens after two
// failures and would stay open for an hour unless reset.
const adminUpstreamCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			metering off
			admin_token {env.TG_ADMIN_TOKEN}
			upstream_timeout 400ms
			max_attempts 2
			probe_interval 100ms
			breaker_failures 2
			breaker_open_for 1h
			finality_depth 2
			chain 137 {
				provider alpha %s
				provider beta %s
			}
		}
		respond 404
	}
}
`

// TestAdminUpstreamsAndBreakerReset: the pool snapshot per chain, and a
// reset that puts an upstream whose breaker is open back into service at
// once instead of after breaker_open_for.
func TestAdminUpstreamsAndBreakerReset(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	alpha, beta := faultproxy.New(d.Manifest.Polygon.RPCURL), faultproxy.New(d.Manifest.Polygon.RPCURL)
	t.Cleanup(alpha.Close)
	t.Cleanup(beta.Close)
	gw := caddyrun.Start(t, fmt.Sprintf(adminUpstreamCaddyfile, alpha.URL(), beta.URL()), "TG_ADMIN_TOKEN="+testAdminToken)
	e := &meterEnv{gw: gw}
	e.waitHealthy(t)
	beta.SetDelay(30 * time.Millisecond) // alpha is the faster, preferred provider

	var all struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Name    string `json:"name"`
			Pool    struct {
				Upstreams []struct{ Name, Host, Breaker string } `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	a := e.admin(t, http.MethodGet, "/admin/upstreams", "")
	if err := json.Unmarshal(a.body, &all); a.status != http.StatusOK || err != nil || len(all.Chains) != 5 {
		t.Fatalf("GET /admin/upstreams: %d %v %s", a.status, err, a.body)
	}
	for _, c := range all.Chains {
		if c.ChainID == 137 && (len(c.Pool.Upstreams) != 2 || c.Pool.Upstreams[0].Name != "alpha" || c.Pool.Upstreams[0].Breaker != "closed") {
			t.Fatalf("polygon pool: %+v", c)
		}
	}
	breaker := func() string {
		t.Helper()
		var one struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []struct{ Name, Breaker string } `json:"upstreams"`
			} `json:"pool"`
		}
		a := e.admin(t, http.MethodGet, "/admin/upstreams/137", "")
		if err := json.Unmarshal(a.body, &one); a.status != http.StatusOK || err != nil || one.ChainID != 137 {
			t.Fatalf("GET /admin/upstreams/137: %d %s", a.status, a.body)
		}
		for _, u := range one.Pool.Upstreams {
			if u.Name == "alpha" {
				return u.Breaker
			}
		}
		t.Fatal("no alpha")
		return ""
	}
	wantError(t, "unknown chain", e.admin(t, http.MethodGet, "/admin/upstreams/dogecoin", ""), http.StatusNotFound, "unknown_chain", "")
	wantError(t, "reset unknown upstream", e.admin(t, http.MethodPost, "/admin/upstreams/polygon/gamma/reset", ""), http.StatusNotFound, "unknown_upstream", "")
	wantError(t, "reset unknown chain", e.admin(t, http.MethodPost, "/admin/upstreams/dogecoin/alpha/reset", ""), http.StatusNotFound, "unknown_chain", "")
	wantError(t, "reset by GET", e.admin(t, http.MethodGet, "/admin/upstreams/polygon/alpha/reset", ""), http.StatusMethodNotAllowed, "method_not_allowed", "")
	// Key and free-tier admin need metering.
	wantError(t, "keys without metering", e.admin(t, http.MethodPost, "/admin/keys/"+accounts.NewID()+"/revoke", `{"reason":"x"}`), http.StatusNotFound, "metering_off", "")
	wantError(t, "free tier without metering", e.admin(t, http.MethodGet, "/admin/free-tier", ""), http.StatusNotFound, "metering_off", "")

	// Its calls fail while its health probes pass (so the breaker, not the
	// health check, takes it out); call until the breaker opens.
	alpha.SetMode(faultproxy.Fail502Calls)
	for deadline := time.Now().Add(10 * time.Second); breaker() != "open"; {
		if r := e.rpc(t, getBalance); r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha breaker %q after 10 s of failures", breaker())
		}
	}
	// Alpha is fixed and probes healthy again, but its breaker would keep
	// it out for an hour.
	alpha.SetMode(faultproxy.Pass)
	e.waitHealthy(t)
	if r := e.rpc(t, getBalance); r.header.Get("X-Tollgate-Upstream") != "beta" {
		t.Fatalf("served by %q while alpha's breaker is open", r.header.Get("X-Tollgate-Upstream"))
	}
	a = e.admin(t, http.MethodPost, "/admin/upstreams/polygon/alpha/reset", "")
	if m := a.json(t); a.status != http.StatusOK || m["previous_state"] != "open" || m["state"] != "closed" || m["chain_id"] != 137.0 {
		t.Fatalf("reset: %d %s", a.status, a.body)
	}
	if b := breaker(); b != "closed" {
		t.Fatalf("alpha breaker %q after reset", b)
	}
	if r := e.rpc(t, getBalance); r.status != http.StatusOK || r.header.Get("X-Tollgate-Upstream") != "alpha" {
		t.Fatalf("after reset served by %q", r.header.Get("X-Tollgate-Upstream"))
	}
	if out := gw.Output(); !strings.Contains(out, `"action":"reset_breaker"`) || !strings.Contains(out, "upstream breaker reset by operator") {
		t.Fatalf("the reset is not logged:\n%s", out)
	}
}
