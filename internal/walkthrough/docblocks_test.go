package walkthrough

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notRun are the command blocks no test runs, each with why: the test
// fails when one is no longer there (so the list cannot go stale) and when
// any other block escapes.
var notRun = map[string]string{
	"docs/benchmarks.md:for b in noclap clap noclap clap; do":             "a record of how round 3 was measured: minutes of load on a quiet machine, two builds of Caddy",
	"docs/benchmarks.md:BENCH_BASELINE_BIN=/path/to/caddy-floor":          "a record of round 4: the floor build is a change made only for the measurement, not committed",
	"docs/node-operators.md:make build && sudo install bin/tollgate-node": "make test (CI) runs make build first; installing into /usr/local/bin needs root on the reader's host",
}

// TestDocCommandBlocks: every block of shell commands in README.md and
// docs/*.md is run by a test — the curl check, a page's session — or names
// the test that runs its commands, and that test says each of them.
func TestDocCommandBlocks(t *testing.T) {
	root := repoRoot(t)
	tests, err := TestSources(root)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	seen, blocks := map[string]bool{}, 0
	for _, path := range pages {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		bs, err := DocBlocks(raw)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, b := range bs {
			if IsShellBlock(b) {
				blocks++
			}
		}
		problems, err := CheckDocBlocks(rel, raw, tests)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			if key := notRunKey(rel, bs, p); key != "" {
				seen[key] = true
				continue
			}
			t.Error(p)
		}
	}
	for key := range notRun {
		if !seen[key] {
			t.Errorf("notRun lists %q, which is no longer an unchecked block: remove it", key)
		}
	}
	if blocks < 25 {
		t.Fatalf("only %d command blocks found: the pages or this test's patterns changed", blocks)
	}
}

// notRunKey returns the notRun entry a problem belongs to, if any.
func notRunKey(page string, bs []DocBlock, problem string) string {
	for _, b := range bs {
		in := strings.HasPrefix(problem, page+":"+strconv.Itoa(b.Line)+":")
		for _, c := range b.Commands {
			in = in || strings.HasPrefix(problem, page+":"+strconv.Itoa(c.Line)+":")
		}
		if len(b.Commands) == 0 || !in {
			continue
		}
		for key := range notRun {
			if strings.HasPrefix(page+":"+b.Commands[0].Text, key) {
				return key
			}
		}
	}
	return ""
}

// TestDocCommandBlocksCatch: the check fails an unmarked block, a curl
// block with a line the curl check skips, an unlabelled block of commands,
// no-check, a session on a page no test runs, a marker naming a missing
// test, and a marker whose test does not say the command; it passes the
// same blocks marked right.
func TestDocCommandBlocksCatch(t *testing.T) {
	tests := map[string]string{
		"TestMigrations": "func TestMigrations(t *testing.T) { exec.Command(bin, \"migrate\", \"status\") } // settlementd",
		"TestSession":    "reads docs/x.md",
	}
	SessionTests["docs/x.md"] = "TestSession"
	defer delete(SessionTests, "docs/x.md")
	for _, c := range []struct {
		page, md, want string
	}{
		{"docs/x.md", "```\nsettlementd migrate status\n```\n", `fenced ""`},
		{"docs/x.md", "```console\nmake build\n```\n", `fenced "console"`},
		{"docs/x.md", "```sh\nsettlementd migrate status\n```\n", "is not a curl example"},
		{"docs/x.md", "```sh\ncurl -s localhost:8080/x\necho done\n```\n", `"echo done" is not a curl example`},
		{"docs/x.md", "```sh\ncurl -s localhost:8080/x | jq .\n```\n", "is not a curl example"},
		{"docs/x.md", "```sh no-check\nmake build\n```\n", "not run by any test"},
		{"docs/y.md", "```sh run\ntollgate-node status\n```\n", "no test runs docs/y.md's session"},
		{"docs/x.md", "```sh tested-by=TestNoSuchThing\nsettlementd migrate status\n```\n", "no such test function"},
		{"docs/x.md", "```sh tested-by=TestMigrations\nsettlementd migrate force 3\n```\n", `never says "force"`},
		{"docs/x.md", "```sh tested-by=TestMigrations\nsudo promtool check config p.yml\n```\n", `never says "promtool"`},
	} {
		problems, err := CheckDocBlocks(c.page, []byte(c.md), tests)
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), c.want) {
			t.Errorf("%q: problems %q, want one saying %q", c.md, problems, c.want)
		}
	}
	ok := "```sh\n# expect 402\ncurl -s localhost:8080/rpc \\\n  -d '{\"a\":\"b|c&d\"}'\n```\n" +
		"```sh run\ntollgate-node status\n```\n" +
		"```sh tested-by=TestMigrations\nsettlementd migrate status   # a comment\nDATABASE_URL=x bin/settlementd migrate status\n```\n" +
		"```caddyfile\nmake build\n```\n```\nplain text, not a command\n```\n"
	if problems, err := CheckDocBlocks("docs/x.md", []byte(ok), tests); err != nil || len(problems) != 0 {
		t.Fatalf("%v %q", err, problems)
	}
}

