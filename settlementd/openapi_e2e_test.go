package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/tollgate-rpc/tollgate/docs"
)

// Every answer the end-to-end test receives is recorded, so the settlementd
// answers can be checked against docs/openapi.yaml afterwards: the document
// must describe what the running API really returns, error bodies included.
var (
	answersMu sync.Mutex
	answers   []recordedAnswer
)

type recordedAnswer struct {
	method, url string
	status      int
	contentType string
	body        []byte
}

func recordAnswer(method, rawURL string, a e2eAnswer) {
	answersMu.Lock()
	defer answersMu.Unlock()
	answers = append(answers, recordedAnswer{method, rawURL, a.status, a.header.Get("Content-Type"), a.body})
}

// checkAnswersAgainstOpenAPI validates every recorded JSON answer from base
// (settlementd's address) against the documented response schema of its
// path, method and status. A path or status the document does not describe
// is a failure too.
func checkAnswersAgainstOpenAPI(t *testing.T, base string) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	type tmpl struct {
		re   *regexp.Regexp
		item *openapi3.PathItem
		path string
	}
	var paths []tmpl
	for p, item := range doc.Paths.Map() {
		re := "^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$"
		paths = append(paths, tmpl{regexp.MustCompile(re), item, p})
	}
	answersMu.Lock()
	defer answersMu.Unlock()
	checked := map[string]bool{}
	for _, a := range answers {
		if !strings.HasPrefix(a.url, base) || !strings.Contains(a.contentType, "json") {
			continue
		}
		u, _ := url.Parse(a.url)
		var item *openapi3.PathItem
		var path string
		for _, p := range paths {
			if p.re.MatchString(u.Path) && (item == nil || !strings.Contains(p.path, "{")) {
				item, path = p.item, p.path
			}
		}
		if item == nil {
			t.Errorf("%s %s: path not in docs/openapi.yaml", a.method, u.Path)
			continue
		}
		op := item.GetOperation(a.method)
		if op == nil {
			t.Errorf("%s %s: method not documented", a.method, path)
			continue
		}
		resp := op.Responses.Status(a.status)
		if resp == nil {
			resp = op.Responses.Default()
		}
		if resp == nil || resp.Value == nil || resp.Value.Content.Get("application/json") == nil {
			t.Errorf("%s %s: status %d not documented (body %s)", a.method, path, a.status, a.body)
			continue
		}
		var v any
		if err := json.Unmarshal(a.body, &v); err != nil {
			t.Errorf("%s %s: not JSON: %s", a.method, path, a.body)
			continue
		}
		schema := resp.Value.Content.Get("application/json").Schema.Value
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s %s %d does not match docs/openapi.yaml: %v\n%s", a.method, path, a.status, err, a.body)
			continue
		}
		checked[a.method+" "+path+" "+strconv.Itoa(a.status)] = true
	}
	if len(checked) < 10 {
		t.Errorf("only %d documented answers were checked: %v", len(checked), checked)
	}
	t.Logf("%d distinct settlementd answers validated against docs/openapi.yaml", len(checked))
	_ = http.MethodGet
}
