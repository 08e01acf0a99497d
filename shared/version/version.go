// Package version is the Tollgate version both binaries report: `caddy
// tollgate-version` (and the gateway's start-up log and MCP server info) and
// `settlementd version`.
package version

import "runtime/debug"

// Module is this repository's Go module path.
const Module = "github.com/tollgate-rpc/tollgate"

// Version is stamped at build time by `make build` and `make release`:
//
//	-ldflags "-X github.com/tollgate-rpc/tollgate/shared/version.Version=$(git describe --tags --always)"
var Version string

// String is Version when stamped; otherwise the version Go recorded for this
// module (an xcaddy build: the version in `--with module@version=.`, which
// is also what `caddy list-modules --versions` prints for it), or the main
// module's version; "(devel)" when none is known.
func String() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	for _, d := range bi.Deps {
		if d.Path == Module {
			return d.Version
		}
	}
	if bi.Main.Path == Module && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
