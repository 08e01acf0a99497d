package caddymodule

import (
	"fmt"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	"github.com/tollgate-rpc/tollgate/shared/version"
)

// `caddy tollgate-version` prints the module's version (shared/version): in
// a `make build` binary the module is Caddy's main module, which `caddy
// list-modules --versions` cannot show (it reads only dependencies' versions
// from the build info); in an xcaddy build both print the version given in
// `--with github.com/tollgate-rpc/tollgate@<version>=.`.
func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "tollgate-version",
		Short: "Prints the Tollgate module's version",
		Long:  "Prints the version of the Tollgate module built into this Caddy (git describe --tags --always at build time).",
		Func: func(caddycmd.Flags) (int, error) {
			fmt.Println(version.String())
			return 0, nil
		},
	})
}
