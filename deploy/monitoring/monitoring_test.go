// Package monitoring holds the operator's monitoring: the Grafana dashboard
// (grafana/tollgate.json) and the Prometheus configuration and alerting
// rules (prometheus/). Its tests check them with the real tools and the
// real binaries: promtool (Debian's prometheus package) parses the rules,
// runs their unit tests and parses every dashboard query, and every metric
// name a query or rule uses must be on the live /metrics of our Caddy and
// settlementd, running as the local stack with traffic.
package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/internal/walkthrough"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

const (
	dashboardFile = "grafana/tollgate.json"
	alertsFile    = "prometheus/alerts.yml"
)

// promtool is $TOLLGATE_PROMTOOL or promtool on PATH (make test installs
// Debian's prometheus package when it is missing).
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TOLLGATE_PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		if testenv.Required() {
			t.Fatal("promtool is required (make test installs Debian's prometheus package when it is missing)")
		}
		t.Skip("no promtool")
	}
	return p
}

func runPromtool(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The rules parse, the sample configuration loads them, and the rules' unit
// tests (alerts_test.yml: which alert fires on which series, with which
// text) pass.
func TestAlertRules(t *testing.T) {
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		{"check", "config", "prometheus.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		out, err := runPromtool(t, "prometheus", args...)
		if err != nil || !strings.Contains(out, "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every rule has a severity the routing can use, a summary, and no two
// alerts share a name.
func TestAlertRulesShape(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range alertRules(t) {
		if seen[r.Alert] {
			t.Errorf("alert %s is defined twice", r.Alert)
		}
		seen[r.Alert] = true
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("alert %s: severity %q, want critical or warning", r.Alert, s)
		}
		if r.Annotations["summary"] == "" {
			t.Errorf("alert %s has no summary", r.Alert)
		}
	}
	// The conditions the issue names are all covered.
	for _, want := range []string{"TollgateChainAllUpstreamsDown", "SettlementdIngestLagging", "SettlementdSettlementStalled",
		"SettlementdSettlementFailing", "SettlementdInsolvent", "SettlementdClaimsPaused", "TollgateNodeQuarantined"} {
		if !seen[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatal("no rules")
	}
	return out
}

// query is one PromQL expression of the dashboard, where it is.
type query struct{ where, expr string }

type panel struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's panels
}

// dashboardQueries reads every target's expression and the metrics the
// template variables ask label_values of.
func dashboardQueries(t *testing.T) (queries []query, variableMetrics []string) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" {
		t.Error("the dashboard has no uid (provisioning keys dashboards by it)")
	}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %d %q has no query", p.ID, p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("panel %d %q, target %s: empty expression", p.ID, p.Title, tg.RefID)
				}
				queries = append(queries, query{fmt.Sprintf("panel %d %q target %s", p.ID, p.Title, tg.RefID), tg.Expr})
			}
		}
	}
	walk(d.Panels)
	labelValues := regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(metric, label)", v.Name, v.Definition)
			continue
		}
		variableMetrics = append(variableMetrics, m[1])
	}
	if len(queries) < 20 {
		t.Fatalf("only %d queries in the dashboard", len(queries))
	}
	return queries, variableMetrics
}

// grafanaVars are the dashboard's variables, replaced by what Grafana
// would put there before Prometheus parses the query.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "${chain}", ".*", "$chain", ".*")

// checkPromQL parses every expression with Prometheus' own parser: each
// becomes a recording rule of a rules file that promtool checks.
func checkPromQL(t *testing.T, qs []query) (string, error) {
	t.Helper()
	type rec struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rec
	for i, q := range qs {
		if strings.Contains(grafanaVars.Replace(q.expr), "$") {
			return "", fmt.Errorf("%s: an unknown Grafana variable in %q", q.where, q.expr)
		}
		rules = append(rules, rec{fmt.Sprintf("dashboard:query_%d", i), grafanaVars.Replace(q.expr)})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return runPromtool(t, ".", "check", "rules", path)
}

// Every query of the dashboard parses as PromQL (after Grafana's variables),
// and a typo would not: a query with one is refused by the same check.
func TestDashboardQueriesParse(t *testing.T) {
	qs, _ := dashboardQueries(t)
	if out, err := checkPromQL(t, qs); err != nil || !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", len(qs))) {
		t.Fatalf("the dashboard's queries do not all parse: %v\n%s", err, out)
	}
	broken := []query{{"typo", strings.Replace(qs[0].expr, "(", "((", 1)}}
	if out, err := checkPromQL(t, broken); err == nil {
		t.Fatalf("a query with an unbalanced parenthesis passed the check:\n%s", out)
	}
}

var (
	stringLit  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	matchers   = regexp.MustCompile(`\{[^{}]*\}`)
	ranges     = regexp.MustCompile(`\[[^\[\]]*\]`)
	labelLists = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	ident      = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true,
		"on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true, "e": true}
)

