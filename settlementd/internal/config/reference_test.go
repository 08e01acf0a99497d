package config

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// settlementd's settings reference cannot drift: the variables Load reads are
// recorded from the getenv it is given (every one is asked for, set or not),
// and docs/configuration.md's settlementd table must name each of them, and
// name no variable Load does not read.

const referencePage = "../../../docs/configuration.md"

// readVars returns the environment variables Load asks for, without the
// NAME_FILE twin every variable has.
func readVars(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	get := func(k string) string {
		seen[k] = true
		if k == "DATABASE_URL" {
			return "postgres://tollgate@127.0.0.1:1/tollgate" // required; never dialled by Load
		}
		return ""
	}
	if _, err := Load(nil, get, io.Discard); err != nil {
		t.Fatalf("Load with defaults: %v", err)
	}
	var out []string
	for k := range seen {
		if !seen[k+"_FILE"] {
			continue // a NAME_FILE twin, or not a setting
		}
		if stem, ok := strings.CutSuffix(k, "_FILE"); ok && seen[stem] {
			continue // the twin of stem, itself asked for its own twin
		}
		if k == "GOGC" {
			continue // Go's own variable; the page documents TOLLGATE_GC_PERCENT beside it
		}
		out = append(out, k)
	}
	slices.Sort(out)
	if len(out) < 50 {
		t.Fatalf("only %d variables recorded: Load's shape or this test changed", len(out))
	}
	return out
}

// documentedVars returns the variables of the settlementd table's env column.
func documentedVars(t *testing.T, page string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n## settlementd\n")
	if i < 0 {
		t.Fatalf("%s has no \"## settlementd\" section", page)
	}
	text = text[i+1:]
	if j := strings.Index(text[3:], "\n## "); j >= 0 {
		text = text[:j+3] // up to the next section
	}
	out := map[string]bool{}
	nameRe := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	col := -1 // the env column of the table being read
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			col = -1
			continue
		}
		cells := strings.Split(line, "|")
		if col < 0 {
			col = slices.IndexFunc(cells, func(c string) bool { return strings.TrimSpace(c) == "env" })
			continue // the header; a table without an env column keeps col -1
		}
		if col >= len(cells) {
			continue
		}
		for _, m := range nameRe.FindAllStringSubmatch(cells[col], -1) {
			out[m[1]] = true
		}
	}
	return out
}

// TestSettlementdReference: every variable settlementd reads is in the
// reference's table, and the table names none it does not read.
func TestSettlementdReference(t *testing.T) {
	vars := readVars(t)
	doc := documentedVars(t, referencePage)
	for _, v := range vars {
		if !doc[v] {
			t.Errorf("settlementd reads %s, but docs/configuration.md's settlementd table does not document it", v)
		}
	}
	for v := range doc {
		if !slices.Contains(vars, v) {
			t.Errorf("docs/configuration.md's settlementd table documents %s, which settlementd does not read", v)
		}
	}
	t.Logf("%d variables, %d documented", len(vars), len(doc))
}

// TestSettlementdReferenceCheckFails: a table without a variable's row, or
// with a row for a variable settlementd does not read, is seen.
func TestSettlementdReferenceCheckFails(t *testing.T) {
	raw, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	vars := readVars(t)
	dir := t.TempDir()
	read := func(s string) map[string]bool {
		p := dir + "/page.md"
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return documentedVars(t, p)
	}
	row := regexp.MustCompile("(?m)^\\| `TOLLGATE_CLAIM_VALIDITY` \\|.*\\n")
	if !row.MatchString(string(raw)) || !slices.Contains(vars, "TOLLGATE_CLAIM_VALIDITY") {
		t.Fatal("TOLLGATE_CLAIM_VALIDITY's row or variable is gone: pick another for this test")
	}
	if read(row.ReplaceAllString(string(raw), ""))["TOLLGATE_CLAIM_VALIDITY"] {
		t.Fatal("removing TOLLGATE_CLAIM_VALIDITY's row went unnoticed")
	}
	added := row.ReplaceAllStringFunc(string(raw), func(r string) string { return r + "| `TOLLGATE_SURGE` | 2 | made up |\n" })
	if !read(added)["TOLLGATE_SURGE"] || slices.Contains(vars, "TOLLGATE_SURGE") {
		t.Fatal("a row for a variable settlementd does not read went unnoticed")
	}
}
