package tollgate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The documentation is checked like code: a guide that links a file that is
// gone, or a section that was renamed, fails here; so does text that points
// at documents outside the repository, which a reader cannot open.

// docPages are the pages a reader walks: the README, the other Markdown
// files at the root (changelog, security policy, notices) and every guide.
func docPages(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(root, pages...)
}

var (
	fenceRe   = regexp.MustCompile("(?s)```.*?```")
	codeRe    = regexp.MustCompile("`[^`\n]*`")
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	anchorRe  = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
)

// stripCode removes fenced blocks and inline code, where ](…) is not a link
// and # is not a heading.
func stripCode(s string) string {
	s = fenceRe.ReplaceAllStringFunc(s, func(b string) string { return strings.Repeat("\n", strings.Count(b, "\n")) })
	return codeRe.ReplaceAllString(s, "``")
}

// slug is GitHub's heading anchor: lower case, spaces to hyphens, and every
// character that is not a letter, digit, hyphen or underscore dropped.
func slug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1") // links keep their text
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the #fragments a Markdown file offers: its headings (with
// GitHub's -1, -2 suffixes for repeats) and explicit <a name> anchors.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	// Headings are read with their inline code kept (it is part of the slug).
	noFence := fenceRe.ReplaceAllStringFunc(md, func(b string) string { return strings.Repeat("\n", strings.Count(b, "\n")) })
	for _, m := range headingRe.FindAllStringSubmatch(noFence, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, m := range anchorRe.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

// TestDocLinks: every relative link in README.md and docs/*.md names a file
// or directory that exists, and every #anchor a heading of its target.
func TestDocLinks(t *testing.T) {
	problems, checked, err := checkLinks(docPages(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 30 {
		t.Fatalf("only %d links checked: the pages or this test's patterns changed", checked)
	}
}

// TestDocLinksCatch: the check finds a missing file, a missing section and a
// link into a file that has no headings to point at.
func TestDocLinksCatch(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	md := "# A\n\n## Known limits (found rereading this as an attacker)\n\n" +
		"[ok](#a) [ok](#known-limits-found-rereading-this-as-an-attacker) [ok](b.md#b-title) [ok](b.md)\n" +
		"[gone](c.md) [gone](b.md#no-such) [gone](#nope) `[code](x.md)`\n\n```sh\n[fenced](y.md)\n```\n"
	if err := os.WriteFile(page, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B title\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, checked, err := checkLinks([]string{page})
	if err != nil {
		t.Fatal(err)
	}
	if checked != 6 || len(problems) != 3 || !strings.Contains(problems[0], "c.md does not exist") ||
		!strings.Contains(problems[1], "no heading #no-such") || !strings.Contains(problems[2], "no heading #nope") {
		t.Fatalf("checked %d, problems %q", checked, problems)
	}
}

// checkLinks returns what is wrong with the relative links of pages, and how
// many links it checked.
func checkLinks(pages []string) (problems []string, checked int, err error) {
	cache := map[string]map[string]bool{}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			return nil, 0, err
		}
		text := stripCode(string(raw))
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue // outside links are not this test's business
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					problems = append(problems, page+" links "+target+": "+path+" does not exist")
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				problems = append(problems, page+" links "+target+": an anchor into a file that is not Markdown")
				continue
			}
			if cache[path] == nil {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, 0, err
				}
				cache[path] = anchors(string(b))
			}
			if !cache[path][frag] {
				problems = append(problems, page+" links "+target+": "+path+" has no heading #"+frag)
			}
		}
	}
	return problems, checked, nil
}

// outsideRe is text that points a reader at documents outside the
// repository: the design notes by section, the research notes, and our issue
// tracker ("issue 41.9", "issues 15 and 33", "issue #12", "PR #3").
var outsideRe = regexp.MustCompile(`DESIGN(\.md)?\s*§|shared/research|research/[a-z0-9_-]+\.md|research [a-z0-9_-]+\.md|` +
	`(?i:([A-Za-z0-9_.-]+ )?\b(issues?|PR) #?\d+(\.\d+)?\b)`)

// upstreamProjects may precede "issue N" or "PR #N": such a reference is to
// that project's public tracker, which any reader can open, not to ours.
// The rule is that a third party's issue is always named with its project
// right before it ("eRPC issue #223", "reth PR #24719").
var upstreamProjects = map[string]bool{
	"erpc": true, "reth": true, "go-ethereum": true, "geth": true, "caddy": true, "redis": true,
	"postgresql": true, "x402": true, "besu": true, "viem": true, "foundry": true, "hardhat": true, "web3-proxy": true,
}