func TestSimpleCommands(t *testing.T) {
	got := SimpleCommands(`cd deploy/monitoring/prometheus && sudo promtool test rules alerts_test.yml; A="x y" bin/tollgate-deploy -rpc "$(jq -r .u f)" | settlementd migrate force N`)
	want := []SimpleCommand{{"promtool", "promtool", []string{"test", "rules"}}, {"tollgate-deploy", "bin/tollgate-deploy", nil},
		{"settlementd", "settlementd", []string{"migrate", "force"}}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range got {
		if got[i].Program != want[i].Program || got[i].Path != want[i].Path || strings.Join(got[i].Sub, " ") != strings.Join(want[i].Sub, " ") {
			t.Fatalf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestDocFenceReaders: the three readers of fenced blocks (DocBlocks,
// CurlExamples, GuideCommands) share one fence scanner but keep their own
// rules: which blocks they read, what continues a line, and how a page left
// open or a block ending in a continuation is reported (with its line).
func TestDocFenceReaders(t *testing.T) {
	for _, c := range []struct {
		md               string
		curl, guide, doc string // fmt of the results, or the error
	}{
		// A README left open keeps its examples and drops an unfinished one;
		// the other readers reject the page.
		{md: "```sh\ncurl -s a\ncurl -s b \\",
			curl:  "[{Line:2 Command:curl -s a Expect:0}]",
			guide: "a fenced block is not closed",
			doc:   "line 1: a fenced block is not closed"},
		// A block ending in a continuation, named by its command's line: only
		// the readers that read that block object.
		{md: "x\n```sh\ncurl -s a \\\n```\n",
			curl:  "README line 3: a curl example ends with a continuation",
			guide: "[]",
			doc:   "line 3: a command ends with a continuation"},
		{md: "```sh run\necho a\nfoo \\\n```\n",
			curl:  "[]",
			guide: "line 3: a command ends with a continuation",
			doc:   "line 3: a command ends with a continuation"},
		// In curl examples only a curl continues, and any other line (a blank
		// one too) forgets an # expect; commands skip blanks and comments.
		{md: "```bash\n# expect 401\ncurl -s a\necho b \\\ncurl -s c\n# expect 402\n\ncurl -s d\n```\n" +
			"```sh run\n# c\necho b \\\n\n  curl -s c\n```\n",
			curl:  "[{Line:3 Command:curl -s a Expect:401} {Line:5 Command:curl -s c Expect:0} {Line:8 Command:curl -s d Expect:0}]",
			guide: "[{Line:12 Command:echo b  } {Line:14 Command:curl -s c}]",
			doc: "[{Line:1 Lang:bash Attrs:[] Commands:[{Line:3 Text:curl -s a} {Line:4 Text:echo b  curl -s c} {Line:8 Text:curl -s d}]} " +
				"{Line:10 Lang:sh Attrs:[run] Commands:[{Line:12 Text:echo b  } {Line:14 Text:curl -s c}]}]"},
		{md: "```sh\ncurl -s a \\\n -w x\n```\n",
			curl: "[{Line:2 Command:curl -s a  -w x Expect:0}]", guide: "[]",
			doc: "[{Line:1 Lang:sh Attrs:[] Commands:[{Line:2 Text:curl -s a  -w x}]}]"},
		{md: "```sh\necho\ncurl -s a -o f\n```\n",
			curl: "README line 3: curl examples must not use -o or -w", guide: "[]",
			doc: "[{Line:1 Lang:sh Attrs:[] Commands:[{Line:2 Text:echo} {Line:3 Text:curl -s a -o f}]}]"},
	} {
		show := func(v any, err error) string {
			if err != nil {
				return err.Error()
			}
			return strings.TrimPrefix(fmt.Sprintf("%+v", v), "&")
		}
		curl, cerr := CurlExamples([]byte(c.md))
		guide, gerr := GuideCommands([]byte(c.md))
		doc, derr := DocBlocks([]byte(c.md))
		if got := show(curl, cerr); got != c.curl {
			t.Errorf("%q: curl %s, want %s", c.md, got, c.curl)
		}
		if got := show(guide, gerr); got != c.guide {
			t.Errorf("%q: guide %s, want %s", c.md, got, c.guide)
		}
		if got := show(doc, derr); got != c.doc {
			t.Errorf("%q: doc %s, want %s", c.md, got, c.doc)
		}
	}
}