// metricNames are the metric names an expression selects: what is left of
// the identifiers once strings, label matchers, ranges and label lists are
// cut out, and function or aggregation names (an identifier followed by
// "(") and keywords are skipped. promtool has parsed the expression before,
// so what remains is a selector.
func metricNames(expr string) []string {
	e := stringLit.ReplaceAllString(expr, `""`)
	e = matchers.ReplaceAllString(e, " ")
	e = ranges.ReplaceAllString(e, " ")
	e = labelLists.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range ident.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		if loc[0] > 0 && (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9' || e[loc[0]-1] == '.') {
			continue // the exponent or suffix of a number (1e6)
		}
		if keywords[strings.ToLower(name)] || strings.HasPrefix(strings.TrimLeft(e[loc[1]:], " \t\n"), "(") {
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (chain_id) (rate(tollgate_gateway_rpc_requests_total{chain_id=~".*",outcome="ok"}[1m])) / 1e6`: {"tollgate_gateway_rpc_requests_total"},
		`histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))`:                                           {"x_bucket"},
		`time() - max by (job) (a) > 3 and on (job) b{c="d(e)"} unless sum(c) without (f)`:                     {"a", "b", "c"},
		`up{job="settlementd"} == 0`: {"up"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}

// referencedMetrics: every metric name the dashboard and the rules use, with
// where it is used.
func referencedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	qs, vars := dashboardQueries(t)
	for _, r := range alertRules(t) {
		qs = append(qs, query{"alert " + r.Alert, r.Expr})
	}
	refs := map[string][]string{}
	for _, q := range qs {
		names := metricNames(grafanaVars.Replace(q.expr))
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", q.where, q.expr)
		}
		for _, n := range names {
			refs[n] = append(refs[n], q.where)
		}
	}
	for _, m := range vars {
		refs[m] = append(refs[m], "a dashboard variable")
	}
	return refs
}

// synthesized are series Prometheus makes itself, not a binary.
var synthesized = map[string]bool{"up": true}

// scrape reads a /metrics page with the exposition-format parser and
// returns every series name on it (a histogram's _bucket, _sum, _count).
func scrape(url string) (map[string]bool, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s %s", url, resp.Status, b)
	}
	// Legacy names: what Prometheus accepts by default from a text page.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	names := map[string]bool{}
	for name, f := range fams {
		if len(f.GetMetric()) == 0 {
			continue
		}
		names[name] = true
		switch f.GetType().String() {
		case "HISTOGRAM":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "SUMMARY":
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names, nil
}

func binary(t *testing.T, env, pkg string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// Every metric the dashboard and the alert rules use is exported by the
// binaries: the local stack (dev chains, settlementd with every job on, our
// Caddy with the root Caddyfile) runs, gets traffic — anonymous calls and a
// batch on two chains, and one stream entry no
// decoder knows, which settlementd parks as a dead letter — and both live
// /metrics pages are read until every name is there. Labelled series appear
// only after their first event, so the wait is for the traffic and the jobs'
// first runs, bounded.
func TestDashboardAndAlertMetricsAreExported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the local stack")
	}
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn := testenv.Postgres(t)
	refs := referencedMetrics(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sc := walkthrough.StackConfig{
		Caddy:       caddyrun.Binary(t),
		Settlementd: binary(t, "TOLLGATE_SETTLEMENTD_BIN", "./settlementd"),
		Devchain:    binary(t, "TOLLGATE_DEVCHAIN_BIN", "./contracts/devchain"),
		RepoRoot:    root, RunDir: t.TempDir(), RedisURL: os.Getenv("REDIS_URL"), DatabaseURL: dsn, Prefix: prefix,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	st, err := walkthrough.StartStack(ctx, sc, &log)
	if err != nil {
		t.Fatalf("start the stack: %v\n%s", err, log.String())
	}
	t.Cleanup(st.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []string{"settlementd", "caddy"} {
				t.Logf("--- %s.log (tail) ---\n%s", p, st.Log(p))
			}
		}
	})

	// Traffic: single calls and a batch on both chains (requests, calls,
	// latency, cache lookups, metering decisions, revenue events).
	post := func(path, body string) {
		resp, err := http.Post(st.Gateway+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	for _, chain := range []string{"/rpc", "/rpc/8453"} {
		post(chain, `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)
		post(chain, `{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["0x1",false]}`)
		post(chain, `[{"jsonrpc":"2.0","id":3,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":4,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}]`)
	}
	// A stream entry of a type no build knows: parked in dead_letters.
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "events",
		Values: []any{"t", "no_such_type", "v", events.Version, "d", "{}"}}).Err(); err != nil {
		t.Fatal(err)
	}

	sources := map[string]string{"gateway (our Caddy)": st.Admin + "/metrics", "settlementd": st.Settlementd + "/metrics"}
	var missing []string
	exported := map[string]string{}
	deadline := time.Now().Add(90 * time.Second)
	for {
		missing = missing[:0]
		for name, url := range sources {
			names, err := scrape(url)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for n := range names {
				exported[n] = name
			}
		}
		for n := range refs {
			if exported[n] == "" && !synthesized[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond): // poll interval, not a synchronisation
		}
	}
	sort.Strings(missing)
	for _, n := range missing {
		t.Errorf("%s is used (%s) but neither binary exports it", n, strings.Join(refs[n], "; "))
	}
	if len(missing) == 0 {
		t.Logf("all %d metric names the dashboard and the rules use are on the live /metrics pages", len(refs))
	}
}
