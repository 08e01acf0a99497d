package tollgate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeRelease runs `make release` on a clean clone of this checkout's
// HEAD, as an operator or CI would: the binaries (caddy, settlementd and the
// node operators' tollgate-node) report `git describe
// --tags --always` of the clone, are static, every file matches SHA256SUMS
// (and the archive matches the top-level SHA256SUMS), and the systemd units
// and go-ethereum's LGPL texts are shipped.
func TestMakeRelease(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is required")
	}
	clone := filepath.Join(t.TempDir(), "tollgate")
	if out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", ".", clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	desc, err := exec.Command("git", "-C", clone, "describe", "--tags", "--always").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(desc))
	dist := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command("make", "--no-print-directory", "release", "DIST="+dist)
	cmd.Dir = clone
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	name := "tollgate-" + version + "-linux-amd64"
	dir := filepath.Join(dist, name)

	for bin, args := range map[string][]string{"caddy": {"tollgate-version"}, "settlementd": {"version"}, "tollgate-node": {"version"}} {
		out, err := exec.Command(filepath.Join(dir, bin), args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		if got := strings.TrimPrefix(strings.TrimSpace(string(out)), bin+" "); got != version {
			t.Errorf("%s reports %q, git describe --tags --always says %q", bin, got, version)
		}
		f, err := elf.Open(filepath.Join(dir, bin))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked (has an ELF interpreter)", bin)
			}
		}
		f.Close()
	}
	checkSums(t, dir, "SHA256SUMS", 10)
	checkSums(t, dist, "SHA256SUMS", 1)
	for _, f := range []string{"systemd/tollgate-caddy.service", "systemd/tollgate-settlementd.service", "Caddyfile", "caddy.env.example",
		"LICENSE", "NOTICE", "THIRD_PARTY_NOTICES.md", "licenses/github.com/ethereum/go-ethereum/COPYING.LESSER"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the release lacks %s: %v", f, err)
		}
	}
}

// checkSums verifies every line of dir/file and that it lists at least min
// files.
func checkSums(t *testing.T, dir, file string, min int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: bad line %q", file, sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s lists %s: %v", file, name, err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: %s does not match its sum", file, name)
		}
		n++
	}
	if n < min {
		t.Errorf("%s lists %d files, want at least %d", file, n, min)
	}
}

// TestThirdPartyNoticesFresh: THIRD_PARTY_NOTICES.md is what `make notices`
// writes for the modules linked now, and names a licence for each.
func TestThirdPartyNoticesFresh(t *testing.T) {
	out, err := exec.Command("go", "run", "./internal/notices").Output()
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("THIRD_PARTY_NOTICES.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, have) {
		t.Fatal("THIRD_PARTY_NOTICES.md is stale: run make notices")
	}
	if bytes.Contains(out, []byte("UNKNOWN")) {
		t.Fatalf("a linked module has no known licence:\n%s", out)
	}
	if !bytes.Contains(out, []byte("| github.com/ethereum/go-ethereum |")) || !bytes.Contains(out, []byte("| github.com/caddyserver/caddy/v2 |")) {
		t.Fatal("go-ethereum or Caddy missing from the notices")
	}
}
