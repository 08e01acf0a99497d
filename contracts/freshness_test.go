package contracts

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/abigen"
)

// These tests keep the committed artifacts honest:
//   - build/inputs.sha256 must match the sources (the build is stale otherwise);
//   - the committed bindings must be exactly what abigen makes from the committed build/;
//   - with node + node_modules (or TOLLGATE_REQUIRE_NODE=1), a fresh compile must reproduce build/.

const rebuildHint = "run `make contracts` (npm ci && node build.js in contracts/, then go generate ./contracts/bindings)"

type inputEntry struct{ sum, name string }

func readInputs(t *testing.T) []inputEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("build", "inputs.sha256"))
	if err != nil {
		t.Fatalf("reading build/inputs.sha256: %v; %s", err, rebuildHint)
	}
	defer f.Close()
	var out []inputEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || name == "" {
			t.Fatalf("build/inputs.sha256: malformed line %q; %s", line, rebuildHint)
		}
		out = append(out, inputEntry{sum, name})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// TestBuildInputsFresh checks that build/ was produced from the current src/*.sol (and, when
// node_modules is installed, from the installed OpenZeppelin files and solc version).
func TestBuildInputsFresh(t *testing.T) {
	entries := readInputs(t)
	haveNodeModules := dirExists("node_modules")
	listed := map[string]bool{}
	for _, e := range entries {
		listed[e.name] = true
		switch {
		case strings.HasPrefix(e.name, "src/"):
		case strings.HasPrefix(e.name, "node_modules/"):
			if !haveNodeModules {
				continue
			}
		case strings.HasPrefix(e.name, "compiler:solc-"):
			if !haveNodeModules {
				continue
			}
			b, err := os.ReadFile(filepath.Join("node_modules", "solc", "package.json"))
			if err != nil {
				t.Errorf("node_modules/solc/package.json: %v; run `npm ci` in contracts/", err)
				continue
			}
			var pkg struct{ Version string }
			if err := json.Unmarshal(b, &pkg); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(e.name, "compiler:solc-"+pkg.Version+"+") {
				t.Errorf("build/ was compiled with %s but node_modules has solc %s; %s", e.name, pkg.Version, rebuildHint)
			}
			continue
		default:
			continue // settings: checked by TestBuildReproducible
		}
		sum, err := fileSHA256(filepath.FromSlash(e.name))
		if err != nil {
			t.Errorf("contracts/%s is listed in build/inputs.sha256 but cannot be read (%v); %s", e.name, err, rebuildHint)
			continue
		}
		if sum != e.sum {
			t.Errorf("contracts/%s changed since build/ was generated (sha256 %s, recorded %s); %s", e.name, sum, e.sum, rebuildHint)
		}
	}
	srcs, err := filepath.Glob(filepath.Join("src", "*.sol"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if name := filepath.ToSlash(s); !listed[name] {
			t.Errorf("contracts/%s is not in build/inputs.sha256 (new file?); %s", name, rebuildHint)
		}
	}
}

// genArgs is one `go tool abigen --v2 ...` line from bindings/gen.go.
type genArgs struct{ abi, bin, pkg, typ, out string }

func readGenLines(t *testing.T) []genArgs {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("bindings", "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []genArgs
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate go tool abigen ")
		if !ok {
			continue
		}
		fs := flag.NewFlagSet("abigen", flag.ContinueOnError)
		var g genArgs
		v2 := fs.Bool("v2", false, "")
		fs.StringVar(&g.abi, "abi", "", "")
		fs.StringVar(&g.bin, "bin", "", "")
		fs.StringVar(&g.pkg, "pkg", "", "")
		fs.StringVar(&g.typ, "type", "", "")
		fs.StringVar(&g.out, "out", "", "")
		if err := fs.Parse(strings.Fields(rest)); err != nil || !*v2 || fs.NArg() != 0 ||
			g.abi == "" || g.bin == "" || g.pkg == "" || g.typ == "" || g.out == "" {
			t.Fatalf("bindings/gen.go: unsupported go:generate line %q (want --v2 --abi --bin --pkg --type --out)", line)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		t.Fatal("bindings/gen.go has no abigen go:generate lines")
	}
	return out
}

// TestBindingsFresh regenerates every binding in-process (same arguments as bindings/gen.go) and
// compares it with the committed file.
func TestBindingsFresh(t *testing.T) {
	for _, g := range readGenLines(t) {
		t.Run(g.typ, func(t *testing.T) {
			dir := "bindings"
			abiJSON, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(g.abi)))
			if err != nil {
				t.Fatal(err)
			}
			bin, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(g.bin)))
			if err != nil {
				t.Fatal(err)
			}
			code, err := abigen.BindV2([]string{g.typ}, []string{string(abiJSON)}, []string{string(bin)}, g.pkg,
				map[string]string{}, map[string]string{})
			if err != nil {
				t.Fatal(err)
			}
			outPath := filepath.Join(dir, filepath.FromSlash(g.out))
			committed, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatalf("%v; run `go generate ./contracts/bindings`", err)
			}
			if code != string(committed) {
				t.Errorf("contracts/%s is not what abigen generates from build/%s; run `go generate ./contracts/bindings` (or %s)",
					filepath.ToSlash(outPath), filepath.Base(g.abi), rebuildHint)
			}
		})
	}
}

// TestBuildReproducible recompiles with node into a temporary directory and compares every
// artifact with build/. It is skipped without node or node_modules unless TOLLGATE_REQUIRE_NODE is
// set, in which case their absence is a failure.
func TestBuildReproducible(t *testing.T) {
	require := os.Getenv("TOLLGATE_REQUIRE_NODE") != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if require {
			t.Fatal("TOLLGATE_REQUIRE_NODE is set but node is not on PATH")
		}
		t.Skip("node not on PATH")
	}
	if !dirExists("node_modules") {
		if require {
			t.Fatal("TOLLGATE_REQUIRE_NODE is set but contracts/node_modules is missing; run `npm ci` in contracts/")
		}
		t.Skip("contracts/node_modules missing (run `npm ci` in contracts/)")
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "build.js", "--out", tmp)
	var outBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Run(); err != nil {
		t.Fatalf("node build.js --out %s: %v\n%s", tmp, err, outBuf.String())
	}
	names := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			if !e.IsDir() {
				n = append(n, e.Name())
			}
		}
		slices.Sort(n)
		return n
	}
	committed, fresh := names("build"), names(tmp)
	if !slices.Equal(committed, fresh) {
		t.Fatalf("build/ has %v, a fresh build has %v; %s", committed, fresh, rebuildHint)
	}
	for _, n := range committed {
		a, err := os.ReadFile(filepath.Join("build", n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tmp, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("contracts/build/%s differs from a fresh build; %s", n, rebuildHint)
		}
	}
}
