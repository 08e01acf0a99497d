package walkthrough

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Command blocks, the convention that keeps every command of the docs
// (README.md and docs/*.md) run by a test. A fenced block holds shell
// commands when its fence is sh, bash, shell or console, or when it has no
// language and a line starts with a known program (KnownPrograms, or
// bin/…). Such a block must be fenced sh (or bash) and be exactly one of:
//
//   - ```sh — curl examples: every command is a curl the curl check of
//     TestWalkthroughEndToEnd runs against the stack (readme.go); a line
//     that check would skip is an error here;
//   - ```sh run — a page's shell session, run in order by the test that
//     SessionTests names for the page (guide.go's GuideCommands);
//   - ```sh tested-by=TestA[,TestB] — commands a named test runs itself
//     (production-only blocks name the test that runs them on the dev
//     chain). The marker is checked: each test exists, and the files that
//     define them hold each command's program and subcommands as words.

// KnownPrograms are the programs a line may start with to make an unlabelled
// block a command block (so an unlabelled fence cannot hide one).
var KnownPrograms = []string{"settlementd", "make", "go", "curl", "caddy", "xcaddy", "promtool", "systemctl",
	"install", "tollgate-node", "tollgate-deploy", "tollgate-bench", "devchain", "jq", "sudo"}

// SessionTests names, per page, the test that runs the page's ```sh run
// blocks as one shell session.
var SessionTests = map[string]string{
	"docs/node-operators.md": "TestWalkthroughEndToEnd", // checkNodeOperatorGuide, guide_test.go
	"docs/redis.md":          "TestWalkthroughEndToEnd", // checkGuideSessions, walkthrough_test.go
	"docs/development.md":    "TestWalkthroughEndToEnd", // checkGuideSessions
}

// DocCommand is one command of a block (continuation lines joined).
type DocCommand struct {
	Line int
	Text string
}

// DocBlock is one fenced block of a page.
type DocBlock struct {
	Line     int      // line of the opening fence
	Lang     string   // first word of the info string
	Attrs    []string // the rest of the info string
	Commands []DocCommand
}

// fence is one fenced block of a page as written: the lines between its
// fences, trimmed, with their page line numbers. It is the one fence scanner
// of the package: DocBlocks, CurlExamples (readme.go) and GuideCommands
// (guide.go) each read its blocks and apply only their own rules.
type fence struct {
	Line   int      // line of the opening fence
	Info   []string // the info string's words
	Lines  []fenceLine
	Closed bool // false only for a last block the page never closes
}

type fenceLine struct {
	N    int    // 1-based line in the page
	Text string // trimmed
}

// fences returns the fenced blocks of a Markdown page, a block left open at
// the end included (Closed false), and then the scanner's error: a reader
// stops on it, so it comes after whatever the blocks read so far say.
func fences(md []byte) ([]fence, error) {
	var out []fence
	var cur *fence
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		trim := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(trim, "```") && cur != nil:
			cur.Closed = true
			out = append(out, *cur)
			cur = nil
		case strings.HasPrefix(trim, "```"):
			cur = &fence{Line: n, Info: strings.Fields(strings.TrimPrefix(trim, "```"))}
		case cur != nil:
			cur.Lines = append(cur.Lines, fenceLine{n, trim})
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out, sc.Err()
}

