package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The configuration reference cannot drift from the parser: the options the
// Caddyfile parser accepts are read from its source (the keys of its option
// tables and the literals its switches and comparisons match), the options
// the reference documents from the ```caddyfile blocks of
// docs/configuration.md, and the two sets must be equal. Add an option to the
// parser without its entry, or remove an entry, and TestConfigReference fails.
// The flat spellings of earlier versions (flat) are deprecated and left out.

const referencePage = "../../docs/configuration.md"

// parserOptions returns the accepted options as dotted paths:
// tollgate.<opt>, tollgate.<section>.<opt>, tollgate.chain.<opt>,
// tollgate.chain.provider.<opt>, tollgate.chain.method.<setting>.
func parserOptions(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	for _, file := range []string{"caddyfile.go", "websocket.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	fn := func(name string) *ast.FuncDecl {
		if funcs[name] == nil {
			t.Fatalf("the Caddyfile parser has no function %s: this test reads its options from it", name)
		}
		return funcs[name]
	}
	lit := func(e ast.Expr) (string, bool) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			s, err := strconv.Unquote(b.Value)
			return s, err == nil
		}
		return "", false
	}
	// caseLits: the case literals of every switch in fn whose tag is the
	// expression tag (printed as source, e.g. "opt", "key", "args[1]").
	caseLits := func(fd *ast.FuncDecl, tag string) []string {
		var out []string
		ast.Inspect(fd, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok || sw.Tag == nil || exprString(sw.Tag) != tag {
				return true
			}
			for _, s := range sw.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if v, ok := lit(e); ok {
						out = append(out, v)
					}
				}
			}
			return true
		})
		return out
	}
	// mapKeys: the string keys of the map literals in fn.
	mapKeys := func(fd *ast.FuncDecl) []string {
		var out []string
		ast.Inspect(fd, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if _, isMap := cl.Type.(*ast.MapType); !isMap {
				return true
			}
			for _, e := range cl.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if v, ok := lit(kv.Key); ok {
						out = append(out, v)
					}
				}
			}
			return true
		})
		return out
	}
	// valCompares: literals compared with d.Val() in fn, by the number of
	// for loops around the comparison (1: the chain block, 2: a provider's).
	valCompares := func(fd *ast.FuncDecl) map[int][]string {
		out := map[int][]string{}
		var walk func(n ast.Node, loops int)
		walk = func(n ast.Node, loops int) {
			ast.Inspect(n, func(m ast.Node) bool {
				if m == n {
					return true
				}
				switch x := m.(type) {
				case *ast.ForStmt:
					walk(x.Body, loops+1)
					return false
				case *ast.BinaryExpr:
					if (x.Op == token.EQL || x.Op == token.NEQ) && exprString(x.X) == "d.Val()" {
						if v, ok := lit(x.Y); ok {
							out[loops] = append(out[loops], v)
						}
					}
				}
				return true
			})
		}
		walk(fd.Body, 0)
		return out
	}

	opts := map[string]bool{}
	add := func(prefix string, names ...string) {
		for _, n := range names {
			opts[prefix+n] = true
		}
	}
	add("tollgate.", caseLits(fn("UnmarshalCaddyfile"), "opt")...)
	set := fn("set")
	for _, k := range append(mapKeys(set), caseLits(set, "key")...) {
		section, opt, ok := strings.Cut(k, ".")
		if !ok {
			continue // the rate table's keys repeat names its cases hold
		}
		if section == "" {
			add("tollgate.", opt)
		} else {
			add("tollgate."+section+".", opt)
		}
	}
	add("tollgate.websocket.", mapKeys(fn("parseWebSocket"))...)
	add("tollgate.chain.", caseLits(fn("parseChainSpec"), "opt")...)
	vc := valCompares(fn("parseChain"))
	add("tollgate.chain.", vc[1]...)
	add("tollgate.chain.provider.", vc[2]...)
	add("tollgate.chain.method.", caseLits(fn("parseMethod"), "args[1]")...)
	if len(opts) < 60 {
		t.Fatalf("only %d options read from the parser: its shape or this test's patterns changed", len(opts))
	}
	return opts
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprString(x.Fun) + "()"
	case *ast.IndexExpr:
		return exprString(x.X) + "[" + exprString(x.Index) + "]"
	case *ast.BasicLit:
		return x.Value
	}
	return "?"
}

