package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The error body is byte for byte what both binaries wrote before they
// shared this writer (map-encoded: "code" before "message", HTML escaped),
// with the newline settlementd's json.Encoder ended it with.
func TestErrorBody(t *testing.T) {
	w := httptest.NewRecorder()
	Error(w, http.StatusPaymentRequired, "insufficient_balance", `top up <here> & "now"`)
	want := `{"error":{"code":"insufficient_balance","message":"top up \u003chere\u003e \u0026 \"now\""}}` + "\n"
	if w.Code != 402 || w.Body.String() != want {
		t.Fatalf("%d %q, want %q", w.Code, w.Body.String(), want)
	}
	if w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", w.Header())
	}
}

func TestJSON(t *testing.T) {
	w := httptest.NewRecorder()
	JSON(w, http.StatusOK, map[string]any{"b": 1, "a": []int{2}})
	if w.Code != 200 || w.Body.String() != `{"a":[2],"b":1}`+"\n" {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	// A value that cannot be encoded is a whole JSON 500, not a 200 with a
	// broken body.
	w = httptest.NewRecorder()
	JSON(w, http.StatusOK, map[string]any{"f": func() {}})
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"code":"internal"`) || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
}

func TestAdminToken(t *testing.T) {
	const tok = "s3cret-admin-token"
	a := NewAdminToken(tok)
	if !a.Enabled() || !a.Match(tok) {
		t.Fatal("the configured token is refused")
	}
	for _, bad := range []string{"", "s3cret-admin-toke", tok + "x", strings.ToUpper(tok), "s3cret-admin-tokeN", " " + tok} {
		if a.Match(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
	// No token configured: admin is off, and nothing matches — not even the
	// empty header, whose sum is a real value.
	var off AdminToken
	for _, z := range []AdminToken{off, NewAdminToken("")} {
		if z.Enabled() || z.Match("") || z.Match(tok) {
			t.Fatalf("unconfigured token %+v enabled or matching", z)
		}
	}
}