// commands joins a block's lines into commands: blank lines and # comments
// are skipped, a line ending in `\` continues onto the next. open is the
// line of a command the block ends inside (0: none).
func (f fence) commands() (cmds []DocCommand, open int) {
	var cont *DocCommand
	for _, l := range f.Lines {
		if cont != nil {
			cont.Text += " " + strings.TrimSuffix(l.Text, `\`)
			if !strings.HasSuffix(l.Text, `\`) {
				cmds = append(cmds, *cont)
				cont = nil
			}
			continue
		}
		if l.Text == "" || strings.HasPrefix(l.Text, "#") {
			continue
		}
		c := DocCommand{Line: l.N, Text: strings.TrimSuffix(l.Text, `\`)}
		if strings.HasSuffix(l.Text, `\`) {
			cont = &c
		} else {
			cmds = append(cmds, c)
		}
	}
	if cont != nil {
		open = cont.Line
	}
	return cmds, open
}

// DocBlocks returns the fenced blocks of a Markdown page; commands are the
// non-blank lines that are not # comments.
func DocBlocks(md []byte) ([]DocBlock, error) {
	blocks, err := fences(md)
	var out []DocBlock
	for _, f := range blocks {
		if !f.Closed {
			return nil, fmt.Errorf("line %d: a fenced block is not closed", f.Line)
		}
		b := DocBlock{Line: f.Line}
		if len(f.Info) > 0 {
			b.Lang, b.Attrs = f.Info[0], f.Info[1:]
		}
		var open int
		if b.Commands, open = f.commands(); open != 0 {
			return nil, fmt.Errorf("line %d: a command ends with a continuation", open)
		}
		out = append(out, b)
	}
	return out, err
}

// shellWords splits a command into words, keeping quoted strings (and
// $(…)) whole and returning the control operators && || ; | as words.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	var quote rune
	depth := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			b.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			b.WriteRune(r)
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			depth++
			b.WriteString("$(")
			i++
		case depth > 0:
			b.WriteRune(r)
			if r == ')' {
				depth--
			}
		case r == '#' && b.Len() == 0:
			flush()
			return out // a comment
		case r == ' ' || r == '\t':
			flush()
		case r == ';' || r == '|' || r == '&':
			flush()
			op := string(r)
			if i+1 < len(rs) && (rs[i+1] == '&' || rs[i+1] == '|') && r != ';' {
				op += string(rs[i+1])
				i++
			}
			out = append(out, op)
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

var (
	assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	subRe    = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// SimpleCommand is one program a command line runs, with its subcommands
// (the leading plain words after it: `migrate status`, `check config`).
type SimpleCommand struct {
	Program string // base name: bin/tollgate-deploy → tollgate-deploy
	Path    string // as written
	Sub     []string
}

// SimpleCommands splits a command line at && || ; | and returns what each
// part runs, past variable assignments, sudo and the shell's own words
// (for … do, done, cd, export).
func SimpleCommands(line string) []SimpleCommand {
	var out []SimpleCommand
	var part []string
	end := func() {
		w := part
		part = nil
		for len(w) > 0 && (assignRe.MatchString(w[0]) || w[0] == "sudo" || w[0] == "do" || w[0] == "then" || w[0] == "time") {
			w = w[1:]
		}
		if len(w) == 0 {
			return
		}
		switch w[0] {
		case "for", "done", "fi", "cd", "export", "echo", "set", "if", "while":
			return
		}
		c := SimpleCommand{Program: filepath.Base(w[0]), Path: w[0]}
		for _, s := range w[1:] {
			if len(c.Sub) == 2 || !subRe.MatchString(s) {
				break
			}
			c.Sub = append(c.Sub, s)
		}
		out = append(out, c)
	}
	for _, w := range shellWords(line) {
		switch w {
		case "&&", "||", ";", "|", "&":
			end()
		default:
			part = append(part, w)
		}
	}
	end()
	return out
}

func known(c SimpleCommand) bool {
	if strings.HasPrefix(c.Path, "bin/") || strings.HasPrefix(c.Path, "./bin/") {
		return true
	}
	for _, p := range KnownPrograms {
		if c.Program == p {
			return true
		}
	}
	return false
}

// IsShellBlock reports whether a block holds shell commands.
func IsShellBlock(b DocBlock) bool {
	switch b.Lang {
	case "sh", "bash", "shell", "console":
		return true
	case "":
		for _, c := range b.Commands {
			for _, s := range SimpleCommands(c.Text) {
				if known(s) {
					return true
				}
			}
		}
	}
	return false
}

// TestSources maps every Test function of the repository to the source of
// the file that defines it.
func TestSources(root string) (map[string]string, error) {
	out := map[string]string{}
	def := regexp.MustCompile(`(?m)^func (Test\w*)\(t \*testing\.T\)`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".run", "node_modules", "dist", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = string(b)
		}
		return nil
	})
	return out, err
}

func hasWord(src, w string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(w) + `($|[^A-Za-z0-9_-])`).MatchString(src)
}

// CheckDocBlocks returns what is wrong with the command blocks of one page
// (page is its path from the repository root, e.g. docs/redis.md); tests
// is TestSources' map.
func CheckDocBlocks(page string, md []byte, tests map[string]string) ([]string, error) {
	blocks, err := DocBlocks(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", page, err)
	}
	var problems []string
	bad := func(b DocBlock, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", page, b.Line)+fmt.Sprintf(format, args...))
	}
	for _, b := range blocks {
		if !IsShellBlock(b) {
			continue
		}
		if b.Lang != "sh" && b.Lang != "bash" {
			bad(b, "a block of shell commands fenced %q: fence it sh (curl examples), sh run (the page's session) or sh tested-by=TestName", b.Lang)
			continue
		}
		switch {
		case len(b.Attrs) == 0:
			for _, c := range b.Commands {
				if s := SimpleCommands(c.Text); strings.HasPrefix(c.Text, "curl ") && len(s) == 1 && s[0].Program == "curl" {
					continue
				}
				problems = append(problems, fmt.Sprintf("%s:%d: %q is not a curl example, and the curl check runs nothing else: mark the block sh run or sh tested-by=TestName", page, c.Line, c.Text))
			}
		case len(b.Attrs) == 1 && b.Attrs[0] == "run":
			test, ok := SessionTests[page]
			if !ok {
				bad(b, "sh run, but no test runs %s's session (SessionTests)", page)
			} else if src, ok := tests[test]; !ok || !strings.Contains(src, filepath.Base(page)) {
				bad(b, "sh run: %s, which SessionTests names for %s, is not defined in a file that reads the page", test, page)
			}
		case len(b.Attrs) == 1 && strings.HasPrefix(b.Attrs[0], "tested-by="):
			var srcs []string
			for _, name := range strings.Split(strings.TrimPrefix(b.Attrs[0], "tested-by="), ",") {
				src, ok := tests[name]
				if !ok {
					bad(b, "tested-by=%s: no such test function in the repository", name)
					continue
				}
				srcs = append(srcs, src)
			}
			if len(srcs) == 0 {
				continue
			}
			for _, c := range b.Commands {
				for _, s := range SimpleCommands(c.Text) {
					for _, w := range append([]string{s.Program}, s.Sub...) {
						found := false
						for _, src := range srcs {
							found = found || hasWord(src, w)
						}
						if !found {
							problems = append(problems, fmt.Sprintf("%s:%d: %s: the file of %s never says %q, so it does not run %q",
								page, c.Line, b.Attrs[0], strings.TrimPrefix(b.Attrs[0], "tested-by="), w, c.Text))
						}
					}
				}
			}
		default:
			bad(b, "fence `%s %s`: not run by any test (use sh, sh run or sh tested-by=TestName)", b.Lang, strings.Join(b.Attrs, " "))
		}
	}
	return problems, nil
}