var commentRe = regexp.MustCompile(`(^|\s)#.*$`)

// documentedOptions reads the options of every `tollgate { … }` block in the
// ```caddyfile blocks of the reference page, as dotted paths, with the line
// that documents each.
func documentedOptions(t *testing.T, page string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	in := false
	var stack []string
	for i, line := range strings.Split(string(raw), "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			in = !in && strings.TrimPrefix(trim, "```") == "caddyfile"
			stack = nil
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(commentRe.ReplaceAllString(line, ""))
		if len(f) == 0 {
			continue
		}
		if f[0] == "}" {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		opens := f[len(f)-1] == "{"
		if len(stack) > 0 && stack[0] == "tollgate" {
			path := strings.Join(stack, ".") + "." + f[0]
			if stack[len(stack)-1] == "chain" && f[0] == "method" && len(f) > 2 {
				out[path] = i + 1 // the method line itself
				path += "." + f[2]
			}
			out[path] = i + 1
		}
		if opens {
			if len(stack) == 0 && f[0] != "tollgate" {
				stack = append(stack, "site") // a site block around the directive
			} else {
				stack = append(stack, f[0])
			}
			if f[0] == "tollgate" {
				stack = []string{"tollgate"}
			}
		}
	}
	return out
}

// TestConfigReference: docs/configuration.md documents every option the
// Caddyfile parser accepts, and no option the parser does not know.
func TestConfigReference(t *testing.T) {
	code := parserOptions(t)
	doc := documentedOptions(t, referencePage)
	var missing, unknown []string
	for o := range code {
		if _, ok := doc[o]; !ok {
			missing = append(missing, o)
		}
	}
	for o, line := range doc {
		if !code[o] {
			unknown = append(unknown, o+" (line "+strconv.Itoa(line)+")")
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	for _, o := range missing {
		t.Errorf("the parser accepts %s, but docs/configuration.md does not document it", o)
	}
	for _, o := range unknown {
		t.Errorf("docs/configuration.md documents %s, which the parser does not accept", o)
	}
	t.Logf("%d options documented and accepted", len(code))
}

// TestConfigReferenceCheckFails: the check above fails both ways — a page
// without an option's entry, and a page with an entry the parser does not know.
func TestConfigReferenceCheckFails(t *testing.T) {
	raw, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	code := parserOptions(t)
	dir := t.TempDir()
	write := func(s string) map[string]int {
		p := dir + "/page.md"
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return documentedOptions(t, p)
	}
	// Remove one entry: heatmap_price.
	without := regexp.MustCompile(`(?m)^\s*heatmap_price\s.*\n`).ReplaceAllString(string(raw), "")
	if doc := write(without); doc["tollgate.intelligence.heatmap_price"] != 0 || !code["tollgate.intelligence.heatmap_price"] {
		t.Fatalf("removing heatmap_price's entry went unnoticed")
	}
	// Add an undocumented one.
	with := strings.Replace(string(raw), "    intelligence {\n", "    intelligence {\n        surge_price 2\n", 1)
	if doc := write(with); doc["tollgate.intelligence.surge_price"] == 0 || code["tollgate.intelligence.surge_price"] {
		t.Fatalf("an entry the parser does not know went unnoticed")
	}
}

// TestDocumentedOptionsAreParsed: every top-level and section option the
// reference documents is one the real parser recognises (it may still want
// other arguments than none).
func TestDocumentedOptionsAreParsed(t *testing.T) {
	for o := range documentedOptions(t, referencePage) {
		parts := strings.Split(o, ".")
		var src string
		switch {
		case len(parts) == 2 && !slices.Contains([]string{"upstreams", "payments", "intelligence", "metering", "websocket", "chain"}, parts[1]):
			src = "tollgate {\n" + parts[1] + "\n}"
		case len(parts) == 3 && slices.Contains([]string{"upstreams", "payments", "intelligence", "metering", "websocket"}, parts[1]):
			src = "tollgate {\n" + parts[1] + " {\n" + parts[2] + "\n}\n}"
		default:
			continue
		}
		_, err := parse(t, src)
		if err != nil && strings.Contains(err.Error(), "unrecognized") {
			t.Errorf("%s: the parser does not know it: %v", o, err)
		}
	}
}
