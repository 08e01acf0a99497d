package tollgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// One parser per concept (docs/errors.md's sibling rule): the
// three Ethereum concepts strangers hand the gateway and settlementd —
// quantities (block numbers, hex amounts), addresses and signatures — are
// read in one place each, shared/ethparse, over go-ethereum's own
// implementation. Two readers of the same value drift: a fromBlock padded
// past 18 characters was skipped by the range check and read by the
// upstream, one signature path took high-s twins, addresses were checked
// ten ways. TestOneParserPerConcept walks every production Go file and
// refuses, outside shared/ethparse:
//
//   - quantity: strconv.ParseUint/ParseInt with a base other than 10 (hex
//     digits after hand-trimmed "0x"), (*big.Int).SetString with a base
//     other than 10, hexutil.DecodeUint64/DecodeBig/DecodeUint, and
//     strings.TrimPrefix(…, "0x"/"0X") (the first step of every hand-rolled
//     hex parser);
//   - address: common.HexToAddress of anything but a string literal (it
//     takes any string, silently: "0xzz" is the zero address) and
//     common.IsHexAddress (no prefix needed, no checksum);
//   - signature: crypto.SigToPub, crypto.Ecrecover and
//     crypto.ValidateSignatureValues (v, low-s and range rules live with
//     the recovery in ethparse.Recover).
//
// parserAllowList holds the call sites not converted yet; each names why.
// An entry that no longer matches fails the test too, so the list only
// shrinks.
func TestOneParserPerConcept(t *testing.T) {
	found := map[parserSite]int{}
	fset := token.NewFileSet()
	for _, root := range []string{"caddymodule", "settlementd", "shared", "cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				switch {
				case d.Name() == "node_modules", d.Name() == "testdata",
					filepath.ToSlash(path) == "shared/ethparse": // the one place (not any directory of that name)
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
			for _, s := range parserSites(f, filepath.ToSlash(path)) {
				found[s]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	allowed := map[parserSite]bool{}
	for _, a := range parserAllowList {
		allowed[a.parserSite] = true
		if found[a.parserSite] == 0 {
			t.Errorf("allow-list entry %s %s (%s) matches no call any more: remove it", a.file, a.fn, a.call)
		}
	}
	var bad []string
	for s, n := range found {
		if !allowed[s] {
			bad = append(bad, s.file+": "+s.fn+": "+s.call+" ×"+strconv.Itoa(n))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s — parse it with shared/ethparse (Quantity, BigQuantity, Uint, Address, ChecksumAddress, Recover)", b)
	}
}

// parserSite is one parsing call: the file, the enclosing function (as
// Recv.Method, or "(package level)") and the call as written.
type parserSite struct{ file, fn, call string }

// parserSites lists f's calls that parse a quantity, an address or a
// signature by hand.
func parserSites(f *ast.File, file string) []parserSite {
	imports := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	var out []parserSite
	// A dot import would let a watched function be called without its
	// package name, out of the walk's sight.
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if imp.Name != nil && imp.Name.Name == "." && watchedPackages[p] {
			out = append(out, parserSite{file, "(package level)", "dot import of " + strconv.Quote(p)})
		}
	}
	check := func(fn string, n ast.Node) {
		called := map[*ast.SelectorExpr]bool{} // selectors that are a call's function
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				called[sel] = true
				if what := parsingCall(selectorPkg(sel, imports), sel.Sel.Name, n.Args); what != "" {
					out = append(out, parserSite{file, fn, what})
				}
			case *ast.SelectorExpr:
				// Taken as a value (f := strconv.ParseUint, a method value
				// n.SetString): whatever it is called with later, the walk
				// cannot see it, so the reference itself is the site.
				if !called[n] {
					if what := parsingValue(selectorPkg(n, imports), n.Sel.Name); what != "" {
						out = append(out, parserSite{file, fn, what})
					}
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			check(name, d)
		default:
			check("(package level)", d)
		}
	}
	return out
}

// watchedPackages are the packages whose functions parsingCall watches.
var watchedPackages = map[string]bool{
	"strconv": true, "strings": true, "github.com/ethereum/go-ethereum/common/hexutil": true,
	"github.com/ethereum/go-ethereum/common": true, "github.com/ethereum/go-ethereum/crypto": true,
}

// selectorPkg is the import path sel's package name stands for ("" when
// sel is a method or field selector).
func selectorPkg(sel *ast.SelectorExpr, imports map[string]string) string {
	if id, ok := sel.X.(*ast.Ident); ok {
		return imports[id.Name]
	}
	return ""
}

// parsingValue names the concept when pkg.name, a function parsingCall
// watches, is referred to without being called: its arguments (a base, a
// prefix) cannot be judged, so it is refused whatever they would be.
func parsingValue(pkg, name string) string {
	if pkg == "" && name != "SetString" {
		return ""
	}
	probe := []ast.Expr{&ast.Ident{Name: "x"}, &ast.Ident{Name: "x"}} // non-literal arguments: every watched call matches
	what := parsingCall(pkg, name, probe)
	if what == "" {
		return ""
	}
	concept, _, _ := strings.Cut(what, ":")
	short := pkg[strings.LastIndex(pkg, "/")+1:]
	if pkg == "" {
		return concept + ": " + name + " taken as a value"
	}
	return concept + ": " + short + "." + name + " taken as a value"
}

// parsingCall names the concept and call when pkg.name(args) parses one
// by hand, "" when it does not.
func parsingCall(pkg, name string, args []ast.Expr) string {
	const (
		strconvPkg = "strconv"
		stringsPkg = "strings"
		hexutil    = "github.com/ethereum/go-ethereum/common/hexutil"
		common     = "github.com/ethereum/go-ethereum/common"
		crypto     = "github.com/ethereum/go-ethereum/crypto"
	)
	lit := func(i int) string {
		if i < len(args) {
			if b, ok := args[i].(*ast.BasicLit); ok {
				return b.Value
			}
		}
		return ""
	}
	switch {
	case pkg == strconvPkg && (name == "ParseUint" || name == "ParseInt") && lit(1) != "10":
		return "quantity: strconv." + name + " base " + orExpr(lit(1))
	case pkg == "" && name == "SetString" && len(args) == 2 && lit(1) != "10":
		return "quantity: SetString base " + orExpr(lit(1))
	case pkg == hexutil && (name == "DecodeUint64" || name == "DecodeBig" || name == "DecodeUint"):
		return "quantity: hexutil." + name
	case pkg == stringsPkg && (name == "TrimPrefix" || name == "CutPrefix") && (lit(1) == `"0x"` || lit(1) == `"0X"`):
		return "quantity: strings." + name + " " + lit(1)
	case pkg == common && name == "HexToAddress" && !strings.HasPrefix(lit(0), `"`):
		return "address: common.HexToAddress of a variable"
	case pkg == common && name == "IsHexAddress":
		return "address: common.IsHexAddress"
	case pkg == crypto && (name == "SigToPub" || name == "Ecrecover" || name == "ValidateSignatureValues"):
		return "signature: crypto." + name
	}
	return ""
}

func orExpr(s string) string {
	if s == "" {
		return "(an expression)"
	}
	return s
}

// parserAllowList: call sites still parsing by hand, each reading a value
// that is not a stranger's.
var parserAllowList = []struct {
	parserSite
	why string
}{
	// chain_txs rows: the lowercase hex chain.Sender.Submit wrote itself.
	{parserSite{"settlementd/internal/chain/tx.go", "scanTx", "address: common.HexToAddress of a variable"}, "own store"},
	// A bundle wallet's spelling as a Redis/ledger key (exact lowercase), checked, not read as an address.
	{parserSite{"shared/events/events.go", "ValidWallet", `quantity: strings.CutPrefix "0x"`}, "key spelling"},
}

// TestParserSitesSeeAliases: the walk cannot be dodged by renaming what
// it looks for. A forbidden function taken as a value (f :=
// strconv.ParseUint, a package-level var = hexutil.DecodeUint64, a method
// value n.SetString) is a site, whatever it is called with later; a dot
// import of a watched package (calls without a package name) is a site.
func TestParserSitesSeeAliases(t *testing.T) {
	src := `package p

import (
	"math/big"
	"strconv"
	. "strings"
	hu "github.com/ethereum/go-ethereum/common/hexutil"
)

var decode = hu.DecodeUint64

func A(s string) (uint64, error) {
	f := strconv.ParseUint
	return f(TrimPrefix(s, "0x"), 16, 64)
}

func B(s string) (uint64, error) { return decode(s) }

func C(s string) *big.Int {
	set := new(big.Int).SetString
	n, _ := set(s, 16)
	return n
}

func D(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) } // decimal: not a site
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range parserSites(f, "p.go") {
		got[s.fn+": "+s.call] = true
	}
	for _, want := range []string{
		"(package level): quantity: hexutil.DecodeUint64 taken as a value",
		"A: quantity: strconv.ParseUint taken as a value",
		"C: quantity: SetString taken as a value",
		`(package level): dot import of "strings"`,
	} {
		if !got[want] {
			t.Errorf("not seen: %s (seen: %v)", want, got)
		}
	}
	for s := range got {
		if strings.HasPrefix(s, "D:") {
			t.Errorf("a decimal strconv.ParseUint flagged: %s", s)
		}
	}
}
