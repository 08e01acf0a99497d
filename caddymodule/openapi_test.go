package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/tollgate-rpc/tollgate/caddymodule"
	"github.com/tollgate-rpc/tollgate/docs"
)

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	file, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, docs.OpenAPI) {
		t.Fatal("the embedded OpenAPI document differs from docs/openapi.yaml")
	}
	doc, err := openapi3.NewLoader().LoadFromData(file)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("docs/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// gatewayOps lists the documented gateway operations: (method, documented
// path, route-table path).
func gatewayOps(doc *openapi3.T) [][3]string {
	var out [][3]string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-server"] != "gateway" {
				continue
			}
			route := path
			if r, ok := op.Extensions["x-route"].(string); ok {
				route = r
			}
			out = append(out, [3]string{method, path, route})
		}
	}
	return out
}

// checkBody validates an answer's body against the documented response of
// (method, path, status).
func checkBody(t *testing.T, doc *openapi3.T, method, path string, a answer) {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("%s %s is not documented", method, path)
	}
	resp := item.GetOperation(method).Responses.Status(a.status)
	if resp == nil || resp.Value == nil {
		t.Fatalf("%s %s: status %d is not documented (body %s)", method, path, a.status, a.body)
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("%s %s %d: no JSON schema documented", method, path, a.status)
	}
	var v any
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", method, path, a.body)
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s %s %d: body does not match docs/openapi.yaml: %v\n%s", method, path, a.status, err, a.body)
	}
}

// TestOpenAPIDocument: docs/openapi.yaml is a valid OpenAPI 3.1 document,
// served as is at /openapi.yaml; it documents every gateway route and each
// documented gateway path is answered by the gateway (not passed on); the
// bodies of the endpoints exercised here validate against it.
func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	e := startMetered(t, meterOpts{free: 10, subnet: 100, adminToken: "an-admin-token-for-tests-0123456789"})

	a := e.do(t, http.MethodGet, "/openapi.yaml", "")
	if a.status != http.StatusOK || !bytes.Equal(a.body, docs.OpenAPI) || a.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("/openapi.yaml: %d %q", a.status, a.header.Get("Content-Type"))
	}

	ops := gatewayOps(doc)
	documented := map[string]bool{}
	for _, op := range ops {
		documented[op[0]+" "+op[2]] = true
		got := e.do(t, op[0], concretePath(op[1]), "", "X-Admin-Token: wrong")
		if fellThrough(got) || got.status == http.StatusNotFound {
			t.Errorf("%s %s is documented for the gateway but the gateway answers %d (passed on: %v)", op[0], op[1], got.status, fellThrough(got))
		}
	}
	for _, rt := range caddymodule.RouteTable() {
		if !documented[rt[0]+" "+rt[1]] {
			t.Errorf("gateway route %s %s is not in docs/openapi.yaml", rt[0], rt[1])
		}
	}
	// settlementd's documented paths are not the gateway's: it passes them on.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-server"] == "settlementd" && !fellThrough(e.do(t, method, path, "")) {
				t.Errorf("%s %s is documented for settlementd but the gateway answers it", method, path)
			}
		}
	}

	// Bodies against the document.
	check := func(method, path, query, body string, want int, headers ...string) answer {
		t.Helper()
		a := e.do(t, method, concretePath(path)+query, body, headers...)
		if a.status != want {
			t.Fatalf("%s %s%s: %d, want %d: %s", method, path, query, a.status, want, a.body)
		}
		checkBody(t, doc, method, path, a)
		return a
	}
	check(http.MethodGet, "/.well-known/service.json", "", "", 200)
	check(http.MethodGet, "/v1/intelligence", "", "", 200)
	check(http.MethodGet, "/rpc/health", "", "", 200)
	check(http.MethodGet, "/rpc/stats/{chain}", "", "", 200)
	check(http.MethodGet, "/stats/free-tier", "", "", 200)
	check(http.MethodPost, "/rpc", "", blockNumber, 200)
	check(http.MethodPost, "/rpc", "", batchOf(2), 200)
	check(http.MethodPost, "/rpc", "", batchOf(20), 402) // more than the free tier of 10 allows
	check(http.MethodPost, "/rpc/{chain}", "", batchOf(20), 402)
	check(http.MethodPost, "/v1/machine/register", "", `{"label":"openapi"}`, 201)
	ka := check(http.MethodPost, "/api/keys", "", `{"label":"openapi","tier":"free","email":"a@example.com","email_consent":true}`, 201)
	var kc struct{ APIKey, KeyID string }
	_ = json.Unmarshal(bytes.ReplaceAll(bytes.ReplaceAll(ka.body, []byte("api_key"), []byte("APIKey")), []byte("key_id"), []byte("KeyID")), &kc)
	k := "X-API-Key: " + kc.APIKey
	check(http.MethodPost, "/api/keys", "", `{"label":"x","tier":"gold"}`, 400)
	check(http.MethodGet, "/api/keys/usage", "", "", 200, k)
	check(http.MethodGet, "/api/keys/usage", "", "", 401)
	check(http.MethodGet, "/credits/initiate", "?amount=5", "", 200, k)
	check(http.MethodGet, "/credits/deposit/initiate", "?amount=5&key_id="+kc.KeyID, "", 200)
	check(http.MethodGet, "/credits/initiate", "?amount=0.5", "", 400, k)
	const hm = "/v1/intelligence/funding-rate-heatmap"
	check(http.MethodGet, hm, "", "", 402, k)
	e.credit(t, kc.KeyID, 10_000)
	check(http.MethodGet, hm, "", "", 503, k) // nothing published yet
	publishHeatmap(t, e, time.Now().UTC(), true)
	check(http.MethodGet, hm, "?window=24h&symbols=ETHUSDT,BTCUSDT", "", 200, k)
	good := check(http.MethodGet, hm, "?window=7d", "", 400, k)
	// The validator does reject what the document does not allow.
	bad := answer{status: 200, body: bytes.Replace(good.body, []byte(`"error"`), []byte(`"metric"`), 1)}
	schema := doc.Paths.Value(hm).Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	var v any
	_ = json.Unmarshal(bad.body, &v)
	if schema.VisitJSON(v, openapi3.EnableJSONSchema2020()) == nil {
		t.Fatal("an error body validated as a heatmap")
	}
	check(http.MethodGet, "/v1/intelligence", "", "", 200)
	if !slices.ContainsFunc(ops, func(op [3]string) bool { return strings.HasPrefix(op[1], "/admin/") }) {
		t.Fatal("no admin operations documented")
	}
}
