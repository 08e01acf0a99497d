package tollgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The metrics reference (docs/metrics.md) cannot drift from the collectors:
// every metric the code defines — a prometheus *Opts literal (namespace,
// subsystem and name resolved through the file's string constants) or a
// descriptor built from a literal name and help — has a row on the page, and
// every row names a metric the code defines.

type codeMetric struct {
	name, help, where string
}

var metricNameRe = regexp.MustCompile(`^(tollgate|settlementd)_[a-z0-9_]+$`)

func codeMetrics(t *testing.T) map[string]codeMetric {
	t.Helper()
	out := map[string]codeMetric{}
	// The Go files by directory (package), parsed once: a package's string
	// constants (ns, sub, …) may be declared in another of its files.
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
	for _, root := range []string{"caddymodule", "settlementd", "shared", "cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			files[filepath.Dir(path)] = append(files[filepath.Dir(path)], f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, pkg := range files {
		consts := map[string]string{}
		for _, f := range pkg {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := strLit(vs.Values[i]); ok {
								consts[id.Name] = s
							}
						}
					}
				}
			}
		}
		for _, f := range pkg {
			val := func(e ast.Expr) (string, bool) {
				if s, ok := strLit(e); ok {
					return s, true
				}
				if id, ok := e.(*ast.Ident); ok {
					s, ok := consts[id.Name]
					return s, ok
				}
				return "", false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CompositeLit:
					sel, ok := x.Type.(*ast.SelectorExpr)
					if !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") || exprName(sel.X) != "prometheus" {
						return true
					}
					parts := map[string]string{}
					for _, e := range x.Elts {
						kv, ok := e.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						k := exprName(kv.Key)
						if k == "Namespace" || k == "Subsystem" || k == "Name" || k == "Help" {
							v, ok := val(kv.Value)
							if !ok && k != "Help" {
								t.Errorf("%s: a metric's %s is not a constant this test can read", fset.Position(kv.Pos()), k)
							}
							parts[k] = v
						}
					}
					var name []string
					for _, k := range []string{"Namespace", "Subsystem", "Name"} {
						if parts[k] != "" {
							name = append(name, parts[k])
						}
					}
					n := strings.Join(name, "_")
					out[n] = codeMetric{n, parts["Help"], fset.Position(x.Pos()).String()}
				case *ast.CallExpr:
					if len(x.Args) < 2 {
						return true
					}
					name, ok1 := strLit(x.Args[0])
					help, ok2 := strLit(x.Args[1])
					if ok1 && ok2 && metricNameRe.MatchString(name) {
						out[name] = codeMetric{name, help, fset.Position(x.Pos()).String()}
					}
				}
				return true
			})
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d metrics found in the code: its shape or this test's patterns changed", len(out))
	}
	return out
}

func strLit(e ast.Expr) (string, bool) {
	if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	return "", false
}

func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprName(x.X) + "." + x.Sel.Name
	}
	return ""
}

// pageMetrics: the metric names in the first cell of the page's table rows.
func pageMetrics(t *testing.T, page string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	cellRe := regexp.MustCompile("^\\|\\s*`([a-z0-9_]+)`")
	for i, line := range strings.Split(string(raw), "\n") {
		if m := cellRe.FindStringSubmatch(line); m != nil && metricNameRe.MatchString(m[1]) {
			out[m[1]] = i + 1
		}
	}
	return out
}

// TestMetricsReference: docs/metrics.md has a row for every metric the code
// defines and none for a metric it does not.
func TestMetricsReference(t *testing.T) {
	code := codeMetrics(t)
	page := pageMetrics(t, "docs/metrics.md")
	var names []string
	for n := range code {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if _, ok := page[n]; !ok {
			t.Errorf("%s (%s) has no row in docs/metrics.md; its help: %q", n, code[n].where, code[n].help)
		}
	}
	for n, line := range page {
		if _, ok := code[n]; !ok {
			t.Errorf("docs/metrics.md:%d documents %s, which no collector defines", line, n)
		}
	}
	if os.Getenv("TOLLGATE_PRINT_METRICS") != "" {
		for _, n := range names {
			t.Logf("| `%s` | %s | %s |", n, code[n].help, code[n].where)
		}
	}
}

// TestMetricsReferenceCheckFails: the page's rows are what the check reads —
// a removed row and an added unknown one are both seen.
func TestMetricsReferenceCheckFails(t *testing.T) {
	raw, err := os.ReadFile("docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	code := codeMetrics(t)
	row := regexp.MustCompile("(?m)^\\| `settlementd_leader` \\|.*\\n")
	if !row.Match(raw) || code["settlementd_leader"].name == "" {
		t.Fatal("settlementd_leader's row or collector is gone: pick another metric for this test")
	}
	p := filepath.Join(t.TempDir(), "metrics.md")
	if err := os.WriteFile(p, row.ReplaceAll(raw, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := pageMetrics(t, p)["settlementd_leader"]; ok {
		t.Fatal("a removed row is still read")
	}
	if err := os.WriteFile(p, append(raw, "| `settlementd_surge_total` | made up | x |\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := pageMetrics(t, p)["settlementd_surge_total"]; !ok || code["settlementd_surge_total"].name != "" {
		t.Fatal("an added row for an unknown metric is not read")
	}
}
