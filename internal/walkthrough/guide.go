package walkthrough

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Guide commands, the convention the node operators' guide check relies on
// (docs/node-operators.md; the curl examples' convention is readme.go's):
//
//   - a guide command is a line of a fenced block opened with ```sh run;
//     blank lines and # comments are skipped, lines ending in `\` continue
//     the command;
//   - the commands run in order, each with bash, in one working directory
//     and one home directory, as a reader would type them in one shell:
//     what a command exports and the directory it changes to carry over to
//     the next;
//   - the example values are replaced by the check's own: the gateway
//     http://localhost:8080 (as in the curl examples), the node's origin
//     https://node.example.com, and its web server's root /var/www/node;
//   - every command must exit 0;
//   - the reader's starting point is provided, as GuideStart says.
//
// Other ```sh blocks of the guide are not run as guide commands (their curl
// lines are the curl check's).

// Example values of the guide and what the check replaces them with.
const (
	GuideNodeOrigin = "https://node.example.com"
	GuideWebRoot    = "/var/www/node"
)

// GuideStart is what the reader has before the first command: their wallet's
// raw key in ./wallet.key and a password for the keystore in
// ~/.tollgate-node/password, both readable by them only.
const GuideStart = "wallet.key and ~/.tollgate-node/password"

// GuideCommand is one command of a guide's run blocks.
type GuideCommand struct {
	Line    int    // 1-based line of the command in the guide
	Command string // continuation lines joined
}

// GuideCommands extracts the commands of a guide's ```sh run blocks.
func GuideCommands(md []byte) ([]GuideCommand, error) {
	blocks, err := fences(md)
	var out []GuideCommand
	for _, f := range blocks {
		if !f.Closed {
			return nil, fmt.Errorf("a fenced block is not closed")
		}
		if len(f.Info) != 2 || f.Info[0] != "sh" || f.Info[1] != "run" {
			continue
		}
		cmds, open := f.commands()
		if open != 0 {
			return nil, fmt.Errorf("line %d: a command ends with a continuation", open)
		}
		for _, c := range cmds {
			out = append(out, GuideCommand{Line: c.Line, Command: c.Text})
		}
	}
	return out, err
}

// GuideShell runs guide commands one at a time as one shell session would:
// exported variables and the working directory carry over.
type GuideShell struct {
	Dir  string   // the session's state (not the reader's files)
	Env  []string // added to the environment of every command
	Subs []string // old, new pairs replaced in every command
}

// NewGuideShell starts a session in dir (the reader's working directory).
func NewGuideShell(stateDir, dir string, env []string, subs ...string) (*GuideShell, error) {
	if err := os.WriteFile(filepath.Join(stateDir, "cwd"), []byte(dir), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stateDir, "exports"), nil, 0o600); err != nil {
		return nil, err
	}
	return &GuideShell{Dir: stateDir, Env: env, Subs: subs}, nil
}

// Expand returns the command with the example values replaced.
func (g *GuideShell) Expand(command string) string {
	return strings.NewReplacer(g.Subs...).Replace(command)
}

// Run runs one command (expanded) and returns its exit status, stdout and
// stderr.
func (g *GuideShell) Run(ctx context.Context, command string, timeout time.Duration) (int, string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	script := `source "$GUIDE_STATE/exports" && cd "$(cat "$GUIDE_STATE/cwd")" || exit 97
set -o pipefail
` + g.Expand(command) + `
rc=$?
export -p > "$GUIDE_STATE/exports" && pwd > "$GUIDE_STATE/cwd" || exit 98
exit $rc`
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(append(os.Environ(), g.Env...), "GUIDE_STATE="+g.Dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code, err = ee.ExitCode(), nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%q: %w", command, ctx.Err())
	}
	return code, stdout.String(), stderr.String(), err
}
