package tollgate

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestXcaddyRecipeMatchesGoMod keeps xcaddy.json honest: the Caddy version it
// builds must be the one go.mod pins, or operators would build something
// other than what we test.
func TestXcaddyRecipeMatchesGoMod(t *testing.T) {
	raw, err := os.ReadFile("xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		CaddyVersion string `json:"caddy_version"`
		Plugins      []struct{ Module, Version, Replace string }
		Env          map[string]string
		Command      string
	}
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	gm, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gm, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pinned string
	for _, r := range mf.Require {
		if r.Mod.Path == "github.com/caddyserver/caddy/v2" {
			pinned = r.Mod.Version
		}
	}
	if pinned == "" || x.CaddyVersion != pinned || x.Env["CADDY_VERSION"] != pinned || !strings.Contains(x.Command, pinned) {
		t.Fatalf("xcaddy.json builds caddy %q (env %q), go.mod pins %q", x.CaddyVersion, x.Env["CADDY_VERSION"], pinned)
	}
	if len(x.Plugins) != 1 || x.Plugins[0].Module != mf.Module.Mod.Path || !strings.Contains(x.Command, mf.Module.Mod.Path+"@v0.0.0=.") {
		t.Fatalf("xcaddy.json plugin %+v does not build this module %s", x.Plugins, mf.Module.Mod.Path)
	}
}