// outsideRefs returns the references in text (named name) that point
// outside the repository, one problem per line.
func outsideRefs(name, text string) []string {
	var problems []string
	for i, line := range strings.Split(text, "\n") {
		for _, m := range outsideRe.FindAllStringSubmatch(line, -1) {
			if m[2] != "" && upstreamProjects[strings.ToLower(strings.TrimSpace(m[2]))] {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s:%d points outside the repository (%q): %s", name, i+1, m[0], strings.TrimSpace(line)))
		}
	}
	return problems
}

// TestDocsStayInTheRepo: no page points a reader at documents outside the
// repository (the design notes, research notes, the issue tracker).
func TestDocsStayInTheRepo(t *testing.T) {
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range outsideRefs(page, string(raw)) {
			t.Error(p)
		}
	}
}

// notScannedForRefs are tracked files the repository-wide check leaves out,
// and why: this file holds the patterns and planted examples themselves;
// lockfiles and go.sum are written by tools and name packages, not trackers.
// Binary files (a NUL in the first 8 KiB, as git decides) are skipped too.
var notScannedForRefs = regexp.MustCompile(`^docs_test\.go$|(^|/)(go\.sum|package-lock\.json|yarn\.lock|pnpm-lock\.yaml)$`)

// knownOutsideRefs are references allowed to stay, each a file and the
// exact text (none today). The test fails on an entry that no longer
// matches, so the list only shrinks.
var knownOutsideRefs = map[string]string{}

// TestRepoStaysInTheRepo: no tracked text file — code comments, test doc
// comments, the Makefile, scripts, migrations, YAML — points at documents
// outside the repository either; the docs check above covers only pages.
func TestRepoStaysInTheRepo(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	scanned := 0
	used := map[string]bool{}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if notScannedForRefs.MatchString(name) {
			continue
		}
		raw, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(raw[:min(len(raw), 8000)], 0) >= 0 {
			continue
		}
		scanned++
		for _, p := range outsideRefs(name, string(raw)) {
			if known, ok := knownOutsideRefs[name]; ok && strings.Contains(p, known) {
				used[name] = true
				continue
			}
			t.Error(p)
		}
	}
	for name, known := range knownOutsideRefs {
		if !used[name] {
			t.Errorf("knownOutsideRefs: %s no longer holds %q; drop the entry", name, known)
		}
	}
	if scanned < 300 {
		t.Fatalf("only %d files scanned: git ls-files or the skip list changed", scanned)
	}
}

// TestStayInTheRepoCatch: the check finds each kind of outside reference in
// a comment, and lets an upstream project's public issue through.
func TestStayInTheRepoCatch(t *testing.T) {
	text := "// TestX (issue 41.9): every answer\n" +
		"# Redis-only metering throughput (Issue 19)\n" +
		"-- issues 15 and 33\n" +
		"// see DESIGN §4 and DESIGN.md §5\n" +
		"// shared/research/x402.md, research/caddy.md, research x402.md\n" +
		"// fixed in PR #12\n" +
		"// exactly eRPC issue #223; reth PR #24719; go-ethereum issue 1234\n" +
		"// tissue 5 is not a reference\n"
	problems := outsideRefs("planted.go", text)
	want := []string{"planted.go:1", "planted.go:2", "planted.go:3", "planted.go:4", "planted.go:4",
		"planted.go:5", "planted.go:5", "planted.go:5", "planted.go:6"}
	if len(problems) != len(want) {
		t.Fatalf("%d problems, want %d: %q", len(problems), len(want), problems)
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w+" ") {
			t.Errorf("problem %d = %q, want it on %s", i, problems[i], w)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"The `tollgate` Caddyfile directive":                 "the-tollgate-caddyfile-directive",
		"Request lifecycle (`POST /rpc`)":                    "request-lifecycle-post-rpc",
		"WebSocket: calls and metered `eth_subscribe`":       "websocket-calls-and-metered-eth_subscribe",
		"Known limits (found rereading this as an attacker)": "known-limits-found-rereading-this-as-an-attacker",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadmeIsTheFrontDoor: the README stays short and its map of the
// documentation links every guide under docs/.
func TestReadmeIsTheFrontDoor(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; the front door stays at 200 or fewer (move the rest into a guide)", n)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if !strings.Contains(string(raw), "]("+p+")") {
			t.Errorf("README.md's documentation map does not link %s", p)
		}
	}
}
