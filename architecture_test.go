package tollgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tollgate-rpc/tollgate"

// goPackage is one directory of Go code: its package name, the names it
// declares (functions, types, vars, consts, and methods as Type.Method) and
// what its non-test files import.
type goPackage struct {
	dir      string
	name     string
	declared map[string]bool
	imports  map[string]bool
}

// loadPackages parses every package of the module (test files and
// node_modules excluded).
func loadPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", ".run", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &goPackage{dir: dir, name: f.Name.Name, declared: map[string]bool{}, imports: map[string]bool{}}
			pkgs[dir] = p
		}
		for _, imp := range f.Imports {
			v, _ := strconv.Unquote(imp.Path.Value)
			p.imports[v] = true
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				p.declared[name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						p.declared[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.declared[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestArchitectureDocNamesExist: every package directory and every
// package.Name the architecture page names in backticks exists, so the map
// a newcomer reads cannot drift from the code.
func TestArchitectureDocNamesExist(t *testing.T) {
	raw, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := loadPackages(t)
	byName := map[string][]*goPackage{}
	for _, p := range pkgs {
		byName[p.name] = append(byName[p.name], p)
	}
	dirRe := regexp.MustCompile("^[a-z0-9_]+(/[a-z0-9_]+)*$")
	symRe := regexp.MustCompile(`^([a-z0-9_]+)\.([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?)$`)
	checked := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(raw), -1) {
		tok := m[1]
		if ext := filepath.Ext(tok); ext == ".json" || ext == ".md" || ext == ".txt" || ext == ".yaml" || ext == ".go" {
			continue // a file name, not a package name
		}
		switch {
		case dirRe.MatchString(tok) && (strings.Contains(tok, "/") || pkgs[tok] != nil):
			if pkgs[tok] == nil {
				t.Errorf("docs/architecture.md names package directory %s, which holds no Go package", tok)
			}
			checked++
		case symRe.MatchString(tok):
			sm := symRe.FindStringSubmatch(tok)
			found := false
			for _, p := range byName[sm[1]] {
				found = found || p.declared[sm[2]]
			}
			if !found {
				t.Errorf("docs/architecture.md names %s: no package %s declares %s", tok, sm[1], sm[2])
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("only %d names checked: the page or this test's patterns changed", checked)
	}
}

// TestImportPicture keeps the import rules of docs/architecture.md: no
// package under caddymodule/ imports caddymodule itself (the custom Caddy's
// main under caddymodule/cmd is the binary, not a room), the core
// (caddymodule/core) imports neither net/http nor a door's package (web,
// httprpc, wsrpc, mcp), nothing under settlementd imports caddymodule, shared/
// imports neither binary.
func TestImportPicture(t *testing.T) {
	pkgs := loadPackages(t)
	gateway := module + "/caddymodule"
	for dir, p := range pkgs {
		for imp := range p.imports {
			inGateway := imp == gateway || strings.HasPrefix(imp, gateway+"/")
			switch {
			case strings.HasPrefix(dir, "caddymodule/") && !strings.HasPrefix(dir, "caddymodule/cmd/") && imp == gateway:
				t.Errorf("%s imports its parent %s", dir, imp)
			case (dir == "settlementd" || strings.HasPrefix(dir, "settlementd/")) && inGateway:
				t.Errorf("%s imports %s: what both binaries need belongs in shared/", dir, imp)
			case strings.HasPrefix(dir, "shared/") && (inGateway || strings.HasPrefix(imp, module+"/settlementd")):
				t.Errorf("%s imports %s: shared/ must not depend on a binary", dir, imp)
			case dir == "caddymodule/core" && (imp == "net/http" || strings.HasPrefix(imp, "net/http/") || imp == gateway+"/web" ||
				imp == gateway+"/httprpc" || imp == gateway+"/wsrpc" || imp == gateway+"/mcp"):
				t.Errorf("%s imports %s: the core serves without HTTP; the doors translate to and from it", dir, imp)
			}
		}
	}
}
