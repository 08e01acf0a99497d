package caddyrun

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryListsModule: the custom build registers http.handlers.tollgate
// next to Caddy's standard modules, as `caddy list-modules` shows operators.
func TestBinaryListsModule(t *testing.T) {
	out, err := exec.Command(Binary(t), "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	for _, want := range []string{"http.handlers.tollgate", "http.handlers.reverse_proxy"} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("list-modules lacks %s", want)
		}
	}
}
