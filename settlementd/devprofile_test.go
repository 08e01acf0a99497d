package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDevProfileIsLoudAtStart: TOLLGATE_DEV=1 lets settlementd take the dev
// chains' public-key accounts as money settings and sign-in domains from the
// request's Host; a settlementd started with it says so in its log at every
// start (an error-level line, before anything can fail), and one without it
// does not.
func TestDevProfileIsLoudAtStart(t *testing.T) {
	for _, dev := range []string{"1", ""} {
		env := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable", "TOLLGATE_HTTP_ADDR": "127.0.0.1:0", "TOLLGATE_DEV": dev}
		var out, errb bytes.Buffer
		code := run([]string{"run"}, func(k string) string { return env[k] }, &out, &errb)
		loud := strings.Contains(errb.String(), `"level":"error"`) && strings.Contains(errb.String(), "TOLLGATE_DEV=1")
		if code == 0 || loud != (dev == "1") {
			t.Errorf("TOLLGATE_DEV=%q: exit %d, dev profile logged %v:\n%s", dev, code, loud, errb.String())
		}
	}
}
