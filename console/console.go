// Package console holds the web console's built assets (dist/, made from
// src/ by build.mjs with the pinned esbuild of package-lock.json) and serves
// them under /console. dist/ is committed; TestDistFresh rebuilds it and
// compares byte for byte.
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// Files is dist/ as a file system (index.html, app.js, app.css).
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	return sub
}

// csp allows nothing from elsewhere: the page's own script and style, and
// fetches to its own origin (the gateway and settlementd behind it).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves GET /console, /console/ (index.html) and /console/<asset>.
func Handler() http.Handler {
	files := Files()
	type asset struct {
		body []byte
		etag string
		ct   string
	}
	assets := map[string]asset{}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		assets[p] = asset{b, `"` + hex.EncodeToString(sum[:16]) + `"`, ct}
		return nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/console"), "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such console file"}}` + "\n"))
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ct)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if name == "index.html" {
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Frame-Options", "DENY")
		}
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(a.body)
	})
}
