package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every setting can come from a file (NAME_FILE), as systemd credentials or
// mounted secrets give them: the value is the file's content without its
// trailing newline; NAME and NAME_FILE together, or an unreadable file,
// fail loudly, naming the variable and never the content.
func TestSettingsFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const key = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	env := map[string]string{
		"DATABASE_URL_FILE":          write("db", "postgres://u:secret-pw@db/x\n"),
		"TOLLGATE_TREASURY_KEY_FILE": write("treasury", key+"\n"),
		"TOLLGATE_JWT_SECRET_FILE":   write("jwt", strings.Repeat("j", 40)),
	}
	c, err := Load(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://u:secret-pw@db/x" || c.Chain.TreasuryKey != key || c.Auth.JWTSecret != strings.Repeat("j", 40) {
		t.Fatalf("from files: db %q, treasury %q, jwt %q", c.DatabaseURL, c.Chain.TreasuryKey, c.Auth.JWTSecret)
	}

	for _, bad := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DATABASE_URL": "postgres://db/x", "TOLLGATE_RELAYER_KEY": key, "TOLLGATE_RELAYER_KEY_FILE": write("relayer", key)},
			"TOLLGATE_RELAYER_KEY and TOLLGATE_RELAYER_KEY_FILE are both set"},
		{map[string]string{"DATABASE_URL": "postgres://db/x", "TOLLGATE_TREASURY_KEY_FILE": filepath.Join(dir, "missing")},
			"TOLLGATE_TREASURY_KEY_FILE=" + filepath.Join(dir, "missing") + ": no such file or directory"},
	} {
		_, err := Load(nil, func(k string) string { return bad.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want an error with %q, got %v", bad.want, err)
		}
		if err != nil && strings.Contains(err.Error(), key[2:]) {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}
