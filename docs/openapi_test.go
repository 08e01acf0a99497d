package docs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/tollgate-rpc/tollgate/docs"
)

// TestOpenAPIShape: the document is valid OpenAPI 3.1, every operation says
// which process answers it and documents a success answer, and the API
// surface the gateway and settlementd serve is covered.
func TestOpenAPIShape(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %s", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = true
			if s := op.Extensions["x-server"]; s != "gateway" && s != "settlementd" {
				t.Errorf("%s %s: x-server %v", method, path, s)
			}
			ok := false
			for code := range op.Responses.Map() {
				ok = ok || strings.HasPrefix(code, "2")
			}
			if !ok || op.Summary == "" {
				t.Errorf("%s %s: no summary or no 2xx answer", method, path)
			}
		}
	}
	for _, want := range []string{
		"POST /rpc", "POST /rpc/{chain}", "GET /rpc/health", "GET /rpc/stats/{chain}", "POST /api/keys", "GET /api/keys/usage",
		"POST /v1/machine/register", "GET /credits/initiate", "GET /credits/deposit/initiate", "GET /stats/free-tier",
		"GET /.well-known/service.json", "GET /v1/intelligence", "GET /v1/intelligence/funding-rate-heatmap", "GET /openapi.yaml",
		"GET /health", "GET /api/status", "POST /api/auth/challenge", "POST /api/auth/login", "POST /api/nodes/register",
		"GET /api/nodes", "DELETE /api/nodes/{id}", "GET /api/nodes/{id}/earnings", "POST /api/nodes/{id}/claim", "GET /api/admin/economics", "GET /api/admin/settlement",
		"GET /api/keys/history", "GET /api/keys/credits", "GET /api/nodes/overview", "GET /api/nodes/{id}/epochs",
	} {
		if !ops[want] {
			t.Errorf("%s is not documented", want)
		}
	}
}
