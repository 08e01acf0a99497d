package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgate-rpc/tollgate/docs"
)

// TestHealthMatchesOpenAPI: /health answers (healthy and not) validate
// against docs/openapi.yaml.
func TestHealthMatchesOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Value("/health").Get
	for _, down := range []bool{false, true} {
		s := New("v1", Checks{DB: func(context.Context) error {
			if down {
				return errors.New("down")
			}
			return nil
		}}, prometheus.NewRegistry(), nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
		want := http.StatusOK
		if down {
			want = http.StatusServiceUnavailable
		}
		if rec.Code != want {
			t.Fatalf("down=%v: %d", down, rec.Code)
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		schema := op.Responses.Status(rec.Code).Value.Content.Get("application/json").Schema.Value
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Fatalf("down=%v: /health does not match docs/openapi.yaml: %v\n%s", down, err, rec.Body)
		}
	}
}
