package walkthrough

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// README curl examples, the convention the docs check relies on:
//
//   - an example is a command starting with `curl ` inside a ```sh or
//     ```bash fenced block of README.md; lines ending in `\` continue it;
//   - it addresses the gateway as http://localhost:8080 (or localhost:8080),
//     which the check replaces by the stack's base URL;
//   - credentials come from environment variables the check sets:
//     $TOLLGATE_API_KEY (a key with credits), $KEY_ID (its id),
//     $TOLLGATE_JWT (a node operator's login token), $NODE_ID (that
//     operator's node), $TOLLGATE_ADMIN_TOKEN;
//   - the answer must be 2xx, unless a comment line `# expect <status>`
//     directly above the command names the documented status (402, 401, …);
//   - only blocks fenced plain ```sh or ```bash are curl examples (```sh run
//     and ```sh tested-by=… blocks are run elsewhere, docblocks.go), and
//     TestDocCommandBlocks fails a line in them that is not a curl; examples
//     must not use -o or -w (the check adds its own).

// CurlExample is one README curl command.
type CurlExample struct {
	Line    int    // 1-based line of the command in the README
	Command string // continuation lines joined
	Expect  int    // 0: any 2xx
}

// ReadmeBaseURL is the placeholder address README examples use.
const ReadmeBaseURL = "localhost:8080"

var expectRe = regexp.MustCompile(`^#\s*expect\s+(\d{3})\b`)

// CurlExamples extracts the curl examples of a README.
func CurlExamples(readme []byte) ([]CurlExample, error) {
	blocks, err := fences(readme)
	var out []CurlExample
	for _, f := range blocks {
		if len(f.Info) != 1 || (f.Info[0] != "sh" && f.Info[0] != "bash") {
			continue
		}
		expect := 0
		var cur *CurlExample
		for _, l := range f.Lines {
			n, trim := l.N, l.Text
			if cur != nil {
				cur.Command += " " + strings.TrimSuffix(trim, `\`)
				if !strings.HasSuffix(trim, `\`) {
					out = append(out, *cur)
					cur = nil
				}
				continue
			}
			if m := expectRe.FindStringSubmatch(trim); m != nil {
				expect, _ = strconv.Atoi(m[1])
				continue
			}
			if strings.HasPrefix(trim, "curl ") {
				ex := CurlExample{Line: n, Command: strings.TrimSuffix(trim, `\`), Expect: expect}
				expect = 0
				if strings.Contains(" "+trim+" ", " -o ") || strings.Contains(trim, " -w ") {
					return nil, fmt.Errorf("README line %d: curl examples must not use -o or -w", n)
				}
				if strings.HasSuffix(trim, `\`) {
					cur = &ex
				} else {
					out = append(out, ex)
				}
				continue
			}
			expect = 0
		}
		// Unlike the other readers, a README left open at the end is not an
		// error here: that block's unfinished example is dropped.
		if cur != nil && f.Closed {
			return nil, fmt.Errorf("README line %d: a curl example ends with a continuation", cur.Line)
		}
	}
	return out, err
}

// CurlResult is the outcome of one example.
type CurlResult struct {
	Example CurlExample
	Status  int
	Body    string
	Err     error
}

// OK reports whether the status is the documented one.
func (r CurlResult) OK() bool {
	if r.Err != nil {
		return false
	}
	if r.Example.Expect != 0 {
		return r.Status == r.Example.Expect
	}
	return r.Status >= 200 && r.Status < 300
}

// RunCurl runs one example with bash and the real curl against base
// (http://host:port), with env added to the environment.
func RunCurl(ctx context.Context, ex CurlExample, base string, env []string) CurlResult {
	host := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	command := strings.ReplaceAll(ex.Command, "http://"+ReadmeBaseURL, base)
	command = strings.ReplaceAll(command, ReadmeBaseURL, host)
	dir, err := os.MkdirTemp("", "tollgate-curl-")
	if err != nil {
		return CurlResult{Example: ex, Err: err}
	}
	defer os.RemoveAll(dir)
	bodyFile := filepath.Join(dir, "body")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command+` -sS -o "$CURL_BODY" -w '%{http_code}'`)
	cmd.Env = append(append(os.Environ(), "CURL_BODY="+bodyFile), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res := CurlResult{Example: ex}
	if err := cmd.Run(); err != nil {
		res.Err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
		return res
	}
	res.Status, res.Err = strconv.Atoi(strings.TrimSpace(stdout.String()))
	b, _ := os.ReadFile(bodyFile)
	res.Body = string(b)
	return res
}
