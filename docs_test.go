package tollgate

import (
	"os"
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

// TestDocsStayInTheRepo: no page points a reader at documents outside the
// repository (the design notes, research notes, the issue tracker).
func TestDocsStayInTheRepo(t *testing.T) {
	outside := regexp.MustCompile(`DESIGN(\.md)?\s*§|shared/research|research/[a-z0-9_-]+\.md|research [a-z0-9_-]+\.md|\b[Ii]ssues? \d+(\.\d+)?\b`)
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d points outside the repository (%q): %s", page, i+1, m, strings.TrimSpace(line))
			}
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
