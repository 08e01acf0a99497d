package console

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const rebuildHint = "run `make node-deps && (cd console && node build.mjs)` and commit console/dist"

// TestDistFresh rebuilds the console with the pinned esbuild into a temp
// dir and compares it byte for byte with the committed dist/ (and so with
// what the settlementd binary embeds). With TOLLGATE_REQUIRE_NODE=1 a
// missing node or node_modules is a failure, not a skip.
func TestDistFresh(t *testing.T) {
	_, errNode := exec.LookPath("node")
	_, errMods := os.Stat(filepath.Join("node_modules", "esbuild", "package.json"))
	if errNode != nil || errMods != nil {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") == "1" {
			t.Fatalf("node (%v) and console/node_modules (%v) are required (TOLLGATE_REQUIRE_NODE=1); %s", errNode, errMods, rebuildHint)
		}
		t.Skip("node or console/node_modules missing; run make node-deps")
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "build.mjs", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, b)
	}
	built := os.DirFS(out)
	seen := map[string]bool{}
	err := fs.WalkDir(built, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		seen[p] = true
		want, _ := fs.ReadFile(built, p)
		got, err := fs.ReadFile(Files(), p)
		if err != nil {
			t.Errorf("dist/%s is missing; %s", p, rebuildHint)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("dist/%s differs from a fresh build; %s", p, rebuildHint)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !seen[p] {
			t.Errorf("dist/%s is not made by the build; remove it", p)
		}
		return nil
	})
}

// TestTypeCheck: src/ type-checks (tsc --noEmit, strict, with the pinned
// typescript of package-lock.json); esbuild only strips the types.
func TestTypeCheck(t *testing.T) {
	_, errNode := exec.LookPath("node")
	_, errTSC := os.Stat(filepath.Join("node_modules", "typescript", "bin", "tsc"))
	if errNode != nil || errTSC != nil {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") == "1" {
			t.Fatalf("node (%v) and console/node_modules (%v) are required (TOLLGATE_REQUIRE_NODE=1); run make node-deps", errNode, errTSC)
		}
		t.Skip("node or console/node_modules missing; run make node-deps")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", ".").CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, b)
	}
}

// TestHandler: the page, its assets, 404 for anything else, and a page
// that loads nothing from another origin.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(p string, h ...string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
		if len(h) == 2 {
			req.Header.Set(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	for _, p := range []string{"/console", "/console/", "/console/index.html"} {
		resp, body := get(p)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(body, `src="/console/app.js"`) {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, resp.Header)
		}
		if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
			t.Fatalf("%s refers to another origin", p)
		}
	}
	resp, _ := get("/console/app.js")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("app.js: %d %v", resp.StatusCode, resp.Header)
	}
	if r2, _ := get("/console/app.js", "If-None-Match", resp.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
		t.Fatalf("app.js with its ETag: %d", r2.StatusCode)
	}
	if resp, _ := get("/console/app.css"); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("app.css: %d", resp.StatusCode)
	}
	if resp, body := get("/console/nope.js"); resp.StatusCode != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("unknown file: %d %s", resp.StatusCode, body)
	}
}
